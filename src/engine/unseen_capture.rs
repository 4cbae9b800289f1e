//! A capture an occupancy board never showed on its square: the capturing
//! piece can take the captured one's place faster than the board reports a
//! change (its debounce), so the capture square never reads empty and only
//! the capturing piece's square does.

use shakmaty::{Bitboard, Color, Move, Position, Role, Square, attacks};

use super::{
    Engine, Reading,
    cost::{BLIP, within_margin},
};
use crate::{
    event::Millis,
    game::Game,
    matcher::{Explanation, captured_square, explain},
    sensed::SensedBoard,
};

impl Engine {
    /// The legal captures by the mover's piece that the board shows
    /// gone, when that square and `lifted` are all the board shows changed
    /// (occupancy square events only). Completed, one of them is the move
    /// made: a piece in the hand at a press, or taken off the board, would
    /// be an illegal move, and a legal explanation costs less (see
    /// docs/design/reconstruction.md, the cost table).
    fn unseen_captures(&self, color: Color, lifted: Bitboard) -> Vec<Move> {
        if self.observation.scanned() || self.sensed.names_pieces() || self.game().is_over() {
            return Vec::new();
        }
        let pos = self.game().position();
        let board = pos.board();
        let sensed = self.sensed.occupied();
        let vacated = board.occupied() & !sensed;
        let from = (vacated & !lifted).single_square();
        let Some(from) = from.filter(|&from| {
            pos.turn() == color
                && board.color_at(from) == Some(color)
                && (vacated & lifted) == lifted
                && (sensed & !board.occupied()).is_empty()
        }) else {
            return Vec::new();
        };
        let captures = pos.legal_moves().into_iter().filter(|m| {
            m.from() == Some(from)
                && m.is_capture()
                && !m.is_en_passant()
                && m.promotion().is_none_or(|r| r == Role::Queen)
        });
        let game = self.game();
        // A piece is dragged over its path only once it has left its
        // square: a square touched before that is a flicker whichever
        // capture was made, and tells none of them.
        let since = game.basis(game.ply()).max(self.sensed.last_lift(from));
        let touched =
            (self.sensed.touched_since(since) | self.sensed.flickered_since(since)) & !lifted;
        // Nor is a square touched after the piece landed: a capture square
        // seen refilled since the piece left was its landing at the latest.
        let landed = |m: &Move| {
            let put = self.sensed.last_place(m.to());
            if put > since {
                self.sensed.touched_since(put) | self.sensed.flickered_since(put)
            } else {
                Bitboard::EMPTY
            }
        };
        within_margin_by_path(captures.collect(), touched.without(from), landed)
    }

    /// At a press by `color`: records and completes the capture the board
    /// did not show on its square, if there is one; returns whether it did.
    pub(super) fn press_completes_unseen_capture(&mut self, color: Color, t: Millis) -> bool {
        if self.game().position().turn() == color && self.press_completes_brief_capture(t) {
            return true;
        }
        self.unseen_capture_at_press(color, t)
    }

    /// Records and completes the capture the board did not show on its
    /// square, if there is one; returns whether it did.
    fn unseen_capture_at_press(&mut self, color: Color, t: Millis) -> bool {
        match self.unseen_captures(color, Bitboard::EMPTY)[..] {
            [] => false,
            [m] => {
                self.record(&[m], self.settle.since(), self.settle.basis());
                self.complete_all(t);
                self.evaluate_at(false);
                true
            }
            ref several => {
                // Legal explanations survive: the next moves tell them
                // apart; nobody is accused meanwhile. The press completed
                // one of them: the clock is a move ahead of the record.
                self.ambiguous(several.iter().map(|&m| vec![m]).collect(), false);
                self.clock.pending_press[color] = true;
                self.clock.presses_ahead += 1;
                true
            }
        }
    }

    /// With no clock, the settled board shows the mover's square empty
    /// and one of the opponent's pieces lifted (a lift that outlived any
    /// blip): that lift completed the move (Art. 6.2.1), which is the one
    /// capture the board did not show on its square, if that piece is not
    /// one it could be capturing. It is recorded before the state is read.
    pub(super) fn opponent_lift_completed_unseen_capture(&mut self) {
        if self.clock.in_use || self.may_lag() || self.phase.is_restoring() {
            return;
        }
        let pos = self.game().position();
        let theirs = pos.board().by_color(!pos.turn()) & !self.sensed.occupied();
        let Some((completed_by, captures)) = self.completing_lifts(theirs) else {
            return;
        };
        let Some(first) = captures.first() else {
            return;
        };
        // The squares the opponent touched from his lift on are his
        // move's. So is every lift after the capturing piece left its
        // square (the capture itself showed nothing more): the captured
        // piece or his own, they are no touches of the mover's.
        if let Some(from) = first.from()
            && let Some((left, _, _)) = self.squares.lifted[from.to_usize()]
        {
            self.touches.forget_after(pos.turn(), left);
        }
        match captures[..] {
            [m] => {
                let since = self.settle.since();
                self.record(&[m], since, completed_by.saturating_sub(1));
                self.complete_all(since);
            }
            // Several: each legal, none certain. Listed, the moves after
            // them tell them apart (`follow.rs`); nobody is accused of
            // displaced pieces meanwhile, however long the lifted piece is
            // held.
            _ if self.hypotheses.state != crate::resync::SyncState::Ambiguous => {
                self.ambiguous(captures.iter().map(|&m| vec![m]).collect(), false);
                // The lift that completed them is the reply's first touch:
                // their end position stood from before it, as the one
                // capture's above (`follow.rs` reads the reply from there).
                let stood = completed_by.saturating_sub(1);
                for (_, since) in &mut self.hypotheses.since {
                    *since = stood;
                }
            }
            _ => {}
        }
    }

