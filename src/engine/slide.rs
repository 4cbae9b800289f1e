//! A piece put down on a square of its own path may be sliding on: on an
//! event board a dragged piece is reported on every square it crosses, and
//! stands on each for as long as a hand takes to drag it on (the slide in
//! docs/design/reconstruction.md). Such a state is read as a move made only
//! once the piece has stood there longer than any drag dwells, or once the
//! move is completed (a press, the end of the game), never at the settle
//! time alone.

use shakmaty::{Bitboard, Move, Position, Role, Square, attacks};

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
            self.sliding_since(None)
                .map_or(settled, |at| settled.max(at.saturating_add(SLIDE_MS))),
        )
    }

    /// Whether the unread board state is to be read at `t`.
    pub(super) fn read_due(&self, t: Millis) -> bool {
        self.settle.is_due(t, self.config.settle_ms)
            && self
                .sliding_since(None)
                .is_none_or(|at| t.saturating_sub(at) >= SLIDE_MS)
    }

    /// Before the opponent lifts his piece on `sq`: that lift completes the
    /// move on the board (Art. 6.2.1), so a settled state held only because
    /// the piece might slide on is read first, unless the lifted piece is
    /// one the sliding piece may be on its way to capture.
    pub(super) fn read_before_opponent_lift(&mut self, sq: Square, t: Millis) {
        if self.lift_ends_slide(sq, t) {
            self.read_board();
        }
    }

    /// Whether the unread board state shows a piece that may be sliding
    /// on from the record's position (read only once it has stood).
    pub(super) fn may_be_sliding(&self) -> bool {
        self.sliding_since(None).is_some()
    }

    /// Whether a lift of `sq` at `t` is the opponent of the sliding
    /// piece's player starting his move while the state is held for the
    /// slide: the record's opponent, or, when the sliding piece is a reply
    /// to a capture the board never showed, the record's player to move.
    pub(super) fn lift_ends_slide(&self, sq: Square, t: Millis) -> bool {
        if !self.settle.is_due(t, self.config.settle_ms) || self.read_due(t) {
            return false;
        }
        if let Some((_, end)) = self.sliding_past_dump(None) {
            // Past a dump: the opponent of the player whose line it is.
            return end.board().color_at(sq) == Some(!end.turn())
                && self.sliding_past_dump(Some(sq)).is_none();
        }
        let pos = self.game().position();
        let Some(color) = pos.board().color_at(sq) else {
            return false;
        };
        let lifter = if self.reply_sliding_since().is_some() {
            pos.turn()
        } else {
            !pos.turn()
        };
        color == lifter && self.sliding_since(Some(sq)).is_none()
    }

    /// When the piece was put down, if the board (square events only)
    /// shows one piece of the player to move taken from its square and put
    /// on an empty square that one of his legal moves crosses, the rest as
    /// the record has it but for at most one of the opponent's pieces taken
    /// off (a capture begun by taking the captured piece off first, on the
    /// square that move ends on): the piece may be on its way there.
    /// `lifting`: a square about to be read empty as well.
    fn sliding_since(&self, lifting: Option<Square>) -> Option<Millis> {
        match lifting {
            None => self
                .sliding_on_record(None)
                .or_else(|| self.reply_sliding_since())
                .or_else(|| self.sliding_past_dump(None).map(|(at, _)| at)),
            Some(_) => self.sliding_on_record(lifting),
        }
    }

    /// When the piece was put down, if the board (occupancy square
    /// events) shows a capture it never showed on its square and a reply
    /// whose piece may be sliding on (`unseen_capture.rs`).
    fn reply_sliding_since(&self) -> Option<Millis> {
        if self.observation.scanned() || self.sensed.identifies_all() || !self.settle.is_unread() {
            return None;
        }
        let to = super::unseen_capture::sliding_reply(self.game(), &self.sensed)?;
        self.squares.placed[to.to_usize()].map(|(at, _, _)| at)
    }

    /// As [`Engine::sliding_since`], for a piece sliding from the record's
    /// position.
    fn sliding_on_record(&self, lifting: Option<Square>) -> Option<Millis> {
        if self.observation.scanned() || self.game().is_over() {
            return None;
        }
        self.sliding_from(self.game().position(), lifting)
    }

    /// As [`Engine::sliding_on_record`], from `pos` rather than the
    /// record's position: the end of a line read past a dump
    /// (`after_dump.rs`).
    pub(super) fn sliding_from(
        &self,
        pos: &shakmaty::Chess,
        lifting: Option<Square>,
    ) -> Option<Millis> {
        let board = pos.board();
        let sensed = self.sensed.occupied() & !lifting.map_or(Bitboard::EMPTY, Bitboard::from);
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
        let (placed, _, _) = self.squares.placed[to.to_usize()]?;
        // A dragged piece straddles two squares as it crosses from one to
        // the next, so the square ahead reads filled before the one behind
        // reads empty: it stands on `to` alone, and dwells there, only from
        // the last lift behind it on its path.
        let behind = attacks::between(from, to).with(from);
        let at = behind
            .into_iter()
            .filter_map(|sq| self.squares.lifted[sq.to_usize()].map(|(at, _, _)| at))
            .fold(placed, Millis::max);
        let goes_on = may_cross(pos, from, to)
            && crate::legal::legal_moves(pos).iter().any(|&m| {
                target(m, from, pos.turn()).is_some_and(|end| {
                    attacks::between(from, end).contains(to)
                        && (off.is_empty() || off.contains(end))
                })
            });
        goes_on.then_some(at)
    }
}

/// Whether some legal move of `pos` could take the piece on `from` across
/// `to` (`to` strictly between `from` and the move's end): false only where
/// none can, so the scan of the legal moves is left out, not changed. The
/// three squares of such a move are on one line; a knight never crosses a
/// square, a pawn only the one in front of it (its double step), a king
/// only in castling. Most moves are of these pieces.
fn may_cross(pos: &shakmaty::Chess, from: Square, to: Square) -> bool {
    if attacks::ray(from, to).is_empty() {
        return false;
    }
    match pos.board().role_at(from) {
        Some(Role::Knight) => false,
        Some(Role::Pawn) => from.file() == to.file() && from.rank().distance(to.rank()) == 1,
        Some(Role::King) => pos.castles().has_color(pos.turn()),
        _ => true,
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Wherever the shortcut says no legal move takes the piece across
    /// `to`, none does: every piece of the side to move, every other
    /// square, in positions of random games (standard and Chess960, with
    /// castling, double steps and en passant), against all legal moves.
    #[test]
    fn no_crossing_is_left_out() {
        let mut skipped = 0;
        for pos in crate::test_support::random_positions(38, 60) {
            let moves = pos.legal_moves();
            for from in pos.us() {
                for to in !pos.board().occupied() {
                    let crosses = moves.iter().any(|&m| {
                        target(m, from, pos.turn())
                            .is_some_and(|end| attacks::between(from, end).contains(to))
                    });
                    if !may_cross(&pos, from, to) {
                        assert!(!crosses, "{from} across {to} in {pos:?}");
                        skipped += 1;
                    }
                }
            }
        }
        // The shortcut is taken, not just never wrong.
        assert!(skipped > 10_000, "{skipped}");
    }
}
