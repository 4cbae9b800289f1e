//! The first reading of a settled state, and the blips one scan caught
//! weighed against it: a line put off for a blip is listed or dropped, a
//! takeback one scan alone shows waits for the next scan.

use shakmaty::{Bitboard, Move, Position};

use super::{
    Engine, Moment, Reading, Scanned,
    evaluate::{Observed, PutOff},
    read,
    scan_evidence::HeldTakeback,
};
use crate::resync::SyncState;

impl Engine {
    /// The reading of the state, a line put off for a blip weighed again
    /// (what is left of it is returned).
    pub(super) fn first_reading(
        &mut self,
        at: Observed,
        unlisted: Option<Vec<Vec<Move>>>,
        put_off: Option<(usize, Bitboard, u64)>,
    ) -> (Reading, Option<PutOff>) {
        let Observed {
            scanned, closing, ..
        } = at;
        // On occupancy, until the record has caught up with a dump, a
        // capture on any square it showed occupied may have gone unseen.
        let stamped;
        let sensed = if matches!(scanned, Scanned::Dump | Scanned::AfterDump)
            && !self.sensed.identifies_all()
        {
            stamped = self
                .sensed
                .changed_unseen(self.dump.unseen, self.dump.dump_seq);
            &stamped
        } else {
            &self.sensed
        };
        let moment = Moment {
            pending_press: self.clock.pending_press,
            presses_ahead: self.clock.presses_ahead,
            closing,
            candidates: if self.hypotheses.state == SyncState::Ambiguous {
                &self.hypotheses.lines
            } else {
                &[]
            },
            held: self.lines_at_ply(&self.scan.held),
            passed: self.passed_lines(),
            costed: self.hypotheses.state == SyncState::Ambiguous && self.hypotheses.costed,
            clock: self.clock.in_use,
        };
        let arbiter = self.config.arbiter;
        let mut reading = read(
            self.game(),
            sensed,
            &self.snapshots,
            &self.phase,
            moment,
            arbiter,
            scanned,
        );
        // On occupancy, a line the last scan alone showed was put off: it
        // is listed now, or dropped as a blip, unless the record has moved.
        let mut put_off = match (unlisted, put_off) {
            (Some(lines), Some((ply, suspects, seq))) if ply == self.game().ply() => {
                Some((lines, suspects, seq))
            }
            _ => None,
        };
        // Nothing read, and a square of the blip back as the record has
        // it: the scan that showed the line is read without the blip. If
        // the board then reads (20.Bxe6 under way, e4 caught full, then
        // 20...Ke7), the line was the blip's.
        if let Some((_, suspects, seq)) = put_off
            && matches!(reading, Reading::Wait)
        {
            let record = self.game().position().board().occupied();
            let back = !(record ^ self.sensed.occupied()) & suspects;
            if back.any() {
                let mut repaired = self.snapshots.clone();
                repaired.forget_blips(seq, back);
                let again = read(
                    self.game(),
                    sensed,
                    &repaired,
                    &self.phase,
                    moment,
                    arbiter,
                    scanned,
                );
                if !matches!(again, Reading::Wait) {
                    self.snapshots = repaired;
                    reading = again;
                    put_off = None;
                    if self.hypotheses.state == SyncState::Searching {
                        self.hypotheses.state = SyncState::Ok;
                    }
                }
            }
        }
        (reading, put_off)
    }

    /// Readings a blip one scan caught may explain otherwise wait for the
    /// next scan; `None`: lines were listed, read the state again.
    pub(super) fn weigh_blips(
        &mut self,
        mut reading: Reading,
        at: Observed,
        put_off: Option<PutOff>,
    ) -> Option<Reading> {
        let Observed {
            made_at,
            basis,
            scanned,
            closing,
            ..
        } = at;
        // Lines read past a blip follow the scans without it.
        if let Reading::Ambiguous(lines) = &reading
            && scanned == Scanned::Snapshot
        {
            let lines = lines.clone();
            self.forget_blips_read_past(&lines);
        }
        // A takeback one scan alone shows, on occupancy, waits for the
        // next scan: it may have caught a blip on the square a capture
        // left (8.Nxc6 made, then d4 caught full: the board as before it).
        if let Reading::Takeback(back_to) = reading
            && scanned == Scanned::Snapshot
            && !closing
            && !self.sensed.identifies_all()
        {
            let record = self.game().position().board().occupied();
            let suspects = self.snapshots.blip_suspects(record, self.sensed.occupied());
            if suspects.any() {
                self.scan.takeback_held = Some(HeldTakeback {
                    ply: self.game().ply(),
                    back_to,
                    suspects,
                    shown: self.sensed.occupied() & suspects,
                    made_at,
                    basis,
                });
                reading = Reading::Wait;
            }
        }
        let reading = if put_off.is_none() && !closing && scanned == Scanned::Snapshot {
            self.put_off_listing(reading)
        } else {
            reading
        };
        if let Some((lines, suspects, _)) = put_off {
            if self.lists_put_off(&lines, suspects, &reading) {
                self.ambiguous(lines, false);
                return None;
            }
            // A blip: the record is as in step as it was.
            if self.hypotheses.state == SyncState::Searching {
                self.hypotheses.state = SyncState::Ok;
            }
        }
        Some(reading)
    }
}
