//! How moves that wait for the next scan end: confirmed, forgotten as a
//! blip, or listed with the blip's story for the arbiter.

use super::*;

impl Engine {
    /// The players ended the game, or the input ended, while a patient
    /// move and a blip both still explained the board: neither is certain,
    /// and both are listed for the arbiter (`out_of_sync`).
    pub(in crate::engine) fn list_undecided(&mut self) {
        let Some(u) = self.scan.unconfirmed.take() else {
            return;
        };
        let Some(stories) = self
            .snapshots
            .next_after(u.seq)
            .and_then(|next| self.stories(&u, next))
        else {
            return self.confirm(u);
        };
        if !stories.shown_back && !stories.only_the_blip_exact() {
            return self.confirm(u);
        }
        self.list_stories(u, stories);
    }

    /// Lists both stories for the arbiter (`out_of_sync`), or records the
    /// moves that wait if only they are left.
    pub(super) fn list_stories(&mut self, u: Unconfirmed, stories: Stories) {
        let pick = |exact: Vec<Vec<Move>>, hand: Vec<Vec<Move>>| {
            if exact.is_empty() { hand } else { exact }
        };
        let mut lines = pick(stories.made_exact, stories.made_hand);
        lines.extend(pick(stories.blip_exact, stories.blip_hand));
        lines.dedup();
        match lines.len() {
            0 => {}
            1 if lines[0].starts_with(&u.moves) => self.confirm(u),
            _ => self.ambiguous(lines, false),
        }
    }

    /// The snapshot of moves that wait was a blip on the squares `back`:
    /// the snapshots are read without them.
    pub(super) fn forget(&mut self, u: Unconfirmed, stories: Stories) {
        // A later scan's odd fill is read as a piece of the blip's story
        // caught on its way only on a square one of its moves crosses;
        // elsewhere it stays for the board's reading to price (h3 caught
        // full is no square 17...Qxa2 crosses, but 17...Qh3 made).
        let mut snapshots = self.snapshots.clone();
        snapshots.forget_blips(u.seq, stories.back);
        let record = self.game().position().board().occupied();
        snapshots.forget_odd_fills_after(u.seq, record | !stories.crossed());
        self.snapshots = snapshots;
        // A piece read gone for one scan was never lifted.
        for sq in stories.back & !u.shown {
            self.sensed.forget_blip(sq);
        }
    }

    /// Whether moves a snapshot showed wait while later scans tell them
    /// from a blip: the board is not read from the record meanwhile.
    pub(in crate::engine) fn undecided(&self) -> bool {
        self.scan
            .unconfirmed
            .as_ref()
            .is_some_and(|u| self.snapshots.next_after(u.seq).is_some())
    }

    /// Of several squares a snapshot nothing explained filled for that
    /// scan alone, the one without which moves from the record's position
    /// explain it (d5 caught full in the scan that showed 11.d4 exd4,
    /// where d4 was filled too and emptied again for 12.Qxd4): when only
    /// one does, that one was the blip. When several do, the one without
    /// which the scans since the record's position are read.
    pub(in crate::engine) fn lone_blip(&self, seq: u64, odd: Bitboard) -> Bitboard {
        let Some(shown) = self.snapshots.shown_at(seq) else {
            return Bitboard::EMPTY;
        };
        let pos = self.game().position();
        let explained: Vec<Square> = odd
            .into_iter()
            .filter(|&sq| {
                let mut sensed = SensedBoard::showing(pos.board());
                let without = shown ^ Bitboard::from(sq);
                for s in without ^ pos.board().occupied() {
                    if without.contains(s) {
                        sensed.place(s, None, seq);
                    } else {
                        sensed.lift(s, seq);
                    }
                }
                read_scan(pos, &sensed, 0, true, super::super::scanned::Slides::Caught)
                    != ScanReading::None
            })
            .collect();
        if let [sq] = explained[..] {
            return Bitboard::from(sq);
        }
        // Several: the one without which the scans since the record's
        // position, up to the last one, are read (e3 and b6 caught full
        // while 22...Bxe3 was made, then e3 empty again for 23.Rxe3: read
        // without b6, the scans show the capture and the recapture under
        // way; without e3, nothing).
        let since = self.game().basis(self.game().ply());
        let mut read = explained.into_iter().filter(|&sq| {
            let mut repaired = self.snapshots.clone();
            repaired.forget_blips(seq, Bitboard::from(sq));
            SnapshotLines {
                pos,
                sensed: &self.sensed,
                snapshots: &repaired,
                since,
                settling: Bitboard::EMPTY,
            }
            .read_unslid(0, true)
                != ScanReading::None
        });
        match (read.next(), read.next()) {
            (Some(sq), None) => Bitboard::from(sq),
            _ => Bitboard::EMPTY,
        }
    }

    /// Records moves a snapshot showed, when it showed them.
    pub(in crate::engine) fn confirm(&mut self, u: Unconfirmed) {
        // Moves a snapshot showed follow on from the record as it stood
        // then: once it has changed (a takeback, a new game), they are no
        // longer the next moves (the next game's first move was once
        // confirmed with the ply of the last game's end).
        if self.game().ply() != u.ply || self.game().is_over() {
            return;
        }
        if is_legal_line(self.game().position(), &u.moves) && !self.contradicts_candidates(&u.moves)
        {
            self.record(&u.moves, u.made_at, u.basis);
            self.hypotheses.went_on(&u.moves);
            // Read from one snapshot with the moves before them: named if
            // a scan showed some of them on its own.
            if u.moves.len() == 1
                && u.before > 0
                && let Some(ply) = self.first_inferred(u.ply - u.before, &[])
            {
                self.alert_inferred(ply, ReadFrom::Board);
            }
        }
    }

    /// A snapshot nothing explained, once the next scan came: if that scan
    /// emptied again the one square it filled, the square was a blip, and
    /// later lines are not read as passing through it (a queen's move to
    /// that square, then moves that bring the board to what it shows now).
    /// A square shown empty for one scan is left alone: a captured piece
    /// taken off before the capturing one is put down looks the same.
    pub(in crate::engine) fn forget_unexplained_blip(&mut self) {
        let Some(seq) = self.scan.unexplained else {
            return;
        };
        let mut odd = self.snapshots.odd_fills(seq);
        if odd.count() > 1 {
            odd = self.lone_blip(seq, odd);
        }
        if odd.count() == 1 {
            self.snapshots.forget_blips(seq, odd);
            self.scan.unexplained = None;
        } else if self.snapshots.next_after(seq).is_some() {
            self.scan.unexplained = None;
        }
    }

    /// The input ended: the last snapshot stood until then, no blip.
    pub(in crate::engine) fn confirm_at_end(&mut self) {
        if let Some(u) = self.scan.unconfirmed.take()
            && self.game().ply() == u.ply
            && !self.game().is_over()
        {
            self.confirm(u);
        }
    }
}
