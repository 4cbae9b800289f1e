//! Byte captures of a board session: the writer behind `--record` and the
//! reader behind `eboard replay --format dgt|millennium|certabo`.
//!
//! A capture is text, one line per read of the serial port:
//!
//! ```text
//! # eboard capture 1
//! # protocol dgt
//! # port /dev/ttyACM0
//! 0 open /dev/ttyACM0
//! 0 sent 4b 4d
//! 41 93 00 05 01 08
//! 12873 8e 00 05 34 00
//! 60210 close read failed: Broken pipe
//! ```
//!
//! `<ms> <hex bytes>` is what one read returned, at that many milliseconds
//! since the session began; `open` marks a (re)connection, where the live
//! reader starts its decoder afresh; `sent` is what eboard wrote to the
//! board and `close` why the port was lost (both for the reader of a bug
//! report; replay skips them). `#` lines are comments; the first line
//! identifies the format. A file without that first line is taken as raw
//! board-to-host bytes without timing.

use std::io::{self, Write};

use serde::Serialize;

use super::{
    Protocol,
    link::{Link, LinkOptions, LinkOutput},
};
use crate::{
    engine::{Engine, EngineConfig, EngineError},
    event::{Millis, TimedEvent},
    script::DEFAULT_GAP_MS,
};

/// The first line of a timestamped capture.
pub const HEADER: &str = "# eboard capture 1";

/// What `eboard replay` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ReplayFormat {
    /// A board script (the default).
    #[default]
    Script,
    /// A capture of a DGT board's bytes.
    Dgt,
    /// A capture of a Millennium ChessLink's bytes.
    Millennium,
    /// A capture of a Certabo or Sentio board's bytes.
    Certabo,
}

impl ReplayFormat {
    /// The board family, for a byte capture.
    pub fn protocol(self) -> Option<Protocol> {
        match self {
            ReplayFormat::Script => None,
            ReplayFormat::Dgt => Some(Protocol::Dgt),
            ReplayFormat::Millennium => Some(Protocol::Millennium),
            ReplayFormat::Certabo => Some(Protocol::Certabo),
        }
    }
}

/// Writes a capture as the session goes.
#[derive(Debug)]
pub struct CaptureWriter<W: Write> {
    out: W,
}

impl<W: Write> CaptureWriter<W> {
    /// Starts a capture: writes the header.
    pub fn new(mut out: W, protocol: Protocol, port: &str) -> io::Result<CaptureWriter<W>> {
        writeln!(out, "{HEADER}")?;
        writeln!(out, "# protocol {protocol}")?;
        writeln!(out, "# port {}", one_line(port))?;
        writeln!(
            out,
            "# <ms> <bytes from the board> | <ms> open <port> | <ms> sent <bytes to the board> | <ms> close <reason>"
        )?;
        out.flush()?;
        Ok(CaptureWriter { out })
    }

    /// Bytes one read returned.
    pub fn data(&mut self, at: Millis, bytes: &[u8]) -> io::Result<()> {
        write!(self.out, "{at}")?;
        write_hex(&mut self.out, bytes)?;
        writeln!(self.out)?;
        self.out.flush()
    }

    /// Bytes sent to the board.
    pub fn sent(&mut self, at: Millis, bytes: &[u8]) -> io::Result<()> {
        write!(self.out, "{at} sent")?;
        write_hex(&mut self.out, bytes)?;
        writeln!(self.out)?;
        self.out.flush()
    }

    /// The port was (re)opened.
    pub fn open(&mut self, at: Millis, port: &str) -> io::Result<()> {
        writeln!(self.out, "{at} open {}", one_line(port))?;
        self.out.flush()
    }

    /// The port was lost.
    pub fn close(&mut self, at: Millis, reason: &str) -> io::Result<()> {
        writeln!(self.out, "{at} close {}", one_line(reason))?;
        self.out.flush()
    }
}

fn one_line(text: &str) -> String {
    text.replace(['\n', '\r'], " ")
}

fn write_hex(out: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
    for b in bytes {
        write!(out, " {b:02x}")?;
    }
    Ok(())
}

/// Where in a capture something is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// A line of a timestamped capture (1-based).
    Line(usize),
    /// A byte offset in a raw capture (0-based).
    Offset(usize),
}

