//! Serial transport: reads a real board over USB serial and delivers
//! timestamped [`BoardEvent`](crate::BoardEvent)s.
//!
//! [`spawn_board`] starts one reader thread per port. The thread does
//! blocking reads with a short timeout, stamps what it reads with the
//! session clock (milliseconds since the session began: the engine itself
//! never reads a clock), pushes the bytes through the board's [`Link`] and
//! sends the events, and every change of the connection, through a channel.
//! When the port errors or disappears it retries with backoff, reopens it,
//! sends the start-up sequence again and asks for the full board, so that
//! the engine catches up on what happened meanwhile.
//!
//! * [`link`]: the protocol conversation, without I/O (shared with replay).
//! * [`capture`]: `--record` captures and their replay.
//! * [`ports`]: `eboard ports`.
//! * [`watch`]: `eboard watch`, a live board in the terminal.

use std::{
    fmt, io,
    path::PathBuf,
    sync::{
        Arc,
        atomic::{AtomicBool, Ordering},
    },
    thread::JoinHandle,
    time::{Duration, Instant},
};

use tokio::sync::mpsc;

use crate::{
    event::{Millis, TimedEvent},
    protocol::dgt,
};

pub mod capture;
pub mod flood;
pub mod link;
pub mod ports;
pub mod probe;
pub mod recover;
pub mod watch;

pub use link::{Link, LinkOptions, LinkOutput};

/// A board family, as far as the wire is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum Protocol {
    /// DGT e-boards (USB, serial, Bluetooth classic): 9600 8N1, binary.
    Dgt,
    /// Millennium ChessLink (Exclusive, Performance, eONE): 38400 7-O-1, ASCII.
    Millennium,
    /// Certabo RFID boards and the Tabutronic Sentio: 38400 8N1, text.
    Certabo,
}

impl Protocol {
    /// The name used on the command line and in captures.
    pub fn as_str(self) -> &'static str {
        match self {
            Protocol::Dgt => "dgt",
            Protocol::Millennium => "millennium",
            Protocol::Certabo => "certabo",
        }
    }

    /// The serial line settings eboard opens the port with.
    ///
    /// Millennium boards speak 7-O-1. eboard opens their port 8N1 and lets
    /// the codec set and check the parity bit (bit 7), which puts the same
    /// bits on the wire, works with every USB bridge and PTY, and lets line
    /// noise show up as parity errors instead of silently wrong letters.
    pub fn settings(self) -> LineSettings {
        match self {
            Protocol::Dgt => LineSettings {
                baud: 9600,
                dtr_rts: false,
            },
            Protocol::Millennium => LineSettings {
                baud: 38400,
                dtr_rts: false,
            },
            // Certabo's own software raises DTR and RTS; some bridges send
            // nothing without them.
            Protocol::Certabo => LineSettings {
                baud: 38400,
                dtr_rts: true,
            },
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Protocol {
    type Err = String;

    fn from_str(s: &str) -> Result<Protocol, String> {
        match s {
            "dgt" => Ok(Protocol::Dgt),
            "millennium" => Ok(Protocol::Millennium),
            "certabo" => Ok(Protocol::Certabo),
            other => Err(format!(
                "unknown board protocol '{other}': expected dgt, millennium or certabo"
            )),
        }
    }
}

/// How a port is opened: always 8 data bits, no parity, one stop bit, no
/// flow control; these are the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineSettings {
    /// Baud rate.
    pub baud: u32,
    /// Raise DTR and RTS after opening.
    pub dtr_rts: bool,
}

/// The session clock of a reader: when bytes arrived.
///
/// The reader calls [`now`](TimeSource::now) once per read, then
/// [`sent`](TimeSource::sent) for what it wrote in answer and
/// [`received`](TimeSource::received) once the read's events are in the
/// channel. A real session uses [`SessionClock`]; a test may substitute a
/// clock driven by a virtual board, which can use the two notifications to
/// keep in step with the reader.
pub trait TimeSource: Send + Sync + fmt::Debug {
    /// Milliseconds since the session began.
    fn now(&self) -> Millis;
    /// `bytes` bytes were written to the board.
    fn sent(&self, _bytes: usize) {}
    /// The `bytes` bytes of one read are fully handled.
    fn received(&self, _bytes: usize) {}
}

/// Monotonic milliseconds since the clock was made.
#[derive(Debug, Clone, Copy)]
pub struct SessionClock {
    start: Instant,
}

impl SessionClock {
    /// A clock starting now.
    pub fn new() -> SessionClock {
        SessionClock {
            start: Instant::now(),
        }
    }

    /// A clock that started at `start` (several boards of one session).
    pub fn since(start: Instant) -> SessionClock {
        SessionClock { start }
    }
}

impl Default for SessionClock {
    fn default() -> SessionClock {
        SessionClock::new()
    }
}

impl TimeSource for SessionClock {
    fn now(&self) -> Millis {
        Millis::try_from(self.start.elapsed().as_millis()).unwrap_or(Millis::MAX)
    }
}

/// How long to wait before the next attempt to open a port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backoff {
    /// The first wait.
    pub initial: Duration,
    /// The longest wait; each failure doubles the wait up to this.
    pub max: Duration,
}

