//! Board sessions made from PGN games, the way people really play them.
//!
//! This is the test workhorse: every game of a PGN file becomes a stream of
//! board events (lifts, places, scans, clock presses) with human timing and,
//! on request, the artefacts real boards produce: sensor blips, slow hands,
//! boards that only report full scans and skip positions, cable outages,
//! boards turned round.
//!
//! It never produces a stream the engine could only guess at. A stream is
//! *decidable* when:
//! - every stretch of plies between two positions the board shows (a scan
//!   that skipped positions, a dump after an outage) is explained by exactly
//!   one sequence of legal moves of that many plies, by none shorter, and
//!   does not show a position the game already had (see `decide`);
//! - on an occupancy board, a capture the scans show only by its emptied
//!   square is the only capture that piece could make, and no other move of
//!   that piece, with the opponent taking it there, leads to what the board
//!   shows next (12.Qxa7 Qd4 and 12.Qd4 Qxd4 look alike, the scan between
//!   them too); an underpromotion is seen being made (the player names the
//!   piece);
//! - everything else the board shows is a move in progress (a piece in the
//!   hand, a captured piece taken off, a king on g1 before the rook) or a
//!   blip shorter than any settle time (5–60 ms; on a scan board a blip one
//!   scan caught and the next undid), never a position legal moves lead to:
//!   on an occupancy scan board no piece that could capture is held in the
//!   hand or blipped, since a scan would read it as that capture, and no
//!   scan that caught a blip shows what other moves, or a capture being
//!   made on another line, would show.
//!
//! Where skipping would break this, the simulated board scans in time (or
//! the outage is shorter).

mod decide;
pub mod physics;
mod render;
mod seeds;
mod styles;

pub use seeds::{SeedRow, compact_table, fresh_seeds, seeds_table, worst};
pub(crate) use styles::reading_config;
pub use styles::{
    STYLES, Style, Tally, Variant, differences, measure, measure_every, session, table,
};

use std::ops::Range;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::{
    Bitboard, Board, CastlingSide, Chess, Color, Move, Outcome, Piece, Position, Role, Square,
};

use self::render::{GameMark, Mark, Outage};
use crate::{
    event::{BoardEvent, Millis, Scan, Seconds, TimedEvent},
    matcher::move_squares,
    pgn::ImportedGame,
};

/// How much real-board noise to add.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Noise {
    /// One clean event sequence per move, regular timing.
    None,
    /// Random capture orders, castling and promotion styles, sliding pieces
    /// with flicker on the squares they pass, wobbles, human delays.
    #[default]
    Human,
    /// Human, plus flicker on unrelated squares and scan-style `board`
    /// snapshots that skip intermediate states (sometimes a whole ply).
    Rough,
}

impl std::str::FromStr for Noise {
    type Err = String;

    fn from_str(s: &str) -> Result<Noise, String> {
        match s {
            "none" => Ok(Noise::None),
            "human" => Ok(Noise::Human),
            "rough" => Ok(Noise::Rough),
            other => Err(format!(
                "unknown noise '{other}': expected none, human or rough"
            )),
        }
    }
}

/// What to simulate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SimOptions {
    /// The random seed: the same seed gives the same session.
    pub seed: u64,
    /// An occupancy-only board: no piece letters (except an underpromoted
    /// piece, which such boards ask the player to name).
    pub occupancy: bool,
    /// A clock: the mover presses it after each move, with time reports.
    pub clock: bool,
    /// How much noise.
    pub noise: Noise,
    /// What makes the board hostile: scans, blips, slow hands, outages,
    /// a board turned round.
    pub hostile: Hostile,
}

/// The artefacts of real halls, each on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Hostile {
    /// A board that reports only full scans, one every this many
    /// milliseconds (100–1000 on real boards), skipping what happens in
    /// between.
    pub scan_ms: Option<Millis>,
    /// Sensor blips of 5–60 ms on any square, while the players think and
    /// right after a move.
    pub blips: bool,
    /// Human pace: castling with the rook put down up to 5 s after the
    /// king, pieces held in the hand up to 20 s.
    pub slow_hands: bool,
    /// Cable outages of 1–10 plies, each ending with the board's dump of
    /// its position (and the clock's report).
    pub outages: bool,
    /// The board is turned round (White's pieces on the a8–h8 side); it
    /// reports its full position at the start of each game.
    pub rotated: bool,
}

