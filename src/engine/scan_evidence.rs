//! The observation model of snapshots: what one scan showed that only a
//! later scan can settle.
//!
//! A scan is any physical instant: a piece in the hand, a captured piece
//! already off, castling half done, a piece caught on its path. What the
//! last scan could not decide is kept here until the next one tells (a
//! blip clears, a sliding piece moves on, a hand lets go).

use shakmaty::{Bitboard, Move};

use super::{slide_stood, unconfirmed::Unconfirmed};
use crate::event::Millis;

/// A takeback one scan showed, held for the next (see
/// [`super::Engine::takes_back_held`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct HeldTakeback {
    /// The record's length when it was held.
    pub(super) ply: usize,
    /// The record's length the scan went back to.
    pub(super) back_to: usize,
    /// The squares that scan changed where the board differed from the
    /// record, and which of them it showed full.
    pub(super) suspects: Bitboard,
    pub(super) shown: Bitboard,
    /// When the scan showed it, and its event.
    pub(super) made_at: Millis,
    pub(super) basis: u64,
}

/// What the last scans left for the next one to settle.
#[derive(Debug, Clone, Default)]
pub(super) struct ScanEvidence {
    /// The record's length, and the lines a scan was read among as a move
    /// in progress from that position (occupancy snapshots only).
    pub(super) held: Option<(usize, Vec<Vec<Move>>)>,
    /// The record's length, and the lines that exactly explained a scan
    /// from that position which was read as a hand at work instead
    /// (identifying snapshots only).
    pub(super) passed: Option<(usize, Vec<Vec<Move>>)>,
    /// A move a scan showed, held back as a piece that may be sliding on
    /// (`slide_stood.rs`), and the gaps between scans that tell.
    pub(super) caught_slide: Option<slide_stood::CaughtSlide>,
    pub(super) scan_period: slide_stood::ScanPeriod,
    /// Moves a snapshot showed that the next scan must confirm.
    pub(super) unconfirmed: Option<Unconfirmed>,
    /// The last snapshot, when nothing explained it: if the next scan
    /// empties again the one square it filled, that was a blip.
    pub(super) unexplained: Option<u64>,
    /// A line too long to record that only the last scan showed: listed
    /// for the arbiter if the board still stands so when pieces would be
    /// taken for displaced (a blip the next scan clears is no candidate).
    /// On occupancy it waits for the next scan only (`put_off`).
    pub(super) unlisted: Option<Vec<Vec<Move>>>,
    /// On occupancy, `unlisted` was put off at the record's ply given,
    /// with the squares only the scan that showed it changed (a blip that
    /// scan caught, if one is back as the record has it at the next scan
    /// and the line cannot have gone on to the board), and that scan's
    /// event.
    pub(super) put_off: Option<(usize, Bitboard, u64)>,
    /// On occupancy, a takeback only the last scan showed, held until the
    /// next one: a blip that scan caught may explain it. The record's
    /// length and the ply it goes back to, the squares a blip would
    /// explain and what the scan showed on them, and when.
    pub(super) takeback_held: Option<HeldTakeback>,
}