impl Default for Backoff {
    fn default() -> Backoff {
        // A board whose cable was pulled is usually back within seconds;
        // two seconds between attempts keeps the gap short without
        // hammering the system.
        Backoff {
            initial: Duration::from_millis(200),
            max: Duration::from_secs(2),
        }
    }
}

impl Backoff {
    fn delay(&self, attempt: u32) -> Duration {
        let factor = 1u32 << attempt.saturating_sub(1).min(16);
        self.initial.saturating_mul(factor).min(self.max)
    }
}

/// What a serial reader reads and how (the daemon's configuration of a
/// board is [`crate::daemon::config::BoardConfig`]).
#[derive(Debug, Clone)]
pub struct ReaderConfig {
    /// The serial port (`/dev/ttyACM0`, `/dev/serial/by-id/...`, `COM3`).
    pub port: String,
    /// The board family.
    pub protocol: Protocol,
    /// Options of the protocol conversation (DGT clock sides).
    pub link: LinkOptions,
    /// Write a capture of everything read to this file.
    pub record: Option<PathBuf>,
    /// The read timeout: how quickly the thread notices a stop request.
    pub read_timeout: Duration,
    /// Waits between attempts to (re)open the port.
    pub backoff: Backoff,
    /// The session clock.
    pub clock: Arc<dyn TimeSource>,
    /// Find the family first ([`probe`]): `protocol` is only the guess
    /// until a board answers (a `serial:` source).
    pub detect: bool,
}

impl ReaderConfig {
    /// Defaults for a board of this family on this port, with a session
    /// clock starting now.
    pub fn new(port: impl Into<String>, protocol: Protocol) -> ReaderConfig {
        ReaderConfig {
            port: port.into(),
            protocol,
            link: LinkOptions {
                dgt: dgt::Config::default(),
            },
            record: None,
            read_timeout: Duration::from_millis(50),
            backoff: Backoff::default(),
            clock: Arc::new(SessionClock::new()),
            detect: false,
        }
    }
}

/// The state of a board's connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectionState {
    /// The port is open and the start-up sequence was sent.
    Connected,
    /// The port was lost (unplugged, read or write failed).
    Disconnected {
        /// What happened.
        reason: String,
    },
    /// Opening the port failed; the next attempt comes after `retry_in`.
    Reconnecting {
        /// Failed attempts in a row.
        attempt: u32,
        /// The wait before the next one.
        retry_in: Duration,
        /// Why the last attempt failed.
        error: String,
    },
}

