//! Castling begun with the rook: the rook's move is read as a rook move
//! (Art. 4.4.2 makes the king's move the castling's first; the board sees
//! the rook first), and the king lifted after it by the same player, before
//! that move was completed, is the castling going on: a piece in the hand
//! (castling half done in docs/design/reconstruction.md, 0 while the move
//! is not completed), not a displaced piece however long the hand holds it.

use shakmaty::Position;

use super::{Engine, Reading, Scanned, read::same_move_in_hand};

impl Engine {
    /// A state nothing explained (`Wait`) that [`Engine::half_castling`]
    /// explains is read as a hand at work.
    pub(super) fn weigh_half_castling(&self, reading: Reading, scanned: Scanned) -> Reading {
        if matches!(reading, Reading::Wait) && scanned == Scanned::No && self.half_castling() {
            Reading::Hand
        } else {
            reading
        }
    }

    /// Whether the board shows the last move, a rook move not yet completed
    /// that castling could change into, with the mover's king lifted.
    pub(super) fn half_castling(&self) -> bool {
        let game = self.game();
        let n = game.ply();
        if game.is_over() || self.observation.scanned() {
            return false;
        }
        let Some(last) = n.checked_sub(1).and_then(|i| game.moves().get(i)) else {
            return false;
        };
        let Some(before) = game.position_at(n - 1) else {
            return false;
        };
        let castles = last.completed_at.is_none()
            && crate::legal::legal_moves(before)
                .iter()
                .any(|&c| c.is_castle() && same_move_in_hand(last.mv, c));
        let record = game.position().board().occupied();
        castles
            && before
                .board()
                .king_of(before.turn())
                .is_some_and(|k| self.sensed.occupied() == record.without(k))
    }
}
