//! The daemon: many boards of one event round, a durable journal per board,
//! live PGN for broadcasts, server-sent events and a dashboard for arbiters.
//!
//! How it fits together:
//! - [`config`]: the event file (`eboard run --config event.toml`).
//! - [`journal`]: every input of a board is appended to its journal and
//!   synced before it is acted on; [`board`] folds a journal into the
//!   board's state (engine, alerts, actions), the same way on replay and
//!   live.
//! - [`actor`]: one task per board owns its state and journal; simulated
//!   boards play their events at the pace of their timestamps.
//! - [`hub`]: orders what the boards derive into one stream of server-sent
//!   events with ids that survive a restart.
//! - [`http`]: the HTTP server and the dashboard.
//! - [`demo`] and [`loadtest`]: a bundled event of simulated boards, and a
//!   load measurement.

pub mod action;
pub mod actor;
pub mod board;
pub mod central;
pub mod commit;
pub mod commit_log;
pub mod config;
pub mod delay;
pub mod demo;
pub mod halls_load;
pub mod http;
pub mod hub;
pub mod journal;
pub mod lichess;
pub mod limits;
pub mod loadtest;
pub mod lock;
pub mod nats;
pub mod publish;
pub mod server;
pub mod values;

use std::{
    collections::HashMap,
    io::Write,
    net::SocketAddr,
    path::{Path, PathBuf},
    sync::Arc,
};

use crate::{
    engine::{EngineConfig, Orientation},
    event::TimedEvent,
    pgn::read_games,
    rules::RuleSet,
    script::parse_script,
    simulate::{Noise, SimOptions, simulate},
};

use self::{
    actor::{BoardHandle, Feed, RunOptions},
    board::{BoardState, RoundInfo},
    config::{ConfigError, EventConfig, Player, Source, normalize_date},
    hub::{EventId, Hub, Published},
    journal::{Journal, JournalError},
};

/// Why the daemon cannot start.
#[derive(Debug, thiserror::Error)]
pub enum DaemonError {
    /// The config file is unusable.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A board's source cannot be used.
    #[error("board {board}: source {source_text}: {message}")]
    Source {
        /// The board number.
        board: u32,
        /// The source as configured.
        source_text: String,
        message: String,
    },
    /// A journal cannot be read or written.
    #[error(transparent)]
    Journal(#[from] JournalError),
    /// A file or directory of the data directory.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The listen address cannot be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    /// A bad command-line value.
    #[error("{0}")]
    Usage(String),
    /// Another daemon runs on the same data directory.
    #[error(transparent)]
    Lock(#[from] lock::LockError),
    /// A board's journal is missing from a data directory that had it.
    #[error(
        "board {board}: its journal {} is missing, but this data directory had it (see {}): restore the file, or start the board afresh on purpose with --fresh-board {board} (what it journaled is then lost)",
        path.display(),
        manifest.display()
    )]
    MissingJournal {
        /// The board number.
        board: u32,
        /// The journal expected.
        path: PathBuf,
        /// The list of the data directory's journals.
        manifest: PathBuf,
    },
    /// The NATS broker refused something the daemon cannot go on without.
    #[error("NATS {url}: {message}")]
    Nats {
        /// The broker.
        url: String,
        /// What went wrong.
        message: String,
    },
}

impl DaemonError {
    /// The process exit status: 2 for bad input, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            DaemonError::Config(_) | DaemonError::Source { .. } | DaemonError::Usage(_) => 2,
            _ => 1,
        }
    }
}

/// One board to run.
#[derive(Debug, Clone)]
pub struct BoardSpec {
    /// The board number.
    pub id: u32,
    /// Its events.
    pub feed: Feed,
    /// The player with the white pieces.
    pub white: Player,
    /// The player with the black pieces.
    pub black: Player,
    /// Which way round the board stands.
    pub orientation: Orientation,
}

/// Everything the daemon needs to start.
#[derive(Debug, Clone)]
pub struct DaemonSpec {
    /// The round's broadcast tags.
    pub round: RoundInfo,
    /// How the engine reads the boards.
    pub engine: EngineConfig,
    /// The boards in broadcast order.
    pub boards: Vec<BoardSpec>,
    /// Where the journals and the token are kept.
    pub data_dir: PathBuf,
    /// The HTTP address.
    pub listen: SocketAddr,
    /// Simulated boards play this many times faster than their timestamps.
    pub speed: f64,
    /// Keep when each input entered (the load test's latency probe).
    pub probe: bool,
    /// How many event streams (`GET /events`) may be open at once.
    pub max_event_streams: usize,
    /// Boards whose missing journal starts afresh on purpose.
    pub fresh_boards: Vec<u32>,
    /// The public broadcast shows the round as it stood this long ago
    /// (zero: live).
    pub broadcast_delay: std::time::Duration,
}

