//! The central (`eboard serve --from nats://HOST:PORT`): serves a whole
//! event from the stream the hall nodes publish to.
//!
//! The central reads the stream from its first message, in the stream's
//! order, and folds each board's lines into the board's state with the same
//! [`BoardState::apply`] a hall node uses on its own journal, so a board
//! derives on the central exactly what it derives in the hall. Everything
//! it shows is a function of the stream:
//!
//! - the server-sent events of a message are named `<stream sequence>.<k>`,
//!   so their ids are the same on every central and after a restart;
//! - an arbiter action taken at a central is not applied there directly: it
//!   is published to the stream (`<stream>.action.<n>`) and applied when it
//!   comes back, checked again against the board at that point, so every
//!   central reading the stream derives the same record;
//! - a board number that lines come from two hall nodes for is an alert
//!   (`duplicate_board`) and an error in the log naming both; the first
//!   node's lines are followed, the other's are never merged in.

use std::{
    collections::{BTreeMap, HashMap, HashSet},
    io::Write as _,
    net::SocketAddr,
    path::PathBuf,
    sync::Arc,
    time::Duration,
};

use async_nats::jetstream::{self, consumer::pull, message::PublishMessage};
use futures_util::StreamExt as _;
use serde::{Deserialize, Serialize};
use serde_json::json;
use tokio::sync::{mpsc, oneshot, watch};

use crate::{engine::EngineConfig, event::Millis};

use super::{
    Daemon, DaemonError,
    action::Action,
    actor::{ActionDone, BoardHandle, Command},
    board::{ActionError, BoardState, RoundInfo, Snapshot},
    config::{EventConfig, Player},
    delay::{Delay, DelayedBoard},
    hub::{Hub, Payload},
    journal::{Entry, JournalLine},
    load_or_create_token,
    nats::{INSTANCE_HEADER, NODE_HEADER, NatsSettings, Subject},
    round_and_engine,
};

/// `eboard serve`: the central of several halls.
#[derive(Debug, Clone, clap::Args)]
pub struct CentralArgs {
    /// The round's file (TOML): the tags, and the boards with their players
    /// (a board's source, if given, is not used: boards come from the stream).
    #[arg(long)]
    pub config: PathBuf,
    /// The NATS JetStream broker the hall nodes publish to
    /// (`nats://HOST:PORT`; overrides the `[publish]` table's url).
    #[arg(long, value_name = "URL")]
    pub from: Option<String>,
    /// Where the arbiters' token is kept.
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// The HTTP address, HOST:PORT (a host name such as localhost is
    /// resolved; port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:8080", value_parser = super::parse_listen)]
    pub listen: SocketAddr,
    #[command(flatten)]
    pub lichess: super::lichess::LichessArgs,
    /// The public broadcast shows the round as it stood this long ago
    /// (`90s`, `15m`, `1h`; overrides the `[broadcast]` table's delay).
    #[arg(long, value_name = "DURATION", value_parser = super::parse_delay_arg)]
    pub broadcast_delay: Option<Duration>,
}

/// Everything a central needs to start.
#[derive(Debug, Clone)]
pub struct CentralSpec {
    /// The round's broadcast tags.
    pub round: RoundInfo,
    /// How the engine reads the boards (must be the hall nodes' settings).
    pub engine: EngineConfig,
    /// The boards in broadcast order, with their players.
    pub boards: Vec<(u32, Player, Player)>,
    /// Where the token is kept.
    pub data_dir: PathBuf,
    /// The HTTP address.
    pub listen: SocketAddr,
    /// The broker and the stream.
    pub nats: NatsSettings,
    /// The public broadcast's delay (zero: live).
    pub broadcast_delay: Duration,
}

/// An action as it travels through the stream.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct ActionMessage {
    /// The board's time when the action was taken.
    at: Millis,
    /// The action.
    action: Action,
    /// Names the request, so that the central that took it can answer.
    request: String,
    /// When it was taken (Unix ms; for the broadcast delay). Absent from
    /// messages of older centrals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    wall: Option<u64>,
}

