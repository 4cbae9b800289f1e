//! Which board family answers on a serial port.
//!
//! A port is asked only what reads: it is listened to at 38,400 baud
//! (Certabo and Sentio boards stream their scans by themselves, and a
//! Millennium board reports its scans in its factory setting), then asked
//! for a DGT board's version at 9,600 baud (0x4D, answered by a version
//! message 0x93), then for a Millennium board's version at 38,400 baud
//! (`V` with its block check, odd parity, answered by `v`). No command that
//! changes a board's state, mode or memory is ever sent. What came back is
//! judged by the families' own decoders.

use std::{
    io,
    time::{Duration, Instant},
};

use super::Protocol;
use crate::protocol::{
    Decoded, Decoder, certabo::CertaboDecoder, dgt::DgtDecoder, millennium,
    millennium::MillenniumDecoder,
};

/// How long a port may stay silent, or speak another family's bytes,
/// before the arbiter is told (`board_silent`, `wrong_family`).
pub const SILENT_AFTER: Duration = Duration::from_secs(10);

/// How long each step of [`ask`] listens.
const LISTEN: Duration = Duration::from_millis(800);

/// How long [`ask`] takes when nothing answers: a silent port is asked
/// this long before [`SILENT_AFTER`], so that its alert comes on time.
pub const ASK_TIME: Duration = Duration::from_millis(3 * 800);

/// The most bytes kept of what a port said, to judge it and to quote it.
const KEEP: usize = 4096;

/// The DGT board's version request (`DGT_SEND_VERSION`): it only reads.
const DGT_VERSION_REQUEST: u8 = 0x4D;

/// The alert raised when a port gives no bytes, or cannot be opened.
pub const BOARD_SILENT: &str = "board_silent";
/// The alert raised when a port speaks another family than configured.
pub const WRONG_FAMILY: &str = "wrong_family";

/// The family whose decoder makes sense of `bytes`: the one that decodes
/// the most messages from them, if one decodes more than any other.
pub fn identify(bytes: &[u8]) -> Option<Protocol> {
    let count = |decoder: &mut dyn Decoder| {
        let mut out = Vec::new();
        decoder.feed(bytes, &mut out);
        out.iter()
            .filter(|d| !matches!(d, Decoded::Error(_)))
            .count()
    };
    let lenient = millennium::Config {
        check_parity: false,
        ..millennium::Config::default()
    };
    let counts = [
        (Protocol::Dgt, count(&mut DgtDecoder::default())),
        (
            Protocol::Millennium,
            count(&mut MillenniumDecoder::new(lenient)),
        ),
        (Protocol::Certabo, count(&mut CertaboDecoder::default())),
    ];
    let best = counts.iter().map(|c| c.1).max().unwrap_or(0);
    let mut winners = counts.iter().filter(|c| c.1 == best && best > 0);
    match (winners.next(), winners.next()) {
        (Some(&(protocol, _)), None) => Some(protocol),
        _ => None,
    }
}

/// What the bytes of a port were, in words for an alert: none, or the
/// first few in hex.
pub fn describe(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "no bytes".to_owned();
    }
    let head: Vec<String> = bytes.iter().take(12).map(|b| format!("{b:02x}")).collect();
    let more = if bytes.len() > 12 { " ..." } else { "" };
    format!("{} byte(s): {}{more}", bytes.len(), head.join(" "))
}

/// A family's name for people.
pub fn family_name(protocol: Protocol) -> &'static str {
    match protocol {
        Protocol::Dgt => "a DGT board",
        Protocol::Millennium => "a Millennium ChessLink",
        Protocol::Certabo => "a Certabo or Sentio board",
    }
}

/// What [`ask`] found on a port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// This family answered.
    Family(Protocol),
    /// Nothing any family sends came back; these bytes did.
    Nothing(Vec<u8>),
}