/// A running daemon.
#[derive(Debug)]
pub struct Daemon {
    /// The address the HTTP server listens on.
    pub addr: SocketAddr,
    /// The event hub.
    pub hub: Arc<Hub>,
    pub boards: Arc<Vec<BoardHandle>>,
    /// The arbiters' token.
    pub token: String,
    /// Where the token is kept.
    pub token_path: PathBuf,
    /// The token was created by this start.
    pub token_created: bool,
    /// The data directory's lock, held while the daemon runs (and put back
    /// if the directory is removed under it).
    pub lock: Option<Arc<std::sync::Mutex<lock::DirLock>>>,
    /// The state of the pushes to lichess (empty until pushing starts).
    pub lichess: Arc<lichess::PushStatus>,
    /// What a clean stop waits for (`None`: nothing to drain).
    pub stopping: Option<Stopping>,
    /// The delayed public view, when the broadcast is delayed.
    pub delay: Option<Arc<delay::Delay>>,
}

/// What a clean stop of a daemon with journals waits for: the boards, then
/// the journal writers.
#[derive(Debug)]
pub struct Stopping {
    stop: tokio::sync::watch::Sender<bool>,
    boards: Vec<tokio::task::JoinHandle<Option<(u32, Known)>>>,
    writers: commit::Writers,
    /// The list of journals and where it is kept.
    manifest: (PathBuf, Manifest),
}

impl Daemon {
    /// Stops the boards cleanly: each finishes the input it is journaling
    /// and publishing, then every queued journal line is written and
    /// synced. Returns once all of it is on disk and published to the hub.
    pub async fn stop_boards(&mut self) {
        let Some(stopping) = self.stopping.take() else {
            return;
        };
        let _ = stopping.stop.send(true);
        let (path, mut manifest) = stopping.manifest;
        for board in stopping.boards {
            match board.await {
                Ok(Some((id, known))) => {
                    manifest.journals.insert(id, known);
                }
                Ok(None) => {}
                Err(e) => tracing::error!("a board's task ended abnormally at the stop: {e}"),
            }
        }
        // The boards held the writers' queue: it is closed now, and the
        // writers end once it is empty.
        let writers = stopping.writers;
        if tokio::task::spawn_blocking(move || writers.join())
            .await
            .is_err()
        {
            tracing::error!("the journal writers could not be waited for at the stop");
        }
        // What each journal holds now: a journal found shorter at the next
        // start was cut.
        if let Err(e) = write_manifest(&path, &manifest) {
            tracing::error!("{e}");
        }
    }
}

/// Reads a board's source into the events it will play.
pub fn feed_for(
    board: u32,
    source: &Source,
    game: Option<usize>,
    seed: u64,
) -> Result<Feed, DaemonError> {
    let fail = |message: String| DaemonError::Source {
        board,
        source_text: source.to_string(),
        message,
    };
    let read = |path: &Path| {
        let purpose = match source {
            Source::Pgn(_) => "PGN file",
            _ => "board script",
        };
        std::fs::read_to_string(path).map_err(|e| fail(crate::files::unreadable(purpose, path, &e)))
    };
    let events: Vec<TimedEvent> = match source {
        Source::Script(path) => {
            let text = read(path)?;
            parse_script(&path.display().to_string(), &text)
                .map_err(|e| fail(e.to_string()))?
                .into_iter()
                .map(|l| l.event)
                .collect()
        }
        Source::Pgn(path) => {
            let text = read(path)?;
            let mut games = read_games(text.as_bytes()).map_err(|e| fail(e.to_string()))?;
            if let Some(n) = game {
                if n == 0 || n > games.len() {
                    return Err(fail(format!(
                        "the file has {} game(s), not a game {n}",
                        games.len()
                    )));
                }
                games = vec![games.swap_remove(n - 1)];
            }
            if games.is_empty() {
                return Err(fail("the file has no game".into()));
            }
            simulate(&games, &sim_options(seed))
        }
        Source::Dgt(port)
        | Source::Millennium(port)
        | Source::Certabo(port)
        | Source::Serial(port) => {
            let protocol = match source {
                Source::Millennium(_) => crate::transport::Protocol::Millennium,
                Source::Certabo(_) => crate::transport::Protocol::Certabo,
                _ => crate::transport::Protocol::Dgt,
            };
            return Ok(Feed::Live {
                port: port.clone(),
                protocol,
                detect: matches!(source, Source::Serial(_)),
            });
        }
    };
    Ok(Feed::Simulated(Arc::new(events)))
}

/// How a `pgn:` board is simulated: a human on a board that identifies
/// pieces, pressing a clock after each move.
pub fn sim_options(seed: u64) -> SimOptions {
    SimOptions {
        seed,
        occupancy: false,
        clock: true,
        noise: Noise::Human,
        ..SimOptions::default()
    }
}

/// The arbiters' token: read from `<data_dir>/token`, or created there
/// (mode 0600) with 32 random bytes from the operating system.
pub fn load_or_create_token(data_dir: &Path) -> Result<(String, PathBuf, bool), DaemonError> {
    let path = data_dir.join("token");
    let io = |source| DaemonError::Io {
        path: path.clone(),
        source,
    };
    if path.exists() {
        let text = std::fs::read_to_string(&path).map_err(io)?;
        let token = text.trim().to_owned();
        if token.len() < 16 {
            return Err(DaemonError::Usage(format!(
                "{}: the token is shorter than 16 characters; delete the file to make a new one",
                path.display()
            )));
        }
        return Ok((token, path, false));
    }
    let mut bytes = [0u8; 32];
    rand::TryRngCore::try_fill_bytes(&mut rand::rngs::OsRng, &mut bytes)
        .map_err(|e| io(std::io::Error::other(e.to_string())))?;
    let token: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    write_token(&path, &token).map_err(io)?;
    Ok((token, path, true))
}

