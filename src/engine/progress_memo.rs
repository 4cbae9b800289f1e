//! The last answers of [`super::progress::in_progress`], remembered.
//!
//! After a board event the reading rules and then the guard ask whether
//! the same board is a move in progress from the same position, up to five
//! times; with a piece in the hand that meant the position's legal moves
//! scanned each time. The answer depends only on what move generation
//! reads of the position and on what the sensors report (occupancy and
//! identities, not when the squares changed), so it is kept for the last
//! few boards asked about, per thread, and given again only for equal
//! ones: nothing the engine decides depends on it.

use std::cell::RefCell;

use shakmaty::{CastlingMode, Chess, Color, Position};

use crate::sensed::SensedBoard;

/// The words of a question: what move generation reads of the position
/// (its pieces, the side to move, the castling rights and mode, the en
/// passant square; the move counters play no part) and what the sensors
/// report. Compared as one array: a few vector compares.
type Words = [u64; 18];

fn words(pos: &Chess, sensed: &SensedBoard) -> Words {
    let ep = pos.maybe_ep_square().map_or(64, u64::from);
    let turn = u64::from(pos.turn() == Color::White);
    let mode = u64::from(pos.castles().mode() == CastlingMode::Chess960);
    let position = crate::sensed::board_words(pos.board());
    // The sensors' words first: their occupancy tells most questions apart.
    let mut words = [0; 18];
    words[..9].copy_from_slice(&sensed.reported());
    words[9..16].copy_from_slice(&position);
    words[16] = pos.castles().castling_rights().0;
    words[17] = ep | turn << 8 | mode << 9;
    words
}

/// The position asked about and positions after its moves (the scans'
/// readings ask about both in turn): a few slots are enough.
const SLOTS: usize = 4;

#[derive(Default)]
struct Recent {
    slots: [Option<(Words, bool)>; SLOTS],
    /// The slot to replace next.
    next: usize,
}

thread_local! {
    static RECENT: RefCell<Recent> = const {
        RefCell::new(Recent {
            slots: [None; SLOTS],
            next: 0,
        })
    };
}

/// Whether two questions are the same: every word compared, with no early
/// exit, which the compiler makes a few vector operations (an array's `==`
/// called `memcmp`).
fn same(a: &Words, b: &Words) -> bool {
    a.iter().zip(b).fold(0, |differ, (x, y)| differ | (x ^ y)) == 0
}

/// `answer(pos, sensed)`, computed only when this pair is none of the last
/// few asked about on this thread. `answer` must depend only on what
/// [`words`] keeps of `pos` and `sensed`.
pub(super) fn remembered(
    pos: &Chess,
    sensed: &SensedBoard,
    answer: fn(&Chess, &SensedBoard) -> bool,
) -> bool {
    let asked = words(pos, sensed);
    let known = RECENT.with(|recent| {
        let recent = recent.borrow();
        // The newest first: a board is asked about again at once.
        (1..=SLOTS).find_map(|back| {
            let (words, known) = recent.slots[(recent.next + SLOTS - back) % SLOTS].as_ref()?;
            (words[0] == asked[0] && same(words, &asked)).then_some(*known)
        })
    });
    if let Some(known) = known {
        return known;
    }
    let fresh = answer(pos, sensed);
    RECENT.with(|recent| {
        let mut recent = recent.borrow_mut();
        let next = recent.next;
        recent.slots[next] = Some((asked, fresh));
        recent.next = (next + 1) % SLOTS;
    });
    fresh
}

#[cfg(test)]
mod tests {
    use shakmaty::{Piece, Square};

    use super::*;
    use crate::test_support::position;

    /// Boards and positions that differ only in what the answer reads (a
    /// piece's identity, the side to move, an en passant square, a
    /// castling right), asked about in turn, more than the slots hold:
    /// each answer is the one computed afresh.
    #[test]
    fn each_question_gets_its_own_answer() {
        let fens = [
            // White to move, a black pawn lifted: e5xd6 en passant is a
            // capture begun only with the en passant square (Art. 3.7.4).
            "4k3/8/8/3pP3/8/8/8/4K2R w K d6 0 1",
            "4k3/8/8/3pP3/8/8/8/4K2R w K - 0 1",
            "4k3/8/8/3pP3/8/8/8/4K2R b K - 0 1",
            "4k3/8/8/3pP3/8/8/8/4K2R w - d6 0 1",
        ];
        let positions: Vec<Chess> = fens.iter().map(|fen| position(fen)).collect();
        let mut boards = Vec::new();
        for pos in &positions {
            let mut lifted = SensedBoard::showing(pos.board());
            lifted.lift(Square::D5, 1);
            boards.push(lifted.clone());
            lifted.lift(Square::E5, 2);
            boards.push(lifted.clone());
            // The king on g1, the rook still on h1: castling under way
            // only with the right (Art. 3.8.2), and read as a king only
            // where the board names it.
            let mut castling = SensedBoard::showing(pos.board());
            castling.lift(Square::E1, 1);
            castling.place(Square::G1, None, 2);
            boards.push(castling.clone());
            castling.place(Square::G1, Some(Piece::from_char('K').unwrap()), 3);
            boards.push(castling.clone());
            castling.place(Square::G1, Some(Piece::from_char('Q').unwrap()), 4);
            boards.push(castling);
        }
        let mut differ = 0;
        for _ in 0..2 {
            for pos in positions.iter().chain(positions.iter().rev()) {
                for sensed in &boards {
                    let fresh = crate::engine::progress::in_progress_afresh(pos, sensed);
                    assert_eq!(
                        remembered(pos, sensed, crate::engine::progress::in_progress_afresh),
                        fresh,
                        "{pos:?}"
                    );
                    differ += usize::from(fresh);
                }
            }
        }
        // The questions are not all answered alike.
        assert!(differ > 0 && differ < 2 * 8 * boards.len(), "{differ}");
    }
}