impl fmt::Display for ConnectionState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConnectionState::Connected => f.write_str("connected"),
            ConnectionState::Disconnected { reason } => write!(f, "disconnected: {reason}"),
            ConnectionState::Reconnecting {
                attempt,
                retry_in,
                error,
            } => write!(
                f,
                "cannot open ({error}); attempt {attempt}, next in {} ms",
                retry_in.as_millis()
            ),
        }
    }
}

/// What a board reader reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoardMessage {
    /// Something happened at the board.
    Event(TimedEvent),
    /// Several things read at once, to be applied in order with no tick in
    /// between: what a DGT board's log gives back after an outage is dated
    /// within the outage, so the engine's time must not pass them by
    /// before they are all in.
    Events(Vec<TimedEvent>),
    /// The connection changed.
    Connection {
        at: Millis,
        /// The new state.
        state: ConnectionState,
    },
    /// Worth a line in the log: versions, the EEPROM log, line noise,
    /// capture trouble.
    Note { at: Millis, text: String },
    /// The family that answered on a port whose family was to be found
    /// ([`ReaderConfig::detect`]); the port is read as that family from now on.
    Family { at: Millis, protocol: Protocol },
    /// Something the arbiter must hear about the link: a port silent or
    /// not there ([`probe::BOARD_SILENT`]), speaking another family
    /// ([`probe::WRONG_FAMILY`]), or flooding ([`flood::BOARD_FLOODING`]).
    Alert {
        at: Millis,
        /// [`probe::BOARD_SILENT`], [`probe::WRONG_FAMILY`] or
        /// [`flood::BOARD_FLOODING`].
        kind: &'static str,
        /// What was seen, naming the port.
        message: String,
    },
}

/// Why a board reader could not start.
#[derive(Debug, thiserror::Error)]
pub enum TransportError {
    /// The capture file could not be created.
    #[error("cannot create the capture file {path}: {source}")]
    Record {
        path: PathBuf,
        /// What went wrong.
        source: io::Error,
    },
    /// The reader thread could not be started.
    #[error("cannot start the reader thread for {port}: {source}")]
    Thread {
        port: String,
        /// What went wrong.
        source: io::Error,
    },
}

/// A running serial reader of one board. Dropping it stops the thread.
/// (The HTTP server's handle on a board's actor is
/// [`crate::daemon::actor::BoardHandle`].)
#[derive(Debug)]
pub struct ReaderHandle {
    rx: mpsc::UnboundedReceiver<BoardMessage>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    clock: Arc<dyn TimeSource>,
    port: String,
}

impl ReaderHandle {
    /// The next message; `None` once the reader stopped.
    pub async fn recv(&mut self) -> Option<BoardMessage> {
        self.rx.recv().await
    }

    /// The next message, blocking the thread (not for async code).
    pub fn blocking_recv(&mut self) -> Option<BoardMessage> {
        self.rx.blocking_recv()
    }

    /// A message if one is waiting.
    pub fn try_recv(&mut self) -> Option<BoardMessage> {
        self.rx.try_recv().ok()
    }

    /// The session clock now: what a live consumer passes to
    /// [`Engine::advance_to`](crate::Engine::advance_to) when no event came.
    pub fn now(&self) -> Millis {
        self.clock.now()
    }

    /// The port read.
    pub fn port(&self) -> &str {
        &self.port
    }

