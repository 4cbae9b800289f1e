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

mod after_dump;
mod apply;
mod blip_press;
mod brief;
mod claim;
mod complete;
mod config;
mod correct;
mod cost;
mod dump_watch;
mod endings;
mod evaluate;
mod first_reading;
mod flag;
mod follow;
mod full_dead;
mod guard;
mod half_castled;
mod hand_press;
mod held_at_dump;
mod held_lift;
mod hypotheses;
mod illegal;
mod input;
mod next_game;
mod observation;
mod occupancy_slide;
mod orientation;
mod outage_scan;
mod output;
mod passed_story;
mod phase;
mod progress;
mod progress_memo;
mod provisional;
mod read;
mod record;
mod resynchronise;
mod scan_evidence;
mod scan_slide;
mod scanned;
mod settle;
mod slide;
mod slide_stood;
mod snapshots;
mod square_times;
mod touch;
mod unconfirmed;
mod unseen_capture;

pub use claim::judge_claim;
pub use config::EngineConfig;
pub use endings::{automatic_ending, is_dead_fast};
pub use full_dead::{Confirmation, DeadCheck, MateCheck, confirm_alive, verdict_position};
pub use hypotheses::lines_san;
pub use illegal::Attempt;
pub use orientation::Orientation;
pub use output::{EngineError, GameEvent};
pub use phase::{Phase, Unexplained};
pub use progress::in_progress;
pub use read::{Moment, Reading, Scanned, read};
pub use settle::Settle;
pub use snapshots::{BoardKind, Snapshots};
pub use touch::Touches;

use shakmaty::{ByColor, CastlingMode, Chess, Position};

use crate::{
    event::Millis,
    game::{Game, Termination},
    resync::SyncState,
    sensed::SensedBoard,
};
use complete::Clock;
use hypotheses::Hypotheses;