/// Asks an open port which family it is, in the order the module
/// describes, for about three listening periods; stops early when
/// `stopped` says so. The port is left at 38,400 baud.
pub fn ask(
    port: &mut dyn serialport::SerialPort,
    stopped: &dyn Fn() -> bool,
) -> io::Result<Answer> {
    let mut seen = Vec::new();
    speed(port, 38_400);
    if let Some(found) = listen(port, &mut seen, stopped)? {
        return Ok(Answer::Family(found));
    }
    speed(port, 9_600);
    port.write_all(&[DGT_VERSION_REQUEST])?;
    port.flush()?;
    if let Some(found) = listen(port, &mut seen, stopped)? {
        return Ok(Answer::Family(found));
    }
    speed(port, 38_400);
    let mut request = Vec::new();
    millennium::Command::Version.encode(true, &mut request);
    port.write_all(&request)?;
    port.flush()?;
    if let Some(found) = listen(port, &mut seen, stopped)? {
        return Ok(Answer::Family(found));
    }
    Ok(Answer::Nothing(seen))
}

/// Opens `name` for [`ask`]: 8N1 at 38,400 baud, DTR and RTS raised (some
/// Certabo bridges send nothing without them).
pub fn open(name: &str) -> Result<Box<dyn serialport::SerialPort>, serialport::Error> {
    let mut port = serialport::new(name, 38_400)
        .data_bits(serialport::DataBits::Eight)
        .parity(serialport::Parity::None)
        .stop_bits(serialport::StopBits::One)
        .flow_control(serialport::FlowControl::None)
        .timeout(Duration::from_millis(50))
        .open()?;
    // A pseudo-terminal (a virtual board) has no modem lines.
    let _ = port.write_data_terminal_ready(true);
    let _ = port.write_request_to_send(true);
    Ok(port)
}

/// Sets the line speed; a pseudo-terminal (a virtual board) has none, and
/// refuses: it carries the bytes at any speed.
pub fn speed(port: &mut dyn serialport::SerialPort, baud: u32) {
    let _ = port.set_baud_rate(baud);
}

/// Asks the port `name` which family it is, for `eboard ports`: the
/// family's name, `nothing`, or why the port could not be asked (a port
/// another program holds is not disturbed: it cannot be opened).
pub fn answers(name: &str) -> String {
    let asked = open(name)
        .map_err(|e| e.to_string())
        .and_then(|mut port| ask(port.as_mut(), &|| false).map_err(|e| e.to_string()));
    match asked {
        Ok(Answer::Family(p)) => p.as_str().to_owned(),
        Ok(Answer::Nothing(_)) => "nothing".to_owned(),
        Err(e) => format!("not asked ({e})"),
    }
}

/// Reads for [`LISTEN`], adding to `seen`; the family once the bytes
/// name one.
fn listen(
    port: &mut dyn serialport::SerialPort,
    seen: &mut Vec<u8>,
    stopped: &dyn Fn() -> bool,
) -> io::Result<Option<Protocol>> {
    let until = Instant::now() + LISTEN;
    let mut buf = [0u8; 512];
    let start = seen.len();
    while Instant::now() < until && !stopped() {
        match port.read(&mut buf) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the port closed",
                ));
            }
            Ok(n) => {
                let room = KEEP.saturating_sub(seen.len());
                seen.extend_from_slice(&buf[..n.min(room)]);
                // Judge what this step brought: an answer to this step's
                // request, not a mix of baud rates.
                if let Some(found) = identify(&seen[start..]) {
                    return Ok(Some(found));
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
                ) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(None)
}

/// Watches what a port said since it was opened, for a reader whose family
/// is named: [`Verdict`] once [`SILENT_AFTER`] passed without a message of
/// that family.
#[derive(Debug)]
pub struct Watch {
    since: Instant,
    seen: Vec<u8>,
    answered: bool,
    judged: bool,
}

/// What a [`Watch`] concluded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Nothing came.
    Silent,
    /// Bytes of another family came (`None`: bytes no family sends).
    Other(Option<Protocol>, Vec<u8>),
}

impl Watch {
    /// Starts watching a port just opened.
    pub fn new(now: Instant) -> Watch {
        Watch {
            since: now,
            seen: Vec::new(),
            answered: false,
            judged: false,
        }
    }

