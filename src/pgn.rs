//! PGN: writing the recorded games, reading games to simulate.
// (stub: being implemented)

use shakmaty::{Chess, Move, Outcome, fen::Fen, san::SanPlus};

use crate::event::Seconds;

/// One move as the PGN writer prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgnMove {
    /// The move in SAN with its check or mate suffix.
    pub san: SanPlus,
    /// The mover's remaining time after the move (`{[%clk h:mm:ss]}`).
    pub clock: Option<Seconds>,
    /// A comment printed after the move.
    pub comment: Option<String>,
}

/// A game to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgnGame {
    /// Tags in the order to print them. The Seven Tag Roster is always printed
    /// first in its standard order, with `?` defaults for missing ones.
    pub tags: Vec<(String, String)>,
    /// The start position when it is not the standard one (`[SetUp "1"]`, `[FEN]`).
    pub setup: Option<Fen>,
    /// The moves played.
    pub moves: Vec<PgnMove>,
    /// The result.
    pub result: Outcome,
    /// A comment after the last move (how the game ended).
    pub final_comment: Option<String>,
}

/// Writes one game as PGN, lines at most 80 columns, ending with a blank line.
pub fn write_pgn(_game: &PgnGame) -> String {
    todo!()
}

/// A game read from a PGN file.
#[derive(Debug, Clone)]
pub struct ImportedGame {
    /// Tags in file order.
    pub tags: Vec<(String, String)>,
    /// The start position.
    pub start: Chess,
    /// The `[FEN]` tag's position when the game does not start from the standard position.
    pub setup: Option<Fen>,
    /// The moves, legal in sequence from `start`.
    pub moves: Vec<Move>,
    /// The `%clk` time after each move, where the file gives one.
    pub clocks: Vec<Option<Seconds>>,
    /// The result from the movetext's termination marker (or the Result tag).
    pub result: Outcome,
}

/// Why a PGN file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PgnError {
    /// Reading failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Reads every game of a PGN file.
pub fn read_games(_reader: impl std::io::Read) -> Result<Vec<ImportedGame>, PgnError> {
    todo!()
}
