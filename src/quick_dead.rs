//! The dead-position test run after every move (Art. 5.2.2), made cheap
//! without changing its answers.
//!
//! The reference is CHA's quick test for both sides
//! ([`is_dead_quick_reference`]). Its cost on real games goes into proving
//! what is plain in nearly every position: the game is alive. chasolver
//! 3.0.0's quick test (`winnability/fast.rs`) can only answer "dead" for a
//! side through one of these routes:
//!
//! 1. a single legal move at the root (it plays forced moves first);
//! 2. no legal move at all;
//! 3. a full-width search to depth 4 (7 with only pawns and bishops) in
//!    which *every* line ends in a position where the side has too little
//!    material (its own material test) or that is mate or stalemate;
//! 4. further tests on positions with "enough" pawns blocked head-on, where
//!    no queen, rook or knight moved in that search: a deeper search and
//!    the pawn-and-bishop routes need no queens, rooks or knights on the
//!    board at all; static analysis needs every pawn to face an enemy pawn
//!    on its file.
//!
//! [`is_dead_quick`] rules all four out without the solver when it can:
//! two or more legal moves (1, 2); sufficient material by the solver's own
//! test plus a *shuffle* — a piece move for each side, each taken back in
//! turn, all legal, no capture — which is a line of quiet, never-ending
//! moves of any length, so the search of route 3 meets a leaf it cannot
//! close; and the pawn-structure counts of route 4. A side ruled out can
//! still mate as far as the quick test knows, so the position is not dead
//! by it; otherwise the solver runs as before. The test
//! `quick_dead_position_test_matches_the_reference` compares both at every
//! ply of the corpus and on the labelled positions.

use shakmaty::{
    Bitboard, Board, Chess, Color, EnPassantMode, Move, Position, Rank, Role, Square, attacks,
};

use crate::winnability::{Verdict, can_checkmate_fast, neither_can_checkmate_fast};

/// Whether CHA's quick test proves that neither side can checkmate: the
/// same answer as [`is_dead_quick_reference`], usually without calling the
/// solver.
pub fn is_dead_quick(pos: &Chess) -> bool {
    settled_without_the_solver(pos).unwrap_or_else(|| neither_can_checkmate_fast(pos))
}

/// [`is_dead_quick`]'s answer when it needs no solver: dead when neither
/// side has mating material by the Laws, alive as far as the quick test
/// knows when [`open_without_the_solver`]; `None` when only the solver
/// can tell.
pub fn settled_without_the_solver(pos: &Chess) -> Option<bool> {
    if pos.is_insufficient_material() {
        Some(true)
    } else if open_without_the_solver(pos) {
        Some(false)
    } else {
        None
    }
}

/// Whether the position is left open without the solver: a side has
/// enough material by the solver's own test and a pawn structure that
/// closes the routes of its blocked-pawn analysis, and a shuffle exists.
/// Then the quick test cannot call it dead. The full analysis still can
/// (blocked structures it explores to the end: 32 of CHA's 806 labelled
/// dead positions are left open by this), so this is no verdict.
pub fn open_without_the_solver(pos: &Chess) -> bool {
    let can_go_on = |side| {
        !pos.has_insufficient_material(side)
            && !solver_material_insufficient(pos, side)
            && pawns_leave_no_route(pos, side)
    };
    (can_go_on(Color::White) || can_go_on(Color::Black))
        && (has_shuffle(pos) || steps_into_shuffle(pos))
}

/// The quick test as it always ran: CHA's quick test for White, then for
/// Black. The yardstick [`is_dead_quick`] is held to.
pub fn is_dead_quick_reference(pos: &Chess) -> bool {
    if pos.is_insufficient_material() {
        return true;
    }
    can_checkmate_fast(pos, Color::White) == Verdict::No
        && can_checkmate_fast(pos, Color::Black) == Verdict::No
}

/// Route 4 is closed for `side` as the intended winner: too few pawns
/// blocked head-on (the solver's count), or a pawn facing no enemy pawn
/// while a queen, rook or knight is on the board.
fn pawns_leave_no_route(pos: &Chess, side: Color) -> bool {
    let board = pos.board();
    let pawns = board.pawns().count() as i32;
    let needed = (pawns / 2 - 2).max(1) as u32;
    let heavy_or_knight = (board.queens() | board.rooks() | board.knights()).any();
    blocked_pawns(pos, side) < needed || (heavy_or_knight && has_lonely_pawn(pos))
}

