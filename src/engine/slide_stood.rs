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

use super::read::Reading;
use super::scan_slide::slide_caught;
use super::scanned::exact_now;
use super::{BoardKind, Engine};
use crate::event::{Millis, Scan, Sensed};

/// How the gaps between a scanning board's scans are read.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct ScanPeriod {
    /// When the last scan that changed the board came.
    last_at: Option<Millis>,
    /// The last gaps between scans, newest at `next`: a board's period
    /// repeats, where a scan off its schedule (a rough board's jitter)
    /// makes a short gap once.
    gaps: [Millis; GAPS],
    next: usize,
}

/// How many gaps [`ScanPeriod`] keeps.
const GAPS: usize = 8;

impl ScanPeriod {
    /// A scan that changed the board came at `t`.
    pub(super) fn note(&mut self, t: Millis) {
        if let Some(last) = self.last_at
            && t > last
        {
            let gap = t - last;
            self.gaps[self.next] = gap;
            self.next = (self.next + 1) % GAPS;
        }
        self.last_at = Some(t);
    }

    /// Whether a scan at `t` comes more than one period after one at
    /// `shown`: a scan in between (not sent, the same) showed the board
    /// unchanged. Half a period more than one period is beyond any jitter.
    /// The period is the one the gaps repeat (see
    /// [`Self::repeated_period`]): a rough board's scan off its schedule
    /// makes one short gap, and read as the period it took a slide's next
    /// scan, one period on, for a board that stood (20...Qe4 recorded for
    /// the queen caught on e4 on its way to f3).
    fn stood(&self, shown: Millis, t: Millis) -> bool {
        self.repeated_period()
            .is_some_and(|p| t.saturating_sub(shown) > p.saturating_add(p / 2))
    }

    /// The shortest of the last gaps that came twice (within a tenth):
    /// the board's period, or a multiple of it, never a gap one scan off
    /// its schedule made (`None` until one repeats).
    fn repeated_period(&self) -> Option<Millis> {
        let kept = &self.gaps[..];
        kept.iter()
            .enumerate()
            .filter(|&(i, &g)| {
                g > 0
                    && kept
                        .iter()
                        .enumerate()
                        .any(|(j, &h)| j != i && h > 0 && g.abs_diff(h) <= g / 10)
            })
            .map(|(_, &g)| g)
            .min()
    }

    /// Whether the last scan that changed the board came more than one
    /// period after one at `shown`, by the period the gaps repeat (see
    /// [`Self::repeated_period`]): the board stood as that one showed it
    /// through a scan in between. A period read too long only says so
    /// less often.
    pub(super) fn stood_until_last(&self, shown: Millis) -> bool {
        let (Some(t), Some(p)) = (self.last_at, self.repeated_period()) else {
            return false;
        };
        t.saturating_sub(shown) > p.saturating_add(p / 2)
    }
}

/// The move a scan showed made, held back as a piece that may be caught
/// on its way further along the same line.
#[derive(Debug, Clone)]
pub(super) struct CaughtSlide {
    /// The record's length when it was held back.
    pub(super) ply: usize,
    /// The move as the scan showed it.
    pub(super) mv: Move,
    /// The scan (its event number) and when it came.
    pub(super) seq: u64,
    pub(super) at: Millis,
}

impl Engine {
    /// Notes, after a snapshot of a board that names the pieces and only
    /// scans was read as `reading` at `at`, a move it showed made that the
    /// reading held back because its piece may be sliding on.
    pub(super) fn note_caught_slide(&mut self, reading: &Reading, at: Millis) {
        if !(self.observation.scanned()
            && self.snapshots.board() == BoardKind::Scanning
            && self.sensed.identifies_all())
        {
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
        self.scan.caught_slide = Some(CaughtSlide {
            ply: self.game().ply() + prefix.len(),
            mv: line[prefix.len()],
            seq: self.seq,
            at,
        });
    }

    /// Holds `mv`, which the latest scan alone showed made where its piece
    /// could be on its way further along the same line, with the
    /// opponent's hand in the same scan (see [`Engine::shown_mid_slide`]).
    pub(super) fn hold_caught_slide(&mut self, mv: Move, at: Millis) {
        self.scan.caught_slide = Some(CaughtSlide {
            ply: self.game().ply(),
            mv,
            seq: self.seq,
            at,
        });
    }

    /// A scan comes at `t`. After an outage it is a dump: the piece a scan
    /// caught on its path may have gone on during any number of unseen
    /// plies, so the held move is one story the dump is weighed against
    /// (`held_at_dump.rs`), if nothing came in between.
    pub(super) fn slide_before_scan(&mut self, t: Millis, scan: &Scan) {
        if !self.observation.reconnected() {
            self.slide_stood(Some(t), Some(scan));
        } else if self
            .scan
            .caught_slide
            .as_ref()
            .is_some_and(|c| c.seq != self.seq)
        {
            self.scan.caught_slide = None;
        }
    }

    /// A scan comes at `t` (`None`: the input ended): a move held back as
    /// a possible slide whose scan the board then stood as for more than
    /// a period, or the last scan before the input ended (no scan shows
    /// where the piece went), was put down where that scan showed it, and
    /// is recorded so before anything else is read. (A scan after the
    /// link came back is a dump: the held move is weighed against it,
    /// `held_at_dump.rs`.)
    /// `next`: the scan that comes, which still showing the piece where the
    /// held scan caught it says it was put down there (a slide lasts one
    /// scan).
    pub(super) fn slide_stood(&mut self, t: Option<Millis>, next: Option<&Scan>) {
        let Some(caught) = self.scan.caught_slide.take() else {
            return;
        };
        let piece = caught
            .mv
            .from()
            .and_then(|from| self.game().position().board().piece_at(from));
        let still = next.is_some_and(|scan| {
            piece.is_some_and(|p| scan.get(caught.mv.to()) == Some(Sensed::Piece(p)))
        });
        if caught.seq != self.seq
            || caught.ply != self.game().ply()
            || self.game().is_over()
            || self.clock.slide_press.is_some()
            || t.is_some_and(|t| !still && !self.scan.scan_period.stood(caught.at, t))
            || !self.game().position().is_legal(caught.mv)
        {
            return;
        }
        self.record(&[caught.mv], caught.at, caught.seq);
        self.hand_awaited = false;
    }
}

#[cfg(test)]
mod tests {
    use crate::{engine::EngineConfig, replay::replay_script};

