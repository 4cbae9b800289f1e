//! A replay's flag falls and resignations decided provisionally, the
//! verdicts confirmed elsewhere (issue 38).
//!
//! "Can the winner still mate?" (Art. 5.1.2, 6.9) is a full analysis per
//! game that ends so, and no later move can confirm it, as later moves
//! confirm the positions a first reading takes as alive. In a replay's
//! first reading the engine takes each such verdict as "yes" (a loss, as in
//! nearly every real game) and lists the question; the caller computes the
//! verdicts meanwhile, on another core, and reads the script again, with
//! the verdicts found, if one of them is not "yes". The engine itself stays
//! pure: it runs no thread and reads no clock.

use super::{Engine, MateCheck, full_dead::VerdictKey};
use crate::winnability::Verdict;

impl Engine {
    /// For a replay's first reading: flag falls and resignations whose
    /// result waits for the full analysis are scored as losses (the winner
    /// able to mate) without it, unless their verdict is known
    /// ([`Engine::know_mate_verdicts`]), and listed for the caller
    /// ([`Engine::take_assumed_mates`]).
    pub fn assume_mates_in_line(&mut self) {
        self.inline_verdicts.assumed_mates = Some(Vec::new());
    }

    /// The flag falls and resignations scored provisionally since the last
    /// call ([`Engine::assume_mates_in_line`]).
    pub fn take_assumed_mates(&mut self) -> Vec<MateCheck> {
        self.inline_verdicts
            .assumed_mates
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// Verdicts on flag falls and resignations known already (a replay's
    /// earlier reading found them), used in line instead of analysing
    /// those positions again; the analysis is deterministic, so each is the
    /// verdict computed again.
    pub fn know_mate_verdicts<'a>(
        &mut self,
        known: impl IntoIterator<Item = &'a (MateCheck, Verdict)>,
    ) {
        for (check, verdict) in known {
            let key = (VerdictKey::of(&check.position), check.side);
            self.inline_verdicts.mates.insert(key, *verdict);
        }
    }

    /// The verdicts on the flag falls and resignations this engine scored
    /// provisionally, all confirmed "yes" by the caller: their positions
    /// are remembered alive, as a verdict computed in line is (a side can
    /// mate: the position is not dead, Art. 5.2.2).
    pub fn mates_confirmed<'a>(
        &mut self,
        found: impl IntoIterator<Item = &'a (MateCheck, Verdict)>,
    ) {
        for (check, verdict) in found {
            if *verdict == Verdict::Yes {
                let key = VerdictKey::of(&check.position);
                self.inline_verdicts.remember(key, Some(Verdict::No));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::Color;

    use super::*;
    use crate::{
        game::{Termination, draw, win},
        parse_script,
    };

    /// White's king and rook boxed in by White's own pawns: White cannot
    /// mate (CHA's test vectors label the position "--"), which only the
    /// full analysis shows.
    const BOXED: &str = "setup 2k5/6p1/6P1/6PK/6P1/6PR/7P/8 b - - 0 1\nflag black\n";

    fn read(engine: &mut Engine, script: &str) {
        for line in parse_script("test", script).unwrap() {
            engine.push(&line.event).unwrap();
        }
        engine.finish();
    }

    /// Issue 38: in a first reading the flag fall is scored a loss without
    /// the analysis, and the question is listed for the caller.
    #[test]
    fn a_first_reading_scores_a_flag_fall_lost_and_lists_it() {
        let mut e = Engine::default();
        e.assume_mates_in_line();
        read(&mut e, BOXED);
        assert_eq!(e.game().outcome(), win(Color::White));
        let listed = e.take_assumed_mates();
        assert_eq!(listed.len(), 1);
        assert_eq!((listed[0].ply, listed[0].side), (0, Color::White));
        assert!(e.take_assumed_mates().is_empty(), "listed once");
    }

    /// Issue 38: a verdict known before the reading is used as it is: here
    /// "White cannot mate", so the flag fall draws (Art. 6.9), and nothing
    /// is listed.
    #[test]
    fn a_known_mate_verdict_decides_the_flag_fall() {
        let mut first = Engine::default();
        first.assume_mates_in_line();
        read(&mut first, BOXED);
        let known = [(first.take_assumed_mates().remove(0), Verdict::No)];
        let mut e = Engine::default();
        e.assume_mates_in_line();
        e.know_mate_verdicts(&known);
        read(&mut e, BOXED);
        assert_eq!(e.game().outcome(), draw());
        assert_eq!(e.game().termination(), Some(Termination::TimeForfeit));
        assert!(e.take_assumed_mates().is_empty());
    }

    /// Without a first reading's assumption the analysis runs in line and
    /// finds the draw itself.
    #[test]
    fn in_line_the_analysis_decides() {
        let mut e = Engine::default();
        read(&mut e, BOXED);
        assert_eq!(e.game().outcome(), draw());
    }

    /// Issue 38: the replay reads the script again with the verdict its
    /// first reading scored provisionally and found otherwise.
    #[test]
    fn a_replay_draws_the_flag_fall_its_first_reading_scored_lost() {
        let e = crate::replay_script("t", BOXED, crate::EngineConfig::default()).unwrap();
        assert_eq!(e.game().outcome(), draw());
    }
}
