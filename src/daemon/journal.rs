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
//! * `wall` (optional): when the line was written, Unix time in ms; the
//!   broadcast delay ([`super::delay`]) shows a line once it is old enough.
//! * `type` and its fields: a board event (`setup`, `lift`, `place`,
//!   `board`, `press`, `clock`, `flag`, `resign`, `draw`, `claim`,
//!   `result`, `tag`), `tick` (time passed with no event and the engine read
//!   a settled board state), `action` (an arbiter action, as posted to
//!   `/boards/{id}/actions`), `connection` (the board's link changed),
//!   `alert` (an alert the daemon raised about the board from outside its
//!   events, such as lichess refusing its game: journaled so that alert
//!   numbers, which acknowledgements name, survive a restart) or
//!   `journal` (the journal could not be written for a while: `state` is
//!   `failed` with the error as `message`, then `restored`; the failure is
//!   recorded once the journal works again, where it happened).
//!
//! A line cut short by a crash (the last line, without its newline) is
//! dropped with a warning and cut from the file; any complete line (ending
//! in a newline) that cannot be read, the last one included, is an error
//! naming the file and line.
//!
//! Lines are written and synced in batches by [`super::commit`]. At least
//! once a second while it is written (and every two seconds while idle) the
//! journal checks that the file it writes is still the one at its path (not
//! deleted, not replaced): a journal removed while the daemon runs is a
//! failed write, and [`Journal::repair`] puts the lines it holds back at the
//! path, the lines written before the check included, since the open file
//! still holds them.

use std::{
    fs::{File, OpenOptions},
    io::{Seek, SeekFrom, Write},
    path::{Path, PathBuf},
};

use serde::{Deserialize, Serialize};

use crate::event::{BoardEvent, Millis, TimedEvent};

use super::action::Action;

/// One journal line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JournalLine {
    /// The line's number in the board's journal, from 1.
    pub seq: u64,
    /// The global number: increasing across all boards in writing order.
    pub g: u64,
    /// The board's time (ms).
    pub at: Millis,
    /// When the daemon wrote the line (Unix time, ms): the broadcast delay
    /// shows a line once it is this old by the delay. Absent from journals
    /// written before it was recorded (such lines are old enough at once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall: Option<u64>,
    /// What happened.
    #[serde(flatten)]
    pub entry: Entry,
    /// The round the journal belongs to: on its first line only (absent
    /// from journals written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<RoundName>,
}

/// The round a journal belongs to, as its first line names it: a journal
/// copied from another round is refused at start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RoundName {
    /// The Event tag.
    pub event: String,
    /// The Round tag.
    pub round: String,
}

/// The largest `g` or `at` a journal may hold: 2^53 − 1, the largest
/// integer every JSON reader (a browser's included) reads exactly.
pub const MAX_NUMBER: u64 = (1 << 53) - 1;

/// What a journal line records: a board event (written flat, see
/// [`BoardEvent`]), or one of the daemon's own records.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// What the board or its clock reported.
    Event(BoardEvent),
    /// Time passed to `at` with no event, and the engine read the board or
    /// a timer of it fell due.
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
    /// An alert the daemon raised about the board from outside its events
    /// (the broadcast: lichess refused the token or the board's game).
    Alert {
        /// The alert's kind, snake_case (`lichess_push_failed`, ...).
        kind: String,
        /// What happened.
        message: String,
    },
    /// The journal could not be written, or could again.
    Journal {
        /// Failed or restored.
        state: JournalState,
        /// What went wrong, or what was done about it.
        message: String,
    },
    /// The full dead-position analysis of a position, computed off the
    /// board's task and journaled when it came back (Art. 5.2.2; see
    /// `Engine::next_dead_check`): a replay reads it, never recomputes it.
    DeadVerdict {
        /// The game (from 0 in the board's session).
        game: usize,
        /// The position after this many moves.
        ply: usize,
        /// The position analysed, as EPD (`Engine::verdict_position`): the
        /// verdict is dropped if the record no longer has it at `ply`.
        /// Absent from journals written before it was recorded.
        position: Option<String>,
        /// Dead (`true`), not dead (`false`), undecided within the budget
        /// (`null`), or not analysable (`skipped`).
        dead: Option<bool>,
        /// The solver could not take the position.
        skipped: bool,
    },
    /// The full analysis of whether the opponent of a player who flagged or
    /// resigned can still checkmate (Art. 6.9, 5.1.2), computed off the
    /// board's task and journaled when it came back.
    MateVerdict {
        /// The game (from 0 in the board's session).
        game: usize,
        /// The moves recorded at the flag fall or resignation.
        ply: usize,
        /// The position analysed, as for [`Entry::DeadVerdict`].
        position: Option<String>,
        /// Can mate (`true`), cannot (`false`), undecided (`null`).
        can_mate: Option<bool>,
    },
}