/// Writes the token file (mode 0600); refuses to overwrite one.
fn write_token(path: &Path, token: &str) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(format!("{token}\n").as_bytes())
        .and_then(|()| file.sync_all())
}

/// What the data directory must keep holding while the daemon runs.
struct Kept {
    lock: Arc<std::sync::Mutex<lock::DirLock>>,
    data_dir: PathBuf,
    token: String,
    boards: Manifest,
}

impl Kept {
    /// Puts back the lock, the token and the list of journals if the data
    /// directory lost them (removed while the daemon ran); the boards put
    /// their journals back themselves (see `Journal::repair`).
    fn keep(&self) -> Result<(), DaemonError> {
        let kept = self.lock.lock().unwrap_or_else(|e| e.into_inner()).keep()?;
        if kept == lock::Kept::Recreated {
            tracing::error!(
                "{}: the lock file was removed while the daemon ran; it is locked again by this daemon, and the token and journals are put back",
                self.data_dir.display()
            );
        }
        let token = self.data_dir.join("token");
        if !token.exists() {
            write_token(&token, &self.token).or_else(|e| match e.kind() {
                std::io::ErrorKind::AlreadyExists => Ok(()),
                _ => Err(DaemonError::Io {
                    path: token.clone(),
                    source: e,
                }),
            })?;
        }
        let manifest = self.data_dir.join(MANIFEST);
        if !manifest.exists() {
            write_manifest(&manifest, &self.boards)?;
        }
        Ok(())
    }

    /// Keeps the data directory every [`lock::KEEP_EVERY`] while the
    /// runtime runs.
    fn spawn(self) {
        let kept = Arc::new(self);
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(lock::KEEP_EVERY).await;
                let k = Arc::clone(&kept);
                match tokio::task::spawn_blocking(move || k.keep()).await {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => tracing::error!("the data directory cannot be kept: {e}"),
                    Err(_) => return,
                }
            }
        });
    }
}

/// A board's journal, replayed.
struct Replayed {
    state: BoardState,
    /// The board's state before the journal, and the journal's lines (for
    /// the broadcast delay, which folds them again).
    delayed: delay::DelayedBoard,
    /// Ready to append.
    journal: Journal,
    /// The events derived, named as they were live.
    events: Vec<Published>,
    /// The global number of the journal's last line.
    last_g: u64,
    /// The global numbers of its lines, in order.
    numbers: Vec<u64>,
}

/// Opens a board's journal and replays it.
fn replay_journal(
    b: &BoardSpec,
    dir: &Path,
    round: &Arc<RoundInfo>,
    engine: EngineConfig,
    check: impl FnOnce(&Path, &journal::Opened) -> Result<(), DaemonError>,
) -> Result<Replayed, DaemonError> {
    let mut replayed = Vec::new();
    let mut max_g = 0;
    let path = dir.join(format!("{}.jsonl", b.id));
    let opened = Journal::open(&path)?;
    check(&path, &opened)?;
    if let Some((line, text)) = &opened.dropped {
        tracing::warn!(
            "{}:{line}: dropped a torn last line (the daemon stopped while writing it): {text:?}",
            path.display()
        );
    }
    let mut state = BoardState::new(
        b.id,
        Arc::clone(round),
        engine,
        b.white.clone(),
        b.black.clone(),
    );
    let fresh = state.clone();
    let simulated: &[TimedEvent] = match &b.feed {
        Feed::Simulated(events) => events,
        Feed::Live { .. } => &[],
    };
    let mut played = 0usize;
    for line in &opened.lines {
        if line.entry.is_board_event() {
            let expected = simulated.get(played);
            if expected.is_some_and(|e| Some(e) != line.timed_event().as_ref()) {
                tracing::warn!(
                    "{}:{}: the journal differs from the board's simulated events; it goes on after the journaled ones",
                    path.display(),
                    line.seq
                );
            }
            played += 1;
        }
        max_g = max_g.max(line.g);
        for (k, p) in state.apply(line).into_iter().enumerate() {
            replayed.push(Published {
                id: EventId {
                    g: line.g,
                    k: u32::try_from(k).unwrap_or(u32::MAX),
                },
                kind: p.kind,
                data: p.data.into(),
            });
        }
    }
    if !opened.lines.is_empty() {
        tracing::info!(
            board = b.id,
            lines = opened.lines.len(),
            moves = state.engine().game().ply(),
            "journal replayed"
        );
    }
    Ok(Replayed {
        state,
        numbers: opened.lines.iter().map(|l| l.g).collect(),
        delayed: delay::DelayedBoard {
            fresh,
            lines: opened.lines,
        },
        journal: opened.journal,
        events: replayed,
        last_g: max_g,
    })
}

