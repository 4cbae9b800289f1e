//! The generator's own check that a stream is decidable: a bounded search
//! for the lines of legal moves that explain what a board reported, read
//! with the board physics as the allowed hidden states.
//!
//! An observation is the board as the host knows it after each report (a
//! lift, a put-down, a scan, a dump). A line of moves explains it at some
//! point of the line when the observation equals
//! - the position reached (settled), or
//! - a position with the next move under way: every square the move
//!   touches (its origin, target, captured square, rook squares and the
//!   squares a dragged piece crosses) may be empty, hold what stood there
//!   before or after, or hold a moving piece; every other square as before;
//!
//! up to sensor blips: squares whose reading changes and changes back
//! within 80 ms (event boards) or from one scan to the next (scanning
//! boards), at most two per observation. Between two observations one ply
//! may go unseen (two between two scans when one does not explain the
//! later scan), and up to ten before a dump after `reconnected` (a dump
//! shows a settled position). At most 200 positions stay in play.
//!
//! The cost of a line is its plies, then the blips it assumes; a stream is
//! decidable when exactly one line has the least cost. The work (positions
//! visited and move lists generated) is bounded: over budget the answer is
//! [`Explanation::OverBudget`].

use std::collections::BTreeMap;

use shakmaty::{
    Bitboard, Board, Chess, Color, EnPassantMode, Move, Position, Role, Square, attacks,
    zobrist::Zobrist64,
};

use crate::event::{BoardEvent, Millis, Sensed, TimedEvent};

/// The most blips one observation may be assumed to show.
const MAX_BLIPS: u32 = 2;
/// The longest a blip lasts on an event board, with some slack (5–60 ms).
const BLIP_SPAN_MS: Millis = 80;
/// The most plies a dump after `reconnected` may hide.
const MAX_DUMP_PLIES: u32 = 10;
/// The most positions one report may leave in play.
const MAX_NODES: usize = 200;
/// The default budget of work per game.
pub const DEFAULT_BUDGET: u64 = 3_000_000;

/// What the search found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Explanation {
    /// Exactly one line of least cost: these moves.
    Unique(Vec<Move>),
    /// Several lines share the least cost (two of them are given).
    Ambiguous(Vec<Move>, Vec<Move>),
    /// No line within the search's bounds explains the stream.
    Unexplained,
    /// The work budget ran out.
    OverBudget,
}

/// The board as the host knows it after one report.
#[derive(Debug, Clone)]
struct Obs {
    at: Millis,
    /// Occupied squares.
    occ: Bitboard,
    /// The pieces (boards that identify them).
    board: Board,
    /// A dump after `reconnected`.
    dump: bool,
    /// Squares whose reading here may be a blip.
    transient: Bitboard,
    /// Whether the stream is made of scans (a blip lasts one scan).
    scan: bool,
}

/// Reads a stream of reports into observations.
fn observations(start: &Board, events: &[TimedEvent], identity: bool) -> Vec<Obs> {
    let mut board = start.clone();
    let mut occ = start.occupied();
    // The start position as the first observation: a blip in the first
    // report is a change from it.
    let mut out = vec![Obs {
        at: events.first().map_or(0, |e| e.at),
        occ,
        board: if identity {
            board.clone()
        } else {
            Board::empty()
        },
        dump: false,
        transient: Bitboard::EMPTY,
        scan: false,
    }];
    let mut reconnected = false;
    for e in events {
        let (dump, scan) = match &e.event {
            BoardEvent::Lift(sq) => {
                board.discard_piece_at(*sq);
                occ.discard(*sq);
                (false, false)
            }
            BoardEvent::Place(sq, piece) => {
                occ.add(*sq);
                board.discard_piece_at(*sq);
                if let Some(p) = piece {
                    board.set_piece_at(*sq, *p);
                }
                (false, false)
            }
            BoardEvent::Board(scan) => {
                board = Board::empty();
                occ = Bitboard::EMPTY;
                for sq in Square::ALL {
                    match scan.get(sq) {
                        Some(Sensed::Piece(p)) => {
                            board.set_piece_at(sq, p);
                            occ.add(sq);
                        }
                        Some(Sensed::Occupied) => occ.add(sq),
                        None => {}
                    }
                }
                (std::mem::take(&mut reconnected), true)
            }
            BoardEvent::Reconnected => {
                reconnected = true;
                continue;
            }
            _ => continue,
        };
        out.push(Obs {
            at: e.at,
            occ,
            board: if identity {
                board.clone()
            } else {
                Board::empty()
            },
            dump,
            transient: Bitboard::EMPTY,
            scan,
        });
    }
    mark_transient(&mut out, identity);
    out
}

