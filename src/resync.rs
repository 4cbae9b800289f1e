//! Resynchronisation: finding the moves that lead from the record to what
//! the board shows when the board skipped states (a scan board, a cable
//! outage, a full dump after a reconnection).
//!
//! The search is pure and deterministic: its budget is counted in nodes,
//! never in time, so a replay gives the same answer byte for byte. It
//! deepens one ply at a time and keeps only the shortest explanations;
//! every sequence of that length is returned, move orders that transpose
//! included, because a record with the wrong move order is a wrong record.
//!
//! Pruning is by what must still move: each ply puts at most one piece on
//! a square (two when castling), takes at most one piece off the board, and
//! empties at most one square of the side that moves (two when castling,
//! one of the opponent's when capturing en passant). A sub-search that found
//! nothing is remembered by the position's Zobrist hash and the plies left,
//! so a transposition is searched once.

use std::{collections::HashSet, fmt};

use serde::{Deserialize, Serialize};
use shakmaty::{
    Bitboard, Board, ByColor, CastlingSide, Chess, Color, EnPassantMode, Move, Piece, Position,
    Role, zobrist::Zobrist64,
};

use crate::sensed::SensedBoard;

/// Whether the record and the board are in step, as the dashboard, `/boards`
/// and `replay --json` show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SyncState {
    /// The board shows the record, or a move in progress from it.
    #[default]
    Ok,
    /// The board shows a state the record does not explain yet; the search
    /// runs again as evidence comes.
    Searching,
    /// Several sequences of moves explain the board: the record stops at the
    /// last certain move and the candidates wait for evidence or the arbiter.
    Ambiguous,
    /// No sequence of legal moves within reach explains the board.
    Lost,
}

impl SyncState {
    /// The name used in JSON and on the dashboard.
    pub fn as_str(self) -> &'static str {
        match self {
            SyncState::Ok => "ok",
            SyncState::Searching => "searching",
            SyncState::Ambiguous => "ambiguous",
            SyncState::Lost => "lost",
        }
    }
}

impl fmt::Display for SyncState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What the board shows, as the search must reach it: the occupied squares,
/// and the piece on those squares whose identity the board reported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    occupied: Bitboard,
    pieces: [Option<Piece>; 64],
}

impl Target {
    /// A board that reports occupancy only.
    pub fn occupancy(occupied: Bitboard) -> Target {
        Target {
            occupied,
            pieces: [None; 64],
        }
    }

    /// A board that identifies every piece (a full dump of an identity
    /// board).
    pub fn identity(board: &Board) -> Target {
        let mut pieces = [None; 64];
        for (sq, piece) in board {
            pieces[sq.to_usize()] = Some(piece);
        }
        Target {
            occupied: board.occupied(),
            pieces,
        }
    }

    /// What the sensors show now.
    pub fn sensed(sensed: &SensedBoard) -> Target {
        let occupied = sensed.occupied();
        let mut pieces = [None; 64];
        for sq in occupied {
            pieces[sq.to_usize()] = sensed.piece_at(sq);
        }
        Target { occupied, pieces }
    }

    /// The occupied squares.
    pub fn occupied(&self) -> Bitboard {
        self.occupied
    }

    /// Whether `board` shows this: the same occupancy and every identified
    /// piece where it is reported.
    pub fn matches(&self, board: &Board) -> bool {
        board.occupied() == self.occupied
            && self
                .occupied
                .into_iter()
                .all(|sq| self.pieces[sq.to_usize()].is_none_or(|p| board.piece_at(sq) == Some(p)))
    }

    fn fully_identified(&self) -> bool {
        self.occupied
            .into_iter()
            .all(|sq| self.pieces[sq.to_usize()].is_some())
    }
}

/// How far and how long the search may go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// The longest sequence tried.
    pub max_plies: usize,
    /// Nodes visited before the search gives up for now.
    pub budget: u64,
    /// Candidates collected before the search stops counting them.
    pub max_candidates: usize,
    /// Squares on which a capture could have happened unseen. An occupancy
    /// board shows a capture only as a square emptied and refilled: where
    /// nobody saw that, a piece in the hand looks the same as a capture, so
    /// such boards pass the squares that were seen changing.
    pub capture_squares: Bitboard,
    /// The shortest sequence tried: a clock that shows this many moves
    /// completed (one press each, Art. 6.2.1) rules out shorter ones.
    pub min_plies: usize,
    /// Squares every move must keep to (all it empties and fills): after a
    /// dump, a board reporting square by square shows each change, so the
    /// moves made since change only squares reported since.
    pub moves_within: Bitboard,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_plies: 8,
            budget: 400_000,
            max_candidates: 16,
            capture_squares: Bitboard::FULL,
            min_plies: 1,
            moves_within: Bitboard::FULL,
        }
    }
}

