//! A move held as a possible slide when the link went down. On a scanning
//! board that names the pieces, a move one scan alone showed, whose piece
//! may have been caught on its way further along the same line, is held
//! until a scan says it stood (`slide_stood.rs`). If the link goes down
//! first, the scan after `reconnected` is a dump: the position after any
//! number of unseen plies, which says nothing about how long the piece
//! stood. Two stories explain the dump (docs/design/reconstruction.md, the
//! dump and the cost table):
//! - *stood*: the held move was made as the scan showed it (shown, 0), then
//!   the fewest plies from there to the dump;
//! - *slid*: the scan caught the piece on its way (a slide, 1), and the
//!   fewest plies from the record's position to the dump begin with that
//!   piece's move through the square it was caught on.
//!
//! Every ply but the last, which the dump shows, is inferred (2). The
//! cheaper story is recorded if the other costs more than the margin above
//! it; otherwise both are listed, and the next states tell them apart (the
//! two seldom leave the same player to move).

use shakmaty::{Move, Position, attacks};

use super::evaluate::Observed;
use super::{
    Engine, Scanned,
    cost::{INFERRED_PLY, MARGIN, SLIDE},
    follow::play,
    hypotheses::SNAPSHOT_PLIES,
    in_progress,
};
use crate::resync::{Limits, Resync, SyncState, Target, resync};

/// What the weighing of a held move against a dump decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum HeldAtDump {
    /// The held move stood: it is recorded, and the dump is read from it.
    Stood,
    /// Both stories are listed; the dump is read no further.
    Listed,
    /// Nothing held, or the slid story is the cheaper: the dump is read
    /// from the record's position.
    Read,
}

impl Engine {
    /// Weighs the move held as a possible slide against the dump now read
    /// (`scanned`), and records or lists as the cost table says.
    pub(super) fn weigh_held_at_dump(&mut self, scanned: Scanned) -> HeldAtDump {
        if scanned != Scanned::Dump {
            return HeldAtDump::Read;
        }
        let Some(caught) = self.scan.caught_slide.take() else {
            return HeldAtDump::Read;
        };
        let pos = self.game().position().clone();
        if caught.ply != self.game().ply()
            || self.game().is_over()
            || self.clock.slide_press.is_some()
            || !pos.is_legal(caught.mv)
        {
            return HeldAtDump::Read;
        }
        let target = Target::sensed(&self.sensed);
        let mut after = pos.clone();
        after.play_unchecked(caught.mv);
        let stood: Vec<Vec<Move>> = if target.matches(after.board()) {
            vec![Vec::new()]
        } else {
            match resync(&after, &target, &Limits::dump()) {
                Resync::OverBudget { .. } => return HeldAtDump::Read,
                found => found.lines().to_vec(),
            }
        };
        let slid: Vec<Vec<Move>> = match resync(&pos, &target, &Limits::dump()) {
            Resync::OverBudget { .. } => return HeldAtDump::Read,
            found => found
                .lines()
                .iter()
                .filter(|line| line.first().is_some_and(|&m| slid_through(caught.mv, m)))
                .cloned()
                .collect(),
        };
        // Every ply but the last is inferred; the held move was shown.
        let inferred = |plies: usize| INFERRED_PLY * plies.saturating_sub(1);
        let stood_cost = stood.first().map(|line| inferred(line.len()));
        let slid_cost = slid.first().map(|line| inferred(line.len()) + SLIDE);
        match (stood_cost, slid_cost) {
            (Some(s), Some(d)) if s + MARGIN >= d && d + MARGIN >= s => {
                let lines = stood
                    .into_iter()
                    .map(|line| [&[caught.mv][..], &line].concat())
                    .chain(slid)
                    .collect();
                self.ambiguous(lines, false);
                HeldAtDump::Listed
            }
            (Some(s), d) if d.is_none_or(|d| s < d) => {
                self.record(&[caught.mv], caught.at, caught.seq);
                self.hand_awaited = false;
                HeldAtDump::Stood
            }
            _ => HeldAtDump::Read,
        }
    }
}

/// Whether `m` moves the piece of `held` from the same square on through
/// the square `held` put it on: the scan caught it there on its way.
fn slid_through(held: Move, m: Move) -> bool {
    m.from() == held.from()
        && m.role() == held.role()
        && m.to() != held.to()
        && m.from()
            .is_some_and(|from| attacks::between(from, m.to()).contains(held.to()))
}

