//! A square a blip would explain that the next scan still shows full:
//! the move was made, or another piece filled the square since (the
//! castling king on the square its rook slid over), weighed by the cost
//! table of docs/design/reconstruction.md.

use super::*;

impl Engine {
    /// The square a blip would explain stayed full at the next scan.
    pub(super) fn settle_stayed_full(&mut self, u: Unconfirmed, stories: Stories) {
        // The square stayed full: the move was made, unless only a
        // blip there, and then a move onto it, explains the board
        // (1...Bxg2 with e4 caught full, then 2.e4, read as 1...Be4
        // and a hand on the e3 pawn). Both are weighed on one more
        // scan, then listed.
        if stories.made_exact.is_empty()
            && stories.made_hand.is_empty()
            && !(stories.blip_exact.is_empty() && stories.blip_hand.is_empty())
        {
            // Nothing follows on from the move any more.
            return self.forget(u, stories);
        }
        if !stories.only_the_blip_exact() {
            return self.confirm(u);
        }
        if self.snapshots.count_after(u.seq) <= MAX_WEIGHED {
            self.scan.unconfirmed = Some(u);
            return;
        }
        self.list_stories(u, stories);
    }
}
