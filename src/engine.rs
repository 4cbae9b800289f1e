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

use shakmaty::{
    Bitboard, ByColor, CastlingMode, CastlingSide, Chess, Color, Move, Outcome, Position, Role,
    Square, uci::UciMove,
};

use crate::{
    alert::{Alert, AlertKind},
    event::{BoardEvent, ClaimKind, Millis, Seconds, TimedEvent, side_name},
    game::{Game, Termination, draw, win},
    matcher::{Explanation, explain, occupancy_after},
    rules::{IllegalMovePenalty, Laws, RuleSet, Rules, minutes},
    sensed::SensedBoard,
    winnability::{Budget, Verdict, can_checkmate, can_checkmate_fast},
};

/// How the engine reads the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EngineConfig {
    /// How long a board state must stand before it counts (ms). Shorter
    /// states are slides and flicker.
    pub settle_ms: Millis,
    /// The rule set of the games.
    pub rules: RuleSet,
    /// The edition of the Laws.
    pub laws: Laws,
    /// How long (ms) a board state that no move explains may stand before
    /// the arbiter is told pieces are displaced (Art. 7.4, 7.6).
    pub displaced_ms: Millis,
    /// Watch for irregularities (illegal moves, touch-move, displaced
    /// pieces). Off, the engine only records the moves (a broadcast-only
    /// reader; also how the cost of the checks is measured).
    pub arbiter: bool,
}

