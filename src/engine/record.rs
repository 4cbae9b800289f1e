//! Changes to the record: moves made, changed, taken back; games started;
//! alerts, each built whole before it is emitted.

use shakmaty::{ByColor, Chess, Color, Move, Position};

use super::{BoardKind, Engine, GameEvent, read::same_move_in_hand};
use crate::{
    alert::{Alert, AlertKind},
    event::Millis,
    game::Game,
};

/// What moves being recorded were read from, which the arbiter is told
/// when some of them no state showed on its own (`moves_inferred`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ReadFrom {
    /// The board as the last states show it.
    Board,
    /// The candidates listed for the arbiter (`out_of_sync`), which the
    /// scans since have told apart: every one left begins with them.
    Listing,
}

impl Engine {
    /// Records moves the board showed made at `made_at`, by the board event
    /// numbered `basis`.
    pub(super) fn record(&mut self, moves: &[Move], made_at: Millis, basis: u64) {
        self.record_from(moves, made_at, basis, ReadFrom::Board);
    }

    /// [`Engine::record`], for moves read from `from`.
    pub(super) fn record_from(
        &mut self,
        moves: &[Move],
        made_at: Millis,
        basis: u64,
        from: ReadFrom,
    ) {
        let before = (moves.len() == 1).then(|| self.game().position().clone());
        let first_ply = self.game().ply() + 1;
        let shown_alone = self.shown_alone(moves);
        let inferred = if self.observation.scanned() && self.sensed.identifies_all() {
            (moves.len() > shown_alone + 1 || self.dump.reading_dump)
                .then_some(first_ply + shown_alone)
        } else if self.dump.reading_dump {
            Some(first_ply)
        } else if moves.len() > 1 {
            self.first_inferred(first_ply - 1, moves)
        } else {
            None
        };
        let mut shown = self.game().basis(self.game().ply());
        for (i, &m) in moves.iter().enumerate() {
            if i > 0
                && !self.observation.scanned()
                && let Some(from) = m.from()
            {
                // Its player's first lift, noted while the record had his
                // opponent to move, before this completes that move.
                let earlier = !self.game().position().turn();
                self.touches.hand_over(earlier, from);
            }
            // A later move completes every earlier one (Art. 6.2.1.2).
            self.complete_all(made_at);
            let mover = self.game().position().turn();
            shown = shown.max(self.last_changed(m, mover));
            let ply = self.push_made(m, made_at, self.shown_by(shown, basis, i + 1 < moves.len()));
            let ahead = std::mem::take(&mut self.clock.presses_ahead);
            if std::mem::take(&mut self.clock.pending_press[mover]) || ahead > 0 {
                // The clock was pressed before the board showed the move.
                self.complete_all(made_at);
                // Unless the opponent has pressed since: the record is
                // behind the clock, and his next press is his own move's.
                if self.clock.last_press == Some(mover) {
                    self.clock.early_press = Some((mover, ply));
                }
            }
            // Presses for the moves after it, which the board has not
            // shown yet: each player's, in turn.
            self.clock.presses_ahead = ahead.saturating_sub(1);
            if ahead > 1 {
                self.clock.pending_press[!mover] = true;
            }
            if ahead > 2 {
                self.clock.pending_press[mover] = true;
            }
        }
        if let ([m], Some(before)) = (moves, before) {
            self.check_touch_move(&before, *m);
        }
        if let Some(ply) = inferred {
            self.alert_inferred(ply, from);
        }
        self.check_game_over(made_at);
    }

    /// The half-move number of the first of the record's moves after
    /// half-move `from`, then `moves` (not yet recorded), that no observed
    /// state showed on its own: on a board that only senses occupancy and
    /// only scans, a move a snapshot showed (its position, or with the next
    /// move's pieces only lifted) was seen, however many moves the last
    /// scan shows (docs/design/reconstruction.md, the decision policy).
    /// Elsewhere the first.
    pub(super) fn first_inferred(&self, from: usize, moves: &[Move]) -> Option<usize> {
        if !(self.observation.scanned()
            && self.snapshots.board() == BoardKind::Scanning
            && !self.sensed.identifies_all())
        {
            return Some(from + 1);
        }
        let game = self.game();
        let pos = game.position_at(from)?;
        let line: Vec<Move> = game.moves()[from..]
            .iter()
            .map(|m| m.mv)
            .chain(moves.iter().copied())
            .collect();
        self.snapshots
            .unshown_plies_so_far(pos, &line, game.basis(from))
            .first()
            .map(|k| from + k)
    }

