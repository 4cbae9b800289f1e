//! The observations coming in: square events (lifts and places, with the
//! blips the settle time tells), scans and dumps, and the events that speak
//! of the settled position (presses, endings, claims, setups, tags). See
//! docs/design/reconstruction.md, the observation models.

use shakmaty::{Position, Square};

use super::{Engine, EngineError, blip_press::WhilePressKept};
use crate::{
    event::{BoardEvent, Millis, TimedEvent},
    game::{Termination, win},
};

impl Engine {
    /// Applies one event. Timestamps earlier than the last one are taken as
    /// equal to it.
    pub fn push(&mut self, ev: &TimedEvent) -> Result<(), EngineError> {
        let turned = self.oriented(ev);
        let ev = turned.as_ref().unwrap_or(ev);
        let t = ev.at.max(self.now);
        let put_back = match self.while_press_kept(&ev.event, t) {
            WhilePressKept::Go => None,
            WhilePressKept::Kept => return Ok(()),
            WhilePressKept::PutBack(kept) => Some(kept),
        };
        if let BoardEvent::Press(color) = ev.event {
            self.advance_to(t);
            if self.keep_blip_press(color, t) {
                self.now = t;
                return Ok(());
            }
        }
        self.push_now(ev)?;
        if let Some(kept) = put_back {
            self.judge_after_put_back(kept);
        }
        Ok(())
    }

    /// Applies one event, oriented, with no press kept waiting for it.
    pub(super) fn push_now(&mut self, ev: &TimedEvent) -> Result<(), EngineError> {
        let t = ev.at.max(self.now);
        if self.blip_put_back(&ev.event, t) {
            // A blip on a square a lift would have completed a move from:
            // neither the lift nor the put-back happened.
            self.advance_to(t);
            self.now = t;
            return Ok(());
        }
        self.advance_to(t);
        self.judge_hand_press(Some(&ev.event), t);
        self.confirm_brief_lift(Some(&ev.event), t);
        self.now = t;
        match &ev.event {
            BoardEvent::Lift(sq) => {
                if !self.hold_lift(*sq, t) {
                    self.lift(*sq, t);
                }
            }
            BoardEvent::Place(sq, piece) => self.place(*sq, *piece, t),
            BoardEvent::Board(scan) => {
                self.slide_before_scan(t, scan);
                self.seq += 1;
                if self.sensed.apply_scan(scan, self.seq) {
                    self.scan.scan_period.note(t);
                    self.settle.changed(t, self.seq);
                    // A dump or a snapshot (`observation.rs`).
                    if self.observation.scan_changed(self.snapshots.board()) {
                        self.dump.reconnected_seq = self.seq;
                    }
                    self.push_snapshot();
                    if self.observation.dumped() {
                        self.dump.unseen = self.sensed.occupied();
                        self.dump.dump_seq = self.seq;
                        if !self.sensed.identifies_all() {
                            // Searched now, so that a piece put down on its
                            // way past the dump's lines waits as it would
                            // from the record (`sliding_past_dump`).
                            let pos = self.game().position().clone();
                            self.dump_lines(&pos);
                        }
                    }
                } else if self.observation.scan_unchanged(self.snapshots.board()) {
                    // A scanning board's first scan, showing what already
                    // stands: its next scans are snapshots, not a dump.
                    self.push_snapshot();
                }
            }
            BoardEvent::Reconnected => self.observation.link_back(),
            BoardEvent::Clock(white, black) => {
                let before = self.clock.last.replace((*white, *black));
                self.flag_shown(before, (*white, *black));
                // Times reported while the board shows a state not read yet
                // belong to the record as it will be once it is read.
                if !self.settle.hold_clock() && self.report_belongs_to_record() {
                    self.update_last_completed_clock();
                }
            }
            other => {
                // The rest speak of the settled position.
                self.flush();
                let players_end_game = matches!(
                    other,
                    BoardEvent::Resign(_)
                        | BoardEvent::Draw
                        | BoardEvent::Result(_)
                        | BoardEvent::Special(_)
                );
                if players_end_game
                    && (self.hand_awaited
                        || self.observation.scanned()
                            && !self.sensed.shows_position(self.game().position()))
                {
                    // The players ended the game: what the board shows is
                    // where they left it, not a piece in the air (also when
                    // only the first of the moves a scan showed was read).
                    self.evaluate_at(true);
                }
                if players_end_game {
                    // Listed candidates: the board stands as they left it.
                    self.follow_at_end();
                }
                self.apply_decision(other, t)?;
            }
        }
        self.settle_slide_press();
        self.analyse_in_line();
        self.guard_step(false);
        Ok(())
    }

