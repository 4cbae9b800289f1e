//! The board actor: one task per board owns its state and journal, takes the
//! board's events and the arbiter's actions in one order, journals each
//! before acting on it, and publishes what it derives.
//!
//! The HTTP server talks to it through a [`BoardHandle`]: reads go to the
//! latest [`Snapshot`] (no waiting for the board), actions and detail
//! requests are messages answered on a oneshot channel.

use std::{sync::Arc, time::Duration};

use tokio::{
    sync::{mpsc, oneshot, watch},
    time::Instant,
};

use crate::{
    engine::{DeadCheck, MateCheck},
    event::{Millis, TimedEvent},
    winnability::{Budget, Verdict, can_checkmate, is_dead},
};

use super::{
    action::Action,
    board::{ActionError, BoardState, Snapshot},
    commit::Committer,
    delay::Delay,
    hub::Hub,
    journal::{Connection, Entry, Journal, JournalLine, JournalState, RoundName, wall_now},
};

/// How often an idle board checks that its journal is still in place.
const JOURNAL_CHECK: Duration = Duration::from_secs(2);

/// The first wait before writing a failed journal again; it doubles up to
/// [`RETRY_MAX`].
const RETRY_FIRST: Duration = Duration::from_millis(250);
const RETRY_MAX: Duration = Duration::from_secs(10);

/// Where a running board's events come from.
#[derive(Debug, Clone)]
pub enum Feed {
    /// A simulated board: these events, played at the pace of their
    /// timestamps (divided by the speed).
    Simulated(Arc<Vec<TimedEvent>>),
    /// A board on a serial port, read live (with reconnection).
    Live {
        port: String,
        /// The board family (with `detect`, the first guess).
        protocol: crate::transport::Protocol,
        /// Find the family by asking the board (a `serial:` source).
        detect: bool,
    },
}

/// An action that was journaled and applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActionDone {
    /// Its line in the board's journal.
    pub seq: u64,
    /// Its global number (the SSE ids of what it caused start with it).
    pub g: u64,
}

/// What the HTTP server asks of a board.
#[derive(Debug)]
pub enum Command {
    /// Take an arbiter action.
    Action {
        /// The action.
        action: Action,
        /// The arbiter confirmed that it removes published moves.
        confirmed: bool,
        /// The outcome.
        reply: oneshot::Sender<Result<ActionDone, ActionError>>,
    },
    /// Show the board's detail.
    Detail {
        /// The detail.
        reply: oneshot::Sender<serde_json::Value>,
    },
    /// A simulated board plays these events next, from its last event's
    /// time on (their times count from 0): the demo's next round.
    Play {
        /// The events.
        events: Vec<TimedEvent>,
    },
    /// Raise an alert about the board from outside its events (the lichess
    /// push): journaled, then raised like any other.
    Alert {
        /// The kind, snake_case.
        kind: &'static str,
        /// What happened.
        message: String,
    },
}

/// The HTTP server's handle on a board.
#[derive(Debug, Clone)]
pub struct BoardHandle {
    /// The board number.
    pub id: u32,
    tx: mpsc::Sender<Command>,
    snapshot: watch::Receiver<Snapshot>,
}

impl BoardHandle {
    /// A handle on a board that another task runs (the central's boards):
    /// it answers the commands sent on `tx` and keeps `snapshot` current.
    pub fn new(
        id: u32,
        tx: mpsc::Sender<Command>,
        snapshot: watch::Receiver<Snapshot>,
    ) -> BoardHandle {
        BoardHandle { id, tx, snapshot }
    }

    /// The latest snapshot.
    pub fn snapshot(&self) -> Snapshot {
        self.snapshot.borrow().clone()
    }

    /// Journals and applies an arbiter action. An action that removes
    /// published moves is refused ([`ActionError::Retracts`]) unless the
    /// arbiter `confirmed` it.
    pub async fn act(&self, action: Action, confirmed: bool) -> Result<ActionDone, ActionError> {
        let (reply, rx) = oneshot::channel();
        let gone = || ActionError::Unavailable(format!("board {} has stopped", self.id));
        self.tx
            .send(Command::Action {
                action,
                confirmed,
                reply,
            })
            .await
            .map_err(|_| gone())?;
        rx.await.map_err(|_| gone())?
    }

