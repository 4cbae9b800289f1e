//! A square an occupancy event board read empty for less than the settle
//! time while a piece was in the air: a blip beside the move under way, or
//! the captured piece taken off and the capturing one put down at once.
//! The board cannot tell them apart; the cost table does
//! (docs/design/reconstruction.md): the blip costs 3, a capture read from
//! such a vacancy alone 5, and a piece still in the hand at a completion 10.
//! So the blip is read whenever a move explains the board with it; a capture
//! on the square waits for the completion (a press, the opponent's lift, the
//! game's end), where the hand would cost more than the capture.

use shakmaty::{Bitboard, Move, Position, Square};

use super::{Engine, Moment, Reading, Scanned, read};
use crate::{
    event::{BoardEvent, Millis},
    sensed::SensedBoard,
};

/// The squares refilled within the settle time while a piece was in the
/// air, with the board event that refilled each (occupancy event boards),
/// and the capture on one of them waiting for its completion.
#[derive(Debug, Clone, Default)]
pub(super) struct BriefRefills {
    refills: Vec<(Square, u64)>,
    held: Option<HeldCapture>,
}

/// A capture on a briefly refilled square, read as a piece in the hand
/// until the move is completed.
#[derive(Debug, Clone, Copy)]
struct HeldCapture {
    mv: Move,
    /// The record's length, and the board event of the state it was read
    /// from, and when that state appeared.
    ply: usize,
    basis: u64,
    made_at: Millis,
    /// With no clock, a lift that completes it once it outlives a blip:
    /// the square, when, and its board event.
    lift: Option<(Square, Millis, u64)>,
}

impl Engine {
    /// `sq` was emptied and refilled within the settle time while another
    /// piece was in the air (the event just applied refilled it).
    pub(super) fn note_brief_refill(&mut self, sq: Square) {
        if self.sensed.piece_at(sq).is_some() {
            // The board names the piece put back: a capture would show
            // the capturing piece, so a blip is read as one already.
            return;
        }
        let live = self.brief_squares();
        self.squares
            .brief
            .refills
            .retain(|&(s, _)| live.contains(s) && s != sq);
        self.squares.brief.refills.push((sq, self.seq));
    }

    /// The briefly refilled squares that still stand as they were refilled,
    /// since the record's position.
    pub(super) fn brief_squares(&self) -> Bitboard {
        let game = self.game();
        let since = game.basis(game.ply());
        self.squares
            .brief
            .refills
            .iter()
            .filter(|&&(sq, seq)| {
                seq > since
                    && self.sensed.last_place(sq) == seq
                    && self.sensed.last_lift(sq) < seq
                    && self.sensed.occupied().contains(sq)
            })
            .map(|&(sq, _)| sq)
            .collect()
    }

    /// The sensors with every brief refill of `squares` taken for a blip.
    pub(super) fn without_blips(&self, squares: Bitboard) -> SensedBoard {
        let mut probe = self.sensed.clone();
        for sq in squares {
            probe.forget_blip(sq);
        }
        probe
    }