/// Starts the daemon on the current tokio runtime: replays the journals,
/// starts the boards and the HTTP server.
pub async fn start(spec: DaemonSpec) -> Result<Daemon, DaemonError> {
    if !(spec.speed.is_finite() && spec.speed > 0.0) {
        return Err(DaemonError::Usage(format!(
            "--speed must be a positive number, not {}",
            spec.speed
        )));
    }
    let dir = spec.data_dir.join("boards");
    std::fs::create_dir_all(&dir).map_err(|source| DaemonError::Io {
        path: dir.clone(),
        source,
    })?;
    // Before anything is read or written: a second daemon on the same
    // journals would interleave its lines with ours.
    let lock = lock::lock_data_dir(&spec.data_dir)?;
    limits::raise_open_files();
    let (token, token_path, token_created) = load_or_create_token(&spec.data_dir)?;
    let manifest_path = spec.data_dir.join(MANIFEST);
    // Lines acknowledged but lost from a journal in a crash are put back
    // before any journal is read.
    let log_error = |source| DaemonError::Io {
        path: spec.data_dir.join(commit_log::NAME),
        source,
    };
    for note in commit_log::recover(&spec.data_dir).map_err(log_error)? {
        tracing::warn!("{note}");
    }
    let Opened {
        replayed,
        max_g,
        prepared,
        delayed,
        manifest,
    } = open_journals(&spec, &dir, &manifest_path)?;
    let lock = Arc::new(std::sync::Mutex::new(lock));
    Kept {
        lock: Arc::clone(&lock),
        data_dir: spec.data_dir.clone(),
        token: token.clone(),
        boards: manifest.clone(),
    }
    .spawn();
    let hub = Hub::new(replayed, max_g, spec.probe);
    let delay = start_delay(spec.broadcast_delay, delayed, &hub, true);
    let opts = RunOptions {
        speed: spec.speed,
        delay: delay.clone(),
    };
    let (listener, addr) = bind(spec.listen).await?;
    let log = commit_log::CommitLog::open(&spec.data_dir).map_err(log_error)?;
    let (committer, writers) = commit::start(Some(log)).map_err(|source| DaemonError::Io {
        path: PathBuf::from("<journal writer threads>"),
        source,
    })?;
    let (stop, stop_rx) = tokio::sync::watch::channel(false);
    let shared = actor::Shared {
        hub: Arc::clone(&hub),
        committer,
        stop: stop_rx,
        round: journal::RoundName {
            event: spec.round.event.clone(),
            round: spec.round.round.clone(),
        },
    };
    let (boards, tasks): (Vec<BoardHandle>, Vec<_>) = prepared
        .into_iter()
        .map(|(state, journal, feed)| {
            actor::spawn(state, journal, shared.clone(), feed, opts.clone())
        })
        .unzip();
    drop(shared);
    let boards = Arc::new(boards);
    let lichess = serve_http(
        listener,
        &boards,
        &hub,
        &token,
        &spec.round,
        spec.max_event_streams,
        delay.clone(),
    );
    Ok(Daemon {
        addr,
        hub,
        boards,
        token,
        token_path,
        token_created,
        lock: Some(lock),
        lichess,
        stopping: Some(Stopping {
            stop,
            boards: tasks,
            writers,
            manifest: (manifest_path, manifest),
        }),
        delay,
    })
}

/// The data directory's journals, opened, checked and replayed.
struct Opened {
    replayed: Vec<Published>,
    max_g: u64,
    prepared: Vec<(BoardState, Journal, Feed)>,
    /// Each board's state before its journal, and the journal's lines (for
    /// the broadcast delay).
    delayed: Vec<delay::DelayedBoard>,
    /// The list of journals, as written at this start.
    manifest: Manifest,
}

/// Opens, checks and replays every board's journal; records in the list of
/// journals what each holds.
fn open_journals(
    spec: &DaemonSpec,
    dir: &Path,
    manifest_path: &Path,
) -> Result<Opened, DaemonError> {
    let round = Arc::new(spec.round.clone());
    let name = journal::RoundName {
        event: spec.round.event.clone(),
        round: spec.round.round.clone(),
    };
    let mut replayed: Vec<Published> = Vec::new();
    let mut max_g = 0;
    let mut prepared = Vec::new();
    let mut delayed = Vec::new();
    // A journal is created once: one missing from a data directory that
    // had it was deleted, and starting its board empty would lose its game
    // without a word.
    let mut manifest = read_manifest(manifest_path)?;
    for b in &spec.boards {
        let path = dir.join(format!("{}.jsonl", b.id));
        if manifest.boards.contains(&b.id) && !spec.fresh_boards.contains(&b.id) && !path.exists() {
            return Err(DaemonError::MissingJournal {
                board: b.id,
                path,
                manifest: manifest_path.to_owned(),
            });
        }
        if spec.fresh_boards.contains(&b.id) && !path.exists() {
            manifest.journals.remove(&b.id);
        }
    }
    let mut numbers = Vec::new();
    for b in &spec.boards {
        let engine = EngineConfig {
            orientation: b.orientation,
            ..spec.engine
        };
        let known = manifest.journals.get(&b.id).copied();
        let r = replay_journal(b, dir, &round, engine, |path, opened| {
            check_journal(path, opened, known.as_ref(), &name)
        })?;
        max_g = max_g.max(r.last_g);
        replayed.extend(r.events);
        numbers.push((dir.join(format!("{}.jsonl", b.id)), r.numbers));
        manifest.journals.insert(
            b.id,
            Known {
                len: r.journal.len(),
                seq: r.state.seq(),
            },
        );
        delayed.push(r.delayed);
        prepared.push((r.state, r.journal, b.feed.clone()));
    }
    check_shared_numbers(&numbers)?;
    drop(numbers);
    manifest.boards.extend(spec.boards.iter().map(|b| b.id));
    if manifest.instance.is_none() {
        manifest.instance = Some(new_instance()?);
    }
    write_manifest(manifest_path, &manifest)?;
    Ok(Opened {
        replayed,
        max_g,
        prepared,
        delayed,
        manifest,
    })
}

