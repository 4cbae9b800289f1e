//! When moves are completed (Art. 6.2.1): by the clock, by the opponent
//! starting his move when there is no clock, by a later move. Clock presses
//! that show an irregularity start here too.

use shakmaty::{ByColor, Color, Position, Square};

use super::{
    BoardKind, Engine, GameEvent,
    scanned::{ScanReading, read_scan},
};
use crate::{
    event::{Millis, Seconds},
    game::Termination,
    matcher::{Explanation, explain},
};

/// What the engine knows of the clock.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Clock {
    /// A clock was pressed in this session.
    pub in_use: bool,
    /// A press by a player whose move the board did not show yet.
    pub pending_press: ByColor<bool>,
    /// How many moves the clock shows completed that the record does not
    /// hold yet: presses in turn, from the player to move's on (a press
    /// repeated by the same player counts once).
    pub presses_ahead: usize,
    /// The last times reported, White's and Black's.
    pub last: Option<(Seconds, Seconds)>,
    /// The player who pressed last (whose clock stands still).
    pub last_press: Option<Color>,
    /// The player and half-move of the last move a press made before the
    /// board showed it completed: a second press by him before anyone else
    /// moves or presses means the first came without a move (Art. 7.5.3).
    pub early_press: Option<(Color, usize)>,
    /// A press that completed a move the last scan may have caught
    /// sliding: who pressed, when, and the event of that scan. The move is
    /// completed as the next scan shows it (`scan_slide.rs`).
    pub slide_press: Option<super::scan_slide::SlidePress>,
    /// A press that found the mover's piece off its square and nothing
    /// put down, kept for the settle time (`hand_press.rs`).
    pub hand_press: Option<super::hand_press::HandPress>,
    /// A press that came while the square lifted just before it may be a
    /// blip, kept until the settle time tells (`blip_press.rs`).
    pub blip_press: Option<super::blip_press::BlipPress>,
}

/// The most squares a scan may have changed for each to be weighed as a
/// blip before a press is judged.
const MAX_BLIP_CANDIDATES: usize = 8;

impl Engine {
    pub(super) fn press(&mut self, color: Color, t: Millis) {
        self.settle_slide_press();
        self.clock.last_press = Some(color);
        let (turn, seq) = (self.game().position().turn(), self.seq);
        if let Some(u) = self.scan.unconfirmed.as_mut() {
            u.pressed(color, turn, seq);
        }
        let early = self.clock.early_press.take();
        let game = self.game();
        if game.is_over() {
            return;
        }
        let n = game.ply();
        if n > 0
            && game.mover(n) == color
            && game.moves()[n - 1].completed_at.is_none()
            // A press kept for the next scan already completed it: this one
            // is for a later move.
            && self.clock.slide_press.is_none()
        {
            if !self.defer_press_over_slide(color, t) {
                self.complete_all(t);
            }
        } else if self.config.arbiter
            && early == Some((color, n))
            && !self.phase.is_restoring()
            // The board is not ahead of the record: after an outage the
            // presses of the moves made meanwhile are lost, and the next
            // press is no second one.
            && self.board_at_record()
        {
            // He pressed with no move, moved, and pressed again: the move
            // stands, the first press is penalised.
            let message = format!(
                "{} pressed the clock without making a move, then made his move and pressed again (Art. 7.5.3: the first press is treated as an illegal move)",
                crate::event::side_name(color)
            );
            self.penalise(
                crate::alert::AlertKind::ClockWithoutMove,
                color,
                message,
                None,
                t,
                false,
            );
        } else if !self.keep_hand_press(color, t) {
            self.judge_press(color, t);
        }
    }

    /// A press by the player to move that the record's last move does not
    /// explain: a capture the board never showed on its square, an
    /// irregularity, or a move the board has not shown yet.
    pub(super) fn judge_press(&mut self, color: Color, t: Millis) {
        if !self.may_lag()
            && !self.phase.is_restoring()
            && self.press_completes_unseen_capture(color, t)
        {
            // The capture square never read empty: recorded above.
        } else if self.config.arbiter
            && !self.observation.scanned()
            && !self.may_lag()
            && !self.phase.is_restoring()
            && self.game().position().turn() == color
            && !self.sensed.shows_position(self.game().position())
            && self.moved_own_piece(color)
            && !self.unsettled_blip_may_explain(t)
        {
            self.completed_irregularity(color, t);
        } else {
            self.press_ahead_of_board(color);
        }
    }

    /// The board has not shown this player's move yet (boards report
    /// later than clocks, and a scanning board can be a ply or two
    /// behind, its last scan showing the piece still in the hand): it
    /// is completed as soon as the board shows it, or found illegal
    /// then (`pressed_before_scan`). A press by the player whose
    /// move is already completed, with the board not behind the
    /// clock, announces nothing: it must not complete his next move.
    pub(super) fn press_ahead_of_board(&mut self, color: Color) {
        let turn = self.game().position().turn();
        if turn == color || self.clock.pending_press[turn] {
            self.clock.pending_press[color] = true;
        }
        let next = if self.clock.presses_ahead.is_multiple_of(2) {
            turn
        } else {
            !turn
        };
        if color == next {
            self.clock.presses_ahead += 1;
        }
    }

