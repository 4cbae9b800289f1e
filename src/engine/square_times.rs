//! The observation model of square events with a settle time: when each
//! square was last emptied or filled, so that a report undone within the
//! settle time can be read as a blip, a piece put back, or a capture.

use crate::event::Millis;

use super::{brief, held_lift};

/// Per-square timings of an event board's reports.
#[derive(Debug, Clone)]
pub(super) struct SquareTimes {
    /// Per square, when a piece was last lifted from it and what the board
    /// said it was: a piece put back within the settle time is a blip.
    pub(super) lifted: [Option<(Millis, Option<shakmaty::Piece>, u64)>; 64],
    /// Per square, when a piece was last put on it while it was empty, and
    /// when the lift it was taken to put back came (its touch forgotten).
    pub(super) placed: [Option<(Millis, u64, Option<Millis>)>; 64],
    /// Squares refilled within the settle time while a piece was in the
    /// air: a blip or a capture (see `brief.rs`).
    pub(super) brief: brief::BriefRefills,
    /// Lifts that would complete a move, until they outlive a blip (see
    /// `held_lift.rs`).
    pub(super) held_lifts: Vec<held_lift::HeldLift>,
}

impl Default for SquareTimes {
    fn default() -> SquareTimes {
        SquareTimes {
            lifted: [None; 64],
            placed: [None; 64],
            brief: brief::BriefRefills::default(),
            held_lifts: Vec::new(),
        }
    }
}
