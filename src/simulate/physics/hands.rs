//! How hands make a move on a physical board: lift, carry or drag, put
//! down; captures in either order; castling one piece then the other;
//! promotion swaps; en passant. Each step is a square changing content at
//! an instant.

use std::ops::Range;

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use shakmaty::{Chess, Move, Piece, Position, Role, Square, attacks};

use super::timeline::Change;
use crate::event::Millis;

/// When a ply was on the board: its first touch and the instant its last
/// piece was released.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PlyTimes {
    /// The first square that changed.
    pub first: Millis,
    /// The last piece put down (or taken off): the move is complete.
    pub released: Millis,
    /// A castling begun with the rook: a breach of Art. 4.4.2 the player
    /// really made, so the engine's advisory on it is no false alarm.
    pub rook_first: bool,
}

/// A pair of hands at the board, writing down every square change.
pub(crate) struct Hands<'a> {
    /// The randomness of the session.
    pub rng: &'a mut ChaCha8Rng,
    /// Slow hands: pieces held up to 20 s, the rook up to 5 s after the king.
    pub slow: bool,
    /// The current instant.
    pub t: Millis,
    /// Every change so far.
    pub changes: Vec<Change>,
}

impl Hands<'_> {
    fn set(&mut self, square: Square, content: Option<Piece>) {
        self.changes.push(Change {
            at: self.t,
            square,
            content,
        });
    }

    fn pause(&mut self, range: Range<Millis>) {
        self.t += self.rng.random_range(range);
    }

    fn chance(&mut self, p: f64) -> bool {
        self.rng.random_bool(p)
    }

    /// The time a piece spends in the hand between lift and put-down.
    fn carry(&mut self) {
        if self.slow && self.chance(0.1) {
            self.pause(2_000..20_000);
        } else {
            self.pause(200..900);
        }
    }

    /// Lifts the piece on `from`, carries it (dragging it over the squares
    /// between when `drag`), and stops just above `to`.
    fn travel(&mut self, from: Square, to: Square, piece: Piece, drag: bool) {
        self.set(from, None);
        if !drag {
            self.carry();
            return;
        }
        let mut path: Vec<Square> = attacks::between(from, to).into_iter().collect();
        path.sort_by_key(|&sq| sq.distance(from));
        for sq in path {
            self.pause(30..120);
            self.set(sq, Some(piece));
            self.pause(40..250);
            self.set(sq, None);
        }
        self.pause(30..150);
    }

    /// Whether this piece is dragged along its path this time: sliding
    /// pieces about half the time, a pawn's double step and a castling
    /// king or rook sometimes.
    fn drags(&mut self, role: Role, from: Square, to: Square) -> bool {
        if attacks::between(from, to).is_empty() {
            return false;
        }
        let p = match role {
            Role::Bishop | Role::Rook | Role::Queen => 0.5,
            Role::Pawn | Role::King => 0.3,
            Role::Knight => 0.0,
        };
        self.chance(p)
    }

    /// Plays `m` from `pos`, starting now; returns when it was on the board.
    pub fn play(&mut self, pos: &Chess, m: Move) -> PlyTimes {
        let first = self.t;
        let mover = pos.turn();
        let mut rook_first = false;
        match m {
            Move::Castle { king, rook } => rook_first = self.castle(pos, king, rook),
            Move::EnPassant { from, to } => {
                let pawn = Piece {
                    color: mover,
                    role: Role::Pawn,
                };
                let taken = Square::from_coords(to.file(), from.rank());
                if self.chance(0.5) {
                    self.set(taken, None);
                    self.pause(150..900);
                    self.travel(from, to, pawn, false);
                    self.set(to, Some(pawn));
                } else {
                    self.travel(from, to, pawn, false);
                    self.set(to, Some(pawn));
                    self.pause(150..1500);
                    self.set(taken, None);
                }
            }
            Move::Normal {
                role,
                from,
                capture,
                to,
                promotion,
            } => {
                let piece = Piece { color: mover, role };
                let placed = Piece {
                    color: mover,
                    role: promotion.unwrap_or(role),
                };
                self.normal(piece, placed, from, to, capture.is_some());
            }
            Move::Put { .. } => {}
        }
        PlyTimes {
            first,
            released: self.t,
            rook_first,
        }
    }

    /// A move of one piece, possibly a capture, possibly a promotion.
    fn normal(&mut self, piece: Piece, placed: Piece, from: Square, to: Square, capture: bool) {
        let drag = self.drags(piece.role, from, to);
        let captured_first = capture && self.chance(0.5);
        if captured_first {
            // The captured piece off first, sometimes well before the
            // capturing piece is lifted.
            self.set(to, None);
            if self.chance(0.25) {
                self.pause(1000..if self.slow { 8000 } else { 3000 });
            } else {
                self.pause(150..700);
            }
        }
        if piece == placed {
            self.travel(from, to, piece, drag);
            if capture && !captured_first {
                // The captured piece taken off by the same hand, the
                // capturing one put in its place.
                self.set(to, None);
                self.pause(30..300);
            }
            self.set(to, Some(piece));
            return;
        }
        if self.chance(0.5) {
            // The pawn goes to the last rank, then is swapped.
            self.travel(from, to, piece, drag);
            if capture && !captured_first {
                self.set(to, None);
                self.pause(30..300);
            }
            self.set(to, Some(piece));
            self.pause(300..2000);
            self.set(to, None);
            self.pause(200..if self.slow { 6000 } else { 1500 });
            self.set(to, Some(placed));
        } else {
            // The pawn taken off its square, the new piece put down.
            self.set(from, None);
            self.pause(400..2500);
            if capture && !captured_first {
                self.set(to, None);
                self.pause(30..300);
            }
            self.set(to, Some(placed));
        }
    }

    /// Castling: king first or rook first, the second piece a moment (or,
    /// with slow hands, up to 5 s) later. Returns whether the rook went
    /// first.
    fn castle(&mut self, pos: &Chess, king: Square, rook: Square) -> bool {
        let color = pos.turn();
        let side = if king < rook {
            shakmaty::CastlingSide::KingSide
        } else {
            shakmaty::CastlingSide::QueenSide
        };
        let (king_to, rook_to) = (side.king_to(color), side.rook_to(color));
        let k = Piece {
            color,
            role: Role::King,
        };
        let r = Piece {
            color,
            role: Role::Rook,
        };
        let king_first = self.chance(0.65);
        let order = if king_first {
            [(king, king_to, k), (rook, rook_to, r)]
        } else {
            [(rook, rook_to, r), (king, king_to, k)]
        };
        for (i, (from, to, piece)) in order.into_iter().enumerate() {
            if i == 1 {
                if self.slow && self.chance(0.3) {
                    self.pause(1500..5000);
                } else {
                    self.pause(100..1500);
                }
            }
            // The second piece's path crosses the square the first one
            // now stands on: it is carried over it, never dragged.
            let drag = i == 0 && self.drags(piece.role, from, to);
            self.travel(from, to, piece, drag);
            self.set(to, Some(piece));
        }
        !king_first
    }
}