impl std::fmt::Display for Place {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::Line(n) => write!(f, "{n}"),
            Place::Offset(n) => write!(f, "byte {n}"),
        }
    }
}

/// Why a capture could not be replayed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CaptureError {
    /// A malformed line.
    #[error("{file}:{line}: {message}")]
    Syntax {
        file: String,
        /// The 1-based line.
        line: usize,
        /// What is wrong and what was expected.
        message: String,
    },
    /// The capture says it was recorded from another board family.
    #[error("{file}: recorded from a {recorded} board, but --format {asked} was given")]
    Protocol {
        file: String,
        /// The family in the capture's header.
        recorded: Protocol,
        /// The family asked for.
        asked: Protocol,
    },
    /// Nothing in the file is a message of the board family asked for.
    #[error(
        "{file}: no {protocol} board message in its {bytes} byte(s): not a capture of that board family (check the file and --format)"
    )]
    NoBoardData {
        file: String,
        /// The family asked for.
        protocol: Protocol,
        /// The file's size.
        bytes: usize,
    },
    /// An event the engine cannot apply.
    #[error("{file}:{place}: {source}")]
    Engine {
        file: String,
        /// Where the event's bytes end.
        place: Place,
        /// What is wrong.
        source: EngineError,
    },
}

/// One item of a timestamped capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// Bytes from the board.
    Data(Vec<u8>),
    /// Bytes to the board.
    Sent(Vec<u8>),
    /// The port was (re)opened.
    Open(String),
    /// The port was lost.
    Close(String),
}

/// A line of a timestamped capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureLine {
    /// The 1-based line number.
    pub line: usize,
    /// Milliseconds since the session began.
    pub at: Millis,
    /// What happened.
    pub item: Item,
}

/// A capture as read from a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Capture {
    /// Timestamped lines, with the family named in the header if any.
    Timed {
        /// `# protocol` from the header.
        protocol: Option<Protocol>,
        lines: Vec<CaptureLine>,
    },
    /// Raw bytes without timing.
    Raw(Vec<u8>),
}

/// Whether the bytes are a timestamped capture (they start with [`HEADER`]).
pub fn is_timed(data: &[u8]) -> bool {
    let data = data.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(data);
    data.starts_with(HEADER.as_bytes())
}

/// Reads a capture file's content.
pub fn parse_capture(file: &str, data: &[u8]) -> Result<Capture, CaptureError> {
    if !is_timed(data) {
        return Ok(Capture::Raw(data.to_vec()));
    }
    let text = String::from_utf8_lossy(data);
    let mut lines = Vec::new();
    let mut protocol = None;
    let mut last: Millis = 0;
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let err = |message: String| CaptureError::Syntax {
            file: file.to_owned(),
            line,
            message,
        };
        let content = raw.trim();
        if content.is_empty() {
            continue;
        }
        if let Some(comment) = content.strip_prefix('#') {
            if let Some(name) = comment.trim().strip_prefix("protocol ") {
                protocol = Some(name.trim().parse::<Protocol>().map_err(err)?);
            }
            continue;
        }
        let (stamp, rest) = content.split_once(' ').unwrap_or((content, ""));
        let at: Millis = stamp.parse().map_err(|_| {
            err(format!(
                "expected a time in milliseconds at the start of the line, found '{stamp}'"
            ))
        })?;
        if at < last {
            return Err(err(format!(
                "time {at} ms is earlier than the previous line's {last} ms"
            )));
        }
        last = at;
        let rest = rest.trim();
        let (word, args) = rest.split_once(' ').unwrap_or((rest, ""));
        let item = match word {
            "open" => Item::Open(args.trim().to_owned()),
            "close" => Item::Close(args.trim().to_owned()),
            "sent" => Item::Sent(parse_hex(args).map_err(err)?),
            _ => Item::Data(parse_hex(rest).map_err(err)?),
        };
        lines.push(CaptureLine { line, at, item });
    }
    Ok(Capture::Timed { protocol, lines })
}

fn parse_hex(text: &str) -> Result<Vec<u8>, String> {
    text.split_whitespace()
        .map(|tok| {
            if tok.len() == 2 {
                u8::from_str_radix(tok, 16).ok()
            } else {
                None
            }
            .ok_or_else(|| {
                format!(
                    "expected bytes as two hex digits each ('8e 00 05'), or open/sent/close, found '{tok}'"
                )
            })
        })
        .collect()
}

