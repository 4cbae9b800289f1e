//! A panic in a board's engine: caught, told, and the board rebuilt from its
//! journal without the line that failed.
//!
//! A board's state is a pure fold of its journal, so the state before any
//! line is the fold of the lines before it. The board keeps a copy of its
//! state every [`CHECKPOINT_EVERY`] lines and the journal lines since: when
//! a line's step panics, the board is rebuilt from that copy and those
//! lines, the failed line is skipped with an `engine_failed` alert, and the
//! board goes on from the next line. A daemon that restarts on the same
//! journal meets the same panic at the same line and rebuilds the same way,
//! so it shows what it showed before. Other boards are not touched: each
//! has its own state and task.

use std::collections::BTreeMap;

use super::{BoardState, Payload};
use crate::{
    daemon::journal::{Entry, JournalLine},
    event::Millis,
    failsafe::Injected,
};

/// Lines between two copies of the state: a rebuild applies at most this
/// many again. Every board holds up to this many journal lines besides its
/// copy: at 256, a 5,000-board load test's daemon held 756 MiB after 70 s,
/// at 32 it held 527 MiB; a copy of the state every 32 lines costs little.
const CHECKPOINT_EVERY: usize = 32;

/// What a board is rebuilt from.
#[derive(Debug, Clone, Default)]
pub(super) struct Recovery {
    /// Journal lines whose step panicked, with the panic's message: they
    /// are skipped.
    failed: BTreeMap<u64, String>,
    /// The state before `lines` (without its own recovery).
    checkpoint: Option<Box<BoardState>>,
    /// The journal lines applied since `checkpoint`.
    lines: Vec<JournalLine>,
    /// The time of the last line skipped: the engine's deadlines up to it
    /// are not ticked again (they would fail again), its next event reads
    /// the board.
    stalled: Option<Millis>,
    /// The test-only hook ([`crate::failsafe`]).
    pub(super) inject: Option<Injected>,
}

impl Recovery {
    /// An empty recovery, with the test-only hook if the environment sets
    /// it.
    pub(super) fn from_env() -> Recovery {
        Recovery {
            inject: Injected::from_env(),
            ..Recovery::default()
        }
    }
}

impl BoardState {
    /// Applies a journal line and returns the events it derives. A panic in
    /// the step is caught: the board is rebuilt without the line and raises
    /// `engine_failed`.
    pub fn apply(&mut self, line: &JournalLine) -> Vec<Payload> {
        self.remember(line, false);
        if let Some(message) = self.recovery.failed.get(&line.seq).cloned() {
            return self.skip(line, &message);
        }
        match crate::failsafe::catch(|| self.apply_line(line)) {
            Ok(out) => {
                if line.entry.is_board_event() {
                    self.recovery.stalled = None;
                }
                out
            }
            Err(message) => self.rebuild(line, message),
        }
    }

    /// When the engine next has something to do with no new event, unless
    /// that failed already.
    pub(super) fn engine_due(&self) -> Option<Millis> {
        let due = self.engine.next_deadline()?;
        match self.recovery.stalled {
            Some(stalled) if due <= stalled => None,
            _ => Some(due),
        }
    }

    /// Makes the step of the board's `n`th board event panic (the test-only
    /// hook, for tests in the crate).
    #[cfg(test)]
    pub(crate) fn inject_panic(&mut self, hook: Injected) {
        self.recovery.inject = Some(hook);
    }

    /// Keeps `line` for a rebuild, after a copy of the state before it when
    /// the copy is due. `applied`: the state has applied it already (a
    /// tick, journaled after it was read).
    pub(super) fn remember(&mut self, line: &JournalLine, applied: bool) {
        if self
            .recovery
            .lines
            .last()
            .is_some_and(|l| l.seq >= line.seq)
        {
            // A failed tick, remembered when it failed.
            return;
        }
        let due = self.recovery.checkpoint.is_none()
            || !applied && self.recovery.lines.len() >= CHECKPOINT_EVERY;
        if due {
            self.checkpoint();
            if applied {
                // The copy has it.
                return;
            }
        }
        self.recovery.lines.push(line.clone());
    }

    /// Keeps a copy of the state as it is now, to rebuild from.
    pub(super) fn checkpoint(&mut self) {
        let mut copy = self.clone();
        copy.recovery = Recovery {
            failed: self.recovery.failed.clone(),
            inject: self.recovery.inject,
            ..Recovery::default()
        };
        self.recovery.checkpoint = Some(Box::new(copy));
        self.recovery.lines.clear();
    }

