//! Alerts: what the engine tells the arbiter.

use shakmaty::Color;

/// The kind of an alert. The snake_case names are a public contract
/// (`replay --json`, the journal, the dashboard): extend, never rename.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AlertKind {
    /// The board reached a state explained only by two or three moves in a
    /// row: they were recorded, but the board never showed the positions in
    /// between.
    MovesInferred,
    /// The board went back to an earlier position; the moves after it were
    /// removed from the record.
    Takeback,
    /// A piece released on a square as a legal move was then moved on to
    /// another square before the move was completed (Art. 4.7); the final
    /// move was recorded.
    MoveChanged,
}

impl AlertKind {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            AlertKind::MovesInferred => "moves_inferred",
            AlertKind::Takeback => "takeback",
            AlertKind::MoveChanged => "move_changed",
        }
    }
}

/// An alert for the arbiter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alert {
    /// What happened.
    pub kind: AlertKind,
    /// Half-moves in the record when the alert was raised.
    pub ply: usize,
    /// The player concerned, if one is.
    pub side: Option<Color>,
    /// What happened, in words, citing the Article.
    pub message: String,
    /// What the Laws prescribe, where they prescribe a consequence.
    pub ruling: Option<String>,
}
