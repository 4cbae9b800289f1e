//! The tracker past a dump on an occupancy board that reports square by
//! square: the dump's lines are the hypotheses, gone on by the moves
//! reported since, and the presses since narrow them. See
//! docs/design/reconstruction.md, "Past a dump, the dump's lines are the
//! hypotheses".

use shakmaty::{Bitboard, Chess, Move, Position, Square};

use super::{Engine, hypotheses::through_dump, resynchronise::Found};
use crate::{
    event::Millis,
    resync::{Limits, Resync, Target, resync},
    sensed::SensedBoard,
};

impl Engine {
    /// Square by square after a dump on a board that only senses
    /// occupancy, before the record has caught up with it: the dump may
    /// have hidden captures, and the moves reported since may have taken
    /// the board more than three moves past the record. The dump's lines
    /// gone on by the moves reported since are read first
    /// ([`Engine::past_dump`]); failing them, of the shortest lines the
    /// search finds, only those that pass through what the dump showed
    /// count (a transposition that does not was not played). A unique one
    /// is recorded (`moves_inferred`), several are listed. Not while a
    /// piece is in the air (the last report a lift): a line of captures
    /// may explain that too.
    pub(super) fn resynchronise_after_dump(&mut self, made_at: Millis, basis: u64) -> bool {
        let game = self.game();
        let pos = game.position().clone();
        let dump = self.dump.unseen;
        let reported = self.sensed.touched_since(self.dump.dump_seq);
        let fits = |line: &Vec<Move>| through_dump(&pos, line, dump, reported);
        // Reported square by square, a piece in the air was lifted last.
        let last = |at: fn(&SensedBoard, Square) -> u64| {
            Square::ALL.into_iter().map(|sq| at(&self.sensed, sq)).max()
        };
        if last(SensedBoard::last_lift) > last(SensedBoard::last_place) {
            return false;
        }
        if let Some((lines, more)) = self.past_dump(&pos, reported) {
            return self.take_after_dump(lines, more, made_at, basis);
        }
        let target = Target::sensed(&self.sensed);
        // The lines of `min..=max` plies that pass through the dump, the
        // shortest first (`None`: over budget).
        let search = |min_plies: usize, max_plies: usize| {
            let limits = Limits {
                min_plies,
                max_plies,
                ..Limits::default()
            };
            let (lines, more) = match resync(&pos, &target, &limits) {
                Resync::Unique(line) => (vec![line], false),
                Resync::Candidates { lines, more } => (lines, more),
                Resync::None => (Vec::new(), false),
                Resync::OverBudget { .. } => return None,
            };
            let lines: Vec<Vec<Move>> = lines.into_iter().filter(fits).collect();
            Some((lines, more))
        };
        if let Some(recorded) = self.resynchronise_by_presses(&search, made_at, basis) {
            return recorded;
        }
        let Some((lines, more)) = search(1, Limits::default().max_plies) else {
            return false;
        };
        self.take_after_dump(lines, more, made_at, basis)
    }

    /// Lines read after a dump: one is recorded (`moves_inferred`) unless
    /// listed candidates say otherwise, several are listed. Returns whether
    /// moves were recorded.
    fn take_after_dump(
        &mut self,
        lines: Vec<Vec<Move>>,
        more: bool,
        made_at: Millis,
        basis: u64,
    ) -> bool {
        match &lines[..] {
            [] => false,
            [line] if !more => {
                if self.contradicts_candidates(line) {
                    return false;
                }
                let line = line.clone();
                self.hypotheses.clear();
                {
                    self.record(&line, made_at, basis);
                    true
                }
            }
            _ => {
                self.ambiguous(lines, more);
                false
            }
        }
    }

    /// The fewest plies that reach what the last dump showed from `pos`,
    /// the record's position (`None`: no such line, or over budget):
    /// searched once per dump and record, with a dump's budget.
    pub(super) fn dump_lines(&mut self, pos: &Chess) -> Option<Found> {
        let key = (self.dump.dump_seq, self.game().ply());
        match &self.dump.dump_lines {
            Some((at, found)) if *at == key => found.clone(),
            _ => {
                let found = match resync(pos, &Target::occupancy(self.dump.unseen), &Limits::dump())
                {
                    Resync::Unique(line) => Some((vec![line], false)),
                    Resync::Candidates { lines, more } => Some((lines, more)),
                    Resync::None | Resync::OverBudget { .. } => None,
                };
                self.dump.dump_lines = Some((key, found.clone()));
                found
            }
        }
    }

    /// When the piece was put down, and the position it would be sliding
    /// on from, if the board shows one of the dump's lines gone on by a
    /// piece of the player to move put down on a square of its own path
    /// since (`slide.rs`): read, as on any event board, only once it has
    /// stood or the move is completed. `lifting`: a square about to be
    /// read empty as well.
    pub(super) fn sliding_past_dump(&self, lifting: Option<Square>) -> Option<(Millis, Chess)> {
        if self.observation.scanned() || self.sensed.identifies_all() || !self.unseen_since_dump() {
            return None;
        }
        let Some((at, Some((lines, _)))) = &self.dump.dump_lines else {
            return None;
        };
        if *at != (self.dump.dump_seq, self.game().ply()) {
            return None;
        }
        lines.iter().find_map(|line| {
            let mut end = self.game().position().clone();
            line.iter().for_each(|&m| end.play_unchecked(m));
            // Put down since the dump, not shown by it.
            let to = (self.sensed.occupied() & !end.board().occupied()).single_square()?;
            let (_, seq, _) = self.squares.placed[to.to_usize()]?;
            let since = (seq > self.dump.dump_seq).then(|| self.sliding_from(&end, lifting))??;
            Some((since, end))
        })
    }

