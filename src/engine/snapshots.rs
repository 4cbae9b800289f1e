//! The snapshots a scanning board sent since the record's position: each is
//! the occupancy at one moment, so a sequence of moves that explains the
//! last one must also have passed, in order, through what each earlier one
//! shows. The squares' histories alone cannot tell that: a square filled
//! before a scan and filled again after it reads as one placement.

mod pieces;
mod shown;

use shakmaty::{Bitboard, Board, Chess, Move, Piece, Position, Square};

use super::cost::{BLIP, SLIDE};
use crate::matcher::{move_squares, occupancy_after};

/// Which pieces a scan before the last may have caught on their path
/// (see [`Snapshots::cost_sliding`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sliding {
    /// None: every scan before the last shows a position of the line, or
    /// one with the next move's squares read anyhow.
    No,
    /// A plain move's piece only (the board read on its own).
    Plain,
    /// Any move's piece, a capture's too (listed lines followed).
    Any,
}

/// The most snapshots kept: more than a record ever lags behind the board.
const KEEP: usize = 64;

/// What [`Snapshots::without_odd_squares`] finds.
#[derive(Debug, Clone)]
pub struct OddSquares {
    /// Squares one snapshot alone showed empty.
    pub empties: Bitboard,
    /// Squares one snapshot alone, right after the record's position,
    /// showed full.
    pub fills: Bitboard,
    /// What that snapshot showed, if it showed any.
    pub filled_in: Option<Bitboard>,
    /// Squares every snapshot from the first odd one's next to the last
    /// showed full: no piece left them meanwhile.
    pub stayed: Bitboard,
    /// Each snapshot that showed squares empty alone: those squares, and
    /// the occupancy it shows with them refilled.
    pub caught: Vec<(Bitboard, Bitboard)>,
    /// The snapshots with the odd squares read as their neighbours show
    /// them.
    pub repaired: Snapshots,
}

/// What kind of board the stream comes from, learned from it (issue 34:
/// the board kind is a type). It picks the observation model a full scan
/// is read under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BoardKind {
    /// Only full scans so far: a scanning board. Each scan is a snapshot,
    /// any physical instant, its first of the session included.
    #[default]
    Scanning,
    /// A square was reported on its own: an event board. It is read from
    /// the squares' reports, which say more than any snapshot; a full scan
    /// after them is a dump.
    Reporting,
}

/// The occupancies a scanning board showed, with the events that showed
/// them, oldest first.
#[derive(Debug, Clone, Default)]
pub struct Snapshots {
    list: Vec<(u64, Bitboard)>,
    /// What the snapshots of a board that identifies pieces showed on each
    /// square, with their events, oldest first.
    pieces: Vec<(u64, Box<[Option<Piece>; 64]>)>,
    /// The kind of board that sent them.
    board: BoardKind,
}

impl Snapshots {
    /// A scan numbered `seq` showed `occupied`.
    pub fn push(&mut self, seq: u64, occupied: Bitboard) {
        if self.list.len() == KEEP {
            self.list.remove(0);
        }
        self.list.push((seq, occupied));
    }

    /// A scan numbered `seq` of a board that identifies pieces showed
    /// `pieces` (by square index).
    pub fn push_pieces(&mut self, seq: u64, pieces: [Option<Piece>; 64]) {
        if self.pieces.len() == KEEP {
            self.pieces.remove(0);
        }
        self.pieces.push((seq, Box::new(pieces)));
    }

    /// Reads each snapshot after event `since` without the squares it
    /// alone showed full, with the snapshots either side of it (before the
    /// first one, the record's position, `record`) and the record's
    /// position showing them empty: blips, once the board shows the
    /// record's position again. A square shown empty for one scan is left
    /// alone (a capture begun: the captured piece taken off).
    pub fn forget_odd_fills(&mut self, since: u64, record: Bitboard) {
        for j in 0..self.list.len() {
            let (seq, shown) = self.list[j];
            let Some(&(_, next)) = self.list.get(j + 1) else {
                break;
            };
            if seq <= since {
                continue;
            }
            let before = match j.checked_sub(1) {
                Some(i) if self.list[i].0 > since => self.list[i].1,
                _ => record,
            };
            // Kept: what a neighbour or the record's position shows full.
            self.list[j].1 = shown & (before | next | record);
        }
    }

    /// A square-by-square report came: the snapshots no longer show every
    /// state the board passed through.
    pub fn clear(&mut self) {
        self.list.clear();
        self.pieces.clear();
        self.board = BoardKind::Reporting;
    }

    /// The kind of board that sent them: a scanning board until a square
    /// is reported on its own.
    pub fn board(&self) -> BoardKind {
        self.board
    }

    /// Whether the board only ever sent snapshots (a
    /// [`BoardKind::Scanning`] board).
    pub fn only(&self) -> bool {
        self.board == BoardKind::Scanning
    }

    /// Whether `line`, played from `pos` (shown by event `since`), passes
    /// through what every snapshot after `since` shows, in order: each one
    /// is a position of the line, or one with the next move in progress
    /// (the squares that move changes read anyhow). A snapshot before
    /// `since`, or square reports in between, leave the line unchecked.
    /// The line may need a scan to have caught a piece in two places (see
    /// [`Snapshots::cost`]).
    pub fn allow(&self, pos: &Chess, line: &[Move], since: u64, settling: Bitboard) -> bool {
        self.cost(pos, line, since, settling, false).is_some()
    }

    /// What the snapshots after `since` make `line` (played from `pos`)
    /// cost, if it passes through them as [`Snapshots::allow`] reads them:
    /// a piece is in one place at a time, so a scan showing more of a
    /// move's squares full than the move has pieces (the queen caught on
    /// b3 and on b6 at once, for Qb6) caught a blip, 3 for each square too
    /// many, as any blip (the cost table). The cheapest way through the
    /// scans counts.
    ///
    /// With `then_hand`, the line is followed by a move in progress: the
    /// last snapshots may show the hand at work, where pieces only leave
    /// the board (a piece put down on a square seen empty before is a move
    /// made).
    pub fn cost(
        &self,
        pos: &Chess,
        line: &[Move],
        since: u64,
        settling: Bitboard,
        then_hand: bool,
    ) -> Option<usize> {
        self.cost_sliding(pos, line, (since, settling), then_hand, Sliding::No)
    }