impl Limits {
    /// The limits for a dump after a reconnection: the position after any
    /// number of unseen plies, read once per outage, so it may cost ten
    /// times a snapshot's search (seven plies of a middlegame need more
    /// than a snapshot's budget). Over this budget the engine waits
    /// (`sync: searching`), never accuses.
    pub fn dump() -> Limits {
        Limits {
            budget: 4_000_000,
            ..Limits::default()
        }
    }
}

/// What the search found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resync {
    /// Exactly one shortest sequence explains the board.
    Unique(Vec<Move>),
    /// Several shortest sequences do (all of them, up to the cap; `more`
    /// when the cap was reached).
    Candidates {
        /// The sequences found, in the order of the legal move generator.
        lines: Vec<Vec<Move>>,
        /// Whether there may be more than these.
        more: bool,
    },
    /// Nothing within `max_plies` explains the board.
    None,
    /// The budget ran out at this depth with nothing shorter found.
    OverBudget {
        /// The depth that was being searched.
        plies: usize,
    },
}

impl Resync {
    /// The candidate sequences: one when unique, none when nothing was found.
    pub fn lines(&self) -> &[Vec<Move>] {
        match self {
            Resync::Unique(line) => std::slice::from_ref(line),
            Resync::Candidates { lines, .. } => lines,
            Resync::None | Resync::OverBudget { .. } => &[],
        }
    }
}

/// Finds the shortest sequences of legal moves from `pos` (at least one ply,
/// and at least `limits.min_plies`) after which the board shows `target`.
pub fn resync(pos: &Chess, target: &Target, limits: &Limits) -> Resync {
    resync_counted(pos, target, limits).0
}

/// [`resync`], also returning the nodes it visited (for benchmarks and
/// budgets across calls).
pub fn resync_counted(pos: &Chess, target: &Target, limits: &Limits) -> (Resync, u64) {
    let mut search = Search {
        target,
        limits,
        fully_identified: target.fully_identified(),
        nodes: 0,
        over: false,
        dead: HashSet::new(),
        found: Vec::new(),
    };
    let mut path = Vec::with_capacity(limits.max_plies);
    for plies in limits.min_plies.max(1)..=limits.max_plies {
        search.dfs(pos, plies, &mut path);
        if search.over && search.found.is_empty() {
            return (Resync::OverBudget { plies }, search.nodes);
        }
        if !search.found.is_empty() {
            let more = search.found.len() >= limits.max_candidates || search.over;
            let mut lines = std::mem::take(&mut search.found);
            let answer = if lines.len() == 1 && !more {
                Resync::Unique(lines.pop().expect("one line"))
            } else {
                Resync::Candidates { lines, more }
            };
            return (answer, search.nodes);
        }
    }
    (Resync::None, search.nodes)
}

struct Search<'a> {
    target: &'a Target,
    limits: &'a Limits,
    fully_identified: bool,
    nodes: u64,
    over: bool,
    /// (Zobrist hash, plies left) of sub-searches that found nothing.
    dead: HashSet<(u64, usize)>,
    found: Vec<Vec<Move>>,
}

