//! A press while the board's newest change is a lift, or a place on an
//! empty square, younger than the settle time (square events). A press is
//! reported at once, a blip is told only once the settle time has passed:
//! a 5–60 ms flicker of any square that spans the press would otherwise be
//! read as the board the player left: the move on the board before it (a
//! castling king put down 29 ms before a pawn's square flickered) lost for
//! a move with a piece in the air, or a queen read on the empty square
//! that flickered full instead of on the square it took on unseen. So the
//! press waits, with the clock times reported with it, until the square
//! is changed back within the settle time (a blip: the press is judged on
//! the board without it) or anything else comes, or the settle time
//! passes (judged as the board stood at the press). A piece put down
//! before the press and lifted after it is no blip where the opponent can
//! take it: the next hand is his, and that lift may be his capture begun
//! however soon it comes (a fast game's 10...cxb5 11.Bxb5+), unless the
//! board as it stood reads only as moves whose presses were forgotten, a
//! fault as rare as a blip each (Art. 6.2.1), dearer than the blip by more
//! than the margin. See docs/design/reconstruction.md, the observation
//! models and the cost table.

use shakmaty::{Color, Piece, Position, Square};

use super::{
    Engine,
    cost::{BLIP, MARGIN, MISSING_PRESS, presses_missing},
    read::{Reading, read_moves},
};
use crate::{
    event::{BoardEvent, Millis, Seconds, TimedEvent},
    game::Game,
    sensed::SensedBoard,
};

/// A press kept while the square changed just before it may be a blip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlipPress {
    color: Color,
    at: Millis,
    /// The square changed, when, and what stood there before if it was
    /// lifted (`Some`), or `None` if a piece was put on it empty.
    sq: Square,
    lifted_at: Millis,
    lifted: Option<Option<Piece>>,
    /// The clock times reported with the press.
    times: Option<(Seconds, Seconds)>,
}

/// What becomes of an event that comes while a press is kept.
pub(super) enum WhilePressKept {
    /// Nothing was kept, or the press was judged before the event.
    Go,
    /// The event is the clock report of the press: kept with it.
    Kept,
    /// The event changes the square back: a blip. The press is judged
    /// after it.
    PutBack(BlipPress),
}

impl Engine {
    /// Keeps a press by `color` at `t` when the board's newest change,
    /// not read yet, is a lift or a place on an empty square younger than
    /// the settle time, on a board reporting square events; returns
    /// whether it did.
    pub(super) fn keep_blip_press(&mut self, color: Color, t: Millis) -> bool {
        if self.observation.scanned() || self.game().is_over() || !self.settle.is_unread() {
            return false;
        }
        let basis = self.settle.basis();
        let young = |at: Millis| t.saturating_sub(at) < self.config.settle_ms;
        let newest = Square::ALL.into_iter().find_map(|sq| {
            let lift = self.squares.lifted[sq.to_usize()]
                .filter(|&(at, _, seq)| seq == basis && young(at))
                .map(|(at, piece, _)| (sq, at, Some(piece)));
            let place = self.squares.placed[sq.to_usize()]
                .filter(|&(at, seq, _)| seq == basis && young(at))
                .map(|(at, _, _)| (sq, at, None));
            lift.or(place)
        });
        let Some((sq, lifted_at, lifted)) = newest else {
            return false;
        };
        self.clock.blip_press = Some(BlipPress {
            color,
            at: t,
            sq,
            lifted_at,
            lifted,
            times: None,
        });
        true
    }