/// `side`'s pawns with an enemy pawn or the enemy king right in front.
fn blocked_pawns(pos: &Chess, side: Color) -> u32 {
    let board = pos.board();
    let ours = board.pawns() & board.by_color(side);
    let blockers = (board.pawns() | board.kings()) & board.by_color(!side);
    let ahead = match side {
        Color::White => ours.0 << 8,
        Color::Black => ours.0 >> 8,
    };
    (ahead & blockers.0).count_ones()
}

/// Whether the files of the pawns not about to promote differ between the
/// sides: some pawn has no enemy pawn on its file.
fn has_lonely_pawn(pos: &Chess) -> bool {
    let board = pos.board();
    let files = |side: Color, last: Rank| {
        (board.pawns() & board.by_color(side))
            .into_iter()
            .filter(|sq| sq.rank() != last)
            .fold(0u8, |files, sq| files | 1 << u32::from(sq.file()))
    };
    files(Color::White, Rank::Seventh) != files(Color::Black, Rank::Second)
}

/// The solver's own "too little material to mate" test for `side`, which
/// is wider than the Laws' (shakmaty's): a lone knight against queens or
/// bishops only, bishops when every bishop on the board stands on one
/// colour and no knight or pawn is left.
fn solver_material_insufficient(pos: &Chess, side: Color) -> bool {
    let board = pos.board();
    let ours = board.by_color(side);
    let theirs = board.by_color(!side);
    if ours.count() == 1 {
        return true;
    }
    let blockers = board.knights() | board.bishops() | board.rooks() | board.pawns();
    if ours.count() == 2 && (ours & board.knights()).any() && (theirs & blockers).is_empty() {
        return true;
    }
    let our_bishops = ours & board.bishops();
    if our_bishops.any() {
        let complex = if (our_bishops & Bitboard::DARK_SQUARES).any() {
            Bitboard::DARK_SQUARES
        } else {
            Bitboard::LIGHT_SQUARES
        };
        return ours.count() == our_bishops.count() + 1
            && (board.bishops() & !complex).is_empty()
            && board.knights().is_empty()
            && board.pawns().is_empty();
    }
    false
}

/// Whether a shuffle exists: the side to move has two legal moves or more,
/// and there are piece moves `a` (side to move) and `b` (opponent), neither
/// a capture, such that `a`, `b`, `a` taken back and `b` taken back are
/// legal in turn. Repeating it gives quiet lines of any length that never
/// reach mate or stalemate and never change the material.
///
/// Candidates come straight from the attack tables and are checked one by
/// one on the bare board (legality of a quiet piece move depends on the
/// pieces alone), which costs far less than generating every legal move or
/// copying positions.
fn has_shuffle(pos: &Chess) -> bool {
    let (board, us) = (pos.board(), pos.turn());
    let mut legal_at_root = 0;
    for a in quiet_piece_moves_on(board, us) {
        if legal_at_root > TRIES {
            break;
        }
        if !quiet_move_is_legal(board, us, a) {
            continue;
        }
        legal_at_root += 1;
        if shuffles_back(&played(board, a), !us, taken_back(a))
            .next()
            .is_some()
        {
            // The solver plays out forced moves first: the root needs a
            // second legal move for the line to start where ours does.
            return legal_at_root > 1
                || quiet_piece_moves_on(board, us)
                    .filter(|&other| other != a)
                    .any(|other| quiet_move_is_legal(board, us, other));
        }
    }
    false
}