    /// Has a simulated board play `events` next (see [`Command::Play`]);
    /// `false` when the board has stopped.
    pub async fn play(&self, events: Vec<TimedEvent>) -> bool {
        self.tx.send(Command::Play { events }).await.is_ok()
    }

    /// Raises an alert on the board (journaled first, like an action);
    /// `false` when the board has stopped.
    pub async fn alert(&self, kind: &'static str, message: String) -> bool {
        self.tx.send(Command::Alert { kind, message }).await.is_ok()
    }

    /// The board's detail (moves, alerts, actions, PGN).
    pub async fn detail(&self) -> Option<serde_json::Value> {
        let (reply, rx) = oneshot::channel();
        self.tx.send(Command::Detail { reply }).await.ok()?;
        rx.await.ok()
    }
}

/// Options of the running boards.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Simulated boards play this many times faster than their timestamps.
    pub speed: f64,
    /// The broadcast delay, which folds every line again once it is old
    /// enough (`None`: no delay).
    pub delay: Option<Arc<Delay>>,
}

/// What a board's actor needs from the daemon.
#[derive(Debug, Clone)]
pub struct Shared {
    /// Orders and fans out what the boards derive.
    pub hub: Arc<Hub>,
    /// Writes and syncs the journal lines.
    pub committer: Committer,
    /// Set when the daemon stops: the board finishes the input it is
    /// journaling and publishing, then ends.
    pub stop: watch::Receiver<bool>,
    /// The round, named on each journal's first line.
    pub round: RoundName,
}

/// Starts a board's actor on the current tokio runtime; the task ends when
/// `shared.stop` is set, with every line it took journaled and published.
pub fn spawn(
    mut state: BoardState,
    journal: Journal,
    shared: Shared,
    feed: Feed,
    opts: RunOptions,
) -> (
    BoardHandle,
    tokio::task::JoinHandle<Option<(u32, super::Known)>>,
) {
    let Shared {
        hub,
        committer,
        stop,
        round,
    } = shared;
    let (tx, rx) = mpsc::channel(64);
    let (snap_tx, snap_rx) = watch::channel(state.snapshot());
    let id = state.id();
    let mut reader = None;
    let sim = match feed {
        Feed::Simulated(events) => {
            let next = state.board_events().min(events.len());
            Sim {
                events,
                next,
                speed: opts.speed,
                anchor: (Instant::now(), state.last_at()),
                live: false,
            }
        }
        Feed::Live {
            port,
            protocol,
            detect,
        } => {
            let mut config = crate::transport::ReaderConfig::new(port.clone(), protocol);
            config.detect = detect;
            match crate::transport::spawn_board(config) {
                Ok(handle) => reader = Some(handle),
                Err(e) => tracing::error!(board = id, "cannot read {port}: {e}"),
            }
            // A live board's times continue the journal's: the reader's
            // clock starts at zero with this run.
            Sim {
                events: Arc::new(Vec::new()),
                next: 0,
                speed: 1.0,
                anchor: (Instant::now(), state.last_at()),
                live: true,
            }
        }
    };
    let live = reader.is_some();
    let actor = Actor {
        state,
        journal: Some(journal),
        hub,
        committer,
        stop,
        round,
        sim,
        reader,
        snapshot: snap_tx,
        delay: opts.delay,
        rx,
        failed: None,
        next_check: Instant::now() + JOURNAL_CHECK,
        verdicts: mpsc::unbounded_channel(),
        analysing: 0,
        first_live: live,
    };
    // On the heap once: an async fn keeps its argument apart from the
    // body's state, so an actor moved in by value was held twice (19 KB a
    // board's task; 10.7 KB so).
    let task = tokio::spawn(Box::new(actor).run());
    (
        BoardHandle {
            id,
            tx,
            snapshot: snap_rx,
        },
        task,
    )
}