impl Engine {
    /// While lines listed from a dump on a scanning board that names the
    /// pieces stand, before the record has caught up with the dump, each
    /// scan is read against them, the dump's hypotheses, not from the
    /// record's position (whose own shortest line would be added to them
    /// or replace them, need be none of them). A hand at work after one
    /// keeps them; otherwise each is gone on from its end
    /// ([`Engine::past_dump_listing`]): one left is taken as the search's
    /// unique answer, several are listed. `None`: nothing listed from a
    /// dump, or no line goes on: the scan is read as any other. `Some`:
    /// whether a hand is at work.
    pub(super) fn follow_dump_listing(&mut self, at: Observed) -> Option<bool> {
        if !matches!(at.scanned, Scanned::Snapshot | Scanned::Dump) {
            return None;
        }
        // Closing, the board stands as the players left it: no hand.
        if !at.closing && self.hand_after_dump_listing() {
            return Some(true);
        }
        let mut lines = self.past_dump_listing()?;
        if lines.len() > Limits::default().max_candidates {
            // More than the tracker follows: read as before (lost).
            return None;
        }
        if lines.len() > 1 {
            self.take_candidates(Resync::Candidates { lines, more: false }, at.closing);
            return Some(false);
        }
        let line = lines.remove(0);
        let listed = self
            .hypotheses
            .lines
            .iter()
            .filter(|listed| line.starts_with(listed))
            .map(Vec::len)
            .max()
            .unwrap_or(0);
        // The other stories priced out, this one is the dump's story; the
        // moves it went on by are a reading like any other: a short one is
        // recorded, a longer one waits for the next scan to confirm it.
        if line.len() - listed <= SNAPSHOT_PLIES || at.closing {
            self.hypotheses.clear();
            self.record(&line, at.made_at, at.basis);
        } else {
            self.ambiguous(vec![line], false);
        }
        Some(false)
    }

    /// Whether, on a board that names the pieces, before the record has
    /// caught up with a dump, the board shows a hand at work after one of
    /// the lines listed from it: those lines are the dump's hypotheses, and
    /// a hand after one keeps them (a hand shows no position to weigh; the
    /// next state tells), where a search from the record's position would
    /// read the hand as unseen plies that never passed the dump.
    pub(super) fn hand_after_dump_listing(&self) -> bool {
        if !(self.sensed.identifies_all()
            && self.unseen_since_reconnection()
            && self.hypotheses.state == SyncState::Ambiguous)
        {
            return false;
        }
        let pos = self.game().position();
        self.hypotheses
            .lines
            .iter()
            .any(|line| play(pos, line).is_some_and(|end| in_progress(&end, &self.sensed)))
    }
}

impl Engine {
    /// The lines listed from a dump on a board that names the pieces, gone
    /// on to what the board shows now, before the record has caught up with
    /// the dump: each from its own end by the fewest plies (each inferred,
    /// 2, but the last, which the board shows), those within the margin of
    /// the cheapest. The dump's stories are the hypotheses; a search from
    /// the record's position would read its own shortest line, which need
    /// be none of them. `None`: nothing listed from a dump, or no line goes
    /// on (or the search is over budget): the board is read as before.
    pub(super) fn past_dump_listing(&self) -> Option<Vec<Vec<Move>>> {
        if !(self.sensed.identifies_all()
            && self.unseen_since_reconnection()
            && self.hypotheses.state == SyncState::Ambiguous)
        {
            return None;
        }
        let pos = self.game().position();
        let target = Target::sensed(&self.sensed);
        let mut gone_on: Vec<(Vec<Move>, usize)> = Vec::new();
        for line in &self.hypotheses.lines {
            let end = play(pos, line)?;
            if target.matches(end.board()) {
                gone_on.push((line.clone(), 0));
                continue;
            }
            match resync(&end, &target, &Limits::default()) {
                // A line the search cannot take on to the board died of a
                // gap in the following, not of the cost table: no evidence
                // for the others.
                Resync::OverBudget { .. } | Resync::None => return None,
                found => gone_on.extend(found.lines().iter().map(|more| {
                    let cost = INFERRED_PLY * more.len().saturating_sub(1);
                    ([line.as_slice(), more].concat(), cost)
                })),
            }
        }
        let kept = super::cost::within_margin(gone_on, |(_, cost)| *cost);
        (!kept.is_empty()).then(|| kept.into_iter().map(|(line, _)| line).collect())
    }
}
