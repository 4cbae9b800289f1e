//! Whether a board that did not show some positions can still be read back
//! without guessing.
//!
//! A scanning board that skipped plies, or a board back after a cable
//! outage, shows a position some plies after the last one it showed. Such a
//! stretch is *decidable* when exactly one sequence of legal moves of that
//! many plies leads from the last position shown to what the board shows,
//! no shorter sequence does, and what it shows is not a position the game
//! already had (which would read as a takeback). The simulator only skips
//! positions where this holds, so the engine is never asked to guess.

use shakmaty::{Bitboard, Board, Chess, Color, Move, Position, Role};

use crate::event::Scan;

/// How many positions one check may visit before it gives up and calls the
/// stretch undecidable (the simulator then shows more positions).
const BUDGET: usize = 20_000;

/// Whether `plies`, played from `from`, can be read back from the board
/// showing only their result. `earlier` are the positions of the game
/// before `from`.
pub(crate) fn decidable(earlier: &[Chess], from: &Chess, plies: &[Move], identify: bool) -> bool {
    if plies.is_empty() {
        return true;
    }
    // An occupancy board names an underpromoted piece only when the player
    // puts it down, which a skipped position does not show.
    if !identify
        && plies
            .iter()
            .any(|m| m.promotion().is_some_and(|r| r != Role::Queen))
    {
        return false;
    }
    let Some(end) = played(from, plies) else {
        return false;
    };
    let target = Scan::from_board(end.board(), identify);
    let reads = |p: &Chess| Scan::from_board(p.board(), identify) == target;
    if earlier.iter().chain(std::iter::once(from)).any(reads) {
        return false;
    }
    let mut search = Search::new(end.board(), identify, plies.len());
    search.run(from, plies.len());
    !search.shorter && search.found == 1 && search.visited <= BUDGET
}

/// Whether one ply can be read back from its result alone (a scan taken
/// before and one after it, none in between).
pub(crate) fn single_ply_decidable(from: &Chess, m: Move, identify: bool) -> bool {
    if identify {
        // Pieces are identified: different moves leave different boards.
        return true;
    }
    if !m.is_capture() && !m.is_promotion() {
        // A quiet move, castling or en passant: the squares that changed
        // name it.
        return true;
    }
    decidable(&[], from, &[m], identify)
}

/// Whether a different move of the piece the first ply moves, followed by
/// as many plies as follow it, also leads to what the board shows after
/// `plies`. On an occupancy board the states such a line goes through
/// include the first ply's result (12.Qxa7 empties e3 only; so does 12.Qd4
/// once the opponent has taken the queen off d4 to play 12...Qxd4), so a
/// scan of that result does not tell the two apart.
pub(crate) fn first_move_mimicked(from: &Chess, plies: &[Move], identify: bool) -> bool {
    let Some((&first, rest)) = plies.split_first() else {
        return false;
    };
    let Some(end) = played(from, plies) else {
        return false;
    };
    from.legal_moves()
        .into_iter()
        .filter(|&m| m.from() == first.from() && m != first)
        .any(|m| {
            let mut next = from.clone();
            next.play_unchecked(m);
            let mut search = Search::new(end.board(), identify, rest.len());
            search.run(&next, rest.len());
            // Past its budget the search cannot rule the line out.
            search.found > 0 || search.shorter || search.visited > BUDGET
        })
}

/// The position after `plies` from `from`, if they are legal.
fn played(from: &Chess, plies: &[Move]) -> Option<Chess> {
    let mut end = from.clone();
    for &m in plies {
        if !end.is_legal(m) {
            return None;
        }
        end.play_unchecked(m);
    }
    Some(end)
}

struct Search {
    target: Board,
    target_scan: Scan,
    identify: bool,
    depth: usize,
    found: usize,
    shorter: bool,
    visited: usize,
}

impl Search {
    /// A search for lines of `depth` plies to `target`'s reading.
    fn new(target: &Board, identify: bool, depth: usize) -> Search {
        Search {
            target: target.clone(),
            target_scan: Scan::from_board(target, identify),
            identify,
            depth,
            found: 0,
            shorter: false,
            visited: 0,
        }
    }

    fn done(&self) -> bool {
        self.shorter || self.found > 1 || self.visited > BUDGET
    }

    fn run(&mut self, pos: &Chess, left: usize) {
        if self.done() {
            return;
        }
        if Scan::from_board(pos.board(), self.identify) == self.target_scan {
            if left == 0 {
                self.found += 1;
            } else if left < self.depth {
                self.shorter = true;
            }
            return;
        }
        if left == 0 || !self.reachable(pos, left) {
            return;
        }
        for m in pos.legal_moves() {
            // The engine reads a promotion on an occupancy board as a queen.
            if !self.identify && m.promotion().is_some_and(|r| r != Role::Queen) {
                continue;
            }
            self.visited += 1;
            let mut next = pos.clone();
            next.play_unchecked(m);
            self.run(&next, left - 1);
            if self.done() {
                return;
            }
        }
    }

