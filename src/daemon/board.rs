//! A board's state: a pure fold of its journal.
//!
//! [`BoardState::apply`] takes one journal line and returns the events it
//! derives for the clients; the daemon calls it both when it replays a
//! journal on start and live, after the line is synced. Nothing else changes
//! a board's state, so what a restarted daemon shows is what it showed
//! before.

mod recover;

use std::sync::Arc;

use serde::Serialize;
use serde_json::json;
use shakmaty::{Chess, Color, EnPassantMode, Outcome, Position, fen::Fen, uci::UciMove};

use crate::{
    engine::{DeadCheck, Engine, EngineConfig, GameEvent, MateCheck},
    event::{BoardEvent, Millis, Seconds, TimedEvent, format_clock, side_name},
    failsafe::catch,
    game::Game,
    winnability::Verdict,
};

use super::{
    action::{Action, Side},
    config::Player,
    hub::Payload,
    journal::{Connection, Entry, JournalLine, JournalState},
};

/// How long a move completed by a press waits for the clock's next report
/// before it is published with the time known (event time, ms).
const CLOCK_WAIT_MS: Millis = 1000;

/// What the whole round shares: the broadcast tags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoundInfo {
    /// `Event`.
    pub event: String,
    /// `Site`.
    pub site: Option<String>,
    /// `Date`, `YYYY.MM.DD`.
    pub date: Option<String>,
    /// The round number (each game's `Round` is `<round>.<board>`).
    pub round: String,
    /// `TimeControl`.
    pub time_control: Option<String>,
}

/// An alert as the daemon keeps it: numbered per board, open until the
/// arbiter acknowledges it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AlertRecord {
    /// Its number on this board, from 1.
    pub id: u64,
    /// The game (index in the board's session, from 0).
    pub game: usize,
    /// The kind, snake_case (the engine's kinds; `rejected_event` for a
    /// board event the engine could not apply; `duplicate_board` on a
    /// central; `lichess_push_failed` and `lichess_game_rejected` from the
    /// lichess push; `engine_failed` when the board's engine panicked;
    /// `board_silent`, `wrong_family` and `board_flooding` from the
    /// board's reader).
    pub kind: String,
    /// Half-moves recorded when it was raised.
    pub ply: usize,
    /// The player concerned.
    pub side: Option<Side>,
    /// What happened.
    pub message: String,
    /// What the Laws prescribe.
    pub ruling: Option<String>,
    /// The arbiter acknowledged it.
    pub acked: bool,
    /// It reports something the arbiter must look into; `false` for
    /// information (a claimable draw, a position restored), which the
    /// dashboard shows after the irregularities and without the red frame.
    pub irregularity: bool,
}

/// An arbiter action as the board's history shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ActionRecord {
    /// The journal line.
    pub seq: u64,
    /// The board's time.
    pub at: Millis,
    pub action: Action,
}

/// Why an action was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ActionError {
    /// The action is malformed (a bad result, an empty name).
    #[error("{0}")]
    Invalid(String),
    /// The action does not apply to the board as it is (nothing to undo,
    /// the game is already over, no such alert).
    #[error("{0}")]
    Conflict(String),
    /// The board cannot take actions (its journal failed).
    #[error("{0}")]
    Unavailable(String),
    /// The action removes moves the broadcast has published: it is taken
    /// only when the arbiter confirms (`?confirm=retract`), since lichess
    /// keeps them as a variation.
    #[error("{0}")]
    Retracts(String),
}

/// One board's state.
#[derive(Debug, Clone)]
pub struct BoardState {
    id: u32,
    round: Arc<RoundInfo>,
    engine: Engine,
    seq: u64,
    last_at: Millis,
    board_events: usize,
    connection: Connection,
    clock: Option<(Seconds, Seconds)>,
    /// When the clock last reported (event time): a report from before a
    /// new game began is the previous game's time.
    clock_at: Millis,
    alerts: Vec<AlertRecord>,
    actions: Vec<ActionRecord>,
    players: [Player; 2],
    /// The game the broadcast shows: the first, or the one the arbiter
    /// started last.
    round_game: usize,
    /// Arbiter notes per game.
    notes: Vec<(usize, String)>,
    /// The journal cannot be written: why.
    journal_failed: Option<String>,
    /// The family a `serial:` board answered as (not journaled: found
    /// again at every start).
    family: Option<&'static str>,
    /// What the board is rebuilt from when its engine panics.
    recovery: recover::Recovery,
    /// The broadcast PGN needs to be written again.
    pgn_dirty: bool,
    /// A move a clock press completed, held back from the broadcast until
    /// the clock's next report gives its time (game, ply, and the event
    /// time after which it goes out with what is known).
    awaiting_clock: Option<(usize, usize, Millis)>,
    /// The round game and how many of its moves the broadcast PGN showed
    /// when it was last made: a move held back for a verdict is never one
    /// already shown.
    shown: (usize, usize),
    pgn: Arc<str>,
}

/// What the HTTP server reads of a board without asking it.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// The summary (`GET /boards`).
    pub summary: Arc<serde_json::Value>,
    /// The broadcast PGN of the board's round game (completed moves only).
    pub pgn: Arc<str>,
}

impl BoardState {
    /// A board with an empty journal.
    pub fn new(
        id: u32,
        round: Arc<RoundInfo>,
        config: EngineConfig,
        white: Player,
        black: Player,
    ) -> BoardState {
        let mut engine = Engine::new(config);
        // The full analyses run in the daemon's pool and come back as
        // journal lines (`dead_verdict`, `mate_verdict`).
        engine.defer_analyses();
        // The first game's start is not news.
        engine.drain_events();
        let mut state = BoardState {
            id,
            round,
            engine,
            seq: 0,
            last_at: 0,
            board_events: 0,
            connection: Connection::Idle,
            clock: None,
            clock_at: 0,
            alerts: Vec::new(),
            actions: Vec::new(),
            players: [white, black],
            round_game: 0,
            notes: Vec::new(),
            journal_failed: None,
            family: None,
            recovery: recover::Recovery::from_env(),
            pgn_dirty: true,
            awaiting_clock: None,
            shown: (0, 0),
            pgn: Arc::from(""),
        };
        state.refresh_pgn();
        state.checkpoint();
        state
    }

