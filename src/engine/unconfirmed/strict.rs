//! Moves that wait on a board that names the pieces: any square shown
//! back drops them, and they are confirmed only while they still explain
//! the board.

use super::*;

impl Engine {
    /// Moves that wait on a board that names the pieces, once a later scan
    /// (`next`, the squares it showed occupied) came.
    pub(super) fn settle_strict(&mut self, u: Unconfirmed, next: Bitboard) {
        // Only while the moves still explain the board, with one more ply
        // or a hand, and one per press since: a story the board has left
        // is no story, whatever else says the moves were made (21...Re5
        // read from a rook caught on e5 on its way to take on e1, then
        // shown on e1: Black cannot move twice).
        let stands = may_reach(
            self.game().position(),
            &u.moves,
            &self.sensed,
            1 + u.presses,
        );
        // The clock may already say the moves were all made: a press for
        // each (Art. 6.2.1; 46.Kh7 Rf5 47.h5 shown with h5 the last
        // scan's, three presses, then the h5 pawn taken off for
        // 47...Rxh5). A blip on a square the last scan changed would leave
        // fewer moves and a hand.
        if stands
            && ((u.suspect & (next ^ u.shown)).is_empty()
                || self.gone_on(&u)
                || self.clock.presses_ahead >= u.moves.len())
        {
            self.confirm(u);
        }
    }

    /// On a board that identifies pieces, whether the board now shows the
    /// moves that wait gone on (a move made after them, or one in
    /// progress), and no line from the record that does not begin with
    /// them explains it: the square the next scan changed again was the
    /// next move's, not a blip (15.hxg4 shown, then the g4 pawn taken off
    /// for 15...Qxg4).
    fn gone_on(&self, u: &Unconfirmed) -> bool {
        let pos = self.game().position();
        if !may_reach(pos, &u.moves, &self.sensed, 1) {
            return false;
        }
        let other = |line: &Vec<Move>| !line.starts_with(&u.moves);
        let (exact, _) = exact_explanations(pos, &self.sensed, u.moves.len() + 1);
        !exact.iter().any(other)
            && !hand_explanations(pos, &self.sensed, u.moves.len())
                .iter()
                .any(other)
    }
}