    /// The reading of a settled state weighed against the brief refills
    /// (square events on occupancy boards): a move the board shows with
    /// them taken for blips is read so; a capture on one of them waits, as
    /// a piece in the hand, for its completion, unless the game is being
    /// closed.
    pub(super) fn weigh_brief(
        &mut self,
        reading: Reading,
        scanned: Scanned,
        closing: bool,
    ) -> Reading {
        // A capture held stays held while only lifts came since (the
        // opponent beginning his move, his capture of the capturing piece).
        let before = self.squares.brief.held;
        self.squares.brief.held = self.held_stands(true);
        // The line went on past it: the capture the board showed down is
        // completed by the moves after it, not inferred with them.
        if let (Reading::Moves(moves), Some(h)) = (&reading, before)
            && moves.len() > 1
            && h.ply == self.game().ply()
            && moves[0] == h.mv
        {
            let rest = moves[1..].to_vec();
            self.complete_held(HeldCapture { lift: None, ..h }, self.settle.since());
            return Reading::Moves(rest);
        }
        if scanned != Scanned::No || self.game().is_over() || self.phase.is_restoring() {
            return reading;
        }
        let brief = self.brief_squares();
        if brief.is_empty() {
            return reading;
        }
        let on_brief = |m: &Move| m.is_capture() && brief.contains(m.to());
        // A line whose last move is a capture on such a square is that
        // capture still open too: the moves before it stand only with it,
        // and until its player presses (or the game closes) the piece may
        // still be in the hand with the refill a blip.
        let turn = self.game().position().turn();
        let last_open = |moves: &[Move]| {
            let mover = if moves.len() % 2 == 1 { turn } else { !turn };
            moves.last().is_some_and(on_brief)
                && !closing
                && !self.clock.pending_press[mover]
                && !self.line_ends_game(moves)
        };
        let mut open_line = false;
        let capture = match &reading {
            Reading::Moves(moves) if moves.len() == 1 && on_brief(&moves[0]) => Some(moves[0]),
            Reading::Moves(moves) if moves.iter().any(on_brief) => {
                open_line = last_open(moves);
                None
            }
            Reading::Moves(_) | Reading::Wait => None,
            _ => return reading,
        };
        let probe = self.without_blips(brief);
        let moment = Moment {
            pending_press: self.clock.pending_press,
            presses_ahead: self.clock.presses_ahead,
            closing,
            ..Moment::default()
        };
        let blipped = read(
            self.game(),
            &probe,
            &self.snapshots,
            &self.phase,
            moment,
            self.config.arbiter,
            scanned,
        );
        match (blipped, capture) {
            (blipped @ Reading::Moves(_), _) => blipped,
            // Checkmate or stalemate: no completion will come (Art. 5.1.1,
            // 5.2.1 end the game with the move).
            (_, Some(mv)) if !closing && !self.ends_game(mv) => {
                self.squares.brief.held = Some(HeldCapture {
                    mv,
                    ply: self.game().ply(),
                    basis: self.settle.basis(),
                    made_at: self.settle.since(),
                    lift: None,
                });
                Reading::Hand
            }
            // The piece in the hand (0 before completion) against the
            // capture read from the vacancy alone (5): the board waits.
            (_, None) if open_line => Reading::Hand,
            _ => reading,
        }
    }

    /// Whether `mv` from the record's position leaves the opponent no legal
    /// move.
    fn ends_game(&self, mv: Move) -> bool {
        self.line_ends_game(&[mv])
    }

    /// Whether `moves` from the record's position leave the side to move
    /// no legal move (Art. 5.1.1, 5.2.1: no completion will come).
    fn line_ends_game(&self, moves: &[Move]) -> bool {
        let mut pos = self.game().position().clone();
        for &mv in moves {
            pos.play_unchecked(mv);
        }
        pos.legal_moves().is_empty()
    }

    /// At the end of the input: the capture held is where the players left
    /// the pieces (a press or a lift that never came).
    pub(super) fn complete_brief_at_end(&mut self) {
        if let Some(h) = self.held_stands(false) {
            let t = self.now;
            self.complete_held(h, t);
        }
    }

    /// The capture held, if the board has not changed since it was read
    /// (`lifts`: but for pieces lifted since).
    fn held_stands(&self, lifts: bool) -> Option<HeldCapture> {
        self.squares.brief.held.filter(|h| {
            h.ply == self.game().ply()
                && (h.basis == self.settle.basis()
                    || lifts
                        && (self.sensed.touched_since(h.basis) & self.sensed.occupied()).is_empty())
        })
    }