    /// The board number.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The last journal line's number.
    pub fn seq(&self) -> u64 {
        self.seq
    }

    /// The board's time of the last journal line.
    pub fn last_at(&self) -> Millis {
        self.last_at
    }

    /// How many board events the journal holds (for a simulated board: how
    /// many of its events were played).
    pub fn board_events(&self) -> usize {
        self.board_events
    }

    /// The link state.
    pub fn connection(&self) -> Connection {
        self.connection
    }

    /// Why the board's journal cannot be written, while it cannot.
    pub fn journal_failed(&self) -> Option<&str> {
        self.journal_failed.as_deref()
    }

    /// The state `/boards` shows: the link's, or `journal_failed`.
    fn shown_connection(&self) -> &'static str {
        if self.journal_failed.is_some() {
            "journal_failed"
        } else {
            self.connection.as_str()
        }
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The alerts raised on this board.
    pub fn alerts(&self) -> &[AlertRecord] {
        &self.alerts
    }

    /// Applies a journal line and returns the events it derives (a panic
    /// in it is caught by [`BoardState::apply`]).
    fn apply_line(&mut self, line: &JournalLine) -> Vec<Payload> {
        let mut out = Vec::new();
        let mut extra = Vec::new();
        match &line.entry {
            Entry::Tick => self.engine.advance_to(line.at),
            Entry::Connection { state } => {
                self.connection = *state;
                extra.push(self.payload("connection", json!({ "state": self.shown_connection() })));
            }
            Entry::Journal { state, message } => self.journal_state(*state, message, &mut extra),
            Entry::Alert { kind, message } => {
                self.raise(kind.clone(), None, message.clone(), None, &mut extra);
            }
            Entry::DeadVerdict { .. } | Entry::MateVerdict { .. } => self.verdict(line),
            Entry::Action { action } => {
                self.apply_action(action, line.at, &mut extra);
                self.actions.push(ActionRecord {
                    seq: line.seq,
                    at: line.at,
                    action: action.clone(),
                });
            }
            Entry::Event(event) => {
                self.board_events += 1;
                if let Some(hook) = self.recovery.inject {
                    hook.check(Some(self.id), self.board_events as u64);
                }
                // A clock report sets the time of the last completed move, a
                // tag changes the tags: the broadcast changes.
                if !matches!(
                    event,
                    BoardEvent::Lift(_) | BoardEvent::Place(..) | BoardEvent::Board(_)
                ) {
                    self.pgn_dirty = true;
                }
                if let BoardEvent::Clock(white, black) = *event {
                    self.clock = Some((white, black));
                    self.clock_at = line.at;
                    self.awaiting_clock = None;
                    extra.push(self.payload("clock", json!({ "white": white, "black": black })));
                }
                let event = event.clone();
                self.push(TimedEvent { at: line.at, event }, &mut extra);
            }
        }
        self.seq = line.seq;
        self.last_at = self.last_at.max(line.at);
        if self
            .awaiting_clock
            .is_some_and(|(_, _, due)| due <= self.last_at)
        {
            self.awaiting_clock = None;
            self.pgn_dirty = true;
        }
        self.derive(&mut out);
        out.append(&mut extra);
        out
    }

    /// The journal failed or works again: the board says so.
    fn journal_state(&mut self, state: JournalState, message: &str, extra: &mut Vec<Payload>) {
        match state {
            JournalState::Failed => {
                self.journal_failed = Some(message.to_owned());
                self.raise(
                    "journal_failed".to_owned(),
                    None,
                    format!(
                        "board {}: the journal cannot be written ({message}); the board takes no input and refuses actions until it can, and retries by itself",
                        self.id
                    ),
                    Some("check the disk (space, permissions) and the data directory".to_owned()),
                    extra,
                );
            }
            JournalState::Restored => self.journal_failed = None,
        }
        extra.push(self.payload(
            "connection",
            json!({ "state": self.shown_connection(), "journal": message }),
        ));
    }

    /// A full analysis's verdict, journaled when it came back.
    fn verdict(&mut self, line: &JournalLine) {
        let verdict = |v: Option<bool>| match v {
            Some(true) => Verdict::Yes,
            Some(false) => Verdict::No,
            None => Verdict::Unknown,
        };
        match &line.entry {
            Entry::DeadVerdict {
                game,
                ply,
                position,
                dead,
                skipped,
            } => {
                let position = position.as_deref();
                if *skipped {
                    self.engine.skip_dead_check(*game, *ply, position);
                } else {
                    self.engine
                        .apply_dead_verdict(*game, *ply, position, verdict(*dead), line.at);
                }
            }
            Entry::MateVerdict {
                game,
                ply,
                position,
                can_mate,
            } => {
                self.engine.apply_mate_verdict(
                    *game,
                    *ply,
                    position.as_deref(),
                    verdict(*can_mate),
                    line.at,
                );
            }
            _ => return,
        }
        // The moves held back for the verdict may go out now.
        self.pgn_dirty = true;
    }

    /// Lets time pass to `at` without journaling anything, if the engine
    /// has something due by then ([`Engine::next_deadline`]). Returns
    /// `None` when nothing was due (nothing changed); otherwise the events
    /// derived, perhaps none, and the caller journals a `tick` line at `at`
    /// before publishing them, so that a replay reads the board at the same
    /// moment.
    /// Whether the move `ply` of `game`, just completed by a press, waits
    /// for the clock's report: a press completes the move before the clock
    /// reports the mover's time (some 37 ms later), so it waits, at most
    /// 1 s of event time, rather than publish the stale one. A press the
    /// engine held (a blip may span it) is judged after the report that
    /// followed it: nothing to wait for.
    fn awaits_clock(&self, game: usize, ply: usize) -> bool {
        let g = &self.engine.games()[game];
        let reported = g
            .moves()
            .get(ply - 1)
            .and_then(|m| m.completed_at)
            .is_some_and(|pressed| self.clock_at >= pressed);
        self.clock.is_some() && !g.is_over() && !reported
    }

