//! Moves that wait for the next scan, against a blip that the scans
//! since make the cheaper story (the cost table of
//! docs/design/reconstruction.md): a blip is the rarer story only against
//! moves the scans showed, not against plies nobody saw.

use super::*;
use crate::engine::cost::{BLIP, MARGIN};

impl Engine {
    /// Whether the blip story costs less than the moves made: a bishop's
    /// capture and a rook move onto its square, read from the rook caught
    /// gone for one scan (both plies unseen), then the scan after it shows
    /// the rook back, which the moves made explain only by more plies
    /// nobody saw.
    pub(super) fn blip_cheaper(&self, u: &Unconfirmed, stories: &Stories) -> bool {
        self.story_costs(u, stories)
            .is_some_and(|(made, blip)| blip < made)
    }

    /// The blip the cheaper story: far cheaper, the square was a blip;
    /// within the margin, one more scan, then both are listed (a wrong
    /// move is worse than a late one).
    pub(super) fn weigh_cheaper_blip(&mut self, u: Unconfirmed, stories: Stories) {
        let Some((made, blip)) = self.story_costs(&u, &stories) else {
            return self.confirm(u);
        };
        if made > blip + MARGIN {
            self.forget(u, stories);
        } else if self.snapshots.count_after(u.seq) <= MAX_WEIGHED {
            self.scan.unconfirmed = Some(u);
        } else {
            self.list_stories(u, stories);
        }
    }

    /// What the cheapest line of each story costs (the cost table): the
    /// moves made, and the squares shown back read as blips (3 each);
    /// each line pays 2 per ply no scan showed, 1 per scan that caught a
    /// hand at work and 3 per press its completed moves lack. `None` if
    /// either story has no line.
    fn story_costs(&self, u: &Unconfirmed, stories: &Stories) -> Option<(usize, usize)> {
        let pos = self.game().position();
        let made_lines = [&stories.made_exact[..], &stories.made_hand[..]].concat();
        let blip_lines = [&stories.blip_exact[..], &stories.blip_hand[..]].concat();
        let story = |lines, snapshots| Story {
            lines,
            snapshots,
            since: self.game().basis(u.ply),
            presses: self.clock.in_use.then_some(self.clock.presses_ahead),
            weighed: u.seq,
        };
        let made = story(&made_lines, &self.snapshots).cost(pos, |_| 0)?;
        let blips = BLIP * stories.back.count();
        let blip = story(&blip_lines, &stories.repaired).cost(pos, |_| blips)?;
        Some((made, blip))
    }
}