/// Simulates a board session playing `games` one after the other.
pub fn simulate(games: &[ImportedGame], opts: &SimOptions) -> Vec<TimedEvent> {
    let mut sim = Simulator {
        rng: ChaCha8Rng::seed_from_u64(opts.seed),
        opts: *opts,
        t: 0,
        out: Vec::new(),
        marks: Vec::new(),
        games: Vec::new(),
        outages: Vec::new(),
        blips: Vec::new(),
    };
    for (i, game) in games.iter().enumerate() {
        sim.game(game, i == 0);
    }
    let timeline = render::Timeline {
        marks: &sim.marks,
        games: &sim.games,
        outages: &sim.outages,
        blips: &sim.blips,
    };
    render::render(sim.out, &timeline, opts)
}

struct Simulator {
    rng: ChaCha8Rng,
    opts: SimOptions,
    t: Millis,
    /// What the hands did (before [`render`] turns it into reports).
    out: Vec<TimedEvent>,
    marks: Vec<Mark>,
    games: Vec<GameMark>,
    outages: Vec<Outage>,
    /// When each sensor blip was on the board.
    blips: Vec<Range<Millis>>,
}

impl Simulator {
    fn emit(&mut self, event: BoardEvent) {
        self.out.push(TimedEvent { at: self.t, event });
    }

    fn human(&self) -> bool {
        self.opts.noise != Noise::None
    }

    /// Time for a hand movement between two events of one move.
    fn hand(&mut self) {
        self.t += if self.human() {
            self.rng.random_range(150..600)
        } else {
            250
        };
    }

    /// A fast step, shorter than any settle time: a piece passing a square.
    fn flick(&mut self) {
        self.t += self.rng.random_range(15..45);
    }

    fn chance(&mut self, p: f64) -> bool {
        self.human() && self.rng.random_bool(p)
    }

    fn sensed_piece(&self, piece: Piece) -> Option<Piece> {
        (!self.opts.occupancy).then_some(piece)
    }

    fn scan(&self, board: &Board) -> Scan {
        Scan::from_board(board, !self.opts.occupancy)
    }

    /// The tags and the set-up of a game; returns when it started.
    fn open_game(&mut self, game: &ImportedGame, first: bool) -> Millis {
        if !first {
            self.t += 3000;
        }
        let start_time = self.t;
        for (name, value) in &game.tags {
            if !matches!(name.as_str(), "Result" | "SetUp" | "FEN") {
                self.emit(BoardEvent::Tag(name.clone(), value.clone()));
            }
        }
        match &game.setup {
            Some(fen) => self.emit(BoardEvent::Setup(Box::new(fen.clone()))),
            None if !first => {
                let scan = self.scan(&Board::default());
                self.emit(BoardEvent::Board(Box::new(scan)));
            }
            None => {}
        }
        if self.opts.hostile.rotated && (first || game.setup.is_some()) {
            // A board says what stands on it when the host connects and
            // after the pieces are set up.
            let scan = self.scan(game.start.board());
            self.emit(BoardEvent::Board(Box::new(scan)));
        }
        start_time
    }

