//! A lift that would be evidence of completion, observed once it outlives
//! a blip. With no clock, the opponent lifting one of his pieces completes
//! the last move (Art. 6.2.1), and on any event board it ends the slide
//! dwell of a piece that may be sliding on (`slide.rs`). A 5–60 ms blip
//! on one of his squares looks like that lift for a moment, so such a lift
//! is held for the settle time while the other events go on: the same
//! piece put back on its square within it was a blip, and neither event
//! happened (docs/design/reconstruction.md: a lift undone within the settle
//! time is a blip, not a hand); otherwise the lift is applied once the
//! settle time has passed.

use shakmaty::{Bitboard, Color, Piece, Position, Role, Square, attacks};

use super::Engine;
use crate::event::{BoardEvent, Millis};

/// A lift held until it outlives a blip.
#[derive(Debug, Clone, Copy)]
pub(super) struct HeldLift {
    sq: Square,
    at: Millis,
    /// What the board said stood there.
    piece: Option<Piece>,
    /// What the record has there: whose hand it is, and where that piece
    /// can go.
    lifted: Piece,
    /// It would complete the last move (no clock), not only end a slide
    /// dwell: the lifter's own move follows, so any other board event
    /// applies it first (the squares' order must stay as it came).
    completes: bool,
}

impl Engine {
    /// Whether a lift of `sq` at `t` is evidence of completion: with no
    /// clock, a piece of the player to move while the last move is not
    /// completed (or while the mover's state is unexplained), or on any
    /// event board, an opponent's piece while the mover's piece may be
    /// sliding on. `Some(true)` when it would complete the last move.
    fn lift_is_evidence(&self, sq: Square, t: Millis) -> Option<bool> {
        let game = self.game();
        if game.is_over() || self.observation.scanned() || self.phase.is_restoring() {
            return None;
        }
        let pos = game.position();
        let color = pos.board().color_at(sq)?;
        let n = game.ply();
        let completes = !self.clock.in_use
            && (color == pos.turn() && n > 0 && game.moves()[n - 1].completed_at.is_none()
                || color != pos.turn() && self.phase.unexplained().is_some());
        (completes || self.lift_ends_slide(sq, t)).then_some(completes)
    }

    /// A lift of `sq` at `t`: holds it if it is evidence of completion;
    /// returns whether it did.
    pub(super) fn hold_lift(&mut self, sq: Square, t: Millis) -> bool {
        let Some(completes) = self.lift_is_evidence(sq, t) else {
            return false;
        };
        if self.squares.held_lifts.iter().any(|h| h.sq == sq) {
            return false;
        }
        let Some(lifted) = self.game().position().board().piece_at(sq) else {
            return false;
        };
        self.squares.held_lifts.push(HeldLift {
            sq,
            at: t,
            piece: self.sensed.piece_at(sq),
            lifted,
            completes,
        });
        true
    }

    /// Before `event` at `t`: whether it puts a held lift's piece back
    /// within the settle time (a blip: neither event happened; the lift
    /// is dropped here, the caller drops the event). A piece put down
    /// anywhere else may be the lifted one (the lift was the start of a
    /// move), and a scan, a dump or a setup shows the board as it is: the
    /// held lifts are applied first. So are they at a lift elsewhere when
    /// one would complete the last move: the lifter's own move follows, and
    /// its squares must be read in the order they came (a blip beside it is
    /// told by that order). Presses, clock times, and lifts around a lift
    /// that only ends a slide dwell (the sliding piece picked up again) go
    /// on around them.
    pub(super) fn blip_put_back(&mut self, event: &BoardEvent, t: Millis) -> bool {
        if self.squares.held_lifts.is_empty() {
            return false;
        }
        let settle_ms = self.config.settle_ms;
        match event {
            BoardEvent::Press(_) | BoardEvent::Clock(..) => false,
            BoardEvent::Lift(sq) => {
                if self
                    .squares
                    .held_lifts
                    .iter()
                    .any(|h| h.completes && self.may_go_on(h, *sq, None, t))
                {
                    self.lifts_outlived_by(t, true);
                }
                false
            }
            BoardEvent::Place(sq, piece) => {
                let back = self.squares.held_lifts.iter().position(|h| {
                    h.sq == *sq
                        && t.saturating_sub(h.at) < settle_ms
                        && (piece.is_none() || h.piece.is_none() || *piece == h.piece)
                });
                if let Some(i) = back {
                    self.squares.held_lifts.remove(i);
                    return true;
                }
                if self
                    .squares
                    .held_lifts
                    .iter()
                    .any(|h| self.may_go_on(h, *sq, Some(*piece), t))
                {
                    self.lifts_outlived_by(t, true);
                }
                false
            }
            _ => {
                self.lifts_outlived_by(t, true);
                false
            }
        }
    }

