//! The per-board journal: the daemon's source of truth.
//!
//! Every input of a board (what the board and its clock reported, what the
//! arbiter did, when the connection came or went) is appended to the board's
//! journal as one JSON line and synced to disk before it is acted on.
//! Everything the daemon shows (moves, alerts, results, the broadcast PGN) is
//! a pure function of the journals: on start the daemon replays them through
//! the engine and continues.
//!
//! One line:
//!
//! ```text
//! {"seq":7,"g":1042,"at":5230,"type":"place","square":"e4","piece":"P"}
//! {"seq":8,"g":1050,"at":5380,"type":"tick"}
//! {"seq":9,"g":1311,"at":5380,"type":"action","action":{"action":"resign","side":"black"}}
//! ```
//!
//! * `seq`: the line's number in this board's journal, from 1, without gaps.
//! * `g`: a number from one counter shared by all boards, increasing in the
//!   order the lines were written; it orders the boards' lines among each
//!   other and names the server-sent events derived from the line
//!   (`<g>.<k>`, see [`super::hub`]).
//! * `at`: the board's time in milliseconds (the script's time for a
//!   simulated board, Unix time for a hardware board).
//! * `type` and its fields: a board event (`setup`, `lift`, `place`,
//!   `board`, `press`, `clock`, `flag`, `resign`, `draw`, `claim`,
//!   `result`, `tag`), `tick` (time passed with no event and the engine read
//!   a settled board state), `action` (an arbiter action, as posted to
//!   `/boards/{id}/actions`) or `connection` (the board's link changed).
//!
//! A line cut short by a crash (the last line, without its newline or not
//! parseable) is dropped with a warning and cut from the file; a line that
//! cannot be read anywhere else is an error naming the file and line.

use std::{
    fs::{File, OpenOptions},
    io::{Seek, SeekFrom, Write},
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};
use shakmaty::{Color, Outcome, Square, fen::Fen, uci::UciMove};

use crate::{
    event::{BoardEvent, ClaimKind, Millis, Seconds, TimedEvent},
    script::parse_scan,
};

use super::action::{Action, Side};

/// One journal line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalLine {
    /// The line's number in the board's journal, from 1.
    pub seq: u64,
    /// The global number: increasing across all boards in writing order.
    pub g: u64,
    /// The board's time (ms).
    pub at: Millis,
    /// What happened.
    #[serde(flatten)]
    pub entry: Entry,
}

/// What a journal line records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Entry {
    /// The game starts from this position.
    Setup {
        /// FEN.
        fen: String,
    },
    /// A piece left the square.
    Lift {
        /// `e2`.
        square: String,
    },
    /// A piece was put on the square.
    Place {
        /// `e4`.
        square: String,
        /// The piece letter (`P`, `n`, ...), on boards that identify pieces.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        piece: Option<String>,
    },
    /// A full scan (FEN placement, `x` for an occupied square of unknown identity).
    Board {
        /// The placement.
        scan: String,
    },
    /// A clock press.
    Press {
        /// Who pressed.
        side: Side,
    },
    /// A clock report.
    Clock {
        /// White's remaining seconds.
        white: Seconds,
        /// Black's remaining seconds.
        black: Seconds,
    },
    /// A flag fell (reported by the clock).
    Flag {
        /// Whose.
        side: Side,
    },
    /// A resignation reported by the board.
    Resign {
        /// Who resigned.
        side: Side,
    },
    /// A draw agreement reported by the board.
    Draw,
    /// A draw claim.
    Claim {
        /// The claimant.
        side: Side,
        /// `threefold` or `fifty`.
        claim: String,
        /// The move the claimant intends to play.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        uci: Option<String>,
    },
    /// A result reported by the board.
    Result {
        /// `1-0`, `0-1`, `1/2-1/2` or `*`.
        result: String,
    },
    /// A PGN tag reported by the board.
    Tag {
        /// Name.
        name: String,
        /// Value.
        value: String,
    },
    /// Time passed to `at` with no event, and the engine read the settled board.
    Tick,
    /// An arbiter action.
    Action {
        /// The action as posted.
        action: Action,
    },
    /// The board's link changed.
    Connection {
        /// The new state.
        state: Connection,
    },
}