/// How many full analyses of one kind run at once, for all boards: one
/// core is left to the boards, the journals and the server. Flag falls and
/// resignations (rare, and their analysis can take seconds) have permits
/// of their own, so that they never queue the dead-position checks that
/// hold moves back from the broadcast, nor the other way round.
fn analysis_permits(kind: Analysis) -> Arc<tokio::sync::Semaphore> {
    static DEAD: std::sync::OnceLock<Arc<tokio::sync::Semaphore>> = std::sync::OnceLock::new();
    static MATE: std::sync::OnceLock<Arc<tokio::sync::Semaphore>> = std::sync::OnceLock::new();
    let cell = match kind {
        Analysis::DeadPosition => &DEAD,
        Analysis::MatingChances => &MATE,
    };
    cell.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        Arc::new(tokio::sync::Semaphore::new(cores.saturating_sub(1).max(1)))
    })
    .clone()
}

/// Runs `work` on a blocking thread once a permit of `kind` is free;
/// `None` if it panicked.
async fn in_pool<T: Send + 'static>(
    kind: Analysis,
    work: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let permit = analysis_permits(kind).acquire_owned().await;
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        work()
    })
    .await
    .ok()
}

/// The two kinds of full analysis a board asks for.
#[derive(Clone, Copy)]
enum Analysis {
    /// Is the position after a move dead (Art. 5.2.2)?
    DeadPosition,
    /// Can the opponent of a player who flagged or resigned still mate?
    MatingChances,
}

/// CHA's full analysis of whether the opponent of a player who flagged or
/// resigned can still checkmate, in the same pool under the same budget.
async fn mating_chances_off_the_board(check: MateCheck) -> Entry {
    let (game, ply, position) = (check.game, check.ply, Some(check.key()));
    let analysed = in_pool(Analysis::MatingChances, move || {
        can_checkmate(&check.position, check.side, Budget::DETERMINISTIC)
    })
    .await;
    let can_mate = match analysed {
        Some(Ok(analysis)) => analysis.verdict.as_option(),
        // Undecided: scored as a loss with an alert for the arbiter.
        Some(Err(_)) | None => None,
    };
    Entry::MateVerdict {
        game,
        ply,
        position,
        can_mate,
    }
}

/// CHA's full dead-position analysis of `check`, on a blocking thread of
/// the bounded pool, never on the async workers or in a board's task. Its
/// budget is chasolver's own node limits, so the verdict does not depend on
/// the machine's load.
async fn analyse_off_the_board(check: DeadCheck) -> Entry {
    let (game, ply, position) = (check.game, check.ply, Some(check.key()));
    let analysed = in_pool(Analysis::DeadPosition, move || {
        is_dead(&check.position, Budget::DETERMINISTIC)
    })
    .await;
    let (dead, skipped) = match analysed {
        Some(Ok(Verdict::Yes)) => (Some(true), false),
        Some(Ok(Verdict::No)) => (Some(false), false),
        Some(Ok(Verdict::Unknown)) => (None, false),
        // The solver cannot take the position, or the analysis was lost:
        // the next move's position is analysed instead.
        Some(Err(_)) | None => (None, true),
    };
    Entry::DeadVerdict {
        game,
        ply,
        position,
        dead,
        skipped,
    }
}

struct Sim {
    events: Arc<Vec<TimedEvent>>,
    next: usize,
    speed: f64,
    /// A wall instant and the board time it stands for.
    anchor: (Instant, Millis),
    /// A live board never ends by itself.
    live: bool,
}

enum Step {
    Event,
    Tick(Millis),
    Connect,
    End,
}

impl Sim {
    fn wall(&self, t: Millis) -> Instant {
        let ms = t.saturating_sub(self.anchor.1) as f64 / self.speed;
        self.anchor.0 + Duration::from_secs_f64(ms.min(1e9) / 1000.0)
    }

    fn next_step(&self, state: &BoardState) -> Option<(Instant, Step)> {
        let remaining = self.next < self.events.len();
        if remaining && state.connection() != Connection::Connected {
            return Some((Instant::now(), Step::Connect));
        }
        let at = self.events.get(self.next).map(|e| e.at);
        // The engine says when it next has something to do with no event
        // (a state settles, displaced pieces are due): a quiet board is
        // read on time, not at its next event.
        let tick = state.next_deadline().map(|t| t.max(state.last_at()));
        match (tick, at) {
            (Some(t), Some(a)) if t < a => Some((self.wall(t), Step::Tick(t))),
            (Some(t), None) => Some((self.wall(t), Step::Tick(t))),
            (_, Some(a)) => Some((self.wall(a), Step::Event)),
            (None, None) => (!self.live && state.connection() != Connection::Ended)
                .then(|| (Instant::now(), Step::End)),
        }
    }
}

