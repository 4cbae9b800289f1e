//! Which of a line's positions the snapshots showed: the plies a line
//! infers, those only the last snapshot shows, and how many are trusted.

use shakmaty::{Bitboard, Chess, Move};

use super::{Snapshots, earliest, latest, pinned_in, states};

impl Snapshots {
    /// How many of `line`'s moves, played from `pos` (shown by event
    /// `since`) through the snapshots, only the last snapshot shows: those
    /// after the latest position of the line that a snapshot before it
    /// showed, exactly or with pieces of the next move only lifted (all of
    /// them when none did).
    pub fn plies_shown_last(
        &self,
        pos: &Chess,
        line: &[Move],
        since: u64,
        settling: Bitboard,
    ) -> usize {
        let Some(pinned) = self.pinned(pos, line, since, settling) else {
            return line.len();
        };
        let before_last = pinned.len().saturating_sub(1);
        line.len()
            - pinned[..before_last]
                .iter()
                .flatten()
                .map(|&(p, _)| p)
                .max()
                .unwrap_or(0)
    }

    /// How many of `line`'s first moves, played from `pos` (shown by event
    /// `since`) through the snapshots, are trusted: those up to the last
    /// position of the line a snapshot showed (exactly or with pieces of
    /// the next move only lifted) such that no stretch of more than `most`
    /// moves before it rests on one snapshot alone. A snapshot may catch a
    /// hand in motion, and a long stretch one snapshot explains is often a
    /// detour nobody played.
    pub fn trusted_plies(
        &self,
        pos: &Chess,
        line: &[Move],
        since: u64,
        settling: Bitboard,
        most: usize,
    ) -> usize {
        self.trusted(pos, line, since, settling, most, false)
    }

    /// [`Snapshots::trusted_plies`], where one stretch may be a move longer
    /// if a snapshot showed exactly the position it ends in and a later one
    /// the line gone on from there, within `most` moves: the board stood as
    /// the stretch leaves it, not as a hand in motion happened to, and went
    /// on as the line does.
    pub fn followed_plies(
        &self,
        pos: &Chess,
        line: &[Move],
        since: u64,
        settling: Bitboard,
        most: usize,
    ) -> usize {
        self.trusted(pos, line, since, settling, most, true)
    }

    fn trusted(
        &self,
        pos: &Chess,
        line: &[Move],
        since: u64,
        settling: Bitboard,
        most: usize,
        followed: bool,
    ) -> usize {
        let Some(pinned) = self.pinned(pos, line, since, settling) else {
            return 0;
        };
        // Each position pinned, and whether a snapshot showed it exactly.
        let mut pins: Vec<(usize, bool)> = Vec::new();
        for (p, exact) in pinned.into_iter().flatten() {
            match pins.iter_mut().find(|(q, _)| *q == p) {
                Some(pin) => pin.1 |= exact,
                None => pins.push((p, exact)),
            }
        }
        pins.sort_unstable();
        let mut trusted = 0;
        for (i, &(p, exact)) in pins.iter().enumerate() {
            let longer = followed
                && exact
                && p - trusted == most + 1
                && pins.get(i + 1).is_some_and(|&(next, _)| next - p <= most);
            if p - trusted > most && !longer {
                break;
            }
            trusted = p;
        }
        trusted
    }

    /// How many of `line`'s plies (played from `pos`, shown by event
    /// `since`) leave a position no snapshot after `since` shows, exactly
    /// or with pieces of the next move only lifted: the plies the line
    /// infers. All of them when the line does not pass through the
    /// snapshots.
    pub fn plies_unshown(&self, pos: &Chess, line: &[Move], since: u64) -> usize {
        self.unshown_plies(pos, line, since).len()
    }

    /// The plies of `line` (1 for its first move), played from `pos`
    /// (shown by event `since`), whose positions no snapshot after
    /// `since` showed, exactly or with pieces of the next move only
    /// lifted: the moves the line infers. All of them when the line does
    /// not pass through the snapshots.
    pub fn unshown_plies(&self, pos: &Chess, line: &[Move], since: u64) -> Vec<usize> {
        let pinned = pinned_in(&self.after(since), pos, line, Bitboard::EMPTY);
        unshown(line, pinned)
    }

