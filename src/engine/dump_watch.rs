//! The observation model of a dump: what a full reading after a
//! reconnection (or after square-by-square reports) leaves unsaid.
//!
//! A dump shows the position alone, after any number of plies nobody saw.
//! Until the record has caught up past it, any square it showed full may
//! have been emptied and refilled unseen, so readings after it weigh
//! differently (`after_dump.rs`, `resynchronise.rs`).

use shakmaty::Bitboard;

use super::resynchronise;

/// What the engine keeps about the last dump and the link's state.
#[derive(Debug, Clone, Default)]
pub(super) struct DumpWatch {
    /// The sequence number of the last dump: until the record has caught
    /// up past it, squares may have changed unseen before it.
    pub(super) dump_seq: u64,
    /// The event of a scanning board's first scan after the link came
    /// back (0: none yet).
    pub(super) reconnected_seq: u64,
    /// The squares the last dump showed occupied: any of them may have
    /// been emptied and refilled unseen before it.
    pub(super) unseen: Bitboard,
    /// The lines that reach what the last dump showed from the record's
    /// position, by (dump event, record's half-moves): searched once per
    /// dump and record, then extended by the moves reported since
    /// (`resynchronise.rs`). `None` inside: over budget.
    pub(super) dump_lines: Option<((u64, usize), Option<resynchronise::Found>)>,
    /// A dump after a reconnection on an occupancy board is being read:
    /// every move recorded from it was made while nobody was listening,
    /// and is inferred from the squares alone.
    pub(super) reading_dump: bool,
}
