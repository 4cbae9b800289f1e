//! The reconstruction engine: board events in, moves and alerts out.
//!
//! The engine is pure and deterministic. It never reads the wall clock: time
//! passes only through the timestamps of the events it is given, so a
//! session replayed from its journal gives the same record byte for byte.
//!
//! How it reads the board:
//! - A board state counts once it has *settled*: it lasted
//!   [`EngineConfig::settle_ms`] before the next event, or a clock press or
//!   the end of the input came while it stood. States that pass faster are a
//!   sliding piece or sensor flicker and are never read as moves.
//! - A settled state that differs from the game position is explained, in
//!   this order, by: one legal move (the move is *made*, Art. 4.7); the last
//!   move, not yet completed, changed into another (Art. 4.7, alert
//!   `move_changed`); the last move taken back (alert `takeback`); two legal
//!   moves (alert `moves_inferred`); an older position restored (`takeback`);
//!   three legal moves (`moves_inferred`). When several different moves
//!   explain the state, the engine waits for more events rather than guess.
//! - A move is *completed* (Art. 6.2.1) when its player presses the clock;
//!   with no clock in the session, when the opponent lifts one of his own
//!   pieces; in any case when a later move is made or the move ends the game.

use shakmaty::{ByColor, CastlingMode, Chess, Color, Move, Outcome, Position};

use crate::{
    alert::{Alert, AlertKind},
    event::{BoardEvent, Millis, Seconds, TimedEvent},
    game::{Game, Termination, draw, win},
    matcher::{Explanation, explain},
    rules::RuleSet,
    sensed::SensedBoard,
};

/// How the engine reads the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineConfig {
    /// How long a board state must stand before it counts (ms). Shorter
    /// states are slides and flicker.
    pub settle_ms: Millis,
    /// The rule set of the games.
    pub rules: RuleSet,
}

impl Default for EngineConfig {
    fn default() -> EngineConfig {
        EngineConfig {
            settle_ms: 150,
            rules: RuleSet::Standard,
        }
    }
}

/// What the engine tells its listeners (broadcast, dashboard).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GameEvent {
    /// A game started (its index among the session's games, from 0).
    GameStarted {
        /// Game index.
        game: usize,
        /// When.
        at: Millis,
    },
    /// A move was made (Art. 4.7).
    MoveMade {
        /// Game index.
        game: usize,
        /// Its number in half-moves, from 1.
        ply: usize,
        /// SAN.
        san: String,
        /// When.
        at: Millis,
    },
    /// A move was completed (Art. 6.2.1).
    MoveCompleted {
        /// Game index.
        game: usize,
        /// Its number in half-moves, from 1.
        ply: usize,
        /// When.
        at: Millis,
    },
    /// Moves were removed from the record: it now has `ply` half-moves.
    MovesRetracted {
        /// Game index.
        game: usize,
        /// Half-moves left.
        ply: usize,
        /// When.
        at: Millis,
    },
    /// An alert for the arbiter.
    Alert {
        /// Game index.
        game: usize,
        /// The alert.
        alert: Alert,
    },
    /// A game that its last move seemed to end goes on: that move was
    /// corrected (a pawn on the last rank replaced by another piece).
    GameResumed {
        /// Game index.
        game: usize,
        /// When.
        at: Millis,
    },
    /// The game ended.
    GameOver {
        /// Game index.
        game: usize,
        /// The result.
        outcome: Outcome,
        /// How it ended.
        termination: Termination,
        /// When.
        at: Millis,
    },
}

/// An event the engine cannot apply.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// A `setup` after the first move of a game that is not over.
    #[error(
        "setup {fen} comes after move {ply} of a game that is not over: a setup is only allowed before the first move of a game"
    )]
    SetupMidGame {
        /// The FEN given.
        fen: String,
        /// Moves already recorded.
        ply: usize,
    },
    /// A setup position that is not legal.
    #[error("setup {fen} is not a legal position: {reason}")]
    IllegalSetup {
        /// The FEN given.
        fen: String,
        /// Why.
        reason: String,
    },
}