/// Whether a quiet piece move `e` of the side to move leads to a shuffle
/// of the opponent's (`a`, our `b`, `a` taken back, `b` taken back, all
/// legal in turn), the side to move having two legal moves or more. `e`
/// then the shuffle repeated is a line of quiet moves of any length that
/// never reaches mate or stalemate and never changes the material, as
/// [`has_shuffle`]'s is; it is found where that one is not, after a check
/// (a move out of check can seldom be taken back: the check would be
/// back).
fn steps_into_shuffle(pos: &Chess) -> bool {
    let (board, us) = (pos.board(), pos.turn());
    let first = || {
        quiet_piece_moves_on(board, us)
            .filter(move |&e| quiet_move_is_legal(board, us, e))
            .take(TRIES)
    };
    first().next().is_some()
        && crate::legal::legal_moves(pos).len() > 1
        && first().any(|e| {
            let after = played(board, e);
            quiet_piece_moves_on(&after, !us)
                .filter(|&a| quiet_move_is_legal(&after, !us, a))
                .take(TRIES)
                .any(|a| {
                    shuffles_back(&played(&after, a), us, taken_back(a))
                        .next()
                        .is_some()
                })
        })
}

/// How many legal candidates to try per side: shuffles are everywhere in
/// real games; where the first few fail, the caller falls back to the
/// solver.
const TRIES: usize = 3;

/// From `after` (`them` to move): the quiet piece moves `b` of `them` such
/// that `b`, then `back` (the last move taken back), then `b` taken back
/// are legal in turn, among the first few `b` legal in `after`.
fn shuffles_back(after: &Board, them: Color, back: Move) -> impl Iterator<Item = Move> + '_ {
    quiet_piece_moves_on(after, them)
        .filter(move |&b| quiet_move_is_legal(after, them, b))
        .take(TRIES)
        .filter(move |&b| {
            let mut line = played(after, b);
            for (step, side) in [(back, !them), (taken_back(b), them)] {
                if !quiet_move_is_legal(&line, side, step) {
                    return false;
                }
                line = played(&line, step);
            }
            true
        })
}

/// Whether the quiet piece move `m` (as [`quiet_piece_moves`] makes them:
/// no pawn, no capture, no castling) is legal for `us` on `board`: our
/// piece stands on its square, it reaches an empty target, and no enemy
/// piece attacks our king afterwards. Exact for such moves, in check or
/// not: castling rights, en passant and the move counters play no part,
/// and nothing is captured, so the enemy pieces stay as they are. The
/// same answer as `Position::is_legal`, which generates every candidate.
pub(crate) fn quiet_move_is_legal(board: &Board, us: Color, m: Move) -> bool {
    let Move::Normal {
        role,
        from,
        capture: None,
        to,
        promotion: None,
    } = m
    else {
        return false;
    };
    let piece = role.of(us);
    let occupied = board.occupied();
    if role == Role::Pawn
        || !board.by_piece(piece).contains(from)
        || occupied.contains(to)
        || !attacks::attacks(from, piece, occupied).contains(to)
    {
        return false;
    }
    king_unattacked_after_quiet(board, us, from, to)
}

/// Whether `us`'s king stands unattacked after our piece on `from` goes to
/// the empty square `to` with nothing captured: the enemy pieces stay where
/// they are, and only the occupancy changes the lines they attack along.
/// The king's own square is `to` when the king is the piece that moves.
pub(crate) fn king_unattacked_after_quiet(
    board: &Board,
    us: Color,
    from: Square,
    to: Square,
) -> bool {
    let king = if board.king_of(us) == Some(from) {
        Some(to)
    } else {
        board.king_of(us)
    };
    let after = board.occupied().without(from).with(to);
    king.is_some_and(|king| board.attacks_to(king, !us, after).is_empty())
}

/// `board` after the quiet piece move `m`.
fn played(board: &Board, m: Move) -> Board {
    let mut board = board.clone();
    if let Move::Normal { from, to, .. } = m
        && let Some(piece) = board.remove_piece_at(from)
    {
        board.set_piece_at(to, piece);
    }
    board
}

