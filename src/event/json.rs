//! The JSON form of board events, as the daemon's journal writes them:
//! `{"type":"place","square":"e4","piece":"P"}`. Reading checks every field
//! (a square, a piece letter, a FEN, a result), so a damaged line is an
//! error where it is read.

use serde::{Deserialize, Deserializer, Serialize, Serializer, de::Error as _};
use shakmaty::{Color, Outcome, Piece, Square, fen::Fen, uci::UciMove};

use super::{BoardEvent, ClaimKind, Seconds};
use crate::script::parse_scan;
use crate::verdict::Verdict;

/// A side, as JSON writes it (`"white"`, `"black"`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    White,
    Black,
}

impl From<Color> for Side {
    fn from(c: Color) -> Side {
        match c {
            Color::White => Side::White,
            Color::Black => Side::Black,
        }
    }
}

impl From<Side> for Color {
    fn from(s: Side) -> Color {
        match s {
            Side::White => Color::White,
            Side::Black => Color::Black,
        }
    }
}

/// A game result as JSON writes it: `"1-0"`, `"0-1"`, `"1/2-1/2"` or `"*"`
/// (for `#[serde(with = "...")]`).
pub mod result_text {
    use super::*;

    /// Writes the result.
    pub fn serialize<S: Serializer>(outcome: &Outcome, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(outcome.as_str())
    }

    /// Reads a result, or says what is expected.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Outcome, D::Error> {
        let text = String::deserialize(d)?;
        Outcome::from_ascii(text.as_bytes()).map_err(|_| {
            D::Error::custom(format!(
                "'{text}' is not a result: expected 1-0, 0-1, 1/2-1/2 or *"
            ))
        })
    }
}

/// The written shape of a [`BoardEvent`].
#[derive(Clone, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(super) enum Wire {
    Setup {
        fen: String,
    },
    Lift {
        square: String,
    },
    Place {
        square: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        piece: Option<String>,
    },
    Board {
        /// FEN placement, `x` for an occupied square of unknown identity.
        scan: String,
    },
    Press {
        side: Side,
    },
    Clock {
        white: Seconds,
        black: Seconds,
    },
    Flag {
        side: Side,
    },
    Resign {
        side: Side,
    },
    Draw,
    Reconnected,
    Claim {
        side: Side,
        /// `threefold` or `fifty`.
        claim: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        uci: Option<String>,
    },
    Result {
        #[serde(with = "crate::verdict::verdict_text")]
        result: Verdict,
    },
    Tag {
        name: String,
        value: String,
    },
}

impl From<BoardEvent> for Wire {
    fn from(event: BoardEvent) -> Wire {
        let side = Side::from;
        match event {
            BoardEvent::Setup(fen) => Wire::Setup {
                fen: fen.to_string(),
            },
            BoardEvent::Lift(sq) => Wire::Lift {
                square: sq.to_string(),
            },
            BoardEvent::Place(sq, piece) => Wire::Place {
                square: sq.to_string(),
                piece: piece.map(|p| p.char().to_string()),
            },
            BoardEvent::Board(scan) => Wire::Board {
                scan: scan.to_string(),
            },
            BoardEvent::Press(c) => Wire::Press { side: side(c) },
            BoardEvent::Clock(white, black) => Wire::Clock { white, black },
            BoardEvent::Flag(c) => Wire::Flag { side: side(c) },
            BoardEvent::Resign(c) => Wire::Resign { side: side(c) },
            BoardEvent::Draw => Wire::Draw,
            BoardEvent::Reconnected => Wire::Reconnected,
            BoardEvent::Claim(c, kind, mv) => Wire::Claim {
                side: side(c),
                claim: kind.as_str().to_owned(),
                uci: mv.map(|m| m.to_string()),
            },
            BoardEvent::Result(result) => Wire::Result {
                result: Verdict::Outcome(result),
            },
            BoardEvent::Special(special) => Wire::Result {
                result: Verdict::Special(special),
            },
            BoardEvent::Tag(name, value) => Wire::Tag { name, value },
        }
    }
}

fn square(s: &str) -> Result<Square, String> {
    s.parse().map_err(|_| format!("'{s}' is not a square"))
}

fn piece(p: &str) -> Result<Piece, String> {
    let mut chars = p.chars();
    match (chars.next().and_then(Piece::from_char), chars.next()) {
        (Some(piece), None) => Ok(piece),
        _ => Err(format!("'{p}' is not a piece letter")),
    }
}

impl TryFrom<Wire> for BoardEvent {
    type Error = String;

    fn try_from(wire: Wire) -> Result<BoardEvent, String> {
        Ok(match wire {
            Wire::Setup { fen } => BoardEvent::Setup(Box::new(
                fen.parse::<Fen>()
                    .map_err(|e| format!("bad FEN '{fen}': {e}"))?,
            )),
            Wire::Lift { square: s } => BoardEvent::Lift(square(&s)?),
            Wire::Place {
                square: s,
                piece: p,
            } => BoardEvent::Place(square(&s)?, p.as_deref().map(piece).transpose()?),
            Wire::Board { scan } => BoardEvent::Board(Box::new(parse_scan(&scan)?)),
            Wire::Press { side } => BoardEvent::Press(side.into()),
            Wire::Clock { white, black } => BoardEvent::Clock(white, black),
            Wire::Flag { side } => BoardEvent::Flag(side.into()),
            Wire::Resign { side } => BoardEvent::Resign(side.into()),
            Wire::Draw => BoardEvent::Draw,
            Wire::Reconnected => BoardEvent::Reconnected,
            Wire::Claim { side, claim, uci } => {
                let kind = match claim.as_str() {
                    "threefold" => ClaimKind::Threefold,
                    "fifty" => ClaimKind::Fifty,
                    other => return Err(format!("'{other}' is not a claim")),
                };
                let mv = uci
                    .map(|m| {
                        m.parse::<UciMove>()
                            .map_err(|_| format!("'{m}' is not a UCI move"))
                    })
                    .transpose()?;
                BoardEvent::Claim(side.into(), kind, mv)
            }
            Wire::Result {
                result: Verdict::Outcome(result),
            } => BoardEvent::Result(result),
            Wire::Result {
                result: Verdict::Special(special),
            } => BoardEvent::Special(special),
            Wire::Tag { name, value } => BoardEvent::Tag(name, value),
        })
    }
}
