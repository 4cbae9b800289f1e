//! Draw claims: checked against the record (Art. 9.2, 9.3, 9.5).

use shakmaty::{Chess, Color, Position, uci::UciMove};

use super::Engine;
use crate::{
    alert::AlertKind,
    event::{ClaimKind, Millis, side_name},
    game::{Game, Termination, draw, position_key},
    rules::minutes,
};

/// Whether a claim of `kind` by `claimant`, with the move he announces if
/// any, is correct; the reason when it is not.
pub fn judge_claim(
    game: &Game,
    claimant: Color,
    kind: ClaimKind,
    announced: Option<&UciMove>,
) -> Result<(), String> {
    let pos = game.position();
    let article = article(kind);
    if pos.turn() != claimant {
        return Err(format!(
            "only the player having the move may claim ({article} and its commentary)"
        ));
    }
    let Some(uci) = announced else {
        return judge_standing(game, kind);
    };
    let Ok(m) = uci.to_move(pos) else {
        return Err(format!(
            "the announced move {uci} is not legal; another move with the same piece must be made (commentary to Art. 9.5.3)"
        ));
    };
    let mut after = pos.clone();
    after.play_unchecked(m);
    judge_announced(game, kind, uci, &after)
}

fn article(kind: ClaimKind) -> &'static str {
    match kind {
        ClaimKind::Threefold => "Art. 9.2",
        ClaimKind::Fifty => "Art. 9.3",
    }
}

/// A claim on the position on the board.
fn judge_standing(game: &Game, kind: ClaimKind) -> Result<(), String> {
    let article = article(kind);
    match kind {
        ClaimKind::Threefold => {
            let n = game.repetitions();
            if n >= 3 {
                Ok(())
            } else {
                Err(format!(
                    "the position has occurred only {n} time(s), not 3 ({article}.1.2)"
                ))
            }
        }
        ClaimKind::Fifty => {
            let h = game.position().halfmoves();
            if h >= 100 {
                Ok(())
            } else {
                Err(format!(
                    "only {} moves by each player without pawn move or capture, not 50 ({article}.2)",
                    h / 2
                ))
            }
        }
    }
}

/// A claim on the position after the announced move `uci` (Art. 9.2.1.1,
/// 9.3.1).
fn judge_announced(
    game: &Game,
    kind: ClaimKind,
    uci: &UciMove,
    after: &Chess,
) -> Result<(), String> {
    let article = article(kind);
    match kind {
        ClaimKind::Threefold => {
            let n = game.occurrences(after, position_key(after)) + 1;
            if n >= 3 {
                Ok(())
            } else {
                Err(format!(
                    "after the announced move {uci} the position will have occurred {n} time(s), not 3 ({article}.1.1)"
                ))
            }
        }
        ClaimKind::Fifty => {
            if after.halfmoves() >= 100 {
                Ok(())
            } else {
                Err(format!(
                    "after the announced move {uci} only {} moves by each player without pawn move or capture, not 50 ({article}.1)",
                    after.halfmoves() / 2
                ))
            }
        }
    }
}

impl Engine {
    /// Checks a draw claim: a correct one ends the game; an incorrect one
    /// gives the opponent time (Art. 9.5).
    pub(super) fn claim(
        &mut self,
        claimant: Color,
        kind: ClaimKind,
        announced: Option<&UciMove>,
        t: Millis,
    ) {
        if self.game().is_over() {
            return;
        }
        let Err(reason) = judge_claim(self.game(), claimant, kind, announced) else {
            let termination = match kind {
                ClaimKind::Threefold => Termination::ThreefoldRepetition,
                ClaimKind::Fifty => Termination::FiftyMoves,
            };
            self.end_game(draw(), termination, t);
            return;
        };
        let rules = self.config.rules();
        let mut ruling = format!(
            "{} to {} ({}); the game goes on",
            minutes(rules.wrong_claim_bonus()),
            side_name(!claimant),
            rules.wrong_claim_article()
        );
        if let Some(uci) = announced {
            ruling.push_str(&format!(
                "; the announced move {uci} must be played (Art. 9.5.3)"
            ));
        }
        let message = format!("{} claims a draw: incorrect: {reason}", side_name(claimant));
        self.alert(
            AlertKind::ClaimRejected,
            Some(claimant),
            message,
            Some(ruling),
        );
    }
}
