//! Lines listed on a board that names the pieces and only scans, followed
//! scan by scan. While the record waits on stories the scans told
//! (`out_of_sync`), each later scan is read against them, the hypotheses:
//! each goes on from its own end, and is weighed with every scan since the
//! record's position by the cost table (2 per ply no scan showed, 1 per
//! scan that caught a piece on its path); those within the margin of the
//! cheapest stay. Not searched afresh from the record's position, whose
//! shortest line would replace them, need be none of them, and reaches no
//! further than three moves (docs/design/reconstruction.md, the tracker:
//! the stories are the hypotheses, extended). Stories that leave the same
//! player to move in the same position stay listed to the end: the same
//! stream comes from either game.

use shakmaty::{Chess, Move, Position};

use super::{
    Engine, Scanned,
    cost::{MARGIN, SLIDE},
    evaluate::Observed,
    follow::play,
    held_at_dump::slid_through,
    hypotheses::SNAPSHOT_PLIES,
    progress::hand_in_progress,
    scanned::{MAX_PLIES, caught_explanations, common_prefix, exact_explanations},
};
use crate::resync::{Limits, SyncState};

/// A story a scan is read by: the moves from the record's position, its
/// cost, whether the last scan shows a move in progress after them, and
/// how many of them are completed (the next one made, or the next
/// player's hand at work; not a move whose own piece is in the hand).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Story {
    line: Vec<Move>,
    cost: usize,
    hand: bool,
    completed: usize,
}

impl Engine {
    /// Reads a scan of a board that names the pieces against the lines
    /// listed (see the module). `None`: nothing listed here, or no listed
    /// line goes on to what the scan shows: it is read as any other.
    /// `Some`: whether a hand is at work.
    pub(super) fn follow_scan_listing(&mut self, at: Observed) -> Option<bool> {
        if at.scanned != Scanned::Snapshot
            || !self.sensed.identifies_all()
            || !self.snapshots.only()
            || self.dumped
            || self.unseen_since_reconnection()
            || self.hypotheses.state != SyncState::Ambiguous
            || self.hypotheses.lines.is_empty()
            || self.game().is_over()
            || self.phase.is_restoring()
        {
            return None;
        }
        let stories = self.listed_stories_gone_on(at.closing);
        let stories = stories?;
        if stories.len() > Limits::default().max_candidates {
            return None;
        }
        let hand = stories.iter().any(|story| story.hand);
        // At the input's end the board is read again as the players left it.
        self.hand_awaited = hand;
        let lines: Vec<Vec<Move>> = stories.iter().map(|story| story.line.clone()).collect();
        // The moves every story begins with are completed (Art. 6.2.1)
        // where another follows them, or the next player's hand: recorded.
        let completed = stories.iter().map(|s| s.completed);
        let mut certain = common_prefix(lines.iter());
        certain.truncate(completed.min().unwrap_or(0));
        let listed = self
            .hypotheses
            .lines
            .iter()
            .filter(|listed| lines.iter().all(|line| line.starts_with(listed)))
            .map(Vec::len)
            .max()
            .unwrap_or(0);
        let mut rest: Vec<Vec<Move>> = Vec::new();
        for line in &lines {
            let tail = line[certain.len()..].to_vec();
            if !tail.is_empty() && !rest.contains(&tail) {
                rest.push(tail);
            }
        }
        let slid = rest.len() == 1 && rest[0].len() == 1 && lines.contains(&certain);
        match lines.as_slice() {
            // One story left, gone on by what one scan is trusted with,
            // the board standing as it shows: recorded.
            [line] if !hand && line.len() - listed <= SNAPSHOT_PLIES => {
                let line = line.clone();
                self.hypotheses.clear();
                self.record(&line, at.made_at, at.basis);
                return Some(false);
            }
            // Only the last move differs, which the scan showed made or
            // caught on its way on (a slide): held as any move a scan
            // caught so, until the next scan says it stood.
            _ if slid => {
                self.hypotheses.clear();
                if !certain.is_empty() {
                    self.record(&certain, at.made_at, at.basis);
                }
                self.hold_caught_slide(rest[0][0], at.made_at);
                return Some(true);
            }
            _ if !certain.is_empty() => {
                self.hypotheses.clear();
                self.record(&certain, at.made_at, at.basis);
                if rest.is_empty() {
                    return Some(hand);
                }
                self.ambiguous(rest, false);
            }
            _ => self.ambiguous(lines, false),
        }
        let cut = certain.len();
        self.hypotheses.costs = stories
            .into_iter()
            .filter(|story| story.line.len() > cut)
            .map(|story| (story.line[cut..].to_vec(), story.cost))
            .collect();
        self.hypotheses.weighed = self.snapshots.last_pieces_seq().unwrap_or(0);
        Some(hand)
    }

    /// Whether the lines listed were followed here: at the input's end, a
    /// hand one of them was read with is read again as the board stands.
    pub(super) fn listing_followed(&self) -> bool {
        self.hypotheses.state == SyncState::Ambiguous && self.hypotheses.weighed > 0
    }

    /// The listed lines gone on to what the last scan shows, those within
    /// the margin of the cheapest, cheapest first; `None` if none goes on.
    /// `closing`: the players ended the game, the board stands as they
    /// left it: no hand is at work.
    fn listed_stories_gone_on(&self, closing: bool) -> Option<Vec<Story>> {
        let pos = self.game().position();
        let mut stories: Vec<Story> = Vec::new();
        for listed in &self.hypotheses.lines {
            for story in self.listed_gone_on(pos, listed) {
                match stories.iter_mut().find(|s| s.line == story.line) {
                    Some(s) => {
                        s.completed = s.completed.min(story.completed);
                        s.cost = s.cost.min(story.cost);
                    }
                    None => stories.push(story),
                }
            }
        }
        stories.retain(|s| !(closing && s.hand));
        let cheapest = stories.iter().map(|s| s.cost).min()?;
        stories.retain(|s| s.cost <= cheapest + MARGIN);
        stories.sort_by_key(|s| s.cost);
        Some(stories)
    }

