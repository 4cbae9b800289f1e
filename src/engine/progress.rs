//! Moves in progress: board states that a player's hand explains, however
//! long they last. A piece held while the player thinks, the opponent's
//! piece taken off before the capturing piece is put down, a king already
//! on g1 while the rook is still to move: none of these is a displaced
//! piece (Art. 7.4 concerns pieces the hand has let go of), so the arbiter
//! is not told of them.

use shakmaty::{Bitboard, Chess, Move, Position};

use crate::sensed::SensedBoard;

/// Whether the sensed board is the game position with a move in progress:
/// pieces only lifted from it (at most two of the player to move, such as
/// king and rook when castling, and at most one of the opponent's, the piece
/// being captured), or the king already on its castling square with the
/// rook still on its own square or in the hand, or the rook put on its
/// castling square with the king in the hand.
pub fn in_progress(pos: &Chess, sensed: &SensedBoard) -> bool {
    // Nothing lifted is answered at once; otherwise the answer may scan
    // the legal moves, and the same board is asked about several times.
    if (pos.board().occupied() & !sensed.occupied()).is_empty() {
        return false;
    }
    super::progress_memo::remembered(pos, sensed, in_progress_afresh)
}

/// [`in_progress`], computed.
pub(super) fn in_progress_afresh(pos: &Chess, sensed: &SensedBoard) -> bool {
    let board = pos.board();
    let mover = board.by_color(pos.turn());
    let removed = board.occupied() & !sensed.occupied();
    let added = sensed.occupied() & !board.occupied();
    if removed.is_empty() {
        return false;
    }
    if promotion_in_progress(pos, sensed) {
        return true;
    }
    if misidentified(pos, sensed) {
        return false;
    }
    if added.is_empty() {
        let own = removed & mover;
        let theirs = removed & !mover;
        // The opponent's piece off the board is a capture begun only if the
        // player to move can take it (with the piece in his hand, if he
        // holds one); otherwise it was knocked off.
        return own.count() <= 2
            && (theirs.is_empty() || theirs.count() == 1 && can_be_captured(pos, theirs, own));
    }
    castling_in_progress(pos, sensed, removed, added)
        || en_passant_in_progress(pos, sensed, removed, added)
}

/// The pawn put on its promotion square, named a pawn there, not yet
/// exchanged: the move is made only when the new piece is released there
/// (Art. 4.6.2, 4.7.3), so the pawn standing on the last rank, however long,
/// is a move in progress, not a displaced piece.
fn promotion_in_progress(pos: &Chess, sensed: &SensedBoard) -> bool {
    let pawn = pos.turn().pawn();
    let last = Bitboard::from_rank((!pos.turn()).backrank());
    let pawns_there: Bitboard = (sensed.occupied() & last)
        .into_iter()
        .filter(|&sq| sensed.piece_at(sq) == Some(pawn))
        .collect();
    if pawns_there.is_empty() {
        return false;
    }
    crate::legal::legal_moves(pos).iter().any(|m| {
        if m.promotion().is_none() || !pawns_there.contains(m.to()) {
            return false;
        }
        let mut after = pos.clone();
        after.play_unchecked(*m);
        let mut board = after.board().clone();
        board.set_piece_at(m.to(), pawn);
        sensed.shows(&board)
    })
}

/// The pawn put on its en passant square, the pawn it takes not yet off
/// the board: a capture is made once the captured piece is removed too
/// (Art. 4.7.1; en passant is a capture, Art. 3.7.4).
fn en_passant_in_progress(
    pos: &Chess,
    sensed: &SensedBoard,
    removed: Bitboard,
    added: Bitboard,
) -> bool {
    // Without an en passant square no en passant move is legal: the legal
    // moves are not generated for nothing.
    pos.maybe_ep_square().is_some()
        && crate::legal::legal_moves(pos).iter().any(|m| match *m {
            Move::EnPassant { from, to } => {
                removed == Bitboard::from_square(from)
                    && added == Bitboard::from_square(to)
                    && sensed.piece_at(to).is_none_or(|p| p == pos.turn().pawn())
            }
            _ => false,
        })
}