/// The journal's own state, as a `journal` line records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JournalState {
    /// Writes failed from here on (recorded once they work again).
    Failed,
    /// Writes work again.
    Restored,
}

/// The daemon's own records, as written.
#[derive(Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Record {
    Tick,
    Action {
        action: Action,
    },
    Connection {
        state: Connection,
    },
    Alert {
        kind: String,
        message: String,
    },
    Journal {
        state: JournalState,
        message: String,
    },
    DeadVerdict {
        game: usize,
        ply: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        position: Option<String>,
        dead: Option<bool>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        skipped: bool,
    },
    MateVerdict {
        game: usize,
        ply: usize,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        position: Option<String>,
        can_mate: Option<bool>,
    },
}

impl Serialize for Entry {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Entry::Event(event) => event.serialize(s),
            Entry::Tick => Record::Tick.serialize(s),
            Entry::Action { action } => Record::Action {
                action: action.clone(),
            }
            .serialize(s),
            Entry::Connection { state } => Record::Connection { state: *state }.serialize(s),
            Entry::Alert { kind, message } => Record::Alert {
                kind: kind.clone(),
                message: message.clone(),
            }
            .serialize(s),
            Entry::Journal { state, message } => Record::Journal {
                state: *state,
                message: message.clone(),
            }
            .serialize(s),
            Entry::DeadVerdict {
                game,
                ply,
                position,
                dead,
                skipped,
            } => Record::DeadVerdict {
                game: *game,
                ply: *ply,
                position: position.clone(),
                dead: *dead,
                skipped: *skipped,
            }
            .serialize(s),
            Entry::MateVerdict {
                game,
                ply,
                position,
                can_mate,
            } => Record::MateVerdict {
                game: *game,
                ply: *ply,
                position: position.clone(),
                can_mate: *can_mate,
            }
            .serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for Entry {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Entry, D::Error> {
        use serde::de::Error;
        let value = serde_json::Value::deserialize(d)?;
        let record = matches!(
            value.get("type").and_then(serde_json::Value::as_str),
            Some(
                "tick"
                    | "action"
                    | "connection"
                    | "alert"
                    | "journal"
                    | "dead_verdict"
                    | "mate_verdict"
            )
        );
        if record {
            Ok(
                match Record::deserialize(value).map_err(D::Error::custom)? {
                    Record::Tick => Entry::Tick,
                    Record::Action { action } => Entry::Action { action },
                    Record::Connection { state } => Entry::Connection { state },
                    Record::Alert { kind, message } => Entry::Alert { kind, message },
                    Record::Journal { state, message } => Entry::Journal { state, message },
                    Record::DeadVerdict {
                        game,
                        ply,
                        position,
                        dead,
                        skipped,
                    } => Entry::DeadVerdict {
                        game,
                        ply,
                        position,
                        dead,
                        skipped,
                    },
                    Record::MateVerdict {
                        game,
                        ply,
                        position,
                        can_mate,
                    } => Entry::MateVerdict {
                        game,
                        ply,
                        position,
                        can_mate,
                    },
                },
            )
        } else {
            BoardEvent::deserialize(value)
                .map(Entry::Event)
                .map_err(D::Error::custom)
        }
    }
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
        Entry::Event(event.clone())
    }

    /// The board event this entry records, if it records one.
    pub fn event(&self) -> Option<&BoardEvent> {
        match self {
            Entry::Event(event) => Some(event),
            _ => None,
        }
    }

    /// Whether the entry is an event reported by the board itself (as
    /// opposed to a tick, an action or a connection change).
    pub fn is_board_event(&self) -> bool {
        matches!(self, Entry::Event(_))
    }
}

/// The present as a journal line's `wall`: Unix time in ms.
pub fn wall_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