/// The state of a board's link.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Connection {
    /// Not started yet.
    #[default]
    Idle,
    /// Events are coming in.
    Connected,
    /// The link was lost.
    Disconnected,
    /// A simulated board played all its events.
    Ended,
}

impl Connection {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Connection::Idle => "idle",
            Connection::Connected => "connected",
            Connection::Disconnected => "disconnected",
            Connection::Ended => "ended",
        }
    }
}

impl Entry {
    /// The journal form of a board event.
    pub fn from_event(event: &BoardEvent) -> Entry {
        let side = Side::from;
        match event {
            BoardEvent::Setup(fen) => Entry::Setup {
                fen: fen.to_string(),
            },
            BoardEvent::Lift(sq) => Entry::Lift {
                square: sq.to_string(),
            },
            BoardEvent::Place(sq, piece) => Entry::Place {
                square: sq.to_string(),
                piece: piece.map(|p| p.char().to_string()),
            },
            BoardEvent::Board(scan) => Entry::Board {
                scan: scan.to_string(),
            },
            BoardEvent::Press(c) => Entry::Press { side: side(*c) },
            BoardEvent::Clock(white, black) => Entry::Clock {
                white: *white,
                black: *black,
            },
            BoardEvent::Flag(c) => Entry::Flag { side: side(*c) },
            BoardEvent::Resign(c) => Entry::Resign { side: side(*c) },
            BoardEvent::Draw => Entry::Draw,
            BoardEvent::Claim(c, kind, mv) => Entry::Claim {
                side: side(*c),
                claim: kind.as_str().to_owned(),
                uci: mv.as_ref().map(|m| m.to_string()),
            },
            BoardEvent::Result(outcome) => Entry::Result {
                result: outcome.as_str().to_owned(),
            },
            BoardEvent::Tag(name, value) => Entry::Tag {
                name: name.clone(),
                value: value.clone(),
            },
        }
    }

    /// The board event this entry records, if it records one.
    pub fn to_event(&self) -> Result<Option<BoardEvent>, String> {
        let square = |s: &str| {
            s.parse::<Square>()
                .map_err(|_| format!("'{s}' is not a square"))
        };
        Ok(Some(match self {
            Entry::Setup { fen } => BoardEvent::Setup(Box::new(
                fen.parse::<Fen>()
                    .map_err(|e| format!("bad FEN '{fen}': {e}"))?,
            )),
            Entry::Lift { square: s } => BoardEvent::Lift(square(s)?),
            Entry::Place { square: s, piece } => {
                let piece = match piece {
                    None => None,
                    Some(p) => {
                        let mut chars = p.chars();
                        match (
                            chars.next().and_then(shakmaty::Piece::from_char),
                            chars.next(),
                        ) {
                            (Some(piece), None) => Some(piece),
                            _ => return Err(format!("'{p}' is not a piece letter")),
                        }
                    }
                };
                BoardEvent::Place(square(s)?, piece)
            }
            Entry::Board { scan } => BoardEvent::Board(Box::new(parse_scan(scan)?)),
            Entry::Press { side } => BoardEvent::Press(Color::from(*side)),
            Entry::Clock { white, black } => BoardEvent::Clock(*white, *black),
            Entry::Flag { side } => BoardEvent::Flag(Color::from(*side)),
            Entry::Resign { side } => BoardEvent::Resign(Color::from(*side)),
            Entry::Draw => BoardEvent::Draw,
            Entry::Claim { side, claim, uci } => {
                let kind = match claim.as_str() {
                    "threefold" => ClaimKind::Threefold,
                    "fifty" => ClaimKind::Fifty,
                    other => return Err(format!("'{other}' is not a claim")),
                };
                let mv = uci
                    .as_ref()
                    .map(|m| {
                        m.parse::<UciMove>()
                            .map_err(|_| format!("'{m}' is not a UCI move"))
                    })
                    .transpose()?;
                BoardEvent::Claim(Color::from(*side), kind, mv)
            }
            Entry::Result { result } => BoardEvent::Result(
                Outcome::from_ascii(result.as_bytes())
                    .map_err(|_| format!("'{result}' is not a result"))?,
            ),
            Entry::Tag { name, value } => BoardEvent::Tag(name.clone(), value.clone()),
            Entry::Tick | Entry::Action { .. } | Entry::Connection { .. } => return Ok(None),
        }))
    }