    fn game(&mut self, game: &ImportedGame, first: bool) {
        let start_time = self.open_game(game, first);
        let first_mark = self.marks.len();
        let mut clocks = Clocks::new(game);
        let mut pos = game.start.clone();
        let mut history: Vec<Chess> = Vec::new();
        let mut i = 0;
        while i < game.moves.len() {
            let m = game.moves[i];
            let start = self.out.len();
            self.think(&pos);
            let next = game.moves.get(i + 1).copied();
            let two = next.filter(|&n| {
                self.opts.noise == Noise::Rough
                    && self.rng.random_bool(0.15)
                    && self.two_ply_decidable(&history, &pos, m, n)
            });
            if let Some(n) = two {
                // A scanning board missed the position between two plies;
                // the clock presses came before the scan that shows them.
                let mut after = pos.clone();
                after.play_unchecked(m);
                let mut after2 = after.clone();
                after2.play_unchecked(n);
                self.hand();
                if self.opts.clock {
                    self.press(&mut clocks, pos.turn(), i);
                    self.t += self.rng.random_range(400..2000);
                    self.press(&mut clocks, after.turn(), i + 1);
                }
                self.hand();
                let move_from = self.out.len();
                let scan = self.scan(after2.board());
                self.emit(BoardEvent::Board(Box::new(scan)));
                self.mark(start..start, start, &pos, m);
                self.mark(start..self.out.len(), move_from, &after, n);
                history.push(pos);
                history.push(after);
                pos = after2;
                i += 2;
                continue;
            }
            let scanned = self.opts.noise == Noise::Rough
                && self.rng.random_bool(0.2)
                && !(self.opts.occupancy && m.is_promotion());
            let move_from = self.out.len();
            if scanned {
                self.scan_move(&pos, m);
            } else {
                self.play_move(&pos, m);
            }
            let move_to = self.out.len();
            if self.opts.hostile.blips && self.rng.random_bool(0.2) {
                // A blip right after the move, before the clock.
                self.t += self.rng.random_range(20..300);
                let mut after = pos.clone();
                after.play_unchecked(m);
                self.blip(&after);
            }
            if self.opts.clock {
                self.t += self.rng.random_range(100..500);
                self.press(&mut clocks, pos.turn(), i);
            }
            self.mark_move(start, move_from..move_to, &pos, m);
            history.push(pos.clone());
            pos.play_unchecked(m);
            i += 1;
        }
        let plies = first_mark..self.marks.len();
        if self.opts.hostile.outages && !plies.is_empty() && self.rng.random_bool(0.7) {
            self.outage(game, plies.clone());
        }
        self.games.push(GameMark {
            plies,
            start: game.start.clone(),
            start_time,
        });
        self.end(&pos, game.result);
    }

    /// Time the player thinks, with sensor flicker on unrelated squares on a
    /// rough board.
    fn think(&mut self, pos: &Chess) {
        self.t += if self.human() {
            self.rng.random_range(400..3000)
        } else {
            500
        };
        if self.opts.noise == Noise::Rough && self.rng.random_bool(0.3) {
            // Unrelated: no legal move of the player to move involves the
            // square, and no piece of his stands there (a flicker there would
            // look like a touch).
            let mut involved = pos.us();
            for m in pos.legal_moves() {
                involved |= move_squares(m, pos.turn());
            }
            let free: Vec<Square> = (!involved).into_iter().collect();
            if !free.is_empty() {
                let sq = free[self.rng.random_range(0..free.len())];
                match pos.board().piece_at(sq) {
                    Some(piece) => {
                        self.emit(BoardEvent::Lift(sq));
                        self.flick();
                        let p = self.sensed_piece(piece);
                        self.emit(BoardEvent::Place(sq, p));
                    }
                    None => {
                        self.emit(BoardEvent::Place(sq, None));
                        self.flick();
                        self.emit(BoardEvent::Lift(sq));
                    }
                }
                self.t += self.rng.random_range(100..400);
            }
        }
        if self.opts.hostile.blips && self.rng.random_bool(0.3) {
            self.blip(pos);
            self.t += self.rng.random_range(100..400);
        }
    }

    fn press(&mut self, clocks: &mut Clocks, mover: Color, ply_index: usize) {
        self.emit(BoardEvent::Press(mover));
        let (white, black) = clocks.after(ply_index, mover, &mut self.rng);
        self.t += self.rng.random_range(0..40);
        self.emit(BoardEvent::Clock(white, black));
    }
}

