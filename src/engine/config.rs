//! How the engine reads the board.

use super::Orientation;
use crate::{
    event::Millis,
    rules::{Laws, RuleSet, Rules},
};

/// How the engine reads the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineConfig {
    /// How long a board state must stand before it counts (ms). Shorter
    /// states are slides and flicker.
    pub settle_ms: Millis,
    /// The rule set of the games.
    pub rules: RuleSet,
    /// The edition of the Laws.
    pub laws: Laws,
    /// How long (ms) a board state that no move explains may stand before
    /// the arbiter is told pieces are displaced (Art. 7.4, 7.6).
    pub displaced_ms: Millis,
    /// Watch for irregularities (illegal moves, touch-move, displaced
    /// pieces). Off, the engine only records the moves (a broadcast-only
    /// reader; also how the cost of the checks is measured).
    pub arbiter: bool,
    /// Which way round the board stands, when the organiser knows it (an
    /// occupancy board turned round looks the same at the start). A board
    /// that identifies pieces and dumps the start position turned round is
    /// recognised without it.
    pub orientation: Orientation,
}

impl Default for EngineConfig {
    fn default() -> EngineConfig {
        EngineConfig {
            settle_ms: 150,
            rules: RuleSet::Standard,
            laws: Laws::Fide2023,
            displaced_ms: 2000,
            arbiter: true,
            orientation: Orientation::Normal,
        }
    }
}

impl EngineConfig {
    /// The Laws the games are played under.
    pub fn rules(&self) -> Rules {
        Rules {
            set: self.rules,
            laws: self.laws,
        }
    }
}