    pub fn tick(&mut self, at: Millis) -> Option<Vec<Payload>> {
        if self.awaiting_clock.is_some_and(|(_, _, due)| due <= at) {
            self.awaiting_clock = None;
            self.pgn_dirty = true;
            self.last_at = self.last_at.max(at);
            if self.engine_due().is_none_or(|due| due > at) {
                return Some(Vec::new());
            }
        }
        if self.engine_due().is_none_or(|due| due > at) {
            return None;
        }
        let ticked = catch(|| {
            self.engine.advance_to(at);
            let mut out = Vec::new();
            self.derive(&mut out);
            out
        });
        Some(ticked.unwrap_or_else(|message| self.tick_failed(at, message)))
    }

    /// When [`BoardState::tick`] next has something to do: the engine's
    /// deadline, or the end of the wait for a clock report.
    pub fn next_deadline(&self) -> Option<Millis> {
        let awaiting = self.awaiting_clock.map(|(_, _, due)| due);
        match (self.engine_due(), awaiting) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Notes a `tick` line that [`BoardState::tick`] already applied.
    pub fn note_tick(&mut self, line: &JournalLine) {
        self.seq = line.seq;
        self.last_at = self.last_at.max(line.at);
        self.remember(line, true);
    }

    fn push(&mut self, ev: TimedEvent, extra: &mut Vec<Payload>) {
        if let Err(e) = self.engine.push(&ev) {
            // Journaled already: the refusal is part of the record, and a
            // replay refuses it again.
            self.raise(
                "rejected_event".to_owned(),
                None,
                format!("the board reported an event the engine cannot apply: {e}"),
                None,
                extra,
            );
        }
    }

    fn raise(
        &mut self,
        kind: String,
        side: Option<Side>,
        message: String,
        ruling: Option<String>,
        out: &mut Vec<Payload>,
    ) {
        self.raise_as(true, kind, side, message, ruling, out);
    }

    /// Raises an alert, `irregularity` or information.
    fn raise_as(
        &mut self,
        irregularity: bool,
        kind: String,
        side: Option<Side>,
        message: String,
        ruling: Option<String>,
        out: &mut Vec<Payload>,
    ) {
        let record = AlertRecord {
            id: self.alerts.len() as u64 + 1,
            game: self.engine.games().len() - 1,
            kind,
            ply: self.engine.game().ply(),
            side,
            message,
            ruling,
            acked: false,
            irregularity,
        };
        out.push(self.payload("alert", json!(record)));
        self.alerts.push(record);
    }
}

// Arbiter actions: checked against the board, then folded in.
impl BoardState {
    /// How many moves of the broadcast game are published (in the
    /// broadcast PGN): the completed ones, or all once the game is over.
    /// A move whose position waits for the full dead-position analysis is
    /// held back until its verdict is in, so that a dead position found
    /// late never takes back what the broadcast showed.
    pub fn published_plies(&self) -> usize {
        let game = self.round_game();
        if game.is_over() {
            game.ply()
        } else {
            let completed = game
                .moves()
                .iter()
                .take_while(|m| m.completed_at.is_some())
                .count();
            let waiting = game.dead_watch.requested.map(|ply| ply.saturating_sub(1));
            // After a flag fall or resignation waiting for its result, later
            // moves may be void.
            let ended = game.pending_mate.map(|pending| pending.ply);
            let clock = self
                .awaiting_clock
                .filter(|&(g, _, due)| g == self.round_game && self.last_at < due)
                .map(|(_, ply, _)| ply - 1);
            let held = [waiting, ended, clock]
                .into_iter()
                .flatten()
                .fold(completed, usize::min);
            // What the broadcast already showed stays shown (a correction
            // that re-analyses those positions does not unpublish them).
            let (shown_game, shown) = self.shown;
            let shown = if shown_game == self.round_game {
                shown.min(completed)
            } else {
                0
            };
            held.max(shown)
        }
    }

    /// The flag fall or resignation waiting for the full analysis (see
    /// [`Engine::next_mate_check`]).
    pub fn next_mate_check(&mut self) -> Option<MateCheck> {
        self.engine.next_mate_check()
    }

    /// The next position of the current game that needs the full
    /// dead-position analysis (see [`Engine::next_dead_check`]).
    pub fn next_dead_check(&mut self) -> Option<DeadCheck> {
        self.engine.next_dead_check()
    }

    /// Whether `action` would remove published moves from the broadcast,
    /// and if so what the arbiter must confirm. Corrections that rewrite the
    /// record (undo, and any later one) check here: what lichess received
    /// stays there as a variation its viewers can get stuck in.
    pub fn retraction(&self, action: &Action) -> Option<String> {
        let removed = match action {
            // Undo removes the last move of the current game.
            Action::Undo => {
                let current = self.engine.games().len() - 1;
                let published = self.published_plies();
                let ply = self.engine.game().ply();
                (current == self.round_game && ply > 0 && ply <= published).then_some(1)
            }
            Action::Moves { from_ply, .. } => self.published_after(*from_ply),
            Action::Position { .. } => self.published_after(0),
            _ => None,
        }?;
        Some(format!(
            "board {}: this removes {removed} move(s) already published; on lichess they stay as a variation that viewers may get stuck in. Confirm to do it anyway.",
            self.id
        ))
    }

    /// How many published moves of the current game a correction that keeps
    /// only its first `ply` half-moves removes, if any.
    fn published_after(&self, ply: usize) -> Option<usize> {
        let current = self.engine.games().len() - 1;
        let published = self.published_plies();
        (current == self.round_game && ply < published).then(|| published - ply)
    }

    /// Notes the family a `serial:` board answered as, for `GET /boards`.
    pub fn set_family(&mut self, family: &'static str) {
        self.family = Some(family);
    }