/// How many times one instant may read the board: each reading after the
/// first follows moves the one before recorded.
const MAX_READS_AT_ONCE: usize = 4;

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
    /// Full dead-position verdicts computed in line, by position.
    inline_verdicts: full_dead::InlineVerdicts,
    /// What changed the sensors last: square events, a snapshot or a dump
    /// (the observation model the state is read under).
    observation: observation::Observation,
    /// Candidate continuations while the board is out of step.
    hypotheses: Hypotheses,
    /// Candidates were listed since the board last showed the record's
    /// position (or a single move from it): the record may lag the board
    /// by more plies than any later state shows, so no sequence of several
    /// moves read from it is certain.
    behind: bool,
    /// The occupancies a scanning board showed since its last square
    /// report.
    snapshots: snapshots::Snapshots,
    /// The last reading was a move in progress: if the players end the
    /// game now, the state is read again as where they left the pieces.
    hand_awaited: bool,
    /// The check of the record against the board, outside the reading
    /// rules (see `guard.rs`).
    guard: guard::Guard,
    /// What the last dump left unsaid (the observation model of a dump).
    dump: dump_watch::DumpWatch,
    /// What the last scans left for the next to settle (the observation
    /// model of snapshots).
    scan: scan_evidence::ScanEvidence,
    /// When each square was last emptied or filled (the observation model
    /// of square events).
    squares: square_times::SquareTimes,
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
            inline_verdicts: full_dead::InlineVerdicts::default(),
            observation: observation::Observation::default(),
            hypotheses: Hypotheses::default(),
            behind: false,
            snapshots: snapshots::Snapshots::default(),
            hand_awaited: false,
            guard: guard::Guard::default(),
            dump: dump_watch::DumpWatch::default(),
            scan: scan_evidence::ScanEvidence::default(),
            squares: square_times::SquareTimes::default(),
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
        let settle = self.read_deadline();
        // While ambiguous the arbiter has the candidates instead.
        let displaced = if self.config.arbiter
            && !self.game().is_over()
            && self.sync_state() != SyncState::Ambiguous
        {
            self.phase.displaced_deadline(self.config.displaced_ms)
        } else {
            None
        };
        [
            settle,
            displaced,
            self.guard_deadline(),
            self.held_lift_deadline(),
        ]
        .into_iter()
        .flatten()
        .min()
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

    /// Whether the record has not caught up with the last dump yet: the
    /// board showed moves that were not all read from it.
    pub(super) fn unseen_since_dump(&self) -> bool {
        let game = self.game();
        self.dump.dump_seq > game.basis(game.ply())
    }

    /// Whether a scanning board's scan after a reconnection shows more
    /// than the record has caught up with.
    pub(super) fn unseen_since_reconnection(&self) -> bool {
        let game = self.game();
        self.dump.reconnected_seq > game.basis(game.ply())
    }

    /// Lets time pass to `t` with no event: a board state that has stood long
    /// enough is read. A live reader calls this at [`Engine::next_deadline`].
    pub fn advance_to(&mut self, t: Millis) {
        self.blip_press_due(t);
        self.lifts_outlived_by(t, false);
        self.judge_hand_press(None, t);
        self.confirm_brief_lift(None, t);
        // A reading may leave the state to be read again at its deadline
        // (moves recorded from the candidates followed, their last piece
        // perhaps sliding on): a deadline already past at `t` is met now,
        // before the event at `t` changes the board (bounded: a reading
        // sets it again only after recording moves).
        for _ in 0..MAX_READS_AT_ONCE {
            if !self.read_due(t) {
                break;
            }
            self.read_board();
        }
        self.settle_slide_press();
        self.now = self.now.max(t);
        self.check_displaced(t);
        self.analyse_in_line();
        self.guard_step(false);
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
        self.blip_press_due(Millis::MAX);
        self.lifts_outlived_by(self.now, true);
        self.judge_hand_press(None, Millis::MAX);
        self.flush();
        self.follow_at_end();
        self.settle_slide_press();
        self.slide_stood(None, None);
        self.complete_brief_at_end();
        if let Some(lines) = self.scan.unlisted.take()
            && !self.game().is_over()
        {
            self.ambiguous(lines, false);
        }
        if self.undecided() {
            self.list_undecided();
        } else if self.hand_awaited
            && !self.game().is_over()
            && (self.clock.pending_press[self.game().position().turn()] || self.slide_at_end())
        {
            // The player to move pressed his clock after the board last
            // changed, and nothing came after: the board stands as he left
            // it, his piece put down, not in the air (Art. 6.2.1: he
            // pressed to complete a move).
            self.evaluate_at(true);
        }
        self.confirm_at_end();
        // The input ended with a held takeback still on the board.
        if let Some(held) = self.scan.takeback_held.take()
            && held.made_at == self.settle.since()
            && self.game().ply() == held.ply
            && !self.game().is_over()
        {
            self.take_back(held.back_to, held.made_at, held.basis);
        }
        self.analyse_in_line();
        self.guard_step(true);
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
    use crate::{
        alert::AlertKind,
        event::{BoardEvent, TimedEvent},
    };

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
        assert!(e.scan.takeback_held.is_some());
        push_all(
            &mut e,
            "@20500 board x1xxxxxx/1xxx1xxx/x1x5/4x3/4x3/5x2/xxxx1xxx/xxxxx2x\n",
        );
        e.advance_to(21_000);
        assert_eq!(e.game().ply(), 7);
        assert!(e.scan.takeback_held.is_none());
        assert!(
            !e.drain_events()
                .iter()
                .any(|ev| matches!(ev, GameEvent::MovesRetracted { .. }))
        );
        // No alert either but the guard's (the board stood differently
        // from the record for 18 s): the board is where the record has it.
        let kinds: Vec<AlertKind> = e.game().alerts.iter().map(|a| a.kind).collect();
        assert_eq!(kinds, [AlertKind::RecordStopped]);
        assert_eq!(e.sync_state(), SyncState::Ok);
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
        // Then the guard's: the record has not moved since the knight was
        // put down; the arbiter was told already, the sync says it.
        let stopped_at = 1200 + config.displaced_ms + config.settle_ms;
        assert_eq!(e.next_deadline(), Some(stopped_at));
        e.advance_to(stopped_at);
        assert_eq!(e.sync_state(), SyncState::Lost);
        assert!(e.drain_events().is_empty());
        assert_eq!(e.next_deadline(), None);
    }

    #[test]
    fn a_press_kept_for_a_blip_is_judged_at_the_next_deadline_with_no_later_event() {
        // 1.e4 put down 20 ms before White's press: the press waits in
        // case e4's place was a blip (blip_press.rs). A live reader with no
        // later event wakes only at `next_deadline`, so the deadline must
        // come by the settle time of that place, and the press then
        // completes the move (Art. 6.2.1).
        let config = EngineConfig::default();
        let mut e = Engine::new(config);
        push_all(&mut e, "@1000 lift e2\n@1300 place e4\n@1320 press white\n");
        assert!(e.clock.blip_press.is_some());
        let due = e.next_deadline().expect("a deadline for the press kept");
        assert!(due <= 1300 + config.settle_ms, "{due}");
        e.advance_to(due);
        assert!(e.clock.blip_press.is_none());
        let moves = e.game().moves();
        assert_eq!(moves.len(), 1);
        assert_eq!(moves[0].san.to_string(), "e4");
        assert!(moves[0].completed_at.is_some());
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