/// A board event decoded from a capture, with where its bytes ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapturedEvent {
    /// Where the bytes that completed it are.
    pub place: Place,
    pub event: TimedEvent,
}

/// Decodes a capture into board events, as the live reader would have
/// delivered them.
///
/// A timestamped capture gives each event the time of its line. Raw bytes
/// have no timing: each message that carries board events counts as
/// arriving [`DEFAULT_GAP_MS`] after the previous one (the first at 0), the
/// same default as a board-script line without a timestamp.
pub fn capture_events(
    file: &str,
    data: &[u8],
    protocol: Protocol,
    options: LinkOptions,
) -> Result<Vec<CapturedEvent>, CaptureError> {
    let mut link = Link::new(protocol, options);
    let mut out = LinkOutput::default();
    let mut events = Vec::new();
    match parse_capture(file, data)? {
        Capture::Timed {
            protocol: recorded,
            lines,
        } => {
            if let Some(recorded) = recorded
                && recorded != protocol
            {
                return Err(CaptureError::Protocol {
                    file: file.to_owned(),
                    recorded,
                    asked: protocol,
                });
            }
            for l in lines {
                match &l.item {
                    Item::Open(_) => {
                        link.connected();
                    }
                    Item::Data(bytes) => {
                        out.clear();
                        link.feed(bytes, l.at, &mut out);
                        events.extend(out.events.drain(..).map(|event| CapturedEvent {
                            place: Place::Line(l.line),
                            event,
                        }));
                    }
                    Item::Sent(_) | Item::Close(_) => {}
                }
            }
        }
        Capture::Raw(bytes) => {
            if protocol == Protocol::Millennium && bytes.iter().all(|b| b & 0x80 == 0) {
                // Recorded from a port opened 7-O-1: no parity bits to check.
                link = link.without_parity_check();
            }
            let mut at: Option<Millis> = None;
            // Byte by byte, so that each message is seen on its own.
            for (offset, b) in bytes.iter().enumerate() {
                out.clear();
                link.feed(std::slice::from_ref(b), at.unwrap_or(0), &mut out);
                if out.events.is_empty() {
                    continue;
                }
                let t = at.map_or(0, |t| t + DEFAULT_GAP_MS);
                at = Some(t);
                events.extend(out.events.drain(..).map(|e| CapturedEvent {
                    place: Place::Offset(offset),
                    event: TimedEvent {
                        at: t,
                        event: e.event,
                    },
                }));
            }
        }
    }
    Ok(events)
}