    /// The hypotheses past a dump (issue 34): the fewest plies nobody saw
    /// that reach what the dump showed (each inferred, 2), each gone on by
    /// the moves made since, seen square by square (0), so that every one
    /// of those changes only squares reported since the dump. The dump's
    /// lines are searched once per dump and record (`Limits::dump`: an
    /// outage may hide ten plies), the moves since from their ends. `None`:
    /// no such line (a dump that caught a hand at work, a capture whose
    /// square never read changed), or the search over its budget; the
    /// shortest lines through the dump are read then.
    fn past_dump(&mut self, pos: &Chess, reported: Bitboard) -> Option<Found> {
        let (dumps, mut more) = self.dump_lines(pos)?;
        let target = Target::sensed(&self.sensed);
        let since = Limits {
            capture_squares: reported,
            moves_within: reported,
            ..Limits::default()
        };
        let mut lines = Vec::new();
        for line in dumps {
            let mut end = pos.clone();
            line.iter().for_each(|&m| end.play_unchecked(m));
            if target.matches(end.board()) {
                lines.push(line);
                continue;
            }
            let found = resync(&end, &target, &since);
            more |= matches!(
                found,
                Resync::OverBudget { .. } | Resync::Candidates { more: true, .. }
            );
            for after in found.lines() {
                lines.push([line.as_slice(), after].concat());
            }
        }
        (!lines.is_empty()).then_some((lines, more))
    }

    /// With a clock, each press since the record completed one move (Art.
    /// 6.2.1): the board is as many moves on as the presses, or one more
    /// not pressed yet. Both lengths are searched in full, so a line
    /// shorter than the presses (a transposition that skips moves the clock
    /// saw made: 15...Nxd5 16.Bxe7 Rxe7 for 15...Nxe4 16.Bxe7 Rxe7 17.dxe4)
    /// is never read, and a listed candidate no longer than that, which
    /// goes on to no line found, is refuted. `None` when that says nothing
    /// (no press, no such line: a press without a move, Art. 7.5.3; or over
    /// budget): the shortest lines are read then.
    fn resynchronise_by_presses(
        &mut self,
        search: &dyn Fn(usize, usize) -> Option<Found>,
        made_at: Millis,
        basis: u64,
    ) -> Option<bool> {
        let pressed = self.clock.presses_ahead;
        if pressed == 0 || pressed >= Limits::default().max_plies {
            return None;
        }
        let (mut lines, more) = search(pressed, pressed)?;
        let (longer, more_longer) = search(pressed + 1, pressed + 1)?;
        lines.extend(longer);
        let more = more || more_longer;
        match &lines[..] {
            [] => None,
            [line] if !more => {
                let refuted = self.hypotheses.lines.iter().all(|l| l.len() <= pressed + 1);
                if !refuted && self.contradicts_candidates(line) {
                    return Some(false);
                }
                let line = line.clone();
                self.hypotheses.clear();
                {
                    self.record(&line, made_at, basis);
                    Some(true)
                }
            }
            _ => {
                self.ambiguous(lines, more);
                Some(false)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{EngineConfig, replay_script, resync::SyncState};

    /// An occupancy board with a clock, unplugged after 8.Bg5; the dump
    /// shows f6 emptied: 8...Nxe4 or 8...Nxd5. Then, square by square and
    /// pressed, 9.Bxe7 Rxe7 and the d3 pawn taking on e4, which only
    /// 8...Nxe4 allows (after 8...Nxd5 the knight on e4 is White's). The
    /// four presses say four moves: 8...Nxd5 9.Bxe7 Rxe7 is no story, and
    /// the one line of four (or five) moves is read.
    const SCRIPT: &str = "\
@0 setup rnbqr1k1/ppp1bppp/5n2/3P2B1/4N3/3P1N2/PPP1QPPP/R3KB1R b KQ - 2 8
@500 board xxxxx1x1/xxx1xxxx/5x2/3x2x1/4x3/3x1x2/xxx1xxxx/x3xx1x
@8000 reconnected
@8000 board xxxxx1x1/xxx1xxxx/8/3x2x1/4x3/3x1x2/xxx1xxxx/x3xx1x
@8100 press black
@9000 lift g5
@9200 lift e7
@9400 place e7
@9600 press white
@10500 lift e8
@10700 lift e7
@10900 place e7
@11100 press black
@12000 lift e4
@12200 lift d3
@12400 place e4
@12600 press white
";

    #[test]
    fn presses_after_a_dump_rule_out_a_candidate_that_cannot_go_on() {
        let engine = replay_script("t.board", SCRIPT, EngineConfig::default()).unwrap();
        let sans: Vec<String> = engine
            .game()
            .moves()
            .iter()
            .map(|m| m.san.to_string())
            .collect();
        assert_eq!(sans, ["Nxe4", "Bxe7", "Rxe7", "dxe4"]);
        assert_eq!(engine.sync_state(), SyncState::Ok);
    }
}
