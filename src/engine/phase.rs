//! The engine's phase: whether the record and the board are in step, and
//! if not, what the engine waits for. Every change of phase is a method
//! here.

use shakmaty::{Bitboard, Color};

use super::illegal::Attempt;
use crate::event::Millis;

/// A settled board state that no move explains.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unexplained {
    /// When the state appeared.
    pub since: Millis,
    /// Whether the arbiter was told pieces are displaced.
    pub told: bool,
    /// The squares where the board differed from the game position then.
    pub differ: Bitboard,
}

/// Where the engine stands between the record and the board.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Phase {
    /// The board shows the game position, or a move in progress from it.
    #[default]
    Playing,
    /// The settled board shows a state no move explains: pieces displaced,
    /// or a move not finished (Art. 7.4, 7.6).
    Unexplained(Unexplained),
    /// An irregularity waits for the position before it to be restored, or a
    /// legal move from it (Art. 7.5.1).
    Restoring {
        /// The player who committed it.
        offender: Color,
        /// The illegal move as the board showed it, and when it was made.
        attempt: Option<(Attempt, Millis)>,
        /// What the board showed when the irregularity came: settled by the
        /// next reading.
        displaced: Option<Unexplained>,
    },
}

impl Phase {
    /// The unexplained board state, if the board shows one.
    pub fn unexplained(&self) -> Option<Unexplained> {
        match self {
            Phase::Playing => None,
            Phase::Unexplained(u) => Some(*u),
            Phase::Restoring { displaced, .. } => *displaced,
        }
    }

    /// Whether an irregularity waits for its restoration.
    pub fn is_restoring(&self) -> bool {
        matches!(self, Phase::Restoring { .. })
    }

    /// An irregularity by `offender`: the position before it must be
    /// restored.
    pub fn irregularity(&mut self, offender: Color, attempt: Option<(Attempt, Millis)>) {
        *self = Phase::Restoring {
            offender,
            attempt,
            displaced: self.unexplained(),
        };
    }

    /// The irregularity is over (the position restored, play continued from
    /// the board, or the arbiter corrected the record): returns who
    /// committed it.
    pub fn end_irregularity(&mut self) -> Option<Color> {
        let Phase::Restoring {
            offender,
            displaced,
            ..
        } = *self
        else {
            return None;
        };
        *self = displaced.map_or(Phase::Playing, Phase::Unexplained);
        Some(offender)
    }

    /// A settled state was read at `at`, and a move or the game position
    /// explains it or not. Returns whether the arbiter, told of displaced
    /// pieces, must now be told the position is back.
    /// `differ`: the squares where the board differs from the game
    /// position.
    pub fn settled(&mut self, explained: bool, at: Millis, differ: Bitboard) -> bool {
        match (explained, self.unexplained()) {
            (true, Some(u)) => {
                self.set_unexplained(None);
                u.told
            }
            (false, None) => {
                self.set_unexplained(Some(Unexplained {
                    since: at,
                    told: false,
                    differ,
                }));
                false
            }
            // A square that made the state unexplained is as the game has
            // it again: that state is gone (a blip a scan caught), and this
            // one stands from now. Pieces left displaced keep their squares
            // differing, whatever else changes.
            (false, Some(u)) if !u.told && !u.differ.is_subset(differ) => {
                self.set_unexplained(Some(Unexplained {
                    since: at,
                    told: false,
                    differ,
                }));
                false
            }
            _ => false,
        }
    }

    /// When the arbiter is to be told of displaced pieces, if nothing
    /// explains the board by then (an irregularity already reported waits
    /// for its own restoration).
    pub fn displaced_deadline(&self, displaced_ms: Millis) -> Option<Millis> {
        match self {
            Phase::Unexplained(Unexplained {
                since, told: false, ..
            }) => Some(since.saturating_add(displaced_ms)),
            _ => None,
        }
    }

    /// The settled state is a move in progress (a piece in the hand): not
    /// displaced pieces, so an unexplained state the arbiter was not told
    /// of is forgotten; one he was told of stays until the position or a
    /// move is on the board again.
    pub fn move_in_progress(&mut self) {
        if self.unexplained().is_some_and(|u| !u.told) {
            self.set_unexplained(None);
        }
    }

    /// The arbiter was told of displaced pieces.
    pub fn told_displaced(&mut self) {
        if let Phase::Unexplained(u) = self {
            u.told = true;
        }
    }

    fn set_unexplained(&mut self, to: Option<Unexplained>) {
        match self {
            Phase::Restoring { displaced, .. } => *displaced = to,
            _ => *self = to.map_or(Phase::Playing, Phase::Unexplained),
        }
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::Square;

    use super::*;

    fn on(squares: &[Square]) -> Bitboard {
        squares.iter().copied().collect()
    }

    #[test]
    fn a_state_whose_odd_square_is_back_waits_from_the_next_one() {
        let mut phase = Phase::Playing;
        // e6 caught full, then 41.Rb1 shown with e4 caught full instead.
        phase.settled(false, 1000, on(&[Square::E6]));
        phase.settled(false, 2400, on(&[Square::B7, Square::B1, Square::E4]));
        assert_eq!(phase.displaced_deadline(2000), Some(4400));
    }

    #[test]
    fn pieces_left_displaced_wait_from_when_they_were_first_seen() {
        let mut phase = Phase::Playing;
        // A piece knocked onto e5, then a hand lifts the d7 pawn too.
        phase.settled(false, 1000, on(&[Square::E4, Square::E5]));
        phase.settled(false, 2400, on(&[Square::E4, Square::E5, Square::D7]));
        assert_eq!(phase.displaced_deadline(2000), Some(3000));
    }
}
