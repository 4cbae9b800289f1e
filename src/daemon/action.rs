//! Arbiter actions: what `POST /boards/{id}/actions` accepts, and what the
//! journal records of it.

use serde::{Deserialize, Serialize};

use crate::verdict::Verdict;

use super::config::Player;
pub use crate::event::Side;

/// What the arbiter does to a board, e.g. `{"action":"resign","side":"white"}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum Action {
    /// Marks an alert as seen (`{"action":"ack","alert":3}`).
    Ack {
        /// The alert's number on this board.
        alert: u64,
    },
    /// A player resigned.
    Resign { side: Side },
    /// The players agreed a draw.
    Draw,
    /// A player's flag fell.
    Flag { side: Side },
    /// The arbiter decides the result (`1-0`, `0-1`, `1/2-1/2`, or `*` for a
    /// game abandoned without one; the forfeits `+/-`, `-/+`, `-/-`; the
    /// special scores `0-0`, `1/2-0`, `0-1/2`), with a note saying why.
    Result {
        /// The result; anything else is refused where the action is read
        /// (the request, or the journal on restart).
        #[serde(with = "crate::verdict::verdict_text")]
        result: Verdict,
        /// Why.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// Removes the last recorded move (a correction of the record).
    Undo,
    /// Starts a new game on the board from the standard position; an
    /// unfinished game is recorded as abandoned (`*`).
    NewGame,
    /// Replaces the record of the current game from half-move `from_ply`
    /// (0 for the start) with these moves in SAN, e.g. from the scoresheets
    /// (`{"action":"moves","from_ply":12,"san":["Nf3","Nc6"]}`).
    Moves {
        /// Half-moves kept before the given moves.
        from_ply: usize,
        /// The moves, in SAN, from the position after `from_ply` half-moves.
        san: Vec<String>,
    },
    /// Records candidate `candidate` (from 1) of those the board's
    /// `out_of_sync` alert listed.
    Choose {
        /// The candidate's number in the alert.
        candidate: usize,
    },
    /// Sets the current game's position when its moves cannot be given;
    /// play goes on from it.
    Position {
        /// The position, in FEN.
        fen: String,
    },
    /// Sets the players' names (and ids, titles, ratings).
    ///
    /// The players are boxed (the same JSON): unboxed, they made every
    /// action, journal entry and board command 200 bytes, and each board
    /// holds dozens of those in its channels and its recovery lines.
    Players {
        /// The player with the white pieces.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        white: Option<Box<Player>>,
        /// The player with the black pieces.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        black: Option<Box<Player>>,
    },
}

impl Action {
    /// The action's name (`resign`, `undo`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Action::Ack { .. } => "ack",
            Action::Resign { .. } => "resign",
            Action::Draw => "draw",
            Action::Flag { .. } => "flag",
            Action::Result { .. } => "result",
            Action::Undo => "undo",
            Action::NewGame => "new_game",
            Action::Players { .. } => "players",
            Action::Moves { .. } => "moves",
            Action::Choose { .. } => "choose",
            Action::Position { .. } => "position",
        }
    }
}
