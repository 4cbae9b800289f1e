//! Board events: what an electronic board, its clock or an arbiter reports.
//!
//! These are the inputs of the reconstruction [`Engine`](crate::Engine). A board
//! script (see [`script`](crate::script)) is a text form of a list of them, and
//! the protocol codecs turn serial bytes into them.

use std::fmt;

use serde::{Deserialize, Serialize};
use shakmaty::{Color, Piece, Square, uci::UciMove};

mod json;

pub use json::{Side, result_text};

/// Milliseconds since the session began. The engine never reads the wall
/// clock: every decision is a function of these timestamps, so a session can
/// be replayed byte for byte from its journal.
pub type Millis = u64;

/// A clock time in whole seconds.
pub type Seconds = u32;

/// What a player may claim under Art. 9.2 (threefold) or Art. 9.3 (fifty moves).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClaimKind {
    /// Art. 9.2: the same position for at least the third time.
    Threefold,
    /// Art. 9.3: the last 50 moves by each player without pawn move or capture.
    Fifty,
}

impl ClaimKind {
    /// The script keyword.
    pub fn as_str(self) -> &'static str {
        match self {
            ClaimKind::Threefold => "threefold",
            ClaimKind::Fifty => "fifty",
        }
    }
}

/// A square's content on a full scan of the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sensed {
    /// Occupied by this piece (boards that identify pieces).
    Piece(Piece),
    /// Occupied, identity unknown (occupancy-only boards).
    Occupied,
}

/// A full scan of the board: what each square reads.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Scan(pub [Option<Sensed>; 64]);

impl Scan {
    /// An empty board.
    pub fn empty() -> Scan {
        Scan([None; 64])
    }

    /// The scan a board that identifies pieces gives of `board`.
    pub fn from_board(board: &shakmaty::Board, identify: bool) -> Scan {
        let mut scan = Scan::empty();
        for (sq, piece) in board.iter() {
            scan.0[sq.to_usize()] = Some(if identify {
                Sensed::Piece(piece)
            } else {
                Sensed::Occupied
            });
        }
        scan
    }

    /// What the square reads.
    pub fn get(&self, sq: Square) -> Option<Sensed> {
        self.0[sq.to_usize()]
    }

    /// The same scan from a board turned round by 180° (a8 where h1 is).
    pub fn rotated(&self) -> Scan {
        let mut turned = Scan::empty();
        for sq in Square::ALL {
            turned.0[sq.rotate_180().to_usize()] = self.get(sq);
        }
        turned
    }
}

impl fmt::Debug for Scan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Scan({self})")
    }
}

/// Writes the scan as a FEN placement field, with `x` for an occupied square
/// of unknown identity.
impl fmt::Display for Scan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for rank in (0..8).rev() {
            let mut empty = 0;
            for file in 0..8 {
                match self.0[rank * 8 + file] {
                    None => empty += 1,
                    Some(s) => {
                        if empty > 0 {
                            write!(f, "{empty}")?;
                            empty = 0;
                        }
                        match s {
                            Sensed::Piece(p) => write!(f, "{}", p.char())?,
                            Sensed::Occupied => f.write_str("x")?,
                        }
                    }
                }
            }
            if empty > 0 {
                write!(f, "{empty}")?;
            }
            if rank > 0 {
                f.write_str("/")?;
            }
        }
        Ok(())
    }
}

