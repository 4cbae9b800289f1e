//! Revisions: which state of a value this is, so that a reader can tell
//! "nothing changed since I last looked" in two words instead of comparing
//! the value (issue 38: the guard reads the board against the record after
//! every step, and most steps change neither).

use std::sync::atomic::{AtomicU64, Ordering};

/// The values made or copied so far, process-wide: each takes its own
/// number, so no two values share one, whatever thread made them.
static VALUES: AtomicU64 = AtomicU64::new(0);

/// A value's revision. The value's owner calls [`Revision::changed`] in
/// every method that may change it; a copy of the value (`Clone`) takes a
/// new number, since the two may change apart from then on. Two equal
/// [`Revision::seen`]s are then the same value in the same state.
#[derive(Debug)]
pub struct Revision {
    value: u64,
    changes: u64,
}

/// A revision as looked at: compare it with a later look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen(u64, u64);

impl Revision {
    /// The revision of a value just made.
    pub fn new() -> Revision {
        Revision {
            value: VALUES.fetch_add(1, Ordering::Relaxed),
            changes: 0,
        }
    }

    /// The value may have changed.
    pub fn changed(&mut self) {
        self.changes += 1;
    }

    /// This state of the value.
    pub fn seen(&self) -> Seen {
        Seen(self.value, self.changes)
    }
}

impl Default for Revision {
    fn default() -> Revision {
        Revision::new()
    }
}

impl Clone for Revision {
    /// A copy is another value: its changes are its own.
    fn clone(&self) -> Revision {
        Revision::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_look_is_equal_only_to_a_look_at_the_same_value_unchanged() {
        let mut a = Revision::new();
        let first = a.seen();
        assert_eq!(a.seen(), first);
        a.changed();
        assert_ne!(a.seen(), first);
        // A copy changed as often as the original is still another value.
        let b = a.clone();
        assert_ne!(b.seen(), a.seen());
        let mut c = Revision::new();
        c.changed();
        c.changed();
        assert_ne!(c.seen(), a.seen());
    }
}