/// The reconstruction engine for one board.
#[derive(Debug, Clone)]
pub struct Engine {
    config: EngineConfig,
    games: Vec<Game>,
    sensed: SensedBoard,
    /// Counts board events; a touch is stamped with it.
    seq: u64,
    now: Millis,
    /// When the current board state appeared, and the event that made it.
    state_since: Millis,
    state_seq: u64,
    /// The current board state has not been read yet.
    dirty: bool,
    clock_in_use: bool,
    /// A press by a player whose move the board did not show yet.
    pending_press: ByColor<bool>,
    last_clock: Option<(Seconds, Seconds)>,
    pending_tags: Vec<(String, String)>,
    events: Vec<GameEvent>,
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
            state_since: 0,
            state_seq: 0,
            dirty: false,
            clock_in_use: false,
            pending_press: ByColor::default(),
            last_clock: None,
            pending_tags: Vec::new(),
            events: vec![GameEvent::GameStarted { game: 0, at: 0 }],
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

    /// Takes the events produced since the last call.
    pub fn drain_events(&mut self) -> Vec<GameEvent> {
        std::mem::take(&mut self.events)
    }

    /// Applies one event. Timestamps earlier than the last one are taken as
    /// equal to it.
    pub fn push(&mut self, ev: &TimedEvent) -> Result<(), EngineError> {
        let t = ev.at.max(self.now);
        self.advance_to(t);
        self.now = t;
        match &ev.event {
            BoardEvent::Lift(sq) => {
                self.seq += 1;
                if self.sensed.lift(*sq, self.seq) {
                    self.state_changed(t);
                }
                self.complete_by_opponent_lift(*sq, t);
            }
            BoardEvent::Place(sq, piece) => {
                self.seq += 1;
                if self.sensed.place(*sq, *piece, self.seq) {
                    self.state_changed(t);
                }
            }
            BoardEvent::Board(scan) => {
                self.seq += 1;
                if self.sensed.apply_scan(scan, self.seq) {
                    self.state_changed(t);
                }
            }
            BoardEvent::Press(color) => {
                self.flush();
                self.clock_in_use = true;
                self.press(*color, t);
            }
            BoardEvent::Clock(white, black) => {
                self.last_clock = Some((*white, *black));
                self.update_last_completed_clock();
            }
            BoardEvent::Flag(color) => {
                self.flush();
                self.end_game(win(!*color), Termination::TimeForfeit, t);
            }
            BoardEvent::Resign(color) => {
                self.flush();
                self.end_game(win(!*color), Termination::Resignation, t);
            }
            BoardEvent::Draw => {
                self.flush();
                self.end_game(draw(), Termination::Agreement, t);
            }
            BoardEvent::Result(outcome) => {
                self.flush();
                let termination = if outcome.is_known() {
                    Termination::ArbiterDecision
                } else {
                    Termination::Abandoned
                };
                self.end_game(*outcome, termination, t);
            }
            BoardEvent::Claim(..) => {
                // Claims are read here so that the position they speak of is
                // the settled one; their rulings come with the draw rules.
                self.flush();
            }
            BoardEvent::Setup(fen) => {
                self.flush();
                self.setup(fen, t)?;
            }
            BoardEvent::Tag(name, value) => {
                self.flush();
                if self.game().is_over() {
                    self.pending_tags.push((name.clone(), value.clone()));
                } else {
                    self.game_mut().set_tag(name, value);
                }
            }
        }
        Ok(())
    }

    /// Lets time pass to `t` with no event: a board state that has stood long
    /// enough is read. A live reader calls this on a timer.
    pub fn advance_to(&mut self, t: Millis) {
        if self.dirty && t.saturating_sub(self.state_since) >= self.config.settle_ms {
            self.evaluate();
        }
        self.now = self.now.max(t);
    }

    /// Reads the current board state now, however briefly it has stood (at a
    /// clock press or at the end of the input).
    pub fn flush(&mut self) {
        if self.dirty {
            self.evaluate();
        }
    }

    fn state_changed(&mut self, t: Millis) {
        self.dirty = true;
        self.state_since = t;
        self.state_seq = self.seq;
    }

