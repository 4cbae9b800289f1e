//! What the engine tells its listeners, and the events it cannot apply.

use shakmaty::Outcome;

use crate::{alert::Alert, event::Millis, game::Termination};

/// What the engine tells its listeners (broadcast, dashboard). `game` is
/// the game's index among the session's games, from 0; `at` is the time of
/// the board event that brought it about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GameEvent {
    /// A game started.
    GameStarted { game: usize, at: Millis },
    /// A move was made (Art. 4.7).
    MoveMade {
        game: usize,
        /// Its number in half-moves, from 1.
        ply: usize,
        /// The move in SAN.
        san: String,
        at: Millis,
    },
    /// A move was completed (Art. 6.2.1).
    MoveCompleted {
        game: usize,
        /// Its number in half-moves, from 1.
        ply: usize,
        at: Millis,
    },
    /// Moves were removed from the record: it now has `ply` half-moves.
    MovesRetracted {
        game: usize,
        /// Half-moves left.
        ply: usize,
        at: Millis,
    },
    /// An alert for the arbiter, ruling included.
    Alert { game: usize, alert: Alert },
    /// A game that its last move seemed to end goes on: that move was
    /// corrected (a pawn on the last rank replaced by another piece), or the
    /// arbiter removed it.
    GameResumed { game: usize, at: Millis },
    /// The game ended.
    GameOver {
        game: usize,
        outcome: Outcome,
        /// How it ended.
        termination: Termination,
        at: Millis,
    },
}

/// An event the engine cannot apply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// A `setup` after the first move of a game that is not over.
    #[error(
        "setup {fen} comes after move {ply} of a game that is not over: a setup is only allowed before the first move of a game"
    )]
    SetupMidGame {
        fen: String,
        /// Moves already recorded.
        ply: usize,
    },
    /// A setup position that is not legal.
    #[error("setup {fen} is not a legal position: {reason}")]
    IllegalSetup { fen: String, reason: String },
    /// An arbiter's correction of the record that cannot be applied (the
    /// message says why: a move not legal, with the position's FEN; a ply
    /// or candidate that does not exist).
    #[error("correction refused: {0}")]
    Correction(String),
}
