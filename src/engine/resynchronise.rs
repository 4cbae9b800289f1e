//! The tracker extended past a skipped stretch: a scan or a dump that no
//! short reading explains is given to the resync search (`src/resync.rs`),
//! whose answer is recorded, listed, or waited on (`searching` when over
//! its budget, counted in nodes: never an accusation). See
//! docs/design/reconstruction.md, the tracker and its budget.

use shakmaty::{Bitboard, Chess, Move, Position, Square};

use super::{
    Engine,
    hypotheses::{IDENTITY_SNAPSHOT_PLIES, SNAPSHOT_PLIES, through_dump},
    scanned::{hand_along, hand_may_explain},
};
use crate::{
    event::Millis,
    resync::{Limits, Resync, SyncState, Target, resync},
    sensed::SensedBoard,
};

/// Lines found by the search, and whether there may be more.
pub(super) type Found = (Vec<Vec<Move>>, bool);

impl Engine {
    /// A settled state that nothing shorter explains: search, when the board
    /// may have skipped states (a full scan or dump changed it last).
    /// `closing`: the players ended the game, so no later scan comes to
    /// confirm moves. Returns whether moves were recorded.
    pub(super) fn resynchronise(&mut self, made_at: Millis, basis: u64, closing: bool) -> bool {
        if !self.scanned && self.unseen_since_dump() && !self.sensed.identifies_all() {
            return self.resynchronise_after_dump(made_at, basis);
        }
        if !self.scanned {
            // Square by square, the board shows every change: a state no
            // move explains is a move in progress or displaced pieces.
            if self.hypotheses.state != SyncState::Ambiguous {
                self.hypotheses.clear();
            }
            return false;
        }
        let game = self.game();
        let pos = game.position().clone();
        let target = Target::sensed(&self.sensed);
        let occupancy = !self.sensed.identifies_all();
        // After the link came back, until the record has caught up with
        // the board, the scans may be any number of moves on.
        let outage = self.unseen_since_reconnection();
        if occupancy && !self.dumped && !outage {
            // On an occupancy board's snapshots, a piece slid to a wrong
            // square or held in the hand is too often explained by moves
            // nobody made: not read until those cases are told apart.
            return false;
        }
        // A dump of a board that names pieces pins the search down: it
        // may go on longer. On occupancy, more work finds more lines a blip
        // fits as well, and is not spent.
        let limits = if (self.dumped || outage) && !occupancy {
            Limits::dump()
        } else {
            Limits::default()
        };
        let found = resync(&pos, &target, &limits);
        let found = match found {
            // After an outage, the lines pass through the dump exactly.
            found if self.reading_through_scan_dump(occupancy) => {
                self.through_scan_dump(&pos, found, &target)
            }
            // On a board that identifies pieces, the snapshots since the
            // record's position rule out the orders of moves that never
            // stood as they showed (a scan showed 4.dxe5 Nxe5 5.Nxe5, so
            // 5...Bxe5 after it was not 4.Nxe5 Nxe5 5.dxe5 Bxe5). On
            // occupancy after an outage they do the same, hands at work
            // allowed.
            Resync::Candidates { lines, more: false } if !occupancy || outage => {
                let since = game.basis(game.ply());
                let mut through = if occupancy {
                    lines
                        .iter()
                        .filter(|line| self.snapshots.allow(&pos, line, since, Bitboard::EMPTY))
                        .cloned()
                        .collect()
                } else {
                    self.snapshots.through_pieces(&pos, &lines, since)
                };
                match through.len() {
                    1 => Resync::Unique(through.remove(0)),
                    0 => Resync::Candidates { lines, more: false },
                    _ => Resync::Candidates {
                        lines: through,
                        more: false,
                    },
                }
            }
            other => other,
        };
        match found {
            Resync::Unique(line) => self.take_unique(line, made_at, basis, closing),
            other => {
                self.take_candidates(other, closing);
                false
            }
        }
    }

    /// The record's position, whether the board senses occupancy only,
    /// and the squares the last scan changed that a blip may explain.
    fn scan_context(&self) -> (shakmaty::Chess, bool, Bitboard) {
        let pos = self.game().position().clone();
        let occupancy = !self.sensed.identifies_all();
        let suspects = self
            .snapshots
            .blip_suspects(pos.board().occupied(), self.sensed.occupied());
        (pos, occupancy, suspects)
    }

