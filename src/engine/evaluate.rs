//! The decision policy: each settled observation is read (`read.rs`) and
//! what it shows is applied to the record, the hypotheses and the phase.
//! See docs/design/reconstruction.md, the decision policy.

use shakmaty::{Bitboard, Move, Position};

use super::{
    BoardKind, Engine, Reading, Scanned, follow::Follow, held_at_dump::HeldAtDump, in_progress,
    progress, read, scanned,
};
use crate::{alert::AlertKind, event::Millis, resync::SyncState};

impl Engine {
    pub(super) fn read_board(&mut self) {
        let clock_pending = self.settle.mark_read();
        self.opponent_lift_completed_unseen_capture();
        if !self.next_game_set_up() {
            self.evaluate_at(false);
        }
        if clock_pending {
            self.update_last_completed_clock();
        }
    }

    /// The lines that exactly explained a scan from the record's position
    /// which was read as a hand at work instead.
    pub(super) fn passed_lines(&self) -> &[Vec<Move>] {
        self.lines_at_ply(&self.scan.passed)
    }

    /// `kept`'s lines if they were kept at the record's present length.
    pub(super) fn lines_at_ply<'a>(
        &self,
        kept: &'a Option<(usize, Vec<Vec<Move>>)>,
    ) -> &'a [Vec<Move>] {
        match kept {
            Some((ply, lines)) if *ply == self.game().ply() => lines,
            _ => &[],
        }
    }

    /// Reads the settled board state and applies what it shows.
    /// `closing`: the players are ending the game, so the board stands as
    /// they left it, with no piece in the air.
    pub(super) fn evaluate_at(&mut self, closing: bool) {
        if self.takes_back_held() {
            return self.evaluate_at(closing);
        }
        let unlisted = self.scan.unlisted.take();
        let put_off = self.scan.put_off.take();
        self.settle_unconfirmed();
        if self.undecided() {
            // Read when the board is.
            if put_off.is_some() {
                (self.scan.unlisted, self.scan.put_off) = (unlisted, put_off);
            }
            // Meanwhile the board is not read; when the players end the
            // game, both stories are listed as they stand.
            if closing {
                self.list_undecided();
            }
            return;
        }
        // The board shows the record's position again: a square the scans
        // since showed full for one scan alone was a blip, even one too
        // brief to be read on its own (the next scan came within the
        // settle time).
        if self.observation.scanned()
            && self.scan.unconfirmed.is_none()
            && self.sensed.shows_position(self.game().position())
        {
            let game = self.game();
            let (since, record) = (game.basis(game.ply()), game.position().board().occupied());
            self.snapshots.forget_odd_fills(since, record);
        }
        let at = self.observed(closing);
        match self.weigh_held_at_dump(at.scanned) {
            HeldAtDump::Stood => return self.evaluate_at(closing),
            HeldAtDump::Listed => return,
            HeldAtDump::Read => {}
        }
        if let Some(in_hand) = self.follow_dump_listing(at) {
            return self.settle_phase(at, true, in_hand);
        }
        let (reading, put_off) = self.first_reading(at, unlisted, put_off);
        let reading = self.weigh_brief(reading, at.scanned, at.closing);
        let reading = self.weigh_half_castling(reading, at.scanned);
        let Some(reading) = self.weigh_blips(reading, at, put_off) else {
            return self.evaluate_at(closing);
        };
        let reading = self.note_reading(reading, at.scanned);
        if at.scanned == Scanned::Snapshot {
            self.note_caught_slide(&reading, at.made_at);
        }
        let Some(kind) = self.apply_reading(reading, at) else {
            return self.evaluate_at(closing);
        };
        let in_hand = self.in_hand_or_resync(at, kind);
        self.settle_phase(at, kind.waiting, in_hand);
    }

    /// When and how the state being read was observed.
    fn observed(&self, closing: bool) -> Observed {
        let made_at = self.settle.since();
        let basis = self.settle.basis();
        let plies = self.game().ply();
        let games = self.games.len();
        let scanned = self
            .observation
            .kind(self.unseen_since_dump() && !self.sensed.identifies_all());
        Observed {
            made_at,
            basis,
            plies,
            games,
            scanned,
            closing,
        }
    }

    /// What the reading leaves for the next state to weigh.
    fn note_reading(&mut self, reading: Reading, scanned: Scanned) -> Reading {
        self.scan.unexplained = (matches!(reading, Reading::Wait)
            // A line put off is no blip to forget.
            && self.scan.unlisted.is_none()
            && scanned == Scanned::Snapshot
            && self.snapshots.board() == BoardKind::Scanning
            && !self.sensed.identifies_all()
            // The record's position shown is explained: no blip of its own.
            && !self.sensed.shows_position(self.game().position()))
        .then(|| self.snapshots.last().map(|(seq, _)| seq))
        .flatten();
        self.hand_awaited = matches!(reading, Reading::Hand);
        if matches!(reading, Reading::Hand)
            && scanned == Scanned::Snapshot
            && !self.sensed.identifies_all()
        {
            let lines = read::held_lines(self.game(), &self.sensed, &self.snapshots);
            self.scan.held = Some((self.game().ply(), lines));
        }
        if matches!(reading, Reading::Hand)
            && scanned == Scanned::Snapshot
            && self.sensed.identifies_all()
        {
            let ply = self.game().ply();
            let exact = scanned::exact_now(self.game().position(), &self.sensed);
            if !exact.is_empty() {
                match &mut self.scan.passed {
                    Some((at, lines)) if *at == ply => {
                        for line in exact {
                            if !lines.contains(&line) {
                                lines.push(line);
                            }
                        }
                    }
                    other => *other = Some((ply, exact)),
                }
            }
        }
        reading
    }

    /// Applies the reading; `None`: read the state again from the moves
    /// recorded.
    fn apply_reading(&mut self, reading: Reading, at: Observed) -> Option<Kind> {
        let Observed {
            made_at,
            basis,
            plies,
            games,
            scanned,
            ..
        } = at;
        // Listed candidates followed on (event boards): what they agree on
        // is recorded and the state read again; followed, they explain it.
        let reading = match self.follow_candidates(&reading, made_at) {
            // The state read again from the moves recorded; a piece that
            // may be sliding on from them waits for the slide dwell.
            Follow::Recorded if self.may_be_sliding() => {
                self.settle.unread_again();
                Reading::Hand
            }
            Follow::Recorded => return None,
            Follow::Followed => Reading::Hand,
            Follow::Not => reading,
        };
        // Nothing read from a snapshot, but lines the last move in progress
        // was read among may have gone on to it (the record lags).
        let may_lag = matches!(reading, Reading::Wait)
            && scanned == Scanned::Snapshot
            && !self.observation.dumped()
            && !self.unseen_since_reconnection();
        let waiting = matches!(
            reading,
            Reading::Wait
                | Reading::Hand
                | Reading::Ambiguous(_)
                | Reading::Narrowed { .. }
                | Reading::Unconfirmed { .. }
        );
        // A scan a hand may explain, or that several sequences of moves do,
        // is read again at the next scan, not taken for displaced pieces.
        let undecided = matches!(
            reading,
            Reading::Hand
                | Reading::Ambiguous(_)
                | Reading::Narrowed { .. }
                | Reading::Unconfirmed { .. }
        );
        let moves = matches!(reading, Reading::Moves(_));
        // On a board that identifies pieces the dump names each move; on
        // occupancy the move is read from what could explain it.
        // A board that never reported a square on its own sends no dumps
        // after reconnections: its first scan is a snapshot.
        self.dump.reading_dump = scanned == Scanned::Dump
            && self.snapshots.board() == BoardKind::Reporting
            && !self.sensed.identifies_all();
        let read_again = self.apply(reading, made_at, basis, scanned != Scanned::No);
        if read_again
            && self.game().ply() > plies
            && !self.game().is_over()
            && !self.sensed.shows_position(self.game().position())
        {
            return None;
        }
        if moves
            && matches!(scanned, Scanned::Dump | Scanned::AfterDump)
            && self.games.len() == games
            && self.game().ply() > plies
            && !self.game().is_over()
            && !self.sensed.shows_position(self.game().position())
        {
            // Only the first moves of what a dump (or the state after it)
            // shows were certain from the record as it was; the rest is
            // read now from the record they lead to: no later scan comes
            // to read it.
            return None;
        }
        Some(Kind {
            waiting,
            undecided,
            moves,
            may_lag,
        })
    }

    /// Whether a hand at work explains the state; if not, and the board
    /// may have skipped states, the search extends the record past it.
    fn in_hand_or_resync(&mut self, at: Observed, kind: Kind) -> bool {
        let Kind {
            waiting,
            undecided,
            moves,
            may_lag,
        } = kind;
        let Observed {
            made_at,
            basis,
            plies,
            games,
            closing,
            ..
        } = at;
        // Moves read but held back as one more candidate: the board is
        // explained by the lines listed, as when the reading lists them.
        let held_back = moves
            && self.games.len() == games
            && self.game().ply() == plies
            && self.hypotheses.state == SyncState::Ambiguous;
        let game = self.game();
        // Asked at most once: the same board and position.
        let moving = std::cell::OnceCell::new();
        let in_progress_now = || *moving.get_or_init(|| in_progress(game.position(), &self.sensed));
        // The held lines are gone through last: the reading went through
        // them already, and only a state nothing else explains needs it.
        let mut in_hand = held_back
            || waiting
                && !game.is_over()
                && (undecided || in_progress_now() || may_lag && self.held_lines_go_on());
        let own_hand = in_hand && !in_progress_now();
        if waiting
            && (!in_hand || own_hand)
            && self.observation.scanned()
            && !game.is_over()
            && !self.phase.is_restoring()
        {
            // A scan missed the state between a move and the next hand
            // (the scan reading waited: a hand after some move, not the
            // mover's own hand, may explain it).
            // The snapshots since the record's position must have shown
            // that move, then the hand (not a king that stood elsewhere).
            if let Some(m) = progress::move_then_in_progress(game.position(), &self.sensed)
                && self
                    .snapshots
                    .cost(
                        game.position(),
                        &[m],
                        game.basis(game.ply()),
                        shakmaty::Bitboard::EMPTY,
                        true,
                    )
                    .is_some()
            {
                // Not while listed candidates say otherwise: the board may
                // be further on than this one move.
                if self.shown_mid_slide(m) {
                    self.hold_caught_slide(m, made_at);
                } else if self.agrees_with_candidates(m) {
                    self.record(&[m], made_at, basis);
                }
                in_hand = true;
            }
        }
        let game = self.game();
        if waiting
            && !in_hand
            && !game.is_over()
            && !self.phase.is_restoring()
            && !self.sensed.shows_position(game.position())
        {
            if !self.resynchronise(made_at, basis, closing) {
                self.pressed_before_scan(made_at);
                // A dump on occupancy the search reads, but a hand after
                // fewer moves may explain too: a move in progress.
                // Moves that wait for the next scan are not displaced
                // pieces either.
                in_hand = ((self.observation.dumped() || self.unseen_since_reconnection())
                    && !self.sensed.identifies_all()
                    && self.hypotheses.state == SyncState::Searching)
                    || self.scan.unconfirmed.is_some()
                    || self.scan.takeback_held.is_some();
            }
        } else if !in_hand {
            self.hypotheses.clear();
        }
        in_hand
    }

    /// The phase after the state: explained, a move in progress, or
    /// pieces displaced since `made_at`.
    fn settle_phase(&mut self, at: Observed, waiting: bool, in_hand: bool) {
        let Observed {
            made_at,
            plies,
            games,
            ..
        } = at;
        self.dump.reading_dump = false;
        // The board shows the record's position, or one move from it under
        // way on square events: the record lags it by that move at most.
        let game = self.game();
        if self.sensed.shows_position(game.position())
            || !self.observation.scanned()
                && self.hypotheses.state != SyncState::Ambiguous
                && progress::one_move_under_way(
                    game.position(),
                    &self.sensed,
                    game.basis(game.ply()),
                )
        {
            self.behind = false;
        }
        let game = self.game();
        let explained = self.games.len() != games
            || game.is_over()
            || game.ply() != plies
            || self.phase.is_restoring()
            || self.sensed.shows_position(game.position());
        // Waiting, nothing since changed the record or the sensors:
        // `in_hand` already says it.
        let hand = if waiting {
            in_hand
        } else {
            in_progress(game.position(), &self.sensed)
        };
        if !explained && hand {
            // A move in progress, however long the hand holds it, is not a
            // displaced piece.
            self.phase.move_in_progress();
        } else if self.phase.settled(
            explained,
            made_at,
            // Only an unexplained state needs the squares (most states are
            // explained: a 64-square walk each would cost the replay ~10%).
            if explained {
                shakmaty::Bitboard::EMPTY
            } else {
                self.differ_from_record()
            },
        ) {
            // What was lifted while pieces were displaced says nothing
            // about the player's intentions.
            self.touches.clear_all();
            let message = "the board shows the game position again (Art. 7.6)".to_owned();
            self.alert(AlertKind::PositionRestored, None, message, None);
        }
    }
}

/// A line put off for a blip: the lines, the squares a blip would
/// explain, and the scan that showed it.
pub(super) type PutOff = (Vec<Vec<Move>>, Bitboard, u64);

/// When and how a settled state was observed.
#[derive(Debug, Clone, Copy)]
pub(super) struct Observed {
    pub(super) made_at: Millis,
    pub(super) basis: u64,
    pub(super) plies: usize,
    pub(super) games: usize,
    pub(super) scanned: Scanned,
    pub(super) closing: bool,
}

/// What kind of reading was applied.
#[derive(Debug, Clone, Copy)]
struct Kind {
    waiting: bool,
    undecided: bool,
    moves: bool,
    may_lag: bool,
}