    /// How many of `moves`, from the record's position, an earlier scan
    /// of a board that names the pieces showed made one by one, each
    /// position piece for piece (a scan that may have caught a slide is
    /// read at the next one, which may show the next move made too): those
    /// were shown, not inferred.
    fn shown_alone(&self, moves: &[Move]) -> usize {
        if !(self.observation.scanned() && self.sensed.identifies_all()) {
            return 0;
        }
        let game = self.game();
        let (pos, since) = (game.position(), game.basis(game.ply()));
        (1..moves.len())
            .take_while(|&k| self.snapshots.shown_exactly(pos, &moves[..k], since) == Some(k))
            .count()
    }

    /// The event that last changed a square of `m` (played by `mover`).
    fn last_changed(&self, m: Move, mover: Color) -> u64 {
        crate::matcher::move_squares(m, mover)
            .into_iter()
            .map(|sq| self.sensed.last_place(sq).max(self.sensed.last_lift(sq)))
            .max()
            .unwrap_or(0)
    }

    /// The event from which the board showed a position recorded by event
    /// `basis`. A scanning board's move may be read a scan after the one
    /// that first showed it (it waited: that scan may have caught a slide),
    /// and the squares changed since that scan are the next moves' own.
    /// `shown`: the last change to the squares of the moves up to it.
    /// On a board that reports each change, a move read with later ones
    /// (`followed`: its own state hidden, e.g. a capture whose square never
    /// read empty) was on the board once its own squares last changed: the
    /// later moves' squares changed after that, and a change of the last
    /// move (a rook move becoming castling) is read from there.
    fn shown_by(&self, shown: u64, basis: u64, followed: bool) -> u64 {
        if (self.observation.scanned()
            && self.snapshots.board() == BoardKind::Scanning
            && self.sensed.identifies_all())
            || (followed && !self.observation.scanned())
        {
            basis.min(shown)
        } else {
            basis
        }
    }

    /// Tells the arbiter that the moves recorded from half-move
    /// `first_ply` on were inferred: shown at once, or made while the board
    /// was not connected.
    pub(super) fn alert_inferred(&mut self, first_ply: usize, from: ReadFrom) {
        let sans: Vec<String> = self
            .game()
            .moves()
            .get(first_ply.saturating_sub(1)..)
            .unwrap_or_default()
            .iter()
            .map(|m| m.san.to_string())
            .collect();
        let message = if from == ReadFrom::Listing {
            // Followed scan by scan, not shown at once: the record waited
            // until one of the lines listed in `out_of_sync` was left.
            format!(
                "the scans since left one of the sequences listed earlier (out_of_sync); recorded {} (check {} against the scoresheets)",
                sans.join(" "),
                if sans.len() > 1 { "them" } else { "it" }
            )
        } else if sans.len() > 1 {
            format!(
                "the board showed {} moves at once without the positions between them; recorded {} (check them against the scoresheets)",
                sans.len(),
                sans.join(" ")
            )
        } else {
            // A move made while the board was unplugged: nobody saw it
            // being made.
            format!(
                "the board showed a move made while it was not connected; recorded {} (check it against the scoresheets)",
                sans.join(" ")
            )
        };
        self.alert(AlertKind::MovesInferred, None, message, None);
    }

    /// Appends `m` to the record, made at `at` by the board event numbered
    /// `basis`, and tells the listeners; returns its half-move number.
    pub(super) fn push_made(&mut self, m: Move, at: Millis, basis: u64) -> usize {
        let game = self.game_index();
        // Candidates are continuations of the position before this move.
        self.hypotheses.clear();
        self.game_mut().push_move(m, at, basis);
        let ply = self.game().ply();
        let san = crate::game::san_text(self.game().moves()[ply - 1].san);
        self.events.push(GameEvent::MoveMade { game, ply, san, at });
        ply
    }

