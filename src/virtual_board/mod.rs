//! A virtual board on a pseudo-terminal: plays a board script, speaking a
//! board family's byte protocol, so that the live reading path can be
//! exercised without hardware (`eboard virtual-board`, and the tests).
//!
//! The board opens a PTY pair (`serialport::TTYPort::pair`), whose slave
//! device (`/dev/pts/N`) a reader opens like a USB serial port; optionally
//! it keeps a symbolic link pointing at it, the way `/dev/serial/by-id`
//! names a USB board, so that a reader configured with the link finds the
//! board again after it was unplugged and plugged back in.
//!
//! The script is first [planned](mod@plan) into physical steps with the
//! family's sensor artefacts; an emulator per family ([`dgt`],
//! [`millennium`]) turns the steps into bytes and answers the host's
//! commands. Steps are played at the pace of their timestamps (`speed`
//! times faster), or, with a [`Lockstep`], as fast as the reader keeps up,
//! with the reader's clock showing the script's times.

use std::{
    io::{self, Read as _, Write as _},
    path::{Path, PathBuf},
    sync::{
        Arc, Condvar, Mutex,
        atomic::{AtomicBool, Ordering},
    },
    thread::JoinHandle,
    time::{Duration, Instant},
};

use shakmaty::Color;

use crate::{
    event::{BoardEvent, Millis, Seconds, TimedEvent},
    transport::{Protocol, TimeSource},
};

pub mod cli;
pub mod dgt;
pub mod millennium;
pub mod plan;

pub use plan::{Action, PlanOptions, Step, plan};

/// The board side of a family: state, bytes for each step, answers.
pub trait Emulator: Send {
    /// Plays a step at script time `at`, appending what the board sends.
    fn step(&mut self, at: Millis, action: &Action, out: &mut Vec<u8>);
    /// Reads bytes from the host, appending the answers.
    fn host(&mut self, at: Millis, bytes: &[u8], out: &mut Vec<u8>);
    /// The host asked for the full board since the last power-up.
    fn ready(&self) -> bool;
    /// The board was powered up (plugged in again): it forgets the
    /// session's modes, keeps its pieces.
    fn power_up(&mut self, at: Millis);
    /// The cable was pulled. A board powered by it goes dark until
    /// [`Emulator::power_up`].
    fn unplugged(&mut self) {}
}

/// Keeps a virtual board and a reader in step, for deterministic tests.
///
/// It is the reader's [`TimeSource`]: the time it shows is the script time
/// of the step the board is playing. The board moves on to a later time
/// only when the reader has handled every byte the board wrote and the
/// board has read every byte the reader wrote, so each event is stamped
/// with the script time of the bytes that carried it, however fast or slow
/// the machine is.
#[derive(Debug, Default)]
pub struct Lockstep {
    state: Mutex<Counters>,
    changed: Condvar,
}

#[derive(Debug, Default, Clone, Copy)]
struct Counters {
    now: Millis,
    /// Bytes the board wrote.
    to_host: u64,
    /// Bytes the reader handled.
    host_received: u64,
    /// Bytes the reader wrote.
    from_host: u64,
    /// Bytes the board read.
    board_read: u64,
}

impl Lockstep {
    /// A lockstep at script time 0.
    pub fn new() -> Arc<Lockstep> {
        Arc::new(Lockstep::default())
    }

    fn counters(&self) -> Counters {
        *self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn update(&self, f: impl FnOnce(&mut Counters)) {
        f(&mut self.state.lock().unwrap_or_else(|e| e.into_inner()));
        self.changed.notify_all();
    }

    /// Waits until `ready` holds (checked under the lock, so no change is
    /// missed) or `timeout` passed; returns the counters then.
    fn wait_for(&self, timeout: Duration, ready: impl Fn(&Counters) -> bool) -> Counters {
        let guard = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match self
            .changed
            .wait_timeout_while(guard, timeout, |c| !ready(c))
        {
            Ok((guard, _)) => *guard,
            Err(poisoned) => *poisoned.into_inner().0,
        }
    }
}

impl TimeSource for Lockstep {
    fn now(&self) -> Millis {
        self.counters().now
    }