    /// What `line`, going on from `listed` (played from `pos`, ending in
    /// `end`), costs through the scans since the record's position
    /// (`hand`: the last shows a move in progress after it). A line listed
    /// here before adds the scans since to what it cost then (the scans
    /// kept need not reach back to the record's position: a listing may
    /// stand to the game's end); a line listed otherwise is weighed from
    /// the record's position.
    fn story_cost(
        &self,
        (pos, listed, end): (&Chess, &[Move], &Chess),
        line: &[Move],
        hand: bool,
    ) -> Option<usize> {
        let known = self
            .hypotheses
            .costs
            .iter()
            .find(|(l, _)| l.as_slice() == listed)
            .map(|&(_, cost)| cost);
        match known {
            Some(cost) if self.hypotheses.weighed > 0 && line.starts_with(listed) => {
                let more = &line[listed.len()..];
                let weighed = self.hypotheses.weighed;
                Some(cost + self.snapshots.story_cost(end, more, weighed, hand)?)
            }
            _ => {
                let since = self.game().basis(self.game().ply());
                self.snapshots.story_cost(pos, line, since, hand)
            }
        }
    }

    /// `listed` gone on to what the last scan shows: its end shown, the
    /// fewest moves from it (up to a scan's reach), or a move in progress
    /// (a piece in the hand or caught on its path) after the fewest plies.
    /// A last move one scan showed may have been its piece caught on its
    /// way on: from the line without it, a move of that piece through its
    /// square goes on too (that scan a slide), and while that piece is in
    /// the hand the line stays as it stands.
    fn listed_gone_on(&self, pos: &Chess, listed: &[Move]) -> Vec<Story> {
        let mut found = Vec::new();
        let Some(end) = play(pos, listed) else {
            return found;
        };
        let from = (pos, listed, &end);
        let push = |line: Vec<Move>, hand: bool, extra: usize, found: &mut Vec<Story>| {
            if let Some(cost) = self.story_cost(from, &line, hand) {
                let completed = line.len() - usize::from(!hand);
                found.push(Story {
                    line,
                    cost: cost + extra,
                    hand,
                    completed,
                });
            }
        };
        if self.sensed.shows(end.board()) {
            push(listed.to_vec(), false, 0, &mut found);
            return found;
        }
        let (gone, fewest) = exact_explanations(&end, &self.sensed, MAX_PLIES);
        for more in gone {
            push([listed, &more].concat(), false, 0, &mut found);
        }
        // A move in progress after the fewest plies, no more than the
        // board shown needs (each ply more is one more story per move).
        let caught = caught_explanations(&end, &self.sensed, 2);
        let hand_plies = caught.iter().map(Vec::len).min().unwrap_or(0);
        for more in caught {
            if more.len() != hand_plies || fewest.is_some_and(|fewest| more.len() > fewest) {
                continue;
            }
            let after = play(&end, &more).unwrap_or_else(|| end.clone());
            // A piece caught on its path, not in the hand: a slide.
            let slide = if hand_in_progress(&after, &self.sensed) {
                0
            } else {
                SLIDE
            };
            push([listed, &more].concat(), true, slide, &mut found);
        }
        found.extend(self.slid_on(pos, listed));
        found
    }

    /// The stories in which the piece of `listed`'s last move, which a
    /// scan showed on its new square, was caught there on its way on (a
    /// slide, 1): a move of that piece from the same square through that
    /// one, or that piece in the hand again (the line as it stands).
    fn slid_on(&self, pos: &Chess, listed: &[Move]) -> Vec<Story> {
        let mut found = Vec::new();
        let Some((&last, stage)) = listed.split_last() else {
            return found;
        };
        let Some(before) = play(pos, stage).filter(|_| !last.is_capture()) else {
            return found;
        };
        let known = self
            .hypotheses
            .costs
            .iter()
            .find(|(l, _)| l.as_slice() == listed)
            .map(|&(_, cost)| cost)
            .filter(|_| self.hypotheses.weighed > 0);
        let since = self.game().basis(self.game().ply());
        let weighed = self.hypotheses.weighed;
        for more in exact_explanations(&before, &self.sensed, MAX_PLIES).0 {
            if !more.first().is_some_and(|&m| slid_through(last, m)) {
                continue;
            }
            let line = [stage, &more].concat();
            let cost = match known {
                Some(cost) => self
                    .snapshots
                    .story_cost(&before, &more, weighed, false)
                    .map(|add| cost + SLIDE + add),
                None => self.snapshots.story_cost(pos, &line, since, false),
            };
            if let Some(cost) = cost {
                let completed = line.len() - 1;
                found.push(Story {
                    line,
                    cost,
                    hand: false,
                    completed,
                });
            }
        }
        let lifted = |sq| self.sensed.piece_at(sq).is_none();
        let cost = known.or_else(|| self.snapshots.story_cost(pos, listed, since, true));
        if last.from().is_some_and(lifted)
            && lifted(last.to())
            && hand_in_progress(&before, &self.sensed)
            && let Some(cost) = cost
        {
            // Its last move's own piece in the hand: not completed.
            found.push(Story {
                line: listed.to_vec(),
                cost,
                hand: true,
                completed: stage.len(),
            });
        }
        found
    }
}