/// A move as a hand makes it on a board that reports each piece lifted and
/// put down.
impl Simulator {
    /// The move as lifts and places.
    fn play_move(&mut self, pos: &Chess, m: Move) {
        let last_place = match m {
            Move::Normal {
                role,
                from,
                capture,
                to,
                promotion: None,
            } => Some(self.play_normal(pos, role, from, to, capture.is_some())),
            Move::Normal {
                from,
                capture,
                to,
                promotion: Some(promoted),
                ..
            } => self.play_promotion(pos.turn(), from, to, promoted, capture.is_some()),
            Move::EnPassant { from, to } => self.play_en_passant(pos.turn(), from, to),
            Move::Castle { king, rook } => {
                let side = m.castling_side().expect("castle has a side");
                Some(self.play_castle(pos.turn(), king, rook, side))
            }
            Move::Put { .. } => None,
        };
        // On an occupancy scan board a caught straightening could read as
        // a capture by the piece.
        let scanned_occupancy = self.opts.hostile.scan_ms.is_some() && self.opts.occupancy;
        if let Some((sq, piece)) = last_place
            && !scanned_occupancy
            && self.chance(0.15)
        {
            // The player straightens the piece he just put down.
            self.flick();
            self.emit(BoardEvent::Lift(sq));
            self.flick();
            self.emit(BoardEvent::Place(sq, piece));
        }
    }

    /// A move of one piece, capturing or not; returns the last square a
    /// piece was put on.
    fn play_normal(
        &mut self,
        pos: &Chess,
        role: Role,
        from: Square,
        to: Square,
        capture: bool,
    ) -> (Square, Option<Piece>) {
        let piece = self.sensed_piece(role.of(pos.turn()));
        // On an occupancy scan board the captured piece goes first: the
        // capturing piece in the hand would read as a capture already made.
        let scanned_occupancy = self.opts.hostile.scan_ms.is_some() && self.opts.occupancy;
        let captured_first =
            capture && (scanned_occupancy || !self.human() || self.rng.random_bool(0.5));
        if captured_first {
            self.emit(BoardEvent::Lift(to));
            self.hand();
        }
        self.emit(BoardEvent::Lift(from));
        self.slide(pos, from, to, role, piece);
        self.in_hand(pos, from);
        if capture && !captured_first {
            self.emit(BoardEvent::Lift(to));
            self.t += self.rng.random_range(100..400);
        }
        self.emit(BoardEvent::Place(to, piece));
        (to, piece)
    }

    /// A promotion, in one of the ways players make it.
    fn play_promotion(
        &mut self,
        turn: Color,
        from: Square,
        to: Square,
        promoted: Role,
        capture: bool,
    ) -> Option<(Square, Option<Piece>)> {
        let pawn = self.sensed_piece(turn.pawn());
        // An occupancy board asks the player to name an underpromoted piece.
        let new = if promoted == Role::Queen {
            self.sensed_piece(promoted.of(turn))
        } else {
            Some(promoted.of(turn))
        };
        if capture {
            self.emit(BoardEvent::Lift(to));
            self.hand();
        }
        let style = if self.human() {
            self.rng.random_range(0..3)
        } else {
            1
        };
        match style {
            0 => {
                // The pawn touches the last rank, then is swapped.
                self.emit(BoardEvent::Lift(from));
                self.hand();
                self.emit(BoardEvent::Place(to, pawn));
                self.hand();
                self.emit(BoardEvent::Lift(to));
                self.hand();
                self.emit(BoardEvent::Place(to, new));
                Some((to, new))
            }
            1 => {
                // The pawn goes off the board, the new piece goes on.
                self.emit(BoardEvent::Lift(from));
                self.hand();
                self.emit(BoardEvent::Place(to, new));
                Some((to, new))
            }
            _ => {
                // The new piece first, then the pawn is removed (Art. 4.6.2).
                self.emit(BoardEvent::Place(to, new));
                self.hand();
                self.emit(BoardEvent::Lift(from));
                None
            }
        }
    }

    fn play_en_passant(
        &mut self,
        turn: Color,
        from: Square,
        to: Square,
    ) -> Option<(Square, Option<Piece>)> {
        let pawn = self.sensed_piece(turn.pawn());
        let captured = Square::from_coords(to.file(), from.rank());
        if self.human() && self.rng.random_bool(0.5) {
            self.emit(BoardEvent::Lift(captured));
            self.hand();
            self.emit(BoardEvent::Lift(from));
            self.hand();
            self.emit(BoardEvent::Place(to, pawn));
            Some((to, pawn))
        } else {
            self.emit(BoardEvent::Lift(from));
            self.hand();
            self.emit(BoardEvent::Place(to, pawn));
            self.hand();
            self.emit(BoardEvent::Lift(captured));
            None
        }
    }