    fn sent(&self, bytes: usize) {
        self.update(|c| c.from_host += bytes as u64);
    }

    fn received(&self, bytes: usize) {
        self.update(|c| c.host_received += bytes as u64);
    }
}

/// How a virtual board plays.
#[derive(Debug, Clone)]
pub struct VirtualOptions {
    /// The family (DGT or Millennium).
    pub protocol: Protocol,
    /// Artefacts, their seed, cable pulls.
    pub plan: PlanOptions,
    /// Script milliseconds per real millisecond (ignored in lockstep).
    pub speed: f64,
    /// Start the script only when a host asked for the full board.
    pub wait_for_host: bool,
    /// Keep a symbolic link here pointing at the current device.
    pub link: Option<PathBuf>,
    /// Play in lockstep with a reader using this as its clock.
    pub lockstep: Option<Arc<Lockstep>>,
    /// Keep answering the host after the script ended, until stopped.
    pub linger: bool,
    /// Say on standard error what the wire cannot carry, and cable pulls.
    pub log: bool,
}

impl VirtualOptions {
    /// Real-time defaults for a family.
    pub fn new(protocol: Protocol) -> VirtualOptions {
        VirtualOptions {
            protocol,
            plan: PlanOptions {
                artefacts: protocol == Protocol::Dgt,
                seed: 0,
                unplugged: Vec::new(),
                rotated: false,
                cable_powered: false,
            },
            speed: 1.0,
            wait_for_host: true,
            link: None,
            lockstep: None,
            linger: false,
            log: false,
        }
    }
}

/// What a virtual board did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VirtualReport {
    /// Script events its wire cannot carry, at their script times: what an
    /// arbiter's console would have to enter.
    pub off_wire: Vec<TimedEvent>,
    /// Bytes written to the host.
    pub bytes_sent: u64,
    /// Bytes read from the host.
    pub bytes_read: u64,
    /// Bytes dropped because no host was reading.
    pub bytes_dropped: u64,
}