    /// Raises an alert that no line of the board's journal carries (a
    /// central that sees the board published by two hall nodes); returns
    /// its event.
    pub fn raise_alert(&mut self, kind: &str, message: String) -> Vec<Payload> {
        let mut out = Vec::new();
        self.raise(kind.to_owned(), None, message, None, &mut out);
        out
    }

    /// Checks an action against the board as it is, without changing it.
    pub fn check(&self, action: &Action, at: Millis) -> Result<(), ActionError> {
        let over = |what: &str| {
            ActionError::Conflict(format!(
                "{what}: the game on board {} is already over ({})",
                self.id,
                self.engine.game().outcome().as_str()
            ))
        };
        match action {
            Action::Ack { alert } => match self.alerts.iter().find(|a| a.id == *alert) {
                None => Err(ActionError::Conflict(format!(
                    "board {} has no alert {alert}",
                    self.id
                ))),
                Some(a) if a.acked => Err(ActionError::Conflict(format!(
                    "alert {alert} of board {} is already acknowledged",
                    self.id
                ))),
                Some(_) => Ok(()),
            },
            Action::Resign { .. } | Action::Draw | Action::Flag { .. } => {
                // A flag fall or resignation waiting for its analysis has
                // ended the game already; only its result is to come.
                let game = self.engine.game();
                if game.is_over() || game.pending_mate.is_some() {
                    Err(over(action.name()))
                } else {
                    Ok(())
                }
            }
            Action::Result { note, .. } => {
                if note.as_ref().is_some_and(|n| n.len() > 2000) {
                    return Err(ActionError::Invalid(
                        "the note is longer than 2000 bytes".into(),
                    ));
                }
                if self.engine.game().is_over() {
                    Err(over("result"))
                } else {
                    Ok(())
                }
            }
            Action::Undo => {
                let mut probe = self.engine.clone();
                probe.drain_events();
                if probe.undo_last_move(at) {
                    Ok(())
                } else if probe.game().ply() == 0 {
                    Err(ActionError::Conflict(format!(
                        "the game on board {} has no move to undo",
                        self.id
                    )))
                } else {
                    Err(over("undo"))
                }
            }
            Action::NewGame => Ok(()),
            Action::Moves { san, .. } if san.len() > 1000 || san.iter().any(|m| m.len() > 16) => {
                Err(ActionError::Invalid(
                    "give at most 1000 moves, each in SAN (at most 16 bytes)".into(),
                ))
            }
            Action::Position { fen } if fen.len() > 120 => {
                Err(ActionError::Invalid("a FEN has at most 120 bytes".into()))
            }
            Action::Position { fen } if super::values::check_halfmove_clock(fen).is_err() => Err(
                ActionError::Invalid(super::values::check_halfmove_clock(fen).unwrap_err()),
            ),
            Action::Moves { .. } | Action::Choose { .. } | Action::Position { .. } => {
                let mut probe = self.engine.clone();
                probe.drain_events();
                correct(&mut probe, action, at)
                    .map_err(|e| ActionError::Conflict(format!("board {}: {e}", self.id)))
            }
            Action::Players { white, black } => {
                for p in [white, black].into_iter().flatten() {
                    super::values::check_name("a player's name", &p.name)
                        .map_err(ActionError::Invalid)?;
                    if p.title.as_ref().is_some_and(|t| t.len() > 10) {
                        return Err(ActionError::Invalid("a title has at most 10 bytes".into()));
                    }
                }
                if white.is_none() && black.is_none() {
                    return Err(ActionError::Invalid("give white, black or both".into()));
                }
                Ok(())
            }
        }
    }

    fn apply_action(&mut self, action: &Action, at: Millis, extra: &mut Vec<Payload>) {
        let ev = |event| TimedEvent { at, event };
        match action {
            Action::Ack { alert } => {
                if let Some(a) = self.alerts.iter_mut().find(|a| a.id == *alert) {
                    a.acked = true;
                    extra.push(self.payload("ack", json!({ "alert": alert })));
                }
            }
            Action::Resign { side } => self.push(ev(BoardEvent::Resign((*side).into())), extra),
            Action::Draw => self.push(ev(BoardEvent::Draw), extra),
            Action::Flag { side } => self.push(ev(BoardEvent::Flag((*side).into())), extra),
            Action::Result { result, note } => {
                if let Some(note) = note {
                    self.notes
                        .push((self.engine.games().len() - 1, note.clone()));
                }
                use crate::verdict::Verdict as Decided;
                let event = match *result {
                    Decided::Outcome(outcome) => BoardEvent::Result(outcome),
                    Decided::Special(special) => BoardEvent::Special(special),
                };
                self.push(ev(event), extra);
            }
            Action::Undo => {
                self.engine.undo_last_move(at);
            }
            Action::Moves { .. } | Action::Choose { .. } | Action::Position { .. } => {
                // Checked before it was journaled; a journal edited by hand
                // that no longer fits is skipped, as the check would have.
                if let Err(e) = correct(&mut self.engine, action, at) {
                    tracing::warn!(board = self.id, "{} skipped: {e}", action.name());
                }
                self.pgn_dirty = true;
            }
            Action::NewGame => {
                let game = self.engine.game();
                if !game.is_over() && !game.is_untouched() {
                    self.push(ev(BoardEvent::Result(Outcome::Unknown)), extra);
                }
                let before = self.engine.games().len();
                let start = Fen::from_position(&Chess::default(), EnPassantMode::Legal);
                self.push(ev(BoardEvent::Setup(Box::new(start))), extra);
                self.round_game = self.engine.games().len() - 1;
                self.pgn_dirty = true;
                if self.engine.games().len() == before {
                    // The untouched game was set up again: same game, new start.
                    extra.push(self.game_payload(self.round_game));
                }
            }
            Action::Players { white, black } => {
                for (i, p) in [white, black].into_iter().enumerate() {
                    if let Some(p) = p {
                        self.players[i] = Player::clone(p);
                        let tag = if i == 0 { "White" } else { "Black" };
                        self.push(ev(BoardEvent::Tag(tag.into(), p.name.clone())), extra);
                    }
                }
                self.pgn_dirty = true;
                extra.push(self.payload(
                    "players",
                    json!({ "white": self.players[0], "black": self.players[1] }),
                ));
            }
        }
    }
}

/// Applies one of the arbiter's corrections of the record to `engine`.
fn correct(engine: &mut Engine, action: &Action, at: Millis) -> Result<(), String> {
    match action {
        Action::Moves { from_ply, san } => engine
            .correct_moves(*from_ply, san, at)
            .map_err(|e| e.to_string()),
        Action::Choose { candidate } => engine
            .choose_candidate(*candidate, at)
            .map_err(|e| e.to_string()),
        Action::Position { fen } => {
            let fen: Fen = fen
                .parse()
                .map_err(|e| format!("{fen:?} is not a FEN: {e}"))?;
            engine.set_position(&fen, at).map_err(|e| e.to_string())
        }
        _ => Ok(()),
    }
}

// The events clients receive, derived from the engine's.
impl BoardState {
    fn payload(&self, kind: &'static str, mut data: serde_json::Value) -> Payload {
        if let Some(obj) = data.as_object_mut() {
            obj.insert("board".into(), json!(self.id));
        }
        Payload {
            kind,
            data: data.to_string(),
        }
    }