    /// Castling: king first, both lifted, or the rook put down first.
    fn play_castle(
        &mut self,
        turn: Color,
        king: Square,
        rook: Square,
        side: CastlingSide,
    ) -> (Square, Option<Piece>) {
        let (king_to, rook_to) = (side.king_to(turn), side.rook_to(turn));
        let k = self.sensed_piece(turn.king());
        let r = self.sensed_piece(turn.rook());
        let style = if self.human() {
            self.rng.random_range(0..3)
        } else {
            0
        };
        // Each way ends with a piece put down: the last.
        let last = match style {
            0 => {
                self.emit(BoardEvent::Lift(king));
                self.hand();
                self.emit(BoardEvent::Place(king_to, k));
                if self.opts.hostile.slow_hands && self.rng.random_bool(0.5) {
                    // The rook follows slowly: the move is still being made.
                    self.t += self.rng.random_range(1000..=5000);
                } else {
                    self.hand();
                }
                self.emit(BoardEvent::Lift(rook));
                (rook_to, r)
            }
            1 => {
                self.emit(BoardEvent::Lift(king));
                self.hand();
                self.emit(BoardEvent::Lift(rook));
                self.hand();
                self.emit(BoardEvent::Place(king_to, k));
                (rook_to, r)
            }
            _ => {
                self.emit(BoardEvent::Lift(king));
                self.hand();
                self.emit(BoardEvent::Lift(rook));
                self.hand();
                self.emit(BoardEvent::Place(rook_to, r));
                (king_to, k)
            }
        };
        self.hand();
        self.emit(BoardEvent::Place(last.0, last.1));
        last
    }

    /// A sliding piece passes the squares between `from` and `to`, each read
    /// occupied for a moment.
    fn slide(&mut self, pos: &Chess, from: Square, to: Square, role: Role, piece: Option<Piece>) {
        // A scan that caught a sliding piece on its way would show a move
        // released there, which nothing tells from a real one.
        if !matches!(role, Role::Bishop | Role::Rook | Role::Queen)
            || self.opts.hostile.scan_ms.is_some()
            || !self.chance(0.5)
        {
            return;
        }
        let between = shakmaty::attacks::between(from, to);
        if between.is_empty() || pos.board().occupied().intersects(between) {
            return;
        }
        let mut squares: Vec<Square> = between.into_iter().collect();
        if from > to {
            squares.reverse();
        }
        for sq in squares {
            self.flick();
            self.emit(BoardEvent::Place(sq, piece));
            self.flick();
            self.emit(BoardEvent::Lift(sq));
        }
    }

    /// The move as a scanning board sees it: one scan of the result, after a
    /// scan showing the captured piece gone when the board could not tell
    /// the capture otherwise.
    fn scan_move(&mut self, pos: &Chess, m: Move) {
        let mut after = pos.clone();
        after.play_unchecked(m);
        if let Move::Normal {
            capture: Some(_),
            to,
            ..
        } = m
            && self.opts.occupancy
        {
            let mut between = pos.board().clone();
            between.discard_piece_at(to);
            self.hand();
            let scan = self.scan(&between);
            self.emit(BoardEvent::Board(Box::new(scan)));
        }
        self.hand();
        let scan = self.scan(after.board());
        self.emit(BoardEvent::Board(Box::new(scan)));
    }