/// Why a virtual board failed.
#[derive(Debug, thiserror::Error)]
pub enum VirtualError {
    /// No virtual board exists for this family.
    #[error("there is no virtual {0} board (only dgt and millennium)")]
    Unsupported(Protocol),
    /// The speed is not a positive number.
    #[error("--speed must be a positive number, not {0}")]
    Speed(f64),
    /// No pseudo-terminal could be opened.
    #[error("cannot open a pseudo-terminal: {0}")]
    Pty(#[from] serialport::Error),
    /// The link could not be made.
    #[error("cannot make the link {path}: {source}")]
    Link {
        /// The link's path.
        path: PathBuf,
        /// What went wrong.
        source: io::Error,
    },
    /// Reading or writing the pseudo-terminal failed.
    #[error("virtual board on {device}: {source}")]
    Io {
        device: String,
        /// What went wrong.
        source: io::Error,
    },
    /// In lockstep, the reader stopped handling the board's bytes.
    #[error("the reader stopped reading the virtual board at script time {at} ms")]
    HostStalled {
        /// Script time.
        at: Millis,
    },
    /// The board's thread panicked.
    #[error("the virtual board's thread panicked")]
    Panicked,
}

/// A running virtual board.
#[derive(Debug)]
pub struct VirtualBoard {
    device: Arc<Mutex<String>>,
    link: Option<PathBuf>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<VirtualReport, VirtualError>>>,
}

/// How long a lockstep board waits for the reader before giving up.
const STALL: Duration = Duration::from_secs(30);

/// How long a write may wait for a host that does not read.
const WRITE_PATIENCE: Duration = Duration::from_secs(2);

impl VirtualBoard {
    /// Opens the PTY and starts playing `events` on a thread.
    pub fn start(
        events: &[TimedEvent],
        options: VirtualOptions,
    ) -> Result<VirtualBoard, VirtualError> {
        if options.speed.is_nan() || options.speed <= 0.0 {
            return Err(VirtualError::Speed(options.speed));
        }
        let emulator = emulator(events, options.protocol, &options.plan)?;
        let steps = plan(events, options.protocol, &options.plan);
        let pty = Pty::open()?;
        let device = Arc::new(Mutex::new(pty.device.clone()));
        if let Some(link) = &options.link {
            point_link(link, &pty.device)?;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let link = options.link.clone();
        let runner = Runner {
            steps,
            emulator,
            pty: Some(pty),
            device: device.clone(),
            stop: stop.clone(),
            report: VirtualReport::default(),
            now: 0,
            origin: Instant::now(),
            paused: options.wait_for_host,
            host_gone: false,
            out: Vec::new(),
            options,
        };
        let thread = std::thread::Builder::new()
            .name("virtual board".to_owned())
            .spawn(move || runner.run())
            .map_err(|source| VirtualError::Io {
                device: "thread".to_owned(),
                source,
            })?;
        Ok(VirtualBoard {
            device,
            link,
            stop,
            thread: Some(thread),
        })
    }

    /// The current device (`/dev/pts/N`; a new one after each replug).
    pub fn device(&self) -> String {
        self.device
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The path a reader should open: the link if there is one, else the
    /// device.
    pub fn path(&self) -> String {
        match &self.link {
            Some(l) => l.display().to_string(),
            None => self.device(),
        }
    }

    /// The script has ended (or the board failed).
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(|t| t.is_finished())
    }

    /// Asks the board to stop.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Waits for the board's thread (stop it first if it lingers).
    pub fn join(mut self) -> Result<VirtualReport, VirtualError> {
        match self.thread.take() {
            Some(t) => t.join().unwrap_or(Err(VirtualError::Panicked)),
            None => Ok(VirtualReport::default()),
        }
    }
}

impl Drop for VirtualBoard {
    fn drop(&mut self) {
        self.stop();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The board that plays `events`, set up as they begin (turned round, or
/// powered by its cable, as `options` say).
fn emulator(
    events: &[TimedEvent],
    protocol: Protocol,
    options: &PlanOptions,
) -> Result<Box<dyn Emulator>, VirtualError> {
    let (rotated, powered) = (options.rotated, options.cable_powered);
    let (clock, press) = (first_clock(events), first_press(events));
    Ok(match (protocol, rotated) {
        (Protocol::Dgt, false) => Box::new(dgt::DgtBoard::new(clock, press).cable_powered(powered)),
        (Protocol::Dgt, true) => {
            Box::new(dgt::DgtBoard::turned_round(clock, press).cable_powered(powered))
        }
        (Protocol::Millennium, false) => Box::new(millennium::MillenniumBoard::new()),
        (Protocol::Millennium, true) => Box::new(millennium::MillenniumBoard::turned_round()),
        (Protocol::Certabo, _) => return Err(VirtualError::Unsupported(protocol)),
    })
}

/// The times the clock was set to: those of the first clock report.
fn first_clock(events: &[TimedEvent]) -> Option<(Seconds, Seconds)> {
    let has_press = events
        .iter()
        .any(|e| matches!(e.event, BoardEvent::Press(_)));
    let first = events.iter().find_map(|e| match e.event {
        BoardEvent::Clock(w, b) => Some((w, b)),
        _ => None,
    });
    match first {
        Some(t) => Some(t),
        // Presses without times: a clock whose times nobody gave.
        None if has_press => Some((0, 0)),
        None => None,
    }
}

fn first_press(events: &[TimedEvent]) -> Option<Color> {
    events.iter().find_map(|e| match e.event {
        BoardEvent::Press(c) => Some(c),
        _ => None,
    })
}

/// Makes `link` a symbolic link to `device`, replacing an older link (but
/// never a file that is not a link).
fn point_link(link: &Path, device: &str) -> Result<(), VirtualError> {
    let err = |source| VirtualError::Link {
        path: link.to_owned(),
        source,
    };
    if let Ok(meta) = std::fs::symlink_metadata(link)
        && !meta.file_type().is_symlink()
    {
        return Err(err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            "a file that is not a symbolic link is in the way",
        )));
    }
    // Made aside and renamed over the old one, so a reader never finds the
    // path missing while the board is plugged in.
    let mut tmp = link.as_os_str().to_owned();
    tmp.push(".new");
    let tmp = PathBuf::from(tmp);
    let _ = std::fs::remove_file(&tmp);
    symlink(device, &tmp).map_err(err)?;
    std::fs::rename(&tmp, link).map_err(err)
}

#[cfg(unix)]
fn symlink(target: &str, link: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(not(unix))]
fn symlink(_target: &str, _link: &Path) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "links to pseudo-terminals need a Unix system",
    ))
}