    pub(super) fn lift(&mut self, sq: Square, t: Millis) {
        self.read_before_opponent_lift(sq, t);
        self.lift_may_complete_brief_capture(sq, t);
        self.seq += 1;
        // A square filled and emptied again at once, with nothing else in
        // between, before the state settled: a sensor blip.
        let placed = self.squares.placed[sq.to_usize()].take();
        let phantom = placed.is_some_and(|(at, seq, _)| {
            seq + 1 == self.seq && t.saturating_sub(at) < self.config.settle_ms
        });
        if phantom {
            // The piece put on `sq` was the blip, so it was not the piece
            // lifted before put back: that lift was real, and its touch
            // stands (no blip assumption removes both).
            if let Some((_, _, Some(lifted_at))) = placed {
                self.note_touch(sq, lifted_at);
            }
            self.squares.lifted[sq.to_usize()] = None;
            if self.sensed.lift(sq, self.seq) {
                self.settle.changed(t, self.seq);
                self.observation.square_changed();
                self.snapshots.clear();
            }
            self.sensed.forget_phantom(sq);
            return;
        }
        self.note_touch(sq, t);
        let settled = !self.settle.is_unread();
        let was = self.sensed.occupied().contains(sq);
        self.squares.lifted[sq.to_usize()] = was.then_some((t, self.sensed.piece_at(sq), self.seq));
        if self.sensed.lift(sq, self.seq) {
            self.settle.changed(t, self.seq);
            self.observation.square_changed();
            self.snapshots.clear();
        }
        self.complete_by_opponent_lift(sq, settled, t);
    }

    /// Notes a lift of `sq` at `t` as a touch by the player moving.
    fn note_touch(&mut self, sq: Square, t: Millis) {
        if !self.game().is_over() && self.config.arbiter {
            self.touches.note(
                &self.games[self.games.len() - 1],
                sq,
                t,
                self.config.settle_ms,
            );
        }
    }

    pub(super) fn place(&mut self, sq: Square, piece: Option<shakmaty::Piece>, t: Millis) {
        self.seq += 1;
        // Put back where it was lifted, as it was, at once (nothing else
        // happened in between) and before the state settled.
        let lifted = self.squares.lifted[sq.to_usize()].take();
        let put_back = lifted.is_some_and(|(at, was, _)| {
            t.saturating_sub(at) < self.config.settle_ms
                && !self.sensed.occupied().contains(sq)
                && (piece.is_none() || was.is_none() || piece == was)
        });
        let candidate = put_back && lifted.is_some_and(|(_, _, seq)| seq + 1 == self.seq);
        // A piece put on an empty square, not one put back, may be a blip
        // itself.
        let forgot = (put_back && !candidate)
            .then(|| lifted.map(|(at, _, _)| at))
            .flatten();
        self.squares.placed[sq.to_usize()] =
            (!candidate && !self.sensed.occupied().contains(sq)).then_some((t, self.seq, forgot));
        if self.sensed.place(sq, piece, self.seq) {
            self.settle.changed(t, self.seq);
            self.observation.square_changed();
            self.snapshots.clear();
        }
        if candidate {
            self.forget_if_blip(sq);
        } else if put_back {
            // A blip is a fault of one square: the hand moving pieces
            // elsewhere meanwhile does not make it a touch (Art. 4.3 needs
            // a deliberate one). Had it been the captured piece taken off,
            // the capture would touch it anyway.
            self.touches.forget(sq);
            // Other reports came between the lift and the place (a piece
            // lifted as the square blipped): a capture on it read from that
            // vacancy alone is weighed against a blip (`brief.rs`).
            self.note_brief_refill(sq);
        }
    }

