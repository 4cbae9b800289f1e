//! The legal moves of the last few positions asked about, remembered.
//!
//! While a move is in the hand, every board event asks again for the legal
//! moves of the same position: the guard (is the board one move on?), the
//! moves in progress (can the piece off the board be captured? is castling
//! under way?), a slide along the record. Generating them is the largest
//! single cost of reading a board, so the moves of the last few positions
//! are kept, per thread. The answer is shakmaty's, for a position equal in
//! everything move generation reads: the pieces, the side to move, the
//! castling rights and mode, the en passant square. A remembered list is
//! the one generated again, so nothing the engine decides depends on it.

use std::{cell::RefCell, rc::Rc};

use shakmaty::{Bitboard, Board, CastlingMode, Chess, Color, MoveList, Position, Square};

/// The legal moves of `pos`, in shakmaty's order: the same list as
/// `pos.legal_moves()`, generated only when `pos` is none of the last few
/// positions asked about on this thread. Shared, not copied: a move list
/// has room for 270 moves, and copying it cost as much as a lookup.
pub fn legal_moves(pos: &Chess) -> Rc<MoveList> {
    RECENT.with(|recent| {
        let mut recent = recent.borrow_mut();
        // The position asked about last first: it is nearly always asked
        // about again. No two slots hold the same position, so the order
        // of the others does not matter. Compared field by field with the
        // position, not through a key made of it: a lookup is asked for
        // about seven times per move played, and making the key (a copy
        // of the board) was a third of its cost.
        let last = recent.last;
        let found = match recent.slots.get(last) {
            Some((key, _)) if key.is(pos) => Some(last),
            _ => (0..recent.slots.len()).find(|&i| i != last && recent.slots[i].0.is(pos)),
        };
        if let Some(i) = found {
            recent.last = i;
            return Rc::clone(&recent.slots[i].1);
        }
        recent.remember(Key::of(pos), pos)
    })
}

/// What shakmaty's move generation reads of a position (the move counters
/// play no part).
#[derive(PartialEq, Eq)]
struct Key {
    board: Board,
    turn: Color,
    castling: Bitboard,
    mode: CastlingMode,
    ep: Option<Square>,
}

impl Key {
    fn of(pos: &Chess) -> Key {
        Key {
            board: pos.board().clone(),
            turn: pos.turn(),
            castling: pos.castles().castling_rights(),
            mode: pos.castles().mode(),
            ep: pos.maybe_ep_square(),
        }
    }

    /// Whether this is the key of `pos` (`Key::of(pos) == *self`), without
    /// making it: the side to move first, which tells half the positions
    /// apart at once.
    fn is(&self, pos: &Chess) -> bool {
        self.turn == pos.turn()
            && self.board == *pos.board()
            && self.castling == pos.castles().castling_rights()
            && self.mode == pos.castles().mode()
            && self.ep == pos.maybe_ep_square()
    }
}

/// The positions remembered: the game's position, the one a move in the
/// hand would lead to, one taken back: a few are enough.
const SLOTS: usize = 4;

#[derive(Default)]
struct Recent {
    slots: Vec<(Key, Rc<MoveList>)>,
    /// The slot to replace next once all are used.
    next: usize,
    /// The slot of the last position asked about.
    last: usize,
}

impl Recent {
    /// Generates and keeps the moves of `pos` (`key`), in place of the
    /// oldest position remembered once all slots are used.
    fn remember(&mut self, key: Key, pos: &Chess) -> Rc<MoveList> {
        if self.slots.len() < SLOTS {
            self.last = self.slots.len();
            let moves = Rc::new(pos.legal_moves());
            self.slots.push((key, Rc::clone(&moves)));
            return moves;
        }
        self.last = self.next;
        let slot = &mut self.slots[self.next];
        self.next = (self.next + 1) % SLOTS;
        slot.0 = key;
        // The list of the position forgotten takes the new moves when no
        // caller holds it any more (nearly always): no allocation of a
        // list's room for 270 moves per position.
        match Rc::get_mut(&mut slot.1) {
            Some(moves) => *moves = pos.legal_moves(),
            None => slot.1 = Rc::new(pos.legal_moves()),
        }
        Rc::clone(&slot.1)
    }
}

thread_local! {
    static RECENT: RefCell<Recent> = RefCell::new(Recent::default());
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::position;

    /// Positions that differ only in what move generation reads: each
    /// gets its own moves, never a neighbour's remembered list.
    #[test]
    fn each_position_gets_its_own_moves() {
        let fens = [
            // The same pieces: with and without castling rights, with an
            // en passant capture and without, the other side to move.
            "r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6 0 1",
            "r3k2r/8/8/3pP3/8/8/8/R3K2R w - d6 0 1",
            "r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq - 0 1",
            "r3k2r/8/8/3pP3/8/8/8/R3K2R b KQkq - 0 1",
            "r3k2r/8/8/3pP3/8/8/8/R3K2R w Qk - 0 1",
            "r3k2r/8/8/3pP3/8/8/8/R3K2R w KQkq d6 40 90",
        ];
        let positions: Vec<Chess> = fens.iter().map(|fen| position(fen)).collect();
        // What the FENs allow (Art. 3.8.2, 3.7.4): the castlings of the
        // side to move, and White's exd6 en passant.
        let special = |pos: &Chess| {
            let moves = pos.legal_moves();
            (
                moves.iter().filter(|m| m.is_castle()).count(),
                moves.iter().filter(|m| m.is_en_passant()).count(),
            )
        };
        let expected = [(2, 1), (0, 1), (2, 0), (2, 0), (1, 0), (2, 1)];
        for (pos, expected) in positions.iter().zip(expected) {
            assert_eq!(special(pos), expected, "{pos:?}");
        }
        // Round after round, more positions than slots: every answer is
        // the position's own list, in shakmaty's order.
        for _ in 0..3 {
            for pos in positions.iter().chain(positions.iter().rev()) {
                assert_eq!(*legal_moves(pos), pos.legal_moves());
            }
        }
    }

    /// `Key::is` answers as comparing two keys made: on pairs of positions
    /// of random games (the same pieces with another side to move, other
    /// castling rights or en passant squares among them) and on each
    /// position with itself.
    #[test]
    fn a_key_is_its_position_and_no_other() {
        let positions = crate::test_support::random_positions(7, 12);
        let (mut same, mut other) = (0, 0);
        for a in &positions {
            for b in &positions {
                let expected = Key::of(a) == Key::of(b);
                assert_eq!(Key::of(a).is(b), expected, "{a:?} {b:?}");
                if expected {
                    same += 1;
                } else {
                    other += 1;
                }
            }
        }
        assert!(same >= positions.len() && other > 1_000, "{same} {other}");
    }
}