    fn game_payload(&self, game: usize) -> Payload {
        let g = &self.engine.games()[game];
        self.payload(
            "game",
            json!({
                "game": game,
                "fen": g.fen(),
                "ply": g.ply(),
                "clock": self.clock.map(|(w, b)| json!({ "white": w, "black": b })),
            }),
        )
    }

    /// Turns the engine's events into client events.
    fn derive(&mut self, out: &mut Vec<Payload>) {
        for ev in self.engine.drain_events() {
            match ev {
                GameEvent::GameStarted { game, at } => {
                    // The clock's last report belongs to the game before
                    // (an outage may have hidden the new game's start and
                    // its first reports): show no time until it reports.
                    if game > 0 && self.clock_at < at {
                        self.clock = None;
                    }
                    out.push(self.game_payload(game));
                }
                GameEvent::MoveMade { game, ply, san, .. } => {
                    let g = &self.engine.games()[game];
                    let (uci, fen) = match (g.moves().get(ply - 1), g.position_at(ply)) {
                        (Some(m), Some(pos)) if m.san.to_string() == san => (
                            Some(UciMove::from_standard(m.mv).to_string()),
                            Some(Fen::from_position(pos, EnPassantMode::Legal).to_string()),
                        ),
                        _ => (None, None),
                    };
                    out.push(self.payload(
                        "move",
                        json!({ "game": game, "ply": ply, "san": san, "uci": uci, "fen": fen }),
                    ));
                }
                GameEvent::MoveCompleted { game, ply, .. } => {
                    let g = &self.engine.games()[game];
                    let clock = g.moves().get(ply - 1).and_then(|m| m.clock);
                    if game == self.round_game {
                        self.pgn_dirty = true;
                    }
                    if self.awaits_clock(game, ply) {
                        self.awaiting_clock = Some((game, ply, self.last_at + CLOCK_WAIT_MS));
                    }
                    out.push(self.payload(
                        "completed",
                        json!({ "game": game, "ply": ply, "clock": clock }),
                    ));
                }
                GameEvent::MovesRetracted { game, ply, .. } => {
                    let g = &self.engine.games()[game];
                    let fen = g
                        .position_at(ply)
                        .map(|p| Fen::from_position(p, EnPassantMode::Legal).to_string());
                    self.pgn_dirty = true;
                    out.push(
                        self.payload("retracted", json!({ "game": game, "ply": ply, "fen": fen })),
                    );
                }
                GameEvent::Alert { alert, .. } => {
                    self.raise_as(
                        alert.kind.is_irregularity(),
                        alert.kind.as_str().to_owned(),
                        alert.side.map(Side::from),
                        alert.message,
                        alert.ruling,
                        out,
                    );
                }
                GameEvent::GameResumed { game, .. } => {
                    self.pgn_dirty = true;
                    out.push(self.payload("resumed", json!({ "game": game })));
                }
                GameEvent::GameOver {
                    game,
                    outcome,
                    termination,
                    ..
                } => {
                    self.pgn_dirty = true;
                    let note = self
                        .notes
                        .iter()
                        .rev()
                        .find(|(g, _)| *g == game)
                        .map(|(_, n)| n.clone());
                    out.push(self.payload(
                        "result",
                        json!({
                            "game": game,
                            "result": match termination {
                                crate::game::Termination::Special(s) => s.as_str(),
                                _ => outcome.as_str(),
                            },
                            "termination": termination.as_str(),
                            "note": note,
                        }),
                    ));
                }
            }
        }
    }
}

// What clients read: the broadcast PGN, the summary, the detail.
impl BoardState {
    /// The game the broadcast shows.
    pub fn round_game(&self) -> &Game {
        let games = self.engine.games();
        games
            .get(self.round_game)
            .unwrap_or_else(|| self.engine.game())
    }

    /// The tags of a broadcast game.
    fn tags(&self, game: &Game) -> Vec<(String, String)> {
        let r = &self.round;
        let mut tags: Vec<(String, String)> = vec![
            ("Event".into(), r.event.clone()),
            ("Site".into(), r.site.clone().unwrap_or_else(|| "?".into())),
            (
                "Date".into(),
                r.date.clone().unwrap_or_else(|| "????.??.??".into()),
            ),
            ("Round".into(), format!("{}.{}", r.round, self.id)),
            ("GameId".into(), self.game_id()),
        ];
        for (i, color) in ["White", "Black"].into_iter().enumerate() {
            tags.push((color.into(), self.players[i].name.clone()));
        }
        for (i, color) in ["White", "Black"].into_iter().enumerate() {
            let p = &self.players[i];
            if let Some(t) = &p.title {
                tags.push((format!("{color}Title"), t.clone()));
            }
            if let Some(e) = p.elo {
                tags.push((format!("{color}Elo"), e.to_string()));
            }
            if let Some(f) = p.fide_id {
                tags.push((format!("{color}FideId"), f.to_string()));
            }
            if let Some(t) = &p.team {
                tags.push((format!("{color}Team"), t.clone()));
            }
        }
        if let Some(tc) = &r.time_control {
            tags.push(("TimeControl".into(), tc.clone()));
        }
        // Tags the board or the arbiter gave the game come after: the
        // writer keeps the first of two tags of one name.
        tags.extend(game.tags.iter().cloned());
        tags
    }

