//! How games end: the endings the Laws apply by themselves after a move,
//! flags and resignations against mating chances, agreed draws.

use shakmaty::{ByColor, Chess, Color, Outcome, Position};

use super::{Engine, GameEvent};
use crate::{
    alert::AlertKind,
    event::{Millis, side_name},
    game::{Game, PendingMate, Termination, draw, win},
    quick_dead::is_dead_quick,
    rules::Rules,
    winnability::{Verdict, can_checkmate_fast},
};

/// Whether the quick test proves that neither side can checkmate (Art. 5.2.2).
/// The quick test settles the dead positions of real games (bare kings,
/// lone minor pieces, locked pawn chains) in microseconds; a position it
/// cannot settle is taken as alive. It runs after every move, so it takes
/// the cheap path of [`crate::quick_dead`], which gives the same answers.
pub fn is_dead_fast(pos: &Chess) -> bool {
    is_dead_quick(pos)
}

/// The ending the Laws apply by themselves to the game's position, in their
/// order of precedence: checkmate and stalemate end the game before any
/// counter matters (a mate on the 75th move wins, Art. 9.6.2), then a dead
/// position (5.2.2), the fifth occurrence of a position (9.6.1) and 75
/// moves without pawn move or capture (9.6.2).
pub fn automatic_ending(game: &Game, rules: Rules) -> Option<(Outcome, Termination)> {
    automatic_ending_by(game, rules, is_dead_fast)
}

/// [`automatic_ending`] with `dead` as the quick dead-position test.
pub(super) fn automatic_ending_by(
    game: &Game,
    rules: Rules,
    dead: impl FnOnce(&Chess) -> bool,
) -> Option<(Outcome, Termination)> {
    let pos = game.position();
    if game.no_legal_moves() {
        Some(if pos.is_check() {
            (win(!pos.turn()), Termination::Checkmate)
        } else {
            (draw(), Termination::Stalemate)
        })
    } else if dead(pos) {
        Some((draw(), Termination::DeadPosition))
    } else if rules.automatic_draws() && game.repetitions() >= 5 {
        Some((draw(), Termination::FivefoldRepetition))
    } else if rules.automatic_draws() && pos.halfmoves() >= 150 {
        Some((draw(), Termination::SeventyfiveMoves))
    } else {
        None
    }
}

impl Engine {
    /// Ends the game when the Laws end it by themselves after a move;
    /// otherwise tells the arbiter when a draw may be claimed (Art. 9.2,
    /// 9.3).
    pub(super) fn check_game_over(&mut self, at: Millis) {
        if let Some((outcome, termination)) = self.automatic_ending_now() {
            // A move that ends the game is completed by that (Art. 6.2.1.1).
            self.complete_all(at);
            self.end_game(outcome, termination, at);
            return;
        }
        let pos = self.game().position();
        let to_move = pos.turn();
        let repetitions = self.game().repetitions();
        let halfmoves = pos.halfmoves();
        if repetitions >= 3 {
            let message = format!(
                "this position has now occurred {repetitions} times: {} may claim a draw by repetition (Art. 9.2.1.2)",
                side_name(to_move)
            );
            self.alert(AlertKind::ThreefoldClaimable, Some(to_move), message, None);
        }
        if halfmoves == 100 {
            let message = format!(
                "the last 50 moves by each player were made without a pawn move or a capture: {} may claim a draw (Art. 9.3.2)",
                side_name(to_move)
            );
            self.alert(AlertKind::FiftyMovesClaimable, Some(to_move), message, None);
        }
    }

    /// The result when `loser` flags or resigns (`termination` says which):
    /// a loss, unless the opponent cannot checkmate by any series of legal
    /// moves. The quick test settles most positions at once; the others
    /// wait for the full analysis, which the engine does not run itself
    /// ([`Engine::next_mate_check`], [`Engine::apply_mate_verdict`]).
    pub(super) fn loss_unless_no_mate(
        &mut self,
        loser: Color,
        termination: Termination,
        at: Millis,
    ) {
        if self.game().is_over() || self.game().pending_mate.is_some() {
            return;
        }
        if can_checkmate_fast(self.game().position(), !loser) == Verdict::No {
            self.end_game(draw(), termination, at);
            return;
        }
        let ply = self.game().ply();
        self.game_mut().pending_mate = Some(PendingMate {
            ply,
            loser,
            termination,
            requested: false,
        });
    }

    /// A draw agreed by the players (Art. 5.2.3): valid once both have
    /// made a move, unless the rules allow it earlier.
    pub(super) fn agree_draw(&mut self, t: Millis) {
        let game = self.game();
        if game.is_over() {
            return;
        }
        let both_moved = (1..=game.ply()).map(|ply| game.mover(ply)).fold(
            ByColor::<bool>::default(),
            |mut seen, c| {
                seen[c] = true;
                seen
            },
        );
        if both_moved.white && both_moved.black || self.config.rules().early_draw_agreement() {
            self.end_game(draw(), Termination::Agreement, t);
        } else {
            let message = "a draw agreed before both players have made a move is not valid; the game goes on (Art. 5.2.3)".to_owned();
            self.alert(AlertKind::DrawRejected, None, message, None);
        }
    }

    pub(super) fn end_game(&mut self, outcome: Outcome, termination: Termination, at: Millis) {
        if self.game().is_over() {
            return;
        }
        self.game_mut().finish(outcome, termination);
        self.clock.pending_press = ByColor::default();
        self.clock.presses_ahead = 0;
        self.events.push(GameEvent::GameOver {
            game: self.game_index(),
            outcome,
            termination,
            at,
        });
        // A game decided before the pieces left the start position (a
        // forfeit, say): the next game starts from the same set-up board.
        if self.sensed.shows(Chess::default().board()) {
            self.start_game(Chess::default(), at);
        }
    }
}