    /// As [`Snapshots::cost`]; with `slides`, a scan before the last may
    /// also have caught a piece of the line on an empty square of its path,
    /// its own square (and a capture's victim's) already empty (a
    /// slide, 1: a scan is any instant of a move, and the hand took the
    /// victim off first), unless the scan after it shows the same (a piece
    /// that stood a whole scan period was put down).
    pub fn cost_sliding(
        &self,
        pos: &Chess,
        line: &[Move],
        (since, settling): (u64, Bitboard),
        then_hand: bool,
        slides: Sliding,
    ) -> Option<usize> {
        let shown = self.after(since);
        let states = states(pos, line, settling);
        if !then_hand {
            return in_two_places(&states, &shown, shown.len(), slides);
        }
        let end = states[states.len() - 1].occupied;
        if shown.last().is_some_and(|last| !last.is_subset(end)) {
            // A hand that filled a square: castling half done. Nothing
            // here says when it began.
            return Some(0);
        }
        // The longest run of snapshots at the end that a hand explains.
        let mut start = shown.len();
        while start > 0
            && shown[start - 1].is_subset(end)
            && (start == shown.len() || shown[start].is_subset(shown[start - 1]))
        {
            start -= 1;
        }
        // The scans of the hand still tell whether a piece caught on its
        // path before them stood there.
        in_two_places(&states, &shown, start, slides)
    }

    /// What the snapshots after event `since` showed, but for the last
    /// (none if no snapshot came since).
    pub fn all_but_last(&self, since: u64) -> Option<Vec<Bitboard>> {
        let mut shown = self.after(since);
        shown.pop()?;
        Some(shown)
    }

    /// The last snapshot: its event and what it showed.
    pub fn last(&self) -> Option<(u64, Bitboard)> {
        self.list.last().copied()
    }

    /// What the snapshot of event `seq` showed, if it is kept.
    pub fn shown_at(&self, seq: u64) -> Option<Bitboard> {
        self.list
            .iter()
            .find(|(at, _)| *at == seq)
            .map(|&(_, shown)| shown)
    }

    /// What the first snapshot after event `seq` showed, if one came.
    pub fn next_after(&self, seq: u64) -> Option<Bitboard> {
        self.list
            .iter()
            .find(|(at, _)| *at > seq)
            .map(|&(_, shown)| shown)
    }

    /// The last snapshot that shows `squares` as `occupied` has them.
    pub fn last_showing(&self, squares: Bitboard, occupied: Bitboard) -> Option<(u64, Bitboard)> {
        self.list
            .iter()
            .rev()
            .find(|(_, shown)| *shown & squares == occupied & squares)
            .copied()
    }

    /// How many snapshots came after event `seq`.
    pub fn count_after(&self, seq: u64) -> usize {
        self.list.iter().filter(|(at, _)| *at > seq).count()
    }

    /// The squares the snapshot of event `seq` shows occupied and both the
    /// one before it and the one after it empty (none until the next one
    /// came). A square shown empty for one scan is not counted: that is
    /// also a captured piece taken off before the capturing one is put
    /// down.
    pub fn odd_fills(&self, seq: u64) -> Bitboard {
        let Some(j) = self.list.iter().position(|(at, _)| *at == seq) else {
            return Bitboard::EMPTY;
        };
        match (j.checked_sub(1), self.list.get(j + 1)) {
            (Some(before), Some(&(_, next))) => {
                let shown = self.list[j].1;
                shown & !self.list[before].1 & !next
            }
            _ => Bitboard::EMPTY,
        }
    }

    /// The squares the last snapshot shows changed from the one before it
    /// (all of them if there is none).
    pub fn changed_last(&self) -> Bitboard {
        match self.list.as_slice() {
            [.., (_, before), (_, last)] => *before ^ *last,
            _ => Bitboard::FULL,
        }
    }

    /// The squares where the board, showing `sensed`, differs from the
    /// record's position (`record`) and that the last snapshot changed: a
    /// blip on any of them would change what it shows.
    pub fn blip_suspects(&self, record: Bitboard, sensed: Bitboard) -> Bitboard {
        (record ^ sensed) & self.changed_last()
    }

    /// Squares that one snapshot after event `since` alone showed changed,
    /// with the snapshots either side of it (before the first one, the
    /// record's position, `record`) showing them as they were: a sensor
    /// blip that scan caught, or moves. Returns those on `squares` with
    /// these snapshots without them; `None` if there are none. Only a board
    /// nothing else explains is read so (see `read_occupancy_snapshot`).
    pub fn without_odd_squares(
        &self,
        since: u64,
        record: Bitboard,
        squares: Bitboard,
    ) -> Option<OddSquares> {
        let mut repaired = self.clone();
        let (mut empties, mut fills) = (Bitboard::EMPTY, Bitboard::EMPTY);
        let mut stayed = Bitboard::FULL;
        let mut caught = Vec::new();
        let mut filled_in = None;
        for (j, &(seq, shown)) in self.list.iter().enumerate() {
            let before = match j.checked_sub(1) {
                Some(i) if self.list[i].0 > since => self.list[i].1,
                _ => record,
            };
            let Some(&(_, next)) = self.list.get(j + 1) else {
                break;
            };
            if seq <= since {
                continue;
            }
            if (empties | fills).any() {
                stayed &= shown;
            }
            let empty = before & next & !shown & squares;
            // A fill later than that may be a piece moved there and on.
            let fill = if before == record {
                shown & !before & !next & squares
            } else {
                Bitboard::EMPTY
            };
            repaired.list[j].1 = (shown | empty) & !fill;
            if empty.any() {
                caught.push((empty, (shown | empty) & !fill));
            }
            if fill.any() {
                filled_in = Some(shown);
            }
            empties |= empty;
            fills |= fill;
        }
        if let Some(&(_, last)) = self.list.last() {
            stayed &= last;
        }
        (empties | fills).any().then_some(OddSquares {
            empties,
            fills,
            filled_in,
            stayed,
            caught,
            repaired,
        })
    }

    /// The first snapshot after event `since`, up to event `until`, that
    /// showed `occupied`.
    pub fn first_showing(&self, since: u64, until: u64, occupied: Bitboard) -> Option<u64> {
        self.list
            .iter()
            .find(|&&(seq, shown)| seq > since && seq <= until && shown == occupied)
            .map(|&(seq, _)| seq)
    }

    /// As [`Self::first_showing`], past any later snapshot up to `until`
    /// that showed `occupied` otherwise only on `moving` (the last move's
    /// squares), the board then showing `occupied` again: that move was
    /// still under way there (a capture's victim off, its piece in the
    /// hand), so it was made at the first scan showing it since.
    pub fn made_showing(
        &self,
        since: u64,
        until: u64,
        occupied: Bitboard,
        moving: Bitboard,
    ) -> Option<u64> {
        let mut made = None;
        for &(seq, shown) in &self.list {
            if seq <= since || seq > until {
                continue;
            }
            if shown == occupied {
                made = made.or(Some(seq));
            } else if (shown ^ occupied).is_subset(moving) {
                made = None;
            }
        }
        made.or_else(|| self.first_showing(since, until, occupied))
    }