    /// As [`Snapshots::unshown_plies`], for a line while later scans may
    /// already show the moves after it, or a hand at work after it (a move
    /// confirmed at the scan after the one that showed it, candidates
    /// followed on, a story ending with a capture begun): the fewest
    /// plies unshown by a run of the snapshots after `since`, from the
    /// first, that the line passes through.
    pub fn unshown_plies_so_far(&self, pos: &Chess, line: &[Move], since: u64) -> Vec<usize> {
        unshown(line, self.pinned_so_far(pos, line, since))
    }

    /// Of the plies [`Snapshots::unshown_plies_so_far`] gives, how many no
    /// snapshot saw any trace of: every square the ply changed reads, in
    /// the next position of the line a snapshot showed, as it did before
    /// the ply (14...Bxc3 15.b4 read from one scan of b2 empty: the b4
    /// square the bishop left is full again, and c3 stays full).
    pub fn traceless_plies(&self, pos: &Chess, line: &[Move], since: u64) -> usize {
        let pinned = self.pinned_so_far(pos, line, since);
        let Some(pinned) = &pinned else {
            return 0;
        };
        let states = states(pos, line, Bitboard::EMPTY);
        let shown_at: Vec<usize> = pinned.iter().flatten().map(|&(p, _)| p).collect();
        unshown(line, Some(pinned.clone()))
            .into_iter()
            .filter(|&ply| {
                let (before, after) = (states[ply - 1].occupied, states[ply].occupied);
                shown_at
                    .iter()
                    .filter(|&&p| p > ply)
                    .min()
                    .is_some_and(|&p| ((states[p].occupied ^ before) & (before ^ after)).is_empty())
            })
            .count()
    }

    /// How the run of the snapshots after `since`, from the first, that
    /// `line` passes through with the fewest plies unshown pins its
    /// positions (`None` if it passes through none of them).
    fn pinned_so_far(
        &self,
        pos: &Chess,
        line: &[Move],
        since: u64,
    ) -> Option<Vec<Option<(usize, bool)>>> {
        let shown = self.after(since);
        (0..=shown.len())
            .rev()
            .filter_map(|n| pinned_in(&shown[..n], pos, line, Bitboard::EMPTY))
            .min_by_key(|pinned| unshown(line, Some(pinned.clone())).len())
    }

    /// How many snapshots after event `since`, but for that of event
    /// `weighed` if any (weighed on its own), show no position of `line` (played
    /// from `pos`) exactly: each caught a move in progress, its pieces
    /// lifted. Read as the longest run of them, from the first, that the
    /// line passes through, every later one a hand at work after it; the
    /// fewest such over the runs.
    pub fn caught_in_motion(
        &self,
        pos: &Chess,
        line: &[Move],
        since: u64,
        weighed: Option<u64>,
    ) -> usize {
        let seqs: Vec<u64> = self
            .list
            .iter()
            .map(|&(seq, _)| seq)
            .filter(|&seq| seq > since)
            .collect();
        let shown = self.after(since);
        let states = states(pos, line, Bitboard::EMPTY);
        let hands = |exact: &dyn Fn(usize) -> bool| {
            (0..shown.len())
                .filter(|&j| Some(seqs[j]) != weighed && !exact(j))
                .count()
        };
        (0..=shown.len())
            .rev()
            .filter_map(|n| {
                let run = &shown[..n];
                let (first, last) = (earliest(&states, run)?, latest(&states, run)?);
                Some(hands(&|j| {
                    j < n && (first[j]..=last[j]).any(|i| states[i].occupied == run[j])
                }))
            })
            .min()
            .unwrap_or_else(|| hands(&|_| false))
    }
}

/// The plies of `line` (1 for its first move) no snapshot pins (all when
/// the line does not pass through the snapshots).
fn unshown(line: &[Move], pinned: Option<Vec<Option<(usize, bool)>>>) -> Vec<usize> {
    let Some(pinned) = pinned else {
        return (1..=line.len()).collect();
    };
    (1..=line.len())
        .filter(|&i| !pinned.iter().flatten().any(|&(p, _)| p == i))
        .collect()
}