    /// Whether a scan showing the result of `m` then `n` can be read back
    /// without guessing: every square either move involves reads differently
    /// before and after, exactly one pair of legal moves gives that scan
    /// (whatever squares the others use), no single move does, and it is not
    /// a position the game already had.
    fn two_ply_decidable(&self, history: &[Chess], pos: &Chess, m: Move, n: Move) -> bool {
        if m.is_promotion() || n.is_promotion() {
            return false;
        }
        let identify = !self.opts.occupancy;
        let mut mid = pos.clone();
        mid.play_unchecked(m);
        if mid.is_game_over() {
            return false;
        }
        let mut end = mid.clone();
        end.play_unchecked(n);
        let target = Scan::from_board(end.board(), identify);
        let before = Scan::from_board(pos.board(), identify);
        let changed: Bitboard = Square::ALL
            .into_iter()
            .filter(|&sq| before.get(sq) != target.get(sq))
            .collect();
        let visible = |p: &Chess, mv: Move| move_squares(mv, p.turn()).is_subset(changed);
        if !visible(pos, m) || !visible(&mid, n) {
            return false;
        }
        let reads = |p: &Chess| Scan::from_board(p.board(), identify) == target;
        if history.iter().chain(std::iter::once(pos)).any(&reads) {
            return false;
        }
        let singles = |p: &Chess| {
            p.legal_moves().into_iter().any(|mv| {
                let mut q = p.clone();
                q.play_unchecked(mv);
                reads(&q)
            })
        };
        if singles(pos) || history.last().is_some_and(singles) {
            return false;
        }
        // Other pairs count even if a square they vacate and refill never
        // reads differently: the scan cannot show that it did not happen.
        let mut pairs = 0;
        for a in pos.legal_moves() {
            let mut q = pos.clone();
            q.play_unchecked(a);
            for b in q.legal_moves() {
                let mut r = q.clone();
                r.play_unchecked(b);
                if reads(&r) {
                    pairs += 1;
                }
            }
        }
        pairs == 1
    }

    fn end(&mut self, pos: &Chess, result: Outcome) {
        if pos.is_checkmate() || pos.is_stalemate() {
            return;
        }
        self.t += 1500;
        let event = match result {
            Outcome::Known(shakmaty::KnownOutcome::Decisive { winner }) => {
                BoardEvent::Resign(!winner)
            }
            Outcome::Known(shakmaty::KnownOutcome::Draw) => BoardEvent::Draw,
            Outcome::Unknown => BoardEvent::Result(Outcome::Unknown),
        };
        self.emit(event);
    }
}

/// The artefacts of hostile boards and the marks the renderer needs.
impl Simulator {
    /// Marks a ply whose move is the events `moved` (within the ply's
    /// events from `start` to now).
    fn mark_move(&mut self, start: usize, moved: std::ops::Range<usize>, pos: &Chess, m: Move) {
        self.mark(start..self.out.len(), moved.start, pos, m);
        let last = self.marks.last_mut().expect("just marked");
        last.move_times = self.out[moved.clone()]
            .iter()
            .filter(|e| render::is_physical(&e.event))
            .map(|e| e.at)
            .collect();
        if let (Some(&first), Some(&settled)) = (last.move_times.first(), last.move_times.last()) {
            last.move_start = first;
            last.settled = settled;
        }
    }

    fn mark(&mut self, range: std::ops::Range<usize>, move_from: usize, pos: &Chess, m: Move) {
        let at = self.out.get(move_from).map_or(self.t, |e| e.at);
        let mut after = pos.clone();
        after.play_unchecked(m);
        self.marks.push(Mark {
            range,
            move_start: at,
            settled: at,
            move_times: Vec::new(),
            before: pos.clone(),
            mv: m,
            after,
        });
    }

    /// Cuts the cable for 1–10 plies of the game (fewer where the board's
    /// dump would not tell which moves were played).
    fn outage(&mut self, game: &ImportedGame, plies: std::ops::Range<usize>) {
        let n = plies.len();
        let first = self.rng.random_range(0..n);
        let most = if self.opts.occupancy { 3 } else { 10 };
        let len = self.rng.random_range(1..=most);
        // Two plies a rough board showed by one scan have no position in
        // between: an outage neither starts nor ends between them, or its
        // check would start from a position the board never showed.
        let merged = |k: usize| self.marks[k].range.is_empty();
        let mut index = plies.start + first;
        if index > plies.start && merged(index - 1) {
            index -= 1;
        }
        let mut len = len.min(plies.end - index);
        let earlier: Vec<Chess> = std::iter::once(game.start.clone())
            .chain(
                self.marks[plies.start..index]
                    .iter()
                    .map(|m| m.after.clone()),
            )
            .collect();
        let (from, earlier) = earlier.split_last().expect("the start position");
        while len > 0 {
            if merged(index + len - 1) {
                len -= 1;
                continue;
            }
            let moves: Vec<Move> = self.marks[index..index + len]
                .iter()
                .map(|m| m.mv)
                .collect();
            if decide::decidable(earlier, from, &moves, !self.opts.occupancy) {
                self.outages.push(Outage { first: index, len });
                return;
            }
            len -= 1;
        }
    }

