//! The arbiter's corrections of the record, for a board eboard could not
//! follow: the moves from a ply on (from the scoresheets), one of the
//! candidates an `out_of_sync` alert listed, or the position itself when no
//! moves can be given. Each is a journaled action, so a replay applies it at
//! the same point; the board's later states are read against the corrected
//! record.

use shakmaty::{Move, Position, fen::Fen, san::San};

use super::{Engine, EngineError, GameEvent, Phase};
use crate::{event::Millis, game::Game, game::Termination};

impl Engine {
    /// Replaces the current game's moves from half-move `from_ply` on with
    /// `sans`, played from the position after `from_ply` half-moves; the
    /// moves are recorded completed at `at`. Nothing changes on an error.
    pub fn correct_moves(
        &mut self,
        from_ply: usize,
        sans: &[String],
        at: Millis,
    ) -> Result<(), EngineError> {
        let game = self.game();
        let Some(start) = game.position_at(from_ply) else {
            return Err(EngineError::Correction(format!(
                "the game has {} half-moves: cannot replace moves from half-move {from_ply}",
                game.ply()
            )));
        };
        let mut pos = start.clone();
        let mut moves = Vec::with_capacity(sans.len());
        for (i, text) in sans.iter().enumerate() {
            let fen = Fen::from_position(&pos, shakmaty::EnPassantMode::Legal);
            let m = text
                .parse::<San>()
                .ok()
                .and_then(|san| san.to_move(&pos).ok())
                .ok_or_else(|| {
                    EngineError::Correction(format!(
                        "move {} ({text:?}) is not a legal move in {fen}",
                        i + 1
                    ))
                })?;
            pos.play_unchecked(m);
            moves.push(m);
        }
        self.replace_record(from_ply, &moves, at)
    }

    /// Records candidate `k` (from 1, as the `out_of_sync` alert numbers
    /// them) of the board's current hypotheses.
    pub fn choose_candidate(&mut self, k: usize, at: Millis) -> Result<(), EngineError> {
        let lines = self.candidates();
        let Some(line) = k.checked_sub(1).and_then(|i| lines.get(i)).cloned() else {
            return Err(EngineError::Correction(format!(
                "there is no candidate {k}: the board has {} candidate(s)",
                lines.len()
            )));
        };
        let ply = self.game().ply();
        self.replace_record(ply, &line, at)
    }

    /// Sets the current game's position when its moves cannot be given:
    /// the game goes on from `fen` (its moves so far leave the record; the
    /// journal keeps them).
    pub fn set_position(&mut self, fen: &Fen, at: Millis) -> Result<(), EngineError> {
        let pos = super::legal_position(fen)?;
        self.reopen_for_correction(at)?;
        let gi = self.game_index();
        let tags = std::mem::take(&mut self.game_mut().tags);
        let mut game = Game::new(pos, self.seq);
        game.tags = tags;
        *self.game_mut() = game;
        self.events.push(GameEvent::MovesRetracted {
            game: gi,
            ply: 0,
            at,
        });
        self.after_correction(at);
        Ok(())
    }

    fn replace_record(
        &mut self,
        from_ply: usize,
        moves: &[Move],
        at: Millis,
    ) -> Result<(), EngineError> {
        self.reopen_for_correction(at)?;
        let gi = self.game_index();
        if from_ply < self.game().ply() {
            self.game_mut().truncate(from_ply);
            self.events.push(GameEvent::MovesRetracted {
                game: gi,
                ply: from_ply,
                at,
            });
        }
        let basis = self.seq;
        for &m in moves {
            self.push_made(m, at, basis);
        }
        // Moves from the scoresheets are completed (Art. 6.2.1: the
        // opponent has moved since, or the arbiter says so).
        self.complete_all(at);
        self.after_correction(at);
        self.check_game_over(at);
        Ok(())
    }

    /// A game over by itself goes on while its record is corrected; one
    /// ended by the players or the arbiter is not corrected this way.
    fn reopen_for_correction(&mut self, at: Millis) -> Result<(), EngineError> {
        match self.game().termination() {
            None => Ok(()),
            Some(
                Termination::Checkmate
                | Termination::Stalemate
                | Termination::DeadPosition
                | Termination::FivefoldRepetition
                | Termination::SeventyfiveMoves,
            ) => {
                let gi = self.game_index();
                self.game_mut().reopen();
                self.events.push(GameEvent::GameResumed { game: gi, at });
                Ok(())
            }
            Some(t) => Err(EngineError::Correction(format!(
                "the game is over ({}): start a new game or correct the result instead",
                t.as_str()
            ))),
        }
    }

    /// The record was corrected: whatever the engine waited for is over, and
    /// the board is read afresh against the new record.
    fn after_correction(&mut self, at: Millis) {
        self.hypotheses.clear();
        self.behind = false;
        self.clock.pending_press = Default::default();
        self.clock.presses_ahead = 0;
        self.touches.clear_all();
        self.phase = Phase::Playing;
        self.settle.changed(at, self.seq);
    }
}
