//! Explaining a sensed board by legal moves.
//!
//! A candidate sequence of moves explains the sensors when the position it
//! leads to has the sensed occupancy, agrees with every reported piece
//! identity, and every square the moves involve was touched since the
//! position they start from. The last condition is what tells a capture
//! apart from the other captures the same piece could have made: on an
//! occupancy board the captured square reads occupied before and after, so
//! only the event that emptied it for a moment shows which square it was.
//! Such a capture is also read only once a piece was put on the captured
//! square after the capturing piece left its square (Art. 4.7.1: the capture
//! is made when the player has released his piece there), so a capturing
//! piece still in the hand, or a piece straightened on a square the
//! opponent could take, is not a capture. A board that identifies pieces
//! and reports them square by square (DGT) may list the capturing piece on
//! its new square before its old square empty; its identity there shows the
//! capture, so the order of the two reports does not matter on such boards.

use shakmaty::{
    Bitboard, CastlingSide, Chess, Color, Move, MoveList, Position, Role, Square, attacks,
};

use crate::sensed::SensedBoard;

/// The squares whose content a move changes.
pub fn move_squares(m: Move, turn: Color) -> Bitboard {
    match m {
        Move::Normal { from, to, .. } => Bitboard::from_square(from).with(to),
        Move::EnPassant { from, to } => Bitboard::from_square(from)
            .with(to)
            .with(Square::from_coords(to.file(), from.rank())),
        Move::Castle { king, rook } => {
            let side = m.castling_side().expect("castle has a side");
            Bitboard::from_square(king)
                .with(rook)
                .with(side.king_to(turn))
                .with(side.rook_to(turn))
        }
        Move::Put { to, .. } => Bitboard::from_square(to),
    }
}

/// The square of the piece `m` captures: its target square, but for en
/// passant, where the pawn taken stands beside it (Art. 3.7.4.1).
pub fn captured_square(m: Move) -> Option<Square> {
    match m {
        Move::EnPassant { from, to } => Some(Square::from_coords(to.file(), from.rank())),
        _ if m.is_capture() => Some(m.to()),
        _ => None,
    }
}

/// The squares on which `m` puts a piece down.
pub fn placed_squares(m: Move, turn: Color) -> Bitboard {
    match m {
        Move::Castle { .. } => {
            let side = m.castling_side().expect("castle has a side");
            Bitboard::from_square(side.king_to(turn)).with(side.rook_to(turn))
        }
        _ => Bitboard::from_square(m.to()),
    }
}

/// The occupancy after `m`, computed without playing it.
pub fn occupancy_after(occupied: Bitboard, m: Move, turn: Color) -> Bitboard {
    match m {
        Move::Normal { from, to, .. } => occupied.without(from).with(to),
        Move::EnPassant { from, to } => occupied
            .without(from)
            .without(Square::from_coords(to.file(), from.rank()))
            .with(to),
        Move::Castle { king, rook } => {
            let side = m.castling_side().expect("castle has a side");
            occupied
                .without(king)
                .without(rook)
                .with(side.king_to(turn))
                .with(side.rook_to(turn))
        }
        Move::Put { to, .. } => occupied.with(to),
    }
}

/// What a search found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Explanation {
    /// Nothing of this length explains the sensors.
    None,
    /// Exactly one sequence does (promotion pieces the board cannot tell
    /// apart are read as queens).
    Unique(Vec<Move>),
    /// Several different sequences do: wait for more events.
    Ambiguous,
}

/// Finds the sequences of exactly `plies` legal moves from `pos` that explain
/// `sensed`, using only moves whose squares were all touched by events after
/// sequence number `since` (when the board first showed `pos`).
pub fn explain(pos: &Chess, sensed: &SensedBoard, since: u64, plies: usize) -> Explanation {
    // Every move changes at least two squares, and a capture removes one
    // piece: cheap tests that turn away most states with a piece in the hand.
    let before = pos.board().occupied().count();
    let after = sensed.occupied().count();
    if after > before || before - after > plies {
        return Explanation::None;
    }
    let touched = sensed.touched_since(since);
    if touched.count() < 2 {
        return Explanation::None;
    }
    let mut found = Found::default();
    // Grown only by a search of two moves or more: most are of one.
    let mut path = Vec::new();
    let ctx = Context {
        sensed,
        touched,
        since,
    };
    search(&ctx, pos, plies, Bitboard::EMPTY, &mut path, &mut found);
    pick(found)
}