    /// The step of `line` (the last remembered) panicked: the board is
    /// rebuilt from the copy and the lines before it, and skips it.
    fn rebuild(&mut self, line: &JournalLine, message: String) -> Vec<Payload> {
        tracing::error!(
            board = self.id,
            seq = line.seq,
            "the engine failed: {message}; the board is rebuilt from its journal without that line"
        );
        let mut failed = std::mem::take(&mut self.recovery.failed);
        failed.insert(line.seq, message);
        let lines = std::mem::take(&mut self.recovery.lines);
        let Some(checkpoint) = self.recovery.checkpoint.take() else {
            // Never so: a copy is taken before any line is applied.
            self.recovery.failed = failed;
            return self.skip(line, "(and no copy to rebuild from)");
        };
        let mut state = *checkpoint;
        state.recovery.failed = failed;
        state.checkpoint();
        for l in &lines {
            // These went through before (the fold is deterministic); their
            // events were published then.
            let out = state.apply(l);
            if l.seq == line.seq {
                *self = state;
                return out;
            }
        }
        // Never so: the failed line is the last remembered.
        *self = state;
        Vec::new()
    }

    /// A tick at `at` panicked: the board is rebuilt from its journal, and
    /// the tick line the caller journals next is skipped.
    pub(super) fn tick_failed(&mut self, at: Millis, message: String) -> Vec<Payload> {
        let line = JournalLine {
            round: None,
            seq: self.seq + 1,
            g: 0,
            at,
            wall: None,
            entry: Entry::Tick,
        };
        // Never a copy of the state the panic left.
        self.recovery.lines.push(line.clone());
        self.rebuild(&line, message)
    }

    /// Skips a line whose step failed: the board goes on as if it had not
    /// come, and the arbiter is told.
    fn skip(&mut self, line: &JournalLine, message: &str) -> Vec<Payload> {
        if line.entry.is_board_event() {
            self.board_events += 1;
        }
        self.seq = line.seq;
        self.last_at = self.last_at.max(line.at);
        self.recovery.stalled = Some(self.last_at);
        let what = match line.entry.event() {
            Some(event) => format!("the board event `{}`", crate::script::format_event(event)),
            None => "a tick or an entry of the daemon".to_owned(),
        };
        let mut out = Vec::new();
        self.raise(
            "engine_failed".to_owned(),
            None,
            format!(
                "board {}: the engine failed on journal line {} ({what}): {message}. This is a bug in eboard; the board was rebuilt from its journal without that line and reads on from the next event",
                self.id, line.seq
            ),
            Some("check the board's record against the scoresheet and correct it if needed; report the bug with the board's journal".to_owned()),
            &mut out,
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::board::tests::{feed, state as board};

    /// 1.e4 e5 2.Nf3, pressed, with a clock report (event 5) in between.
    const GAME: &str = "@0 lift e2\n@300 place e4 P\n@500 press white\n@600 clock 0:04:59 0:05:00\n@900 clock 0:04:59 0:04:58\n@1000 lift e7\n@1300 place e5 p\n@1500 press black\n@2000 lift g1\n@2300 place f3 N\n@2500 press white\n";

    #[test]
    fn a_panic_is_told_and_the_board_rebuilt_without_its_line() {
        let mut clean = board();
        feed(&mut clean, GAME);
        let mut failing = board();
        failing.inject_panic("5".parse().unwrap());
        let out = feed(&mut failing, GAME);
        let failed: Vec<serde_json::Value> = out
            .iter()
            .filter(|p| p.kind == "alert")
            .map(|p| serde_json::from_str::<serde_json::Value>(&p.data).unwrap())
            .filter(|a| a["kind"] == "engine_failed")
            .collect();
        assert_eq!(failed.len(), 1, "{out:?}");
        let message = failed[0]["message"].as_str().unwrap();
        assert!(message.contains("journal line 5"), "{message}");
        assert!(message.contains("clock 0:04:59 0:04:58"), "{message}");
        // The rest was read: the same moves as without the panic.
        let sans = |s: &BoardState| -> Vec<String> {
            s.engine()
                .game()
                .moves()
                .iter()
                .map(|m| m.san.to_string())
                .collect()
        };
        assert_eq!(sans(&failing), ["e4", "e5", "Nf3"]);
        assert_eq!(sans(&failing), sans(&clean));
        assert_eq!(failing.seq(), clean.seq());
        assert_eq!(failing.board_events(), clean.board_events());
    }

    #[test]
    fn a_rebuild_goes_back_past_a_checkpoint() {
        let mut state = board();
        state.inject_panic(format!("{}", CHECKPOINT_EVERY + 10).parse().unwrap());
        let mut t = 0;
        let mut line = |state: &mut BoardState, event: &str| {
            t += 400;
            let event = crate::script::parse_event(event).unwrap();
            let l = JournalLine {
                round: None,
                seq: state.seq() + 1,
                g: 0,
                at: t,
                wall: None,
                entry: Entry::from_event(&event),
            };
            state.apply(&l)
        };
        // A knight lifted and put back, over and over: many lines.
        for _ in 0..CHECKPOINT_EVERY {
            line(&mut state, "lift g1");
            line(&mut state, "place g1 N");
        }
        line(&mut state, "lift e2");
        line(&mut state, "place e4 P");
        line(&mut state, "press white");
        assert_eq!(state.engine().game().ply(), 1);
        let failed = state
            .alerts()
            .iter()
            .filter(|a| a.kind == "engine_failed")
            .count();
        assert_eq!(failed, 1);
        assert_eq!(state.board_events(), 2 * CHECKPOINT_EVERY + 3);
    }
}