/// One board as the central follows it.
struct Board {
    state: BoardState,
    /// The hall node whose lines make the board.
    node: Option<String>,
    /// That node's instance (see [`INSTANCE_HEADER`]), once it sent one.
    instance: Option<String>,
    /// The board as it starts: a replaced hall's board starts again so.
    fresh: BoardState,
    /// Other nodes that published this board number (alerted once each).
    rivals: HashSet<String>,
    /// Puts the board's lines in their journal order.
    order: Sequencer,
    snapshot: watch::Sender<Snapshot>,
}

impl Board {
    /// A board of the round file, not yet published by any hall.
    fn new(state: BoardState) -> Board {
        let mut board = Board {
            fresh: state.clone(),
            state,
            node: None,
            instance: None,
            rivals: HashSet::new(),
            order: Sequencer::default(),
            snapshot: watch::channel(Snapshot {
                summary: Arc::new(json!({})),
                pgn: Arc::from(""),
            })
            .0,
        };
        let first = board.snapshot();
        board.snapshot.send_replace(first);
        board
    }

    /// Its hall node was replaced (same name, another instance: a new PC
    /// or a fresh data directory): the board starts again as a new game
    /// from the new instance's lines, never spliced into the old one's,
    /// with a `hall_replaced` alert. An instance first seen on the line
    /// that continues the board is the same hall, upgraded. The delayed
    /// public view starts the board again at the same point (`g`).
    fn replaced(
        &mut self,
        (n, g): (u32, u64),
        node: &str,
        instance: Option<&str>,
        line: &JournalLine,
        delay: Option<&Delay>,
    ) -> Vec<Payload> {
        let Some(new) = instance else {
            return Vec::new();
        };
        match self.instance.as_deref() {
            Some(old) if old == new => return Vec::new(),
            None if line.seq == self.state.seq() + 1 => {
                self.instance = Some(new.to_owned());
                return Vec::new();
            }
            _ => {}
        }
        let message = format!(
            "hall node {node} was replaced (a new instance, {new}): board {n} starts again as a new game from its lines; the old game's lines stay in the stream"
        );
        tracing::error!("{message}");
        self.instance = Some(new.to_owned());
        if let Some(d) = delay {
            d.restart(n, g, message.clone());
        }
        self.state = self.fresh.clone();
        self.order = Sequencer::default();
        self.state.raise_alert("hall_replaced", message)
    }

    /// Applies a line of the board's owner (numbered `g` in the stream),
    /// in journal order.
    fn take_line(
        &mut self,
        n: u32,
        (node, instance): (&str, Option<&str>),
        line: JournalLine,
        g: u64,
        delay: Option<&Delay>,
    ) -> Vec<Payload> {
        let mut out = self.replaced((n, g), node, instance, &line, delay);
        for mut line in self.order.take(n, line, self.state.seq() + 1) {
            line.g = g;
            out.extend(self.state.apply(&line));
            // The public view folds the same lines once they are old enough.
            if let Some(d) = delay {
                d.push(n, g, line);
            }
        }
        out
    }

    fn snapshot(&mut self) -> Snapshot {
        let mut s = self.state.snapshot();
        let mut summary = (*s.summary).clone();
        if let Some(obj) = summary.as_object_mut() {
            obj.insert("node".into(), json!(self.node));
        }
        s.summary = Arc::new(summary);
        s
    }
}

/// Puts a board's lines back in their journal order: a line sent twice is
/// dropped, a line that comes before an earlier one (a re-send after an
/// outage can be stored after the lines that follow it) is held until the
/// gap is filled.
#[derive(Debug, Default)]
struct Sequencer {
    ahead: BTreeMap<u64, JournalLine>,
}

