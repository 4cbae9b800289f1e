//! The debounce of board states: a state counts once it has settled.
//!
//! A board state counts once it lasted [`EngineConfig::settle_ms`] before
//! the next event, or a clock press or the end of the input came while it
//! stood. States that pass faster are a sliding piece or sensor flicker and
//! are never read as moves.
//!
//! [`EngineConfig::settle_ms`]: super::EngineConfig::settle_ms

use crate::event::Millis;

/// The current board state: when it appeared, the board event that made it,
/// and whether it has been read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Settle {
    since: Millis,
    basis: u64,
    unread: bool,
    /// A clock report came while the state was unread: it is given to the
    /// record once the state is read (only ever set while unread).
    clock_pending: bool,
}

impl Settle {
    /// The board changed at `at`, by the board event numbered `basis`.
    pub fn changed(&mut self, at: Millis, basis: u64) {
        self.since = at;
        self.basis = basis;
        self.unread = true;
    }

    /// When the current state appeared.
    pub fn since(&self) -> Millis {
        self.since
    }

    /// The board event that made the current state.
    pub fn basis(&self) -> u64 {
        self.basis
    }

    /// Whether the current state has not been read yet.
    pub fn is_unread(&self) -> bool {
        self.unread
    }

    /// Whether the unread state has stood long enough at `t` to be read.
    pub fn is_due(&self, t: Millis, settle_ms: Millis) -> bool {
        self.unread && t.saturating_sub(self.since) >= settle_ms
    }

    /// When the unread state will have settled.
    pub fn deadline(&self, settle_ms: Millis) -> Option<Millis> {
        self.unread.then(|| self.since.saturating_add(settle_ms))
    }

    /// A clock report came: returns whether it must wait for the unread
    /// state to be read (the board may show moves made before the report
    /// that are not read yet).
    pub fn hold_clock(&mut self) -> bool {
        self.clock_pending |= self.unread;
        self.unread
    }

    /// Marks the state unread again: it is to be read at its deadline.
    pub fn unread_again(&mut self) {
        self.unread = true;
    }

    /// Marks the state read; returns whether a clock report waited for it.
    pub fn mark_read(&mut self) -> bool {
        self.unread = false;
        std::mem::take(&mut self.clock_pending)
    }
}
