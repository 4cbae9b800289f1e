//! Candidates followed on an event board. Lines listed with `out_of_sync`
//! on a board that reports each square (a capture an occupancy board
//! never showed on its square: `Qxc4`, `Qxa7` and `Qxg7` look the same) all
//! explain the board; the moves played after them tell them apart, since
//! a move legal after one may be illegal after another (the queen moved
//! on from c4). Each line is a hypothesis: every settled state extends it
//! by the moves whose squares the board reported since the line's end
//! position stood (see docs/design/reconstruction.md, the tracker). A line
//! is kept as it stands too (a hand in the air, or a move slid on), until
//! the others are two plies past it: its player's move was completed by
//! the opponent's (Art. 6.2.1) and it explains neither. Once the lines
//! left are stages of one story, the moves completed in it are recorded;
//! its last move is read again from the record like any move.

use shakmaty::{Bitboard, Chess, Color, Move, Position};

use super::{Engine, Reading};
use crate::{
    event::Millis,
    matcher::{admits_line, distinct, move_squares, placed_squares},
    resync::{Limits, SyncState},
    sensed::SensedBoard,
};

/// The most moves one settled state may extend a line by: a player's move
/// and the opponent's reply (a capture never shown on its square is
/// completed only by the reply).
const MOST_PLIES: usize = 2;

/// What following the candidates did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Follow {
    /// Not followed here: the reading goes on as before.
    Not,
    /// The lines were followed on; nothing certain yet.
    Followed,
    /// Moves all the lines agree on were recorded: read the state again.
    Recorded,
}

impl Engine {
    /// Follows the listed candidates through the settled state `reading`
    /// was read from (a board reporting square events only).
    pub(super) fn follow_candidates(&mut self, reading: &Reading, made_at: Millis) -> Follow {
        // After a dump too: lines listed from it are its hypotheses, and
        // the moves made since are seen square by square (issue 34).
        if self.observation.scanned()
            || self.hypotheses.state != SyncState::Ambiguous
            || self.hypotheses.lines.is_empty()
            || self.game().is_over()
            || self.phase.is_restoring()
            || !matches!(
                reading,
                Reading::Wait | Reading::Hand | Reading::Ambiguous(_)
            )
        {
            return Follow::Not;
        }
        let now = self.settle.basis();
        let fallback = self.game().basis(self.game().ply());
        let pos = self.game().position().clone();
        // A capture the board never showed on its square is the costlier
        // story: weighed only when no line explains the state without one.
        let tiers: &[bool] = if self.sensed.identifies_all() {
            &[false]
        } else {
            &[false, true]
        };
        let mut next: Vec<(Vec<Move>, u64)> = Vec::new();
        for &unseen in tiers {
            next.clear();
            let mut extended = false;
            for line in &self.hypotheses.lines {
                let since = self.hypotheses.since_of(line).unwrap_or(fallback);
                let Some(end) = play(&pos, line) else {
                    continue;
                };
                // The line as it stands: the board shows it, or a hand is
                // at work after it.
                next.push((line.clone(), since));
                if self.sensed.shows_position(&end) {
                    continue;
                }
                for more in extensions(&end, &self.sensed, since, unseen) {
                    extended = true;
                    next.push(([line.clone(), more].concat(), now));
                }
            }
            if extended {
                break;
            }
            if unseen == *tiers.last().unwrap_or(&false) {
                return Follow::Not;
            }
        }
        let longest = next.iter().map(|(l, _)| l.len()).max().unwrap_or(0);
        next.retain(|(line, _)| line.len() + 2 > longest);
        // Shortest first, each line once (the first way it was reached).
        next.sort_by_key(|(line, _)| line.len());
        let mut seen: Vec<Vec<Move>> = Vec::new();
        next.retain(|(line, _)| {
            let new = !seen.contains(line);
            if new {
                seen.push(line.clone());
            }
            new
        });
        // The tracker's budget (docs/design/reconstruction.md): more lines
        // wait for the board to narrow them (a bounded, deterministic set).
        if next.len() > Limits::default().max_candidates {
            return Follow::Not;
        }
        if let Some(recorded) = self.record_agreed(&next, made_at) {
            return recorded;
        }
        self.hypotheses.lines = next.iter().map(|(l, _)| l.clone()).collect();
        self.hypotheses.since = next;
        Follow::Followed
    }

    /// The input ended: no hand is in the air, so the lines are the ones
    /// whose position the board shows as it stands; one such is recorded
    /// whole (the game's end reads the board as it stands).
    pub(super) fn follow_at_end(&mut self) {
        if self.observation.scanned()
            || self.hypotheses.state != SyncState::Ambiguous
            || self.game().is_over()
            || self.phase.is_restoring()
        {
            return;
        }
        let pos = self.game().position().clone();
        let standing: Vec<&Vec<Move>> = self
            .hypotheses
            .lines
            .iter()
            .filter(|line| play(&pos, line).is_some_and(|end| self.sensed.shows_position(&end)))
            .collect();
        if let [line] = standing[..] {
            let (line, basis) = (line.clone(), self.settle.basis());
            self.hypotheses.clear();
            self.record(&line, self.settle.since(), basis);
        }
    }

