//! The tracker extended past a skipped stretch: a scan or a dump that no
//! short reading explains is given to the resync search (`src/resync.rs`),
//! whose answer is recorded, listed, or waited on (`searching` when over
//! its budget, counted in nodes: never an accusation). See
//! docs/design/reconstruction.md, the tracker and its budget.

use shakmaty::{Bitboard, Move, Position};

use super::{
    Engine,
    hypotheses::{IDENTITY_SNAPSHOT_PLIES, SNAPSHOT_PLIES},
    scanned::{hand_along, hand_may_explain},
};
use crate::{
    event::Millis,
    resync::{Limits, Resync, SyncState, Target, resync},
};

/// Lines found by the search, and whether there may be more.
pub(super) type Found = (Vec<Vec<Move>>, bool);

impl Engine {
    /// A settled state that nothing shorter explains: search, when the board
    /// may have skipped states (a full scan or dump changed it last).
    /// `closing`: the players ended the game, so no later scan comes to
    /// confirm moves. Returns whether moves were recorded.
    pub(super) fn resynchronise(&mut self, made_at: Millis, basis: u64, closing: bool) -> bool {
        if !self.observation.scanned() && self.unseen_since_dump() && !self.sensed.identifies_all()
        {
            return self.resynchronise_after_dump(made_at, basis);
        }
        if !self.observation.scanned() {
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
        if occupancy && !self.observation.dumped() && !outage {
            // On an occupancy board's snapshots, a piece slid to a wrong
            // square or held in the hand is too often explained by moves
            // nobody made: not read until those cases are told apart.
            return false;
        }
        // A dump of a board that names pieces pins the search down: it
        // may go on longer. On occupancy, more work finds more lines a blip
        // fits as well, and is not spent.
        let limits = if (self.observation.dumped() || outage) && !occupancy {
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
                if !self.observation.dumped()
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
                    self.scan.unlisted = Some(vec![line]);
                } else {
                    self.ambiguous(vec![line], false);
                }
            }
            // On a board that identifies pieces, a long line one snapshot
            // shows waits for the next scan if a square it changed could be
            // a blip (a pawn read gone for a moment reads as captured by a
            // piece that went there and back).
            Resync::Unique(line)
                if !self.observation.dumped()
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
            // Its last move only this scan showed, its piece perhaps caught
            // on its way (a bishop seen on b2 going from c3 to a1): the
            // moves before it are recorded, and it waits for the next scan
            // (docs/design/reconstruction.md, the decision policy).
            Resync::Unique(line) if !closing && self.line_ends_mid_slide(&pos, &line) => {
                self.hypotheses.clear();
                let (&last, prefix) = line.split_last().expect("a line of two moves or more");
                self.record(prefix, made_at, basis);
                self.hold_caught_slide(last, made_at);
                return true;
            }
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
                    && !self.observation.dumped()
                    && !suspects.is_empty()
                    && self.hypotheses.state != SyncState::Ambiguous =>
            {
                self.hypotheses.state = SyncState::Searching;
                self.scan.unlisted = Some(lines);
            }
            Resync::Candidates { lines, more } => self.ambiguous(lines, more),
            Resync::None => self.hypotheses.state = SyncState::Lost,
            Resync::OverBudget { .. } => self.hypotheses.state = SyncState::Searching,
            Resync::Unique(_) => {}
        }
    }
}