    /// Notes bytes read, and whether the reader made events of them.
    pub fn read(&mut self, bytes: &[u8], events: bool) {
        let room = KEEP.saturating_sub(self.seen.len());
        self.seen.extend_from_slice(&bytes[..bytes.len().min(room)]);
        self.answered |= events;
    }

    /// The bytes seen so far (at most a few KiB).
    pub fn seen(&self) -> &[u8] {
        &self.seen
    }

    /// Once, when [`SILENT_AFTER`] has passed and the board has not
    /// answered as `family`: what it did instead. A port that sent nothing
    /// is judged [`ASK_TIME`] earlier, for the reader to ask it.
    pub fn due(&mut self, now: Instant, family: Protocol) -> Option<Verdict> {
        let wait = match self.seen.is_empty() {
            true => SILENT_AFTER - ASK_TIME,
            false => SILENT_AFTER,
        };
        if self.judged || self.answered || now - self.since < wait {
            return None;
        }
        self.judged = true;
        if identify(&self.seen) == Some(family) {
            self.answered = true;
            return None;
        }
        Some(match self.seen.is_empty() {
            true => Verdict::Silent,
            false => Verdict::Other(identify(&self.seen), self.seen.clone()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Scan;
    use crate::protocol::dgt;

    #[test]
    fn each_family_is_told_from_its_own_bytes() {
        let mut dgt_version = Vec::new();
        dgt::encode_version(1, 8, &mut dgt_version);
        assert_eq!(identify(&dgt_version), Some(Protocol::Dgt));

        let mut reply = Vec::new();
        millennium::encode_reply(
            &millennium::Message::Version { major: 1, minor: 2 },
            true,
            &mut reply,
        );
        assert_eq!(identify(&reply), Some(Protocol::Millennium));
        let mut status = Vec::new();
        let start = Scan::from_board(&shakmaty::Board::default(), true);
        millennium::encode_status(&start, true, &mut status).unwrap();
        assert_eq!(identify(&status), Some(Protocol::Millennium));

        // A Sentio scan of the start position: one occupancy byte per rank.
        let sentio = b":255 255 0 0 0 0 255 255\r\nL\r\n";
        assert_eq!(identify(sentio), Some(Protocol::Certabo));

        assert_eq!(identify(b""), None);
        assert_eq!(identify(b"hello, world\r\n"), None);
    }

    #[test]
    fn a_named_family_that_answers_is_never_judged() {
        let t0 = Instant::now();
        let mut w = Watch::new(t0);
        w.read(b"xyz", true);
        assert_eq!(w.due(t0 + SILENT_AFTER * 2, Protocol::Dgt), None);
    }

    #[test]
    fn silence_and_other_families_are_judged_once_after_ten_seconds() {
        let t0 = Instant::now();
        let mut w = Watch::new(t0);
        assert_eq!(w.due(t0 + Duration::from_secs(7), Protocol::Dgt), None);
        assert_eq!(
            w.due(t0 + SILENT_AFTER - ASK_TIME, Protocol::Dgt),
            Some(Verdict::Silent)
        );
        assert_eq!(w.due(t0 + SILENT_AFTER * 2, Protocol::Dgt), None);

        let mut w = Watch::new(t0);
        let sentio = b":255 255 0 0 0 0 255 255\r\n";
        w.read(sentio, false);
        assert_eq!(w.due(t0 + Duration::from_secs(9), Protocol::Dgt), None);
        assert_eq!(
            w.due(t0 + SILENT_AFTER, Protocol::Dgt),
            Some(Verdict::Other(Some(Protocol::Certabo), sentio.to_vec()))
        );

        // Its own family's bytes without events yet (a board still being
        // calibrated) are an answer.
        let mut w = Watch::new(t0);
        w.read(sentio, false);
        assert_eq!(w.due(t0 + SILENT_AFTER, Protocol::Certabo), None);
    }

    #[test]
    fn bytes_are_described_briefly() {
        assert_eq!(describe(b""), "no bytes");
        assert_eq!(describe(&[0x93, 0, 5]), "3 byte(s): 93 00 05");
        assert!(describe(&[0u8; 20]).ends_with(" ..."));
    }
}