/// Whether `before` can come back from `after`, the position `m` left: `m`
/// is a quiet piece move, and some quiet piece move of the opponent, `m`
/// taken back and that move taken back are legal in turn and give `before`
/// again (same pieces, side to move, castling rights and en passant). Each
/// position is then reachable from the other, so they have the same
/// future: both dead or neither (the move counters aside, which the
/// analysis ignores).
///
/// Worked out on the board, not by playing the line: once the three moves
/// are legal in turn, the opponent's move and its return touch none of the
/// squares of `m`'s return (each would have made a step illegal), so the
/// line ends on `after`'s board with `m` taken back, the other side to
/// move, and no en passant square (its last move is a piece move). Only
/// the castling rights depend on the opponent's move: a king or rook move
/// gives up rights as `play_unchecked` does ([`rights_after`]).
pub(crate) fn leads_back(before: &Chess, m: Move, after: &Chess) -> bool {
    if !quiet_piece_move(&m)
        || after.turn() == before.turn()
        || played(after.board(), taken_back(m)) != *before.board()
        || before.ep_square(EnPassantMode::Legal).is_some()
    {
        return false;
    }
    let them = after.turn();
    let rights = before.castles().castling_rights();
    shuffles_back(after.board(), them, taken_back(m)).any(|b| {
        // Castling rights lost on the way make a different position.
        let line = [(b, them), (taken_back(m), !them), (taken_back(b), them)];
        rights_after(after.castles(), line) == rights
    })
}

/// The castling rights left after the quiet piece moves `line` (each with
/// its side), as `play_unchecked` keeps them: a king move gives up its
/// side's rights, a rook move those of its square.
fn rights_after(castles: &shakmaty::Castles, line: [(Move, Color); 3]) -> Bitboard {
    let mut castles = castles.clone();
    for (step, side) in line {
        match step {
            Move::Normal {
                role: Role::King, ..
            } => castles.discard_color(side),
            Move::Normal {
                role: Role::Rook,
                from,
                ..
            } => castles.discard_rook(from),
            _ => {}
        }
    }
    castles.castling_rights()
}

/// Non-capturing moves of the side to move's pieces other than pawns,
/// knights first, the king last; pseudo-legal (not checked against pins
/// or check).
pub(crate) fn quiet_piece_moves(pos: &Chess) -> impl Iterator<Item = Move> + '_ {
    quiet_piece_moves_on(pos.board(), pos.turn())
}

/// [`quiet_piece_moves`] of `side` on `board`.
fn quiet_piece_moves_on(board: &Board, side: Color) -> QuietPieceMoves<'_> {
    QuietPieceMoves {
        board,
        side,
        roles: 0,
        role: Role::Knight,
        froms: Bitboard::EMPTY,
        from: Square::A1,
        targets: Bitboard::EMPTY,
    }
}

/// The roles of [`quiet_piece_moves`], in their order.
const QUIET_ROLES: [Role; 5] = [
    Role::Knight,
    Role::Bishop,
    Role::Rook,
    Role::Queen,
    Role::King,
];

/// The iterator of [`quiet_piece_moves_on`]: role by role, piece by piece
/// (squares in ascending order), target by target. Written out, not
/// nested `flat_map`s: the dead-position bookkeeping walks it after every
/// quiet piece move, and the nested adapters cost several times the moves.
struct QuietPieceMoves<'a> {
    board: &'a Board,
    side: Color,
    /// The next role of [`QUIET_ROLES`] to start.
    roles: usize,
    role: Role,
    /// The pieces of `role` not started yet.
    froms: Bitboard,
    from: Square,
    /// The targets of the piece on `from` not given yet.
    targets: Bitboard,
}

impl Iterator for QuietPieceMoves<'_> {
    type Item = Move;

    fn next(&mut self) -> Option<Move> {
        loop {
            if let Some(to) = self.targets.pop_front() {
                return Some(Move::Normal {
                    role: self.role,
                    from: self.from,
                    capture: None,
                    to,
                    promotion: None,
                });
            }
            if let Some(from) = self.froms.pop_front() {
                let occupied = self.board.occupied();
                self.from = from;
                self.targets =
                    attacks::attacks(from, self.role.of(self.side), occupied) & !occupied;
                continue;
            }
            let role = *QUIET_ROLES.get(self.roles)?;
            self.roles += 1;
            self.role = role;
            self.froms = self.board.by_color(self.side) & self.board.by_role(role);
        }
    }
}

/// A move of a piece other than a pawn, capturing nothing: one that can
/// be taken back.
fn quiet_piece_move(m: &Move) -> bool {
    matches!(
        m,
        Move::Normal {
            role,
            capture: None,
            promotion: None,
            ..
        } if *role != Role::Pawn
    )
}