    /// The moves recorded from a board that names the pieces and only
    /// scans, with no clock: 1.e4 e5 2.Nf3 shown one by one a second
    /// apart, then one scan at 4000 shows 2...Nc6 made and White's f1
    /// bishop on c4, a square of its diagonal to b5 and a6; the next scan,
    /// at `next`, shows 3...Nf6 and the bishop on b5, the one after a6.
    fn read(next: u64) -> Vec<String> {
        let script = format!(
            "@0 board rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR\n\
             @1000 board rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR\n\
             @2000 board rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR\n\
             @3000 board rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R\n\
             @4000 board r1bqkbnr/pppp1ppp/2n5/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R\n\
             @{next} board r1bqkb1r/pppp1ppp/2n2n2/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R\n\
             @{} board r1bqkb1r/1ppp1ppp/p1n2n2/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R\n",
            next + 1000
        );
        let engine = replay_script("t", &script, EngineConfig::default()).unwrap();
        let game = &engine.games()[0];
        game.moves().iter().map(|m| m.san.to_string()).collect()
    }

    #[test]
    fn a_piece_the_board_stood_with_on_its_path_for_a_scan_period_was_put_down() {
        // The next scan 2.5 s later: scans in between (not sent: the same)
        // showed the bishop on c4 a whole period, longer than a drag
        // crosses a square. 3.Bc4 Nf6 4.Bb5 (Art. 4.7: it was released).
        assert_eq!(
            read(6500),
            ["e4", "e5", "Nf3", "Nc6", "Bc4", "Nf6", "Bb5", "a6"]
        );
    }

    #[test]
    fn a_piece_on_its_path_at_one_scan_alone_may_have_slid_on() {
        // The next scan a period later: nothing says the bishop stood on
        // c4; caught sliding to b5 (a slide, 1) is one move fewer in that
        // period than Bc4, Nf6 and Bb5 all made within it.
        assert_eq!(read(5000)[..6], ["e4", "e5", "Nf3", "Nc6", "Bb5", "Nf6"]);
    }
    #[test]
    fn a_pawn_shown_on_e6_then_taken_there_was_not_sliding_to_e5() {
        // One scan shows 2.d5 and Black's e-pawn on e6 (it may be on its
        // way to e5), the next, a period later, 3.dxe6. 2...e6 3.dxe6 and
        // 2...e5 3.dxe6 (en passant) are as many moves; only the second
        // needs the pawn caught on e6, a slide bought for nothing.
        let script = "@0 board rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR\n\
             @1000 board rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR\n\
             @2000 board rnbqkbnr/1ppppppp/p7/8/3P4/8/PPP1PPPP/RNBQKBNR\n\
             @3000 board rnbqkbnr/1ppp1ppp/p3p3/3P4/8/8/PPP1PPPP/RNBQKBNR\n\
             @4000 board rnbqkbnr/1ppp1ppp/p3P3/8/8/8/PPP1PPPP/RNBQKBNR\n\
             @5000 board rnbqkbnr/1ppp2pp/p3p3/8/8/8/PPP1PPPP/RNBQKBNR\n\
             @6000 board rnbqkbnr/1ppp2pp/p3p3/8/4P3/8/PPP2PPP/RNBQKBNR\n";
        let engine = replay_script("t", script, EngineConfig::default()).unwrap();
        let moves: Vec<String> = engine.games()[0]
            .moves()
            .iter()
            .map(|m| m.san.to_string())
            .collect();
        assert_eq!(moves, ["d4", "a6", "d5", "e6", "dxe6", "fxe6", "e4"]);
    }
}