    /// Whether the entry is an event reported by the board itself (as
    /// opposed to a tick, an action or a connection change).
    pub fn is_board_event(&self) -> bool {
        !matches!(
            self,
            Entry::Tick | Entry::Action { .. } | Entry::Connection { .. }
        )
    }
}

impl JournalLine {
    /// The timed board event the line records, if it records one.
    pub fn timed_event(&self) -> Option<TimedEvent> {
        self.entry
            .to_event()
            .ok()
            .flatten()
            .map(|event| TimedEvent { at: self.at, event })
    }
}

/// A journal that cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// An I/O failure.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The failure.
        source: std::io::Error,
    },
    /// A line that is not a journal line, or out of sequence.
    #[error("{path}:{line}: {message}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// The 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

/// An open journal, positioned for appending.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: File,
}

/// What opening a journal found.
#[derive(Debug)]
pub struct Opened {
    /// The journal, ready to append.
    pub journal: Journal,
    /// Its lines, in order.
    pub lines: Vec<JournalLine>,
    /// A torn last line that was dropped, with its line number.
    pub dropped: Option<(usize, String)>,
}

impl Journal {
    /// Opens (creating it if needed) the journal at `path`, reads its lines
    /// and cuts a torn last line from the file.
    pub fn open(path: &Path) -> Result<Opened, JournalError> {
        let io = |source| JournalError::Io {
            path: path.to_owned(),
            source,
        };
        let created = !path.exists();
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .map_err(io)?;
        if created {
            // The new file's name must survive a crash too.
            if let Some(dir) = path.parent() {
                File::open(dir).and_then(|d| d.sync_all()).map_err(io)?;
            }
        }
        let bytes = std::fs::read(path).map_err(io)?;
        let mut lines = Vec::new();
        let mut good_len = 0usize;
        let mut dropped = None;
        let mut start = 0usize;
        let mut number = 0usize;
        while start < bytes.len() {
            number += 1;
            let end = bytes[start..].iter().position(|&b| b == b'\n');
            let (raw, next) = match end {
                Some(i) => (&bytes[start..start + i], start + i + 1),
                None => (&bytes[start..], bytes.len()),
            };
            let last = next >= bytes.len();
            let parsed = std::str::from_utf8(raw)
                .map_err(|e| e.to_string())
                .and_then(|s| serde_json::from_str::<JournalLine>(s).map_err(|e| e.to_string()))
                .and_then(|line| {
                    line.entry.to_event()?;
                    Ok(line)
                });
            match parsed {
                Ok(line) if end.is_some() => {
                    let expected = lines.len() as u64 + 1;
                    if line.seq != expected {
                        return Err(JournalError::Corrupt {
                            path: path.to_owned(),
                            line: number,
                            message: format!("seq {} where {expected} was expected", line.seq),
                        });
                    }
                    lines.push(line);
                    good_len = next;
                }
                Ok(_) | Err(_) if last => {
                    let text = String::from_utf8_lossy(raw).into_owned();
                    dropped = Some((number, text));
                }
                Err(message) => {
                    return Err(JournalError::Corrupt {
                        path: path.to_owned(),
                        line: number,
                        message,
                    });
                }
                // A line without its newline is always the last one.
                Ok(_) => {
                    return Err(JournalError::Corrupt {
                        path: path.to_owned(),
                        line: number,
                        message: "a line without its end".to_owned(),
                    });
                }
            }
            start = next;
        }
        if good_len < bytes.len() {
            file.set_len(good_len as u64).map_err(io)?;
            file.sync_all().map_err(io)?;
        }
        file.seek(SeekFrom::End(0)).map_err(io)?;
        Ok(Opened {
            journal: Journal {
                path: path.to_owned(),
                file,
            },
            lines,
            dropped,
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends a line and syncs it to disk. Blocking: call it off the async
    /// workers.
    pub fn append(&mut self, line: &JournalLine) -> Result<(), JournalError> {
        let mut text = serde_json::to_string(line).map_err(|e| JournalError::Io {
            path: self.path.clone(),
            source: std::io::Error::other(e),
        })?;
        text.push('\n');
        self.file
            .write_all(text.as_bytes())
            .and_then(|()| self.file.sync_data())
            .map_err(|source| JournalError::Io {
                path: self.path.clone(),
                source,
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(seq: u64, entry: Entry) -> JournalLine {
        JournalLine {
            seq,
            g: seq * 10,
            at: seq * 100,
            entry,
        }
    }

    #[test]
    fn round_trip_and_format() {
        let l = line(
            3,
            Entry::Place {
                square: "e4".into(),
                piece: Some("P".into()),
            },
        );
        let text = serde_json::to_string(&l).unwrap();
        assert_eq!(
            text,
            r#"{"seq":3,"g":30,"at":300,"type":"place","square":"e4","piece":"P"}"#
        );
        assert_eq!(serde_json::from_str::<JournalLine>(&text).unwrap(), l);
        let a = line(
            4,
            Entry::Action {
                action: Action::Resign { side: Side::Black },
            },
        );
        let text = serde_json::to_string(&a).unwrap();
        assert_eq!(
            text,
            r#"{"seq":4,"g":40,"at":400,"type":"action","action":{"action":"resign","side":"black"}}"#
        );
        assert_eq!(serde_json::from_str::<JournalLine>(&text).unwrap(), a);
        for ev in crate::script::parse_script(
            "t",
            "setup 8/8/8/8/8/8/8/K1k5 w - - 0 1\nlift e2\nplace e4 P\nplace e5\nboard xxxxxxxx/8/8/8/8/8/8/8\npress white\nclock 0:05:00 0:04:59\nflag black\nresign white\ndraw\nclaim white fifty e2e4\nresult 1/2-1/2\ntag White A  B",
        )
        .unwrap()
        {
            let entry = Entry::from_event(&ev.event.event);
            assert_eq!(entry.to_event().unwrap(), Some(ev.event.event));
        }
    }

    #[test]
    fn torn_last_line_is_dropped_and_cut() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1.jsonl");
        {
            let mut j = Journal::open(&path).unwrap().journal;
            j.append(&line(1, Entry::Tick)).unwrap();
            j.append(&line(2, Entry::Draw)).unwrap();
        }
        let good = std::fs::read(&path).unwrap();
        let mut torn = good.clone();
        torn.extend_from_slice(br#"{"seq":3,"g":30,"at":3"#);
        std::fs::write(&path, &torn).unwrap();
        let opened = Journal::open(&path).unwrap();
        assert_eq!(opened.lines.len(), 2);
        assert_eq!(opened.dropped.as_ref().map(|d| d.0), Some(3));
        assert_eq!(std::fs::read(&path).unwrap(), good);
        // Appending goes on after the last good line.
        let mut j = opened.journal;
        j.append(&line(3, Entry::Tick)).unwrap();
        assert_eq!(Journal::open(&path).unwrap().lines.len(), 3);
    }

    #[test]
    fn corrupt_line_in_the_middle_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("2.jsonl");
        let mut text = String::new();
        for l in [line(1, Entry::Tick), line(2, Entry::Draw)] {
            text.push_str(&serde_json::to_string(&l).unwrap());
            text.push('\n');
        }
        let broken = text.replacen("\"tick\"", "\"tock\"", 1);
        std::fs::write(&path, &broken).unwrap();
        let err = Journal::open(&path).unwrap_err();
        assert!(
            matches!(err, JournalError::Corrupt { line: 1, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("2.jsonl:1:"), "{err}");
        let gap = text.replacen("\"seq\":2", "\"seq\":5", 1) + &text;
        std::fs::write(&path, &gap).unwrap();
        let err = Journal::open(&path).unwrap_err();
        assert!(
            matches!(err, JournalError::Corrupt { line: 2, .. }),
            "{err}"
        );
        let bad_square = text.replacen("\"tick\"", "\"lift\",\"square\":\"z9\"", 1);
        std::fs::write(&path, &bad_square).unwrap();
        assert!(Journal::open(&path).is_err());
    }
}