/// Replays a capture through the engine and returns the engine at its end.
pub fn replay_capture(
    file: &str,
    data: &[u8],
    protocol: Protocol,
    options: LinkOptions,
    config: EngineConfig,
) -> Result<Engine, CaptureError> {
    let events = capture_events(file, data, protocol, options)?;
    // An empty file or other bytes would replay as an empty game.
    if events.is_empty() {
        return Err(CaptureError::NoBoardData {
            file: file.to_owned(),
            protocol,
            bytes: data.len(),
        });
    }
    let mut engine = Engine::new(config);
    for e in &events {
        engine
            .push(&e.event)
            .map_err(|source| CaptureError::Engine {
                file: file.to_owned(),
                place: e.place,
                source,
            })?;
        engine.drain_events();
    }
    engine.finish();
    Ok(engine)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::event::BoardEvent;
    use crate::protocol::dgt;
    use shakmaty::Square;

    /// Issue 38, fault 8: an empty file or random bytes is no capture of
    /// any family: an error, not an empty game.
    #[test]
    fn empty_or_random_bytes_are_no_capture() {
        use rand::{RngCore, SeedableRng};
        let mut random = vec![0u8; 4096];
        rand_chacha::ChaCha8Rng::seed_from_u64(38).fill_bytes(&mut random);
        for protocol in [Protocol::Dgt, Protocol::Millennium, Protocol::Certabo] {
            for data in [&[][..], &random[..]] {
                let e = replay_capture("x", data, protocol, Default::default(), Default::default());
                assert!(
                    matches!(e, Err(CaptureError::NoBoardData { .. })),
                    "{protocol} {} bytes",
                    data.len()
                );
            }
        }
    }

    #[test]
    fn writer_and_parser_agree() {
        let mut buf = Vec::new();
        let mut w = CaptureWriter::new(&mut buf, Protocol::Dgt, "/dev/ttyACM0").unwrap();
        w.open(0, "/dev/ttyACM0").unwrap();
        w.sent(0, &[0x4b, 0x4d]).unwrap();
        w.data(41, &[0x93, 0x00, 0x05, 0x01, 0x08]).unwrap();
        w.close(900, "read failed:\nBroken pipe").unwrap();
        let text = String::from_utf8(buf.clone()).unwrap();
        assert!(text.starts_with(HEADER));
        assert!(text.contains("\n41 93 00 05 01 08\n"));
        let Capture::Timed { protocol, lines } = parse_capture("c", &buf).unwrap() else {
            panic!("not timed");
        };
        assert_eq!(protocol, Some(Protocol::Dgt));
        let items: Vec<_> = lines.iter().map(|l| (l.at, l.item.clone())).collect();
        assert_eq!(
            items,
            vec![
                (0, Item::Open("/dev/ttyACM0".into())),
                (0, Item::Sent(vec![0x4b, 0x4d])),
                (41, Item::Data(vec![0x93, 0x00, 0x05, 0x01, 0x08])),
                (900, Item::Close("read failed: Broken pipe".into())),
            ]
        );
    }

    #[test]
    fn bad_lines_name_file_and_line() {
        let text = format!("{HEADER}\n0 open x\n12 8e 0g\n");
        let err = parse_capture("cap.txt", text.as_bytes()).unwrap_err();
        assert!(err.to_string().starts_with("cap.txt:3: "), "{err}");
        let text = format!("{HEADER}\n50 86\n12 86\n");
        let err = parse_capture("cap.txt", text.as_bytes()).unwrap_err();
        assert!(err.to_string().starts_with("cap.txt:3: "), "{err}");
        let text = format!("{HEADER}\n# protocol millennium\n");
        let err = capture_events(
            "cap.txt",
            text.as_bytes(),
            Protocol::Dgt,
            LinkOptions::default(),
        )
        .unwrap_err();
        assert!(matches!(err, CaptureError::Protocol { .. }), "{err}");
    }

    #[test]
    fn raw_bytes_get_the_default_gap_per_message() {
        let mut bytes = Vec::new();
        let start = crate::event::Scan::from_board(&shakmaty::Board::default(), true);
        dgt::encode_dump(&dgt::scan_codes(&start).unwrap(), &mut bytes);
        dgt::encode_version(1, 8, &mut bytes);
        dgt::encode_field_update(Square::E2, dgt::PieceCode::Empty, &mut bytes);
        dgt::encode_field_update(
            Square::E4,
            dgt::PieceCode::Piece(shakmaty::Piece {
                color: shakmaty::Color::White,
                role: shakmaty::Role::Pawn,
            }),
            &mut bytes,
        );
        let events = capture_events("raw", &bytes, Protocol::Dgt, LinkOptions::default()).unwrap();
        let times: Vec<_> = events.iter().map(|e| e.event.at).collect();
        // The version reply carries no board event and takes no time.
        assert_eq!(times, vec![0, 250, 500]);
        assert_eq!(events[1].event.event, BoardEvent::Lift(Square::E2));
        assert_eq!(events[2].place, Place::Offset(bytes.len() - 1));
    }

    proptest! {
        #[test]
        fn any_file_is_read_or_refused_without_panic(
            body in proptest::collection::vec(any::<u8>(), 0..300),
            text in "[0-9a-z #\n]{0,200}",
            timed in any::<bool>(),
            family in 0usize..3,
        ) {
            let protocol = [Protocol::Dgt, Protocol::Millennium, Protocol::Certabo][family];
            let mut data = Vec::new();
            if timed {
                data.extend_from_slice(HEADER.as_bytes());
                data.push(b'\n');
                data.extend_from_slice(text.as_bytes());
            }
            data.extend_from_slice(&body);
            let _ = replay_capture("f", &data, protocol, LinkOptions::default(), EngineConfig::default());
        }
    }
}