    /// When every line left is a stage of the longest one, the moves of
    /// the longest line's stage before its last (whose end the board
    /// showed) are certain: recorded, the candidates cleared.
    fn record_agreed(&mut self, lines: &[(Vec<Move>, u64)], made_at: Millis) -> Option<Follow> {
        let (longest, _) = lines.last()?;
        if !lines.iter().all(|(l, _)| longest.starts_with(l)) {
            return None;
        }
        let (stage, basis) = lines
            .iter()
            .rev()
            .find(|(l, _)| l.len() < longest.len() && !l.is_empty())?;
        let (stage, basis) = (stage.clone(), *basis);
        self.hypotheses.clear();
        self.record(&stage, made_at, basis);
        Some(Follow::Recorded)
    }
}

/// The position after `line` from `pos`, if every move is legal there.
pub(super) fn play(pos: &Chess, line: &[Move]) -> Option<Chess> {
    let mut p = pos.clone();
    for &m in line {
        if !p.is_legal(m) {
            return None;
        }
        p.play_unchecked(m);
    }
    Some(p)
}

/// The lines of one or two legal moves from `pos` that explain the board:
/// its occupancy and identities after them, every square they change
/// reported since event `since`, except, if `unseen`, the square of a
/// capture followed by a reply (an occupancy board may never show it: the
/// capturing piece took the captured one's place faster than it reports).
/// The fewest plies that do.
fn extensions(pos: &Chess, sensed: &SensedBoard, since: u64, unseen: bool) -> Vec<Vec<Move>> {
    let touched = sensed.touched_since(since);
    if touched.count() < 2 {
        return Vec::new();
    }
    let ctx = Search {
        sensed,
        touched,
        unseen,
    };
    let mut found = Vec::new();
    for plies in 1..=MOST_PLIES {
        ctx.search(pos, plies, &mut Vec::new(), &mut found);
        found.retain(|line| admitted(pos, sensed, since, touched, line));
        if !found.is_empty() {
            break;
        }
    }
    distinct(found)
}

/// Whether the reports since `since` could have made `line` move by move,
/// as the matcher requires of a move read from the record (a capture's
/// piece put down after the capturing piece was lifted; a square filled
/// twice emptied in between): a queen put on f1 and taken there by the
/// king needs two placements on f1. A first capture whose square was never
/// reported is taken as made unseen, the rest held to that.
fn admitted(
    pos: &Chess,
    sensed: &SensedBoard,
    since: u64,
    touched: Bitboard,
    line: &[Move],
) -> bool {
    match line {
        [first, rest @ ..] if first.is_capture() && !touched.contains(first.to()) => {
            let mut after = pos.clone();
            after.play_unchecked(*first);
            let turn = after.turn();
            admits_line(&after, sensed, since, rest)
                && rest
                    .first()
                    .is_none_or(|&m| !placed_squares(m, turn).contains(first.to()))
        }
        _ => admits_line(pos, sensed, since, line),
    }
}

/// What a search for extensions looks for.
struct Search<'a> {
    sensed: &'a SensedBoard,
    touched: Bitboard,
    /// A capture followed by a move may have left its square unreported.
    unseen: bool,
}

impl Search<'_> {
    fn search(&self, pos: &Chess, plies: usize, path: &mut Vec<Move>, found: &mut Vec<Vec<Move>>) {
        let (sensed, turn, last) = (self.sensed, pos.turn(), plies == 1);
        for m in pos.legal_moves() {
            let mut squares = move_squares(m, turn);
            // A capture the reply completed may have left its square unseen.
            if self.unseen && !last && m.is_capture() && !m.is_en_passant() {
                squares = squares.without(m.to());
            }
            if !squares.is_subset(self.touched) || !in_order(sensed, path, squares, turn) {
                continue;
            }
            let mut after = pos.clone();
            after.play_unchecked(m);
            if !last {
                path.push(m);
                self.search(&after, plies - 1, path, found);
                path.pop();
            } else if sensed.shows_position(&after) {
                let mut line = path.clone();
                line.push(m);
                found.push(line);
            }
        }
    }
}

/// Whether a move changing `squares` can come after the moves of `path`
/// (played from a position where `turn` moves after them) in the order
/// the board reported them: the last report on each earlier move's squares
/// comes before the last report on this one's. A piece's later squares are
/// not an earlier move's: a queen dragged over f4 to d6 before the
/// opponent's knight moved is no `Qf4`, knight move, `Qd6`.
fn in_order(sensed: &SensedBoard, path: &[Move], squares: Bitboard, turn: Color) -> bool {
    let last = |squares: Bitboard| {
        squares
            .into_iter()
            .map(|sq| sensed.last_lift(sq).max(sensed.last_place(sq)))
            .max()
            .unwrap_or(0)
    };
    let mut mover = if path.len().is_multiple_of(2) {
        turn
    } else {
        !turn
    };
    path.iter().all(|&m| {
        let earlier = move_squares(m, mover) & !squares;
        mover = !mover;
        last(earlier) < last(squares)
    })
}