impl Sequencer {
    /// The lines that can be applied now, in order, when the board's next
    /// line is `next`.
    fn take(&mut self, board: u32, line: JournalLine, next: u64) -> Vec<JournalLine> {
        if line.seq < next {
            return Vec::new();
        }
        if line.seq > next {
            if self.ahead.is_empty() {
                tracing::warn!(
                    "board {board}: line {} came before line {next}; held until it comes",
                    line.seq
                );
            }
            self.ahead.insert(line.seq, line);
            return Vec::new();
        }
        let mut ready = vec![line];
        let mut next = next + 1;
        while let Some(l) = self.ahead.remove(&next) {
            ready.push(l);
            next += 1;
        }
        ready
    }
}

/// What the tasks that publish actions report back.
enum Report {
    /// The broker did not take the action.
    Failed(String, String),
    /// The broker took it, but it has not come back in time.
    Expired(String),
}

struct Applier {
    settings: NatsSettings,
    js: jetstream::Context,
    hub: Arc<Hub>,
    boards: HashMap<u32, Board>,
    /// The stream sequence of the last message applied.
    last: u64,
    unknown: HashSet<u32>,
    pending: HashMap<String, oneshot::Sender<Result<ActionDone, ActionError>>>,
    requests: u64,
    reports: mpsc::UnboundedSender<Report>,
    /// The broadcast delay, fed every line applied.
    delay: Option<Arc<Delay>>,
}

impl Applier {
    /// Applies one message of the stream.
    fn message(
        &mut self,
        seq: u64,
        subject: &str,
        (node, instance): (&str, Option<&str>),
        request: Option<&str>,
        body: &[u8],
    ) {
        if seq <= self.last {
            return;
        }
        self.last = seq;
        let payloads = match self.settings.parse_subject(subject) {
            Some(Subject::Board(n)) => self.board_line(seq, n, (node, instance), body),
            Some(Subject::Action(n)) => self.action(seq, n, node, request, body),
            None => Vec::new(),
        };
        self.hub.publish_at(seq, payloads);
    }

    fn board_line(
        &mut self,
        seq: u64,
        n: u32,
        (node, instance): (&str, Option<&str>),
        body: &[u8],
    ) -> Vec<Payload> {
        let Some(b) = self.boards.get_mut(&n) else {
            if self.unknown.insert(n) {
                tracing::warn!(
                    "node {node} publishes board {n}, which is not in the round file: ignored"
                );
            }
            return Vec::new();
        };
        let line = match serde_json::from_slice::<JournalLine>(body) {
            Ok(line) => line,
            Err(e) => {
                tracing::error!(
                    "stream message {seq}: board {n} from {node}: not a journal line ({e}): {}",
                    String::from_utf8_lossy(body)
                );
                return Vec::new();
            }
        };
        match &b.node {
            None => b.node = Some(node.to_owned()),
            Some(owner) if owner != node => {
                if !b.rivals.insert(node.to_owned()) {
                    return Vec::new();
                }
                let message = format!(
                    "board {n} is published by two hall nodes, {owner} and {node}: the lines of {node} are ignored; give each board number to one hall node"
                );
                tracing::error!("{message}");
                let out = b.state.raise_alert("duplicate_board", message);
                let snap = b.snapshot();
                b.snapshot.send_replace(snap);
                return out;
            }
            Some(_) => {}
        }
        let out = b.take_line(n, (node, instance), line, seq, self.delay.as_deref());
        if !out.is_empty() {
            let snap = b.snapshot();
            b.snapshot.send_replace(snap);
        }
        out
    }