/// What one square reads in an observation.
fn reading(o: &Obs, sq: Square, identity: bool) -> (bool, Option<shakmaty::Piece>) {
    (
        o.occ.contains(sq),
        if identity { o.board.piece_at(sq) } else { None },
    )
}

/// Marks the readings that changed and changed back soon enough to be a
/// blip.
fn mark_transient(obs: &mut [Obs], identity: bool) {
    for sq in Square::ALL {
        let mut i = 1;
        while i < obs.len() {
            let before = reading(&obs[i - 1], sq, identity);
            if reading(&obs[i], sq, identity) == before {
                i += 1;
                continue;
            }
            // A run of a different reading from i; where does it end?
            let run = reading(&obs[i], sq, identity);
            let mut j = i;
            while j < obs.len() && reading(&obs[j], sq, identity) == run {
                j += 1;
            }
            let short = j < obs.len()
                && reading(&obs[j], sq, identity) == before
                && (obs[j].at - obs[i].at <= BLIP_SPAN_MS || (obs[i].scan && j == i + 1));
            if short {
                for o in &mut obs[i..j] {
                    o.transient.add(sq);
                }
            }
            i = j;
        }
    }
}

/// The squares whose reading differs between the observation and a board.
fn diff(o: &Obs, b: &Board, identity: bool) -> Bitboard {
    let mut d = o.occ ^ b.occupied();
    if identity {
        for color in Color::ALL {
            for role in Role::ALL {
                let p = shakmaty::Piece { color, role };
                d |= o.board.by_piece(p) ^ b.by_piece(p);
            }
        }
    }
    d
}

/// A search node: a position, its least cost and the distinct lines of
/// that cost that reach it (at most two kept).
#[derive(Debug, Clone)]
struct Node {
    pos: Chess,
    cost: (u32, u32),
    lines: Vec<Vec<Move>>,
}

/// The search with its work counter.
struct Search {
    identity: bool,
    work: u64,
    budget: u64,
}

struct Over;

/// Finds the lines of legal moves from `start` that explain `events` (the
/// reports of one game, not turned round), within `budget` units of work.
pub fn explain(start: &Chess, events: &[TimedEvent], identity: bool, budget: u64) -> Explanation {
    let obs = observations(start.board(), events, identity);
    let mut search = Search {
        identity,
        work: 0,
        budget,
    };
    let mut layer: BTreeMap<u64, Node> = BTreeMap::new();
    layer.insert(
        key(start),
        Node {
            pos: start.clone(),
            cost: (0, 0),
            lines: vec![Vec::new()],
        },
    );
    for (i, o) in obs.iter().enumerate() {
        let last = i + 1 == obs.len();
        // One unseen ply at most between two reports; two between two
        // scans, but only when one does not explain the scan.
        let mut next = match search.step(&layer, o, last, 1) {
            Ok(next) => next,
            Err(Over) => return Explanation::OverBudget,
        };
        if next.is_empty() && o.scan && !o.dump {
            next = match search.step(&layer, o, last, 2) {
                Ok(next) => next,
                Err(Over) => return Explanation::OverBudget,
            };
        }
        if next.is_empty() {
            return Explanation::Unexplained;
        }
        if next.len() > MAX_NODES {
            return Explanation::OverBudget;
        }
        layer = next;
    }
    let Some(best) = layer.values().map(|n| n.cost).min() else {
        return Explanation::Unexplained;
    };
    let mut lines: Vec<Vec<Move>> = Vec::new();
    for n in layer.values().filter(|n| n.cost == best) {
        for l in &n.lines {
            if !lines.contains(l) {
                lines.push(l.clone());
            }
        }
    }
    match lines.len() {
        0 => Explanation::Unexplained,
        1 => Explanation::Unique(lines.swap_remove(0)),
        _ => Explanation::Ambiguous(lines.swap_remove(0), lines.swap_remove(0)),
    }
}

fn key(pos: &Chess) -> u64 {
    pos.zobrist_hash::<Zobrist64>(EnPassantMode::Legal).0
}

fn insert(layer: &mut BTreeMap<u64, Node>, pos: Chess, cost: (u32, u32), lines: Vec<Vec<Move>>) {
    let entry = layer.entry(key(&pos)).or_insert_with(|| Node {
        pos,
        cost,
        lines: Vec::new(),
    });
    if cost < entry.cost {
        entry.cost = cost;
        entry.lines.clear();
    }
    if cost == entry.cost {
        for l in lines {
            if entry.lines.len() < 2 && !entry.lines.contains(&l) {
                entry.lines.push(l);
            }
        }
    }
}