/// The delayed public view of the boards (`None` without a delay),
/// folded from their journals as it stands now, and releasing lines as
/// their time comes.
fn start_delay(
    delay: std::time::Duration,
    boards: Vec<delay::DelayedBoard>,
    live: &Arc<Hub>,
    analyses: bool,
) -> Option<Arc<delay::Delay>> {
    if delay.is_zero() {
        return None;
    }
    let d = delay::Delay::new(
        delay,
        boards,
        Arc::clone(live),
        analyses,
        journal::wall_now(),
    );
    d.spawn();
    tracing::info!(delay_s = delay.as_secs(), "the public broadcast is delayed");
    Some(d)
}

/// The data directory's list of the journals it has had.
const MANIFEST: &str = "journals.json";

/// The data directory's list of its journals (`journals.json`).
#[derive(Debug, Default, Clone, serde::Serialize, serde::Deserialize)]
pub struct Manifest {
    /// The boards whose journals the data directory has had.
    pub boards: std::collections::BTreeSet<u32>,
    /// What each journal held when the daemon last started or stopped
    /// cleanly: a journal found shorter was cut or replaced, and is
    /// refused. Absent from lists written before it was recorded.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub journals: BTreeMap<u32, Known>,
    /// This data directory's instance id: random, made with it (see
    /// [`nats::INSTANCE_HEADER`]). Absent from lists written before it
    /// was recorded: made at the next start.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instance: Option<String>,
}

/// A new instance id: 16 random bytes from the operating system, as hex.
fn new_instance() -> Result<String, DaemonError> {
    let mut bytes = [0u8; 16];
    rand::TryRngCore::try_fill_bytes(&mut rand::rngs::OsRng, &mut bytes).map_err(|e| {
        DaemonError::Io {
            path: PathBuf::from("<random instance id>"),
            source: std::io::Error::other(e.to_string()),
        }
    })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// What a journal held at a clean start or stop.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Known {
    /// Its length in bytes.
    pub len: u64,
    /// Its last line's `seq`.
    pub seq: u64,
}

use std::collections::BTreeMap;

/// Reads the list of journals (empty when it is not there yet).
fn read_manifest(path: &Path) -> Result<Manifest, DaemonError> {
    let io = |source| DaemonError::Io {
        path: path.to_owned(),
        source,
    };
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Manifest::default()),
        Err(e) => return Err(io(e)),
    };
    serde_json::from_str::<Manifest>(&text).map_err(|e| {
        io(std::io::Error::other(format!(
            "not a list of journals: {e}"
        )))
    })
}

/// Writes the list of journals (a new file renamed over the old one, so
/// that a crash leaves one or the other).
fn write_manifest(path: &Path, manifest: &Manifest) -> Result<(), DaemonError> {
    let io = |source| DaemonError::Io {
        path: path.to_owned(),
        source,
    };
    let text = serde_json::to_string(manifest).map_err(|e| io(std::io::Error::other(e)))? + "\n";
    let fresh = path.with_extension("json.new");
    let mut file = std::fs::File::create(&fresh).map_err(io)?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(io)?;
    std::fs::rename(&fresh, path).map_err(io)?;
    if let Some(dir) = path.parent() {
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(io)?;
    }
    Ok(())
}

/// Refuses a journal that holds less than the list of journals recorded
/// for it, or that names another round on its first line.
fn check_journal(
    path: &Path,
    opened: &journal::Opened,
    known: Option<&Known>,
    round: &journal::RoundName,
) -> Result<(), DaemonError> {
    let corrupt = |line: usize, message: String| {
        DaemonError::Journal(JournalError::Corrupt {
            path: path.to_owned(),
            line,
            message,
        })
    };
    if let Some(k) = known
        && (opened.journal.len() < k.len || (opened.lines.len() as u64) < k.seq)
    {
        return Err(corrupt(
            opened.lines.len() + 1,
            format!(
                "the journal holds {} line(s), {} bytes, but held {} line(s), {} bytes when the daemon last started or stopped (see {MANIFEST}): it was cut or replaced. Restore it from a backup; or, to give up what it held, move it away and start with --fresh-board",
                opened.lines.len(),
                opened.journal.len(),
                k.seq,
                k.len
            ),
        ));
    }
    if let Some(named) = opened.lines.first().and_then(|l| l.round.as_ref())
        && named != round
    {
        return Err(corrupt(
            1,
            format!(
                "the journal belongs to round {:?} of {:?}, not to round {:?} of {:?}: it was copied from another round's data directory. Give each round its own --data-dir",
                named.round, named.event, round.round, round.event
            ),
        ));
    }
    Ok(())
}

