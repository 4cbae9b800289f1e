//! The physical board over time: what stands on each square at each
//! instant, whatever any sensor makes of it.

use shakmaty::{Bitboard, Board, Piece, Square};

use crate::event::Millis;

/// One square's content changing at an instant (a hand lifting or putting
/// down a piece, a piece sliding over it, a sensor blip starting or ending).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Change {
    /// When.
    pub at: Millis,
    /// Where.
    pub square: Square,
    /// What stands there from then on (`None`: nothing).
    pub content: Option<Piece>,
}

/// Every change of every square, from a start position, indexed by square
/// so that the board at any instant can be read.
#[derive(Debug, Clone)]
pub(crate) struct Squares {
    start: Board,
    /// Per square, its changes in time order (stable for equal times).
    by_square: Vec<Vec<(Millis, Option<Piece>)>>,
}

impl Squares {
    /// Indexes `changes` (in any order; equal times keep their order).
    pub fn new(start: Board, changes: &[Change]) -> Squares {
        let mut by_square = vec![Vec::new(); 64];
        let mut sorted: Vec<&Change> = changes.iter().collect();
        sorted.sort_by_key(|c| c.at);
        for c in sorted {
            by_square[c.square.to_usize()].push((c.at, c.content));
        }
        Squares { start, by_square }
    }

    /// What stands on `sq` at instant `t` (changes at `t` included).
    pub fn at(&self, sq: Square, t: Millis) -> Option<Piece> {
        let list = &self.by_square[sq.to_usize()];
        let n = list.partition_point(|&(at, _)| at <= t);
        match n {
            0 => self.start.piece_at(sq),
            _ => list[n - 1].1,
        }
    }

    /// The whole board at instant `t`.
    pub fn board_at(&self, t: Millis) -> Board {
        let mut board = Board::empty();
        for sq in Square::ALL {
            if let Some(p) = self.at(sq, t) {
                board.set_piece_at(sq, p);
            }
        }
        board
    }

    /// The content runs of `sq`: its start content, then each change.
    pub fn runs(&self, sq: Square) -> (Option<Piece>, &[(Millis, Option<Piece>)]) {
        (self.start.piece_at(sq), &self.by_square[sq.to_usize()])
    }

    /// The squares some change touches in `[from, to]`.
    pub fn busy(&self, from: Millis, to: Millis) -> Bitboard {
        let mut busy = Bitboard::EMPTY;
        for sq in Square::ALL {
            if self.by_square[sq.to_usize()]
                .iter()
                .any(|&(at, _)| at >= from && at <= to)
            {
                busy.add(sq);
            }
        }
        busy
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_board_at_any_instant() {
        let start = Board::default();
        let pawn = Piece::from_char('P');
        let changes = [
            Change {
                at: 100,
                square: Square::E2,
                content: None,
            },
            Change {
                at: 200,
                square: Square::E3,
                content: pawn,
            },
            Change {
                at: 250,
                square: Square::E3,
                content: None,
            },
            Change {
                at: 400,
                square: Square::E4,
                content: pawn,
            },
        ];
        let squares = Squares::new(start, &changes);
        assert_eq!(squares.at(Square::E2, 99), pawn);
        assert_eq!(squares.at(Square::E2, 100), None);
        assert_eq!(squares.at(Square::E3, 220), pawn);
        assert_eq!(squares.at(Square::E3, 260), None);
        assert_eq!(squares.at(Square::E4, 399), None);
        assert_eq!(squares.at(Square::E4, 400), pawn);
        assert_eq!(squares.busy(150, 300).count(), 1);
    }
}
