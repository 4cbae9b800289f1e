//! A piece put down on a square of its own path may be sliding on: on an
//! event board a dragged piece is reported on every square it crosses, and
//! stands on each for as long as a hand takes to drag it on (the slide in
//! docs/design/reconstruction.md). Such a state is read as a move made only
//! once the piece has stood there longer than any drag dwells, or once the
//! move is completed (a press, the end of the game), never at the settle
//! time alone.

use shakmaty::{Move, Position, Square, attacks};

use super::Engine;
use crate::event::Millis;

/// How long a dragged piece may stand on a square it crosses (ms): hands
/// dwell up to about a quarter of a second on each square of a drag. A
/// piece that stood longer was released there (Art. 4.7).
pub(super) const SLIDE_MS: Millis = 300;

impl Engine {
    /// When the unread board state is to be read with no new event: once
    /// it has settled, and, if it shows a piece that may be sliding on,
    /// once that piece has stood [`SLIDE_MS`].
    pub(super) fn read_deadline(&self) -> Option<Millis> {
        let settled = self.settle.deadline(self.config.settle_ms)?;
        Some(
            self.held_until()
                .map_or(settled, |until| settled.max(until)),
        )
    }

    /// Whether the unread board state is to be read at `t`.
    pub(super) fn read_due(&self, t: Millis) -> bool {
        self.settle.is_due(t, self.config.settle_ms)
            && self.held_until().is_none_or(|until| t >= until)
    }

    /// The settled board shows a piece put on an empty square of its path
    /// (a state held for a slide) and, lifted after it, one of the
    /// opponent's pieces it was not on its way to capture, a lift that
    /// outlived any blip: the piece was released there, and the move is
    /// recorded before the state is read (with no clock that lift also
    /// completes it, Art. 6.2.1).
    pub(super) fn opponent_lift_ended_slide(&mut self) {
        if self.scanned || self.game().is_over() || self.may_lag() || self.phase.is_restoring() {
            return;
        }
        let pos = self.game().position();
        let board = pos.board();
        let sensed = self.sensed.occupied();
        let vacated = board.occupied() & !sensed;
        let (Some(from), Some(to), Some(sq)) = (
            (vacated & board.by_color(pos.turn())).single_square(),
            (sensed & !board.occupied()).single_square(),
            (vacated & board.by_color(!pos.turn())).single_square(),
        ) else {
            return;
        };
        let s = &self.sensed;
        if s.last_lift(sq) < s.last_place(to)
            || s.piece_at(to)
                .is_some_and(|p| board.piece_at(from) != Some(p))
        {
            return;
        }
        // It stood the settle time before that lift: only the slide held it.
        let stood = match (self.placed[to.to_usize()], self.lifted[sq.to_usize()]) {
            (Some((put, _)), Some((lift, ..))) => lift.saturating_sub(put) >= self.config.settle_ms,
            _ => false,
        };
        let legal = pos.legal_moves();
        let crossing = |end: Square| attacks::between(from, end).contains(to);
        let ends: Vec<Square> = legal
            .iter()
            .filter_map(|&m| target(m, from, pos.turn()))
            .filter(|&end| crossing(end))
            .collect();
        let capturing = ends.contains(&sq);
        if !stood || ends.is_empty() {
            return;
        }
        let Some(&m) = legal.iter().find(|m| {
            matches!(m, Move::Normal { from: f, to: t, capture: None, promotion: None, .. }
                if *f == from && *t == to)
        }) else {
            return;
        };
        if capturing {
            return;
        }
        let since = self.settle.since();
        self.record(&[m], since, s.last_lift(sq).saturating_sub(1));
        if !self.clock.in_use {
            self.complete_all(since);
        }
    }

    /// Until when a settled state waits. A capture a blip looks like waits
    /// for its completion, but no longer than the displaced-pieces time:
    /// the board standing so that long is where the player left it.
    fn held_until(&self) -> Option<Millis> {
        if self.quick_capture_shown() {
            return Some(self.settle.since().saturating_add(self.config.displaced_ms));
        }
        self.sliding_since().map(|at| at.saturating_add(SLIDE_MS))
    }

    /// When the piece was put down, if the board (square events only)
    /// shows one piece of the player to move taken from its square and put
    /// on an empty square that one of his legal moves crosses, the rest as
    /// the record has it but for at most one of the opponent's pieces taken
    /// off (a capture begun by taking the captured piece off first, on the
    /// square that move ends on): the piece may be on its way there.
    fn sliding_since(&self) -> Option<Millis> {
        if self.scanned || self.game().is_over() {
            return None;
        }
        let pos = self.game().position();
        let board = pos.board();
        let sensed = self.sensed.occupied();
        let filled = sensed & !board.occupied();
        let vacated = board.occupied() & !sensed;
        let from = (vacated & board.by_color(pos.turn())).single_square()?;
        let to = filled.single_square()?;
        let off = vacated & board.by_color(!pos.turn());
        if off.more_than_one()
            || self
                .sensed
                .piece_at(to)
                .is_some_and(|p| board.piece_at(from) != Some(p))
        {
            return None;
        }
        let (at, _) = self.placed[to.to_usize()]?;
        let goes_on = pos.legal_moves().iter().any(|&m| {
            target(m, from, pos.turn()).is_some_and(|end| {
                attacks::between(from, end).contains(to) && (off.is_empty() || off.contains(end))
            })
        });
        goes_on.then_some(at)
    }
}

/// Where move `m` takes the piece standing on `from`, if it moves it.
fn target(m: Move, from: Square, turn: shakmaty::Color) -> Option<Square> {
    match m {
        Move::Castle { king, rook } => {
            let side = m.castling_side()?;
            if king == from {
                Some(side.king_to(turn))
            } else {
                (rook == from).then(|| side.rook_to(turn))
            }
        }
        _ if m.from() == Some(from) => Some(m.to()),
        _ => None,
    }
}