    /// Whether a lift or place on `sq` may belong to a move with the held
    /// lift: any reported at the same instant; otherwise the lifted piece put down where it can go (on an identity
    /// board, a piece of its colour), a piece put on the square it left (a
    /// capture landing), or a piece lifted that it can take, that can take
    /// it, or of its own side. Anything else is another hand (the opponent
    /// finishing his move beside a touch or a blip) and leaves the held lift
    /// to the settle time: applying it first would read the touch as
    /// completing a move still in the air.
    fn may_go_on(
        &self,
        h: &HeldLift,
        sq: Square,
        placed: Option<Option<Piece>>,
        t: Millis,
    ) -> bool {
        let p = h.lifted;
        // Changes a board reports at one instant (one report of a board
        // that sends its whole state) have no order among them: the lift
        // keeps its place before the others.
        if t <= h.at {
            return true;
        }
        let occupied = self.sensed.occupied();
        match placed {
            Some(_) if sq == h.sq => true,
            Some(Some(named)) if named.color != p.color => false,
            Some(_) => reach(h.sq, p, occupied).contains(sq),
            None => {
                let board = self.game().position().board();
                board.color_at(sq) == Some(p.color)
                    || reach(h.sq, p, occupied).contains(sq)
                    || board
                        .piece_at(sq)
                        .is_some_and(|q| reach(sq, q, occupied).contains(h.sq))
            }
        }
    }

    /// The held lifts not put back by `t` within the settle time have
    /// outlived a blip: applied now (at their own time if nothing came
    /// since), in order. `all`: the input ended, every one is applied.
    pub(super) fn lifts_outlived_by(&mut self, t: Millis, all: bool) {
        let settle_ms = self.config.settle_ms;
        while let Some(h) = self.squares.held_lifts.first().copied()
            && (all || t.saturating_sub(h.at) >= settle_ms)
        {
            self.squares.held_lifts.remove(0);
            if !self.sensed.occupied().contains(h.sq) {
                continue;
            }
            let at = self.now.max(h.at);
            self.lift(h.sq, at);
        }
    }

    /// When the first lift held will have outlived a blip.
    pub(super) fn held_lift_deadline(&self) -> Option<Millis> {
        self.squares
            .held_lifts
            .first()
            .map(|h| h.at.saturating_add(self.config.settle_ms))
    }
}

/// Squares a piece on `from` may be put down on or take on in one move:
/// its attacks over `occupied`, a pawn's pushes, a king's castling squares.
fn reach(from: Square, p: Piece, occupied: Bitboard) -> Bitboard {
    let mut to = attacks::attacks(from, p, occupied);
    match p.role {
        Role::Pawn => {
            let step = if p.color == Color::White { 8 } else { -8 };
            for n in [1, 2] {
                if let Some(s) = from.offset(step * n) {
                    to.add(s);
                }
            }
        }
        Role::King if from.rank() == p.color.backrank() => {
            for d in [-2, 2] {
                if let Some(s) = from.offset(d) {
                    to.add(s);
                }
            }
        }
        _ => {}
    }
    to
}
