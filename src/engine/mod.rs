//! The reconstruction engine: board events in, moves and alerts out.
//!
//! The engine is pure and deterministic. It never reads the wall clock: time
//! passes only through the timestamps of the events it is given, so a
//! session replayed from its journal gives the same record byte for byte.
//!
//! Where each step lives:
//! - `settle.rs`: a board state counts once it has settled (the debounce).
//! - `read.rs`: the reading step — what a settled state shows, given the
//!   record and the phase (a move made, changed, inferred, a takeback...).
//! - `phase.rs`: whether the board and the record are in step, and what the
//!   engine waits for; every change of phase.
//! - `complete.rs`: when moves are completed (Art. 6.2.1) and clock presses.
//! - `record.rs`: changes to the record, and alerts.
//! - `touch.rs`: touch-move (Art. 4.3, 4.4).
//! - `illegal.rs`: illegal moves, described and penalised (Art. 7.5).
//! - `endings.rs` and `claim.rs`: games ending by themselves, flags,
//!   resignations, agreed and claimed draws.

mod claim;
mod complete;
mod config;
mod correct;
mod endings;
mod full_dead;
mod hypotheses;
mod illegal;
mod orientation;
mod output;
mod phase;
mod progress;
mod read;
mod record;
mod scanned;
mod settle;
mod snapshots;
mod touch;
mod unconfirmed;

pub use claim::judge_claim;
pub use config::EngineConfig;
pub use endings::{automatic_ending, is_dead_fast};
pub use full_dead::{DeadCheck, MateCheck, verdict_position};
pub use hypotheses::lines_san;
pub use illegal::Attempt;
pub use orientation::Orientation;
pub use output::{EngineError, GameEvent};
pub use phase::{Phase, Unexplained};
pub use progress::in_progress;
pub use read::{Moment, Reading, Scanned, read};
pub use settle::Settle;
pub use snapshots::Snapshots;
pub use touch::Touches;

use shakmaty::{Bitboard, ByColor, CastlingMode, Chess, Move, Position, Square};

use crate::{
    alert::AlertKind,
    event::{BoardEvent, Millis, TimedEvent},
    game::{Game, Termination, win},
    resync::SyncState,
    sensed::SensedBoard,
};
use complete::Clock;
use hypotheses::Hypotheses;
use scanned::ScanReading;
use unconfirmed::Unconfirmed;

/// A takeback one scan showed, held for the next (see
/// [`Engine::takes_back_held`]).
#[derive(Debug, Clone, Copy)]
struct HeldTakeback {
    /// The record's length when it was held.
    ply: usize,
    /// The record's length the scan went back to.
    back_to: usize,
    /// The squares that scan changed where the board differed from the
    /// record, and which of them it showed full.
    suspects: Bitboard,
    shown: Bitboard,
    /// When the scan showed it, and its event.
    made_at: Millis,
    basis: u64,
}

/// The reconstruction engine for one board: a thin front that feeds board
/// events through the steps above and collects the game events.
#[derive(Debug, Clone)]
pub struct Engine {
    config: EngineConfig,
    games: Vec<Game>,
    sensed: SensedBoard,
    /// Counts board events; a touch is stamped with it.
    seq: u64,
    now: Millis,
    settle: Settle,
    phase: Phase,
    clock: Clock,
    /// Tags given after a game ended, for the next game.
    pending_tags: Vec<(String, String)>,
    touches: Touches,
    events: Vec<GameEvent>,
    /// The board is turned round: its squares are turned back.
    rotated: bool,
    /// The full analyses are run elsewhere and fed back (a daemon); by
    /// default the engine runs them itself, in line.
    deferred: bool,
    /// Whether a full scan (or a dump after a reconnection) changed the
    /// sensors last: states may have been skipped.
    scanned: bool,
    /// Candidate continuations while the board is out of step.
    hypotheses: Hypotheses,
    /// Candidates were listed since the board last showed the record's
    /// position (or a single move from it): the record may lag the board
    /// by more plies than any later state shows, so no sequence of several
    /// moves read from it is certain.
    behind: bool,
    /// The last full scan was a dump after square-by-square reports.
    dumped: bool,
    /// The sequence number of the last dump: until the record has caught
    /// up past it, squares may have changed unseen before it.
    dump_seq: u64,
    /// The event of a scanning board's first scan after the link came
    /// back (0: none yet).
    reconnected_seq: u64,
    /// The squares the last dump showed occupied: any of them may have
    /// been emptied and refilled unseen before it.
    unseen: shakmaty::Bitboard,
    /// The occupancies a scanning board showed since its last square
    /// report.
    snapshots: snapshots::Snapshots,
    /// A dump after a reconnection on an occupancy board is being read:
    /// every move recorded from it was made while nobody was listening,
    /// and is inferred from the squares alone.
    reading_dump: bool,
    /// The moves being recorded are the ones every candidate listed for
    /// the arbiter still begins with: the board told them apart.
    narrowing: bool,
    /// Moves were recorded from lines a hand was read among, and the scan
    /// showed more than the snapshots trust: it is read again from the
    /// new record.
    read_again: bool,
    /// The last reading was a move in progress: if the players end the
    /// game now, the state is read again as where they left the pieces.
    hand_awaited: bool,
    /// The record's length, and the lines a scan was read among as a move
    /// in progress from that position (occupancy snapshots only).
    held: Option<(usize, Vec<Vec<Move>>)>,
    /// The record's length, and the lines that exactly explained a scan
    /// from that position which was read as a hand at work instead
    /// (identifying snapshots only).
    passed: Option<(usize, Vec<Vec<Move>>)>,
    /// Per square, when a piece was last lifted from it and what the board
    /// said it was: a piece put back within the settle time is a blip.
    lifted: [Option<(Millis, Option<shakmaty::Piece>, u64)>; 64],
    /// Per square, when a piece was last put on it while it was empty.
    placed: [Option<(Millis, u64)>; 64],
    /// Moves a snapshot showed that the next scan must confirm.
    unconfirmed: Option<Unconfirmed>,
    /// The last snapshot, when nothing explained it: if the next scan
    /// empties again the one square it filled, that was a blip.
    unexplained: Option<u64>,
    /// The link to the board came back: its next scan is a dump.
    reconnected: bool,
    /// A line too long to record that only the last scan showed: listed
    /// for the arbiter if the board still stands so when pieces would be
    /// taken for displaced (a blip the next scan clears is no candidate).
    /// On occupancy it waits for the next scan only (`put_off`).
    unlisted: Option<Vec<Vec<Move>>>,
    /// On occupancy, `unlisted` was put off at the record's ply given,
    /// with the squares only the scan that showed it changed (a blip that
    /// scan caught, if one is back as the record has it at the next scan
    /// and the line cannot have gone on to the board), and that scan's
    /// event.
    put_off: Option<(usize, Bitboard, u64)>,
    /// On occupancy, a takeback only the last scan showed, held until the
    /// next one: a blip that scan caught may explain it. The record's
    /// length and the ply it goes back to, the squares a blip would
    /// explain and what the scan showed on them, and when.
    takeback_held: Option<HeldTakeback>,
}

