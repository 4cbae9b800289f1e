//! A slide that stood. A scanning board sends a scan when it differs from
//! the last one sent, so the time to the next scan says how long the board
//! stood as a scan showed it: more than one scan period means scans in
//! between showed the same. A piece dragged along its path crosses a
//! square in well under a scan period; one that stood on it a whole period
//! was put down there (docs/design/reconstruction.md, the cost table: a
//! slide costs 1 only while nothing says the piece stood). So a move a
//! scan showed, held back because its piece could be caught on its way
//! further along the same line, is recorded as that scan showed it once
//! the next scan comes more than a period later.

use shakmaty::{Move, Position};

use super::Engine;
use super::read::Reading;
use super::scan_slide::slide_caught;
use super::scanned::exact_now;
use crate::event::Millis;

/// How the gaps between a scanning board's scans are read.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct ScanPeriod {
    /// When the last scan that changed the board came.
    last_at: Option<Millis>,
    /// The shortest gap between two scans yet: the board's period, or a
    /// little less (scanners are not metronomes).
    period: Option<Millis>,
}

impl ScanPeriod {
    /// A scan that changed the board came at `t`.
    pub(super) fn note(&mut self, t: Millis) {
        if let Some(last) = self.last_at
            && t > last
        {
            let gap = t - last;
            self.period = Some(self.period.map_or(gap, |p| p.min(gap)));
        }
        self.last_at = Some(t);
    }

    /// Whether a scan at `t` comes more than one period after one at
    /// `shown`: a scan in between (not sent, the same) showed the board
    /// unchanged. Half a period more than one period is beyond any jitter.
    fn stood(&self, shown: Millis, t: Millis) -> bool {
        self.period
            .is_some_and(|p| t.saturating_sub(shown) > p.saturating_add(p / 2))
    }
}

/// The move a scan showed made, held back as a piece that may be caught
/// on its way further along the same line.
#[derive(Debug, Clone)]
pub(super) struct CaughtSlide {
    /// The record's length when it was held back.
    ply: usize,
    /// The move as the scan showed it.
    mv: Move,
    /// The scan (its event number) and when it came.
    seq: u64,
    at: Millis,
}

impl Engine {
    /// Notes, after a snapshot of a board that names the pieces and only
    /// scans was read as `reading` at `at`, a move it showed made that the
    /// reading held back because its piece may be sliding on.
    pub(super) fn note_caught_slide(&mut self, reading: &Reading, at: Millis) {
        if !(self.scanned && self.snapshots.only() && self.sensed.identifies_all()) {
            return;
        }
        let prefix: &[Move] = match reading {
            Reading::Moves(moves) => moves,
            Reading::Hand => &[],
            _ => return,
        };
        let pos = self.game().position();
        let mut tails = exact_now(pos, &self.sensed)
            .into_iter()
            .filter(|line| line.len() == prefix.len() + 1 && line.starts_with(prefix));
        let (Some(line), None) = (tails.next(), tails.next()) else {
            return;
        };
        let mut after = pos.clone();
        for &m in prefix {
            after.play_unchecked(m);
        }
        if slide_caught(&after, &self.sensed).is_none() {
            return;
        }
        self.caught_slide = Some(CaughtSlide {
            ply: self.game().ply() + prefix.len(),
            mv: line[prefix.len()],
            seq: self.seq,
            at,
        });
    }

    /// A scan comes at `t` (`None`: the input ended): a move held back as
    /// a possible slide whose scan the board then stood as for more than a
    /// period, or stood as when the input ended (no scan comes), was put
    /// down where that scan showed it, and is recorded so before anything
    /// else is read.
    pub(super) fn slide_stood(&mut self, t: Option<Millis>) {
        let Some(caught) = self.caught_slide.take() else {
            return;
        };
        if caught.seq != self.seq
            || caught.ply != self.game().ply()
            || self.game().is_over()
            || self.clock.slide_press.is_some()
            || t.is_some_and(|t| !self.scan_period.stood(caught.at, t))
            || !self.game().position().is_legal(caught.mv)
        {
            return;
        }
        self.record(&[caught.mv], caught.at, caught.seq);
        self.hand_awaited = false;
    }
}
