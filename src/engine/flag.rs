//! A clock that comes down to 0:00: the arbiter is told the flag is down
//! (Art. 6.8), once per game and player. The fall itself is recorded by
//! the clock's flag report, a claim or the arbiter's `flag` action.
//!
//! The decision rests on the reports alone, never on when one arrived or
//! whose turn the board seemed to show then: a live reader and the replay
//! of its journal, or of the script the board played, decide alike. The
//! side concerned is the one whose reading came down to 0:00 in this report
//! (its clock was running): a reading that already stood at 0:00 in the
//! report before is no news, such as the time a board's log carries over
//! from the last game for a player who has not pressed yet in the new one.

use shakmaty::Color;

use super::Engine;
use crate::{
    alert::AlertKind,
    event::{Seconds, side_name},
};

impl Engine {
    /// Tells the arbiter of each side whose clock the report shows come
    /// down to 0:00 (`before`: the report before it, if any), unless the
    /// game is over, a flag fall or resignation is being recorded, or he
    /// was told already in this game.
    pub(super) fn flag_shown(
        &mut self,
        before: Option<(Seconds, Seconds)>,
        now: (Seconds, Seconds),
    ) {
        let sides = [
            (Color::White, now.0, before.map(|b| b.0)),
            (Color::Black, now.1, before.map(|b| b.1)),
        ];
        for (side, left, was) in sides {
            let game = self.game();
            let told = game
                .alerts
                .iter()
                .any(|a| a.kind == AlertKind::FlagShown && a.side == Some(side));
            if left > 0 || was == Some(0) || game.is_over() || game.pending_mate.is_some() || told {
                continue;
            }
            let (name, other) = (side_name(side), side_name(!side));
            // Which fell first is the arbiter's to see (Art. 6.1, commentary
            // to 6.3-6.4): the report does not tell.
            let both = if now == (0, 0) {
                "; both clocks read 0:00: the clock's flag indicator shows which fell first"
            } else {
                ""
            };
            self.alert(
                AlertKind::FlagShown,
                Some(side),
                format!(
                    "{name}'s clock reads 0:00: {name}'s flag counts as fallen once the arbiter observes it or a player validly claims it (Art. 6.8)"
                ),
                Some(format!(
                    "once the fall is observed, record it (flag action): {name} loses, unless {other} cannot checkmate by any possible series of legal moves, then the game is drawn (Art. 6.9); a result reached before the fall was observed stands{both}"
                )),
            );
        }
    }
}