impl Default for EngineConfig {
    fn default() -> EngineConfig {
        EngineConfig {
            settle_ms: 150,
            rules: RuleSet::Standard,
            laws: Laws::Fide2023,
            displaced_ms: 2000,
            arbiter: true,
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
    /// A clock report came while the board showed a state not read yet:
    /// it is given to the record once that state is read.
    clock_pending: bool,
    pending_tags: Vec<(String, String)>,
    /// An irregularity waiting for the position before it to be restored
    /// (Art. 7.5.1): the player who committed it.
    irregular: Option<Color>,
    /// The illegal move as the board showed it, when it can be read.
    illegal_move: Option<(Move, Millis)>,
    /// Since when the board has shown a state no move explains, and whether
    /// the arbiter was told.
    unexplained: Option<(Millis, bool)>,
    /// Per player, the first of his own pieces and the first opponent piece
    /// he lifted during his current move: on a board, touching is lifting
    /// (Art. 4.3).
    touches: ByColor<Touches>,
    events: Vec<GameEvent>,
}

/// What a player lifted first during his move. Pieces lifted within the
/// settle time of the first count as lifted together: a board that scans
/// reports them in square order, not in the order the hand took them (and
/// when the order cannot be told, Art. 4.3.3 and 4.4.1 give the player the
/// benefit of the doubt).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Touches {
    own: Option<(Square, Millis)>,
    own_together: Bitboard,
    theirs: Option<(Square, Millis)>,
    theirs_together: Bitboard,
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
            clock_pending: false,
            pending_tags: Vec::new(),
            irregular: None,
            illegal_move: None,
            unexplained: None,
            touches: ByColor::default(),
            events: vec![GameEvent::GameStarted { game: 0, at: 0 }],
        }
    }

    /// The configuration.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    fn rules(&self) -> Rules {
        Rules {
            set: self.config.rules,
            laws: self.config.laws,
        }
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

    /// Drops the events produced since the last call, keeping the buffer
    /// (for callers that only want the record, such as a replay).
    pub fn clear_events(&mut self) {
        self.events.clear();
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
                self.note_touch(*sq, t);
                let settled = !self.dirty;
                if self.sensed.lift(*sq, self.seq) {
                    self.state_changed(t);
                }
                self.complete_by_opponent_lift(*sq, settled, t);
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
                if self.dirty {
                    // The board may show moves made before this report that
                    // are not read yet (a board back after a disconnection,
                    // a scan that skipped plies): the times belong to the
                    // record as it will be once they are.
                    self.clock_pending = true;
                } else {
                    self.update_last_completed_clock();
                }
            }
            BoardEvent::Flag(color) => {
                self.flush();
                // Art. 6.9: a loss, unless the opponent cannot checkmate.
                let outcome = self.loss_unless_no_mate(*color, "flag fall (Art. 6.9)");
                self.end_game(outcome, Termination::TimeForfeit, t);
            }
            BoardEvent::Resign(color) => {
                self.flush();
                // Art. 5.1.2 (2023): a draw if the opponent cannot checkmate.
                let outcome = if self.rules().resignation_needs_mating_chances() {
                    self.loss_unless_no_mate(*color, "resignation (Art. 5.1.2)")
                } else {
                    win(!*color)
                };
                self.end_game(outcome, Termination::Resignation, t);
            }
            BoardEvent::Draw => {
                self.flush();
                self.agree_draw(t);
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
            BoardEvent::Claim(color, kind, mv) => {
                // The claim speaks of the settled position.
                self.flush();
                self.claim(*color, *kind, mv.as_ref(), t);
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
            self.apply_pending_clock();
        }
        self.now = self.now.max(t);
        self.check_displaced(t);
    }

    /// A board state no move explains that stands longer than a move in
    /// progress would: pieces displaced or knocked over (Art. 7.4, 7.6).
    fn check_displaced(&mut self, t: Millis) {
        // An irregularity already reported waits for its own restoration.
        if !self.config.arbiter || self.irregular.is_some() {
            return;
        }
        let Some((since, false)) = self.unexplained else {
            return;
        };
        if t.saturating_sub(since) < self.config.displaced_ms || self.game().is_over() {
            return;
        }
        self.unexplained = Some((since, true));
        let pos = self.game().position();
        let board = pos.board();
        let differ: Vec<String> = Square::ALL
            .into_iter()
            .filter(|&sq| {
                board.occupied().contains(sq) != self.sensed.occupied().contains(sq)
                    || self
                        .sensed
                        .piece_at(sq)
                        .is_some_and(|p| board.piece_at(sq) != Some(p))
            })
            .map(|sq| sq.to_string())
            .collect();
        let message = format!(
            "the board differs from the game position on {} and no move explains it: pieces displaced? Nothing is recorded until the position or a legal move from it is on the board again (Art. 7.4, 7.6)",
            differ.join(", ")
        );
        self.alert(AlertKind::DisplacedPieces, None, message);
    }

    /// Notes whether the settled board state is explained; tells the
    /// arbiter when a displacement he was told about is over.
    fn set_explained(&mut self, explained: bool, at: Millis) {
        match (explained, self.unexplained) {
            (true, Some((_, true))) => {
                self.unexplained = None;
                // What was lifted while pieces were displaced says nothing
                // about the player's intentions.
                self.touches = ByColor::default();
                let message = "the board shows the game position again (Art. 7.6)".to_owned();
                self.alert(AlertKind::PositionRestored, None, message);
            }
            (true, _) => self.unexplained = None,
            (false, None) => self.unexplained = Some((at, false)),
            (false, Some(_)) => {}
        }
    }

    /// Reads the current board state now, however briefly it has stood (at a
    /// clock press or at the end of the input).
    pub fn flush(&mut self) {
        if self.dirty {
            self.evaluate();
            self.apply_pending_clock();
        }
    }

    fn apply_pending_clock(&mut self) {
        if std::mem::take(&mut self.clock_pending) {
            self.update_last_completed_clock();
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
        self.touches = ByColor::default();
        self.events.push(GameEvent::GameStarted {
            game: self.game_index(),
            at,
        });
    }

    /// Reads the settled board state.
    fn evaluate(&mut self) {
        let made_at = self.state_since;
        let plies = self.game().ply();
        let games = self.games.len();
        self.read_state();
        let game = self.game();
        let explained = self.games.len() != games
            || game.is_over()
            || game.ply() != plies
            || self.irregular.is_some()
            || self.sensed.shows_position(game.position());
        self.set_explained(explained, made_at);
    }

    fn read_state(&mut self) {
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
        if self.irregular.is_some() {
            // Only the position before the irregularity, or a legal move
            // from it, brings the record back in step (Art. 7.5.1).
            if self.sensed.shows_position(game.position()) {
                self.restored(None, made_at, basis);
            } else if let Explanation::Unique(moves) =
                explain(game.position(), &self.sensed, game.basis(game.ply()), 1)
            {
                self.restored(Some(moves[0]), made_at, basis);
            } else if let Some((illegal, illegal_at)) = self.illegal_move {
                // The opponent moved from the position the illegal move
                // left: play goes on from the board.
                let mut on_board = game.position().clone();
                on_board.play_unchecked(illegal);
                if let Explanation::Unique(moves) =
                    explain(&on_board, &self.sensed, game.basis(game.ply()), 1)
                {
                    self.continue_after_illegal((illegal, illegal_at), moves[0], made_at, basis);
                }
            }
            return;
        }
        if self.sensed.shows_position(game.position()) {
            return;
        }
        let n = game.ply();
        let since = game.basis(n);

        match explain(game.position(), &self.sensed, since, 1) {
            Explanation::Unique(moves) => return self.record(&moves, made_at, basis),
            Explanation::Ambiguous => return,
            Explanation::None => {}
        }

        if n > 0 && game.moves()[n - 1].completed_at.is_none() {
            let prev = game.position_at(n - 1).expect("positions follow moves");
            let since_prev = game.basis(n - 1);
            match explain(prev, &self.sensed, since_prev, 1) {
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

        match explain(game.position(), &self.sensed, since, 2) {
            Explanation::Unique(moves) => return self.record(&moves, made_at, basis),
            Explanation::Ambiguous => return,
            Explanation::None => {}
        }

        // Positions earlier in the game never have fewer pieces.
        let fewer = self.sensed.occupied().count() < game.position().board().occupied().count();
        if !fewer
            && let Some(ply) = (0..n.saturating_sub(1)).rev().find(|&ply| {
                self.sensed
                    .shows_position(game.position_at(ply).expect("ply < n"))
            })
        {
            return self.take_back(ply, made_at);
        }

        if let Explanation::Unique(moves) = explain(game.position(), &self.sensed, since, 3) {
            return self.record(&moves, made_at, basis);
        }

        if let Some(outcome) = result_signal(&self.sensed) {
            let message = format!(
                "both kings were put on the centre squares: the players signal the result {} (the convention at DGT-equipped events: both on light squares 1-0, both on dark squares 0-1, one of each 1/2-1/2); not read as moves",
                outcome.as_str()
            );
            self.alert(AlertKind::ResultSignal, None, message);
            self.end_game(outcome, Termination::ResultSignal, made_at);
            return;
        }

        // The player to move pressed his clock and the opponent then moved:
        // the clock was pressed without a move (Art. 7.5.3).
        let turn = game.position().turn();
        if self.config.arbiter
            && self.pending_press[turn]
            && let Ok(passed) = game.position().clone().swap_turn()
            && let Explanation::Unique(_) = explain(&passed, &self.sensed, since, 1)
        {
            self.pending_press[turn] = false;
            let message = format!(
                "{} pressed the clock without making a move, and {} then moved (Art. 7.5.3: treated as an illegal move)",
                side_name(turn),
                side_name(!turn)
            );
            self.illegal(AlertKind::ClockWithoutMove, turn, message, made_at);
        }
    }

    /// Play continued from the position an illegal move left on the board:
    /// the illegal move is kept in the record (marked), and so is the reply.
    fn continue_after_illegal(
        &mut self,
        (illegal, illegal_at): (Move, Millis),
        reply: Move,
        made_at: Millis,
        basis: u64,
    ) {
        let offender = self.irregular.take();
        self.illegal_move = None;
        let n = self.game().ply();
        let basis_before = self.game().basis(n);
        self.game_mut()
            .push_illegal(illegal, illegal_at, basis_before);
        let rules = self.rules();
        let message = match rules.set {
            RuleSet::Rapid | RuleSet::Blitz => format!(
                "the illegal move {} stands: the opponent has made his next move without the arbiter intervening (A.5.2); play goes on from the position on the board",
                self.game().moves()[n].san
            ),
            RuleSet::Standard => format!(
                "play continued after the illegal move {} without the position being restored; the arbiter must still restore the position before it (Art. 7.5.1); the record goes on from the board",
                self.game().moves()[n].san
            ),
        };
        self.alert(AlertKind::IllegalMoveStands, offender, message);
        self.check_illegal_position(offender);
        self.record(&[reply], made_at, basis);
    }

    /// Both kings in check, or a pawn on its first or last rank, after an
    /// illegal move play went on from (A.5.4 in rapid and blitz; in standard
    /// play the arbiter must intervene at once).
    fn check_illegal_position(&mut self, offender: Option<Color>) {
        let pos = self.game().position();
        let board = pos.board();
        let occupied = board.occupied();
        let in_check = |c: Color| {
            board
                .king_of(c)
                .is_some_and(|k| board.attacks_to(k, !c, occupied).any())
        };
        let pawn_on_edge = (board.pawns() & shakmaty::Bitboard::BACKRANKS).first();
        let what = if in_check(Color::White) && in_check(Color::Black) {
            "both kings are in check".to_owned()
        } else if let Some(sq) = pawn_on_edge {
            format!("a pawn stands on {sq}, a rank no pawn can be on")
        } else {
            return;
        };
        let ruling = match self.rules().set {
            RuleSet::Rapid | RuleSet::Blitz => {
                "wait until the next move is completed; if the illegal position is still on the board, the game is drawn (A.5.4)"
            }
            RuleSet::Standard => "the arbiter must intervene at once (Art. 7.5.1)",
        };
        let message = format!("illegal position on the board: {what}");
        self.alert(AlertKind::IllegalPosition, offender, message);
        if let Some(last) = self.game_mut().alerts.last_mut() {
            last.ruling = Some(ruling.to_owned());
        }
    }

    /// The board is back in step after an irregularity: the position before
    /// it, or a legal move from it.
    fn restored(&mut self, mv: Option<Move>, made_at: Millis, basis: u64) {
        let offender = self.irregular.take();
        self.illegal_move = None;
        let message =
            "the board shows again the position before the irregularity (Art. 7.5.1)".to_owned();
        self.alert(AlertKind::PositionRestored, offender, message);
        if let Some(m) = mv {
            self.record(&[m], made_at, basis);
        }
    }

    /// Counts a completed illegal move (or an act treated as one) and applies
    /// Art. 7.5.5: time to the opponent, or the game lost on the second
    /// (drawn if the opponent cannot checkmate).
    fn illegal(&mut self, kind: AlertKind, offender: Color, message: String, at: Millis) {
        let rules = self.rules();
        let count = {
            let game = self.game_mut();
            game.illegal_moves[offender] += 1;
            game.illegal_moves[offender]
        };
        let article = rules.illegal_move_article();
        let restore = kind != AlertKind::PawnNotPromoted;
        let (ruling, ending) = match rules.illegal_move_penalty(count) {
            IllegalMovePenalty::TimeToOpponent(secs) => {
                let mut ruling = format!(
                    "{} to {} ({article}; illegal move number {count} by {})",
                    minutes(secs),
                    side_name(!offender),
                    side_name(offender)
                );
                if restore {
                    ruling.push_str("; restore the position before it, then a move with the piece touched (Art. 7.5.1, 4.3)");
                }
                (ruling, None)
            }
            IllegalMovePenalty::Loss { unless_no_mate } => {
                let pos = self.game().position().clone();
                let opponent_can_mate = !unless_no_mate
                    || can_checkmate_fast(&pos, !offender) != Verdict::No
                        && can_checkmate(&pos, !offender, Budget::DETERMINISTIC)
                            .map_or(true, |a| a.verdict != Verdict::No);
                if opponent_can_mate {
                    (
                        format!(
                            "illegal move number {count} by {}: the game is lost ({article})",
                            side_name(offender)
                        ),
                        Some(win(!offender)),
                    )
                } else {
                    (
                        format!(
                            "illegal move number {count} by {}: the game is drawn, as {} cannot checkmate by any series of legal moves ({article})",
                            side_name(offender),
                            side_name(!offender)
                        ),
                        Some(draw()),
                    )
                }
            }
        };
        self.alert(kind, Some(offender), message);
        if let Some(last) = self.game_mut().alerts.last_mut() {
            last.ruling = Some(ruling);
        }
        match ending {
            Some(outcome) => {
                self.irregular = None;
                self.end_game(outcome, Termination::IllegalMoves, at);
            }
            None if restore => self.irregular = Some(offender),
            None => {}
        }
    }

    /// The clock was pressed by the player to move with the board showing
    /// no legal move: a completed illegal move (Art. 7.5.1), or a pawn left
    /// on the last rank (7.5.2).
    fn completed_irregularity(&mut self, color: Color, t: Millis) {
        let game = self.game();
        let pos = game.position().clone();
        let since = game.basis(game.ply());
        let touched = self.sensed.touched_since(since);
        if let Some(m) = unpromoted_pawn(&pos, &self.sensed) {
            let made_at = self.state_since;
            let basis = self.state_seq;
            self.record(&[m], made_at, basis);
            self.complete_all(t);
            let san = self
                .game()
                .moves()
                .last()
                .map(|m| m.san.to_string())
                .unwrap_or_default();
            let message = format!(
                "{} pressed the clock with a pawn on the last rank: recorded as {san}, a queen promotion (Art. 7.5.2: treated as an illegal move)",
                side_name(color)
            );
            self.illegal(AlertKind::PawnNotPromoted, color, message, t);
            return;
        }
        let what = describe_illegal(&pos, &self.sensed, touched);
        self.illegal_move =
            read_illegal_move(&pos, &self.sensed, touched).map(|m| (m, self.state_since));
        let message = format!(
            "{} completed an illegal move: {what} (Art. 7.5.1)",
            side_name(color)
        );
        self.illegal(AlertKind::IllegalMove, color, message, t);
    }

    /// Records moves the board showed made at `made_at`.
    fn record(&mut self, moves: &[Move], made_at: Millis, basis: u64) {
        let before = (moves.len() == 1).then(|| self.game().position().clone());
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
        if let [m] = moves {
            self.check_touch_move_on(before, *m);
        }
        // Touches older than the position before the last move are never
        // asked about again.
        let n = self.game().ply();
        let oldest = self.game().basis(n.saturating_sub(1));
        self.sensed.forget_until(oldest);
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
        self.check_touch_move_on(self.game().position_at(n - 1).cloned(), m);
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
        if let Explanation::Unique(moves) = explain(prev, &self.sensed, game.basis(n - 1), 1)
            && same_move_in_hand(last, moves[0])
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
        // A completed move closes its player's touches.
        let n = self.game().ply();
        if n > 0 && self.game().moves()[n - 1].completed_at.is_none() {
            let mover = self.game().mover(n);
            self.touches[mover] = Touches::default();
        }
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
        } else if self.config.arbiter
            && self.irregular.is_none()
            && game.position().turn() == color
            && !self.sensed.shows_position(game.position())
            && self.moved_own_piece(color)
        {
            self.completed_irregularity(color, t);
        } else {
            // The board has not shown this player's move yet (boards report
            // later than clocks, and a scanning board can be a ply or two
            // behind): it is completed as soon as the board shows it.
            self.pending_press[color] = true;
        }
    }

    /// Whether one of `color`'s pieces left its square since the position.
    fn moved_own_piece(&self, color: Color) -> bool {
        let game = self.game();
        let pos = game.position();
        let ours = pos.board().by_color(color);
        let touched = self.sensed.touched_since(game.basis(game.ply()));
        (ours & !self.sensed.occupied()).any() || (ours & touched).any()
    }

    /// Notes a lift as a touch by the player who is moving: the player to
    /// move, or the player still finishing his last, uncompleted move.
    fn note_touch(&mut self, sq: Square, t: Millis) {
        let game = self.game();
        if game.is_over() || !self.config.arbiter {
            return;
        }
        let pos = game.position();
        let Some(color) = pos.board().color_at(sq) else {
            return;
        };
        let n = game.ply();
        let finishing =
            n > 0 && game.moves()[n - 1].completed_at.is_none() && game.mover(n) == color;
        let player = if finishing { color } else { pos.turn() };
        let window = self.config.settle_ms;
        let touches = &mut self.touches[player];
        let (first, together) = if color == player {
            (&mut touches.own, &mut touches.own_together)
        } else {
            (&mut touches.theirs, &mut touches.theirs_together)
        };
        match *first {
            None => {
                *first = Some((sq, t));
                together.add(sq);
            }
            Some((_, at)) if t.saturating_sub(at) < window => together.add(sq),
            Some(_) => {}
        }
    }

    /// Touch-move (Art. 4.3, 4.4) checked against the move played from
    /// `before`. Advisory: a board cannot hear "j'adoube" (4.2).
    fn check_touch_move_on(&mut self, before: Option<Chess>, m: Move) {
        let Some(pos) = before else {
            return;
        };
        let mover = pos.turn();
        let touches = self.touches[mover];
        let captured = match m {
            Move::EnPassant { from, to } => Some(Square::from_coords(to.file(), from.rank())),
            _ if m.is_capture() => Some(m.to()),
            _ => None,
        };
        let own_other = touches.own.is_some()
            && !m
                .from()
                .is_some_and(|from| touches.own_together.contains(from));
        let theirs_other = touches.theirs.is_some()
            && !captured.is_some_and(|sq| touches.theirs_together.contains(sq));
        if !own_other && !theirs_other {
            // The usual case: the first pieces lifted are the ones played.
            return;
        }
        let legal = pos.legal_moves();
        let mut breaches = Vec::new();
        if let Some((first, _)) = touches.own
            && own_other
        {
            let castled_with = matches!(m, Move::Castle { rook, .. } if rook == first);
            if castled_with {
                breaches.push(format!(
                    "lifted the rook on {first} first, then castled with it: castling on that side is not allowed on that move (Art. 4.4.2)"
                ));
            } else if legal.iter().any(|l| l.from() == Some(first)) {
                let role = pos.board().role_at(first).map_or("piece", role_name);
                breaches.push(format!(
                    "lifted the {role} on {first} first, which could move, then moved another piece (Art. 4.3.1)"
                ));
            }
        }
        if let Some((target, _)) = touches.theirs
            && theirs_other
        {
            let takes = |l: &Move| match *l {
                Move::EnPassant { from, to } => {
                    Square::from_coords(to.file(), from.rank()) == target
                }
                _ => l.is_capture() && l.to() == target,
            };
            if legal.iter().any(takes) && !takes(&m) {
                let role = pos.board().role_at(target).map_or("piece", role_name);
                breaches.push(format!(
                    "lifted the opponent's {role} on {target} first, which could be captured, then did not capture it (Art. 4.3.2)"
                ));
            }
        }
        for breach in breaches {
            let message = format!(
                "{} {breach}; advisory: the board cannot tell a touch from an adjustment announced with \"j'adoube\" (Art. 4.2)",
                side_name(mover)
            );
            self.alert(AlertKind::TouchMove, Some(mover), message);
        }
    }

    /// `settled`: the board state before the lift had been read.
    fn complete_by_opponent_lift(&mut self, sq: shakmaty::Square, settled: bool, t: Millis) {
        if self.clock_in_use {
            return;
        }
        let game = self.game();
        if game.is_over() {
            return;
        }
        let pos = game.position();
        let offender = pos.turn();
        // With no clock, an illegal move is completed when the opponent
        // starts his next move (Art. 6.2.1, 7.5.1): the mover's piece was
        // put down where no legal move explains it, and an opponent's piece
        // is lifted without that making the mover's move (a capture).
        if self.config.arbiter
            && self.irregular.is_none()
            && settled
            && self.unexplained.is_some()
            && pos.board().color_at(sq) == Some(!offender)
            && (self.sensed.occupied() & !pos.board().occupied()).any()
            && self.moved_own_piece(offender)
            && explain(pos, &self.sensed, game.basis(game.ply()), 1) == Explanation::None
        {
            return self.completed_irregularity(offender, t);
        }
        if game.ply() == 0 {
            return;
        }
        let pos = game.position();
        if pos.board().color_at(sq) == Some(pos.turn())
            && game.moves()[game.ply() - 1].completed_at.is_none()
        {
            self.complete_all(t);
        }
    }

    /// The endings the Laws apply by themselves after a move, in their
    /// order of precedence: checkmate and stalemate end the game before any
    /// counter matters (a mate on the 75th move wins, Art. 9.6.2), then a
    /// dead position (5.2.2), the fifth occurrence of a position (9.6.1) and
    /// 75 moves without pawn move or capture (9.6.2). Otherwise the arbiter
    /// is told when a draw may be claimed (9.2, 9.3).
    fn check_game_over(&mut self, at: Millis) {
        let rules = self.rules();
        let game = self.game();
        let pos = game.position();
        let ending = if game.no_legal_moves() {
            Some(if pos.is_check() {
                (win(!pos.turn()), Termination::Checkmate)
            } else {
                (draw(), Termination::Stalemate)
            })
        } else if is_dead_fast(pos) {
            Some((draw(), Termination::DeadPosition))
        } else if rules.automatic_draws() && game.repetitions() >= 5 {
            Some((draw(), Termination::FivefoldRepetition))
        } else if rules.automatic_draws() && pos.halfmoves() >= 150 {
            Some((draw(), Termination::SeventyfiveMoves))
        } else {
            None
        };
        if let Some((outcome, termination)) = ending {
            // A move that ends the game is completed by that (Art. 6.2.1.1).
            self.complete_all(at);
            self.end_game(outcome, termination, at);
            return;
        }
        let to_move = pos.turn();
        let repetitions = game.repetitions();
        let halfmoves = pos.halfmoves();
        if repetitions >= 3 {
            let message = format!(
                "this position has now occurred {repetitions} times: {} may claim a draw by repetition (Art. 9.2.1.2)",
                side_name(to_move)
            );
            self.alert(AlertKind::ThreefoldClaimable, Some(to_move), message);
        }
        if halfmoves == 100 {
            let message = format!(
                "the last 50 moves by each player were made without a pawn move or a capture: {} may claim a draw (Art. 9.3.2)",
                side_name(to_move)
            );
            self.alert(AlertKind::FiftyMovesClaimable, Some(to_move), message);
        }
    }

    /// The result when `loser` flags or resigns: a loss, unless the opponent
    /// cannot checkmate by any series of legal moves. An undecided analysis
    /// keeps the loss and says so.
    fn loss_unless_no_mate(&mut self, loser: Color, what: &str) -> Outcome {
        let pos = self.game().position().clone();
        let verdict = match can_checkmate_fast(&pos, !loser) {
            Verdict::No => Verdict::No,
            _ => can_checkmate(&pos, !loser, Budget::DETERMINISTIC)
                .map_or(Verdict::Unknown, |a| a.verdict),
        };
        match verdict {
            Verdict::No => draw(),
            Verdict::Yes => win(!loser),
            Verdict::Unknown => {
                let message = format!(
                    "{what}: whether {} can still checkmate could not be decided; the game is scored as lost, the arbiter should check the position",
                    side_name(!loser)
                );
                self.alert(AlertKind::ClaimRejected, Some(loser), message);
                win(!loser)
            }
        }
    }

    fn agree_draw(&mut self, t: Millis) {
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
        if both_moved.white && both_moved.black || self.rules().early_draw_agreement() {
            self.end_game(draw(), Termination::Agreement, t);
        } else {
            let message = "a draw agreed before both players have made a move is not valid; the game goes on (Art. 5.2.3)".to_owned();
            self.alert(AlertKind::DrawRejected, None, message);
        }
    }

    /// Checks a draw claim (Art. 9.2, 9.3, 9.5).
    fn claim(&mut self, claimant: Color, kind: ClaimKind, mv: Option<&UciMove>, t: Millis) {
        let rules = self.rules();
        let game = self.game();
        if game.is_over() {
            return;
        }
        let pos = game.position();
        let (article, termination) = match kind {
            ClaimKind::Threefold => ("Art. 9.2", Termination::ThreefoldRepetition),
            ClaimKind::Fifty => ("Art. 9.3", Termination::FiftyMoves),
        };
        let rejected = |reason: String| -> (Option<String>, String) { (None, reason) };
        let (correct, reason) = if pos.turn() != claimant {
            rejected(format!(
                "only the player having the move may claim ({article} and its commentary)"
            ))
        } else {
            match mv {
                None => match kind {
                    ClaimKind::Threefold => {
                        let n = game.repetitions();
                        if n >= 3 {
                            (
                                Some(format!(
                                    "the position has occurred {n} times ({article}.1.2)"
                                )),
                                String::new(),
                            )
                        } else {
                            rejected(format!(
                                "the position has occurred only {n} time(s), not 3 ({article}.1.2)"
                            ))
                        }
                    }
                    ClaimKind::Fifty => {
                        let h = pos.halfmoves();
                        if h >= 100 {
                            (
                                Some(format!(
                                    "the last 50 moves by each player were completed without pawn move or capture ({article}.2)"
                                )),
                                String::new(),
                            )
                        } else {
                            rejected(format!(
                                "only {} moves by each player without pawn move or capture, not 50 ({article}.2)",
                                h / 2
                            ))
                        }
                    }
                },
                Some(uci) => match uci.to_move(pos) {
                    Err(_) => rejected(format!(
                        "the announced move {uci} is not legal; another move with the same piece must be made (commentary to Art. 9.5.3)"
                    )),
                    Ok(m) => {
                        let mut after = pos.clone();
                        after.play_unchecked(m);
                        match kind {
                            ClaimKind::Threefold => {
                                let n =
                                    game.occurrences(&after, crate::game::position_key(&after)) + 1;
                                if n >= 3 {
                                    (
                                        Some(format!(
                                            "the announced move {uci} makes the position occur for the {n}th time ({article}.1.1)"
                                        )),
                                        String::new(),
                                    )
                                } else {
                                    rejected(format!(
                                        "after the announced move {uci} the position will have occurred {n} time(s), not 3 ({article}.1.1)"
                                    ))
                                }
                            }
                            ClaimKind::Fifty => {
                                if after.halfmoves() >= 100 {
                                    (
                                        Some(format!(
                                            "after the announced move {uci} the last 50 moves by each player have no pawn move or capture ({article}.1)"
                                        )),
                                        String::new(),
                                    )
                                } else {
                                    rejected(format!(
                                        "after the announced move {uci} only {} moves by each player without pawn move or capture, not 50 ({article}.1)",
                                        after.halfmoves() / 2
                                    ))
                                }
                            }
                        }
                    }
                },
            }
        };
        match correct {
            Some(_) => self.end_game(draw(), termination, t),
            None => {
                let bonus = rules.wrong_claim_bonus();
                let mut ruling = format!(
                    "{} to {} ({}); the game goes on",
                    minutes(bonus),
                    side_name(!claimant),
                    rules.wrong_claim_article()
                );
                if let Some(uci) = mv {
                    ruling.push_str(&format!(
                        "; the announced move {uci} must be played (Art. 9.5.3)"
                    ));
                }
                let message = format!("{} claims a draw: incorrect: {reason}", side_name(claimant));
                self.alert(AlertKind::ClaimRejected, Some(claimant), message);
                if let Some(last) = self.game_mut().alerts.last_mut() {
                    last.ruling = Some(ruling);
                }
            }
        }
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
        self.pending_press = ByColor::default();
        self.irregular = None;
        self.illegal_move = None;
        self.touches = ByColor::default();
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

/// Whether the quick test proves that neither side can checkmate (Art. 5.2.2).
/// The quick test settles the dead positions of real games (bare kings,
/// lone minor pieces, locked pawn chains) in microseconds; a position it
/// cannot settle is taken as alive.
pub fn is_dead_fast(pos: &Chess) -> bool {
    if pos.is_insufficient_material() {
        return true;
    }
    can_checkmate_fast(pos, Color::White) == Verdict::No
        && can_checkmate_fast(pos, Color::Black) == Verdict::No
}

/// A pawn of the side to move put on the last rank and left there, as the
/// board shows it (identity boards only: an occupancy board reads the piece
/// as a queen anyway). Returns the queen promotion to record (Art. 7.5.2).
fn unpromoted_pawn(pos: &Chess, sensed: &SensedBoard) -> Option<Move> {
    let pawn = pos.turn().pawn();
    pos.legal_moves().into_iter().find(|&m| {
        matches!(m, Move::Normal { promotion: Some(Role::Queen), to, .. }
            if sensed.piece_at(to) == Some(pawn)
                && occupancy_after(pos.board().occupied(), m, pos.turn()) == sensed.occupied())
    })
}

/// Says what the board shows as a move, in long notation with the reason it
/// is illegal: "Ke1-e3: a king cannot go from e1 to e3".
fn describe_illegal(pos: &Chess, sensed: &SensedBoard, touched: Bitboard) -> String {
    let turn = pos.turn();
    let board = pos.board();
    let vacated = board.occupied() & !sensed.occupied() & pos.us();
    let filled = sensed.occupied() & !board.occupied();
    // Castling: the king two squares along its rank.
    if let Some(k) = board.king_of(turn)
        && vacated.contains(k)
        && let Some(to) = (filled & Bitboard::from_rank(k.rank()))
            .into_iter()
            .find(|&sq| sq.file().distance(k.file()) == 2)
    {
        let king_side = to.file() > k.file();
        let (name, side, passed) = if king_side {
            ("O-O", CastlingSide::KingSide, shakmaty::File::F)
        } else {
            ("O-O-O", CastlingSide::QueenSide, shakmaty::File::D)
        };
        let passed = Square::from_coords(passed, k.rank());
        let reason = if !pos.castles().has(turn, side) {
            "castling after the king or that rook has moved (Art. 3.8.2.1)"
        } else if pos.is_check() {
            "castling out of check (Art. 3.8.2.2)"
        } else if board.attacks_to(passed, !turn, board.occupied()).any() {
            "castling through check (Art. 3.8.2.2)"
        } else {
            "castling into check or with a piece in between (Art. 3.8.2)"
        };
        return format!("{name}: {reason}");
    }
    let Some(from) = vacated.single_square() else {
        return format!(
            "the board shows a position no legal move leads to (emptied: {}; filled: {})",
            squares(vacated),
            squares(filled)
        );
    };
    let Some(role) = board.role_at(from) else {
        return "the board shows a position no legal move leads to".to_owned();
    };
    let to = filled
        .single_square()
        .or_else(|| (touched & sensed.occupied() & pos.them()).single_square());
    let Some(to) = to else {
        return format!(
            "the {} left {from} for no square it can reach",
            role_name(role)
        );
    };
    let capture = board
        .role_at(to)
        .filter(|_| board.color_at(to) == Some(!turn));
    let letter = if role == Role::Pawn {
        String::new()
    } else {
        role.upper_char().to_string()
    };
    let text = format!(
        "{letter}{from}{}{to}",
        if capture.is_some() { 'x' } else { '-' }
    );
    let behind = Square::from_coords(to.file(), from.rank());
    if role == Role::Pawn
        && capture.is_none()
        && shakmaty::attacks::pawn_attacks(turn, from).contains(to)
        && board.piece_at(behind) == Some((!turn).pawn())
        && !sensed.occupied().contains(behind)
    {
        return format!(
            "{}x{to} en passant: allowed only on the move right after the pawn's double step (Art. 3.7.3.2)",
            from.file().char()
        );
    }
    let reaches = match role {
        Role::Pawn => {
            let step = turn.fold_wb(8, -8);
            let one = from.offset(step);
            let two = one.and_then(|s| s.offset(step));
            let home = turn.fold_wb(shakmaty::Rank::Second, shakmaty::Rank::Seventh);
            if capture.is_some() {
                shakmaty::attacks::pawn_attacks(turn, from).contains(to)
            } else {
                Some(to) == one || (Some(to) == two && from.rank() == home)
            }
        }
        _ => shakmaty::attacks::attacks(from, role.of(turn), board.occupied()).contains(to),
    };
    if !reaches {
        return format!(
            "{text}: a {} cannot go from {from} to {to} (Art. 3)",
            role_name(role)
        );
    }
    let mut after = pos.clone();
    after.play_unchecked(Move::Normal {
        role,
        from,
        capture,
        to,
        promotion: None,
    });
    if let Some(k) = after.board().king_of(turn)
        && after
            .board()
            .attacks_to(k, !turn, after.board().occupied())
            .any()
    {
        return format!("{text} leaves the king in check (Art. 3.9)");
    }
    format!("{text} is not a legal move here (Art. 3)")
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::Pawn => "pawn",
        Role::Knight => "knight",
        Role::Bishop => "bishop",
        Role::Rook => "rook",
        Role::Queen => "queen",
        Role::King => "king",
    }
}

fn squares(bb: Bitboard) -> String {
    if bb.is_empty() {
        return "none".to_owned();
    }
    bb.into_iter()
        .map(|sq| sq.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Both kings on the centre squares, identified by the board: the result
/// the players signal (light squares d5 and e4 for White's win, dark d4 and
/// e5 for Black's, one of each for a draw).
fn result_signal(sensed: &SensedBoard) -> Option<Outcome> {
    let centre = [Square::D4, Square::D5, Square::E4, Square::E5];
    let find = |king: shakmaty::Piece| {
        centre
            .into_iter()
            .find(|&sq| sensed.piece_at(sq) == Some(king))
    };
    let white = find(Color::White.king())?;
    let black = find(Color::Black.king())?;
    Some(match (white.is_light(), black.is_light()) {
        (true, true) => win(Color::White),
        (false, false) => win(Color::Black),
        _ => draw(),
    })
}

/// The illegal move as the board shows it, when one piece of the side to
/// move went from one square to another (or king and rook as in castling).
fn read_illegal_move(pos: &Chess, sensed: &SensedBoard, touched: Bitboard) -> Option<Move> {
    let turn = pos.turn();
    let board = pos.board();
    let vacated = board.occupied() & !sensed.occupied() & pos.us();
    let filled = sensed.occupied() & !board.occupied();
    let from = vacated.single_square()?;
    let role = board.role_at(from)?;
    let to = filled
        .single_square()
        .or_else(|| (touched & sensed.occupied() & pos.them()).single_square())?;
    let capture = board
        .role_at(to)
        .filter(|_| board.color_at(to) == Some(!turn));
    let m = Move::Normal {
        role,
        from,
        capture,
        to,
        promotion: None,
    };
    // The board must show exactly that piece moved.
    let mut after = pos.clone();
    after.play_unchecked(m);
    sensed.shows(after.board()).then_some(m)
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