impl Search<'_> {
    /// Searches the sequences of exactly `left` plies from `pos`; returns
    /// whether any was found.
    fn dfs(&mut self, pos: &Chess, left: usize, path: &mut Vec<Move>) -> bool {
        if self.over || self.found.len() >= self.limits.max_candidates {
            return false;
        }
        if self.nodes >= self.limits.budget {
            self.over = true;
            return false;
        }
        self.nodes += 1;
        if left == 0 {
            if self.target.matches(pos.board()) {
                self.found.push(path.clone());
                return true;
            }
            return false;
        }
        if !self.reachable(pos, left) {
            return false;
        }
        let key = (pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0, left);
        if self.dead.contains(&key) {
            return false;
        }
        let mut any = false;
        for m in pos.legal_moves() {
            if !self.admits(&m, pos.turn()) {
                continue;
            }
            let mut next = pos.clone();
            next.play_unchecked(m);
            path.push(m);
            any |= self.dfs(&next, left - 1, path);
            path.pop();
            if self.over {
                return any;
            }
        }
        if !any {
            self.dead.insert(key);
        }
        any
    }

    /// Moves the board could not show: a capture where none could have gone
    /// unseen, a move changing a square outside `moves_within`, a promotion to another piece than a queen where the board
    /// does not identify the new piece (read as a queen, as elsewhere). A
    /// board that identifies every piece shows the new piece wherever it
    /// went on to, so there an underpromotion is as visible as any move.
    fn admits(&self, m: &Move, turn: Color) -> bool {
        if m.is_capture() && !self.limits.capture_squares.contains(m.to()) {
            return false;
        }
        if self.limits.moves_within != Bitboard::FULL
            && !crate::matcher::move_squares(*m, turn).is_subset(self.limits.moves_within)
        {
            return false;
        }
        match m.promotion() {
            Some(Role::Queen) | None => true,
            Some(_) => self.fully_identified || self.target.pieces[m.to().to_usize()].is_some(),
        }
    }

    /// Whether `left` plies can still turn `pos` into the target (a lower
    /// bound on the moves each side needs; never rules out a real answer).
    fn reachable(&self, pos: &Chess, left: usize) -> bool {
        let board = pos.board();
        let target = self.target;
        let now = board.occupied().count();
        let then = target.occupied.count();
        if then > now || now - then > left {
            return false;
        }
        let mut moves = ByColor::<usize>::default();
        moves[pos.turn()] = left.div_ceil(2);
        moves[!pos.turn()] = left / 2;
        let castle = ByColor::new_with(|c| {
            usize::from(
                pos.castles().has(c, CastlingSide::KingSide)
                    || pos.castles().has(c, CastlingSide::QueenSide),
            )
        });
        // Squares to fill: with an identified piece of a side, or occupied
        // with an unknown piece where the board now has none.
        let mut place = ByColor::<usize>::default();
        let mut fill_unknown = 0;
        for sq in target.occupied {
            match target.pieces[sq.to_usize()] {
                Some(p) if board.piece_at(sq) != Some(p) => place[p.color] += 1,
                None if !board.occupied().contains(sq) => fill_unknown += 1,
                _ => {}
            }
        }
        // Squares to empty, per side owning the piece there.
        let mut vacate = ByColor::<usize>::default();
        let mut vacate_pawns = ByColor::<usize>::default();
        for sq in board.occupied() & !target.occupied {
            if let Some(p) = board.piece_at(sq) {
                vacate[p.color] += 1;
                if p.role == Role::Pawn {
                    vacate_pawns[p.color] += 1;
                }
            }
        }
        for c in Color::ALL {
            if place[c] > moves[c] + castle[c] {
                return false;
            }
        }
        // A piece that must go is moved away, or taken and the taker moved
        // on: either way one ply per square (castling and en passant two).
        let castles = castle.white + castle.black;
        let by_ep = (vacate_pawns.white + vacate_pawns.black).min(left);
        if vacate.white + vacate.black > left + castles + by_ep {
            return false;
        }
        if place.white + place.black + fill_unknown > left + castles {
            return false;
        }
        if self.fully_identified {
            // Every piece of a side missing from the dump was captured by
            // the other side.
            for c in Color::ALL {
                let have = board.by_color(c).count();
                let want = target
                    .occupied
                    .into_iter()
                    .filter(|sq| target.pieces[sq.to_usize()].is_some_and(|p| p.color == c))
                    .count();
                if want > have || have - want > moves[!c] {
                    return false;
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{CastlingMode, fen::Fen, san::San, uci::UciMove};

    fn setup(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap()
    }

    fn play(pos: &Chess, sans: &str) -> (Chess, Vec<Move>) {
        let mut p = pos.clone();
        let mut moves = Vec::new();
        for san in sans.split_whitespace() {
            let m = san.parse::<San>().unwrap().to_move(&p).unwrap();
            moves.push(m);
            p.play_unchecked(m);
        }
        (p, moves)
    }

    /// Occupancy from the notation: `x` occupied, digits empty.
    fn occupancy(diagram: &str) -> Bitboard {
        let fen = diagram.replace('x', "P");
        fen.parse::<Board>().unwrap().occupied()
    }

    #[test]
    fn qh5_d5_on_an_occupancy_scan_is_the_only_answer() {
        // The minimal case: d5 vacated by the queen and refilled by
        // the pawn in one skipped scan.
        let pos = setup("r3kbnr/ppp1pppp/2n5/3q4/3P2b1/2N2N2/PPP2PPP/R1BQKB1R b KQkq - 3 5");
        let target = Target::occupancy(occupancy(
            "x3xxxx/xxx1xxxx/2x5/3x3x/6x1/2x2x2/xxx2xxx/x1xxxx1x",
        ));
        let (_, expected) = play(&pos, "Qh5 d5");
        let limits = Limits {
            max_plies: 4,
            capture_squares: Bitboard::EMPTY,
            ..Limits::default()
        };
        assert_eq!(resync(&pos, &target, &limits), Resync::Unique(expected));
    }

    #[test]
    fn capture_recapture_on_one_square_with_identities() {
        // dxe5 dxe5: e5 shows a black pawn again, d4 and d6 empty.
        let pos = setup("rnbqkbnr/ppp2ppp/3p4/4p3/3PP3/8/PPP2PPP/RNBQKBNR w KQkq - 0 3");
        let (after, expected) = play(&pos, "dxe5 dxe5");
        let target = Target::identity(after.board());
        assert_eq!(
            resync(&pos, &target, &Limits::default()),
            Resync::Unique(expected)
        );
    }

    #[test]
    fn knight_takes_rook_recaptured() {
        let pos = setup("r4rk1/ppp2pp1/6Np/8/8/8/PPP2PPP/4K3 w - - 0 1");
        let (after, expected) = play(&pos, "Nxf8 Rxf8");
        let target = Target::identity(after.board());
        assert_eq!(
            resync(&pos, &target, &Limits::default()),
            Resync::Unique(expected)
        );
        // Taken back with the king instead: the dump tells them apart.
        let (after, expected) = play(&pos, "Nxf8 Kxf8");
        let target = Target::identity(after.board());
        assert_eq!(
            resync(&pos, &target, &Limits::default()),
            Resync::Unique(expected)
        );
    }

    #[test]
    fn transposed_move_orders_are_all_candidates() {
        let pos = Chess::default();
        let (after, _) = play(&pos, "e4 e5 Nf3 Nc6");
        let target = Target::identity(after.board());
        let Resync::Candidates { lines, more } = resync(&pos, &target, &Limits::default()) else {
            panic!("several move orders lead there");
        };
        // e4/Nf3 in either order, e5/Nc6 in either order.
        assert_eq!(lines.len(), 4);
        assert!(!more);
    }

    #[test]
    fn an_unreachable_board_is_none() {
        let pos = Chess::default();
        let mut board = pos.board().clone();
        board.discard_piece_at(shakmaty::Square::D1);
        let limits = Limits {
            max_plies: 3,
            ..Limits::default()
        };
        assert_eq!(
            resync(&pos, &Target::identity(&board), &limits),
            Resync::None
        );
    }

    #[test]
    fn the_budget_is_counted_in_nodes() {
        let pos = Chess::default();
        let mut board = pos.board().clone();
        board.discard_piece_at(shakmaty::Square::D1);
        let limits = Limits {
            budget: 50,
            max_plies: 8,
            ..Limits::default()
        };
        let (answer, nodes) = resync_counted(&pos, &Target::occupancy(board.occupied()), &limits);
        assert!(matches!(answer, Resync::OverBudget { .. }), "{answer:?}");
        assert_eq!(nodes, 50);
    }

    #[test]
    fn an_unseen_capture_is_not_read_on_occupancy() {
        // A knight lifted from d4 looks like Nxe6 or Nxf5 without the
        // captured square having been seen: no answer at all.
        let pos = setup("4k3/8/4p3/5p2/3N4/8/8/4K3 w - - 0 1");
        let target = Target::occupancy(pos.board().occupied().without(shakmaty::Square::D4));
        let limits = Limits {
            max_plies: 2,
            capture_squares: Bitboard::EMPTY,
            ..Limits::default()
        };
        assert_eq!(resync(&pos, &target, &limits), Resync::None);
        let seen = Limits {
            capture_squares: Bitboard::from_square(shakmaty::Square::E6),
            ..limits
        };
        let m = "d4e6".parse::<UciMove>().unwrap().to_move(&pos).unwrap();
        assert_eq!(resync(&pos, &target, &seen), Resync::Unique(vec![m]));
    }

    #[test]
    fn sync_state_names() {
        assert_eq!(
            serde_json::to_string(&SyncState::Ambiguous).unwrap(),
            "\"ambiguous\""
        );
        assert_eq!(SyncState::Lost.to_string(), "lost");
    }
}

#[cfg(test)]
mod properties {
    use super::*;
    use proptest::prelude::*;
    use std::sync::OnceLock;

    /// Positions from the real games of the corpus (every fifth ply), or the
    /// start position alone when the corpus is absent.
    fn corpus_positions() -> &'static [Chess] {
        static POSITIONS: OnceLock<Vec<Chess>> = OnceLock::new();
        POSITIONS.get_or_init(|| {
            let mut out = vec![Chess::default()];
            let Some(path) = crate::test_support::shared("corpus/lichess-sample.pgn") else {
                return out;
            };
            let file = std::fs::File::open(path).expect("corpus readable");
            for game in crate::pgn::read_games(file).expect("corpus parses") {
                let mut pos = game.start.clone();
                for (i, m) in game.moves.iter().enumerate() {
                    if i % 5 == 0 {
                        out.push(pos.clone());
                    }
                    pos.play_unchecked(*m);
                }
            }
            out
        })
    }

    fn random_line(start: &Chess, choices: &[u16]) -> (Chess, Vec<Move>) {
        let mut pos = start.clone();
        let mut line = Vec::new();
        for &c in choices {
            let legal = pos.legal_moves();
            if legal.is_empty() {
                break;
            }
            let m = legal[usize::from(c) % legal.len()];
            pos.play_unchecked(m);
            line.push(m);
        }
        (pos, line)
    }

    /// The board that `line` leads to is reached by every candidate, and the
    /// true line (or one ending in the same position) is among them.
    fn check(start: &Chess, end: &Chess, line: &[Move], target: &Target, limits: &Limits) {
        let answer = resync(start, target, limits);
        if matches!(answer, Resync::OverBudget { .. }) {
            return;
        }
        let lines = answer.lines();
        assert!(!lines.is_empty(), "{answer:?} for {line:?}");
        for cand in lines {
            assert!(cand.len() <= line.len());
            let mut pos = start.clone();
            for &m in cand {
                assert!(pos.is_legal(m));
                pos.play_unchecked(m);
            }
            assert!(target.matches(pos.board()));
        }
        if let Some(first) = lines.first()
            && first.len() == line.len()
            && !matches!(answer, Resync::Candidates { more: true, .. })
        {
            let key = end.zobrist_hash::<Zobrist64>(EnPassantMode::Legal);
            let reached = lines.iter().any(|cand| {
                let mut pos = start.clone();
                cand.iter().for_each(|&m| pos.play_unchecked(m));
                pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal) == key
            });
            let underpromotes = line
                .iter()
                .any(|m| m.promotion().is_some_and(|r| r != Role::Queen));
            assert!(reached || underpromotes, "{line:?} not among {lines:?}");
        }
    }

    /// A line the search once found no explanation for although it was not
    /// over budget (found by the properties below): the white pawn takes on
    /// f8 promoting to a knight, which goes on to d7 and e5. The search
    /// admitted an underpromotion only where the dump identified a piece
    /// on the promotion square, so a knight that moved on was never tried.
    #[test]
    fn identity_outage_with_an_underpromoted_knight_that_moved_on() {
        let positions = corpus_positions();
        let start = &positions[9744743327040884091 % positions.len()];
        let (end, line) = random_line(start, &[38241, 21066, 11008, 55168, 45, 42136, 10105]);
        check(
            start,
            &end,
            &line,
            &Target::identity(end.board()),
            &Limits::default(),
        );
    }

    proptest! {
        // A fixed seed: CI runs the same cases every time, so a red run
        // always names a real, reproducible miss (the one above was found
        // with random seeds and is kept as its own test).
        #![proptest_config(ProptestConfig {
            cases: 64,
            rng_seed: proptest::test_runner::RngSeed::Fixed(0x0eb0_a4d1_0000_0010),
            ..ProptestConfig::default()
        })]

        /// An outage of up to 8 plies on an identity board: the dump is
        /// explained, by the true line or one as short.
        #[test]
        fn identity_dump_after_an_outage(
            pick in any::<usize>(),
            choices in proptest::collection::vec(any::<u16>(), 1..=8),
        ) {
            let positions = corpus_positions();
            let start = &positions[pick % positions.len()];
            let (end, line) = random_line(start, &choices);
            prop_assume!(!line.is_empty());
            check(start, &end, &line, &Target::identity(end.board()), &Limits::default());
        }

        /// Occupancy scans skipping up to 4 plies, captures seen.
        #[test]
        fn occupancy_scan_skipping_plies(
            pick in any::<usize>(),
            choices in proptest::collection::vec(any::<u16>(), 1..=4),
        ) {
            let positions = corpus_positions();
            let start = &positions[pick % positions.len()];
            let (end, line) = random_line(start, &choices);
            prop_assume!(!line.is_empty());
            let limits = Limits { max_plies: 4, ..Limits::default() };
            check(start, &end, &line, &Target::occupancy(end.board().occupied()), &limits);
        }
    }
}