    fn action(
        &mut self,
        seq: u64,
        n: u32,
        node: &str,
        request: Option<&str>,
        body: &[u8],
    ) -> Vec<Payload> {
        let msg = match serde_json::from_slice::<ActionMessage>(body) {
            Ok(m) => m,
            Err(e) => {
                tracing::error!("stream message {seq}: not an action ({e})");
                return Vec::new();
            }
        };
        let reply = request
            .or(Some(msg.request.as_str()))
            .and_then(|r| self.pending.remove(r));
        let Some(b) = self.boards.get_mut(&n) else {
            if let Some(reply) = reply {
                let _ = reply.send(Err(ActionError::Conflict(format!("no board {n}"))));
            }
            return Vec::new();
        };
        let at = msg.at.max(b.state.last_at());
        if let Err(e) = b.state.check(&msg.action, at) {
            // The board moved on between the action and its turn in the
            // stream: every central refuses it alike.
            tracing::warn!(
                "board {n}: {} action from {node} no longer applies: {e}",
                msg.action.name()
            );
            if let Some(reply) = reply {
                let _ = reply.send(Err(e));
            }
            return Vec::new();
        }
        tracing::info!(
            board = n,
            action = msg.action.name(),
            stream_seq = seq,
            "arbiter action from {node}"
        );
        let line = JournalLine {
            round: None,
            seq: b.state.seq(),
            g: seq,
            at,
            wall: msg.wall,
            entry: Entry::Action { action: msg.action },
        };
        let out = b.state.apply(&line);
        if let Some(d) = &self.delay {
            d.push(n, seq, line.clone());
        }
        let snap = b.snapshot();
        b.snapshot.send_replace(snap);
        if let Some(reply) = reply {
            let _ = reply.send(Ok(ActionDone {
                seq: line.seq,
                g: seq,
            }));
        }
        out
    }

    /// An HTTP request for a board.
    fn command(&mut self, id: u32, cmd: Command) {
        let Some(b) = self.boards.get_mut(&id) else {
            return;
        };
        match cmd {
            Command::Detail { reply } => {
                let mut detail = b.state.detail();
                if let Some(obj) = detail.as_object_mut() {
                    obj.insert("node".into(), json!(b.node));
                }
                let _ = reply.send(detail);
            }
            // A central's alerts come from the stream only, so that alert
            // numbers (which acknowledgements name) are the same on every
            // central: an alert about this central's lichess push stays in
            // its log and its push state.
            // The central's boards play what the stream brings.
            Command::Play { .. } => {}
            Command::Alert { kind, message } => {
                tracing::debug!(board = id, kind, "not raised on a central: {message}");
            }
            Command::Action {
                action,
                confirmed,
                reply,
            } => {
                let at = b.state.last_at();
                if let Err(e) = b.state.check(&action, at) {
                    let _ = reply.send(Err(e));
                    return;
                }
                if !confirmed && let Some(why) = b.state.retraction(&action) {
                    let _ = reply.send(Err(ActionError::Retracts(why)));
                    return;
                }
                self.requests += 1;
                let request = format!(
                    "{}-{}-{:016x}",
                    self.settings.node,
                    self.requests,
                    rand::random::<u64>()
                );
                self.pending.insert(request.clone(), reply);
                let msg = ActionMessage {
                    at,
                    action,
                    request: request.clone(),
                    wall: Some(super::journal::wall_now()),
                };
                let body = serde_json::to_vec(&msg).unwrap_or_default();
                let publish = PublishMessage::build()
                    .payload(body.into())
                    .message_id(format!("action/{request}"))
                    .header(NODE_HEADER, self.settings.node.as_str());
                let js = self.js.clone();
                let subject = self.settings.action_subject(id);
                let reports = self.reports.clone();
                tokio::spawn(async move {
                    let sent = tokio::time::timeout(Duration::from_secs(10), async {
                        js.send_publish(subject, publish)
                            .await
                            .map_err(|e| e.to_string())?
                            .await
                            .map_err(|e| e.to_string())
                    })
                    .await;
                    match sent {
                        Ok(Ok(_)) => {
                            tokio::time::sleep(Duration::from_secs(10)).await;
                            let _ = reports.send(Report::Expired(request));
                        }
                        Ok(Err(e)) => {
                            let _ = reports.send(Report::Failed(request, e));
                        }
                        Err(_) => {
                            let _ = reports.send(Report::Failed(request, "timed out".into()));
                        }
                    }
                });
            }
        }
    }