/// Whether the squares' histories since event `since` could have made
/// `line` from `pos`, move by move, as [`explain`] requires of its own
/// sequences (a line found another way, from the occupancy alone).
pub fn admits_line(pos: &Chess, sensed: &SensedBoard, since: u64, line: &[Move]) -> bool {
    let ctx = Context {
        sensed,
        touched: sensed.touched_since(since),
        since,
    };
    let mut turn = pos.turn();
    let mut placed = Bitboard::EMPTY;
    line.iter().all(|&m| {
        let puts = placed_squares(m, turn);
        let ok = ctx.admits(m, turn) && ctx.refills(puts, placed);
        placed |= puts;
        turn = !turn;
        ok
    })
}

/// The legal moves of `pos` that start and end on `touched` squares (and,
/// when `last`, start on a square that reads empty and end on one that reads
/// occupied), added to `moves`: generated square by square, much cheaper
/// than all legal moves.
fn moves_within(
    pos: &Chess,
    touched: Bitboard,
    sensed: &SensedBoard,
    last: bool,
    moves: &mut MoveList,
) {
    let mut froms = pos.us() & touched;
    let mut targets = touched;
    if last {
        froms &= !sensed.occupied();
        targets &= sensed.occupied();
    }
    for from in froms {
        let Some(role) = pos.board().role_at(from) else {
            continue;
        };
        // Only the squares the piece could reach at all are asked about:
        // each question generates and copies a move list.
        let reach = match role {
            Role::Pawn => {
                attacks::pawn_attacks(pos.turn(), from) | Bitboard::from_file(from.file())
            }
            _ => attacks::attacks(from, role.of(pos.turn()), pos.board().occupied()),
        };
        for to in (targets & reach & !pos.us()).without(from) {
            // By reference: moving a move list into an iterator copies
            // all its slots.
            for &m in &pos.san_candidates(role, to) {
                if m.from() == Some(from) && !m.is_en_passant() {
                    moves.push(m);
                }
            }
        }
        // Castling and en passant only where the position allows them at
        // all: generating them costs more than the test.
        match role {
            Role::King => {
                for side in [CastlingSide::KingSide, CastlingSide::QueenSide] {
                    if pos.castles().has(pos.turn(), side) {
                        moves.extend(pos.castling_moves(side));
                    }
                }
            }
            Role::Pawn if pos.pseudo_legal_ep_square().is_some() => {
                moves.extend(
                    pos.en_passant_moves()
                        .into_iter()
                        .filter(|m| m.from() == Some(from)),
                );
            }
            _ => {}
        }
    }
}

struct Context<'a> {
    sensed: &'a SensedBoard,
    touched: Bitboard,
    since: u64,
}

impl Context<'_> {
    /// Whether the events could have made `m`: all its squares touched, and
    /// for a capture whose square reads occupied before and after, a piece
    /// put there after the capturing piece was lifted (for a promotion, the
    /// new piece may go down before the pawn is removed, Art. 4.6.2), or
    /// the capturing piece itself reported there.
    fn admits(&self, m: Move, turn: Color) -> bool {
        if !move_squares(m, turn).is_subset(self.touched) || self.in_two_places(m, turn) {
            return false;
        }
        match m {
            Move::Normal {
                role,
                from,
                capture: Some(_),
                to,
                promotion,
            } => {
                let placed = self.sensed.last_place(to);
                placed > self.since
                    && (promotion.is_some()
                        || placed >= self.sensed.last_lift(from)
                        || self.sensed.piece_at(to) == Some(role.of(turn)))
            }
            _ => true,
        }
    }

    /// Whether the reports put a piece `m` moves onto an empty square in two
    /// places at once: its square there reported full (and full since)
    /// while the square it leaves was still reported full, emptied only
    /// after. A piece is in one place at a time, so such a square was
    /// filled by something else or read wrong (a blip, 3: more than the
    /// margin), not by this move (docs/design/reconstruction.md, the cost
    /// table). A capture's square is full before and after: its order is
    /// [`Context::admits`]'s. A promotion's new piece may come down before
    /// the pawn goes (Art. 4.6.2); a board that names the piece arriving
    /// may report it before its old square empties (a sweep), so only
    /// unnamed squares are held to it. Reports at one instant (one scan or
    /// dump) have no order among them, and a square emptied, refilled and
    /// emptied again since the position tells not when its piece left.
    fn in_two_places(&self, m: Move, turn: Color) -> bool {
        let pairs = match m {
            Move::Normal {
                from,
                to,
                capture: None,
                promotion: None,
                ..
            }
            | Move::EnPassant { from, to } => [Some((from, to)), None],
            Move::Castle { king, rook } => {
                let side = m.castling_side().expect("castle has a side");
                [
                    Some((king, side.king_to(turn))),
                    Some((rook, side.rook_to(turn))),
                ]
            }
            _ => [None, None],
        };
        let sensed = self.sensed;
        pairs.into_iter().flatten().any(|(from, to)| {
            let filled = sensed.last_place(to);
            from != to
                && sensed.occupied().contains(to)
                && sensed.piece_at(to).is_none()
                && sensed.last_place(from) <= filled
                && filled < sensed.last_lift(from)
                && sensed.lift_before_last_place(from) <= self.since
        })
    }

    /// Whether the events could have put a piece on each of `squares` a
    /// second time in one line (`placed`: the squares the line's earlier
    /// moves put pieces on). Between the two the square was emptied, by a
    /// capture or a move away, so a lift must have been seen there or a
    /// dump may have hidden one. A board that identifies the piece there
    /// may report a capture as one change, so only unidentified squares are
    /// held to it.
    fn refills(&self, squares: Bitboard, placed: Bitboard) -> bool {
        (squares & placed).into_iter().all(|sq| {
            self.sensed.piece_at(sq).is_some() || self.sensed.emptied_since(sq, self.since)
        })
    }
}