impl Search {
    fn spend(&mut self, n: u64) -> Result<(), Over> {
        self.work += n;
        if self.work > self.budget {
            Err(Over)
        } else {
            Ok(())
        }
    }

    /// The next layer: every way each node explains the observation.
    fn step(
        &mut self,
        layer: &BTreeMap<u64, Node>,
        o: &Obs,
        last: bool,
        depth: u32,
    ) -> Result<BTreeMap<u64, Node>, Over> {
        let mut next = BTreeMap::new();
        for node in layer.values() {
            let mut found: Vec<(Chess, Vec<Move>, u32)> = Vec::new();
            if o.dump {
                self.dump(node, o, &mut found)?;
            } else {
                let mut path = Vec::new();
                self.walk(&node.pos, depth, &mut path, o, last, &mut found)?;
            }
            for (pos, path, blips) in found {
                let cost = (node.cost.0 + path.len() as u32, node.cost.1 + blips);
                let lines = node
                    .lines
                    .iter()
                    .map(|l| {
                        let mut l = l.clone();
                        l.extend_from_slice(&path);
                        l
                    })
                    .collect();
                insert(&mut next, pos, cost, lines);
            }
        }
        Ok(next)
    }

    /// Every line of up to `depth` more plies whose end explains `o`.
    fn walk(
        &mut self,
        pos: &Chess,
        depth: u32,
        path: &mut Vec<Move>,
        o: &Obs,
        last: bool,
        found: &mut Vec<(Chess, Vec<Move>, u32)>,
    ) -> Result<(), Over> {
        self.spend(1)?;
        if let Some(b) = self.explains(pos, o, last)? {
            found.push((pos.clone(), path.clone(), b));
        }
        if depth == 0 {
            return Ok(());
        }
        for m in pos.legal_moves() {
            let mut next = pos.clone();
            next.play_unchecked(m);
            path.push(m);
            self.walk(&next, depth - 1, path, o, last, found)?;
            path.pop();
        }
        Ok(())
    }

    /// The fewest plies (up to ten) after which a settled position explains
    /// the dump, and every such line.
    fn dump(
        &mut self,
        node: &Node,
        o: &Obs,
        found: &mut Vec<(Chess, Vec<Move>, u32)>,
    ) -> Result<(), Over> {
        let lower = self.lower_bound(&node.pos, o);
        for n in lower..=MAX_DUMP_PLIES {
            let mut path = Vec::new();
            self.deepen(&node.pos, n, &mut path, o, found)?;
            if !found.is_empty() {
                break;
            }
        }
        Ok(())
    }

    fn deepen(
        &mut self,
        pos: &Chess,
        left: u32,
        path: &mut Vec<Move>,
        o: &Obs,
        found: &mut Vec<(Chess, Vec<Move>, u32)>,
    ) -> Result<(), Over> {
        self.spend(1)?;
        if left == 0 {
            if let Some(b) = self.settled(pos, o) {
                found.push((pos.clone(), path.clone(), b));
            }
            return Ok(());
        }
        if self.lower_bound(pos, o) > left {
            return Ok(());
        }
        for m in pos.legal_moves() {
            let mut next = pos.clone();
            next.play_unchecked(m);
            path.push(m);
            self.deepen(&next, left - 1, path, o, found)?;
            path.pop();
        }
        Ok(())
    }

    /// Plies needed at least to go from `pos` to what `o` shows (blips
    /// aside): each ply puts at most one piece of the side moving on a new
    /// square, two when castling.
    fn lower_bound(&self, pos: &Chess, o: &Obs) -> u32 {
        let firm = !o.transient;
        let castles = |c: Color| pos.castles().has_color(c);
        let per_move = |count: u32, castling: bool| {
            if castling { count.div_ceil(2) } else { count }
        };
        let need = |c: Color| -> u32 {
            if self.identity {
                let mut arrivals = 0;
                for sq in o.board.by_color(c) & firm {
                    if pos.board().piece_at(sq) != o.board.piece_at(sq) {
                        arrivals += 1;
                    }
                }
                per_move(arrivals, castles(c))
            } else {
                0
            }
        };
        let (mover, other) = (need(pos.turn()), need(!pos.turn()));
        let by_sides = match (mover, other) {
            (0, 0) => 0,
            (m, n) => (2 * m).saturating_sub(1).max(2 * n),
        };
        let arrivals = (o.occ & !pos.board().occupied() & firm).count() as u32;
        let vacated = (pos.board().occupied() & !o.occ & firm).count() as u32;
        let any_castles = castles(Color::White) || castles(Color::Black);
        by_sides
            .max(per_move(arrivals, any_castles))
            .max(vacated.div_ceil(2))
    }