    /// A piece lifted from `sq` and put straight back is a blip (a sensor
    /// flicker, or a hand that let go at once), not evidence of a touch or
    /// a capture, unless another piece was in the air meanwhile: then it
    /// may be a capture on `sq` (the captured piece lifted, the capturing
    /// one put down in its place).
    pub(super) fn forget_if_blip(&mut self, sq: Square) {
        use crate::matcher::{Explanation, explain};
        let mut probe = self.sensed.clone();
        probe.forget_blip(sq);
        let game = self.game();
        let pos = game.position();
        let since = game.basis(game.ply());
        // The other brief refills are no more a capture than this one: a
        // capture on this square, with each of them taken for a blip, keeps
        // it open too, or the first of two vacancies beside a move in the
        // air would make the second a blip by their order alone.
        let others = self.without_blips(self.brief_squares().without(sq));
        let capture_here = matches!(
            explain(pos, &others, since, 1),
            Explanation::Unique(moves) if moves[0].is_capture() && moves[0].to() == sq
        );
        let in_air = probe.occupied().count() < pos.board().occupied().count()
            && (capture_here || !matches!(explain(pos, &probe, since, 1), Explanation::Unique(_)));
        // A lift put back within the settle time is what a blip looks
        // like: no touch survives that assumption (Art. 4.3 needs a
        // deliberate touch), even while the squares keep the capture open.
        self.touches.forget(sq);
        if in_air {
            self.note_brief_refill(sq);
        } else {
            self.sensed = probe;
        }
    }

    /// Presses, flags, resignations, agreements, results, claims, setups
    /// and tags.
    pub(super) fn apply_decision(
        &mut self,
        event: &BoardEvent,
        t: Millis,
    ) -> Result<(), EngineError> {
        match event {
            BoardEvent::Press(color) => {
                self.clock.in_use = true;
                self.press(*color, t);
            }
            // Art. 6.9: a loss, unless the opponent cannot checkmate.
            BoardEvent::Flag(color) => {
                self.loss_unless_no_mate(*color, Termination::TimeForfeit, t)
            }
            BoardEvent::Resign(color) => {
                // Art. 5.1.2 (2023): a draw if the opponent cannot checkmate.
                if self.config.rules().resignation_needs_mating_chances() {
                    self.loss_unless_no_mate(*color, Termination::Resignation, t);
                } else {
                    self.end_game(win(!*color), Termination::Resignation, t);
                }
            }
            BoardEvent::Draw => self.agree_draw(t),
            BoardEvent::Result(outcome) => {
                let termination = if outcome.is_known() {
                    Termination::ArbiterDecision
                } else {
                    Termination::Abandoned
                };
                self.end_game(*outcome, termination, t);
            }
            BoardEvent::Special(special) => {
                self.end_game(special.outcome(), Termination::Special(*special), t);
            }
            BoardEvent::Claim(color, kind, mv) => self.claim(*color, *kind, mv.as_ref(), t),
            BoardEvent::Setup(fen) => self.setup(fen, t)?,
            BoardEvent::Tag(name, value) => self.tag(name, value),
            BoardEvent::Lift(_)
            | BoardEvent::Place(..)
            | BoardEvent::Board(_)
            | BoardEvent::Reconnected => {}
            BoardEvent::Clock(..) => {}
        }
        Ok(())
    }

    /// Keeps what the board shows now as the snapshot of the last scan.
    pub(super) fn push_snapshot(&mut self) {
        self.snapshots.push(self.seq, self.sensed.occupied());
        if self.sensed.identifies_all() {
            let pieces = Square::ALL.map(|sq| self.sensed.piece_at(sq));
            self.snapshots.push_pieces(self.seq, pieces);
        }
    }
}