fn search(
    ctx: &Context<'_>,
    pos: &Chess,
    plies: usize,
    placed: Bitboard,
    path: &mut Vec<Move>,
    found: &mut Found,
) {
    let sensed = ctx.sensed;
    let turn = pos.turn();
    let occupied = pos.board().occupied();
    // Filled in place: a move list returned is copied whole (room for
    // 270 moves) however few it holds.
    let mut moves = MoveList::new();
    moves_within(pos, ctx.touched, sensed, plies == 1, &mut moves);
    for &m in &moves {
        let puts = placed_squares(m, turn);
        if !ctx.admits(m, turn) || !ctx.refills(puts, placed) {
            continue;
        }
        if plies == 1 {
            if occupancy_after(occupied, m, turn) != sensed.occupied() {
                continue;
            }
            let mut after = pos.clone();
            after.play_unchecked(m);
            if sensed.identities_agree(after.board()) {
                // One allocation: a clone of `path` then a push grew it.
                let mut seq = Vec::with_capacity(path.len() + 1);
                seq.extend_from_slice(path);
                seq.push(m);
                found.push(seq);
            }
        } else {
            let mut after = pos.clone();
            after.play_unchecked(m);
            path.push(m);
            search(ctx, &after, plies - 1, placed | puts, path, found);
            path.pop();
        }
    }
}

/// The sequences a search found, in order. The first is kept apart: a
/// search finds one or none nearly always, and a list of lines allocated
/// for it, then freed, cost as much as the line itself.
#[derive(Default)]
struct Found {
    first: Option<Vec<Move>>,
    more: Vec<Vec<Move>>,
}

impl Found {
    fn push(&mut self, line: Vec<Move>) {
        if self.first.is_none() {
            self.first = Some(line);
        } else {
            self.more.push(line);
        }
    }
}

/// Keeps one sequence per way of moving the pieces; sequences that differ only
/// in promotion pieces the sensors could not tell apart become the queen one.
fn pick(found: Found) -> Explanation {
    let first = match found.first {
        None => return Explanation::None,
        Some(first) if found.more.is_empty() => return Explanation::Unique(first),
        Some(first) => first,
    };
    let mut found = distinct(std::iter::once(first).chain(found.more).collect());
    match found.len() {
        0 => Explanation::None,
        1 => Explanation::Unique(found.remove(0)),
        _ => Explanation::Ambiguous,
    }
}