/// One thing that happened at the board. Its JSON form (the daemon's
/// journal) is `{"type":"place","square":"e4","piece":"P"}`: a `type` named
/// after the script keyword, and the fields of the script line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "json::Wire", try_from = "json::Wire")]
pub enum BoardEvent {
    /// The game starts from this position (only before the first move of a
    /// game, or once a game is over). The pieces are taken to stand on it.
    Setup(Box<shakmaty::fen::Fen>),
    /// A piece left the square.
    Lift(Square),
    /// A piece was put on the square; the piece is given by boards that
    /// identify pieces.
    Place(Square, Option<Piece>),
    /// A full scan of the board.
    Board(Box<Scan>),
    /// The link to the board came back after it was lost (a cable pulled
    /// out, a port that failed). The board's next full scan may show any
    /// number of moves made meanwhile, and is read like a dump, however
    /// the board reports otherwise.
    Reconnected,
    /// That player pressed the clock.
    Press(Color),
    /// A clock report: White's then Black's remaining time.
    Clock(Seconds, Seconds),
    /// That player's flag fell.
    Flag(Color),
    /// That player resigned.
    Resign(Color),
    /// The players agreed a draw.
    Draw,
    /// A draw claim, with the move the claimant intends to play when the
    /// claim is about a position that is about to occur (Art. 9.2.1.1, 9.3.1).
    Claim(Color, ClaimKind, Option<UciMove>),
    /// The arbiter records a result (`*` for a game abandoned without one).
    Result(shakmaty::Outcome),
    /// The arbiter records a forfeit or special score.
    Special(crate::verdict::SpecialResult),
    /// A PGN tag for the current game (`White`, `Black`, `Event`, ...).
    Tag(String, String),
}

impl BoardEvent {
    /// The same event from a board turned round by 180°: squares (and
    /// scans) turned, everything else as it is.
    pub fn rotated(&self) -> BoardEvent {
        match self {
            BoardEvent::Lift(sq) => BoardEvent::Lift(sq.rotate_180()),
            BoardEvent::Place(sq, piece) => BoardEvent::Place(sq.rotate_180(), *piece),
            BoardEvent::Board(scan) => BoardEvent::Board(Box::new(scan.rotated())),
            other => other.clone(),
        }
    }
}

/// A board event with its time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimedEvent {
    /// When it happened.
    pub at: Millis,
    /// What happened.
    pub event: BoardEvent,
}

/// The name of a side as the script and JSON write it.
pub fn side_name(color: Color) -> &'static str {
    match color {
        Color::White => "white",
        Color::Black => "black",
    }
}

/// Formats seconds as `h:mm:ss`, the form of PGN `%clk` and of `clock` lines.
pub fn format_clock(secs: Seconds) -> String {
    format!("{}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)
}

/// Parses `h:mm:ss` (also `mm:ss`); a fraction of a second (`0:00:05.3`,
/// as some PGN files write it) is dropped.
pub fn parse_clock(text: &str) -> Option<Seconds> {
    let fields: Vec<&str> = text.split(':').collect();
    if !(2..=3).contains(&fields.len()) {
        return None;
    }
    let last = fields.len() - 1;
    let mut total: u64 = 0;
    for (i, field) in fields.iter().enumerate() {
        let whole = match field.split_once('.') {
            Some((whole, fraction)) if i == last => {
                if fraction.is_empty() || !fraction.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                whole
            }
            _ => field,
        };
        if whole.is_empty() || whole.len() > 6 || !whole.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let value: u64 = whole.parse().ok()?;
        if i > 0 && value >= 60 {
            return None;
        }
        total = total * 60 + value;
    }
    Seconds::try_from(total).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_round_trip() {
        assert_eq!(parse_clock("1:30:05"), Some(5405));
        assert_eq!(parse_clock("0:00:00"), Some(0));
        assert_eq!(parse_clock("3:07"), Some(187));
        assert_eq!(parse_clock("0:00:05.3"), Some(5));
        assert_eq!(format_clock(5405), "1:30:05");
        assert_eq!(format_clock(59), "0:00:59");
        for bad in [
            "",
            ":",
            "1:60:00",
            "a:00:00",
            "1:2:3:4",
            "5",
            "1:-1:00",
            "1:00:0.5.5",
        ] {
            assert_eq!(parse_clock(bad), None, "{bad}");
        }
    }

    #[test]
    fn scan_display() {
        let scan = Scan::from_board(&shakmaty::Board::default(), false);
        assert_eq!(
            scan.to_string(),
            "xxxxxxxx/xxxxxxxx/8/8/8/8/xxxxxxxx/xxxxxxxx"
        );
        let scan = Scan::from_board(&shakmaty::Board::default(), true);
        assert_eq!(
            scan.to_string(),
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR"
        );
    }
}