/// Refuses two journals that share a global number (`g`): one of them was
/// copied or edited.
fn check_shared_numbers(journals: &[(PathBuf, Vec<u64>)]) -> Result<(), DaemonError> {
    let mut all: Vec<u64> = journals
        .iter()
        .flat_map(|(_, gs)| gs.iter().copied())
        .collect();
    all.sort_unstable();
    let Some(g) = all.windows(2).find(|w| w[0] == w[1]).map(|w| w[0]) else {
        return Ok(());
    };
    let mut holders = journals.iter().filter_map(|(path, gs)| {
        gs.binary_search(&g)
            .ok()
            .map(|i| format!("{}:{}", path.display(), i + 1))
    });
    let first = holders.next().unwrap_or_default();
    let second = holders.next().unwrap_or_default();
    Err(DaemonError::Usage(format!(
        "{second}: g {g} is also the global number of {first}: a line's number is never shared; one of the journals was copied or edited. Restore it from a backup"
    )))
}

/// Binds the HTTP address; returns the listener and the address it got.
async fn bind(listen: SocketAddr) -> Result<(tokio::net::TcpListener, SocketAddr), DaemonError> {
    let bind_error = |source| DaemonError::Bind {
        addr: listen,
        source,
    };
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(bind_error)?;
    let addr = listener.local_addr().map_err(bind_error)?;
    Ok((listener, addr))
}

/// Serves the boards over HTTP in the background; returns the push state
/// that `GET /boards` shows.
fn serve_http(
    listener: tokio::net::TcpListener,
    boards: &Arc<Vec<BoardHandle>>,
    hub: &Arc<Hub>,
    token: &str,
    round: &RoundInfo,
    max_event_streams: usize,
    delay: Option<Arc<delay::Delay>>,
) -> Arc<lichess::PushStatus> {
    let lichess = Arc::new(lichess::PushStatus::default());
    let index: HashMap<u32, usize> = boards.iter().enumerate().map(|(i, b)| (b.id, i)).collect();
    let app = http::AppState {
        boards: Arc::clone(boards),
        index: Arc::new(index),
        hub: Arc::clone(hub),
        token: token.into(),
        title: format!("{}, round {}", round.event, round.round).into(),
        streams: Arc::new(tokio::sync::Semaphore::new(max_event_streams)),
        max_streams: max_event_streams,
        lichess: Arc::clone(&lichess),
        delay,
    };
    let router = http::router(app);
    tokio::spawn(server::serve(listener, router));
    lichess
}

/// Options shared by `run` and `demo`.
#[derive(Debug, Clone, clap::Args)]
pub struct ServeArgs {
    /// Where the journals and the token are kept.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// The HTTP address, HOST:PORT (a host name such as localhost is
    /// resolved; port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:8080", value_parser = parse_listen)]
    pub listen: SocketAddr,
    /// Simulated boards play this many times faster than their timestamps.
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
    /// How many event streams (`GET /events`, the dashboards and other
    /// live clients) may be open at once; more are answered 503.
    #[arg(long, default_value_t = http::MAX_EVENT_STREAMS, value_name = "N")]
    pub max_event_streams: usize,
    /// The public broadcast (the PGN, `/boards`, `/events` and the
    /// dashboard without the token, the lichess push) shows the round as
    /// it stood this long ago: `90s`, `15m`, `1h` (overrides the
    /// `[broadcast]` table's delay; default none).
    #[arg(long, value_name = "DURATION", value_parser = parse_delay_arg)]
    pub broadcast_delay: Option<std::time::Duration>,
}

fn parse_delay_arg(text: &str) -> Result<std::time::Duration, String> {
    delay::parse_delay(text).map_err(|e| e.to_string())
}

/// `eboard run`: the daemon for one event round.
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// The event file (TOML): the round and its boards. `eboard init` writes
    /// a commented one to start from.
    #[arg(long)]
    pub config: PathBuf,
    #[command(flatten)]
    pub serve: ServeArgs,
    /// Overrides the config's event name.
    #[arg(long)]
    pub event: Option<String>,
    /// Overrides the config's site.
    #[arg(long)]
    pub site: Option<String>,
    /// Overrides the config's round.
    #[arg(long)]
    pub round: Option<String>,
    /// Overrides the config's date (YYYY.MM.DD).
    #[arg(long)]
    pub date: Option<String>,
    /// Overrides the config's rule set: standard, rapid or blitz.
    #[arg(long, value_parser = clap::value_parser!(RuleSet))]
    pub rules: Option<RuleSet>,
    /// Overrides the config's time control (the TimeControl tag).
    #[arg(long)]
    pub time_control: Option<String>,
    /// Overrides the config's settle time (ms).
    #[arg(long)]
    pub settle_ms: Option<u64>,
    /// Also publishes every journal line to this NATS JetStream broker
    /// (`nats://HOST:PORT`; overrides the `[publish]` table's url).
    #[arg(long, value_name = "URL")]
    pub publish: Option<String>,
    #[command(flatten)]
    pub lichess: lichess::LichessArgs,
    /// Starts this board afresh although the data directory had a journal
    /// for it that is missing now (repeat for several boards). Without it
    /// the daemon refuses to start, so that a deleted journal is noticed.
    #[arg(long, value_name = "BOARD")]
    pub fresh_board: Vec<u32>,
}