fn remove_link(link: &Path) {
    if std::fs::symlink_metadata(link).is_ok_and(|m| m.file_type().is_symlink()) {
        let _ = std::fs::remove_file(link);
    }
}

struct Pty {
    master: serialport::TTYPort,
    /// Held open so that the master never reads end-of-file between two
    /// readers, as a USB board stays present when a program closes it.
    _slave: serialport::TTYPort,
    device: String,
}

impl Pty {
    fn open() -> Result<Pty, serialport::Error> {
        let (master, slave) = serialport::TTYPort::pair()?;
        let device = serialport::SerialPort::name(&slave).unwrap_or_default();
        Ok(Pty {
            master,
            _slave: slave,
            device,
        })
    }
}

struct Runner {
    steps: Vec<Step>,
    emulator: Box<dyn Emulator>,
    pty: Option<Pty>,
    device: Arc<Mutex<String>>,
    stop: Arc<AtomicBool>,
    report: VirtualReport,
    options: VirtualOptions,
    /// Script time of the board.
    now: Millis,
    /// When script time 0 was (real time), in real-time play.
    origin: Instant,
    /// Waiting for a host before playing on.
    paused: bool,
    /// A write found nobody reading: drop output until the host speaks.
    host_gone: bool,
    out: Vec<u8>,
}

/// How long one wait for the host lasts before the loop looks around.
const POLL: Duration = Duration::from_millis(20);

impl Runner {
    fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn log(&self, text: impl std::fmt::Display) {
        if self.options.log {
            eprintln!("virtual board [{} ms]: {text}", self.now);
        }
    }

    fn io_err(&self, source: io::Error) -> VirtualError {
        VirtualError::Io {
            device: self
                .pty
                .as_ref()
                .map(|p| p.device.clone())
                .unwrap_or_default(),
            source,
        }
    }

    fn run(mut self) -> Result<VirtualReport, VirtualError> {
        let result = self.play();
        // The cable goes with the board.
        self.pty = None;
        if let Some(link) = &self.options.link {
            remove_link(link);
        }
        result.map(|()| self.report)
    }

    fn play(&mut self) -> Result<(), VirtualError> {
        let mut next = 0;
        while !self.stopped() {
            if self.paused {
                if self.pty.is_some() && self.emulator.ready() {
                    self.paused = false;
                    self.set_origin();
                    self.log("the host is connected: playing");
                } else {
                    self.serve(POLL)?;
                }
                continue;
            }
            let Some(step) = self.steps.get(next).cloned() else {
                if next == self.steps.len() {
                    self.log("the script has been played");
                    next += 1;
                }
                if self.options.lockstep.is_some() {
                    return self.settle();
                }
                if !self.options.linger {
                    // Let the host read the last bytes.
                    return self.serve(Duration::from_millis(200));
                }
                self.serve(POLL)?;
                continue;
            };
            if step.at > self.now {
                if let Some(lock) = self.options.lockstep.clone() {
                    self.settle()?;
                    lock.update(|c| c.now = step.at);
                } else {
                    let due = self.origin + real(step.at, self.options.speed);
                    let now = Instant::now();
                    if now < due {
                        self.serve((due - now).min(POLL))?;
                        continue;
                    }
                }
                self.now = step.at;
            }
            self.apply(&step.action)?;
            next += 1;
        }
        Ok(())
    }