    /// These snapshots with the last one showing `occupied` instead.
    pub fn with_last(&self, occupied: Bitboard) -> Snapshots {
        let mut changed = self.clone();
        if let Some(last) = changed.list.last_mut() {
            last.1 = occupied;
        }
        changed
    }

    /// The snapshot of event `seq` caught `squares` blipping (the next
    /// scan showed them back as they were): it is read as without them.
    pub fn forget_blips(&mut self, seq: u64, squares: Bitboard) {
        if let Some(shown) = self.list.iter_mut().find(|(at, _)| *at == seq) {
            shown.1 ^= squares;
        }
    }

    /// Reads each snapshot after event `seq` without the squares it alone
    /// showed full, the scans either side of it showing them empty: a
    /// piece caught on its way over them (a slide), or a blip; but for
    /// the squares of `kept`.
    pub fn forget_odd_fills_after(&mut self, seq: u64, kept: Bitboard) {
        let odd: Vec<(u64, Bitboard)> = self
            .list
            .iter()
            .filter(|(at, _)| *at > seq)
            .map(|&(at, _)| (at, self.odd_fills(at) & !kept))
            .collect();
        for (at, squares) in odd {
            self.forget_blips(at, squares);
        }
    }

    /// As [`Self::forget_blips`], for the snapshot that came after event
    /// `seq`: `squares` read wrong by that scan alone.
    pub fn forget_blips_after(&mut self, seq: u64, squares: Bitboard) {
        if let Some(shown) = self.list.iter_mut().find(|(at, _)| *at > seq) {
            shown.1 ^= squares;
        }
    }

    /// For each snapshot after event `since`, the latest position of
    /// `line` (played from `pos`) it can be in the order, when it shows
    /// that position exactly or with pieces of the next move only lifted,
    /// and whether exactly; `None` for a snapshot that pins nothing. `None`
    /// when the line does not pass through the snapshots.
    fn pinned(
        &self,
        pos: &Chess,
        line: &[Move],
        since: u64,
        settling: Bitboard,
    ) -> Option<Vec<Option<(usize, bool)>>> {
        pinned_in(&self.after(since), pos, line, settling)
    }

    /// The event of the first scan after event `seq`.
    pub(super) fn next_seq_after(&self, seq: u64) -> Option<u64> {
        self.list.iter().map(|&(s, _)| s).find(|&s| s > seq)
    }

    /// The snapshots after event `since`, oldest first.
    fn after(&self, since: u64) -> Vec<Bitboard> {
        self.list
            .iter()
            .filter(|(seq, _)| *seq > since)
            .map(|&(_, shown)| shown)
            .collect()
    }
}

/// [`Snapshots::pinned`] over the snapshots `shown`, oldest first.
fn pinned_in(
    shown: &[Bitboard],
    pos: &Chess,
    line: &[Move],
    settling: Bitboard,
) -> Option<Vec<Option<(usize, bool)>>> {
    let states = states(pos, line, settling);
    let earliest = earliest(&states, shown)?;
    let latest = latest(&states, shown)?;
    // Each snapshot may be any state between the earliest and the
    // latest the order allows it.
    Some(
        (0..shown.len())
            .map(|j| {
                (earliest[j]..=latest[j])
                    .rev()
                    .find(|&i| lifting(states[i], shown[j]))
                    .map(|i| (i, shown[j] == states[i].occupied))
            })
            .collect(),
    )
}

/// One position of a line as a snapshot may catch it: its occupancy, the
/// squares the next move changes, and how many pieces stand on them while
/// that move is made.
#[derive(Debug, Clone, Copy)]
struct State {
    occupied: Bitboard,
    /// The squares the next move changes (read anyhow while it is made).
    moving: Bitboard,
    /// The most of `moving` a snapshot can show full with no blip: a piece
    /// is in one place at a time, so a move being made shows no more of
    /// its squares full than it has pieces; a promotion's new piece may be
    /// put down before the pawn is taken off, and the squares of the move
    /// before (`settling`) read anyhow.
    pieces: usize,
    /// The empty squares of the next move's path (a sliding piece's way,
    /// to a victim or not), and the squares empty while a scan catches it
    /// there: its own, and a capture's victim once the hand has taken it
    /// off (`victim`; a scan may catch the piece before or after).
    path: Bitboard,
    off: Bitboard,
    victim: Bitboard,
}

/// The occupancies of `line`'s positions from `pos`, each with the squares
/// the next move changes (in `pos`, also `settling`: the squares of the
/// move that led to it, which may not be over yet).
fn states(pos: &Chess, line: &[Move], settling: Bitboard) -> Vec<State> {
    let mut states = Vec::with_capacity(line.len() + 1);
    let mut occupied = pos.board().occupied();
    let mut turn = pos.turn();
    let mut moving = settling;
    for &m in line {
        let squares = move_squares(m, turn);
        let (path, off, victim) = match m {
            Move::Normal {
                from, to, capture, ..
            } => {
                // A capture's victim may be off while its piece is on the
                // way; a plain move's square is empty until the piece arrives.
                let victim = if capture.is_some() {
                    Bitboard::from_square(to)
                } else {
                    Bitboard::EMPTY
                };
                (
                    shakmaty::attacks::between(from, to) & !occupied,
                    Bitboard::from_square(from) | victim,
                    victim,
                )
            }
            _ => (Bitboard::EMPTY, Bitboard::EMPTY, Bitboard::EMPTY),
        };
        states.push(State {
            occupied,
            moving: moving | squares,
            pieces: (occupied & squares).count()
                + usize::from(m.is_promotion())
                + (moving & !squares).count(),
            path,
            off,
            victim,
        });
        occupied = occupancy_after(occupied, m, turn);
        turn = !turn;
        moving = Bitboard::EMPTY;
    }
    states.push(State {
        occupied,
        moving,
        pieces: moving.count(),
        path: Bitboard::EMPTY,
        off: Bitboard::EMPTY,
        victim: Bitboard::EMPTY,
    });
    states
}

/// Whether a snapshot `shown` caught the next move of `state` with its
/// piece on one square of its path, a capture's victim already off or
/// still on (a hand takes it off before or after; on occupancy the victim
/// still on reads as the move to that square, which the next scan parts):
/// nothing else changed.
fn slid(state: State, shown: Bitboard) -> bool {
    let on = shown & !state.occupied;
    let rest = shown & !on;
    on.single_square().is_some_and(|sq| state.path.contains(sq))
        && (rest == state.occupied & !state.off
            || rest == state.occupied & !(state.off & !state.victim))
}

