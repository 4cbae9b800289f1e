//! Moves a scanning board's snapshot shows that wait for the next scan.
//! A sensor blip lasts less than a scan period, so one scan can catch it
//! and the next one no longer shows it; on a board that only senses
//! occupancy, a piece read gone (or an empty square read full) for one
//! scan can make up moves nobody made: after 7.h3, the c4 bishop read gone
//! is 7...Nxc3 8.Bd5. Two or more moves one snapshot alone shows, that a
//! blip on a square it changed would explain otherwise, are recorded only
//! once the next scan shows they were no blip (a wrong move is worse than
//! a late one). A snapshot nothing explained, with one square filled that
//! the next scan empties again, is read without it.

use shakmaty::{Bitboard, Move, Position};

use super::{
    Engine,
    scanned::{SnapshotLines, is_legal_line},
};
use crate::event::Millis;

/// Moves a scanning board's snapshot showed that stand unless, at the
/// next scan, only a blip on one of the squares it changed explains the
/// board.
#[derive(Debug, Clone)]
pub(super) struct Unconfirmed {
    /// The record's length they follow on from.
    ply: usize,
    /// How many moves the same snapshot showed before them, recorded.
    before: usize,
    /// The snapshot's event, and the squares it showed occupied.
    seq: u64,
    shown: Bitboard,
    /// The moves that wait for the next scan.
    moves: Vec<Move>,
    /// The squares whose blip would explain the snapshot otherwise.
    suspect: Bitboard,
    /// When, and by which event, the snapshot showed them made.
    made_at: Millis,
    basis: u64,
}

impl Engine {
    /// Records the moves of a snapshot that stand whatever the next scan
    /// shows, and keeps the rest for it.
    pub(super) fn unconfirmed_read(
        &mut self,
        certain: Vec<Move>,
        then: Vec<Move>,
        suspect: Bitboard,
        made_at: Millis,
        basis: u64,
        scanned: bool,
    ) {
        if self.contradicts_candidates(&[certain.clone(), then.clone()].concat()) {
            return;
        }
        if !certain.is_empty() {
            self.record_read(&certain, made_at, basis, scanned);
        }
        if let Some((seq, shown)) = self.snapshots.last() {
            self.unconfirmed = Some(Unconfirmed {
                ply: self.game().ply(),
                before: certain.len(),
                seq,
                shown,
                moves: then,
                suspect,
                made_at,
                basis,
            });
        }
    }

    /// Moves a snapshot showed, once a later scan came. If none of the
    /// squares a blip would explain is shown back as it was, or the board
    /// is still explained with the moves made, they were made, when the
    /// snapshot showed them. If only the blip explains it, the snapshot is
    /// read without that square.
    pub(super) fn settle_unconfirmed(&mut self) {
        self.forget_unexplained_blip();
        let Some(u) = self.unconfirmed.take() else {
            return;
        };
        if self.game().ply() != u.ply || self.game().is_over() {
            return;
        }
        let Some(next) = self.snapshots.next_after(u.seq) else {
            self.unconfirmed = Some(u);
            return;
        };
        let back = u.suspect & (next ^ u.shown);
        if back.is_empty() {
            return self.confirm(u);
        }
        // A square shown back may be a blip gone, or the next moves:
        // whichever explains the board now.
        let pos = self.game().position().clone();
        let mut after = pos.clone();
        for &m in &u.moves {
            after.play_unchecked(m);
        }
        let mut repaired = self.snapshots.clone();
        repaired.forget_blips(u.seq, back);
        let made = SnapshotLines {
            pos: &after,
            sensed: &self.sensed,
            snapshots: &self.snapshots,
            since: u.seq,
            settling: Bitboard::EMPTY,
        }
        .explained();
        let blipped = SnapshotLines {
            pos: &pos,
            sensed: &self.sensed,
            snapshots: &repaired,
            since: self.game().basis(u.ply),
            settling: Bitboard::EMPTY,
        }
        .explained();
        match (made, blipped) {
            // A blip is the rarer story: it must be the only one.
            (true, _) => self.confirm(u),
            (false, true) => {
                self.snapshots = repaired;
                // A piece read gone for one scan was never lifted.
                for sq in back & !u.shown {
                    self.sensed.forget_blip(sq);
                }
            }
            // Neither: the board is read as it is.
            (false, false) => {}
        }
    }

    /// Records moves a snapshot showed, when it showed them.
    fn confirm(&mut self, u: Unconfirmed) {
        if is_legal_line(self.game().position(), &u.moves) && !self.contradicts_candidates(&u.moves)
        {
            self.record(&u.moves, u.made_at, u.basis);
            if u.moves.len() == 1 && u.before > 0 {
                // Shown at once with the moves before them.
                self.alert_inferred(u.ply - u.before + 1);
            }
        }
    }

    /// A snapshot nothing explained, once the next scan came: if that scan
    /// emptied again the one square it filled, the square was a blip, and
    /// later lines are not read as passing through it (a queen's move to
    /// that square, then moves that bring the board to what it shows now).
    /// A square shown empty for one scan is left alone: a captured piece
    /// taken off before the capturing one is put down looks the same.
    fn forget_unexplained_blip(&mut self) {
        let Some(seq) = self.unexplained else {
            return;
        };
        let odd = self.snapshots.odd_fills(seq);
        if odd.count() == 1 {
            self.snapshots.forget_blips(seq, odd);
            self.unexplained = None;
        } else if self.snapshots.next_after(seq).is_some() {
            self.unexplained = None;
        }
    }

    /// The input ended: the last snapshot stood until then, no blip.
    pub(super) fn confirm_at_end(&mut self) {
        if let Some(u) = self.unconfirmed.take()
            && self.game().ply() == u.ply
            && !self.game().is_over()
        {
            self.confirm(u);
        }
    }
}