    fn set_origin(&mut self) {
        self.origin = Instant::now()
            .checked_sub(real(self.now, self.options.speed))
            .unwrap_or_else(Instant::now);
    }

    fn apply(&mut self, action: &Action) -> Result<(), VirtualError> {
        match action {
            Action::Unplug => {
                if self.pty.is_some() {
                    if self.options.lockstep.is_some() {
                        self.settle()?;
                    }
                    self.pty = None;
                    self.emulator.unplugged();
                    if let Some(lock) = &self.options.lockstep {
                        // What the host wrote and the board had not read
                        // yet went with the cable.
                        lock.update(|c| c.board_read = c.from_host);
                    }
                    if let Some(link) = &self.options.link {
                        remove_link(link);
                    }
                    self.log("cable pulled");
                }
            }
            Action::Replug => {
                if self.pty.is_none() {
                    let pty = Pty::open()?;
                    if let Some(link) = &self.options.link {
                        point_link(link, &pty.device)?;
                    }
                    self.log(format_args!("plugged in again as {}", pty.device));
                    *self.device.lock().unwrap_or_else(|e| e.into_inner()) = pty.device.clone();
                    self.pty = Some(pty);
                    self.emulator.power_up(self.now);
                    self.host_gone = false;
                    // In lockstep the reader must catch up before the
                    // script goes on, or its catching up would not be
                    // deterministic.
                    self.paused = self.options.lockstep.is_some();
                }
            }
            Action::OffWire(e) => {
                self.log(format_args!(
                    "not on the wire (enter it at the arbiter's console): {}",
                    crate::script::format_event(e)
                ));
                self.report.off_wire.push(TimedEvent {
                    at: self.now,
                    event: e.clone(),
                });
            }
            other => {
                let mut out = std::mem::take(&mut self.out);
                self.emulator.step(self.now, other, &mut out);
                self.out = out;
                self.flush()?;
            }
        }
        Ok(())
    }

    /// Reads what the host sent, waiting up to `wait`, and answers it.
    fn serve(&mut self, wait: Duration) -> Result<(), VirtualError> {
        let Some(pty) = &mut self.pty else {
            std::thread::sleep(wait.min(POLL));
            return Ok(());
        };
        let mut buf = [0u8; 1024];
        let read = serialport::SerialPort::set_timeout(&mut pty.master, wait)
            .map_err(io::Error::from)
            .and_then(|()| pty.master.read(&mut buf));
        let n = match read {
            Ok(n) => n,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::TimedOut
                        | io::ErrorKind::WouldBlock
                        | io::ErrorKind::Interrupted
                ) =>
            {
                return Ok(());
            }
            Err(e) => return Err(self.io_err(e)),
        };
        self.report.bytes_read += n as u64;
        if let Some(lock) = &self.options.lockstep {
            lock.update(|c| c.board_read += n as u64);
        }
        self.host_gone = false;
        let mut out = std::mem::take(&mut self.out);
        self.emulator.host(self.now, &buf[..n], &mut out);
        self.out = out;
        self.flush()
    }

    /// Writes the pending output, if a host can get it.
    fn flush(&mut self) -> Result<(), VirtualError> {
        if self.out.is_empty() {
            return Ok(());
        }
        let Some(pty) = &mut self.pty else {
            self.out.clear();
            return Ok(());
        };
        if self.host_gone {
            self.report.bytes_dropped += self.out.len() as u64;
            self.out.clear();
            return Ok(());
        }
        let _ = serialport::SerialPort::set_timeout(&mut pty.master, POLL);
        let deadline = Instant::now() + WRITE_PATIENCE;
        let mut written = 0;
        let mut failure = None;
        while written < self.out.len() {
            match pty.master.write(&self.out[written..]) {
                Ok(n) => written += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
                    ) =>
                {
                    if Instant::now() >= deadline {
                        break;
                    }
                }
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        let dropped = self.out.len() - written;
        self.out.clear();
        self.report.bytes_sent += written as u64;
        if let Some(lock) = &self.options.lockstep {
            lock.update(|c| c.to_host += written as u64);
        }
        if let Some(e) = failure {
            return Err(self.io_err(e));
        }
        if dropped > 0 {
            self.report.bytes_dropped += dropped as u64;
            self.host_gone = true;
            self.log(format_args!(
                "nobody reads the board: dropped {dropped} bytes"
            ));
        }
        Ok(())
    }

    /// Lockstep: waits until the reader handled everything the board wrote
    /// and the board read everything the reader wrote.
    fn settle(&mut self) -> Result<(), VirtualError> {
        let Some(lock) = self.options.lockstep.clone() else {
            return Ok(());
        };
        let deadline = Instant::now() + STALL;
        let quiet = |c: &Counters| c.from_host <= c.board_read && c.host_received >= c.to_host;
        loop {
            if self.pty.is_none() || self.stopped() {
                return Ok(());
            }
            let c = lock.wait_for(POLL, |c| quiet(c) || c.from_host > c.board_read);
            if quiet(&c) {
                return Ok(());
            }
            if c.from_host > c.board_read {
                self.serve(POLL)?;
            } else if Instant::now() >= deadline {
                return Err(VirtualError::HostStalled { at: self.now });
            }
        }
    }
}