    /// On a board that reports by scans, a press came before the scan that
    /// shows the move: the first state read after it that neither a move
    /// nor a move in progress explains is the illegal move the press
    /// completed (Art. 7.5.1).
    pub(super) fn pressed_before_scan(&mut self, t: Millis) {
        let game = self.game();
        let turn = game.position().turn();
        if self.config.arbiter
            && self.observation.scanned()
            && !self.may_lag()
            && self.clock.pending_press[turn]
            && !game.is_over()
            && !self.phase.is_restoring()
            && !self.sensed.shows_position(game.position())
            && self.moved_own_piece(turn)
            && !self.blip_may_explain()
        {
            self.clock.pending_press[turn] = false;
            self.clock.presses_ahead = 0;
            self.completed_irregularity(turn, t);
        }
    }

    /// Whether, on a board that only scans, one square of the last scan
    /// read as the scan before it showed it (a blip that scan caught: 3.Bc4
    /// c6 shown by the first scan after both presses, with the e8 king read
    /// gone for a moment) leaves the record's position, moves from it, or
    /// a move in progress. The press is then judged at the next scan,
    /// which shows whether the square was a blip. On a board that
    /// identifies pieces, only a square caught empty is weighed so, and
    /// gets back the piece the scan before named.
    fn blip_may_explain(&self) -> bool {
        if self.snapshots.board() == BoardKind::Reporting {
            return false;
        }
        let identifies = self.sensed.identifies_all();
        let changed = self.snapshots.changed_last();
        // A first scan, or one that changed much: no single blip.
        if changed.count() > MAX_BLIP_CANDIDATES {
            return false;
        }
        let pos = self.game().position();
        changed.into_iter().any(|sq| {
            let mut sensed = self.sensed.clone();
            match (sensed.occupied().contains(sq), identifies) {
                // A piece the board names is taken as put there.
                (true, true) => return false,
                (true, false) => sensed.lift(sq, self.seq),
                (false, false) => sensed.place(sq, None, self.seq),
                (false, true) => match self.snapshots.piece_before_last(sq) {
                    Some(Some(piece)) => sensed.place(sq, Some(piece), self.seq),
                    _ => return false,
                },
            };
            sensed.shows_position(pos)
                || read_scan(pos, &sensed, 0, true, super::scanned::Slides::Caught)
                    != ScanReading::None
        })
    }

    /// On a board reporting square events, whether a piece put on an empty
    /// square, or lifted, less than the settle time before `t` may be a
    /// blip (a sensor flicker, undone a moment later) and the board without
    /// it shows a legal move: the press is then judged when the board has settled,
    /// never on a state that has not (an illegal move needs a completed
    /// state no legal hypothesis explains).
    fn unsettled_blip_may_explain(&self, t: Millis) -> bool {
        let game = self.game();
        let (pos, since) = (game.position(), game.basis(game.ply()));
        let recent = |at: Millis| t.saturating_sub(at) < self.config.settle_ms;
        Square::ALL.into_iter().any(|sq| {
            let i = sq.to_usize();
            let mut probe = self.sensed.clone();
            if self.sensed.occupied().contains(sq) {
                if !self.squares.placed[i].is_some_and(|(at, _, _)| recent(at)) {
                    return false;
                }
                probe.lift(sq, self.seq);
            } else {
                // A piece gone for a moment: put back as it was.
                let Some((_, piece, _)) = self.squares.lifted[i].filter(|&(at, _, _)| recent(at))
                else {
                    return false;
                };
                probe.place(sq, piece, self.seq);
            }
            matches!(explain(pos, &probe, since, 1), Explanation::Unique(_))
        })
    }

    /// Whether one of `color`'s pieces left its square since the position.
    fn moved_own_piece(&self, color: Color) -> bool {
        let game = self.game();
        let ours = game.position().board().by_color(color);
        let touched = self.sensed.touched_since(game.basis(game.ply()));
        (ours & !self.sensed.occupied()).any() || (ours & touched).any()
    }

    /// Whether the mover's move and then the opponent's, whose lift of
    /// `sq` completed it, explain the board: a piece the mover's move
    /// cannot have put down may be the opponent's, put down before his own
    /// was lifted (a promotion's new piece first, Art. 4.6.2), so no
    /// illegal move.
    fn opponent_move_explains(&self) -> bool {
        let game = self.game();
        explain(game.position(), &self.sensed, game.basis(game.ply()), 2) != Explanation::None
    }