    /// The opponent's lifts `theirs` that complete a capture the board did
    /// not show on its square, the board event of the first of them, and
    /// the captures. One of his pieces lifted, which the mover's lifted
    /// piece cannot be capturing (en passant too: Art. 3.7.4.1 takes the
    /// pawn where it stands), else it may be the captured piece taken off,
    /// no completion. Or two: one on the square of such a capture, the
    /// capturing piece taken off as his recapture begins (the exchange beat
    /// the debounce), and one no capture of the mover's takes, his own
    /// piece: that lift completed the capture (Art. 6.2.1), since the other
    /// story, the captured piece off and the capturing one still in the
    /// hand, has him lift a piece before the move is completed (the cost
    /// table: a hand at the completion, 10).
    fn completing_lifts(&self, theirs: Bitboard) -> Option<(u64, Vec<Move>)> {
        let pos = self.game().position();
        let captures = self.unseen_captures(pos.turn(), theirs);
        let from = captures.first()?.from();
        let takes = |sq: Square| {
            pos.legal_moves()
                .iter()
                .any(|m| m.from() == from && captured_square(*m) == Some(sq))
        };
        let taken: Bitboard = theirs.into_iter().filter(|&s| takes(s)).collect();
        let first_lift = theirs.into_iter().map(|s| self.sensed.last_lift(s)).min()?;
        match (theirs.count(), taken.count()) {
            (1, 0) => Some((first_lift, captures)),
            (2, 1) => {
                let on: Vec<Move> = captures
                    .into_iter()
                    .filter(|m| taken.contains(m.to()))
                    .collect();
                Some((first_lift, on))
            }
            _ => None,
        }
    }
}

/// The captures whose squares touched since the record's last move cost
/// within [`MARGIN`](super::cost::MARGIN) of the cheapest. A square off the capture's own is a
/// drag over its path (free: a dragged piece is reported on every square
/// it crosses) or a blip ([`BLIP`]): the queen dragged c4-d5 and taking on
/// e6 unseen is Qxe6, not a capture on e4 or c6 with d5 a blip. A square
/// of its path touched only after the piece landed (`landed`, the squares
/// touched since) was no drag: the piece was down.
fn within_margin_by_path(
    captures: Vec<Move>,
    touched: Bitboard,
    landed: impl Fn(&Move) -> Bitboard,
) -> Vec<Move> {
    within_margin(captures, |m| {
        let path = m
            .from()
            .map_or(Bitboard::EMPTY, |from| attacks::between(from, m.to()));
        (touched & !(path & !landed(m))).without(m.to()).count() * BLIP
    })
}

/// On an occupancy event board, a state no move explains
/// where the mover's piece left its square and the opponent has since
/// made his move: the mover's move was a capture the board never showed on
/// its square (0 once completed), and the opponent's move completed it
/// (Art. 6.2.1). The lines of such a capture and a reply whose squares
/// were all seen changing that explain the board: one is read as made
/// (the capture inferred), several are candidates for the arbiter, never
/// an accusation (docs/design/reconstruction.md, the cost table). A reply
/// that may be a piece sliding on is read only once it has stood the slide
/// dwell ([`sliding_reply`], `slide.rs`).
pub(super) fn unseen_capture_then_reply(game: &Game, sensed: &SensedBoard) -> Option<Reading> {
    if sensed.identifies_all() || game.is_over() {
        return None;
    }
    let pos = game.position();
    let since = game.basis(game.ply());
    let touched = sensed.touched_since(since);
    let vacated = pos.us() & !sensed.occupied() & touched;
    if vacated.is_empty() {
        return None;
    }
    let mut lines = Vec::new();
    for m in pos.legal_moves() {
        let (Some(from), true) = (m.from(), m.is_capture()) else {
            continue;
        };
        if !vacated.contains(from)
            || touched.contains(m.to())
            || m.is_en_passant()
            || m.promotion().is_some_and(|r| r != Role::Queen)
        {
            continue;
        }
        let mut after = pos.clone();
        after.play_unchecked(m);
        match explain(&after, sensed, since, 1) {
            Explanation::Unique(reply) => lines.push(vec![m, reply[0]]),
            // Several replies: the board cannot tell them apart yet.
            Explanation::Ambiguous => return Some(Reading::Wait),
            Explanation::None => {}
        }
    }
    match lines.len() {
        0 => None,
        1 => Some(Reading::Moves(lines.remove(0))),
        _ => Some(Reading::Ambiguous(lines)),
    }
}

/// Whether the piece `m` moves could be on its way further: `m` ends on a
/// square between its origin and the end of another legal move of it.
fn may_slide_on(pos: &shakmaty::Chess, m: Move) -> bool {
    let Some(from) = m.from() else {
        return false;
    };
    !m.is_capture()
        && pos.legal_moves().iter().any(|o| {
            o.from() == Some(from) && shakmaty::attacks::between(from, o.to()).contains(m.to())
        })
}

/// The square the reply of [`unseen_capture_then_reply`] put its piece on,
/// when that reading is the only one and the piece may be sliding on.
pub(super) fn sliding_reply(game: &Game, sensed: &SensedBoard) -> Option<shakmaty::Square> {
    let Some(Reading::Moves(line)) = unseen_capture_then_reply(game, sensed) else {
        return None;
    };
    let mut after = game.position().clone();
    after.play_unchecked(line[0]);
    may_slide_on(&after, line[1]).then(|| line[1].to())
}