    /// A sensor blip of 5–60 ms on any square: a piece read gone, or an
    /// empty square read occupied, for a moment.
    fn blip(&mut self, pos: &Chess) {
        let sq = Square::new(self.rng.random_range(0..64));
        if self.opts.hostile.scan_ms.is_some() && self.opts.occupancy && self.could_capture(pos, sq)
        {
            // A scan that caught it would read a capture by that piece.
            return;
        }
        let gap = self.rng.random_range(5..=60);
        self.blips.push(self.t..self.t + gap);
        match pos.board().piece_at(sq) {
            Some(piece) => {
                self.emit(BoardEvent::Lift(sq));
                self.t += gap;
                let p = self.sensed_piece(piece);
                self.emit(BoardEvent::Place(sq, p));
            }
            None => {
                self.emit(BoardEvent::Place(sq, None));
                self.t += gap;
                self.emit(BoardEvent::Lift(sq));
            }
        }
    }

    /// Whether the piece on `sq` belongs to the player to move and has a
    /// capture.
    fn could_capture(&self, pos: &Chess, sq: Square) -> bool {
        pos.us().contains(sq)
            && pos
                .legal_moves()
                .iter()
                .any(|m| m.from() == Some(sq) && m.is_capture())
    }

    /// How long the moving piece stays in the hand.
    fn in_hand(&mut self, pos: &Chess, from: Square) {
        let held = self.opts.hostile.slow_hands
            && self.rng.random_bool(0.1)
            && !(self.opts.hostile.scan_ms.is_some()
                && self.opts.occupancy
                && self.could_capture(pos, from));
        if held {
            self.t += self.rng.random_range(2000..=20_000);
        } else {
            self.hand();
        }
    }
}

/// The clock times a simulated clock reports.
struct Clocks {
    /// The times the PGN gives after each move.
    given: Vec<Option<Seconds>>,
    increment: Seconds,
    remaining: [Seconds; 2],
}

impl Clocks {
    fn new(game: &ImportedGame) -> Clocks {
        let (base, increment) = game
            .tags
            .iter()
            .find(|(n, _)| n == "TimeControl")
            .and_then(|(_, v)| {
                let (base, inc) = v.split_once('+').unwrap_or((v.as_str(), "0"));
                Some((base.parse().ok()?, inc.parse().ok()?))
            })
            .unwrap_or((300, 0));
        // Before a player's first move his clock shows the base time, or the
        // first time the PGN gives for him.
        let first = |side: usize| {
            game.clocks
                .iter()
                .skip(side)
                .step_by(2)
                .next()
                .copied()
                .flatten()
                .unwrap_or(base)
        };
        let white_first = game.start.turn() == Color::White;
        let (w, b) = if white_first {
            (first(0), first(1))
        } else {
            (first(1), first(0))
        };
        Clocks {
            given: game.clocks.clone(),
            increment,
            remaining: [w, b],
        }
    }

    fn after(
        &mut self,
        ply_index: usize,
        mover: Color,
        rng: &mut ChaCha8Rng,
    ) -> (Seconds, Seconds) {
        let side = mover.fold_wb(0, 1);
        self.remaining[side] = match self.given.get(ply_index).copied().flatten() {
            Some(t) => t,
            // Invented times never reach 0:00: the game was finished on
            // the board, so the player's flag did not fall (a clock at
            // 0:00 tells the arbiter of a flag, Art. 6.8).
            None => (self.remaining[side] + self.increment)
                .saturating_sub(rng.random_range(1..20))
                .max(1),
        };
        (self.remaining[0], self.remaining[1])
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use shakmaty::{CastlingMode, Chess, Move, Position, fen::Fen, san::San};

    /// The start position's FEN.
    pub(crate) const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

    /// The position `fen` and the moves `sans` played from it.
    pub(crate) fn line(fen: &str, sans: &[&str]) -> (Chess, Vec<Move>) {
        let pos: Chess = fen
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        let mut p = pos.clone();
        let moves = sans
            .iter()
            .map(|s| {
                let m = s.parse::<San>().unwrap().to_move(&p).unwrap();
                p.play_unchecked(m);
                m
            })
            .collect();
        (pos, moves)
    }
}
