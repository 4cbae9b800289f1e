//! Scans after an outage on an occupancy scanner, read through the dump.
//! The scan after `reconnected` is a dump: the position alone after any
//! number of unseen plies (docs/design/reconstruction.md, the observation
//! models), never a hand at work nor a piece in two places. Every line the
//! later scans are read by, from the record's position, passes through it
//! exactly: a line that reaches the dump's squares only with a piece off
//! (a capture's victim lifted) or a piece in two places (a blip, 3) was not
//! played, however few plies it has. So the fewest plies that pass through
//! the dump are searched, up to two plies past the shortest line to the
//! scan; with none within reach the board waits (`searching`): the lines
//! that miss the dump are not listed, and no accusation is made.

use shakmaty::{Bitboard, Chess, Move, Position};

use super::Engine;
use crate::{
    matcher::occupancy_after,
    resync::{Limits, Resync, Target, resync},
};

/// Plies past the shortest line to the scan searched for lines through
/// the dump: each is inferred (2), so a line longer still is past the
/// margin of any line found sooner.
const PAST_SHORTEST: usize = 2;

/// Lines of one length collected before the dump narrows them: an
/// occupancy scan several plies on is reached by many orders of moves, few
/// of which pass through the dump.
const THROUGH_DUMP_CANDIDATES: usize = 256;

impl Engine {
    /// Whether the record has not caught up with the dump of an occupancy
    /// scanner yet, so that the lines read from its position must pass
    /// through the dump.
    pub(super) fn reading_through_scan_dump(&self, occupancy: bool) -> bool {
        occupancy && self.unseen_since_reconnection() && self.unseen_since_dump()
    }

    /// The search's answer `found` (lines from `pos` to the last scan)
    /// narrowed to the lines that pass through the dump exactly and through
    /// the scans since (`Snapshots::allow`); failing them, the lines one or
    /// two plies longer that do. `Resync::OverBudget` when none is within
    /// reach: the board waits.
    pub(super) fn through_scan_dump(&self, pos: &Chess, found: Resync, target: &Target) -> Resync {
        let game = self.game();
        let since = game.basis(game.ply());
        let dump = self.dump.unseen;
        let fits = |line: &Vec<Move>| {
            passes_dump(pos, line, dump) && self.snapshots.allow(pos, line, since, Bitboard::EMPTY)
        };
        let shortest = match &found {
            Resync::Unique(line) => line.len(),
            Resync::Candidates { lines, .. } => lines.iter().map(Vec::len).min().unwrap_or(0),
            Resync::None | Resync::OverBudget { .. } => return found,
        };
        let mut first = Some(found);
        for plies in shortest..=shortest + PAST_SHORTEST {
            // The first answer is searched again when capped: the lines
            // through the dump may be among those left uncounted.
            let answer = match first.take() {
                Some(Resync::Candidates { more: true, .. }) | None => {
                    let limits = Limits {
                        min_plies: plies,
                        max_plies: plies,
                        max_candidates: THROUGH_DUMP_CANDIDATES,
                        ..Limits::default()
                    };
                    resync(pos, target, &limits)
                }
                Some(answer) => answer,
            };
            let (lines, more) = match answer {
                Resync::Unique(line) => (vec![line], false),
                Resync::Candidates { lines, more } => (lines, more),
                Resync::None => continue,
                Resync::OverBudget { plies } => return Resync::OverBudget { plies },
            };
            let mut through: Vec<Vec<Move>> = lines.into_iter().filter(fits).collect();
            match through.len() {
                0 if !more => {}
                // Lines cut off by the candidates' cap may pass: wait.
                0 => return Resync::OverBudget { plies },
                1 if !more => return Resync::Unique(through.remove(0)),
                _ => {
                    return Resync::Candidates {
                        lines: through,
                        more,
                    };
                }
            }
        }
        Resync::OverBudget {
            plies: shortest + PAST_SHORTEST,
        }
    }
}

/// Whether `line`, played from `pos`, leaves the squares full that the
/// dump showed full (`dump`) after one of its moves (or before any).
fn passes_dump(pos: &Chess, line: &[Move], dump: Bitboard) -> bool {
    let mut occupied = pos.board().occupied();
    let mut turn = pos.turn();
    if occupied == dump {
        return true;
    }
    line.iter().any(|&m| {
        occupied = occupancy_after(occupied, m, turn);
        turn = !turn;
        occupied == dump
    })
}