impl JournalLine {
    /// The timed board event the line records, if it records one.
    pub fn timed_event(&self) -> Option<TimedEvent> {
        self.entry.event().map(|event| TimedEvent {
            at: self.at,
            event: event.clone(),
        })
    }
}

/// A journal that cannot be read or written.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// An I/O failure.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A line that is not a journal line, or out of sequence.
    #[error("{path}:{line}: {message}")]
    Corrupt {
        path: PathBuf,
        /// The 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The file written is no longer the one at the journal's path.
    #[error("{path}: {what} while the daemon was writing it")]
    Gone {
        path: PathBuf,
        /// `deleted` or `replaced by another file`.
        what: &'static str,
    },
}

/// An open journal, positioned for appending.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: File,
    /// The bytes of complete, checked lines: what a repair keeps.
    len: u64,
    /// When the file was last found at its path (see [`Journal::check`]).
    checked_at: std::cell::Cell<std::time::Instant>,
}

/// Which file a path or a handle is.
fn identity(meta: &std::fs::Metadata) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    (meta.dev(), meta.ino())
}

/// Whether `file` is still the file named `path` (not deleted, not
/// replaced): a reader following a journal reopens it when it is not.
pub fn still_at_path(file: &File, path: &Path) -> std::io::Result<bool> {
    let open = file.metadata()?;
    match std::fs::symlink_metadata(path) {
        Ok(named) => Ok(identity(&named) == identity(&open) && links(&open) > 0),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// The number of names the open file has (0: deleted).
fn links(meta: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::nlink(meta)
}

/// What is wrong with `line` following `previous` (the first line when
/// `None`): `seq` counts from 1 without gaps, `g` increases, `at` does not
/// decrease, and neither is beyond [`MAX_NUMBER`].
fn out_of_order(previous: Option<&JournalLine>, line: &JournalLine) -> Option<String> {
    let expected = previous.map_or(1, |p| p.seq + 1);
    if line.seq != expected {
        return Some(format!("seq {} where {expected} was expected", line.seq));
    }
    if line.g > MAX_NUMBER || line.at > MAX_NUMBER {
        return Some(format!(
            "g {} or at {} is beyond {MAX_NUMBER}: not a number the daemon writes",
            line.g, line.at
        ));
    }
    let p = previous?;
    if line.g <= p.g {
        return Some(format!(
            "g {} after g {}: the global number must increase",
            line.g, p.g
        ));
    }
    if line.at < p.at {
        return Some(format!(
            "at {} after at {}: the board's time must not go back",
            line.at, p.at
        ));
    }
    None
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
                .and_then(|s| serde_json::from_str::<JournalLine>(s).map_err(|e| e.to_string()));
            match parsed {
                Ok(line) if end.is_some() => {
                    if let Some(message) = out_of_order(lines.last(), &line) {
                        return Err(JournalError::Corrupt {
                            path: path.to_owned(),
                            line: number,
                            message,
                        });
                    }
                    lines.push(line);
                    good_len = next;
                }
                // Only a line without its newline was cut short by a crash;
                // a complete line that does not read is damage.
                Ok(_) | Err(_) if last && end.is_none() => {
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
                len: good_len as u64,
                checked_at: std::cell::Cell::new(std::time::Instant::now()),
            },
            lines,
            dropped,
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends a line, syncs it to disk and checks that the file is still
    /// the one at the path. On any error the line does not count: a
    /// [`Journal::repair`] cuts it. Blocking: call it off the async workers.
    pub fn append(&mut self, line: &JournalLine) -> Result<(), JournalError> {
        let text = self.text(line)?;
        self.write_unsynced(&text)?;
        self.sync(text.len() as u64, true)
    }

    /// A line as written: its JSON and a newline.
    pub fn text(&self, line: &JournalLine) -> Result<Vec<u8>, JournalError> {
        let mut text = serde_json::to_vec(line).map_err(|e| JournalError::Io {
            path: self.path.clone(),
            source: std::io::Error::other(e),
        })?;
        text.push(b'\n');
        Ok(text)
    }

    /// Writes a line's bytes without syncing them: the first half of a
    /// group commit (see [`super::commit`]); the line counts only after
    /// [`Journal::sync`].
    pub fn write_unsynced(&mut self, text: &[u8]) -> Result<(), JournalError> {
        self.file.write_all(text).map_err(|source| self.io(source))
    }

    /// Syncs what was written since the last sync (`written` bytes) and,
    /// when `check` says so, checks that the file is still the one at the
    /// path; then the bytes count. On any error they do not: a
    /// [`Journal::repair`] cuts them.
    pub fn sync(&mut self, written: u64, check: bool) -> Result<(), JournalError> {
        self.file.sync_data().map_err(|source| self.io(source))?;
        if check {
            self.check()?;
        }
        self.len += written;
        Ok(())
    }

    /// Syncs the file's data, for a writer with no commit log.
    pub fn sync_file(&self) -> Result<(), JournalError> {
        self.file.sync_data().map_err(|source| self.io(source))
    }

    /// Counts `written` bytes written since the last count: they are
    /// durable (synced, or logged in the commit log).
    pub fn count(&mut self, written: u64) {
        self.len += written;
    }

    /// The bytes of complete, synced lines.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether the journal has no line.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn io(&self, source: std::io::Error) -> JournalError {
        JournalError::Io {
            path: self.path.clone(),
            source,
        }
    }

    /// Whether the file was last found at its path `every` or longer ago.
    pub fn check_due(&self, every: std::time::Duration) -> bool {
        self.checked_at.get().elapsed() >= every
    }

    /// Checks that the open file is still the one at the path: not deleted
    /// (no name left), not replaced (the path names another file).
    pub fn check(&self) -> Result<(), JournalError> {
        self.checked_at.set(std::time::Instant::now());
        let gone = |what| JournalError::Gone {
            path: self.path.clone(),
            what,
        };
        let open = self.file.metadata().map_err(|e| self.io(e))?;
        match std::fs::symlink_metadata(&self.path) {
            Ok(named) if identity(&named) != identity(&open) => {
                Err(gone("replaced by another file"))
            }
            Ok(_) if links(&open) == 0 => Err(gone("deleted")),
            Ok(_) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(gone("deleted")),
            Err(e) => Err(self.io(e)),
        }
    }

    /// Makes the journal writable again after a failed write: cuts what the
    /// failed write left, or, when the file was deleted or replaced, writes
    /// the lines the open file still holds back at the path (a file found
    /// there is kept beside it as `<name>.replaced-<unix time>`). Returns
    /// what it did, for the record.
    pub fn repair(&mut self) -> Result<String, JournalError> {
        match self.check() {
            Ok(()) => {
                self.file.set_len(self.len).map_err(|e| self.io(e))?;
                self.file.sync_all().map_err(|e| self.io(e))?;
                Ok(format!("{} can be written again", self.path.display()))
            }
            Err(JournalError::Gone { what, .. }) => self.restore(what),
            Err(e) => Err(e),
        }
    }

    /// Writes the open file's checked lines to a new file at the path.
    fn restore(&mut self, what: &str) -> Result<String, JournalError> {
        use std::os::unix::fs::FileExt;
        let mut kept = vec![0u8; usize::try_from(self.len).unwrap_or(usize::MAX)];
        self.file
            .read_exact_at(&mut kept, 0)
            .map_err(|e| self.io(e))?;
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir).map_err(|e| self.io(e))?;
        let name = self
            .path
            .file_name()
            .map_or_else(|| "journal".into(), |n| n.to_string_lossy().into_owned());
        let fresh = dir.join(format!("{name}.restoring"));
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .truncate(false)
            .open(&fresh)
            .map_err(|e| self.io(e))?;
        file.set_len(0)
            .and_then(|()| file.write_all(&kept))
            .and_then(|()| file.sync_all())
            .map_err(|e| self.io(e))?;
        let mut aside = None;
        if std::fs::symlink_metadata(&self.path).is_ok() {
            let secs = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            let other = dir.join(format!("{name}.replaced-{secs}"));
            std::fs::rename(&self.path, &other).map_err(|e| self.io(e))?;
            aside = Some(other);
        }
        std::fs::rename(&fresh, &self.path).map_err(|e| self.io(e))?;
        File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| self.io(e))?;
        self.file = file;
        let mut done = format!(
            "{} was {what}; its {} bytes were written back",
            self.path.display(),
            self.len
        );
        if let Some(other) = aside {
            done.push_str(&format!(
                " and the file found there was kept as {}",
                other.display()
            ));
        }
        Ok(done)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::Side;

    fn line(seq: u64, entry: Entry) -> JournalLine {
        JournalLine {
            round: None,
            seq,
            g: seq * 10,
            at: seq * 100,
            wall: None,
            entry,
        }
    }

    #[test]
    fn round_trip_and_format() {
        let l = line(
            3,
            Entry::Event(BoardEvent::Place(
                shakmaty::Square::E4,
                Some(shakmaty::Piece::from_char('P').unwrap()),
            )),
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
            let text = serde_json::to_string(&line(1, entry.clone())).unwrap();
            let back: JournalLine = serde_json::from_str(&text).unwrap();
            assert_eq!(back.entry, entry);
            assert_eq!(entry.event(), Some(&ev.event.event));
        }
    }

    /// Lines as journals written before the entry wrapped the typed board
    /// event hold them: each reads, and writes back byte for byte.
    #[test]
    fn lines_of_earlier_journals_read_and_write_back_unchanged() {
        let lines = [
            r#"{"seq":1,"g":1,"at":0,"type":"connection","state":"connected"}"#,
            r#"{"seq":2,"g":2,"at":0,"type":"setup","fen":"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"}"#,
            r#"{"seq":3,"g":3,"at":1000,"type":"lift","square":"e2"}"#,
            r#"{"seq":4,"g":4,"at":1300,"type":"place","square":"e4","piece":"P"}"#,
            r#"{"seq":5,"g":5,"at":1310,"type":"place","square":"e4"}"#,
            r#"{"seq":6,"g":6,"at":1450,"type":"tick"}"#,
            r#"{"seq":7,"g":7,"at":1500,"type":"press","side":"white"}"#,
            r#"{"seq":8,"g":8,"at":1520,"type":"clock","white":298,"black":300}"#,
            r#"{"seq":9,"g":9,"at":1600,"type":"board","scan":"xxxxxxxx/xxxxxxxx/8/8/4x3/8/xxxx1xxx/xxxxxxxx"}"#,
            r#"{"seq":10,"g":10,"at":1700,"type":"claim","side":"black","claim":"threefold","uci":"g8f6"}"#,
            r#"{"seq":11,"g":11,"at":1800,"type":"tag","name":"White","value":"A, B"}"#,
            r#"{"seq":12,"g":12,"at":1900,"type":"draw"}"#,
            r#"{"seq":13,"g":13,"at":2000,"type":"flag","side":"black"}"#,
            r#"{"seq":14,"g":14,"at":2100,"type":"resign","side":"white"}"#,
            r#"{"seq":15,"g":15,"at":2200,"type":"result","result":"1/2-1/2"}"#,
            r#"{"seq":16,"g":16,"at":2300,"type":"action","action":{"action":"result","result":"0-1","note":"forfeit"}}"#,
            r#"{"seq":17,"g":17,"at":2400,"type":"action","action":{"action":"undo"}}"#,
            r#"{"seq":18,"g":18,"at":2400,"type":"alert","kind":"lichess_game_rejected","message":"lichess refused it"}"#,
        ];
        for text in lines {
            let line: JournalLine =
                serde_json::from_str(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(serde_json::to_string(&line).unwrap(), text);
        }
        let place: JournalLine = serde_json::from_str(lines[3]).unwrap();
        assert_eq!(
            place.timed_event().map(|t| t.event),
            Some(BoardEvent::Place(
                shakmaty::Square::E4,
                Some(shakmaty::Piece::from_char('P').unwrap())
            ))
        );
    }

    /// Issue 9: a damaged action (a result that is none) is an error naming
    /// the file and line, not an action silently skipped on restart.
    #[test]
    fn a_damaged_action_line_is_an_error_naming_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("3.jsonl");
        let text = concat!(
            r#"{"seq":1,"g":1,"at":0,"type":"tick"}"#,
            "\n",
            r#"{"seq":2,"g":2,"at":0,"type":"action","action":{"action":"result","result":"2-0"}}"#,
            "\n",
            r#"{"seq":3,"g":3,"at":0,"type":"tick"}"#,
            "\n",
        );
        std::fs::write(&path, text).unwrap();
        let err = Journal::open(&path).unwrap_err();
        assert!(
            matches!(err, JournalError::Corrupt { line: 2, .. }),
            "{err}"
        );
        let message = err.to_string();
        assert!(message.contains("3.jsonl:2:"), "{message}");
        assert!(message.contains("'2-0' is not a result"), "{message}");
    }

    #[test]
    fn torn_last_line_is_dropped_and_cut() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1.jsonl");
        {
            let mut j = Journal::open(&path).unwrap().journal;
            j.append(&line(1, Entry::Tick)).unwrap();
            j.append(&line(2, Entry::Event(BoardEvent::Draw))).unwrap();
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
        for l in [
            line(1, Entry::Tick),
            line(2, Entry::Event(BoardEvent::Draw)),
        ] {
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

    /// Issue 11: a complete last line (with its newline) that does not read
    /// is damage, named by file and line, and the file is left as it was.
    #[test]
    fn a_damaged_complete_last_line_is_an_error_not_a_torn_write() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("5.jsonl");
        let mut text = serde_json::to_string(&line(1, Entry::Tick)).unwrap();
        text.push_str("\n{\"seq\":2,\"g\":20,\"at\":2#0,\"type\":\"tick\"}\n");
        std::fs::write(&path, &text).unwrap();
        let err = Journal::open(&path).unwrap_err();
        assert!(
            matches!(err, JournalError::Corrupt { line: 2, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("5.jsonl:2:"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
    }

    /// Issue 11: a journal deleted or replaced under the daemon is noticed
    /// at the next write, which does not count; a repair writes the lines
    /// the open file holds back at the path (a file found there is kept
    /// beside it), and writing goes on.
    #[test]
    fn a_journal_deleted_or_replaced_is_noticed_and_written_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("6.jsonl");
        let mut j = Journal::open(&path).unwrap().journal;
        j.append(&line(1, Entry::Tick)).unwrap();
        j.check().unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(matches!(
            j.check(),
            Err(JournalError::Gone {
                what: "deleted",
                ..
            })
        ));
        let err = j.append(&line(2, Entry::Tick)).unwrap_err();
        assert!(err.to_string().contains("deleted"), "{err}");
        let done = j.repair().unwrap();
        assert!(done.contains("deleted"), "{done}");
        j.append(&line(2, Entry::Event(BoardEvent::Draw))).unwrap();
        let lines = Journal::open(&path).unwrap().lines;
        assert_eq!(lines.len(), 2, "the unchecked line was cut");
        assert_eq!(lines[1].entry, Entry::Event(BoardEvent::Draw));

        // Replaced by another file: that file is kept aside.
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, "someone else's\n").unwrap();
        assert!(matches!(
            j.check(),
            Err(JournalError::Gone {
                what: "replaced by another file",
                ..
            })
        ));
        let done = j.repair().unwrap();
        assert!(done.contains("kept as"), "{done}");
        j.append(&line(3, Entry::Tick)).unwrap();
        assert_eq!(Journal::open(&path).unwrap().lines.len(), 3);
        let aside: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().contains(".replaced-"))
            .collect();
        assert_eq!(aside.len(), 1);
        assert_eq!(
            std::fs::read_to_string(aside[0].path()).unwrap(),
            "someone else's\n"
        );
    }

    /// A record of the journal's own failure reads and writes back.
    #[test]
    fn journal_records_round_trip() {
        let text =
            r#"{"seq":4,"g":9,"at":10,"type":"journal","state":"failed","message":"disk full"}"#;
        let l: JournalLine = serde_json::from_str(text).unwrap();
        assert_eq!(
            l.entry,
            Entry::Journal {
                state: JournalState::Failed,
                message: "disk full".into()
            }
        );
        assert_eq!(serde_json::to_string(&l).unwrap(), text);
    }

    #[test]
    fn entries_stay_small() {
        // A board keeps up to 32 lines for a rebuild and a channel of
        // entries; at 5,000 boards each byte of an entry is 5 MB. A
        // player's details (about 100 bytes each) are boxed for it.
        assert!(
            std::mem::size_of::<Entry>() <= 64,
            "{}",
            std::mem::size_of::<Entry>()
        );
        assert!(
            std::mem::size_of::<crate::daemon::actor::Command>() <= 72,
            "{}",
            std::mem::size_of::<crate::daemon::actor::Command>()
        );
    }
}