    fn report(&mut self, report: Report) {
        let (request, message) = match report {
            Report::Failed(r, e) => (
                r,
                format!(
                    "the broker did not confirm the action ({e}); reload the board before trying again"
                ),
            ),
            Report::Expired(r) => (
                r,
                "the broker took the action but this central has not read it back yet; reload the board".to_owned(),
            ),
        };
        if let Some(reply) = self.pending.remove(&request) {
            let _ = reply.send(Err(ActionError::Unavailable(message)));
        }
    }
}

/// Fires `caught_up` once the central has applied up to its target
/// message (`empty`: a target of 0, an empty stream, counts as reached).
fn notify_caught_up(caught_up: &mut Option<(u64, oneshot::Sender<()>)>, last: u64, empty: bool) {
    if let Some((target, _)) = caught_up
        && ((empty && *target == 0) || last >= *target)
        && let Some((_, tx)) = caught_up.take()
    {
        let _ = tx.send(());
    }
}

/// The stream's messages from `start` on, in order.
async fn ordered_messages(stream: &jetstream::stream::Stream, start: u64) -> Option<pull::Ordered> {
    let config = pull::OrderedConfig {
        deliver_policy: jetstream::consumer::DeliverPolicy::ByStartSequence {
            start_sequence: start,
        },
        ..Default::default()
    };
    let messages = match stream.create_consumer(config).await {
        Ok(c) => c.messages().await.map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    messages
        .map_err(|e| tracing::warn!("NATS: cannot read the stream: {e}"))
        .ok()
}

/// Reads the stream for ever (from where it stopped, after any failure),
/// applying each message; `caught_up` fires once the messages that were in
/// the stream at start are applied.
async fn follow(
    mut applier: Applier,
    mut commands: mpsc::Receiver<(u32, Command)>,
    mut reports: mpsc::UnboundedReceiver<Report>,
    mut caught_up: Option<(u64, oneshot::Sender<()>)>,
) {
    let mut warned = false;
    loop {
        let stream = match applier.settings.stream(&applier.js).await {
            Ok(s) => s,
            Err(e) => {
                if !warned {
                    tracing::warn!(
                        "NATS {}: cannot read the stream yet ({e}); retrying",
                        applier.settings.url
                    );
                    warned = true;
                }
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_secs(1)) => {}
                    Some((id, cmd)) = commands.recv() => applier.command(id, cmd),
                    Some(r) = reports.recv() => applier.report(r),
                }
                continue;
            }
        };
        let ends_at = stream.cached_info().state.last_sequence;
        if ends_at < applier.last {
            // New messages would be numbered below what this central has
            // shown: it cannot follow without renaming its events.
            tracing::error!(
                "stream {} ends at message {ends_at} but this central has read up to {}: the broker lost its store; restart this central to rebuild the round",
                applier.settings.stream,
                applier.last
            );
        }
        notify_caught_up(&mut caught_up, applier.last, true);
        let Some(mut messages) = ordered_messages(&stream, applier.last + 1).await else {
            tokio::time::sleep(Duration::from_secs(1)).await;
            continue;
        };
        if warned {
            tracing::info!("NATS {}: reading the stream", applier.settings.url);
            warned = false;
        }
        let client = applier.js.client();
        let mut was_connected = true;
        let mut check = tokio::time::interval(Duration::from_secs(1));
        loop {
            tokio::select! {
                biased;
                Some((id, cmd)) = commands.recv() => applier.command(id, cmd),
                Some(r) = reports.recv() => applier.report(r),
                _ = check.tick() => {
                    // Back after an outage: the broker may have lost the
                    // consumer; read on from the last message at once rather
                    // than wait for the consumer to notice.
                    let connected = client.connection_state() == async_nats::connection::State::Connected;
                    if connected && !was_connected {
                        break;
                    }
                    was_connected = connected;
                }
                msg = messages.next() => match msg {
                    Some(Ok(m)) => {
                        let Ok(info) = m.info() else { continue };
                        let seq = info.stream_sequence;
                        let node = m
                            .headers
                            .as_ref()
                            .and_then(|h| h.get(NODE_HEADER))
                            .map_or("?", |v| v.as_str())
                            .to_owned();
                        let instance = m
                            .headers
                            .as_ref()
                            .and_then(|h| h.get(INSTANCE_HEADER))
                            .map(|v| v.as_str().to_owned());
                        let from = (node.as_str(), instance.as_deref());
                        applier.message(seq, m.subject.as_str(), from, None, &m.payload);
                        notify_caught_up(&mut caught_up, applier.last, false);
                    }
                    // The broker restarted, the consumer is gone, ...: read
                    // again from the message after the last one applied.
                    Some(Err(e)) => {
                        if !warned {
                            tracing::warn!("NATS {}: {e}; reading the stream again", applier.settings.url);
                            warned = true;
                        }
                        break;
                    }
                    None => break,
                },
            }
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// How many messages the stream holds now, or `None` (with a warning) when
/// the broker does not tell within 10 s.
async fn stream_length(nats: &NatsSettings, js: &jetstream::Context) -> Option<u64> {
    match tokio::time::timeout(Duration::from_secs(10), nats.stream(js)).await {
        Ok(Ok(stream)) => Some(stream.cached_info().state.last_sequence),
        Ok(Err(e)) => {
            tracing::warn!("NATS {}: {e}; serving what arrives", nats.url);
            None
        }
        Err(_) => {
            tracing::warn!(
                "NATS {}: no answer within 10 s; serving what arrives",
                nats.url
            );
            None
        }
    }
}

/// The boards a central follows: the handles the HTTP server uses (their
/// commands forwarded to `cmd_tx`), the boards' states, and their states
/// before any line (for the broadcast delay).
fn follow_boards(
    spec: &CentralSpec,
    round: &Arc<RoundInfo>,
    cmd_tx: &mpsc::Sender<(u32, Command)>,
) -> (Vec<BoardHandle>, HashMap<u32, Board>, Vec<DelayedBoard>) {
    let mut handles = Vec::new();
    let mut boards = HashMap::new();
    let mut fresh = Vec::new();
    for (id, white, black) in &spec.boards {
        let state = BoardState::new(
            *id,
            Arc::clone(round),
            spec.engine,
            white.clone(),
            black.clone(),
        );
        let board = Board::new(state);
        fresh.push(DelayedBoard {
            fresh: board.fresh.clone(),
            lines: Vec::new(),
        });
        let snap_rx = board.snapshot.subscribe();
        boards.insert(*id, board);
        let (tx, mut rx) = mpsc::channel::<Command>(64);
        let forward = cmd_tx.clone();
        let board_id = *id;
        tokio::spawn(async move {
            while let Some(cmd) = rx.recv().await {
                if forward.send((board_id, cmd)).await.is_err() {
                    break;
                }
            }
        });
        handles.push(BoardHandle::new(*id, tx, snap_rx));
    }
    (handles, boards, fresh)
}

/// Starts a central on the current tokio runtime: reads what the stream
/// holds (waiting at most a minute for it), then serves HTTP.
pub async fn start(spec: CentralSpec) -> Result<Daemon, DaemonError> {
    std::fs::create_dir_all(&spec.data_dir).map_err(|source| DaemonError::Io {
        path: spec.data_dir.clone(),
        source,
    })?;
    let (token, token_path, token_created) = load_or_create_token(&spec.data_dir)?;
    let client = spec.nats.connect().await?;
    let js = jetstream::new(client);
    let round = Arc::new(spec.round.clone());
    let hub = Hub::new(Vec::new(), 0, false);
    let (cmd_tx, cmd_rx) = mpsc::channel::<(u32, Command)>(256);
    let (handles, boards, fresh) = follow_boards(&spec, &round, &cmd_tx);
    // What the stream holds now is read before serving, so that a restarted
    // central does not show (or push) a half-rebuilt round.
    let target = stream_length(&spec.nats, &js).await;
    let (report_tx, report_rx) = mpsc::unbounded_channel();
    let delay = super::start_delay(spec.broadcast_delay, fresh, &hub, false);
    let applier = Applier {
        delay: delay.clone(),
        settings: spec.nats.clone(),
        js,
        hub: Arc::clone(&hub),
        boards,
        last: 0,
        unknown: HashSet::new(),
        pending: HashMap::new(),
        requests: 0,
        reports: report_tx,
    };
    let (done_tx, done_rx) = oneshot::channel();
    let caught_up = target.map(|t| (t, done_tx));
    tokio::spawn(follow(applier, cmd_rx, report_rx, caught_up));
    if let Some(t) = target {
        if tokio::time::timeout(Duration::from_secs(60), done_rx)
            .await
            .is_err()
        {
            tracing::warn!(
                "the stream's {t} messages were not all read within 60 s; serving meanwhile"
            );
        } else {
            tracing::info!(messages = t, "stream read");
        }
    }
    super::limits::raise_open_files();
    let (listener, addr) = super::bind(spec.listen).await?;
    let handles = Arc::new(handles);
    let lichess = super::serve_http(
        listener,
        &handles,
        &hub,
        &token,
        &spec.round,
        super::http::MAX_EVENT_STREAMS,
        delay.clone(),
    );
    Ok(Daemon {
        addr,
        hub,
        boards: handles,
        token,
        token_path,
        token_created,
        lock: None,
        lichess,
        stopping: None,
        delay,
    })
}

/// The central's spec from the round file and the flags, and where it
/// pushes the round on lichess (as `run` does).
pub fn spec_from_args(
    args: &CentralArgs,
) -> Result<(CentralSpec, Option<super::lichess::LichessSettings>), DaemonError> {
    let config = EventConfig::load(&args.config)?;
    let ids: Vec<u32> = config.boards.iter().map(|b| b.id()).collect();
    let push =
        super::lichess::LichessSettings::resolve(config.lichess.as_ref(), &args.lichess, &ids)?;
    let nats = NatsSettings::for_central(config.publish.as_ref(), args.from.as_deref())?;
    let (round, engine) = round_and_engine(&config, None)?;
    for b in &config.boards {
        if let Some(source) = &b.source {
            tracing::info!(
                "board {}: source {source} is not used: the central reads the board from the stream",
                b.id()
            );
        }
    }
    let spec = CentralSpec {
        round,
        engine,
        boards: config
            .boards
            .iter()
            .map(|b| (b.id(), b.white.clone(), b.black.clone()))
            .collect(),
        data_dir: args
            .data_dir
            .clone()
            .unwrap_or_else(|| PathBuf::from("eboard-central")),
        listen: args.listen,
        nats,
        broadcast_delay: args
            .broadcast_delay
            .or(config.broadcast.as_ref().and_then(|b| b.delay))
            .unwrap_or_default(),
    };
    Ok((spec, push))
}

fn announce(d: &Daemon, spec: &CentralSpec) {
    let mut out = std::io::stdout().lock();
    super::announce_addresses(&mut out, d);
    let _ = writeln!(
        out,
        "eboard: reading stream {} from {}",
        spec.nats.stream, spec.nats.url
    );
    super::announce_token(&mut out, d);
    let _ = out.flush();
}

/// `eboard serve`.
pub fn run(args: &CentralArgs) -> Result<(), DaemonError> {
    super::init_tracing();
    let (spec, push) = spec_from_args(args)?;
    super::runtime()?.block_on(async move {
        // start() returns once the stream is read: the push never sends a
        // half-rebuilt round.
        let daemon = start(spec.clone()).await?;
        announce(&daemon, &spec);
        super::push_to_lichess(&daemon, push)?;
        super::until_stopped().await;
        tracing::info!("stopping");
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(seq: u64) -> JournalLine {
        JournalLine {
            round: None,
            seq,
            g: 0,
            at: seq * 10,
            wall: None,
            entry: Entry::Tick,
        }
    }

    /// Issue 38, fault 5: a hall node replaced under the same name (a new
    /// instance) has its board started again as a new game from the new
    /// instance's first line, with a `hall_replaced` alert; the old lines
    /// are not continued by the new ones.
    #[test]
    fn a_replaced_hall_starts_its_board_as_a_new_game() {
        let mut b = board_3();
        for seq in 1..=3 {
            let out = b.take_line(3, ("hall-a", Some("aaaa")), line(seq), seq, None);
            assert!(out.iter().all(|p| p.kind != "alert"));
        }
        assert_eq!(b.state.seq(), 3);
        let out = b.take_line(3, ("hall-a", Some("bbbb")), line(1), 4, None);
        assert!(
            out.iter()
                .any(|p| p.kind == "alert" && p.data.contains("hall_replaced")),
            "{out:?}"
        );
        assert_eq!(
            b.state.seq(),
            1,
            "the new instance's line 1 starts the board"
        );
        b.take_line(3, ("hall-a", Some("bbbb")), line(2), 5, None);
        assert_eq!(b.state.seq(), 2);
        // A hall upgraded (no instance before, one now) continues.
        let mut b = Board::new(b.fresh.clone());
        b.take_line(3, ("hall-a", None), line(1), 1, None);
        let out = b.take_line(3, ("hall-a", Some("cccc")), line(2), 2, None);
        assert!(out.iter().all(|p| p.kind != "alert"), "{out:?}");
        assert_eq!(b.state.seq(), 2);
    }

    /// Board 3, as the round file gives it.
    fn board_3() -> Board {
        let round = Arc::new(crate::daemon::board::RoundInfo {
            event: "E".into(),
            site: None,
            date: None,
            round: "1".into(),
            time_control: None,
        });
        let state = BoardState::new(
            3,
            round,
            crate::engine::EngineConfig::default(),
            Default::default(),
            Default::default(),
        );
        Board::new(state)
    }

    /// Issues 36 and 38: the delayed public view of a replaced hall's board
    /// starts again as a new game too, with the alert, when its time comes:
    /// once every line is old enough it is exactly the live board, never the
    /// new instance's lines spliced into the old game.
    #[test]
    fn a_replaced_hall_restarts_the_delayed_board_too() {
        let mut b = board_3();
        let live = Hub::new(Vec::new(), 100, false);
        let delayed = DelayedBoard {
            fresh: b.fresh.clone(),
            lines: Vec::new(),
        };
        let delay = Delay::new(Duration::from_secs(60), vec![delayed], live, false, 0);
        for seq in 1..=3 {
            b.take_line(3, ("hall-a", Some("aaaa")), line(seq), seq, Some(&delay));
        }
        b.take_line(3, ("hall-a", Some("bbbb")), line(1), 4, Some(&delay));
        b.take_line(3, ("hall-a", Some("bbbb")), line(2), 5, Some(&delay));
        // The restart was taken now: not yet a minute old.
        let now = crate::daemon::journal::wall_now();
        assert!(delay.release(now).is_some());
        assert_ne!(delay.detail(3).unwrap(), b.state.detail());
        assert_eq!(delay.release(now + 61_000), None);
        assert_eq!(delay.detail(3).unwrap(), b.state.detail());
    }

    fn seqs(lines: Vec<JournalLine>) -> Vec<u64> {
        lines.into_iter().map(|l| l.seq).collect()
    }

    #[test]
    fn lines_are_put_back_in_journal_order() {
        let mut order = Sequencer::default();
        assert_eq!(seqs(order.take(1, line(1), 1)), [1]);
        // Line 4 and 3 come before 2: held, then released in order.
        assert_eq!(seqs(order.take(1, line(4), 2)), Vec::<u64>::new());
        assert_eq!(seqs(order.take(1, line(3), 2)), Vec::<u64>::new());
        assert_eq!(seqs(order.take(1, line(2), 2)), [2, 3, 4]);
        // Sent twice: dropped.
        assert_eq!(seqs(order.take(1, line(3), 5)), Vec::<u64>::new());
        assert_eq!(seqs(order.take(1, line(5), 5)), [5]);
        assert!(order.ahead.is_empty());
    }
}
