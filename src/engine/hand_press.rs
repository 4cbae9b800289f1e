//! A press while the board shows the mover's piece in the hand (square
//! events): the board reports a place only once it has stood the
//! debounce, and later still when a blip on the landing square restarts
//! it (issue 34, cause 3), while a press is reported at once. So a press
//! is no evidence of a piece in the hand until the settle time has passed
//! with nothing put down: judged at once, the piece on its way down would
//! read as a capture the board never showed, or as an illegal move
//! (docs/design/reconstruction.md, the observation models).

use shakmaty::{Color, Position};

use super::Engine;
use crate::event::{BoardEvent, Millis};

/// A press kept while the board showed only lifts since the record's
/// position: who pressed, and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HandPress {
    color: Color,
    at: Millis,
}

impl Engine {
    /// Keeps a press by the player to move for the settle time when all
    /// the board reported since the record's position is lifts, his own
    /// piece among them; returns whether it did.
    pub(super) fn keep_hand_press(&mut self, color: Color, t: Millis) -> bool {
        let game = self.game();
        let pos = game.position();
        if self.observation.scanned()
            || pos.turn() != color
            || self.may_lag()
            || self.phase.is_restoring()
            || game.is_over()
        {
            return false;
        }
        let touched = self.sensed.touched_since(game.basis(game.ply()));
        let put_down = touched & self.sensed.occupied();
        let off = pos.us() & !self.sensed.occupied();
        if put_down.any() || off.is_empty() {
            return false;
        }
        self.clock.hand_press = Some(HandPress { color, at: t });
        true
    }

    /// Before `event` at `t` (`None`: time passing; at the end of the input
    /// `t` is past every settle time): the press kept is judged. A place
    /// within the settle time is the piece coming down, and the press
    /// completes the move the board then shows; anything else, or the
    /// settle time gone with nothing put down, is judged on the board as it
    /// stood at the press.
    pub(super) fn judge_hand_press(&mut self, event: Option<&BoardEvent>, t: Millis) {
        let Some(kept) = self.clock.hand_press else {
            return;
        };
        let soon = t.saturating_sub(kept.at) < self.config.settle_ms;
        match event {
            None | Some(BoardEvent::Clock(..)) if soon => {}
            Some(BoardEvent::Place(..)) if soon => {
                self.clock.hand_press = None;
                self.press_ahead_of_board(kept.color);
            }
            _ => {
                self.clock.hand_press = None;
                self.judge_press(kept.color, kept.at);
            }
        }
    }
}