    /// A lower bound on the plies needed, against what is left: every piece
    /// standing where the target has something else must move or be
    /// captured, one piece per move (two when castling).
    fn reachable(&self, pos: &Chess, left: usize) -> bool {
        let board = pos.board();
        let turn = pos.turn();
        let moves_of = |c: Color| {
            if c == turn {
                left.div_ceil(2)
            } else {
                left / 2
            }
        };
        if !self.identify {
            let now = board.occupied();
            let want = self.target.occupied();
            let castles = [Color::White, Color::Black]
                .into_iter()
                .filter(|&c| pos.castles().has_color(c))
                .count();
            // A move fills at most one square, castling two.
            let fill = (want & !now).count();
            let captures = now.count().saturating_sub(want.count());
            return want.count() <= now.count() && fill <= left + castles && captures <= left;
        }
        for side in [Color::White, Color::Black] {
            let ours = board.by_color(side);
            let theirs_target = self.target.by_color(side);
            if theirs_target.count() > ours.count() {
                return false;
            }
            let captured = ours.count() - theirs_target.count();
            let misplaced = misplaced(board, &self.target, ours);
            let bonus = usize::from(pos.castles().has_color(side));
            if misplaced.saturating_sub(captured) > moves_of(side) + bonus
                || captured > moves_of(!side)
            {
                return false;
            }
        }
        true
    }
}

/// Squares of `ours` where `target` does not have the same piece.
fn misplaced(board: &Board, target: &Board, ours: Bitboard) -> usize {
    ours.into_iter()
        .filter(|&sq| board.piece_at(sq) != target.piece_at(sq))
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::tests::{START, line};

    #[test]
    fn vacate_and_refill_pair_from_the_issue_is_decidable() {
        // Issue 10: only Qh5 d5 explains the scan.
        let (pos, moves) = line(
            "r3kbnr/ppp1pppp/2n5/3q4/3P2b1/2N2N2/PPP2PPP/R1BQKB1R b KQkq - 3 5",
            &["Qh5", "d5"],
        );
        assert!(decidable(&[], &pos, &moves, false));
    }

    #[test]
    fn capture_recapture_on_one_square_is_decidable_with_identity() {
        let (pos, moves) = line(
            "rnbqkbnr/ppp2ppp/3p4/4p3/3PP3/8/PPP2PPP/RNBQKBNR w KQkq - 0 3",
            &["dxe5", "dxe5"],
        );
        assert!(decidable(&[], &pos, &moves, true));
    }

    #[test]
    fn transposed_move_orders_are_not() {
        // 1.e4 e5 2.d4 and 1.d4 e5 2.e4 reach the same board.
        let (pos, moves) = line(START, &["e4", "e5", "d4"]);
        assert!(!decidable(&[], &pos, &moves, true));
        assert!(decidable(&[], &pos, &moves[..2], true));
    }

    #[test]
    fn a_capture_two_pieces_could_make_is_not_on_occupancy_boards() {
        // The knight can take on d5 or f5: only its square empties, so an
        // occupancy board cannot tell which; identity can.
        let (pos, moves) = line("4k3/8/8/3p1p2/8/4N3/8/4K3 w - - 0 1", &["Nxd5"]);
        assert!(!single_ply_decidable(&pos, moves[0], false));
        assert!(single_ply_decidable(&pos, moves[0], true));
    }

    #[test]
    fn two_ways_to_the_same_board_make_it_undecidable() {
        // Nf3 Nc6 Ng1 and Nh3 Nc6 Ng1 leave the same board.
        let (pos, moves) = line(START, &["Nf3", "Nc6", "Ng1"]);
        assert!(!decidable(&[], &pos, &moves, true));
    }

    /// Plays `sans` from the start position and returns the position
    /// after the first `skip` of them with the moves after it.
    fn from_start(sans: &[&str], skip: usize) -> (Chess, Vec<Move>) {
        let (mut pos, moves) = line(START, sans);
        for &m in &moves[..skip] {
            pos.play_unchecked(m);
        }
        (pos, moves[skip..].to_vec())
    }

    #[test]
    fn a_capture_then_a_move_to_where_the_piece_could_go_is_mimicked() {
        // 12.Qxa7 Qd4 and 12.Qd4 Qxd4 leave the same occupancy, and the
        // scan between them (e3 empty) is 12.Qd4 with the queen taken off.
        let (pos, moves) = from_start(
            &[
                "e4", "e5", "Nf3", "Nf6", "Nc3", "Nc6", "d4", "exd4", "Nxd4", "Bc5", "Nxc6",
                "dxc6", "Bd3", "Bg4", "f3", "Be6", "Qe2", "Qd7", "Be3", "Bxe3", "Qxe3", "O-O-O",
                "Qxa7", "Qd4",
            ],
            22,
        );
        assert!(first_move_mimicked(&pos, &moves, false));
        // Pieces identified tell the queens apart.
        assert!(!first_move_mimicked(&pos, &moves, true));
    }

    #[test]
    fn a_capture_no_other_move_of_that_piece_mimics_is_not() {
        // After 2.exd5 Nf6 the pawn could have gone to e5 only, which
        // leaves e5 full.
        let (pos, moves) = from_start(&["e4", "d5", "exd5", "Nf6"], 2);
        assert!(!first_move_mimicked(&pos, &moves, false));
    }
}