/// The same piece going back: for the moves of [`quiet_piece_moves`].
fn taken_back(m: Move) -> Move {
    match m {
        Move::Normal { role, from, to, .. } => Move::Normal {
            role,
            from: to,
            to: from,
            capture: None,
            promotion: None,
        },
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::position;
    use shakmaty::Square;

    #[test]
    fn the_start_position_is_alive_without_the_solver() {
        let pos = Chess::default();
        assert!(has_shuffle(&pos));
        assert!(pawns_leave_no_route(&pos, Color::White));
        assert!(!is_dead_quick(&pos));
    }

    #[test]
    fn locked_pawns_with_bishops_still_go_to_the_solver() {
        // Dead: every pawn blocked, bishops on one colour (a labelled "--").
        let pos = position("2b1k3/8/8/1p1p1p1p/1P1P1P1P/8/8/2B1K3 w - - 0 1");
        assert!(!pawns_leave_no_route(&pos, Color::White));
        assert!(!pawns_leave_no_route(&pos, Color::Black));
        assert!(is_dead_quick(&pos));
        assert!(is_dead_quick_reference(&pos));
    }

    #[test]
    fn no_shuffle_without_two_moves_or_a_quiet_reply() {
        // Stalemate: no move at all.
        let pos = position("k7/P7/1K6/8/8/8/8/7R b - - 0 1");
        assert!(!has_shuffle(&pos));
        // One legal move (Kb8): the solver plays it out first.
        let pos = position("k7/8/1K6/8/8/8/8/R7 b - - 0 1");
        assert!(!has_shuffle(&pos));
        assert!(!steps_into_shuffle(&pos), "in check, one move: forced");
    }

    /// Issue 38: after a check, the move out of it cannot be taken back,
    /// but a shuffle can follow it; the position is then left open without
    /// the solver, as CHA's quick test leaves it (the reference).
    #[test]
    fn a_check_is_left_open_when_a_shuffle_follows_the_way_out() {
        // Ne7+: Kh8 (or Qxe7), then the knights and rooks shuffle.
        let pos = position("2rq1rk1/1b2Nppp/p2p1n2/1pp1p1B1/4P3/1PNP4/1PPQ1PPP/R4RK1 b - - 1 15");
        assert!(pos.is_check());
        assert!(!has_shuffle(&pos));
        assert!(steps_into_shuffle(&pos));
        assert!(open_without_the_solver(&pos));
        assert!(!is_dead_quick_reference(&pos));
    }

    #[test]
    fn blocked_counts_follow_each_side() {
        // White pawn e4 blocked by e5; black pawn d5 blocked by the king d4.
        let pos = position("4k3/8/8/3pp3/3KP3/8/8/8 w - - 0 1");
        assert_eq!(blocked_pawns(&pos, Color::White), 1);
        assert_eq!(blocked_pawns(&pos, Color::Black), 2);
        assert!(has_lonely_pawn(&pos));
    }

    /// Every non-pawn piece's move to every square without capture, in
    /// every position of the corpus games and the labelled positions
    /// (checks, pins and boxed-in kings among them): the bare-board test
    /// answers as shakmaty's `is_legal`.
    #[test]
    fn quiet_move_legality_matches_shakmaty() {
        let (Some(sample), Some(labelled)) = (
            crate::test_support::shared("corpus/lichess-sample.pgn"),
            crate::test_support::shared("corpus/unwinnability-test-vector.txt"),
        ) else {
            return;
        };
        let games = crate::pgn::read_games(std::fs::read(sample).unwrap().as_slice()).unwrap();
        let mut positions: Vec<Chess> = Vec::new();
        for game in games {
            let mut pos = game.start.clone();
            positions.push(pos.clone());
            for m in game.moves {
                pos.play_unchecked(m);
                positions.push(pos.clone());
            }
        }
        let text = std::fs::read_to_string(labelled).unwrap();
        positions.extend(
            text.lines()
                .filter(|line| line.len() > 3 && !line.starts_with('#'))
                .map(|line| crate::analyze::parse_fen_line(&line[2..]).unwrap().position),
        );
        let (mut legal, mut differ) = (0, Vec::new());
        for pos in &positions {
            let (board, us) = (pos.board(), pos.turn());
            for from in board.by_color(us) & !board.pawns() {
                let role = board.role_at(from).unwrap();
                for to in Square::ALL {
                    let m = Move::Normal {
                        role,
                        from,
                        capture: None,
                        to,
                        promotion: None,
                    };
                    let expected = pos.is_legal(m);
                    legal += usize::from(expected);
                    if quiet_move_is_legal(board, us, m) != expected {
                        differ.push(format!(
                            "{m:?} in {}",
                            shakmaty::fen::Fen::from_position(pos, EnPassantMode::Legal)
                        ));
                    }
                }
            }
        }
        assert!(positions.len() > 30_000 && legal > 100_000, "{legal}");
        assert!(
            differ.is_empty(),
            "{} differ: {:?}",
            differ.len(),
            &differ[..differ.len().min(10)]
        );
    }

    #[test]
    fn solver_material_test_is_wider_than_the_laws() {
        // K+N against K+Q: the knight's side cannot mate (nothing of Black's
        // can block its own king) — shakmaty says "sufficient".
        let pos = position("8/3k4/2q5/8/8/K1N5/8/8 b - - 0 1");
        assert!(solver_material_insufficient(&pos, Color::White));
        assert!(!solver_material_insufficient(&pos, Color::Black));
        // Bishops on both colours can mate.
        let pos = position("4k3/8/8/8/8/8/8/2B1KB2 w - - 0 1");
        assert!(!solver_material_insufficient(&pos, Color::White));
    }

    /// The moves the nested adapters gave, as `quiet_piece_moves_on` made
    /// them before it was written out: the reference for its order.
    fn quiet_piece_moves_nested(board: &Board, side: Color) -> Vec<Move> {
        let occupied = board.occupied();
        let ours = board.by_color(side);
        QUIET_ROLES
            .into_iter()
            .flat_map(move |role| {
                (ours & board.by_role(role))
                    .into_iter()
                    .flat_map(move |from| {
                        (attacks::attacks(from, role.of(side), occupied) & !occupied)
                            .into_iter()
                            .map(move |to| Move::Normal {
                                role,
                                from,
                                capture: None,
                                to,
                                promotion: None,
                            })
                    })
            })
            .collect()
    }

    /// `leads_back` as it was written before it worked on the board: the
    /// line played out on a copy of the position and compared whole.
    fn leads_back_played(before: &Chess, m: Move, after: &Chess) -> bool {
        quiet_piece_move(&m)
            && shuffles_back(after.board(), after.turn(), taken_back(m)).any(|b| {
                let mut line = after.clone();
                for step in [b, taken_back(m), taken_back(b)] {
                    line.play_unchecked(step);
                }
                line.board() == before.board()
                    && line.turn() == before.turn()
                    && line.castles().castling_rights() == before.castles().castling_rights()
                    && line.ep_square(EnPassantMode::Legal)
                        == before.ep_square(EnPassantMode::Legal)
            })
    }

    /// Every legal move of every position of random games (standard and
    /// Chess960, castling rights given up by king and rook moves, en
    /// passant squares): the quiet piece moves of both sides come in the
    /// nested adapters' order, and `leads_back` answers as the line played
    /// out does, both ways many times.
    #[test]
    fn leads_back_on_the_board_answers_as_the_line_played() {
        let (mut back, mut not_back) = (0, 0);
        for before in crate::test_support::random_positions(38, 90) {
            for side in [Color::White, Color::Black] {
                let moves: Vec<Move> = quiet_piece_moves_on(before.board(), side).collect();
                assert_eq!(moves, quiet_piece_moves_nested(before.board(), side));
            }
            for m in before.legal_moves() {
                let mut after = before.clone();
                after.play_unchecked(m);
                let expected = leads_back_played(&before, m, &after);
                assert_eq!(
                    leads_back(&before, m, &after),
                    expected,
                    "{m} in {before:?}"
                );
                // Given the wrong way round (not the position `m` left).
                assert_eq!(
                    leads_back(&after, m, &before),
                    leads_back_played(&after, m, &before)
                );
                if expected {
                    back += 1;
                } else if quiet_piece_move(&m) {
                    not_back += 1;
                }
            }
        }
        assert!(back > 1_000 && not_back > 100, "{back} {not_back}");
    }
}