struct Actor {
    state: BoardState,
    journal: Option<Journal>,
    hub: Arc<Hub>,
    committer: Committer,
    stop: watch::Receiver<bool>,
    round: RoundName,
    sim: Sim,
    reader: Option<crate::transport::ReaderHandle>,
    snapshot: watch::Sender<Snapshot>,
    /// The broadcast delay, fed every line published.
    delay: Option<Arc<Delay>>,
    rx: mpsc::Receiver<Command>,
    /// The journal cannot be written: the board takes no input until it can.
    failed: Option<Failure>,
    /// When an idle board next checks its journal.
    next_check: Instant,
    /// Full dead-position verdicts coming back from the analysis pool.
    verdicts: (mpsc::UnboundedSender<Entry>, mpsc::UnboundedReceiver<Entry>),
    /// Analyses sent to the pool whose verdict has not come back.
    analysing: usize,
    /// A live board has sent nothing yet in this run: its first state is
    /// read like a dump after a reconnection (the board may have been
    /// played on while the daemon was not running).
    first_live: bool,
}

mod failing;
mod journaling;

use failing::Failure;

/// What a failed write did with its line.
enum Unwritten {
    /// Nothing: the line is dropped (an action answered 503, a simulated
    /// board's step that is taken again).
    Drop,
    /// A live board's input: kept to be journaled and applied later.
    Hold,
}

impl Actor {
    /// Runs the board until the daemon stops; returns what its journal
    /// holds then (`None`: the journal is failing or lost).
    async fn run(mut self: Box<Self>) -> Option<(u32, super::Known)> {
        // The daemon stopped while the journal was failing: it works now.
        if self.state.journal_failed().is_some() {
            let entry = Entry::Journal {
                state: JournalState::Restored,
                message: "the daemon restarted".to_owned(),
            };
            let at = self.state.last_at();
            self.write_apply(entry, at, std::time::Instant::now(), Unwritten::Drop)
                .await;
        }
        loop {
            let failed = self.failed.is_some();
            if !failed {
                self.request_analyses();
            }
            let step = if failed {
                None
            } else {
                self.sim.next_step(&self.state)
            };
            // A simulated board ends once the verdicts it waits for are in.
            let step = step.filter(|(_, step)| !matches!(step, Step::End) || self.analysing == 0);
            let due = step.as_ref().map(|(due, _)| *due);
            let retry = self.failed.as_ref().map(|f| f.retry_at);
            if *self.stop.borrow() {
                break;
            }
            tokio::select! {
                biased;
                _ = self.stop.changed() => break,
                cmd = self.rx.recv() => match cmd {
                    Some(cmd) => self.command(cmd).await,
                    None => break,
                },
                () = sleep_until_opt(retry), if retry.is_some() => self.retry().await,
                // What the board reported comes before a tick that fell due
                // meanwhile: it was stamped when it arrived, and a tick past
                // its time would stamp it later than it happened.
                msg = recv_live(&mut self.reader), if self.reader.is_some() && !failed => {
                    self.live(msg).await;
                }
                () = sleep_until_opt(due), if due.is_some() => {
                    if let Some((_, step)) = step {
                        self.step(step).await;
                    }
                }
                () = tokio::time::sleep_until(self.next_check), if !failed => self.check_journal(),
                Some(entry) = self.verdicts.1.recv(), if !failed => {
                    self.analysing = self.analysing.saturating_sub(1);
                    // Journaled at the board's present time: a replay meets
                    // it after the same events as the live board did.
                    let at = self.state.last_at();
                    self.write_apply(entry, at, std::time::Instant::now(), Unwritten::Hold)
                        .await;
                }
            }
        }
        let journal = self.journal.as_ref().filter(|_| self.failed.is_none())?;
        Some((
            self.state.id(),
            super::Known {
                len: journal.len(),
                seq: self.state.seq(),
            },
        ))
    }