/// Whether the state `state` (with the squares of its next move read
/// anyhow) can be what a snapshot `shown`.
fn can_show(state: State, shown: Bitboard) -> bool {
    (state.occupied ^ shown) & !state.moving == Bitboard::EMPTY
}

/// How many squares a snapshot `shown` of `state` shows full beyond the
/// pieces its next move has: each one a piece in two places, a blip.
fn two_places(state: State, shown: Bitboard) -> usize {
    (shown & state.moving).count().saturating_sub(state.pieces)
}

/// What the snapshots `shown` cost, at the least, when they pass, in
/// order, through `states`: each a position of the line or one with the
/// next move in progress (the squares it changes read anyhow), a blip
/// (3) for each square shown in two places (see [`two_places`]) and, with
/// `slides`, a slide (1) for a scan before the last that caught a
/// move's piece on its path (see [`slid`]); `None` if they do not. Only
/// the first `upto` of `shown` pass through the line: the ones after them
/// (a hand at work after it) still say whether a piece caught on its path
/// stood there.
fn in_two_places(
    states: &[State],
    shown: &[Bitboard],
    upto: usize,
    slides: Sliding,
) -> Option<usize> {
    // The cheapest so far with the last snapshot at each state.
    let mut best: Vec<Option<usize>> = vec![Some(0); states.len()];
    for (j, &shown_j) in shown[..upto].iter().enumerate() {
        // A piece caught on the same square by the next scan stood there.
        let may_slide =
            slides != Sliding::No && shown.get(j + 1).is_some_and(|&next| next != shown_j);
        let mut before: Option<usize> = None;
        for (i, state) in states.iter().enumerate() {
            before = match (before, best[i]) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            best[i] = before.and_then(|n| {
                if can_show(*state, shown_j) {
                    Some(n + BLIP * two_places(*state, shown_j))
                } else if may_slide
                    && slid(*state, shown_j)
                    && (slides == Sliding::Any || state.victim.is_empty())
                {
                    Some(n + SLIDE)
                } else {
                    None
                }
            });
        }
    }
    best.into_iter().flatten().min()
}

/// Whether a snapshot `shown` is the position `state` itself, or with
/// pieces of the next move (squares `moving`) lifted and none put down
/// yet: a hand that only took pieces off, which nothing but that position
/// explains so closely (a square filled out of turn may be a blip).
fn lifting(state: State, shown: Bitboard) -> bool {
    shown.is_subset(state.occupied) && (state.occupied & !shown).is_subset(state.moving)
}

/// The earliest state of `states` each of `shown` can be, in order, when
/// they pass through them (see [`in_two_places`]; a scan that caught a
/// move's piece on its path is that move under way).
fn earliest(states: &[State], shown: &[Bitboard]) -> Option<Vec<usize>> {
    let mut at = 0;
    let mut found = Vec::with_capacity(shown.len());
    for &shown in shown {
        // The earliest state that can show it keeps every later one
        // possible.
        at += states[at..]
            .iter()
            .position(|&state| can_show(state, shown) || slid(state, shown))?;
        found.push(at);
    }
    Some(found)
}

/// The latest state of `states` each of `shown` can be, in order, the
/// last one no further than the end of the line.
fn latest(states: &[State], shown: &[Bitboard]) -> Option<Vec<usize>> {
    let mut bound = states.len() - 1;
    let mut found = vec![0; shown.len()];
    for (j, &shown) in shown.iter().enumerate().rev() {
        bound = states[..=bound]
            .iter()
            .rposition(|&state| can_show(state, shown) || slid(state, shown))?;
        found[j] = bound;
    }
    Some(found)
}

/// The positions of a line, piece by piece, with the squares each next
/// move changes.
struct PieceStates {
    boards: Vec<Board>,
    moving: Vec<Bitboard>,
    /// The squares each next move's piece crosses, and that piece: a scan
    /// may catch it on one of them (a slide).
    path: Vec<(Bitboard, Option<Piece>)>,
}

impl PieceStates {
    /// The states of `line` from `pos`; `slides`: whether a snapshot may
    /// catch a move's piece on a square of its path (a fault, weighed only
    /// when no line passes without one).
    fn new(pos: &Chess, line: &[Move], slides: bool) -> PieceStates {
        let mut boards = Vec::with_capacity(line.len() + 1);
        let mut moving = Vec::with_capacity(line.len() + 1);
        let mut path = Vec::with_capacity(line.len() + 1);
        let mut after = pos.clone();
        boards.push(after.board().clone());
        for &m in line {
            moving.push(move_squares(m, after.turn()));
            path.push(match m {
                Move::Normal { from, to, role, .. } if slides => (
                    shakmaty::attacks::between(from, to),
                    Some(role.of(after.turn())),
                ),
                // The castling king crosses the square between its own and
                // its castling square.
                Move::Castle { king, .. } if slides => match m.castling_side() {
                    Some(side) => (
                        shakmaty::attacks::between(king, side.king_to(after.turn())),
                        Some(shakmaty::Role::King.of(after.turn())),
                    ),
                    None => (Bitboard::EMPTY, None),
                },
                _ => (Bitboard::EMPTY, None),
            });
            after.play_unchecked(m);
            boards.push(after.board().clone());
        }
        moving.push(Bitboard::EMPTY);
        path.push((Bitboard::EMPTY, None));
        PieceStates {
            boards,
            moving,
            path,
        }
    }