    /// Blips assumed if `o` shows `pos` settled.
    fn settled(&self, pos: &Chess, o: &Obs) -> Option<u32> {
        let d = diff(o, pos.board(), self.identity);
        (d.is_subset(o.transient) && d.count() as u32 <= MAX_BLIPS).then_some(d.count() as u32)
    }

    /// The fewest blips with which `o` shows `pos`, settled or with a move
    /// under way (only settled for the last observation).
    fn explains(&mut self, pos: &Chess, o: &Obs, last: bool) -> Result<Option<u32>, Over> {
        let settled = self.settled(pos, o);
        if settled == Some(0) || last {
            return Ok(settled);
        }
        let d = diff(o, pos.board(), self.identity);
        let hard = d & !o.transient;
        if !self.one_move_may_cover(pos, o, hard) {
            return Ok(settled);
        }
        self.spend(1)?;
        let mut best = settled;
        for m in pos.legal_moves() {
            let (touched, after) = touched(pos, m);
            if !hard.is_subset(touched) {
                continue;
            }
            let mut bad = d & !touched;
            if self.identity {
                bad |= self.misplaced(pos, &after, m, touched, o);
            }
            let b = bad.count() as u32;
            if bad.is_subset(o.transient) && b <= MAX_BLIPS && best.is_none_or(|x| b < x) {
                best = Some(b);
            }
        }
        Ok(best)
    }

    /// A quick necessary test before generating moves: the readings no
    /// blip explains must fit one move of the side to move.
    fn one_move_may_cover(&self, pos: &Chess, o: &Obs, hard: Bitboard) -> bool {
        if hard.is_empty() || hard.count() > 10 {
            return hard.is_empty();
        }
        let board = pos.board();
        let vacated = hard & board.occupied() & !o.occ;
        if vacated.count() > 4 {
            return false;
        }
        if self.identity {
            // Pieces that arrive must be the mover's.
            let arrived = hard & o.board.occupied();
            if !(o.board.by_color(!pos.turn()) & arrived).is_empty() {
                // ...unless it is what stood there before.
                let foreign = o.board.by_color(!pos.turn()) & arrived;
                if foreign
                    .into_iter()
                    .any(|sq| board.piece_at(sq) != o.board.piece_at(sq))
                {
                    return false;
                }
            }
        }
        true
    }

    /// Squares a move touches whose reading no stage of that move gives.
    fn misplaced(
        &self,
        pos: &Chess,
        after: &Board,
        m: Move,
        touched: Bitboard,
        o: &Obs,
    ) -> Bitboard {
        let mut moving = Vec::with_capacity(3);
        if let Some(from) = m.from()
            && let Some(p) = pos.board().piece_at(from)
        {
            moving.push(p);
        }
        if let Move::Castle { rook, .. } = m
            && let Some(p) = pos.board().piece_at(rook)
        {
            moving.push(p);
        }
        let mut bad = Bitboard::EMPTY;
        for sq in touched & o.board.occupied() {
            let p = o.board.piece_at(sq);
            if p != pos.board().piece_at(sq)
                && p != after.piece_at(sq)
                && !p.is_some_and(|p| moving.contains(&p))
            {
                bad.add(sq);
            }
        }
        bad
    }
}

/// The squares a move touches (those it changes and those a dragged piece
/// crosses) and the board after it.
fn touched(pos: &Chess, m: Move) -> (Bitboard, Board) {
    let mut next = pos.clone();
    next.play_unchecked(m);
    let after = next.board().clone();
    let mut t = pos.board().occupied() ^ after.occupied();
    for sq in pos.board().occupied() & after.occupied() {
        if pos.board().piece_at(sq) != after.piece_at(sq) {
            t.add(sq);
        }
    }
    match m {
        Move::Normal { from, to, .. } => t |= attacks::between(from, to),
        Move::Castle { king, rook } => {
            let side = m
                .castling_side()
                .unwrap_or(shakmaty::CastlingSide::KingSide);
            let color = pos.turn();
            t |= attacks::between(king, side.king_to(color));
            t |= attacks::between(rook, side.rook_to(color));
        }
        _ => {}
    }
    (t, after)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_blip_must_come_and_go() {
        let start = Board::default();
        let ev = |at, event| TimedEvent { at, event };
        let events = [
            ev(100, BoardEvent::Lift(Square::A2)),
            ev(130, BoardEvent::Place(Square::A2, None)),
            ev(1000, BoardEvent::Lift(Square::B2)),
        ];
        let obs = observations(&start, &events, false);
        assert!(obs[1].transient.contains(Square::A2));
        assert!(!obs[3].transient.contains(Square::B2));
    }
}