fn real(script_ms: Millis, speed: f64) -> Duration {
    Duration::from_secs_f64(script_ms as f64 / 1000.0 / speed)
}

/// What the live path would deliver from a virtual board, computed in
/// process without a pseudo-terminal: the board's bytes go straight into
/// the host's [`Link`](crate::transport::Link) and its answers straight
/// back. Returns the board events, stamped with the script time of the
/// bytes that carried them, and the off-wire events.
pub fn play_in_process(
    events: &[TimedEvent],
    protocol: Protocol,
    options: &PlanOptions,
) -> Result<(Vec<TimedEvent>, Vec<TimedEvent>), VirtualError> {
    let mut emulator = emulator(events, protocol, options)?;
    let mut link = crate::transport::Link::new(protocol, Default::default());
    let mut wire = Vec::new();
    let mut off_wire = Vec::new();
    let mut plugged = true;
    let mut now = 0;
    let mut to_host = Vec::new();
    // The host's start-up, and the conversation it starts.
    let mut to_board = link.connected();
    converse(
        &mut *emulator,
        &mut link,
        now,
        &mut to_board,
        &mut to_host,
        &mut wire,
    );
    for step in plan(events, protocol, options) {
        now = step.at;
        match &step.action {
            Action::Unplug => {
                plugged = false;
                emulator.unplugged();
            }
            Action::Replug => {
                plugged = true;
                emulator.power_up(now);
                to_board = link.connected();
            }
            Action::OffWire(e) => off_wire.push(TimedEvent {
                at: now,
                event: e.clone(),
            }),
            other => emulator.step(now, other, &mut to_host),
        }
        if plugged {
            converse(
                &mut *emulator,
                &mut link,
                now,
                &mut to_board,
                &mut to_host,
                &mut wire,
            );
        } else {
            to_host.clear();
        }
    }
    Ok((wire, off_wire))
}

/// Passes bytes both ways until both sides are quiet.
fn converse(
    emulator: &mut dyn Emulator,
    link: &mut crate::transport::Link,
    at: Millis,
    to_board: &mut Vec<u8>,
    to_host: &mut Vec<u8>,
    wire: &mut Vec<TimedEvent>,
) {
    let mut out = crate::transport::LinkOutput::default();
    while !to_board.is_empty() || !to_host.is_empty() {
        if !to_board.is_empty() {
            let bytes = std::mem::take(to_board);
            emulator.host(at, &bytes, to_host);
        }
        if !to_host.is_empty() {
            let bytes = std::mem::take(to_host);
            out.clear();
            link.feed(&bytes, at, &mut out);
            wire.append(&mut out.events);
            to_board.append(&mut out.send);
        }
    }
}