/// The one legal move from `pos` after which the sensed board is a move in
/// progress, when the board shows the move's piece on its square: a board
/// that reports by scans can miss the state between a move and the
/// opponent's hand taking a piece. `None` when no move or several do.
pub fn move_then_in_progress(pos: &Chess, sensed: &SensedBoard) -> Option<Move> {
    // On a board that does not identify pieces, a square filled says too
    // little of which piece went there.
    if !sensed.identifies_all() {
        return None;
    }
    // The mover's piece first shown by this scan on a square of its path,
    // the piece it takes off already: a slide caught (cost 1) as well as a
    // move made there; the next scan shows where it was put down. Whatever
    // the scan before showed there had gone (the square is empty in `pos`).
    if super::scan_slide::slide_caught(pos, sensed)
        .is_some_and(|on| sensed.first_shown_by_latest_scan(on))
    {
        return None;
    }
    let mut found = None;
    for &m in crate::legal::legal_moves(pos).iter() {
        let mut after = pos.clone();
        after.play_unchecked(m);
        let board = after.board();
        let shows = |sq: shakmaty::Square| {
            sensed.occupied().contains(sq)
                && sensed
                    .piece_at(sq)
                    .is_none_or(|p| board.piece_at(sq) == Some(p))
        };
        let placed = match m {
            Move::Castle { .. } => {
                let side = m.castling_side().expect("a castling move has a side");
                shows(side.king_to(pos.turn())) && shows(side.rook_to(pos.turn()))
            }
            _ => shows(m.to()),
        };
        // Only the next player's hand: a piece of the player who just
        // moved, off its square, is more likely his move not finished
        // (castling with the rook first) than a capture begun.
        let lifted = board.occupied() & !sensed.occupied();
        // A scan's instant: the next player's hand holds what one legal move
        // lifts ([`hand_in_progress`]), not any two of his pieces.
        if placed
            && (lifted & board.by_color(pos.turn())).is_empty()
            && hand_in_progress(&after, sensed)
        {
            if found.is_some() {
                return None;
            }
            found = Some(m);
        }
    }
    found
}

/// Whether a snapshot may have caught the hand of the player to move at
/// work: [`in_progress`], where the pieces of his off the board are those
/// one legal move lifts: one piece that can move, or the king and the rook
/// of a castling. A player moves a piece that can move; one that cannot (a
/// blocked pawn, a pinned knight) read lifted would keep a story alive
/// that the moves the scans hid do not need. Nor does a move lift two of
/// his pieces but in castling (a captured piece is the opponent's): two
/// of his read lifted are a move made and the opponent's capture under
/// way, or a blip.
pub fn hand_in_progress(pos: &Chess, sensed: &SensedBoard) -> bool {
    if !in_progress(pos, sensed) {
        return false;
    }
    let own = pos.board().by_color(pos.turn()) & !sensed.occupied();
    match own.count() {
        0 => true,
        1 => crate::legal::legal_moves(pos)
            .iter()
            .any(|m| m.from().is_some_and(|from| own.contains(from))),
        _ => crate::legal::legal_moves(pos).iter().any(|m| match *m {
            Move::Castle { king, rook } => {
                own == Bitboard::from_square(king) | Bitboard::from_square(rook)
            }
            _ => false,
        }),
    }
}

/// Whether the board shows one move under way from `pos`, and nothing
/// else since event `since` (the record's last move): a move in progress
/// ([`hand_in_progress`]) whose every square touched since is a square of
/// one legal move of the player to move, its origin among them. Square
/// events report each change, so such a board is at most that move ahead
/// of the record: no state was skipped since.
pub fn one_move_under_way(pos: &Chess, sensed: &SensedBoard, since: u64) -> bool {
    if !hand_in_progress(pos, sensed) {
        return false;
    }
    let touched = sensed.touched_since(since);
    crate::legal::legal_moves(pos).iter().any(|&m| {
        // The origin first: most moves start elsewhere, and their squares
        // need not be worked out.
        m.from().is_some_and(|from| touched.contains(from))
            && (touched & !crate::matcher::move_squares(m, pos.turn())).is_empty()
    })
}

/// Whether a legal move of the player to move captures the piece on the one
/// square of `on` (en passant included), from one of the squares `lifted`
/// when there are any.
fn can_be_captured(pos: &Chess, on: Bitboard, lifted: Bitboard) -> bool {
    crate::legal::legal_moves(pos).iter().any(|m| match *m {
        _ if lifted.any() && !m.from().is_some_and(|from| lifted.contains(from)) => false,
        Move::EnPassant { from, to } => {
            on.contains(shakmaty::Square::from_coords(to.file(), from.rank()))
        }
        _ => m.is_capture() && on.contains(m.to()),
    })
}