    /// Whether the record may lag the board: moves an occupancy board's
    /// dump showed are not all read yet, or candidates were listed (or one
    /// waits to be). A state no move explains is then more likely moves
    /// not yet read than an illegal move.
    /// Whether the board shows the record's position, or a move in
    /// progress from it: nothing the record has not caught up with.
    fn board_at_record(&self) -> bool {
        let pos = self.game().position();
        self.sensed.shows_position(pos) || super::progress::in_progress(pos, &self.sensed)
    }

    pub(super) fn may_lag(&self) -> bool {
        self.behind
            || self.scan.unlisted.is_some()
            || self.unseen_since_dump() && !self.sensed.identifies_all()
            || self.sync_state() == crate::resync::SyncState::Ambiguous
    }

    /// With no clock, a lift of `sq` by the opponent completes the last
    /// move. `settled`: the board state before the lift had been read.
    pub(super) fn complete_by_opponent_lift(&mut self, sq: Square, settled: bool, t: Millis) {
        if self.clock.in_use {
            return;
        }
        let game = self.game();
        if game.is_over() {
            return;
        }
        let pos = game.position();
        let offender = pos.turn();
        // With no clock, an illegal move is completed when the opponent
        // starts his next move (Art. 6.2.1, 7.5.1): the mover's piece was
        // put down where no legal move explains it, and an opponent's piece
        // is lifted without that making the mover's move (a capture).
        if self.config.arbiter
            && !self.phase.is_restoring()
            && !self.may_lag()
            && settled
            && self.phase.unexplained().is_some()
            && pos.board().color_at(sq) == Some(!offender)
            && (self.sensed.occupied() & !pos.board().occupied()).any()
            && self.moved_own_piece(offender)
            && explain(pos, &self.sensed, game.basis(game.ply()), 1) == Explanation::None
            && !self.opponent_move_explains()
        {
            return self.completed_irregularity(offender, t);
        }
        if game.ply() > 0
            && pos.board().color_at(sq) == Some(pos.turn())
            && game.moves()[game.ply() - 1].completed_at.is_none()
        {
            self.complete_all(t);
        }
    }

    /// Completes every move not yet completed.
    pub(super) fn complete_all(&mut self, at: Millis) {
        // A completed move closes its player's touches.
        let n = self.game().ply();
        if n > 0 && self.game().moves()[n - 1].completed_at.is_none() {
            let mover = self.game().mover(n);
            self.touches.clear(mover);
        }
        let gi = self.game_index();
        let clock = self.clock.last;
        // A move whose press was kept for the next scan was completed by
        // that press (`scan_slide.rs`).
        let kept = self.clock.slide_press.take().map(|k| (k.ply(), k.at()));
        let game = self.games.last_mut().expect("a game");
        let mut first = n;
        while first > 0 && game.moves()[first - 1].completed_at.is_none() {
            first -= 1;
        }
        for i in first..n {
            let mover = game.mover(i + 1);
            let at = match kept {
                Some((ply, pressed)) if ply == i + 1 => pressed.min(at),
                _ => at,
            };
            let m = &mut game.moves_mut()[i];
            m.completed_at = Some(at);
            if let Some((white, black)) = clock {
                m.clock = Some(mover.fold_wb(white, black));
            }
            self.events.push(GameEvent::MoveCompleted {
                game: gi,
                ply: i + 1,
                at,
            });
        }
    }

    /// Whether a clock report still belongs to the game's record. A
    /// finished game's record is final (issue 11): a clock that goes on
    /// reporting after a resignation, an agreement, a flag or an arbiter's
    /// result changes nothing in it. Only a game ended by its last move
    /// (checkmate, stalemate, a dead position, fivefold repetition, 75
    /// moves) takes the time of that move's player, as long as his clock
    /// is the one stopped (he pressed last), so it does not change either.
    pub(super) fn report_belongs_to_record(&self) -> bool {
        let game = self.game();
        if !game.is_over() {
            return true;
        }
        let by_last_move = matches!(
            game.termination(),
            Some(
                Termination::Checkmate
                    | Termination::Stalemate
                    | Termination::DeadPosition
                    | Termination::FivefoldRepetition
                    | Termination::SeventyfiveMoves
            )
        );
        let n = game.ply();
        by_last_move && n > 0 && self.clock.last_press == Some(game.mover(n))
    }

    /// A clock report gives the remaining time of the player who last
    /// completed a move: his clock stands still until the opponent presses.
    pub(super) fn update_last_completed_clock(&mut self) {
        let Some((white, black)) = self.clock.last else {
            return;
        };
        let pending_press = self.clock.pending_press;
        let game = self.games.last_mut().expect("a game");
        if let Some(i) = game.moves().iter().rposition(|m| m.completed_at.is_some()) {
            let mover = game.mover(i + 1);
            // After a press for a move the board has not shown yet, the
            // player's time belongs to that move.
            if !pending_press[mover] {
                game.moves_mut()[i].clock = Some(mover.fold_wb(white, black));
            }
        }
    }
}
