//! A capture an occupancy board never showed on its square: the capturing
//! piece can take the captured one's place faster than the board reports a
//! change (its debounce), so the capture square never reads empty and only
//! the capturing piece's square does.

use shakmaty::{Color, Move, Position, Role};

use super::Engine;
use crate::event::Millis;

impl Engine {
    /// The legal captures by the mover's piece that the board shows
    /// gone, when that square is all the board shows changed (occupancy
    /// square events only). Completed by a press, it is the move made:
    /// a piece in the hand at a press, or taken off the board, would be an
    /// illegal move, and a legal explanation costs less (see
    /// docs/design/reconstruction.md, the cost table).
    fn unseen_captures(&self, color: Color) -> Vec<Move> {
        if self.scanned || self.sensed.identifies_all() || self.game().is_over() {
            return Vec::new();
        }
        let pos = self.game().position();
        let board = pos.board();
        let sensed = self.sensed.occupied();
        let from = (board.occupied() & !sensed).single_square();
        let Some(from) =
            from.filter(|_| pos.turn() == color && (sensed & !board.occupied()).is_empty())
        else {
            return Vec::new();
        };
        pos.legal_moves()
            .into_iter()
            .filter(|m| {
                m.from() == Some(from)
                    && m.is_capture()
                    && !m.is_en_passant()
                    && m.promotion().is_none_or(|r| r == Role::Queen)
            })
            .collect()
    }

    /// At a press by `color`: records and completes the capture the board
    /// did not show on its square, if there is one; returns whether it did.
    pub(super) fn press_completes_unseen_capture(&mut self, color: Color, t: Millis) -> bool {
        match self.unseen_captures(color)[..] {
            [] => false,
            [m] => {
                self.record(&[m], self.settle.since(), self.settle.basis());
                self.complete_all(t);
                self.evaluate_at(false);
                true
            }
            ref several => {
                // Legal explanations survive: the next moves tell them
                // apart; nobody is accused meanwhile.
                self.ambiguous(several.iter().map(|&m| vec![m]).collect(), false);
                true
            }
        }
    }
}