    /// Records the capture held and completes it at `t`.
    fn complete_held(&mut self, h: HeldCapture, t: Millis) {
        self.squares.brief.held = None;
        if h.ply != self.game().ply() || self.game().is_over() {
            return;
        }
        // What was lifted since it was held was the opponent beginning his
        // own move (the lift that completed it his touch), not the mover's.
        let lifted = h.lift.map(|(sq, at, _)| (sq, at));
        for sq in self.sensed.touched_since(h.basis) {
            self.touches.forget(sq);
        }
        self.record(&[h.mv], h.made_at, h.basis);
        self.complete_all(t);
        if let Some((sq, at)) = lifted
            && self.config.arbiter
        {
            let game = &self.games[self.games.len() - 1];
            self.touches.note(game, sq, at, self.config.settle_ms);
        }
    }

    /// At a press: records and completes the capture held, if the board
    /// still shows it; returns whether it did.
    pub(super) fn press_completes_brief_capture(&mut self, t: Millis) -> bool {
        let Some(h) = self.held_stands(false) else {
            return false;
        };
        self.complete_held(h, t);
        self.evaluate_at(false);
        true
    }

    /// With no clock, a lift of `sq` at `t` (about to be applied) while the
    /// board still shows the capture held: the opponent starting his move
    /// (his own piece, or the mover's he is about to capture) completes it
    /// (Art. 6.2.1), once the lift outlives a blip. Not a piece the mover's
    /// piece, still in the hand if the refill was a blip, could capture:
    /// that is the capture under way, unless one it could capture is
    /// already off (one move takes one piece).
    pub(super) fn lift_may_complete_brief_capture(&mut self, sq: Square, t: Millis) {
        if self.clock.in_use {
            return;
        }
        let pos = self.game().position();
        let takes = |h: &HeldCapture, s: Square| {
            s == h.mv.to()
                || pos
                    .legal_moves()
                    .iter()
                    .any(|m| m.from() == h.mv.from() && m.is_capture() && m.to() == s)
        };
        // A move takes one piece: with one it may take already off, a
        // second lifted is the opponent's hand, not the capture under way.
        let taken_off = |h: &HeldCapture| {
            (self.sensed.touched_since(h.basis) & !self.sensed.occupied())
                .into_iter()
                .any(|s| takes(h, s))
        };
        if let Some(mut h) = self.held_stands(true)
            && h.lift.is_none()
            && h.mv.from() != Some(sq)
            && h.mv.to() != sq
            && (!takes(&h, sq) || taken_off(&h))
        {
            h.lift = Some((sq, t, self.seq + 1));
            self.squares.brief.held = Some(h);
        }
    }

    /// Before `event` at `t` is applied: a lift that was to complete the
    /// capture held completes it, unless this event puts the piece back at
    /// once (a blip).
    pub(super) fn confirm_brief_lift(&mut self, event: Option<&BoardEvent>, t: Millis) {
        let Some(h) = self.squares.brief.held else {
            return;
        };
        // A scan or a dump after an outage: the board went on past the
        // capture (a hand is not held across an outage).
        if matches!(event, Some(BoardEvent::Board(_) | BoardEvent::Reconnected))
            && (h.lift.is_some() || self.held_stands(false).is_some())
        {
            return self.complete_held(h, t);
        }
        // With no clock, the opponent putting down a piece the board names
        // as his on an empty square (a promotion's new piece first, Art.
        // 4.6.2) starts his move as a lift would: no blip puts down a
        // named piece, so it completes the capture at once (Art. 6.2.1).
        if let Some(&BoardEvent::Place(s, Some(piece))) = event
            && !self.clock.in_use
            && piece.color != self.game().position().turn()
            && !self.sensed.occupied().contains(s)
            && self.held_stands(false).is_some()
        {
            return self.complete_held(h, t);
        }
        let Some((sq, at, seq)) = h.lift else {
            return;
        };
        let soon = t.saturating_sub(at) < self.config.settle_ms;
        match event {
            Some(BoardEvent::Place(s, _)) if *s == sq && soon && self.seq == seq => {
                self.squares.brief.held = Some(HeldCapture { lift: None, ..h });
            }
            None if soon => {}
            _ => self.complete_held(h, at),
        }
    }
}