    fn setup(&mut self, fen: &shakmaty::fen::Fen, t: Millis) -> Result<(), EngineError> {
        let pos: Chess = fen
            .clone()
            .into_position(CastlingMode::Standard)
            .map_err(|e| EngineError::IllegalSetup {
                fen: fen.to_string(),
                reason: e.to_string(),
            })?;
        let game = self.game();
        if !game.is_over() && game.ply() > 0 {
            return Err(EngineError::SetupMidGame {
                fen: fen.to_string(),
                ply: game.ply(),
            });
        }
        self.seq += 1;
        self.sensed = SensedBoard::showing(pos.board());
        self.dirty = false;
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

    fn start_game(&mut self, start: Chess, at: Millis) {
        let mut game = Game::new(start, self.seq);
        for (name, value) in std::mem::take(&mut self.pending_tags) {
            game.set_tag(&name, &value);
        }
        self.games.push(game);
        self.pending_press = ByColor::default();
        self.events.push(GameEvent::GameStarted {
            game: self.game_index(),
            at,
        });
    }

    /// Reads the settled board state.
    fn evaluate(&mut self) {
        self.dirty = false;
        let made_at = self.state_since;
        let basis = self.state_seq;
        let game = self.game();
        if game.is_over() {
            // A new game starts when the pieces are set up again.
            if self.sensed.shows(Chess::default().board()) {
                self.start_game(Chess::default(), made_at);
            } else {
                self.repromote(made_at, basis);
            }
            return;
        }
        if self.sensed.shows_position(game.position()) {
            return;
        }
        let n = game.ply();
        let since = game.basis(n);

        match explain(game.position(), game.legal_moves(), &self.sensed, since, 1) {
            Explanation::Unique(moves) => return self.record(&moves, made_at, basis),
            Explanation::Ambiguous => return,
            Explanation::None => {}
        }

        if n > 0 && game.moves()[n - 1].completed_at.is_none() {
            let prev = game.position_at(n - 1).expect("positions follow moves");
            let since_prev = game.basis(n - 1);
            match explain(prev, &prev.legal_moves(), &self.sensed, since_prev, 1) {
                Explanation::Unique(moves) if could_move_on(game.moves()[n - 1].mv, moves[0]) => {
                    return self.replace_last(moves[0], made_at, basis);
                }
                Explanation::Unique(_) => {}
                Explanation::Ambiguous => return,
                Explanation::None => {}
            }
        }

        if n > 0
            && self
                .sensed
                .shows_position(game.position_at(n - 1).expect("ply > 0"))
        {
            return self.take_back(n - 1, made_at);
        }

        match explain(game.position(), game.legal_moves(), &self.sensed, since, 2) {
            Explanation::Unique(moves) => return self.record(&moves, made_at, basis),
            Explanation::Ambiguous => return,
            Explanation::None => {}
        }

        if let Some(ply) = (0..n.saturating_sub(1)).rev().find(|&ply| {
            self.sensed
                .shows_position(game.position_at(ply).expect("ply < n"))
        }) {
            return self.take_back(ply, made_at);
        }

        if let Explanation::Unique(moves) =
            explain(game.position(), game.legal_moves(), &self.sensed, since, 3)
        {
            self.record(&moves, made_at, basis);
        }
    }

    /// Records moves the board showed made at `made_at`.
    fn record(&mut self, moves: &[Move], made_at: Millis, basis: u64) {
        let gi = self.game_index();
        let first_ply = self.game().ply() + 1;
        for &m in moves {
            // A later move completes every earlier one (Art. 6.2.1.2).
            self.complete_all(made_at);
            let mover = self.game().position().turn();
            self.game_mut().push_move(m, made_at, basis);
            let ply = self.game().ply();
            let san = self.game().moves()[ply - 1].san.to_string();
            self.events.push(GameEvent::MoveMade {
                game: gi,
                ply,
                san,
                at: made_at,
            });
            if std::mem::take(&mut self.pending_press[mover]) {
                // The clock was pressed before the board showed the move.
                self.complete_all(made_at);
            }
        }
        if moves.len() > 1 {
            let game = self.game();
            let sans: Vec<String> = game.moves()[first_ply - 1..]
                .iter()
                .map(|m| m.san.to_string())
                .collect();
            let message = format!(
                "the board showed {} moves at once without the positions between them; recorded {} (check them against the scoresheets)",
                moves.len(),
                sans.join(" ")
            );
            self.alert(AlertKind::MovesInferred, None, message);
        }
        self.check_game_over(made_at);
    }

    /// The last move, not yet completed, was changed into `m` (Art. 4.7).
    fn replace_last(&mut self, m: Move, made_at: Millis, basis: u64) {
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
        if !same_move_in_hand(old.mv, m) {
            let message = format!(
                "{} was released as a legal move, then changed into {} before the clock was pressed; a piece released on a square as a legal move may not be moved to another square (Art. 4.7). Recorded: {}",
                old.san, new_san, new_san
            );
            self.alert(AlertKind::MoveChanged, Some(mover), message);
        }
        if std::mem::take(&mut self.pending_press[mover]) {
            self.complete_all(made_at);
        }
        self.check_game_over(made_at);
    }

    /// A pawn put on the last rank of an occupancy board reads as a queen,
    /// which may mate or stalemate at once; when the board then identifies
    /// another piece replacing the pawn, that was the promotion (Art. 4.7.3:
    /// the move is made when the new piece is released), so the game goes on
    /// from the corrected move.
    fn repromote(&mut self, made_at: Millis, basis: u64) {
        let game = self.game();
        let n = game.ply();
        if n == 0
            || !matches!(
                game.termination(),
                Some(Termination::Checkmate | Termination::Stalemate)
            )
        {
            return;
        }
        let last = game.moves()[n - 1].mv;
        if !last.is_promotion() || self.sensed.shows_position(game.position()) {
            return;
        }
        let prev = game.position_at(n - 1).expect("ply > 0");
        if let Explanation::Unique(moves) = explain(
            prev,
            &prev.legal_moves(),
            &self.sensed,
            game.basis(n - 1),
            1,
        ) && same_move_in_hand(last, moves[0])
            && last != moves[0]
        {
            self.game_mut().reopen();
            self.events.push(GameEvent::GameResumed {
                game: self.game_index(),
                at: made_at,
            });
            self.replace_last(moves[0], made_at, basis);
        }
    }

    /// The board went back to the position after `ply` moves.
    fn take_back(&mut self, ply: usize, at: Millis) {
        let gi = self.game_index();
        let n = self.game().ply();
        let removed: Vec<String> = self.game().moves()[ply..]
            .iter()
            .map(|m| m.san.to_string())
            .collect();
        let side = (n - ply == 1).then(|| self.game().mover(n));
        self.game_mut().truncate(ply);
        self.pending_press = ByColor::default();
        self.events
            .push(GameEvent::MovesRetracted { game: gi, ply, at });
        let message = format!(
            "the board went back to the position before {}: removed from the record",
            removed.join(" ")
        );
        self.alert(AlertKind::Takeback, side, message);
    }

    fn alert(&mut self, kind: AlertKind, side: Option<Color>, message: String) {
        let alert = Alert {
            kind,
            ply: self.game().ply(),
            side,
            message,
            ruling: None,
        };
        self.game_mut().alerts.push(alert.clone());
        self.events.push(GameEvent::Alert {
            game: self.game_index(),
            alert,
        });
    }

    /// Completes every move not yet completed.
    fn complete_all(&mut self, at: Millis) {
        let gi = self.game_index();
        let clock = self.last_clock;
        let game = self.games.last_mut().expect("a game");
        let n = game.ply();
        let mut first = n;
        while first > 0 && game.moves()[first - 1].completed_at.is_none() {
            first -= 1;
        }
        for i in first..n {
            let mover = game.mover(i + 1);
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

    /// A clock report gives the remaining time of the player who last
    /// completed a move: his clock stands still until the opponent presses.
    fn update_last_completed_clock(&mut self) {
        let Some((white, black)) = self.last_clock else {
            return;
        };
        let game = self.games.last_mut().expect("a game");
        if let Some(i) = game.moves().iter().rposition(|m| m.completed_at.is_some()) {
            let mover = game.mover(i + 1);
            // After a press for a move the board has not shown yet, the
            // player's time belongs to that move.
            if !self.pending_press[mover] {
                game.moves_mut()[i].clock = Some(mover.fold_wb(white, black));
            }
        }
    }

    fn press(&mut self, color: Color, t: Millis) {
        let game = self.game();
        if game.is_over() {
            return;
        }
        let n = game.ply();
        if n > 0 && game.mover(n) == color && game.moves()[n - 1].completed_at.is_none() {
            self.complete_all(t);
        } else {
            // The board has not shown this player's move yet (boards report
            // later than clocks, and a scanning board can be a ply or two
            // behind): it is completed as soon as the board shows it.
            self.pending_press[color] = true;
        }
    }

    fn complete_by_opponent_lift(&mut self, sq: shakmaty::Square, t: Millis) {
        if self.clock_in_use {
            return;
        }
        let game = self.game();
        if game.is_over() || game.ply() == 0 {
            return;
        }
        let pos = game.position();
        if pos.board().color_at(sq) == Some(pos.turn())
            && game.moves()[game.ply() - 1].completed_at.is_none()
        {
            self.complete_all(t);
        }
    }

    fn check_game_over(&mut self, at: Millis) {
        let game = self.game();
        if !game.legal_moves().is_empty() {
            return;
        }
        let pos = game.position();
        let (outcome, termination) = if pos.is_check() {
            (win(!pos.turn()), Termination::Checkmate)
        } else {
            (draw(), Termination::Stalemate)
        };
        // A move that ends the game is completed by that (Art. 6.2.1.1).
        self.complete_all(at);
        self.end_game(outcome, termination, at);
    }

    fn end_game(&mut self, outcome: Outcome, termination: Termination, at: Millis) {
        if self.game().is_over() {
            return;
        }
        self.game_mut().finish(outcome, termination);
        self.pending_press = ByColor::default();
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

    /// Reads the last board state, however briefly it stood: the input ended.
    pub fn finish(&mut self) {
        self.flush();
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
            Some(Termination::Checkmate | Termination::Stalemate) => true,
            Some(_) => return false,
        };
        let gi = self.game_index();
        if reopen {
            self.game_mut().reopen();
            self.events.push(GameEvent::GameResumed { game: gi, at: t });
        }
        self.game_mut().truncate(n - 1);
        self.pending_press = ByColor::default();
        self.events.push(GameEvent::MovesRetracted {
            game: gi,
            ply: n - 1,
            at: t,
        });
        true
    }
}

/// Whether the board can show `new` after `old` was made from the same
/// position without the opponent moving. A piece that captured and moved on
/// leaves the captured piece off the board, which no single move from the
/// earlier position shows; so a capture can only change into a capture on
/// the same square (another promotion piece). Otherwise a state that looks
/// like another move is the opponent starting his own.
fn could_move_on(old: Move, new: Move) -> bool {
    match (old.capture(), new.capture()) {
        (None, _) => true,
        (Some(_), Some(_)) => old.to() == new.to(),
        (Some(_), None) => false,
    }
}

/// Whether changing `old` into `new` is still the same move in the player's
/// hand: the promotion piece chosen after the pawn touched the last rank, or
/// castling after the rook was put down first.
fn same_move_in_hand(old: Move, new: Move) -> bool {
    match (old, new) {
        (Move::Normal { from: a, to: b, .. }, Move::Normal { from: c, to: d, .. }) => {
            a == c && b == d
        }
        (
            Move::Normal {
                role: shakmaty::Role::Rook,
                from,
                to,
                ..
            },
            Move::Castle { king, rook },
        ) => {
            let turn = if king.rank() == shakmaty::Rank::First {
                Color::White
            } else {
                Color::Black
            };
            let side = new.castling_side().expect("castle has a side");
            from == rook && to == side.rook_to(turn)
        }
        _ => false,
    }
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
}