    /// Sends the positions that need the full dead-position analysis to
    /// the analysis pool; each verdict comes back on `verdicts`, to be
    /// journaled and applied like any input.
    fn request_analyses(&mut self) {
        if let Some(check) = self.state.next_mate_check() {
            self.analysing += 1;
            let tx = self.verdicts.0.clone();
            tokio::spawn(async move {
                let entry = mating_chances_off_the_board(check).await;
                let _ = tx.send(entry);
            });
        }
        while let Some(check) = self.state.next_dead_check() {
            self.analysing += 1;
            let tx = self.verdicts.0.clone();
            tokio::spawn(async move {
                let entry = analyse_off_the_board(check).await;
                // The board may have stopped meanwhile.
                let _ = tx.send(entry);
            });
        }
    }

    async fn command(&mut self, cmd: Command) {
        match cmd {
            Command::Detail { reply } => {
                let _ = reply.send(self.state.detail());
            }
            Command::Action {
                action,
                confirmed,
                reply,
            } => {
                let result = self.action(action, confirmed).await;
                let _ = reply.send(result);
            }
            Command::Play { events } if !self.sim.live => {
                // The board's time goes on from its last event: the new
                // events are shifted to start there, and played from now.
                let base = self.state.last_at();
                let events = events
                    .into_iter()
                    .map(|e| TimedEvent {
                        at: base + e.at,
                        event: e.event,
                    })
                    .collect();
                self.sim.events = Arc::new(events);
                self.sim.next = 0;
                self.sim.anchor = (Instant::now(), base);
            }
            Command::Play { .. } => {}
            Command::Alert { kind, message } => {
                // A board whose journal failed takes nothing more; the log
                // has the alert's reason from its sender.
                if self.failed.is_none() {
                    let at = self.state.last_at();
                    let entry = Entry::Alert {
                        kind: kind.to_owned(),
                        message,
                    };
                    self.write_apply(entry, at, std::time::Instant::now(), Unwritten::Drop)
                        .await;
                }
            }
        }
    }

    async fn action(&mut self, action: Action, confirmed: bool) -> Result<ActionDone, ActionError> {
        if let Some(f) = &self.failed {
            return Err(ActionError::Unavailable(format!(
                "board {}: its journal cannot be written ({}); the action was not taken. The daemon retries by itself; try again when the board no longer shows journal_failed",
                self.state.id(),
                f.error
            )));
        }
        // A simulated board's time is its script's: the action happens at
        // the board's last event, so the script's timing is kept.
        let at = self.state.last_at();
        self.state.check(&action, at)?;
        if !confirmed && let Some(why) = self.state.retraction(&action) {
            return Err(ActionError::Retracts(why));
        }
        let entered = std::time::Instant::now();
        match self
            .write(Entry::Action { action }, at, entered, Unwritten::Drop)
            .await
        {
            Some((ticket, line)) => {
                let done = ActionDone {
                    seq: line.seq,
                    g: line.g,
                };
                let payloads = self.state.apply(&line);
                self.publish(&line, ticket, payloads);
                Ok(done)
            }
            None => Err(ActionError::Unavailable(format!(
                "board {}: the journal could not be written ({}); the action was not taken. The daemon retries by itself; try again when the board no longer shows journal_failed",
                self.state.id(),
                self.failed.as_ref().map_or("", |f| f.error.as_str())
            ))),
        }
    }