    /// Stops the reader and waits for its thread (at most about one read
    /// timeout). Messages already sent can still be received.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for ReaderHandle {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Starts reading a board: one thread, which keeps (re)opening the port
/// until the handle is stopped or dropped.
pub fn spawn_board(config: ReaderConfig) -> Result<ReaderHandle, TransportError> {
    let capture = match &config.record {
        Some(path) => {
            let file = std::fs::File::create(path).map_err(|source| TransportError::Record {
                path: path.clone(),
                source,
            })?;
            let writer = capture::CaptureWriter::new(
                io::BufWriter::new(file),
                config.protocol,
                &config.port,
            )
            .map_err(|source| TransportError::Record {
                path: path.clone(),
                source,
            })?;
            Some(writer)
        }
        None => None,
    };
    let (tx, rx) = mpsc::unbounded_channel();
    let stop = Arc::new(AtomicBool::new(false));
    let clock = config.clock.clone();
    let port = config.port.clone();
    let reader = Reader {
        link: Link::new(config.protocol, config.link),
        config,
        tx,
        stop: stop.clone(),
        capture,
        out: LinkOutput::default(),
        flood: flood::FloodGuard::new(port.clone()),
    };
    let thread = std::thread::Builder::new()
        .name(format!("board {port}"))
        .spawn(move || reader.run())
        .map_err(|source| TransportError::Thread {
            port: port.clone(),
            source,
        })?;
    Ok(ReaderHandle {
        rx,
        stop,
        thread: Some(thread),
        clock,
        port,
    })
}

type Capture = capture::CaptureWriter<io::BufWriter<std::fs::File>>;

struct Reader {
    config: ReaderConfig,
    link: Link,
    tx: mpsc::UnboundedSender<BoardMessage>,
    stop: Arc<AtomicBool>,
    capture: Option<Capture>,
    out: LinkOutput,
    /// Merges what a flooding board repeats ([`flood`]).
    flood: flood::FloodGuard,
}

/// Why a connection ended.
enum End {
    /// Stop requested, or nobody listens any more.
    Stop,
    /// The port was lost.
    Lost(String),
}

impl Reader {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed) || self.tx.is_closed()
    }

    fn send(&self, message: BoardMessage) {
        // A closed channel means the consumer is gone; `stopped` sees it.
        let _ = self.tx.send(message);
    }

    fn state(&mut self, state: ConnectionState) {
        let at = self.config.clock.now();
        if let Some(c) = &mut self.capture {
            let written = match &state {
                ConnectionState::Connected => c.open(at, &self.config.port),
                ConnectionState::Disconnected { reason } => c.close(at, reason),
                ConnectionState::Reconnecting { .. } => Ok(()),
            };
            if let Err(e) = written {
                self.capture_failed(e);
            }
        }
        self.send(BoardMessage::Connection { at, state });
    }

    fn note(&self, text: String) {
        let at = self.config.clock.now();
        self.send(BoardMessage::Note { at, text });
    }

    fn capture_failed(&mut self, e: io::Error) {
        // Reading the board matters more than the capture: stop recording
        // and say so once.
        self.capture = None;
        let path = self
            .config
            .record
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        self.note(format!("capture to {path} stopped: {e}"));
    }

    /// Sleeps `d` in read-timeout steps; false if a stop came meanwhile.
    fn pause(&self, d: Duration) -> bool {
        let until = Instant::now() + d;
        loop {
            if self.stopped() {
                return false;
            }
            let now = Instant::now();
            if now >= until {
                return true;
            }
            std::thread::sleep((until - now).min(self.config.read_timeout));
        }
    }

    fn run(mut self) {
        if self.config.detect && !self.detect() {
            return;
        }
        let mut attempt = 0u32;
        let mut failing = Silence::default();
        while !self.stopped() {
            let port = match self.open() {
                Ok(port) => port,
                Err(e) => {
                    attempt += 1;
                    let retry_in = self.config.backoff.delay(attempt);
                    let mut error = e.to_string();
                    if e.kind() == serialport::ErrorKind::Io(io::ErrorKind::PermissionDenied) {
                        // The usual cause on Linux, and easy to fix.
                        error.push_str(" (on Linux: is the user in the dialout group?)");
                    }
                    failing.failed(&self, &error);
                    self.state(ConnectionState::Reconnecting {
                        attempt,
                        retry_in,
                        error,
                    });
                    if !self.pause(retry_in) {
                        break;
                    }
                    continue;
                }
            };
            attempt = 0;
            failing = Silence::default();
            match self.connection(port) {
                End::Stop => break,
                End::Lost(reason) => {
                    self.state(ConnectionState::Disconnected { reason });
                    // A port that vanished is usually not back at once.
                    if !self.pause(self.config.backoff.initial) {
                        break;
                    }
                }
            }
        }
    }

    fn alert(&self, kind: &'static str, message: String) {
        let at = self.config.clock.now();
        self.send(BoardMessage::Alert { at, kind, message });
    }

    /// Finds the family of a `serial:` port: asks until a board answers,
    /// saying once when it has stayed silent too long. False if stopped.
    fn detect(&mut self) -> bool {
        // Silent from the start: every round of asking takes seconds.
        let mut silence = Silence {
            since: Some(Instant::now()),
            said: false,
        };
        let port_name = self.config.port.clone();
        while !self.stopped() {
            let answer = probe::open(&port_name)
                .map_err(|e| e.to_string())
                .and_then(|mut port| {
                    probe::ask(port.as_mut(), &|| self.stopped()).map_err(|e| e.to_string())
                });
            match answer {
                Ok(probe::Answer::Family(protocol)) => {
                    self.config.protocol = protocol;
                    self.link = Link::new(protocol, self.config.link);
                    let at = self.config.clock.now();
                    self.send(BoardMessage::Family { at, protocol });
                    return true;
                }
                Ok(probe::Answer::Nothing(seen)) => silence.failed(
                    self,
                    &format!("no board family answered ({})", probe::describe(&seen)),
                ),
                Err(error) => silence.failed(self, &error),
            }
            if !self.pause(self.config.backoff.initial) {
                break;
            }
        }
        false
    }

    /// Once a named family's port has had [`probe::SILENT_AFTER`] to
    /// answer: tells the arbiter what it did instead.
    fn judge(&self, port: &mut dyn serialport::SerialPort, watch: &mut probe::Watch) {
        let family = self.config.protocol;
        let Some(verdict) = watch.due(Instant::now(), family) else {
            return;
        };
        let name = &self.config.port;
        let seconds = probe::SILENT_AFTER.as_secs();
        let other = match verdict {
            // A board that sends nothing unasked may be another family:
            // ask it (reading requests only), then read on as configured.
            probe::Verdict::Silent => {
                let asked = probe::ask(port, &|| self.stopped());
                probe::speed(port, family.settings().baud);
                match asked {
                    Ok(probe::Answer::Family(p)) if p == family => return,
                    Ok(probe::Answer::Family(p)) => Some(p),
                    _ => None,
                }
            }
            probe::Verdict::Other(p, _) => p,
        };
        let expected = probe::family_name(family);
        match other {
            Some(p) => self.alert(
                probe::WRONG_FAMILY,
                format!(
                    "{name} answers as {}, not as {expected}: correct the board's source ({}:{name}), or use serial:{name}",
                    probe::family_name(p),
                    p.as_str()
                ),
            ),
            None if watch.seen().is_empty() => self.alert(
                probe::BOARD_SILENT,
                format!("{name} sent nothing for {seconds} s: is {expected} plugged in and switched on?"),
            ),
            None => self.alert(
                probe::WRONG_FAMILY,
                format!(
                    "{name} sent {} in {seconds} s, which {expected} does not send",
                    probe::describe(watch.seen())
                ),
            ),
        }
    }

    /// Sends what the flood guard let through, and what it had to say.
    fn pass(&self, at: Millis, mut admitted: flood::Admitted) {
        if let Some(message) = admitted.alert {
            self.send(BoardMessage::Alert {
                at,
                kind: flood::BOARD_FLOODING,
                message,
            });
        }
        match admitted.events.len() {
            0 => {}
            1 => self.send(BoardMessage::Event(admitted.events.remove(0))),
            _ => self.send(BoardMessage::Events(admitted.events)),
        }
        if let Some(text) = admitted.note {
            self.send(BoardMessage::Note { at, text });
        }
    }

    fn open(&self) -> Result<Box<dyn serialport::SerialPort>, serialport::Error> {
        let s = self.config.protocol.settings();
        let mut port = serialport::new(&self.config.port, s.baud)
            .data_bits(serialport::DataBits::Eight)
            .parity(serialport::Parity::None)
            .stop_bits(serialport::StopBits::One)
            .flow_control(serialport::FlowControl::None)
            .timeout(self.config.read_timeout)
            .open()?;
        // What the board sent before the port was opened (kept by the
        // system while nobody read it, as across a daemon restart) is stale:
        // what the board shows now comes in answer to the start-up, read
        // like a dump after a reconnection.
        let _ = port.clear(serialport::ClearBuffer::Input);
        if s.dtr_rts {
            port.write_data_terminal_ready(true)?;
            port.write_request_to_send(true)?;
        }
        Ok(port)
    }

    fn write(&mut self, port: &mut dyn serialport::SerialPort, bytes: &[u8]) -> Result<(), End> {
        if bytes.is_empty() {
            return Ok(());
        }
        let at = self.config.clock.now();
        if let Some(c) = &mut self.capture
            && let Err(e) = c.sent(at, bytes)
        {
            self.capture_failed(e);
        }
        port.write_all(bytes)
            .and_then(|()| port.flush())
            .map_err(|e| End::Lost(format!("write failed: {e}")))?;
        self.config.clock.sent(bytes.len());
        Ok(())
    }

    fn connection(&mut self, mut port: Box<dyn serialport::SerialPort>) -> End {
        self.state(ConnectionState::Connected);
        let startup = self.link.connected();
        if let Err(end) = self.write(port.as_mut(), &startup) {
            return end;
        }
        let mut buf = [0u8; 4096];
        let mut last = Instant::now();
        let mut watch = probe::Watch::new(last);
        loop {
            if self.stopped() {
                return End::Stop;
            }
            match port.read(&mut buf) {
                Ok(0) => return End::Lost("the port closed".to_owned()),
                Ok(n) => {
                    let at = self.config.clock.now();
                    let bytes = &buf[..n];
                    if let Some(c) = &mut self.capture
                        && let Err(e) = c.data(at, bytes)
                    {
                        self.capture_failed(e);
                    }
                    let mut out = std::mem::take(&mut self.out);
                    out.clear();
                    self.link.feed(bytes, at, &mut out);
                    watch.read(bytes, !out.events.is_empty());
                    let result = self.write(port.as_mut(), &out.send);
                    for text in out.notes.drain(..) {
                        self.send(BoardMessage::Note { at, text });
                    }
                    let admitted = self.flood.admit(at, std::mem::take(&mut out.events));
                    self.pass(at, admitted);
                    self.out = out;
                    self.config.clock.received(n);
                    if let Err(end) = result {
                        return end;
                    }
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
                    ) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return End::Lost(format!("read failed: {e}")),
            }
            if self.flood.flooding() {
                let at = self.config.clock.now();
                let held = self.flood.poll(at);
                self.pass(at, held);
            }
            self.judge(port.as_mut(), &mut watch);
            let now = Instant::now();
            let retry = self.link.tick(now - last);
            last = now;
            if let Err(end) = self.write(port.as_mut(), &retry) {
                return end;
            }
        }
    }
}

/// A port that has not answered since some moment: said once, after
/// [`probe::SILENT_AFTER`].
#[derive(Default)]
struct Silence {
    since: Option<Instant>,
    said: bool,
}

impl Silence {
    /// Another failed attempt, `error` saying why.
    fn failed(&mut self, reader: &Reader, error: &str) {
        let since = *self.since.get_or_insert_with(Instant::now);
        if !self.said && since.elapsed() >= probe::SILENT_AFTER {
            self.said = true;
            reader.alert(
                probe::BOARD_SILENT,
                format!(
                    "{}: no board answered for {} s: {error}",
                    reader.config.port,
                    probe::SILENT_AFTER.as_secs()
                ),
            );
        }
    }
}