    /// One line explains the scan: recorded, listed, or waiting for the
    /// next scan, as the snapshots and a hand allow. Returns whether moves
    /// were recorded.
    pub(super) fn take_unique(
        &mut self,
        line: Vec<Move>,
        made_at: Millis,
        basis: u64,
        closing: bool,
    ) -> bool {
        let (pos, occupancy, suspects) = self.scan_context();
        let game = self.game();
        let outage = self.unseen_since_reconnection();
        let pressed = self.clock.presses_ahead;
        match Resync::Unique(line) {
            Resync::Unique(line)
                if occupancy
                    && !closing
                    && (hand_may_explain(
                        &pos,
                        &self.sensed,
                        line.len().saturating_sub(1),
                        pressed,
                    ) || hand_along(&pos, &line, &self.sensed)) =>
            {
                self.hypotheses.state = SyncState::Searching;
            }
            Resync::Unique(line)
                if !self.dumped
                    && line.len() > SNAPSHOT_PLIES
                    && (if occupancy {
                        !outage
                    } else {
                        line.len() > IDENTITY_SNAPSHOT_PLIES
                            && !self.goes_on_from_passed(&line)
                            && !self.goes_on_from_shown(&pos, &line)
                            && !self.pinned_by_snapshots(&pos, &line)
                    } || !self.snapshots.allow(
                        &pos,
                        &line,
                        game.basis(game.ply()),
                        Bitboard::EMPTY,
                    ) && (occupancy
                        // On a board that identifies pieces, a piece one
                        // scan alone showed gone was a blip.
                        || !self
                            .snapshots
                            .without_pieces_caught_gone(game.basis(game.ply()))
                            .allow(&pos, &line, game.basis(game.ply()), Bitboard::EMPTY))) =>
            {
                // On a board that identifies pieces, a line the last scan
                // alone showed is listed only if the board stands so: a
                // blip one scan caught reads as a detour of several moves
                // (a knight lifted from b1 for a moment as 4.Na3 Bxa3
                // 5.Nf3 Bf8).
                if !occupancy
                    && !closing
                    && !suspects.is_empty()
                    && self.hypotheses.state != SyncState::Ambiguous
                {
                    self.hypotheses.state = SyncState::Searching;
                    self.unlisted = Some(vec![line]);
                } else {
                    self.ambiguous(vec![line], false);
                }
            }
            // On a board that identifies pieces, a long line one snapshot
            // shows waits for the next scan if a square it changed could be
            // a blip (a pawn read gone for a moment reads as captured by a
            // piece that went there and back).
            Resync::Unique(line)
                if !self.dumped
                    && !closing
                    && line.len() > SNAPSHOT_PLIES
                    && !self.contradicts_candidates(&line)
                    && !suspects.is_empty() =>
            {
                // Listed candidates agree with the line: they stay until it
                // is confirmed (cleared, a record that may lag would list
                // it again at once).
                self.unconfirmed_read(Vec::new(), line, suspects, made_at, basis, true);
            }
            Resync::Unique(line) if self.contradicts_candidates(&line) => {}
            Resync::Unique(line) => {
                self.hypotheses.clear();
                self.record(&line, made_at, basis);
                return true;
            }
            _ => {}
        }
        false
    }

    /// Several lines explain the scan, or none, or the search ran out of
    /// budget (it waits: `searching`, no accusation).
    pub(super) fn take_candidates(&mut self, found: Resync, closing: bool) {
        let (pos, occupancy, suspects) = self.scan_context();
        match found {
            // Not even the moves all candidates begin with are certain: the
            // board may show a move in progress after a shorter sequence
            // that no candidate is (a scan that caught the next player's
            // hand taking a piece).
            // A press the board has not shown a move for yet says whose
            // move this is: `pressed_before_scan` judges it instead.
            Resync::Candidates { .. } if self.clock.pending_press[pos.turn()] => {}
            // So do several lines one scan alone showed, on a board that
            // identifies pieces: e8 caught empty after 21...Rae8 (a blip)
            // read as four detours of four moves that took the rook;
            // listed, they held back 22.Rxe7, which the next scans showed.
            Resync::Candidates { lines, more: false }
                if !occupancy
                    && !closing
                    && !self.dumped
                    && !suspects.is_empty()
                    && self.hypotheses.state != SyncState::Ambiguous =>
            {
                self.hypotheses.state = SyncState::Searching;
                self.unlisted = Some(lines);
            }
            Resync::Candidates { lines, more } => self.ambiguous(lines, more),
            Resync::None => self.hypotheses.state = SyncState::Lost,
            Resync::OverBudget { .. } => self.hypotheses.state = SyncState::Searching,
            Resync::Unique(_) => {}
        }
    }

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
    fn resynchronise_after_dump(&mut self, made_at: Millis, basis: u64) -> bool {
        let game = self.game();
        let pos = game.position().clone();
        let dump = self.unseen;
        let reported = self.sensed.touched_since(self.dump_seq);
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
                self.record(&line, made_at, basis);
                true
            }
            _ => {
                self.ambiguous(lines, more);
                false
            }
        }
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
        let key = (self.dump_seq, self.game().ply());
        let (dumps, mut more) = match &self.dump_lines {
            Some((at, found)) if *at == key => found.clone(),
            _ => {
                let found = match resync(pos, &Target::occupancy(self.unseen), &Limits::dump()) {
                    Resync::Unique(line) => Some((vec![line], false)),
                    Resync::Candidates { lines, more } => Some((lines, more)),
                    Resync::None | Resync::OverBudget { .. } => None,
                };
                self.dump_lines = Some((key, found.clone()));
                found
            }
        }?;
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
                self.record(&line, made_at, basis);
                Some(true)
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