    /// The last move, not yet completed, was changed into `m` (Art. 4.7).
    pub(super) fn replace_last(&mut self, m: Move, made_at: Millis, basis: u64) {
        let gi = self.game_index();
        let n = self.game().ply();
        let old = self.game().moves()[n - 1].clone();
        let mover = self.game().mover(n);
        self.game_mut().truncate(n - 1);
        self.events.push(GameEvent::MovesRetracted {
            game: gi,
            ply: n - 1,
            at: made_at,
        });
        self.game_mut().push_move(m, made_at, basis);
        let new_san = self.game().moves()[n - 1].san.to_string();
        self.events.push(GameEvent::MoveMade {
            game: gi,
            ply: n,
            san: new_san.clone(),
            at: made_at,
        });
        if let Some(before) = self.game().position_at(n - 1).cloned() {
            self.check_touch_move(&before, m);
        }
        // A move to a square of the path the piece then went on along was
        // no move: a scan caught it sliding there.
        let slid = self.observation.scanned()
            && old.mv.from() == m.from()
            && m.from()
                .is_some_and(|from| shakmaty::attacks::between(from, m.to()).contains(old.mv.to()));
        if !same_move_in_hand(old.mv, m) && !slid {
            let message = format!(
                "{} was released as a legal move, then changed into {} before the clock was pressed; a piece released on a square as a legal move may not be moved to another square (Art. 4.7). Recorded: {}",
                old.san, new_san, new_san
            );
            self.alert(AlertKind::MoveChanged, Some(mover), message, None);
        }
        if std::mem::take(&mut self.clock.pending_press[mover]) {
            self.complete_all(made_at);
        }
        self.check_game_over(made_at);
    }

    /// A promotion that seemed to end the game was another piece: the game
    /// goes on from the corrected move.
    pub(super) fn repromote(&mut self, m: Move, made_at: Millis, basis: u64) {
        self.game_mut().reopen();
        self.events.push(GameEvent::GameResumed {
            game: self.game_index(),
            at: made_at,
        });
        self.replace_last(m, made_at, basis);
    }

    /// The board went back to the position after `ply` moves, shown from
    /// event `basis` on: the next move is read from there, not through
    /// the states of the moves taken back.
    pub(super) fn take_back(&mut self, ply: usize, at: Millis, basis: u64) {
        let gi = self.game_index();
        let n = self.game().ply();
        let removed: Vec<String> = self.game().moves()[ply..]
            .iter()
            .map(|m| m.san.to_string())
            .collect();
        let side = (n - ply == 1).then(|| self.game().mover(n));
        self.game_mut().truncate(ply);
        self.game_mut().rebase(basis);
        self.clock.pending_press = ByColor::default();
        self.clock.presses_ahead = 0;
        self.events
            .push(GameEvent::MovesRetracted { game: gi, ply, at });
        let message = format!(
            "the board went back to the position before {}: removed from the record",
            removed.join(" ")
        );
        self.alert(AlertKind::Takeback, side, message, None);
    }

    /// Touch-move (Art. 4.3, 4.4) checked against move `m` played from
    /// `before`: advisory alerts.
    fn check_touch_move(&mut self, before: &Chess, m: Move) {
        let mover = before.turn();
        for breach in self.touches.breaches(before, m) {
            let message = format!(
                "{} {breach}; advisory: the board cannot tell a touch from an adjustment announced with \"j'adoube\" (Art. 4.2)",
                crate::event::side_name(mover)
            );
            self.alert(AlertKind::TouchMove, Some(mover), message, None);
        }
    }

    pub(super) fn start_game(&mut self, start: Chess, at: Millis) {
        let mut game = Game::new(start, self.seq);
        for (name, value) in std::mem::take(&mut self.pending_tags) {
            game.set_tag(&name, &value);
        }
        self.games.push(game);
        // Moves a snapshot of the last game showed are not this game's.
        self.scan.unconfirmed = None;
        self.behind = false;
        self.clock.pending_press = ByColor::default();
        self.clock.presses_ahead = 0;
        self.touches.clear_all();
        self.events.push(GameEvent::GameStarted {
            game: self.game_index(),
            at,
        });
    }

    /// Raises an alert, whole: recorded with the game and emitted.
    pub(super) fn alert(
        &mut self,
        kind: AlertKind,
        side: Option<Color>,
        message: String,
        ruling: Option<String>,
    ) {
        let alert = Alert {
            kind,
            ply: self.game().ply(),
            side,
            message,
            ruling,
        };
        self.game_mut().alerts.push(alert.clone());
        self.events.push(GameEvent::Alert {
            game: self.game_index(),
            alert,
        });
    }
}