/// One sequence per way of moving the pieces, in the order found: sequences
/// that differ only in a promotion piece the sensors could not tell apart
/// are one, read as the queen.
pub(crate) fn distinct(lines: Vec<Vec<Move>>) -> Vec<Vec<Move>> {
    // Nearly always one line or none: nothing to compare, nothing to copy.
    if lines.len() < 2 {
        return lines;
    }
    // Compared move by move, without collecting keys.
    let key = |m: &Move| (m.from(), m.to(), m.is_castle());
    let same_way = |a: &[Move], b: &[Move]| {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| key(x) == key(y))
    };
    let mut out: Vec<Vec<Move>> = Vec::with_capacity(lines.len());
    for line in lines {
        match out.iter_mut().find(|l| same_way(l, &line)) {
            Some(kept) if queens(&line) > queens(kept) => *kept = line,
            Some(_) => {}
            None => out.push(line),
        }
    }
    out
}

fn queens(seq: &[Move]) -> usize {
    seq.iter()
        .filter(|m| m.promotion() == Some(Role::Queen))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::uci::UciMove;

    fn mv(pos: &Chess, uci: &str) -> Move {
        uci.parse::<UciMove>().unwrap().to_move(pos).unwrap()
    }

    /// The moves between touched squares are every legal move between
    /// them, whatever the squares: checked with all squares touched in
    /// every corpus position (the reach filter must drop no legal move)
    /// and with a few squares (it must add none).
    #[test]
    fn moves_within_touched_squares_are_the_legal_moves_between_them() {
        let Some(sample) = crate::test_support::shared("corpus/lichess-sample.pgn") else {
            return;
        };
        let games = crate::pgn::read_games(std::fs::read(sample).unwrap().as_slice()).unwrap();
        let mut compared = 0;
        for game in games {
            let mut pos = game.start.clone();
            for m in game.moves {
                pos.play_unchecked(m);
                let sensed = SensedBoard::showing(pos.board());
                for touched in [Bitboard::FULL, move_squares(m, !pos.turn()) | pos.us()] {
                    let mut expected: Vec<Move> = pos
                        .legal_moves()
                        .into_iter()
                        .filter(|m| m.from().is_some_and(|from| touched.contains(from)))
                        // Castling and en passant go by the piece that
                        // moves: their other squares are checked later.
                        .filter(|m| touched.contains(m.to()) || m.is_castle() || m.is_en_passant())
                        .collect();
                    let mut within = MoveList::new();
                    moves_within(&pos, touched, &sensed, false, &mut within);
                    let mut got: Vec<Move> = within.to_vec();
                    expected.sort_by_key(|m| format!("{m:?}"));
                    got.sort_by_key(|m| format!("{m:?}"));
                    assert_eq!(got, expected, "{touched:?} in {pos:?}");
                    compared += 1;
                }
            }
        }
        assert!(compared > 50_000, "{compared}");
    }

    #[test]
    fn occupancy_without_playing_matches_playing() {
        let fens = [
            "r3k2r/pppq1ppp/2n2n2/3pp3/1b1PP1b1/2N2N2/PPPQ1PPP/R3K2R w KQkq - 0 1",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
            "r1b1k2r/1P6/8/8/8/8/6p1/4K2R b Kkq - 0 1",
        ];
        for fen in fens {
            let pos: Chess = fen
                .parse::<shakmaty::fen::Fen>()
                .unwrap()
                .into_position(shakmaty::CastlingMode::Standard)
                .unwrap();
            for m in pos.legal_moves() {
                let mut after = pos.clone();
                after.play_unchecked(m);
                assert_eq!(
                    occupancy_after(pos.board().occupied(), m, pos.turn()),
                    after.board().occupied(),
                    "{fen} {m:?}"
                );
                let changed = pos.board().occupied() ^ after.board().occupied();
                assert!(
                    changed.is_subset(move_squares(m, pos.turn())),
                    "{fen} {m:?}"
                );
            }
        }
    }

    fn setup(fen: &str) -> Chess {
        fen.parse::<shakmaty::fen::Fen>()
            .unwrap()
            .into_position(shakmaty::CastlingMode::Standard)
            .unwrap()
    }

    #[test]
    fn capture_square_must_be_touched() {
        // A knight on d4 that can take on e6 or f5: the occupancy after
        // either capture is the same, only the touched square differs.
        let pos = setup("4k3/8/4p3/5p2/3N4/8/8/4K3 w - - 0 1");
        let mut sensed = SensedBoard::showing(pos.board());
        sensed.lift(Square::D4, 1);
        // The knight in the hand is not a capture of anything.
        assert_eq!(explain(&pos, &sensed, 0, 1), Explanation::None);
        sensed.lift(Square::E6, 2);
        sensed.place(Square::E6, None, 3);
        assert_eq!(
            explain(&pos, &sensed, 0, 1),
            Explanation::Unique(vec![mv(&pos, "d4e6")])
        );
        // Flicker on f5 as well: either capture could be meant.
        sensed.lift(Square::F5, 4);
        sensed.place(Square::F5, None, 5);
        assert_eq!(explain(&pos, &sensed, 0, 1), Explanation::Ambiguous);
        // Touches before the position's basis do not count.
        assert_eq!(explain(&pos, &sensed, 5, 1), Explanation::None);
    }

    #[test]
    fn piece_straightened_before_the_lift_is_not_captured() {
        // White straightened the knight on e6 before Black lifted his king:
        // the king in the hand is not Kxe6.
        let pos = setup("8/8/4N3/4k3/8/8/8/4K3 b - - 0 1");
        let mut sensed = SensedBoard::showing(pos.board());
        sensed.lift(Square::E6, 1);
        sensed.place(Square::E6, None, 2);
        sensed.lift(Square::E5, 3);
        assert_eq!(explain(&pos, &sensed, 0, 1), Explanation::None);
        sensed.place(Square::E4, None, 4);
        assert_eq!(
            explain(&pos, &sensed, 0, 1),
            Explanation::Unique(vec![mv(&pos, "e5e4")])
        );
    }

    #[test]
    fn identified_capture_reported_before_the_departure() {
        // A DGT sweep reports the pawn on g4 before h3 empties.
        let pos = setup("4k3/8/8/8/6p1/7P/8/4K3 w - - 0 1");

        let mut sensed = SensedBoard::showing(pos.board());
        sensed.lift(Square::G4, 1);
        sensed.place(Square::G4, Some(Color::White.pawn()), 2);
        sensed.lift(Square::H3, 3);
        assert_eq!(
            explain(&pos, &sensed, 0, 1),
            Explanation::Unique(vec![mv(&pos, "h3g4")])
        );
        // Without identities the same order is a piece still in the hand.
        let mut sensed = SensedBoard::showing(pos.board());
        sensed.lift(Square::G4, 1);
        sensed.place(Square::G4, None, 2);
        sensed.lift(Square::H3, 3);
        assert_eq!(explain(&pos, &sensed, 0, 1), Explanation::None);
    }

    #[test]
    fn a_piece_reported_arrived_before_it_left_is_no_move() {
        let pos = Chess::default();
        // e4 full before e2 empty, and full since: the pawn would have
        // stood on both squares at once.
        let mut sensed = SensedBoard::showing(pos.board());
        sensed.place(Square::E4, None, 1);
        sensed.lift(Square::E2, 2);
        assert_eq!(explain(&pos, &sensed, 0, 1), Explanation::None);
        // In the order a hand moves it, it is the move.
        let mut sensed = SensedBoard::showing(pos.board());
        sensed.lift(Square::E2, 1);
        sensed.place(Square::E4, None, 2);
        assert_eq!(
            explain(&pos, &sensed, 0, 1),
            Explanation::Unique(vec![mv(&pos, "e2e4")])
        );
        // e2 emptied, refilled by a flicker and emptied again after e4
        // filled: the pawn may have left at the first lift.
        let mut sensed = SensedBoard::showing(pos.board());
        sensed.lift(Square::E2, 1);
        sensed.place(Square::E2, None, 2);
        sensed.place(Square::E4, None, 3);
        sensed.lift(Square::E2, 4);
        assert_eq!(
            explain(&pos, &sensed, 0, 1),
            Explanation::Unique(vec![mv(&pos, "e2e4")])
        );
    }

    #[test]
    fn occupancy_promotion_reads_as_queen() {
        let pos = setup("8/4P3/8/8/8/8/k7/4K3 w - - 0 1");
        let mut sensed = SensedBoard::showing(pos.board());
        sensed.lift(Square::E7, 1);
        sensed.place(Square::E8, None, 2);
        assert_eq!(
            explain(&pos, &sensed, 0, 1),
            Explanation::Unique(vec![mv(&pos, "e7e8q")])
        );
        // A board that identifies the knight records the knight.
        sensed.place(Square::E8, Some(Color::White.knight()), 3);
        assert_eq!(
            explain(&pos, &sensed, 0, 1),
            Explanation::Unique(vec![mv(&pos, "e7e8n")])
        );
    }
}