impl Default for Engine {
    fn default() -> Engine {
        Engine::new(EngineConfig::default())
    }
}

impl Engine {
    /// An engine whose first game starts from the standard position, with the
    /// pieces standing on it.
    pub fn new(config: EngineConfig) -> Engine {
        let start = Chess::default();
        Engine {
            config,
            sensed: SensedBoard::showing(start.board()),
            games: vec![Game::new(start, 0)],
            seq: 0,
            now: 0,
            settle: Settle::default(),
            phase: Phase::default(),
            clock: Clock::default(),
            pending_tags: Vec::new(),
            touches: Touches::default(),
            events: vec![GameEvent::GameStarted { game: 0, at: 0 }],
            rotated: config.orientation == Orientation::Rotated,
            deferred: false,
            scanned: false,
            hypotheses: Hypotheses::default(),
            behind: false,
            dumped: false,
            dump_seq: 0,
            reconnected_seq: 0,
            unseen: shakmaty::Bitboard::EMPTY,
            snapshots: snapshots::Snapshots::default(),
            reading_dump: false,
            narrowing: false,
            read_again: false,
            hand_awaited: false,
            held: None,
            passed: None,
            lifted: [None; 64],
            placed: [None; 64],
            unconfirmed: None,
            unexplained: None,
            reconnected: false,
            unlisted: None,
            put_off: None,
            takeback_held: None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Every game of the session so far, the current one last.
    pub fn games(&self) -> &[Game] {
        &self.games
    }

    /// The current game.
    pub fn game(&self) -> &Game {
        self.games.last().expect("the engine always has a game")
    }

    fn game_mut(&mut self) -> &mut Game {
        self.games.last_mut().expect("the engine always has a game")
    }

    fn game_index(&self) -> usize {
        self.games.len() - 1
    }

    /// What the sensors show now.
    pub fn sensed(&self) -> &SensedBoard {
        &self.sensed
    }

    /// Where the engine stands between the record and the board.
    pub fn phase(&self) -> &Phase {
        &self.phase
    }

    /// The time of the latest event or tick.
    pub fn now(&self) -> Millis {
        self.now
    }

    /// When the engine next has something to do with no new event: the
    /// current board state settles, or the arbiter is to be told pieces
    /// are displaced. A live reader calls [`Engine::advance_to`] then.
    pub fn next_deadline(&self) -> Option<Millis> {
        let settle = self.settle.deadline(self.config.settle_ms);
        // While ambiguous the arbiter has the candidates instead.
        let displaced = if self.config.arbiter
            && !self.game().is_over()
            && self.sync_state() != SyncState::Ambiguous
        {
            self.phase.displaced_deadline(self.config.displaced_ms)
        } else {
            None
        };
        match (settle, displaced) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Takes the events produced since the last call.
    pub fn drain_events(&mut self) -> Vec<GameEvent> {
        std::mem::take(&mut self.events)
    }

    /// Drops the events produced since the last call, keeping the buffer
    /// (for callers that only want the record, such as a replay).
    pub fn clear_events(&mut self) {
        self.events.clear();
    }

    /// Applies one event. Timestamps earlier than the last one are taken as
    /// equal to it.
    pub fn push(&mut self, ev: &TimedEvent) -> Result<(), EngineError> {
        let turned = self.oriented(ev);
        let ev = turned.as_ref().unwrap_or(ev);
        let t = ev.at.max(self.now);
        self.advance_to(t);
        self.now = t;
        match &ev.event {
            BoardEvent::Lift(sq) => self.lift(*sq, t),
            BoardEvent::Place(sq, piece) => self.place(*sq, *piece, t),
            BoardEvent::Board(scan) => {
                self.seq += 1;
                if self.sensed.apply_scan(scan, self.seq) {
                    self.settle.changed(t, self.seq);
                    // A scan after square-by-square reports is a dump (a
                    // reconnection), and so is a scanning board's first
                    // scan after the link came back; otherwise one of a
                    // scanning board's snapshots.
                    if self.reconnected && self.scanned {
                        self.reconnected_seq = self.seq;
                    }
                    self.dumped = !self.scanned || self.reconnected;
                    self.reconnected = false;
                    self.scanned = true;
                    self.push_snapshot();
                    if self.dumped {
                        self.unseen = self.sensed.occupied();
                        self.dump_seq = self.seq;
                    }
                } else if !self.scanned && self.snapshots.only() {
                    // A scanning board's first scan, showing what already
                    // stands: its next scans are snapshots, not a dump.
                    self.scanned = true;
                    self.push_snapshot();
                }
            }
            BoardEvent::Reconnected => self.reconnected = true,
            BoardEvent::Clock(white, black) => {
                self.clock.last = Some((*white, *black));
                // Times reported while the board shows a state not read yet
                // belong to the record as it will be once it is read.
                if !self.settle.hold_clock() && self.report_belongs_to_record() {
                    self.update_last_completed_clock();
                }
            }
            other => {
                // The rest speak of the settled position.
                self.flush();
                if matches!(
                    other,
                    BoardEvent::Resign(_)
                        | BoardEvent::Draw
                        | BoardEvent::Result(_)
                        | BoardEvent::Special(_)
                ) && (self.hand_awaited
                    || self.scanned && !self.sensed.shows_position(self.game().position()))
                {
                    // The players ended the game: what the board shows is
                    // where they left it, not a piece in the air (also when
                    // only the first of the moves a scan showed was read).
                    self.evaluate_at(true);
                }
                self.apply_decision(other, t)?;
            }
        }
        self.analyse_in_line();
        Ok(())
    }

    fn lift(&mut self, sq: Square, t: Millis) {
        self.seq += 1;
        // A square filled and emptied again at once, with nothing else in
        // between, before the state settled: a sensor blip.
        let phantom = self.placed[sq.to_usize()].take().is_some_and(|(at, seq)| {
            seq + 1 == self.seq && t.saturating_sub(at) < self.config.settle_ms
        });
        if phantom {
            self.lifted[sq.to_usize()] = None;
            if self.sensed.lift(sq, self.seq) {
                self.settle.changed(t, self.seq);
                self.scanned = false;
                self.snapshots.clear();
            }
            self.sensed.forget_phantom(sq);
            return;
        }
        if !self.game().is_over() && self.config.arbiter {
            self.touches.note(
                &self.games[self.games.len() - 1],
                sq,
                t,
                self.config.settle_ms,
            );
        }
        let settled = !self.settle.is_unread();
        let was = self.sensed.occupied().contains(sq);
        self.lifted[sq.to_usize()] = was.then_some((t, self.sensed.piece_at(sq), self.seq));
        if self.sensed.lift(sq, self.seq) {
            self.settle.changed(t, self.seq);
            self.scanned = false;
            self.snapshots.clear();
        }
        self.complete_by_opponent_lift(sq, settled, t);
    }

    fn place(&mut self, sq: Square, piece: Option<shakmaty::Piece>, t: Millis) {
        self.seq += 1;
        // Put back where it was lifted, as it was, at once (nothing else
        // happened in between) and before the state settled.
        let candidate = self.lifted[sq.to_usize()]
            .take()
            .is_some_and(|(at, was, seq)| {
                seq + 1 == self.seq
                    && t.saturating_sub(at) < self.config.settle_ms
                    && !self.sensed.occupied().contains(sq)
                    && (piece.is_none() || was.is_none() || piece == was)
            });
        // A piece put on an empty square, not one put back, may be a blip
        // itself.
        self.placed[sq.to_usize()] =
            (!candidate && !self.sensed.occupied().contains(sq)).then_some((t, self.seq));
        if self.sensed.place(sq, piece, self.seq) {
            self.settle.changed(t, self.seq);
            self.scanned = false;
            self.snapshots.clear();
        }
        if candidate {
            self.forget_if_blip(sq);
        }
    }

    /// A piece lifted from `sq` and put straight back is a blip (a sensor
    /// flicker, or a hand that let go at once), not evidence of a touch or
    /// a capture, unless another piece was in the air meanwhile: then it
    /// may be a capture on `sq` (the captured piece lifted, the capturing
    /// one put down in its place).
    fn forget_if_blip(&mut self, sq: Square) {
        let mut probe = self.sensed.clone();
        probe.forget_blip(sq);
        let game = self.game();
        let pos = game.position();
        let in_air = probe.occupied().count() < pos.board().occupied().count()
            && !matches!(
                crate::matcher::explain(pos, &probe, game.basis(game.ply()), 1),
                crate::matcher::Explanation::Unique(_)
            );
        if !in_air {
            self.sensed = probe;
            self.touches.forget(sq);
        }
    }

    /// Presses, flags, resignations, agreements, results, claims, setups
    /// and tags.
    fn apply_decision(&mut self, event: &BoardEvent, t: Millis) -> Result<(), EngineError> {
        match event {
            BoardEvent::Press(color) => {
                self.clock.in_use = true;
                self.press(*color, t);
            }
            // Art. 6.9: a loss, unless the opponent cannot checkmate.
            BoardEvent::Flag(color) => {
                self.loss_unless_no_mate(*color, Termination::TimeForfeit, t)
            }
            BoardEvent::Resign(color) => {
                // Art. 5.1.2 (2023): a draw if the opponent cannot checkmate.
                if self.config.rules().resignation_needs_mating_chances() {
                    self.loss_unless_no_mate(*color, Termination::Resignation, t);
                } else {
                    self.end_game(win(!*color), Termination::Resignation, t);
                }
            }
            BoardEvent::Draw => self.agree_draw(t),
            BoardEvent::Result(outcome) => {
                let termination = if outcome.is_known() {
                    Termination::ArbiterDecision
                } else {
                    Termination::Abandoned
                };
                self.end_game(*outcome, termination, t);
            }
            BoardEvent::Special(special) => {
                self.end_game(special.outcome(), Termination::Special(*special), t);
            }
            BoardEvent::Claim(color, kind, mv) => self.claim(*color, *kind, mv.as_ref(), t),
            BoardEvent::Setup(fen) => self.setup(fen, t)?,
            BoardEvent::Tag(name, value) => {
                if self.game().is_over() {
                    self.pending_tags.push((name.clone(), value.clone()));
                } else {
                    self.game_mut().set_tag(name, value);
                }
            }
            BoardEvent::Lift(_)
            | BoardEvent::Place(..)
            | BoardEvent::Board(_)
            | BoardEvent::Reconnected => {}
            BoardEvent::Clock(..) => {}
        }
        Ok(())
    }

    /// Whether the record has not caught up with the last dump yet: the
    /// board showed moves that were not all read from it.
    pub(super) fn unseen_since_dump(&self) -> bool {
        let game = self.game();
        self.dump_seq > game.basis(game.ply())
    }

    /// Keeps what the board shows now as the snapshot of the last scan.
    fn push_snapshot(&mut self) {
        self.snapshots.push(self.seq, self.sensed.occupied());
        if self.sensed.identifies_all() {
            let pieces = Square::ALL.map(|sq| self.sensed.piece_at(sq));
            self.snapshots.push_pieces(self.seq, pieces);
        }
    }

    /// Whether a scanning board's scan after a reconnection shows more
    /// than the record has caught up with.
    pub(super) fn unseen_since_reconnection(&self) -> bool {
        let game = self.game();
        self.reconnected_seq > game.basis(game.ply())
    }

    /// Lets time pass to `t` with no event: a board state that has stood long
    /// enough is read. A live reader calls this at [`Engine::next_deadline`].
    pub fn advance_to(&mut self, t: Millis) {
        if self.settle.is_due(t, self.config.settle_ms) {
            self.read_board();
        }
        self.now = self.now.max(t);
        self.check_displaced(t);
        self.analyse_in_line();
    }

    /// Reads the current board state now, however briefly it has stood (at a
    /// clock press or at the end of the input).
    pub fn flush(&mut self) {
        if self.settle.is_unread() {
            self.read_board();
        }
    }

    /// Reads the last board state, however briefly it stood: the input ended.
    pub fn finish(&mut self) {
        self.flush();
        if let Some(lines) = self.unlisted.take()
            && !self.game().is_over()
        {
            self.ambiguous(lines, false);
        }
        if self.undecided() {
            self.list_undecided();
        } else if self.hand_awaited
            && !self.game().is_over()
            && self.clock.pending_press[self.game().position().turn()]
        {
            // The player to move pressed his clock after the board last
            // changed, and nothing came after: the board stands as he left
            // it, his piece put down, not in the air (Art. 6.2.1: he
            // pressed to complete a move).
            self.evaluate_at(true);
        }
        self.confirm_at_end();
        // The input ended with a held takeback still on the board.
        if let Some(held) = self.takeback_held.take()
            && held.made_at == self.settle.since()
            && self.game().ply() == held.ply
            && !self.game().is_over()
        {
            self.take_back(held.back_to, held.made_at, held.basis);
        }
        self.analyse_in_line();
    }

    fn read_board(&mut self) {
        let clock_pending = self.settle.mark_read();
        self.evaluate_at(false);
        if clock_pending {
            self.update_last_completed_clock();
        }
    }

    /// The lines that exactly explained a scan from the record's position
    /// which was read as a hand at work instead.
    fn passed_lines(&self) -> &[Vec<Move>] {
        self.lines_at_ply(&self.passed)
    }

    /// `kept`'s lines if they were kept at the record's present length.
    fn lines_at_ply<'a>(&self, kept: &'a Option<(usize, Vec<Vec<Move>>)>) -> &'a [Vec<Move>] {
        match kept {
            Some((ply, lines)) if *ply == self.game().ply() => lines,
            _ => &[],
        }
    }

    /// Reads the settled board state and applies what it shows.
    /// `closing`: the players are ending the game, so the board stands as
    /// they left it, with no piece in the air.
    fn evaluate_at(&mut self, closing: bool) {
        if self.takes_back_held() {
            return self.evaluate_at(closing);
        }
        let unlisted = self.unlisted.take();
        let put_off = self.put_off.take();
        self.settle_unconfirmed();
        if self.undecided() {
            // Read when the board is.
            if put_off.is_some() {
                (self.unlisted, self.put_off) = (unlisted, put_off);
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
        if self.scanned
            && self.unconfirmed.is_none()
            && self.sensed.shows_position(self.game().position())
        {
            let game = self.game();
            let (since, record) = (game.basis(game.ply()), game.position().board().occupied());
            self.snapshots.forget_odd_fills(since, record);
        }
        let made_at = self.settle.since();
        let basis = self.settle.basis();
        let plies = self.game().ply();
        let games = self.games.len();
        let scanned = match (self.scanned, self.dumped) {
            // Square by square after a dump on occupancy, until the record
            // has caught up with it: squares may have changed unseen, and a
            // piece lifted looks like one taken.
            (false, _) if self.unseen_since_dump() && !self.sensed.identifies_all() => {
                Scanned::AfterDump
            }
            (false, _) => Scanned::No,
            (true, false) => Scanned::Snapshot,
            (true, true) => Scanned::Dump,
        };
        // On occupancy, until the record has caught up with a dump, a
        // capture on any square it showed occupied may have gone unseen.
        let stamped;
        let sensed = if matches!(scanned, Scanned::Dump | Scanned::AfterDump)
            && !self.sensed.identifies_all()
        {
            stamped = self.sensed.changed_unseen(self.unseen, self.dump_seq);
            &stamped
        } else {
            &self.sensed
        };
        let moment = Moment {
            pending_press: self.clock.pending_press,
            presses_ahead: self.clock.presses_ahead,
            closing,
            candidates: if self.hypotheses.state == SyncState::Ambiguous {
                &self.hypotheses.lines
            } else {
                &[]
            },
            held: self.lines_at_ply(&self.held),
            passed: self.passed_lines(),
        };
        let arbiter = self.config.arbiter;
        let mut reading = read(
            self.game(),
            sensed,
            &self.snapshots,
            &self.phase,
            moment,
            arbiter,
            scanned,
        );
        // On occupancy, a line the last scan alone showed was put off: it
        // is listed now, or dropped as a blip, unless the record has moved.
        let mut put_off = match (unlisted, put_off) {
            (Some(lines), Some((ply, suspects, seq))) if ply == self.game().ply() => {
                Some((lines, suspects, seq))
            }
            _ => None,
        };
        // Nothing read, and a square of the blip back as the record has
        // it: the scan that showed the line is read without the blip. If
        // the board then reads (20.Bxe6 under way, e4 caught full, then
        // 20...Ke7), the line was the blip's.
        if let Some((_, suspects, seq)) = put_off
            && reading == Reading::Wait
        {
            let record = self.game().position().board().occupied();
            let back = !(record ^ self.sensed.occupied()) & suspects;
            if back.any() {
                let mut repaired = self.snapshots.clone();
                repaired.forget_blips(seq, back);
                let again = read(
                    self.game(),
                    sensed,
                    &repaired,
                    &self.phase,
                    moment,
                    arbiter,
                    scanned,
                );
                if again != Reading::Wait {
                    self.snapshots = repaired;
                    reading = again;
                    put_off = None;
                    if self.hypotheses.state == SyncState::Searching {
                        self.hypotheses.state = SyncState::Ok;
                    }
                }
            }
        }
        // Lines read past a blip follow the scans without it.
        if let Reading::Ambiguous(lines) = &reading
            && scanned == Scanned::Snapshot
        {
            let lines = lines.clone();
            self.forget_blips_read_past(&lines);
        }
        // A takeback one scan alone shows, on occupancy, waits for the
        // next scan: it may have caught a blip on the square a capture
        // left (8.Nxc6 made, then d4 caught full: the board as before it).
        if let Reading::Takeback(back_to) = reading
            && scanned == Scanned::Snapshot
            && !closing
            && !self.sensed.identifies_all()
        {
            let record = self.game().position().board().occupied();
            let suspects = self.snapshots.blip_suspects(record, self.sensed.occupied());
            if suspects.any() {
                self.takeback_held = Some(HeldTakeback {
                    ply: self.game().ply(),
                    back_to,
                    suspects,
                    shown: self.sensed.occupied() & suspects,
                    made_at,
                    basis,
                });
                reading = Reading::Wait;
            }
        }
        let reading = if put_off.is_none() && !closing && scanned == Scanned::Snapshot {
            self.put_off_listing(reading)
        } else {
            reading
        };
        if let Some((lines, suspects, _)) = put_off {
            if self.lists_put_off(&lines, suspects, &reading) {
                self.ambiguous(lines, false);
                return self.evaluate_at(closing);
            }
            // A blip: the record is as in step as it was.
            if self.hypotheses.state == SyncState::Searching {
                self.hypotheses.state = SyncState::Ok;
            }
        }
        self.unexplained = (reading == Reading::Wait
            // A line put off is no blip to forget.
            && self.unlisted.is_none()
            && scanned == Scanned::Snapshot
            && self.snapshots.only()
            && !self.sensed.identifies_all()
            // The record's position shown is explained: no blip of its own.
            && !self.sensed.shows_position(self.game().position()))
        .then(|| self.snapshots.last().map(|(seq, _)| seq))
        .flatten();
        self.hand_awaited = reading == Reading::Hand;
        if reading == Reading::Hand && scanned == Scanned::Snapshot && !self.sensed.identifies_all()
        {
            let lines = read::held_lines(self.game(), &self.sensed, &self.snapshots);
            self.held = Some((self.game().ply(), lines));
        }
        if reading == Reading::Hand && scanned == Scanned::Snapshot && self.sensed.identifies_all()
        {
            let ply = self.game().ply();
            let exact = scanned::exact_now(self.game().position(), &self.sensed);
            if !exact.is_empty() {
                match &mut self.passed {
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
        // Nothing read from a snapshot, but lines the last move in progress
        // was read among may have gone on to it (the record lags).
        let may_lag = reading == Reading::Wait
            && scanned == Scanned::Snapshot
            && !self.dumped
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
        self.reading_dump =
            scanned == Scanned::Dump && !self.snapshots.only() && !self.sensed.identifies_all();
        self.read_again = false;
        self.apply(reading, made_at, basis, scanned != Scanned::No);
        if std::mem::take(&mut self.read_again)
            && self.game().ply() > plies
            && !self.game().is_over()
            && !self.sensed.shows_position(self.game().position())
        {
            return self.evaluate_at(closing);
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
            return self.evaluate_at(closing);
        }
        // Moves read but held back as one more candidate: the board is
        // explained by the lines listed, as when the reading lists them.
        let held_back = moves
            && self.games.len() == games
            && self.game().ply() == plies
            && self.hypotheses.state == SyncState::Ambiguous;
        let game = self.game();
        // The held lines are gone through last: the reading went through
        // them already, and only a state nothing else explains needs it.
        let mut in_hand = held_back
            || waiting
                && !game.is_over()
                && (undecided
                    || in_progress(game.position(), &self.sensed)
                    || may_lag && self.held_lines_go_on());
        let own_hand = in_hand && !in_progress(game.position(), &self.sensed);
        if waiting
            && (!in_hand || own_hand)
            && self.scanned
            && !game.is_over()
            && !self.phase.is_restoring()
        {
            // A scan missed the state between a move and the next hand
            // (the scan reading waited: a hand after some move, not the
            // mover's own hand, may explain it).
            // The snapshots since the record's position must have shown
            // that move, then the hand (not a king that stood elsewhere).
            if let Some(m) = progress::move_then_in_progress(game.position(), &self.sensed)
                && self.snapshots.allow_then_hand(
                    game.position(),
                    &[m],
                    game.basis(game.ply()),
                    shakmaty::Bitboard::EMPTY,
                )
            {
                // Not while listed candidates say otherwise: the board may
                // be further on than this one move.
                if self.agrees_with_candidates(m) {
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
                in_hand = ((self.dumped || self.unseen_since_reconnection())
                    && !self.sensed.identifies_all()
                    && self.hypotheses.state == SyncState::Searching)
                    || self.unconfirmed.is_some()
                    || self.takeback_held.is_some();
            }
        } else if !in_hand {
            self.hypotheses.clear();
        }
        self.reading_dump = false;
        if self.sensed.shows_position(self.game().position()) {
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

    /// A takeback held for the next scan, once a later state came: it was
    /// no blip if the squares a blip would explain still show what that
    /// scan showed, or if the board is read from the position it went
    /// back to and not from the record (4.Bxc6 taken back, then 4.Ba4: the
    /// b5 bishop leaves again). The moves are then taken back when the
    /// scan showed it, and the board is read again from there (returns
    /// true).
    fn takes_back_held(&mut self) -> bool {
        let Some(held) = self.takeback_held.take() else {
            return false;
        };
        if held.made_at == self.settle.since() {
            // Still the same state: it waits on.
            self.takeback_held = Some(held);
            return false;
        }
        let game = self.game();
        let (Some(back), false) = (game.position_at(held.back_to), game.is_over()) else {
            return false;
        };
        if game.ply() != held.ply {
            return false;
        }
        let reads = |pos: &Chess, pressed: usize| {
            self.sensed.shows_position(pos)
                || scanned::read_scan(pos, &self.sensed, pressed, true) != ScanReading::None
        };
        let stands = self.sensed.occupied() & held.suspects == held.shown
            || !reads(game.position(), self.clock.presses_ahead) && reads(back, 0);
        if stands {
            self.take_back(held.back_to, held.made_at, held.basis);
        }
        stands
    }

    /// Whether lines a scan was read among as a move in progress, gone on
    /// by up to three moves, still explain the board (exactly or with a
    /// hand), though no reading was certain: the record lags the board,
    /// and no piece is displaced. Once the board has gone on further than
    /// that, pieces are taken for displaced as before.
    fn held_lines_go_on(&self) -> bool {
        let held = self.lines_at_ply(&self.held);
        if held.is_empty() || self.sensed.identifies_all() {
            return false;
        }
        let game = self.game();
        let (exact, hand) = scanned::SnapshotLines {
            pos: game.position(),
            sensed: &self.sensed,
            snapshots: &self.snapshots,
            since: game.basis(game.ply()),
            settling: Bitboard::EMPTY,
        }
        .candidates(held, true);
        !(exact.is_empty() && hand.is_empty())
    }

    /// Records moves read from the board. Only the first of the moves a
    /// scan shows may be certain: the rest are read later from the same
    /// scan, whose changes must then count as after the record.
    fn record_read(&mut self, moves: &[Move], made_at: Millis, basis: u64, scanned: bool) {
        let mut after = self.game().position().clone();
        for &m in moves {
            after.play_unchecked(m);
        }
        let basis = if scanned && !self.sensed.shows_position(&after) {
            let game = self.game();
            if self.scanned {
                basis.saturating_sub(1)
            } else {
                // Read square by square after a dump: every change since
                // the record's position may belong to the moves still to
                // read.
                game.basis(game.ply()).min(basis.saturating_sub(1))
            }
        } else {
            basis
        };
        // On occupancy, the board is read on from the first scan since the
        // record's position that showed where the moves lead: what later
        // scans showed (a square caught empty, a capture under way) is
        // evidence for the next move, not part of these.
        let basis =
            if scanned && self.scanned && self.snapshots.only() && !self.sensed.identifies_all() {
                let game = self.game();
                self.snapshots
                    .first_showing(game.basis(game.ply()), basis, after.board().occupied())
                    .map_or(basis, |seq| seq.min(basis))
            } else {
                basis
            };
        self.record(moves, made_at, basis);
    }

    /// Applies a reading. `scanned`: the state was read as one a scan may
    /// have skipped states of.
    fn apply(&mut self, reading: Reading, made_at: Millis, basis: u64, scanned: bool) {
        match reading {
            Reading::Wait | Reading::Hand => {}
            Reading::Ambiguous(lines) => self.ambiguous(lines, false),
            Reading::Moves(moves) => {
                if !self.contradicts_candidates(&moves) {
                    self.record_read(&moves, made_at, basis, scanned);
                }
            }
            Reading::Unconfirmed {
                certain,
                then,
                suspect,
            } => self.unconfirmed_read(certain, then, suspect, made_at, basis, scanned),
            // Lines a hand was read among, nothing listed: the moves they
            // begin with are read as any, and the scan is read again from
            // them if it showed more than the snapshots trust.
            Reading::Narrowed { certain, lines }
                if self.hypotheses.state != SyncState::Ambiguous =>
            {
                if !certain.is_empty() && !self.contradicts_candidates(&certain) {
                    self.record_read(&certain, made_at, basis, scanned);
                    self.read_again = lines.iter().any(|line| line.len() > certain.len());
                }
            }
            Reading::Narrowed { certain, lines } => {
                let lagged = self.hypotheses.lagged;
                if !certain.is_empty() {
                    self.narrowing = true;
                    self.record_read(&certain, made_at, basis, scanned);
                    self.narrowing = false;
                }
                let rest: Vec<_> = lines
                    .into_iter()
                    .filter(|line| line.len() > certain.len())
                    .map(|line| line[certain.len()..].to_vec())
                    .collect();
                // The arbiter was told when the candidates were first
                // listed; they are only followed on here.
                self.hypotheses = if rest.is_empty() {
                    Hypotheses::default()
                } else {
                    self.behind = true;
                    Hypotheses {
                        state: SyncState::Ambiguous,
                        lines: rest,
                        lagged,
                    }
                };
            }
            Reading::Changed(m) => self.replace_last(m, made_at, basis),
            Reading::Takeback(ply) => self.take_back(ply, made_at, basis),
            Reading::ResultSignal(outcome) => {
                let message = format!(
                    "both kings were put on the centre squares: the players signal the result {} (the convention at DGT-equipped events: both on light squares 1-0, both on dark squares 0-1, one of each 1/2-1/2); not read as moves",
                    outcome.as_str()
                );
                self.alert(AlertKind::ResultSignal, None, message, None);
                self.end_game(outcome, Termination::ResultSignal, made_at);
            }
            Reading::ClockWithoutMove(turn) => {
                self.clock.pending_press[turn] = false;
                self.clock.presses_ahead = 0;
                let message = format!(
                    "{} pressed the clock without making a move, and {} then moved (Art. 7.5.3: treated as an illegal move)",
                    crate::event::side_name(turn),
                    crate::event::side_name(!turn)
                );
                self.illegal(AlertKind::ClockWithoutMove, turn, message, None, made_at);
            }
            Reading::Restored(m) => self.restored(m, made_at, basis),
            Reading::IllegalStands { illegal, reply } => {
                self.continue_after_illegal(illegal, reply, made_at, basis)
            }
            Reading::NewGame => self.start_game(Chess::default(), made_at),
            Reading::Repromoted(m) => self.repromote(m, made_at, basis),
        }
    }

    /// The squares where the board differs from the game position: in
    /// occupancy, or in the piece a board that identifies pieces names.
    fn differ_from_record(&self) -> shakmaty::Bitboard {
        let board = self.game().position().board();
        Square::ALL
            .into_iter()
            .filter(|&sq| {
                board.occupied().contains(sq) != self.sensed.occupied().contains(sq)
                    || self
                        .sensed
                        .piece_at(sq)
                        .is_some_and(|p| board.piece_at(sq) != Some(p))
            })
            .collect()
    }

    /// A board state no move explains that stands longer than a move in
    /// progress would: pieces displaced or knocked over (Art. 7.4, 7.6).
    fn check_displaced(&mut self, t: Millis) {
        if !self.config.arbiter || self.game().is_over() {
            return;
        }
        match self.phase.displaced_deadline(self.config.displaced_ms) {
            // Candidates were listed to the arbiter in `out_of_sync`.
            Some(_) if self.sync_state() == SyncState::Ambiguous => return,
            Some(due) if t >= due => {}
            _ => return,
        }
        if let Some(lines) = self.unlisted.take() {
            self.ambiguous(lines, false);
            return;
        }
        self.phase.told_displaced();
        let differ: Vec<String> = self
            .differ_from_record()
            .into_iter()
            .map(|sq| sq.to_string())
            .collect();
        let message = format!(
            "the board differs from the game position on {} and no move explains it: pieces displaced? Nothing is recorded until the position or a legal move from it is on the board again (Art. 7.4, 7.6)",
            differ.join(", ")
        );
        self.alert(AlertKind::DisplacedPieces, None, message, None);
    }

    fn setup(&mut self, fen: &shakmaty::fen::Fen, t: Millis) -> Result<(), EngineError> {
        let pos = legal_position(fen)?;
        let game = self.game();
        if !game.is_over() && game.ply() > 0 {
            return Err(EngineError::SetupMidGame {
                fen: fen.to_string(),
                ply: game.ply(),
            });
        }
        self.seq += 1;
        self.sensed = SensedBoard::showing(pos.board());
        self.settle.mark_read();
        if self.game().is_over() {
            self.start_game(pos, t);
        } else {
            let tags = std::mem::take(&mut self.game_mut().tags);
            let mut game = Game::new(pos, self.seq);
            game.tags = tags;
            *self.game_mut() = game;
        }
        Ok(())
    }

    /// The arbiter removes the last recorded move of the current game: a
    /// correction of the record at time `at`, not something the board
    /// showed. A game that this move ended (checkmate, stalemate) goes on
    /// ([`GameEvent::GameResumed`]); a game that ended otherwise
    /// (resignation, flag, agreement, arbiter), or that has no move, is left
    /// alone. Returns whether a move was removed.
    ///
    /// The sensors are left as they are: if the board still shows the
    /// removed move, the next state it settles in is read against the
    /// shortened record (the move is made again once the board changes).
    pub fn undo_last_move(&mut self, at: Millis) -> bool {
        let t = at.max(self.now);
        self.advance_to(t);
        self.now = t;
        let game = self.game();
        let n = game.ply();
        let reopen = match game.termination() {
            _ if n == 0 => return false,
            None => false,
            // Endings the last move brought about go when it goes.
            Some(
                Termination::Checkmate
                | Termination::Stalemate
                | Termination::DeadPosition
                | Termination::FivefoldRepetition
                | Termination::SeventyfiveMoves,
            ) => true,
            Some(_) => return false,
        };
        let gi = self.game_index();
        if reopen {
            self.game_mut().reopen();
            self.events.push(GameEvent::GameResumed { game: gi, at: t });
        }
        self.game_mut().truncate(n - 1);
        self.clock.pending_press = ByColor::default();
        self.clock.presses_ahead = 0;
        self.phase.end_irregularity();
        self.touches.clear_all();
        self.events.push(GameEvent::MovesRetracted {
            game: gi,
            ply: n - 1,
            at: t,
        });
        true
    }
}

/// The position `fen` describes, if it is legal (a setup, or the arbiter's
/// correction).
fn legal_position(fen: &shakmaty::fen::Fen) -> Result<Chess, EngineError> {
    fen.clone()
        .into_position(CastlingMode::Standard)
        .map_err(|e| EngineError::IllegalSetup {
            fen: fen.to_string(),
            reason: e.to_string(),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::replay::replay_script;

    fn engine(script: &str) -> Engine {
        let mut e = replay_script("t", script, EngineConfig::default()).unwrap();
        e.drain_events();
        e
    }

    const TWO_MOVES: &str = "lift e2\nplace e4\npress white\nlift e7\nplace e5\npress black\n";

    #[test]
    fn undo_removes_the_last_move() {
        let mut e = engine(TWO_MOVES);
        assert!(e.undo_last_move(10_000));
        assert_eq!(e.game().ply(), 1);
        assert_eq!(
            e.drain_events(),
            vec![GameEvent::MovesRetracted {
                game: 0,
                ply: 1,
                at: 10_000
            }]
        );
        // The board still shows 1. e4 e5: the next state it settles in is
        // read from the shortened record (here as two moves, with an alert).
        e.push(&TimedEvent {
            at: 11_000,
            event: BoardEvent::Lift(shakmaty::Square::G1),
        })
        .unwrap();
        e.push(&TimedEvent {
            at: 11_300,
            event: BoardEvent::Place(shakmaty::Square::F3, None),
        })
        .unwrap();
        e.finish();
        let sans: Vec<String> = e.game().moves().iter().map(|m| m.san.to_string()).collect();
        assert_eq!(sans, ["e4", "e5", "Nf3"]);
        assert!(e.undo_last_move(12_000));
        assert!(e.undo_last_move(12_000));
        assert!(e.undo_last_move(12_000));
        assert!(!e.undo_last_move(12_000));
        assert_eq!(e.game().ply(), 0);
    }

    #[test]
    fn undo_reopens_a_mate_but_not_a_resignation() {
        let mate = "lift f2\nplace f3\npress white\nlift e7\nplace e5\npress black\nlift g2\nplace g4\npress white\nlift d8\nplace h4\npress black\n";
        let mut e = engine(mate);
        assert_eq!(e.game().termination(), Some(Termination::Checkmate));
        assert!(e.undo_last_move(20_000));
        assert!(!e.game().is_over());
        assert_eq!(e.game().ply(), 3);
        let events = e.drain_events();
        assert!(matches!(events[0], GameEvent::GameResumed { game: 0, .. }));
        assert!(matches!(
            events[1],
            GameEvent::MovesRetracted {
                game: 0,
                ply: 3,
                ..
            }
        ));

        let mut e = engine(&format!("{TWO_MOVES}resign white\n"));
        assert!(!e.undo_last_move(20_000));
        assert_eq!(e.game().ply(), 2);
        assert!(e.drain_events().is_empty());
    }

    fn push_all(e: &mut Engine, script: &str) {
        for line in crate::script::parse_script("t", script).unwrap() {
            e.push(&line.event).unwrap();
        }
    }

    #[test]
    fn presses_ahead_of_the_scans_complete_each_move_in_turn() {
        // A scanning board that names pieces, behind the clock: White,
        // Black and White press for 1.e4 e5 2.Bc4 before a scan shows
        // the first two, then the next scan shows the third. Each press
        // completed one move (Art. 6.2.1), the third 2.Bc4 as well.
        let mut e = Engine::default();
        push_all(
            &mut e,
            "@0 board rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR\n\
             @1000 press white\n@2000 press black\n@3000 press white\n\
             @3500 board rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR\n\
             @4500 board rnbqkbnr/pppp1ppp/8/4p3/2B1P3/8/PPPP1PPP/RNBQK1NR\n\
             @6000 board rnbqkbnr/pppp1ppp/8/4p3/2B1P3/8/PPPP1PPP/RNBQK1NR\n",
        );
        let game = e.game();
        let sans: Vec<String> = game.moves().iter().map(|m| m.san.to_string()).collect();
        assert_eq!(sans, ["e4", "e5", "Bc4"]);
        assert!(game.moves().iter().all(|m| m.completed_at.is_some()));
        assert_eq!(e.clock.presses_ahead, 0);
        assert_eq!(e.clock.pending_press, ByColor::default());
    }

    /// 1.e4 e5 2.Nf3 Nc6 3.Bb5 a6 4.Bxc6 scanned on a board that only
    /// senses occupancy, then b5 full again: the board as before 4.Bxc6.
    const BXC6_THEN_B5_FULL: &str = "@1000 board xxxxxxxx/xxxxxxxx/8/8/8/8/xxxxxxxx/xxxxxxxx\n\
         @1700 board xxxxxxxx/xxxxxxxx/8/8/4x3/8/xxxx1xxx/xxxxxxxx\n\
         @2400 board xxxxxxxx/xxxx1xxx/8/4x3/4x3/8/xxxx1xxx/xxxxxxxx\n\
         @3100 board xxxxxxxx/xxxx1xxx/8/4x3/4x3/5x2/xxxx1xxx/xxxxxx1x\n\
         @3800 board x1xxxxxx/xxxx1xxx/2x5/4x3/4x3/5x2/xxxx1xxx/xxxxxx1x\n\
         @4500 board x1xxxxxx/xxxx1xxx/2x5/1x2x3/4x3/5x2/xxxx1xxx/xxxxx2x\n\
         @5200 board x1xxxxxx/1xxx1xxx/x1x5/1x2x3/4x3/5x2/xxxx1xxx/xxxxx2x\n\
         @5900 board x1xxxxxx/1xxx1xxx/x7/1x2x3/4x3/5x2/xxxx1xxx/xxxxx2x\n\
         @6600 board x1xxxxxx/1xxx1xxx/x7/4x3/4x3/5x2/xxxx1xxx/xxxxx2x\n\
         @7300 board x1xxxxxx/1xxx1xxx/x1x5/4x3/4x3/5x2/xxxx1xxx/xxxxx2x\n\
         @8000 board x1xxxxxx/1xxx1xxx/x1x5/1x2x3/4x3/5x2/xxxx1xxx/xxxxx2x\n";

    #[test]
    fn a_takeback_one_scan_shows_waits_and_the_next_scan_can_undo_it() {
        // b5 full for one scan after 4.Bxc6 is the board before it, or a
        // blip: the record keeps 4.Bxc6 while it stands (however long),
        // and when the next scan shows b5 empty again, the board as the
        // record has it, nothing was taken back.
        let mut e = Engine::default();
        push_all(&mut e, BXC6_THEN_B5_FULL);
        e.advance_to(20_000);
        assert_eq!(e.game().ply(), 7);
        assert!(e.takeback_held.is_some());
        push_all(
            &mut e,
            "@20500 board x1xxxxxx/1xxx1xxx/x1x5/4x3/4x3/5x2/xxxx1xxx/xxxxx2x\n",
        );
        e.advance_to(21_000);
        assert_eq!(e.game().ply(), 7);
        assert!(e.takeback_held.is_none());
        assert!(
            !e.drain_events()
                .iter()
                .any(|ev| matches!(ev, GameEvent::MovesRetracted { .. }))
        );
        // No alert either: the board is where the record has it.
        assert!(e.game().alerts.is_empty());
    }

    #[test]
    fn an_alert_is_emitted_with_its_ruling() {
        let mut e = Engine::default();
        // A pawn from e2 to e5, clock pressed: a completed illegal move; the
        // first in standard play gives the opponent two minutes (Art. 7.5.5).
        push_all(&mut e, "@0 lift e2\n@300 place e5\n@900 press white\n");
        let rulings: Vec<Option<String>> = e
            .drain_events()
            .into_iter()
            .filter_map(|ev| match ev {
                GameEvent::Alert { alert, .. } => Some(alert.ruling),
                _ => None,
            })
            .collect();
        assert_eq!(rulings.len(), 1);
        let ruling = rulings[0].as_deref().expect("a ruling");
        assert!(
            ruling.starts_with("2 minutes to black (Art. 7.5.5"),
            "{ruling}"
        );
    }

    #[test]
    fn the_next_deadline_is_the_settle_then_the_displaced_time() {
        let config = EngineConfig::default();
        let mut e = Engine::new(config);
        assert_eq!(e.next_deadline(), None);
        // A knight put on a square no move reaches.
        push_all(&mut e, "@1000 lift g1\n@1200 place g5\n");
        assert_eq!(e.next_deadline(), Some(1200 + config.settle_ms));
        e.advance_to(1200 + config.settle_ms);
        // The knight in the hand was a move in progress; the board has shown
        // no explained state since it was put on g5.
        let displaced_at = 1200 + config.displaced_ms;
        assert_eq!(e.next_deadline(), Some(displaced_at));
        e.drain_events();
        e.advance_to(displaced_at);
        assert!(e.drain_events().iter().any(|ev| matches!(
            ev,
            GameEvent::Alert { alert, .. } if alert.kind == AlertKind::DisplacedPieces
        )));
        assert_eq!(e.next_deadline(), None);
    }

    /// Found by the property test: a rook put on the opponent's king, the
    /// clock pressed, then the opponent moving, made the engine look for
    /// moves in a position without a king, and panic.
    #[test]
    fn an_illegal_move_that_takes_the_king_is_never_played_on() {
        let mut e = Engine::default();
        push_all(
            &mut e,
            "@0 lift a1\n@0 place e8\n@0 press white\n@0 lift a7\n@0 press black\n",
        );
        e.finish();
        assert_eq!(e.game().ply(), 0);
        assert!(e.phase().is_restoring());
    }
}