    /// The broadcast game's `GameId`: the board number and the game's
    /// number on the board, both read from the journal, so the id survives
    /// restarts, reordered boards and changed players, and each game of a
    /// board gets its own.
    pub fn game_id(&self) -> String {
        format!("eboard-{}-{}", self.id, self.round_game + 1)
    }

    /// `WhiteClock`/`BlackClock`: each side's clock after its last
    /// published move (lichess puts them on the last moves).
    fn clock_tags(&self, game: &Game, shown: usize) -> Vec<(String, String)> {
        let mut tags = Vec::new();
        for (color, name) in [(Color::White, "WhiteClock"), (Color::Black, "BlackClock")] {
            let last = (0..shown)
                .rev()
                .find(|&i| game.position_at(i).is_some_and(|p| p.turn() == color));
            if let Some(clock) = last.and_then(|i| game.moves().get(i)).and_then(|m| m.clock) {
                tags.push((name.into(), format_clock(clock)));
            }
        }
        tags
    }

    /// Notes what the broadcast PGN shows now, as [`BoardState::snapshot`]
    /// would, without writing it: a fold that takes no snapshot after a
    /// line (the broadcast delay folding a journal on start) keeps the
    /// moves shown that the live view showed, held back later or not.
    pub fn note_shown(&mut self) {
        if self.pgn_dirty {
            self.shown = (self.round_game, self.published_plies());
        }
    }

    fn refresh_pgn(&mut self) {
        if !self.pgn_dirty {
            return;
        }
        self.pgn_dirty = false;
        let shown = self.published_plies();
        self.shown = (self.round_game, shown);
        let game = self.round_game();
        let mut g = game.clone();
        g.tags = self.tags(game);
        let clocks = self.clock_tags(game, shown);
        g.tags.extend(clocks);
        self.pgn = g.to_pgn_upto(shown).into();
    }

    /// The broadcast PGN and the summary, for the HTTP server.
    pub fn snapshot(&mut self) -> Snapshot {
        self.refresh_pgn();
        Snapshot {
            summary: Arc::new(self.summary()),
            pgn: Arc::clone(&self.pgn),
        }
    }

    /// What `GET /boards` shows of the board.
    pub fn summary(&self) -> serde_json::Value {
        let game = self.engine.game();
        let n = game.ply();
        let last_move = game.moves().last().map(|m| {
            json!({
                "ply": n,
                "san": m.san.to_string(),
                "uci": UciMove::from_standard(m.mv).to_string(),
            })
        });
        let open: Vec<&AlertRecord> = self.alerts.iter().filter(|a| !a.acked).collect();
        json!({
            "id": self.id,
            "white": self.players[0],
            "black": self.players[1],
            "connection": self.shown_connection(),
            "journal_error": self.journal_failed,
            "family": self.family,
            "game": self.engine.games().len() - 1,
            "round_game": self.round_game,
            "fen": game.fen(),
            "turn": side_name(game.position().turn()),
            "ply": n,
            "completed": game.moves().iter().take_while(|m| m.completed_at.is_some()).count(),
            "last_move": last_move,
            "clock": self.clock.map(|(w, b)| json!({ "white": w, "black": b })),
            "result": game.verdict().as_str(),
            "termination": game.termination().map(|t| t.as_str()),
            "open_alerts": open,
            "seq": self.seq,
            "sync": self.engine.sync_state().as_str(),
            "candidates": self.engine.candidates_san(),
        })
    }