    /// Whether the snapshots `shown`, in order, can each be a state at or
    /// after the one the snapshot before it was.
    fn passes<'a>(&self, shown: impl IntoIterator<Item = &'a [Option<Piece>; 64]>) -> bool {
        let mut at = 0;
        shown.into_iter().all(|shown| {
            match (at..self.boards.len()).find(|&k| self.fits(k, shown)) {
                Some(k) => {
                    at = k;
                    true
                }
                None => false,
            }
        })
    }

    /// Whether a snapshot `shown` is position `k` piece for piece, or with
    /// pieces of the next move only lifted (no piece caught anywhere else).
    fn shows(&self, k: usize, shown: &[Option<Piece>; 64]) -> bool {
        Square::ALL.into_iter().all(|sq| {
            let got = shown[sq.to_usize()];
            got == self.boards[k].piece_at(sq) || got.is_none() && self.moving[k].contains(sq)
        })
    }

    /// Whether a snapshot `shown` can be state `k`: its position, or with
    /// the next move under way (each square it changes empty, or holding
    /// what it held before or after the move; its piece may be caught on a
    /// square of its path).
    fn fits(&self, k: usize, shown: &[Option<Piece>; 64]) -> bool {
        let (path, mover) = self.path[k];
        Square::ALL.into_iter().all(|sq| {
            let got = shown[sq.to_usize()];
            let was = self.boards[k].piece_at(sq);
            if path.contains(sq) && got.is_some() && got == mover {
                return true;
            }
            if !self.moving[k].contains(sq) {
                return got == was;
            }
            got.is_none() || got == was || got == self.boards[k + 1].piece_at(sq)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::position;
    use shakmaty::{Square, san::San};

    fn line(pos: &Chess, sans: &str) -> Vec<Move> {
        let mut pos = pos.clone();
        sans.split_whitespace()
            .map(|s| {
                let m = s.parse::<San>().unwrap().to_move(&pos).unwrap();
                pos.play_unchecked(m);
                m
            })
            .collect()
    }

    fn occupancy(pos: &Chess, sans: &str) -> Bitboard {
        let mut pos = pos.clone();
        for m in line(&pos.clone(), sans) {
            pos.play_unchecked(m);
        }
        pos.board().occupied()
    }

    fn pieces(pos: &Chess, sans: &str, lifted: &[Square]) -> [Option<Piece>; 64] {
        let mut pos = pos.clone();
        for m in line(&pos.clone(), sans) {
            pos.play_unchecked(m);
        }
        let mut shown = Square::ALL.map(|sq| pos.board().piece_at(sq));
        for sq in lifted {
            shown[sq.to_usize()] = None;
        }
        shown
    }

    #[test]
    fn the_first_scan_showing_a_position_is_found_within_its_events() {
        let start = Chess::default();
        let mut snapshots = Snapshots::default();
        snapshots.push(1, occupancy(&start, "e4"));
        snapshots.push(2, occupancy(&start, "e4 e5"));
        // The g1 knight lifted, then put back.
        snapshots.push(
            3,
            occupancy(&start, "e4 e5") & !Bitboard::from_square(Square::G1),
        );
        snapshots.push(4, occupancy(&start, "e4 e5"));
        let shown = occupancy(&start, "e4 e5");
        assert_eq!(snapshots.first_showing(0, 4, shown), Some(2));
        assert_eq!(snapshots.first_showing(2, 4, shown), Some(4));
        assert_eq!(snapshots.first_showing(0, 1, shown), None);
        assert_eq!(snapshots.first_showing(0, 4, occupancy(&start, "d4")), None);
    }

    #[test]
    fn a_capture_caught_with_its_victim_off_is_made_when_its_position_comes_back() {
        let start = Chess::default();
        let mut snapshots = Snapshots::default();
        let after = occupancy(&start, "e4 d5 exd5");
        let d5 = Bitboard::from_square(Square::D5);
        let moving = d5.with(Square::E4);
        // The e4 pawn lifted (the d5 pawn still on), d5 taken off, then
        // the pawn put down there.
        snapshots.push(1, after);
        snapshots.push(2, after & !d5);
        snapshots.push(3, after);
        assert_eq!(snapshots.made_showing(0, 3, after, moving), Some(3));
        // Not while the board has not come back: the scan differing is
        // the next move's.
        assert_eq!(snapshots.made_showing(0, 2, after, moving), Some(1));
        // A scan differing elsewhere is the next move's hand.
        let g8 = Bitboard::from_square(Square::G8);
        assert_eq!(snapshots.made_showing(0, 3, after, g8), Some(1));
    }

    #[test]
    fn a_ply_is_unseen_unless_a_scan_showed_its_position_or_the_next_move_only_lifted() {
        // 1.e4 e5 2.d4 exd4 3.Qxd4: a scan catches Black's queen on e7 on
        // its way to f6, the next shows it on f6 with White's queen lifted.
        let pos = position("rnbqkbnr/pppp1ppp/8/8/3QP3/8/PPP2PPP/RNB1KBNR b KQkq - 0 3");
        let mut caught = pieces(&pos, "", &[Square::D8]);
        caught[Square::E7.to_usize()] = Some(shakmaty::Role::Queen.of(shakmaty::Color::Black));
        let mut snapshots = Snapshots::default();
        snapshots.push_pieces(1, caught);
        snapshots.push_pieces(2, pieces(&pos, "Qf6", &[Square::D4]));
        // 3...Qf6 with the hand at work: shown by the last scan; without
        // it, no scan showed the position. 3...Qe7 4.Qf6 Qxf6: the scans
        // show the first and the last, not the position after 4.Qf6.
        assert_eq!(snapshots.plies_unseen(&pos, &line(&pos, "Qf6"), 0, true), 0);
        assert_eq!(
            snapshots.plies_unseen(&pos, &line(&pos, "Qf6"), 0, false),
            1
        );
        assert_eq!(
            snapshots.plies_unseen(&pos, &line(&pos, "Qe7 Qf6 Qxf6"), 0, false),
            1
        );
    }

    #[test]
    fn identified_snapshots_tell_the_order_of_moves() {
        // 1.e4 e5 2.Nf3 Nc6 and 1.e4 Nc6 2.Nf3 e5 end alike; a scan that
        // showed 1...e5 with the g1 knight in the air stood only in the
        // first.
        let start = Chess::default();
        let mut snapshots = Snapshots::default();
        snapshots.push_pieces(1, pieces(&start, "e4 e5", &[Square::G1]));
        snapshots.push_pieces(2, pieces(&start, "e4 e5 Nf3 Nc6", &[]));
        assert!(snapshots.allow_pieces(&start, &line(&start, "e4 e5 Nf3 Nc6"), 0));
        assert!(!snapshots.allow_pieces(&start, &line(&start, "e4 Nc6 Nf3 e5"), 0));
        // Snapshots before the record's position are not evidence.
        assert!(snapshots.allow_pieces(&start, &line(&start, "e4 Nc6 Nf3 e5"), 2));
    }

    #[test]
    fn a_piece_one_scan_alone_showed_gone_is_put_back() {
        let start = Chess::default();
        let moves = line(&start, "e4 e5 Nf3 Nc6");
        let mut snapshots = Snapshots::default();
        snapshots.push_pieces(1, pieces(&start, "e4 e5", &[Square::G1]));
        // The h2 pawn read gone for one scan, there before and after.
        snapshots.push_pieces(2, pieces(&start, "e4 e5", &[Square::G1, Square::H2]));
        snapshots.push_pieces(3, pieces(&start, "e4 e5 Nf3 Nc6", &[]));
        assert!(!snapshots.allow_pieces(&start, &moves, 0));
        let repaired = snapshots.without_pieces_caught_gone(0);
        assert!(repaired.allow_pieces(&start, &moves, 0));
        // The g1 knight, gone in the second scan and still gone (on f3) in
        // the third, is not put back; nor is anything in the last scan.
        assert_eq!(repaired.pieces[1].1[Square::G1.to_usize()], None);
        let mut last = Snapshots::default();
        last.push_pieces(1, pieces(&start, "e4 e5", &[]));
        last.push_pieces(2, pieces(&start, "e4 e5", &[Square::H2]));
        let kept = last.without_pieces_caught_gone(0);
        assert_eq!(kept.pieces[1].1[Square::H2.to_usize()], None);
    }

    #[test]
    fn a_line_that_needs_no_slide_beats_one_of_as_many_moves_that_does() {
        // After 1.d4 a6 2.d5, a scan shows Black's e-pawn on e6, the next
        // one taken there by the d5 pawn. 2...e6 3.dxe6 passes through the
        // first scan as it stands; 2...e5 3.dxe6 (en passant) only with the
        // pawn caught on e6 on its way to e5, a slide (1) for nothing.
        let pos = position("rnbqkbnr/1ppppppp/p7/3P4/8/8/PPP1PPPP/RNBQKBNR b KQkq - 0 2");
        let mut snapshots = Snapshots::default();
        snapshots.push_pieces(1, pieces(&pos, "e6", &[]));
        snapshots.push_pieces(2, pieces(&pos, "e6 dxe6", &[]));
        let (plain, slid) = (line(&pos, "e6 dxe6"), line(&pos, "e5 dxe6"));
        assert!(snapshots.allow_pieces_sliding(&pos, &slid, 0));
        assert!(!snapshots.allow_pieces(&pos, &slid, 0));
        assert_eq!(
            snapshots.through_pieces(&pos, &[slid.clone(), plain.clone()], 0),
            vec![plain]
        );
    }

    #[test]
    fn a_snapshot_no_candidate_explains_is_no_evidence() {
        let start = Chess::default();
        let first = line(&start, "e4 e5 Nf3 Nc6");
        let other = line(&start, "e4 Nc6 Nf3 e5");
        let mut snapshots = Snapshots::default();
        snapshots.push_pieces(1, pieces(&start, "e4 e5", &[Square::G1]));
        // The h2 pawn read gone for one scan: no line moves it.
        snapshots.push_pieces(2, pieces(&start, "e4 e5", &[Square::G1, Square::H2]));
        snapshots.push_pieces(3, pieces(&start, "e4 e5 Nf3 Nc6", &[]));
        let lines = vec![first.clone(), other];
        assert_eq!(
            snapshots.through_pieces(&start, &lines, 0),
            vec![first.clone()]
        );
        assert!(!snapshots.allow_pieces(&start, &first, 0));
    }

    #[test]
    fn a_scan_that_showed_a_position_of_the_line_is_found() {
        let start = Chess::default();
        let moves = line(&start, "e4 e5 Bc4 Bc5 Qh5");
        let mut snapshots = Snapshots::default();
        snapshots.push_pieces(1, pieces(&start, "e4 e5 Bc4 Bc5", &[]));
        snapshots.push_pieces(2, pieces(&start, "e4 e5 Bc4 Bc5 Qh5", &[]));
        assert_eq!(snapshots.shown_exactly(&start, &moves, 0), Some(4));
        // Not a scan before the record's position.
        assert_eq!(snapshots.shown_exactly(&start, &moves, 1), None);
        // Nor the last scan, the one being read.
        let mut last = Snapshots::default();
        last.push_pieces(1, pieces(&start, "e4 e5 Bc4 Bc5 Qh5", &[]));
        assert_eq!(last.shown_exactly(&start, &moves, 0), None);
    }

    #[test]
    fn a_move_seen_in_a_snapshot_before_its_turn_rules_the_line_out() {
        // After 1.e4 c5 2.Nf3 d6 3.d4 cxd4 the snapshots show the knight
        // gone from f3, then ...e5 with White's other knight in the hand,
        // then on c3: 4.Nxd4 e5 5.Nc3. The same last snapshot is also
        // 4.Nc3 e5 5.Nxe5, which would have shown b1 empty before f3.
        let pos = position("rnbqkbnr/pp2pppp/3p4/8/3pP3/5N2/PPP2PPP/RNBQKB1R w KQkq - 0 4");
        let mut s = Snapshots::default();
        s.push(1, pos.board().occupied());
        s.push(2, occupancy(&pos, "Nxd4"));
        s.push(3, occupancy(&pos, "Nxd4 e5").without(Square::B1));
        s.push(4, occupancy(&pos, "Nxd4 e5 Nc3"));
        assert_eq!(
            occupancy(&pos, "Nxd4 e5 Nc3"),
            occupancy(&pos, "Nc3 e5 Nxe5")
        );
        assert!(s.allow(&pos, &line(&pos, "Nxd4 e5 Nc3"), 0, Bitboard::EMPTY));
        assert!(!s.allow(&pos, &line(&pos, "Nc3 e5 Nxe5"), 0, Bitboard::EMPTY));
        // Snapshots before the record's position say nothing of the line.
        assert!(s.allow(&pos, &line(&pos, "Nc3 e5 Nxe5"), 3, Bitboard::EMPTY));
    }

    #[test]
    fn only_a_position_shown_exactly_pins_the_moves_before_the_last_snapshot() {
        // 4.Nxd4 e5 5.Nc3 after 3...cxd4, as in the test above.
        let pos = position("rnbqkbnr/pp2pppp/3p4/8/3pP3/5N2/PPP2PPP/RNBQKB1R w KQkq - 0 4");
        let moves = line(&pos, "Nxd4 e5 Nc3");
        let last = occupancy(&pos, "Nxd4 e5 Nc3");
        // The snapshot before the last showed the position after 4...e5:
        // the last one shows one move only.
        let mut s = Snapshots::default();
        s.push(1, occupancy(&pos, "Nxd4 e5"));
        s.push(2, last);
        assert_eq!(s.plies_shown_last(&pos, &moves, 0, Bitboard::EMPTY), 1);
        // It showed 4...e5 with the knight already lifted from b1: a hand
        // that only took a piece off pins the position as well.
        let mut s = Snapshots::default();
        s.push(1, occupancy(&pos, "Nxd4 e5").without(Square::B1));
        s.push(2, last);
        assert_eq!(s.plies_shown_last(&pos, &moves, 0, Bitboard::EMPTY), 1);
        // It showed c3 filled with b1 still full: the order allows it (the
        // knight put down before it was seen lifted), but a square filled
        // out of turn may be a blip, so it pins nothing and all three rest
        // on the last snapshot.
        let mut s = Snapshots::default();
        s.push(1, occupancy(&pos, "Nxd4 e5").with(Square::C3));
        s.push(2, last);
        assert!(s.allow(&pos, &moves, 0, Bitboard::EMPTY));
        assert_eq!(s.plies_shown_last(&pos, &moves, 0, Bitboard::EMPTY), 3);
        // With no snapshot before it, the last one shows them all.
        let mut s = Snapshots::default();
        s.push(1, last);
        assert_eq!(s.plies_shown_last(&pos, &moves, 0, Bitboard::EMPTY), 3);
    }

    #[test]
    fn no_stretch_of_more_than_two_moves_on_one_snapshot_is_trusted() {
        let pos = Chess::default();
        let moves = line(&pos, "e4 e5 Nf3 Nc6 Bb5");
        // One snapshot after 1.e4 e5, one after 2.Nf3 Nc6 3.Bb5: the last
        // three moves rest on the last snapshot alone.
        let mut s = Snapshots::default();
        s.push(1, occupancy(&pos, "e4 e5"));
        s.push(2, occupancy(&pos, "e4 e5 Nf3 Nc6 Bb5"));
        assert_eq!(s.trusted_plies(&pos, &moves, 0, Bitboard::EMPTY, 2), 2);
        // With 2...Nc6 seen too (the bishop already lifted), every stretch
        // is two moves or fewer.
        let mut s2 = Snapshots::default();
        s2.push(1, occupancy(&pos, "e4 e5"));
        s2.push(2, occupancy(&pos, "e4 e5 Nf3 Nc6").without(Square::F1));
        s2.push(3, occupancy(&pos, "e4 e5 Nf3 Nc6 Bb5"));
        assert_eq!(s2.trusted_plies(&pos, &moves, 0, Bitboard::EMPTY, 2), 5);
        // The first stretch already too long: nothing is trusted.
        let mut s3 = Snapshots::default();
        s3.push(1, occupancy(&pos, "e4 e5 Nf3"));
        s3.push(2, occupancy(&pos, "e4 e5 Nf3 Nc6 Bb5"));
        assert_eq!(s3.trusted_plies(&pos, &moves, 0, Bitboard::EMPTY, 2), 0);
    }

    #[test]
    fn three_moves_one_snapshot_showed_exactly_are_trusted_once_the_next_goes_on() {
        let pos = Chess::default();
        let moves = line(&pos, "e4 e5 Nf3 Nc6 Bb5");
        // 1.e4 e5 2.Nf3 shown exactly by one snapshot, 2...Nc6 by the next.
        let mut s = Snapshots::default();
        s.push(1, occupancy(&pos, "e4 e5 Nf3"));
        s.push(2, occupancy(&pos, "e4 e5 Nf3 Nc6"));
        assert_eq!(s.trusted_plies(&pos, &moves, 0, Bitboard::EMPTY, 2), 0);
        assert_eq!(s.followed_plies(&pos, &moves, 0, Bitboard::EMPTY, 2), 4);
        // Nothing after the three moves yet: they wait.
        let mut alone = Snapshots::default();
        alone.push(1, occupancy(&pos, "e4 e5 Nf3"));
        assert_eq!(alone.followed_plies(&pos, &moves, 0, Bitboard::EMPTY, 2), 0);
        // Shown only with the next move begun (the g8 knight lifted), not
        // as the three moves leave the board: a hand in motion.
        let mut lifted = Snapshots::default();
        lifted.push(1, occupancy(&pos, "e4 e5 Nf3").without(Square::B8));
        lifted.push(2, occupancy(&pos, "e4 e5 Nf3 Nc6"));
        assert_eq!(
            lifted.followed_plies(&pos, &moves, 0, Bitboard::EMPTY, 2),
            0
        );
        // Four moves on one snapshot are too many, followed or not.
        let mut four = Snapshots::default();
        four.push(1, occupancy(&pos, "e4 e5 Nf3 Nc6"));
        four.push(2, occupancy(&pos, "e4 e5 Nf3 Nc6 Bb5"));
        assert_eq!(four.followed_plies(&pos, &moves, 0, Bitboard::EMPTY, 2), 0);
    }

    #[test]
    fn snapshots_may_skip_positions_and_catch_hands() {
        let pos = Chess::default();
        let mut s = Snapshots::default();
        s.push(1, occupancy(&pos, "e4").without(Square::E7));
        s.push(2, occupancy(&pos, "e4 e5 Nf3"));
        assert!(s.allow(&pos, &line(&pos, "e4 e5 Nf3"), 0, Bitboard::EMPTY));
        // Out of order: the knight cannot come out before 1...e5 was made
        // if the pawn was seen in the hand first.
        s.clear();
        s.push(1, occupancy(&pos, "e4").without(Square::G1));
        s.push(2, occupancy(&pos, "e4 e5 Nf3"));
        assert!(!s.allow(&pos, &line(&pos, "e4 e5 Nf3"), 0, Bitboard::EMPTY));
    }

    #[test]
    fn a_scan_of_a_piece_in_two_places_costs_a_blip() {
        // After 1.e4 e5, the queen caught on h5 with d1 still full is no
        // instant of 2.Qh5 being made: a piece is in one place at a time,
        // so the line passes only with a blip there (3).
        let pos = Chess::default();
        let before = occupancy(&pos, "e4 e5");
        let mut start = pos.clone();
        for m in line(&pos, "e4 e5") {
            start.play_unchecked(m);
        }
        let mut s = Snapshots::default();
        s.push(1, before.with(Square::H5));
        s.push(2, occupancy(&pos, "e4 e5 Qh5 Nc6"));
        let moves = line(&start, "Qh5 Nc6");
        assert_eq!(
            s.cost(&start, &moves, 0, Bitboard::EMPTY, false),
            Some(BLIP)
        );
        assert!(s.allow(&start, &moves, 0, Bitboard::EMPTY));
        // The queen lifted, or already on h5 with d1 empty, costs nothing.
        s.clear();
        s.push(1, before.without(Square::D1));
        s.push(2, occupancy(&pos, "e4 e5 Qh5 Nc6"));
        assert_eq!(s.cost(&start, &moves, 0, Bitboard::EMPTY, false), Some(0));
        // A capture has two pieces: both squares full is its position
        // before, the captured piece still there.
        let mut start = pos.clone();
        for m in line(&pos, "e4 d5") {
            start.play_unchecked(m);
        }
        let mut s = Snapshots::default();
        s.push(1, occupancy(&pos, "e4 d5"));
        s.push(2, occupancy(&pos, "e4 d5 exd5"));
        assert_eq!(
            s.cost(&start, &line(&start, "exd5"), 0, Bitboard::EMPTY, false),
            Some(0)
        );
    }

    #[test]
    fn a_piece_caught_on_its_path_just_before_a_hand_is_a_slide() {
        // 1.d4 with the pawn caught on d3, then the position after it,
        // then Black's g8 knight lifted: the d3 scan is a slide (1), as
        // the scan after it (the first of the hand's) shows it moved on.
        let pos = Chess::default();
        let mut s = Snapshots::default();
        s.push(
            1,
            pos.board().occupied().without(Square::D2).with(Square::D3),
        );
        s.push(2, occupancy(&pos, "d4"));
        s.push(3, occupancy(&pos, "d4").without(Square::G8));
        let moves = line(&pos, "d4");
        let cost = |slides| s.cost_sliding(&pos, &moves, (0, Bitboard::EMPTY), true, slides);
        assert_eq!(cost(Sliding::Any), Some(SLIDE));
        assert_eq!(cost(Sliding::No), None);
    }

    #[test]
    fn a_blip_one_snapshot_caught_is_forgotten_there_only() {
        let pos = Chess::default();
        let start = pos.board().occupied();
        let mut s = Snapshots::default();
        s.push(1, start);
        s.push(2, start.without(Square::C2));
        assert_eq!(s.changed_last(), Bitboard::from_square(Square::C2));
        assert_eq!(s.next_after(1), Some(start.without(Square::C2)));
        assert_eq!(s.next_after(2), None);
        s.push(3, occupancy(&pos, "e4"));
        // The c2 pawn read gone at scan 2 was a blip: the line 1.e4 now
        // passes through every snapshot.
        assert!(!s.allow(&pos, &line(&pos, "e4"), 0, Bitboard::EMPTY));
        s.forget_blips(2, Bitboard::from_square(Square::C2));
        assert!(s.allow(&pos, &line(&pos, "e4"), 0, Bitboard::EMPTY));
        assert_eq!(s.last(), Some((3, occupancy(&pos, "e4"))));
    }

    #[test]
    fn only_a_square_filled_for_one_scan_is_an_odd_fill() {
        let pos = Chess::default();
        let start = pos.board().occupied();
        let mut s = Snapshots::default();
        s.push(1, start);
        s.push(2, start.with(Square::E4).without(Square::C2));
        assert_eq!(s.odd_fills(2), Bitboard::EMPTY, "no next scan yet");
        s.push(3, start);
        // e4 filled for one scan; c2 emptied for one scan is left alone
        // (a captured piece taken off looks the same).
        assert_eq!(s.odd_fills(2), Bitboard::from_square(Square::E4));
        assert_eq!(s.odd_fills(1), Bitboard::EMPTY);
        assert_eq!(s.odd_fills(3), Bitboard::EMPTY);
    }

    #[test]
    fn odd_squares_say_which_squares_no_piece_left_since() {
        use Square::*;
        let record = Chess::default().board().occupied();
        let mut s = Snapshots::default();
        // c7 caught empty for one scan, then d2 empty for one scan while
        // g1 is emptied for good.
        s.push(1, record.without(C7));
        s.push(2, record.without(D2).without(G1));
        s.push(3, record.without(G1));
        let odd = s.without_odd_squares(0, record, Bitboard::FULL).unwrap();
        assert_eq!(odd.empties, Bitboard::from(C7) | Bitboard::from(D2));
        assert_eq!(odd.fills, Bitboard::EMPTY);
        // From the scan after the first odd one on, d2 and g1 were empty.
        assert_eq!(odd.stayed, record.without(D2).without(G1));
        assert!(
            odd.repaired
                .list
                .iter()
                .all(|&(_, shown)| shown.contains(C7))
        );
        // Each scan that caught squares empty, with what it shows once
        // they are refilled.
        assert_eq!(
            odd.caught,
            vec![
                (Bitboard::from(C7), record),
                (Bitboard::from(D2), record.without(G1)),
            ]
        );
        // Only the squares asked for are read as blips.
        let odd = s
            .without_odd_squares(0, record, Bitboard::from(C7))
            .unwrap();
        assert_eq!(odd.empties, Bitboard::from(C7));
        assert!(!odd.repaired.list[1].1.contains(D2));
        assert_eq!(
            s.without_odd_squares(0, record, Bitboard::from(H7))
                .map(|o| o.empties),
            None
        );
    }

    #[test]
    fn plies_shown_before_later_scans_went_on_are_shown() {
        // 1.e4 e5 recorded once a scan shows 2.Nf3 too: each stood in a
        // scan of its own before that one. Against every scan, the line
        // does not pass (the last is past it): all of it would be unshown.
        let pos = Chess::default();
        let moves = line(&pos, "e4 e5");
        let mut snapshots = Snapshots::default();
        snapshots.push(1, occupancy(&pos, "e4"));
        snapshots.push(2, occupancy(&pos, "e4 e5"));
        snapshots.push(3, occupancy(&pos, "e4 e5 Nf3"));
        assert_eq!(snapshots.unshown_plies(&pos, &moves, 0), vec![1, 2]);
        assert!(snapshots.unshown_plies_so_far(&pos, &moves, 0).is_empty());
        // A ply no scan showed stays unshown.
        let mut skipped = Snapshots::default();
        skipped.push(1, occupancy(&pos, "e4 e5"));
        skipped.push(2, occupancy(&pos, "e4 e5 Nf3"));
        assert_eq!(skipped.unshown_plies_so_far(&pos, &moves, 0), vec![1]);
    }

    #[test]
    fn a_ply_whose_changes_no_scan_saw_is_traceless() {
        // After 14.Kg1 a scan of b2 empty: 14...Bxc3 15.b4 passes through
        // it with 14...Bxc3 unshown, and b4, the one square it changed,
        // reads full again at that scan (c3 stays full: a capture). The
        // same ply with 15.bxc3 after it left b4 empty: a trace.
        let pos = position("2kr3r/ppp2ppp/2q1pn2/8/1b1P1B2/2N1Q2P/PPP3P1/R2R2K1 b - - 3 14");
        let mut blip = Snapshots::default();
        blip.push(1, pos.board().occupied().without(Square::B2));
        let refilled = line(&pos, "Bxc3 b4");
        assert_eq!(blip.unshown_plies_so_far(&pos, &refilled, 0), vec![1]);
        assert_eq!(blip.traceless_plies(&pos, &refilled, 0), 1);
        let mut taken = Snapshots::default();
        taken.push(1, occupancy(&pos, "Bxc3 bxc3"));
        let recaptured = line(&pos, "Bxc3 bxc3");
        assert_eq!(taken.unshown_plies_so_far(&pos, &recaptured, 0), vec![1]);
        assert_eq!(taken.traceless_plies(&pos, &recaptured, 0), 0);
    }
}