/// The round's tags and the engine's settings from a config file and the
/// `run` flags that override it (`None`: the file alone).
pub fn round_and_engine(
    config: &EventConfig,
    args: Option<&RunArgs>,
) -> Result<(RoundInfo, EngineConfig), DaemonError> {
    let flag = |f: fn(&RunArgs) -> &Option<String>| args.and_then(|a| f(a).clone());
    let date = match flag(|a| &a.date) {
        Some(d) => Some(normalize_date(&d).map_err(DaemonError::Usage)?),
        None => config.date.clone(),
    };
    let round = RoundInfo {
        event: flag(|a| &a.event).unwrap_or(config.event.clone()),
        site: flag(|a| &a.site).or(config.site.clone()),
        date,
        round: flag(|a| &a.round)
            .or(config.round.clone())
            .unwrap_or_else(|| "1".into()),
        time_control: flag(|a| &a.time_control).or(config.time_control.clone()),
    };
    let defaults = EngineConfig::default();
    let engine = EngineConfig {
        settle_ms: args
            .and_then(|a| a.settle_ms)
            .or(config.settle_ms)
            .unwrap_or(defaults.settle_ms),
        rules: args
            .and_then(|a| a.rules)
            .or(config.rules)
            .unwrap_or(defaults.rules),
        ..defaults
    };
    check_flags(&round, engine.settle_ms)?;
    Ok((round, engine))
}

/// Checks the round's values after the flags overrode the config's, as
/// the config and the actions are checked (see [`values`]).
fn check_flags(round: &RoundInfo, settle_ms: u64) -> Result<(), DaemonError> {
    values::check_name("--event", &round.event).map_err(DaemonError::Usage)?;
    if let Some(site) = &round.site {
        values::check_name("--site", site).map_err(DaemonError::Usage)?;
    }
    values::check_name("--round", &round.round).map_err(DaemonError::Usage)?;
    if let Some(tc) = &round.time_control {
        values::check_time_control(tc).map_err(DaemonError::Usage)?;
    }
    values::check_settle_ms(settle_ms).map_err(DaemonError::Usage)
}

/// The daemon's spec from a config file and the flags that override it.
pub fn spec_from_config(config: EventConfig, args: &RunArgs) -> Result<DaemonSpec, DaemonError> {
    let (round, engine) = round_and_engine(&config, Some(args))?;
    let mut boards = Vec::new();
    for b in &config.boards {
        let id = b.id();
        let Some(source) = &b.source else {
            return Err(DaemonError::Usage(format!(
                "board {id} has no source: `eboard run` reads each board from its source (a round file without sources is for `eboard serve --from`)"
            )));
        };
        let feed = feed_for(id, source, b.game, b.seed.unwrap_or(u64::from(id)))?;
        boards.push(BoardSpec {
            id,
            feed,
            white: b.white.clone(),
            black: b.black.clone(),
            orientation: b.orientation,
        });
    }
    Ok(DaemonSpec {
        round,
        engine,
        boards,
        data_dir: args
            .serve
            .data_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from("eboard-data")),
        listen: args.serve.listen,
        speed: args.serve.speed,
        probe: false,
        max_event_streams: args.serve.max_event_streams,
        fresh_boards: args.fresh_board.clone(),
        broadcast_delay: args
            .serve
            .broadcast_delay
            .or(config.broadcast.as_ref().and_then(|b| b.delay))
            .unwrap_or_default(),
    })
}

/// A `--listen` address: `IP:PORT`, or `HOST:PORT` with the host name
/// resolved (its first address).
pub fn parse_listen(text: &str) -> Result<SocketAddr, String> {
    use std::net::ToSocketAddrs;
    if let Ok(addr) = text.parse() {
        return Ok(addr);
    }
    if text
        .rsplit_once(':')
        .is_none_or(|(host, _)| host.is_empty())
    {
        return Err(format!(
            "'{text}': expected HOST:PORT (e.g. 127.0.0.1:8080 or localhost:8080)"
        ));
    }
    let mut addrs = text
        .to_socket_addrs()
        .map_err(|e| format!("'{text}': {e}"))?;
    addrs
        .next()
        .ok_or_else(|| format!("'{text}': the host name has no address"))
}

/// Logs to standard error (`RUST_LOG` filters; default `info`), in colour
/// only on a terminal: a log written to a file or a pipe stays plain text.
pub fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr)
        .try_init();
}

fn runtime() -> Result<tokio::runtime::Runtime, DaemonError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|source| DaemonError::Io {
            path: PathBuf::from("<tokio runtime>"),
            source,
        })
}

