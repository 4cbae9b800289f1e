//! A panic in the engine is a bug in eboard, never a silent failure: where a
//! board's engine is stepped (`replay`, the daemon's boards) the panic is
//! caught and reported with what the user needs, the input's line or the
//! board and its event.
//!
//! The test-only hook: the hidden environment variable
//! `EBOARD_INJECT_PANIC=[BOARD:]N` makes the step of the `N`th board event
//! (from 1) of board `BOARD` (any board when left out, such as a replayed
//! script) panic, so that the tests can check what happens when the engine
//! fails.

use std::panic::{AssertUnwindSafe, catch_unwind};

/// The variable of the test-only hook.
pub const INJECT_VAR: &str = "EBOARD_INJECT_PANIC";

/// Runs `f`; a panic in it comes back as its message.
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|payload| {
        payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_owned())
    })
}

/// A panic the test-only hook asks for: at the `event`th board event of
/// `board` (any board if `None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Injected {
    board: Option<u32>,
    event: u64,
}

impl Injected {
    /// The hook as the environment sets it, if it does (and reads).
    pub fn from_env() -> Option<Injected> {
        std::env::var(INJECT_VAR).ok()?.parse().ok()
    }

    /// Panics if this is the step the hook names: board event number
    /// `event` (from 1) of board `board`.
    pub fn check(self, board: Option<u32>, event: u64) {
        if event == self.event && (self.board.is_none() || self.board == board) {
            panic!("injected by {INJECT_VAR} at board event {event}");
        }
    }
}

impl std::str::FromStr for Injected {
    type Err = String;

    fn from_str(s: &str) -> Result<Injected, String> {
        let bad = || format!("{INJECT_VAR}: expected [BOARD:]EVENT, not {s:?}");
        let (board, event) = match s.split_once(':') {
            Some((b, e)) => (Some(b.trim().parse().map_err(|_| bad())?), e),
            None => (None, s),
        };
        let event = event.trim().parse().map_err(|_| bad())?;
        Ok(Injected { board, event })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_comes_back_as_its_message() {
        assert_eq!(catch(|| 7), Ok(7));
        let caught: Result<(), String> = catch(|| panic!("square {}", "e4"));
        assert_eq!(caught, Err("square e4".to_owned()));
    }

    #[test]
    fn the_hook_names_a_board_and_an_event() {
        let hook: Injected = "3:40".parse().unwrap();
        assert_eq!(
            hook,
            Injected {
                board: Some(3),
                event: 40
            }
        );
        hook.check(Some(2), 40);
        hook.check(Some(3), 39);
        assert!(catch(|| hook.check(Some(3), 40)).is_err());
        let any: Injected = "5".parse().unwrap();
        assert!(catch(|| any.check(None, 5)).is_err());
        assert!("x:5".parse::<Injected>().is_err());
    }
}