    /// What `GET /boards/{id}` shows: the summary, the current game's moves,
    /// every alert and action, and the PGN.
    pub fn detail(&self) -> serde_json::Value {
        let mut v = self.summary();
        let game = self.engine.game();
        let moves: Vec<serde_json::Value> = game
            .moves()
            .iter()
            .enumerate()
            .map(|(i, m)| {
                json!({
                    "ply": i + 1,
                    "san": m.san.to_string(),
                    "uci": UciMove::from_standard(m.mv).to_string(),
                    "clock": m.clock,
                    "completed": m.completed_at.is_some(),
                })
            })
            .collect();
        let mut g = game.clone();
        g.tags = self.tags(game);
        if let Some(obj) = v.as_object_mut() {
            obj.insert("moves".into(), json!(moves));
            obj.insert("alerts".into(), json!(self.alerts));
            obj.insert("actions".into(), json!(self.actions));
            obj.insert(
                "notes".into(),
                json!(
                    self.notes
                        .iter()
                        .map(|(g, n)| json!({"game": g, "note": n}))
                        .collect::<Vec<_>>()
                ),
            );
            obj.insert("pgn".into(), json!(g.to_pgn()));
            obj.insert("broadcast_pgn".into(), json!(&*self.pgn));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::parse_script;

    pub(super) fn state() -> BoardState {
        BoardState::new(
            4,
            Arc::new(RoundInfo {
                event: "E".into(),
                site: None,
                date: None,
                round: "2".into(),
                time_control: Some("300+2".into()),
            }),
            EngineConfig::default(),
            Player {
                name: "W, A".into(),
                fide_id: Some(7),
                ..Player::default()
            },
            Player {
                name: "B, C".into(),
                ..Player::default()
            },
        )
    }

    pub(super) fn feed(state: &mut BoardState, script: &str) -> Vec<Payload> {
        let mut out = Vec::new();
        for l in parse_script("t", script).unwrap() {
            let line = JournalLine {
                round: None,
                seq: state.seq() + 1,
                g: 0,
                at: l.event.at,
                wall: None,
                entry: Entry::from_event(&l.event.event),
            };
            out.extend(state.apply(&line));
        }
        out
    }

    fn act(state: &mut BoardState, action: Action) -> Vec<Payload> {
        let at = state.last_at();
        state.check(&action, at).unwrap();
        let line = JournalLine {
            round: None,
            seq: state.seq() + 1,
            g: 0,
            at,
            wall: None,
            entry: Entry::Action { action },
        };
        state.apply(&line)
    }

    /// Issue 14: the verdict of the full dead-position analysis is an input
    /// like any other. Labelled in the CHA test vectors: "W-" before g4-g5,
    /// "--" (dead) after it.
    #[test]
    fn a_dead_verdict_ends_the_game_at_its_ply_and_holds_the_move_back_until_then() {
        let mut s = state();
        feed(
            &mut s,
            "@0 setup Bb1k1b2/bKp1p1p1/1pP1P1P1/pP6/6P1/P7/8/8 w - - 0 1\n@1000 lift g4\n@1300 place g5\n@1500 press white\n@3000 lift d8\n@3300 place e8\n@3500 press black\n",
        );
        assert_eq!(s.engine().game().ply(), 2);
        assert_eq!(s.published_plies(), 2, "no analysis asked yet");
        let check = s.next_dead_check().expect("g5 is analysed");
        assert_eq!((check.game, check.ply), (0, 1));
        assert_eq!(s.published_plies(), 0, "g5 waits for its verdict");
        let line = JournalLine {
            round: None,
            seq: s.seq() + 1,
            g: 0,
            at: 4000,
            wall: None,
            entry: Entry::DeadVerdict {
                game: 0,
                ply: 1,
                position: Some(check.key()),
                dead: Some(true),
                skipped: false,
            },
        };
        // The line as the journal writes and reads it.
        let text = serde_json::to_string(&line).unwrap();
        assert!(text.contains(r#""type":"dead_verdict""#), "{text}");
        assert!(
            text.contains(r#""position":"Bb1k1b2/bKp1p1p1/1pP1P1P1/pP4P1/8/P7/8/8 b - -""#),
            "{text}"
        );
        let read: JournalLine = serde_json::from_str(&text).unwrap();
        assert_eq!(read, line);
        let out = s.apply(&read);
        let game = s.engine().game();
        assert_eq!(game.ply(), 1, "Ke8 came after the dead position: void");
        assert_eq!(
            game.termination(),
            Some(crate::game::Termination::DeadPosition)
        );
        assert!(out.iter().any(|p| p.kind == "result"));
        assert!(s.alerts().iter().any(|a| a.kind == "moves_void"));
        assert_eq!(s.published_plies(), 1);
    }

    /// Issue 14: a verdict journaled for a position the record no longer
    /// has at its ply (the arbiter corrected the move meanwhile) is dropped
    /// live and in a replay alike; a line from a journal written before
    /// verdicts named their position still applies by its ply.
    #[test]
    fn issue_14_a_dead_verdict_for_a_corrected_move_is_dropped() {
        const E4: &str = "@1000 lift e2\n@1300 place e4\n@1500 press white\n";
        let verdict = |s: &BoardState, position: Option<String>| JournalLine {
            round: None,
            seq: s.seq() + 1,
            g: 0,
            at: 4000,
            wall: None,
            entry: Entry::DeadVerdict {
                game: 0,
                ply: 1,
                position,
                dead: Some(true),
                skipped: false,
            },
        };
        let mut s = state();
        feed(&mut s, E4);
        let stale = s.next_dead_check().expect("e4 is analysed");
        act(
            &mut s,
            Action::Moves {
                from_ply: 0,
                san: vec!["d4".into()],
            },
        );
        s.apply(&verdict(&s, Some(stale.key())));
        assert_eq!(s.engine().game().termination(), None);
        assert_eq!(s.engine().game().moves()[0].san.to_string(), "d4");

        // The same verdict line as an older journal wrote it: by ply.
        let mut s = state();
        feed(&mut s, E4);
        s.next_dead_check().expect("e4 is analysed");
        let text =
            r#"{"seq":6,"g":0,"at":4000,"type":"dead_verdict","game":0,"ply":1,"dead":true}"#;
        let old: JournalLine = serde_json::from_str(text).unwrap();
        assert_eq!(old.entry, verdict(&s, None).entry);
        s.apply(&old);
        assert_eq!(
            s.engine().game().termination(),
            Some(crate::game::Termination::DeadPosition)
        );
    }

    const MOVES: &str = "@1000 lift e2\n@1300 place e4\n@1500 press white\n@1520 clock 0:04:58 0:05:00\n@3000 lift e7\n@3300 place e5\n@3500 press black\n@3520 clock 0:04:58 0:04:57\n@5000 lift g1\n@5300 place f3\n";

    #[test]
    fn broadcast_has_completed_moves_and_round_tags() {
        let mut s = state();
        let out = feed(&mut s, MOVES);
        let kinds: Vec<&str> = out.iter().map(|p| p.kind).collect();
        assert_eq!(
            kinds,
            ["move", "completed", "clock", "move", "completed", "clock"]
        );
        // The third move stands but has not settled in the fold yet; a tick does it.
        assert_eq!(s.engine().next_deadline(), Some(5300 + 150));
        assert!(s.tick(5300 + 149).is_none(), "nothing is due yet");
        let out = s.tick(5300 + 150).unwrap();
        assert_eq!(out[0].kind, "move");
        let snap = s.snapshot();
        assert!(snap.pgn.contains("[Round \"2.4\"]"), "{}", snap.pgn);
        assert!(snap.pgn.contains("[WhiteFideId \"7\"]"), "{}", snap.pgn);
        assert!(
            snap.pgn
                .contains("1. e4 {[%clk 0:04:58]} 1... e5 {[%clk 0:04:57]} *"),
            "{}",
            snap.pgn
        );
        assert!(!snap.pgn.contains("Nf3"));
        assert_eq!(snap.summary["ply"], 3);
        assert_eq!(snap.summary["completed"], 2);
    }

    const PRESSED: &str =
        "@0 clock 0:05:00 0:05:00\n@1000 lift e2\n@1300 place e4\n@1500 press white\n";

    /// Issue 36: the press completes e4 37 ms before the clock reports
    /// White's time after it; the broadcast never shows e4 with the time
    /// from before the press.
    #[test]
    fn issue_36_a_pressed_move_is_published_with_the_clock_report_after_the_press() {
        let mut s = state();
        feed(&mut s, PRESSED);
        let snap = s.snapshot();
        assert!(!snap.pgn.contains("e4"), "{}", snap.pgn);
        feed(&mut s, "@1537 clock 0:04:58 0:05:00\n");
        let snap = s.snapshot();
        assert!(
            snap.pgn.contains("1. e4 {[%clk 0:04:58]} *"),
            "{}",
            snap.pgn
        );
    }

    /// Issue 36: no report within 1 s of event time: the move goes out with
    /// the time known.
    #[test]
    fn issue_36_a_pressed_move_without_a_clock_report_goes_out_after_one_second() {
        let mut s = state();
        feed(&mut s, PRESSED);
        assert_eq!(s.next_deadline(), Some(1500 + 1000));
        s.tick(1500 + 999);
        assert!(!s.snapshot().pgn.contains("e4"));
        assert!(s.tick(1500 + 1000).is_some());
        let snap = s.snapshot();
        assert!(
            snap.pgn.contains("1. e4 {[%clk 0:05:00]} *"),
            "{}",
            snap.pgn
        );
    }

    /// A game ends, the cable is out while the clock is reset and the next
    /// game begins; the dump after the reconnection shows the new game.
    /// Until the clock reports again, the dashboard shows no time rather
    /// than the last game's.
    #[test]
    fn a_new_game_after_an_outage_shows_no_clock_until_the_clock_reports() {
        let mut s = state();
        feed(&mut s, MOVES);
        feed(&mut s, "@6000 result 1-0\n");
        assert!(s.snapshot().summary["clock"].is_object());
        let mut out = feed(
            &mut s,
            "@60000 reconnected\n@60000 board rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR\n",
        );
        out.extend(s.tick(61_000).unwrap_or_default());
        assert_eq!(s.snapshot().summary["game"], 1, "the new game began");
        assert!(s.snapshot().summary["clock"].is_null());
        // The dashboard hears it with the new game.
        let game = out.iter().find(|p| p.kind == "game").expect("a game event");
        let data: serde_json::Value = serde_json::from_str(&game.data).unwrap();
        assert!(data["clock"].is_null(), "{data}");
        feed(&mut s, "@62000 clock 0:05:00 0:05:00\n");
        assert_eq!(s.snapshot().summary["clock"]["white"], 300);
    }

    #[test]
    fn actions_fold() {
        let mut s = state();
        feed(&mut s, MOVES);
        s.tick(6000);
        assert!(matches!(
            s.check(&Action::Ack { alert: 1 }, 0),
            Err(ActionError::Conflict(_))
        ));
        let out = act(&mut s, Action::Undo);
        assert_eq!(out[0].kind, "retracted");
        assert_eq!(s.engine().game().ply(), 2);
        act(
            &mut s,
            Action::Players {
                white: Some(Box::new(Player {
                    name: "New, Name".into(),
                    ..Player::default()
                })),
                black: None,
            },
        );
        act(&mut s, Action::Resign { side: Side::Black });
        // Whether White can still mate is the pool's to answer (issue 14):
        // with every piece on the board, it can.
        let check = s.next_mate_check().expect("the resignation waits");
        assert_eq!((check.ply, check.side), (2, Color::White));
        let line = JournalLine {
            round: None,
            seq: s.seq() + 1,
            g: 0,
            at: s.last_at(),
            wall: None,
            entry: Entry::MateVerdict {
                game: 0,
                ply: 2,
                position: Some(check.key()),
                can_mate: Some(true),
            },
        };
        let out = s.apply(&line);
        assert_eq!(out[0].kind, "result");
        let snap = s.snapshot();
        assert!(snap.pgn.contains("[White \"New, Name\"]"), "{}", snap.pgn);
        assert!(snap.pgn.contains("[Result \"1-0\"]"), "{}", snap.pgn);
        assert!(matches!(
            s.check(&Action::Draw, 0),
            Err(ActionError::Conflict(_))
        ));
        assert!(matches!(
            s.check(&Action::Undo, 0),
            Err(ActionError::Conflict(_))
        ));
        let out = act(&mut s, Action::NewGame);
        assert!(out.iter().any(|p| p.kind == "game"), "{out:?}");
        assert_eq!(s.snapshot().summary["ply"], 0);
        assert!(s.snapshot().pgn.contains("[Result \"*\"]"));
        let bad = serde_json::from_str::<Action>(r#"{"action":"result","result":"2-0"}"#);
        let err = bad.unwrap_err().to_string();
        assert!(err.contains("'2-0' is not a result"), "{err}");
    }

    /// Issue 12: an alert from outside the board's events (lichess refused
    /// its game) is a journal line, applied like the others: a replay
    /// numbers the alerts alike, so an acknowledgement names the same alert
    /// after a restart.
    #[test]
    fn a_journaled_alert_is_raised_and_acknowledged() {
        let alert_line = |s: &BoardState, kind: &str| JournalLine {
            round: None,
            seq: s.seq() + 1,
            g: 0,
            at: s.last_at(),
            wall: None,
            entry: Entry::Alert {
                kind: kind.into(),
                message: "lichess refused it".into(),
            },
        };
        let mut live = state();
        let line = alert_line(&live, "lichess_game_rejected");
        let out = live.apply(&line);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].kind, "alert");
        let record = &live.alerts()[0];
        assert_eq!(
            (record.id, record.kind.as_str(), record.message.as_str()),
            (1, "lichess_game_rejected", "lichess refused it")
        );
        act(&mut live, Action::Ack { alert: 1 });
        assert!(live.alerts()[0].acked);
    }
}