/// The three addresses a user opens: the same lines for `run` and `serve`.
fn announce_addresses(out: &mut impl Write, d: &Daemon) {
    let _ = writeln!(out, "eboard: listening on http://{}/", d.addr);
    let _ = writeln!(out, "eboard: dashboard: http://{}/", d.addr);
    let _ = writeln!(out, "eboard: broadcast PGN: http://{}/round.pgn", d.addr);
}

/// Prints where the daemon listens and the token (the token only when it
/// was just created: it is shown once).
fn announce(d: &Daemon, data_dir: &Path) {
    let mut out = std::io::stdout().lock();
    announce_addresses(&mut out, d);
    let _ = writeln!(
        out,
        "eboard: journals in {}",
        data_dir.join("boards").display()
    );
    announce_token(&mut out, d);
    let _ = out.flush();
}

/// Prints where the token is, and the token when it was just created.
fn announce_token(out: &mut impl Write, d: &Daemon) {
    if d.token_created {
        let _ = writeln!(
            out,
            "eboard: arbiter token (shown once; kept in {}): {}",
            d.token_path.display(),
            d.token
        );
    } else {
        let _ = writeln!(out, "eboard: arbiter token in {}", d.token_path.display());
    }
}

async fn until_stopped() {
    #[cfg(unix)]
    {
        let term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate());
        match term {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Runs a daemon until it is stopped (Ctrl-C, SIGTERM), then stops the
/// boards cleanly: every line they took is synced and published before the
/// process exits.
pub fn serve(
    spec: DaemonSpec,
    lichess: Option<lichess::LichessSettings>,
) -> Result<(), DaemonError> {
    serve_then(spec, lichess, |_| {})
}

/// [`serve`], calling `then` on the runtime once the daemon has started
/// (the demo starts its rounds there).
pub fn serve_then(
    spec: DaemonSpec,
    lichess: Option<lichess::LichessSettings>,
    then: impl FnOnce(&Daemon),
) -> Result<(), DaemonError> {
    let data_dir = spec.data_dir.clone();
    runtime()?.block_on(async move {
        let mut daemon = start(spec).await?;
        announce(&daemon, &data_dir);
        push_to_lichess(&daemon, lichess)?;
        then(&daemon);
        until_stopped().await;
        tracing::info!("stopping");
        daemon.stop_boards().await;
        tracing::info!("stopped: every journal line is on disk");
        Ok(())
    })
}

/// Starts pushing the daemon's round to lichess, when asked to.
pub fn push_to_lichess(
    daemon: &Daemon,
    settings: Option<lichess::LichessSettings>,
) -> Result<(), DaemonError> {
    let Some(settings) = settings else {
        return Ok(());
    };
    for s in &settings.slices {
        let _ = writeln!(
            std::io::stdout(),
            "eboard: pushing boards {} to lichess round {}/broadcast/-/-/{}",
            s.boards
                .as_ref()
                .map_or("all".to_owned(), ToString::to_string),
            settings.url,
            s.round
        );
    }
    lichess::spawn(
        settings,
        Arc::clone(&daemon.boards),
        Arc::clone(&daemon.hub),
        daemon.delay.clone(),
        Arc::clone(&daemon.lichess),
    )
}

/// How long a hall stopping waits for the broker to take its last lines.
const FINAL_PUBLISH: std::time::Duration = std::time::Duration::from_secs(10);

/// `eboard run`.
pub fn run(args: &RunArgs) -> Result<(), DaemonError> {
    init_tracing();
    let config = EventConfig::load(&args.config)?;
    let nats = nats::NatsSettings::for_hall(config.publish.as_ref(), args.publish.as_deref())?;
    let ids: Vec<u32> = config.boards.iter().map(|b| b.id()).collect();
    let push = lichess::LichessSettings::resolve(config.lichess.as_ref(), &args.lichess, &ids)?;
    let spec = spec_from_config(config, args)?;
    let Some(nats) = nats else {
        return serve(spec, push);
    };
    let data_dir = spec.data_dir.clone();
    runtime()?.block_on(async move {
        let mut daemon = start(spec.clone()).await?;
        announce(&daemon, &data_dir);
        push_to_lichess(&daemon, push)?;
        let journals = spec
            .boards
            .iter()
            .map(|b| {
                (
                    b.id,
                    data_dir.join("boards").join(format!("{}.jsonl", b.id)),
                )
            })
            .collect();
        let (finish, finishing) = tokio::sync::watch::channel(false);
        let mut nats = nats;
        nats.instance = read_manifest(&data_dir.join(MANIFEST))?.instance;
        let publisher =
            publish::spawn_until(nats, journals, Arc::clone(&daemon.hub), None, finishing);
        until_stopped().await;
        tracing::info!("stopping");
        daemon.stop_boards().await;
        tracing::info!("stopped: every journal line is on disk");
        let _ = finish.send(true);
        if tokio::time::timeout(FINAL_PUBLISH, publisher).await.is_err() {
            tracing::warn!(
                "the broker did not take the last lines within {} s; they are published at the next start",
                FINAL_PUBLISH.as_secs()
            );
        } else {
            tracing::info!("the last journal lines are published");
        }
        Ok(())
    })
}
