//! Touch-move bookkeeping (Art. 4.3, 4.4): on a board, touching is lifting.

use shakmaty::{Bitboard, ByColor, Chess, Color, Move, Position, Square};

use super::illegal::role_name;
use crate::{event::Millis, game::Game, matcher::captured_square};

/// Per player, the first of his own pieces and the first opponent piece he
/// lifted during his current move.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Touches(ByColor<FirstLifts>);

/// What a player lifted first during his move. Pieces lifted within the
/// settle time of the first count as lifted together: a board that scans
/// reports them in square order, not in the order the hand took them (and
/// when the order cannot be told, Art. 4.3.3 and 4.4.1 give the player the
/// benefit of the doubt).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct FirstLifts {
    own: Option<(Square, Millis)>,
    own_together: Bitboard,
    theirs: Option<(Square, Millis)>,
    theirs_together: Bitboard,
}

impl Touches {
    /// Notes a lift of `sq` at `t` as a touch by the player who is moving:
    /// the player to move, or the player still finishing his last,
    /// uncompleted move. `window`: the settle time.
    pub fn note(&mut self, game: &Game, sq: Square, t: Millis, window: Millis) {
        let pos = game.position();
        let Some(color) = pos.board().color_at(sq) else {
            return;
        };
        let n = game.ply();
        let finishing =
            n > 0 && game.moves()[n - 1].completed_at.is_none() && game.mover(n) == color;
        let player = if finishing { color } else { pos.turn() };
        let lifts = &mut self.0[player];
        let (first, together) = if color == player {
            (&mut lifts.own, &mut lifts.own_together)
        } else {
            (&mut lifts.theirs, &mut lifts.theirs_together)
        };
        match *first {
            None => {
                *first = Some((sq, t));
                together.add(sq);
            }
            Some((_, at)) if t.saturating_sub(at) < window => together.add(sq),
            Some(_) => {}
        }
    }

    /// Forgets a lift of `sq` that was a blip: the piece was put back
    /// before the state settled.
    pub fn forget(&mut self, sq: Square) {
        for lifts in self.0.iter_mut() {
            for (first, together) in [
                (&mut lifts.own, &mut lifts.own_together),
                (&mut lifts.theirs, &mut lifts.theirs_together),
            ] {
                if !together.contains(sq) {
                    continue;
                }
                together.discard(sq);
                if first.is_some_and(|(f, _)| f == sq) {
                    // Another piece lifted with it stands first instead.
                    *first = together.first().zip(first.map(|(_, at)| at));
                }
            }
        }
    }

    /// Forgets the touches noted for `player` after `t`: they were the
    /// opponent's, his move being completed by then.
    pub fn forget_after(&mut self, player: Color, t: Millis) {
        let lifts = &mut self.0[player];
        for (first, together) in [
            (&mut lifts.own, &mut lifts.own_together),
            (&mut lifts.theirs, &mut lifts.theirs_together),
        ] {
            if first.is_some_and(|(_, at)| at > t) {
                *first = None;
                *together = Bitboard::EMPTY;
            }
        }
    }

    /// A lift of `sq` noted as `earlier` touching an opponent's piece was
    /// the opponent's own first touch when a line read at once shows
    /// `earlier`'s move made before it and the opponent's next move
    /// starting from `sq`: the record was behind the board then.
    pub fn hand_over(&mut self, earlier: Color, sq: Square) {
        let theirs = self.0[earlier].theirs;
        let next = &mut self.0[!earlier];
        if let Some((first, at)) = theirs
            && first == sq
            && next.own.is_none()
        {
            next.own = Some((sq, at));
            next.own_together.add(sq);
        }
    }

    /// Forgets `player`'s touches: his move is completed.
    pub fn clear(&mut self, player: Color) {
        self.0[player] = FirstLifts::default();
    }

    /// Forgets every touch.
    pub fn clear_all(&mut self) {
        *self = Touches::default();
    }

    /// The touch-move breaches of move `m` played from `pos`, in words.
    /// Advisory: a board cannot hear "j'adoube" (Art. 4.2).
    pub fn breaches(&self, pos: &Chess, m: Move) -> Vec<String> {
        let lifts = self.0[pos.turn()];
        let captured = captured_square(m);
        let own_other = lifts.own.is_some()
            && !m
                .from()
                .is_some_and(|from| lifts.own_together.contains(from));
        let theirs_other = lifts.theirs.is_some()
            && !captured.is_some_and(|sq| lifts.theirs_together.contains(sq));
        if !own_other && !theirs_other {
            // The usual case: the first pieces lifted are the ones played.
            return Vec::new();
        }
        let legal = pos.legal_moves();
        let mut breaches = Vec::new();
        if let Some((first, _)) = lifts.own
            && own_other
        {
            let castled_with = matches!(m, Move::Castle { rook, .. } if rook == first);
            if castled_with {
                breaches.push(format!(
                    "lifted the rook on {first} first, then castled with it: castling on that side is not allowed on that move (Art. 4.4.2)"
                ));
            } else if legal.iter().any(|l| l.from() == Some(first)) {
                let role = pos.board().role_at(first).map_or("piece", role_name);
                breaches.push(format!(
                    "lifted the {role} on {first} first, which could move, then moved another piece (Art. 4.3.1)"
                ));
            }
        }
        if let Some((target, _)) = lifts.theirs
            && theirs_other
        {
            let takes = |l: &Move| captured_square(*l) == Some(target);
            if legal.iter().any(takes) && !takes(&m) {
                let role = pos.board().role_at(target).map_or("piece", role_name);
                breaches.push(format!(
                    "lifted the opponent's {role} on {target} first, which could be captured, then did not capture it (Art. 4.3.2)"
                ));
            }
        }
        breaches
    }
}