/// Whether a square occupied both on the board and in the position reports
/// another piece than the position has there (squares with no identity
/// reported agree).
fn misidentified(pos: &Chess, sensed: &SensedBoard) -> bool {
    let board = pos.board();
    (sensed.misidentified(board) & board.occupied()).any()
}

/// The king put on its castling square, the rook not yet moved; or the
/// rook put on its castling square while the king is in the hand. A rook
/// put down with the king still untouched on its square is a rook move
/// made (Art. 4.7): castling that follows changes it, as on a board that
/// reports each square.
fn castling_in_progress(
    pos: &Chess,
    sensed: &SensedBoard,
    removed: Bitboard,
    added: Bitboard,
) -> bool {
    // Without a castling right no castling is legal.
    pos.castles().has_color(pos.turn())
        && crate::legal::legal_moves(pos).iter().any(|m| {
            let Move::Castle { king, rook } = *m else {
                return false;
            };
            let side = m.castling_side().expect("a castling move has a side");
            let king_to = side.king_to(pos.turn());
            let rook_to = side.rook_to(pos.turn());
            let only_king_and_rook =
                (removed & !Bitboard::from_square(king) & !Bitboard::from_square(rook)).is_empty();
            let king_first = added == Bitboard::from_square(king_to)
                && removed.contains(king)
                && sensed
                    .piece_at(king_to)
                    .is_none_or(|p| p == pos.turn().king());
            let rook_first = added == Bitboard::from_square(rook_to)
                && removed.contains(rook)
                && removed.contains(king)
                && sensed
                    .piece_at(rook_to)
                    .is_none_or(|p| p == pos.turn().rook());
            only_king_and_rook && (king_first || rook_first)
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::position;
    use shakmaty::Square;

    /// A board that names every piece of `pos` on its square.
    fn identified(pos: &Chess) -> SensedBoard {
        let mut s = SensedBoard::showing(pos.board());
        for sq in pos.board().occupied() {
            s.place(sq, pos.board().piece_at(sq), 1);
        }
        s
    }

    fn sensed(pos: &Chess, lift: &[Square], place: &[Square]) -> SensedBoard {
        let mut s = SensedBoard::showing(pos.board());
        for (i, &sq) in lift.iter().enumerate() {
            s.lift(sq, i as u64 + 1);
        }
        for (i, &sq) in place.iter().enumerate() {
            s.place(sq, None, 100 + i as u64);
        }
        s
    }

    #[test]
    fn a_piece_in_the_hand_is_a_move_in_progress() {
        let pos = Chess::default();
        assert!(in_progress(&pos, &sensed(&pos, &[Square::G1], &[])));
        // The opponent's piece is not the mover's to hold, unless it is
        // the one being captured: one the mover can take, not two.
        assert!(!in_progress(&pos, &sensed(&pos, &[Square::E7], &[])));
        let open = position("rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2");
        assert!(in_progress(&open, &sensed(&open, &[Square::D5], &[])));
        assert!(in_progress(
            &open,
            &sensed(&open, &[Square::D5, Square::E4], &[])
        ));
        assert!(!in_progress(
            &open,
            &sensed(&open, &[Square::D5, Square::E7], &[])
        ));
        // Three of the mover's pieces is no move.
        assert!(!in_progress(
            &pos,
            &sensed(&pos, &[Square::G1, Square::B1, Square::E2], &[])
        ));
    }

    #[test]
    fn a_snapshot_holds_one_piece_that_can_move_or_a_castling_pair() {
        let pos = Chess::default();
        assert!(hand_in_progress(&pos, &sensed(&pos, &[Square::G1], &[])));
        // The a1 rook cannot move: lifted, it is no move under way.
        assert!(!hand_in_progress(&pos, &sensed(&pos, &[Square::A1], &[])));
        // Two of the mover's pieces are no one move.
        assert!(in_progress(
            &pos,
            &sensed(&pos, &[Square::G1, Square::E2], &[])
        ));
        assert!(!hand_in_progress(
            &pos,
            &sensed(&pos, &[Square::G1, Square::E2], &[])
        ));
        // But the king and the rook of a castling are.
        let castle = position("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1");
        assert!(hand_in_progress(
            &castle,
            &sensed(&castle, &[Square::E1, Square::H1], &[])
        ));
        assert!(!hand_in_progress(
            &castle,
            &sensed(&castle, &[Square::E1, Square::A2], &[])
        ));
    }

    #[test]
    fn the_game_position_or_a_piece_put_elsewhere_is_not() {
        let pos = Chess::default();
        assert!(!in_progress(&pos, &sensed(&pos, &[], &[])));
        // A knight put on g5: a state of its own, not a hand.
        assert!(!in_progress(
            &pos,
            &sensed(&pos, &[Square::G1], &[Square::G5])
        ));
    }

    #[test]
    fn a_rook_on_f1_with_the_king_in_the_hand_is_castling_in_progress() {
        let pos = position("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1");
        assert!(in_progress(
            &pos,
            &sensed(&pos, &[Square::H1, Square::E1], &[Square::F1])
        ));
        // Not the move after Rf1 with Black's hand on White's king.
        let mut s = SensedBoard::showing(pos.board());
        s.lift(Square::H1, 1);
        s.lift(Square::E1, 2);
        s.place(Square::F1, Some(shakmaty::Color::White.rook()), 3);
        for sq in s.occupied() {
            if sq != Square::F1 {
                s.place(sq, pos.board().piece_at(sq), 4);
            }
        }
        assert_eq!(move_then_in_progress(&pos, &s), None);
    }

    #[test]
    fn a_rook_on_f1_with_the_king_still_on_e1_is_a_rook_move_not_castling() {
        let pos = position("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1");
        assert!(!in_progress(
            &pos,
            &sensed(&pos, &[Square::H1], &[Square::F1])
        ));
        assert!(!in_progress(
            &pos,
            &sensed(&pos, &[Square::A1], &[Square::D1])
        ));
    }

    #[test]
    fn a_move_the_scan_missed_before_the_next_hand_is_found() {
        // 1. e4 shown, Black's e7 pawn already in the hand.
        let pos = Chess::default();
        let mut s = identified(&pos);
        s.lift(Square::E2, 2);
        s.place(Square::E4, Some(shakmaty::Color::White.pawn()), 3);
        s.lift(Square::E7, 4);
        let m = move_then_in_progress(&pos, &s).expect("one move");
        assert_eq!(m.to(), Square::E4);
        // On occupancy the same squares say too little.
        let o = sensed(&pos, &[Square::E2, Square::E7], &[Square::E4]);
        assert_eq!(move_then_in_progress(&pos, &o), None);
    }

    #[test]
    fn two_of_the_next_players_pawns_off_are_no_hand_after_a_move() {
        // 32.g4 would put a white pawn on g4; Black's f3 and g5 pawns both
        // off are no one hand (32.gxf3 g4 33.fxg4 leaves the same board).
        let pos = position("4k3/8/R7/B5p1/8/2P2p2/P1P2PPP/6K1 w - - 0 32");
        let mut s = identified(&pos);
        s.lift(Square::G2, 2);
        s.place(Square::G4, Some(shakmaty::Color::White.pawn()), 3);
        s.lift(Square::F3, 4);
        s.lift(Square::G5, 5);
        assert_eq!(move_then_in_progress(&pos, &s), None);
        // Black's king off alone is a hand at work after 32.g4.
        s.place(Square::F3, Some(shakmaty::Color::Black.pawn()), 6);
        s.place(Square::G5, Some(shakmaty::Color::Black.pawn()), 7);
        s.lift(Square::E8, 8);
        let m = move_then_in_progress(&pos, &s).expect("one move");
        assert_eq!((m.from(), m.to()), (Some(Square::G2), Square::G4));
    }

    #[test]
    fn a_king_on_g1_before_the_rook_is_castling_in_progress() {
        let pos = position("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1");
        assert!(in_progress(
            &pos,
            &sensed(&pos, &[Square::E1], &[Square::G1])
        ));
        assert!(in_progress(
            &pos,
            &sensed(&pos, &[Square::E1, Square::A1], &[Square::C1])
        ));
        // Without the right to castle, the king on g1 is no move at all.
        let no_rights = position("r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w kq - 0 1");
        assert!(!in_progress(
            &no_rights,
            &sensed(&no_rights, &[Square::E1], &[Square::G1])
        ));
    }
}