    async fn step(&mut self, step: Step) {
        let entered = std::time::Instant::now();
        match step {
            Step::Connect => {
                let at = self.state.last_at();
                self.write_apply(
                    Entry::Connection {
                        state: Connection::Connected,
                    },
                    at,
                    entered,
                    Unwritten::Drop,
                )
                .await;
            }
            Step::End => {
                let at = self.state.last_at();
                self.write_apply(
                    Entry::Connection {
                        state: Connection::Ended,
                    },
                    at,
                    entered,
                    Unwritten::Drop,
                )
                .await;
            }
            Step::Tick(t) => {
                // Whatever the tick changed is journaled, events or not, so
                // that a replay reads the board at the same moments.
                let Some(payloads) = self.state.tick(t) else {
                    return;
                };
                let ticket = self.hub.reserve(entered);
                let line = JournalLine {
                    round: self.first_line(self.state.seq() + 1),
                    seq: self.state.seq() + 1,
                    g: ticket.g(),
                    at: t,
                    wall: Some(wall_now()),
                    entry: Entry::Tick,
                };
                // The board has read itself already: a tick that cannot be
                // journaled now is journaled first when the journal works
                // again, and published then.
                let written = self.append(&line).await;
                self.state.note_tick(&line);
                match written {
                    Ok(()) => self.publish(&line, ticket, payloads),
                    Err(e) => {
                        drop(ticket);
                        self.fail(&e);
                        if let Some(f) = &mut self.failed {
                            f.pending.insert(f.pending.len() - 1, (line, payloads));
                        }
                    }
                }
            }
            Step::Event => {
                let Some(ev) = self.sim.events.get(self.sim.next).cloned() else {
                    return;
                };
                if self
                    .write_apply(
                        Entry::from_event(&ev.event),
                        ev.at,
                        entered,
                        Unwritten::Drop,
                    )
                    .await
                {
                    self.sim.next += 1;
                }
            }
        }
    }

    /// What the live reader reported: events are journaled at the board's
    /// time (continuing the journal's), connection changes when they change.
    async fn live(&mut self, msg: Option<crate::transport::BoardMessage>) {
        use crate::transport::{BoardMessage, ConnectionState};
        let entered = std::time::Instant::now();
        let offset = self.sim.anchor.1;
        if self.first_live && matches!(msg, Some(BoardMessage::Event(_) | BoardMessage::Events(_)))
        {
            // Moves made while the daemon was down are recovered from the
            // board's state, not judged as one move: the same reading as
            // after the cable came back.
            let at = self.state.last_at();
            let entry = Entry::from_event(&crate::event::BoardEvent::Reconnected);
            self.first_live = !self.write_apply(entry, at, entered, Unwritten::Drop).await;
        }
        match msg {
            None => self.reader = None,
            Some(BoardMessage::Event(ev)) => {
                let at = (offset + ev.at).max(self.state.last_at());
                self.write_apply(Entry::from_event(&ev.event), at, entered, Unwritten::Hold)
                    .await;
            }
            // One after the other, with no tick in between.
            Some(BoardMessage::Events(events)) => {
                for ev in events {
                    let at = (offset + ev.at).max(self.state.last_at());
                    self.write_apply(Entry::from_event(&ev.event), at, entered, Unwritten::Hold)
                        .await;
                }
            }
            Some(BoardMessage::Connection { state, .. }) => {
                let state = match state {
                    ConnectionState::Connected => Connection::Connected,
                    _ => Connection::Disconnected,
                };
                if self.state.connection() != state {
                    let at = self.state.last_at();
                    self.write_apply(Entry::Connection { state }, at, entered, Unwritten::Hold)
                        .await;
                }
            }
            Some(BoardMessage::Family { protocol, .. }) => {
                let id = self.state.id();
                let family = crate::transport::probe::family_name(protocol);
                tracing::info!(
                    board = id,
                    "board {id} answers as {family}; it is read as one"
                );
                self.state.set_family(protocol.as_str());
                self.snapshot.send_replace(self.state.snapshot());
            }
            Some(BoardMessage::Alert { kind, message, .. }) => {
                let id = self.state.id();
                tracing::warn!(board = id, kind, "board {id}: {message}");
                if self.failed.is_none() {
                    let at = self.state.last_at();
                    let entry = Entry::Alert {
                        kind: kind.to_owned(),
                        message: format!("board {id}: {message}"),
                    };
                    self.write_apply(entry, at, entered, Unwritten::Drop).await;
                }
            }
            Some(BoardMessage::Note { text, .. }) => {
                let id = self.state.id();
                tracing::info!(board = id, "board {id}: {text}");
            }
        }
    }
}

async fn recv_live(
    reader: &mut Option<crate::transport::ReaderHandle>,
) -> Option<crate::transport::BoardMessage> {
    match reader {
        Some(r) => r.recv().await,
        None => std::future::pending().await,
    }
}

async fn sleep_until_opt(due: Option<Instant>) {
    match due {
        Some(due) => tokio::time::sleep_until(due).await,
        None => std::future::pending().await,
    }
}