    /// Before `event` at `t`: what becomes of it while a press is kept.
    /// Anything but the press's clock report or the square changed back
    /// within the settle time has the press judged first, as the board
    /// stood at it.
    pub(super) fn while_press_kept(&mut self, event: &BoardEvent, t: Millis) -> WhilePressKept {
        let Some(mut kept) = self.clock.blip_press else {
            return WhilePressKept::Go;
        };
        let soon = t.saturating_sub(kept.lifted_at) < self.config.settle_ms;
        match event {
            BoardEvent::Clock(white, black) if soon && kept.times.is_none() => {
                kept.times = Some((*white, *black));
                self.clock.blip_press = Some(kept);
                return WhilePressKept::Kept;
            }
            BoardEvent::Place(sq, piece)
                if soon
                    && *sq == kept.sq
                    && kept
                        .lifted
                        .is_some_and(|was| piece.is_none() || was.is_none() || *piece == was) =>
            {
                self.clock.blip_press = None;
                return WhilePressKept::PutBack(kept);
            }
            BoardEvent::Lift(sq)
                if soon
                    && *sq == kept.sq
                    && kept.lifted.is_none()
                    && (!self.opponent_can_take(kept.color, *sq)
                        || self.stood_forgets_presses(*sq)) =>
            {
                self.clock.blip_press = None;
                return WhilePressKept::PutBack(kept);
            }
            _ => {}
        }
        self.judge_blip_press();
        WhilePressKept::Go
    }

    /// Whether the opponent of `color` has a piece on the board that can
    /// take on `sq`: after `color`'s press the next hand is his (Art.
    /// 6.2.1), so a piece put on `sq` before the press and lifted after it
    /// may be his capture begun, not a flicker, however soon he lifts it.
    fn opponent_can_take(&self, color: Color, sq: Square) -> bool {
        let occupied = self.sensed.occupied();
        let board = self.game().position().board();
        (board.attacks_to(sq, !color, occupied) & occupied).any()
    }

    /// Whether the board as it stood at the press reads only as moves
    /// that forgot presses (Art. 6.2.1: a player presses having moved, so
    /// each move but the last read at one press had its press forgotten,
    /// as rare as a blip) costing more than the margin above the board
    /// read without the piece put on `sq` (a blip) and its own forgotten
    /// presses: 8.Qxf6 with d4 flickering full across the press is no
    /// 8.Qf4 Qd4 9.Qf6 (two presses forgotten, 6, against a blip, 3).
    fn stood_forgets_presses(&self, sq: Square) -> bool {
        let game = self.game();
        let pressed = self.clock.presses_ahead;
        let Some(stood) = unpressed_cost(game, &self.sensed, pressed) else {
            return false;
        };
        let mut without = self.sensed.clone();
        without.lift(sq, self.seq);
        unpressed_cost(game, &without, pressed).is_some_and(|blip| BLIP + blip + MARGIN < stood)
    }

    /// Judges the press kept, if the settle time of its lift has passed by
    /// `t` (`Millis::MAX`: the input ended).
    pub(super) fn blip_press_due(&mut self, t: Millis) {
        if self
            .clock
            .blip_press
            .is_some_and(|kept| t.saturating_sub(kept.lifted_at) >= self.config.settle_ms)
        {
            self.judge_blip_press();
        }
    }

    /// Applies the press kept, and the clock times reported with it.
    pub(super) fn judge_blip_press(&mut self) {
        let Some(kept) = self.clock.blip_press.take() else {
            return;
        };
        let mut events = vec![BoardEvent::Press(kept.color)];
        events.extend(
            kept.times
                .map(|(white, black)| BoardEvent::Clock(white, black)),
        );
        for event in events {
            // Only a setup can fail to apply.
            let _ = self.push_now(&TimedEvent { at: kept.at, event });
        }
    }

    /// Applies the press kept after the event that changed its square
    /// back.
    pub(super) fn judge_after_put_back(&mut self, kept: BlipPress) {
        self.clock.blip_press = Some(kept);
        self.judge_blip_press();
    }
}

/// What the presses a reading of `sensed` from the record's position
/// forgot cost, `pressed` presses since the record and one more to come
/// (the press being judged completes the last move); `None` when the board
/// reads as no moves made.
fn unpressed_cost(game: &Game, sensed: &SensedBoard, pressed: usize) -> Option<usize> {
    match read_moves(game, sensed) {
        Some(Reading::Moves(line)) => Some(MISSING_PRESS * presses_missing(line.len(), pressed)),
        _ => None,
    }
}
