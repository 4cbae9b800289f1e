//! A replay's first reading: what it decides provisionally, and what it
//! leaves to other threads to sort out meanwhile (issue 38).
//!
//! "Can the winner still mate?" (Art. 5.1.2, 6.9) is a full analysis per
//! game that ends so, and no later move can confirm it, as later moves
//! confirm the positions a first reading takes as alive. In a replay's
//! first reading the engine takes each such verdict as "yes" (a loss, as in
//! nearly every real game) and lists the question; the caller computes the
//! verdicts meanwhile, on another core, and reads the script again, with
//! the verdicts found, if one of them is not "yes".
//!
//! The quick dead-position test after every move changes a first reading
//! only where material is insufficient by the Laws: every other position
//! is either open (the quick test cannot call it dead) or taken as alive
//! and confirmed later. Which of the two is sorted out by the caller,
//! meanwhile, on another core. The engine itself stays pure: it runs no
//! thread and reads no clock.

use super::{DeadCheck, Engine, MateCheck, full_dead::VerdictKey};
use crate::winnability::Verdict;

impl Engine {
    /// For a replay's first reading: flag falls and resignations whose
    /// result waits for the full analysis are scored as losses (the winner
    /// able to mate) without it, unless their verdict is known
    /// ([`Engine::know_mate_verdicts`]), and listed for the caller
    /// ([`Engine::take_assumed_mates`]).
    pub(crate) fn assume_mates_in_line(&mut self) {
        self.inline_verdicts.assumed_mates = Some(Vec::new());
    }

    /// The flag falls and resignations scored provisionally since the last
    /// call ([`Engine::assume_mates_in_line`]).
    pub(crate) fn take_assumed_mates(&mut self) -> Vec<MateCheck> {
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
    pub(crate) fn know_mate_verdicts<'a>(
        &mut self,
        known: impl IntoIterator<Item = &'a (MateCheck, Verdict)>,
    ) {
        for (check, verdict) in known {
            let key = (VerdictKey::of(&check.position), check.side);
            self.inline_verdicts.mates.insert(key, *verdict);
        }
    }

    /// For a replay's first reading ([`Engine::assume_alive_in_line`]):
    /// after each move, only insufficient material (Art. 5.2.2 by the
    /// Laws' own list) ends the game in line; every other position is
    /// listed ([`Engine::take_quick_tests`]) for the caller to sort with
    /// [`crate::quick_dead::open_without_the_solver`] and give back those
    /// it leaves to the solver ([`Engine::quick_tests_sorted`]), which are
    /// then taken as alive and confirmed like the rest.
    pub(crate) fn sort_quick_tests_later(&mut self) {
        self.inline_verdicts.quick = Some(Vec::new());
    }

    /// How many positions wait to be sorted ([`Engine::take_quick_tests`]).
    pub(crate) fn quick_tests_waiting(&self) -> usize {
        self.inline_verdicts.quick.as_ref().map_or(0, Vec::len)
    }

    /// The positions to sort since the last call, each with its place
    /// among those taken as alive.
    pub(crate) fn take_quick_tests(&mut self) -> Vec<(usize, DeadCheck)> {
        self.inline_verdicts
            .quick
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default()
    }

    /// The positions of [`Engine::take_quick_tests`] that the quick test
    /// leaves to the solver, in the order they were listed: taken as alive
    /// in their places, as sorting them in line does. The sorting ends.
    pub(crate) fn quick_tests_sorted(&mut self, waiting: Vec<(usize, DeadCheck)>) {
        self.inline_verdicts.quick = None;
        let Some(assumed) = self.inline_verdicts.assumed.as_mut() else {
            return;
        };
        if waiting.is_empty() {
            return;
        }
        let taken = std::mem::take(assumed);
        // Made at its size: grown push by push, the list (thousands of
        // positions) was copied and faulted in again at every doubling,
        // while the reading's end waits for it.
        assumed.reserve_exact(taken.len() + waiting.len());
        let mut waiting = waiting.into_iter().peekable();
        for (i, check) in taken.into_iter().enumerate() {
            while let Some((_, w)) = waiting.next_if(|(at, _)| *at <= i) {
                assumed.push(w);
            }
            assumed.push(check);
        }
        assumed.extend(waiting.map(|(_, w)| w));
    }

    /// The verdicts on the flag falls and resignations this engine scored
    /// provisionally, all confirmed "yes" by the caller: their positions
    /// are remembered alive, as a verdict computed in line is (a side can
    /// mate: the position is not dead, Art. 5.2.2).
    pub(crate) fn mates_confirmed<'a>(
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

    /// Issue 38: the quick test sorted by the caller lists the same
    /// positions as taken as alive, in the same order, as sorting them in
    /// line. Every pawn blocked, the bishops on one colour: the quick
    /// test leaves the positions to the solver.
    #[test]
    fn positions_sorted_later_are_those_sorted_in_line() {
        let script = "setup 2b2k2/8/8/1p1p1p1p/1P1P1P1P/8/8/2B1K3 b - - 0 1\nlift f8\nplace e8\nlift e1\nplace d1\nlift e8\nplace f8\n";
        let mut in_line = Engine::default();
        in_line.assume_alive_in_line();
        read(&mut in_line, script);
        let expected = in_line.take_assumed_alive();
        assert!(
            !expected.is_empty(),
            "the quick test leaves them to the solver"
        );

        let mut later = Engine::default();
        later.assume_alive_in_line();
        later.sort_quick_tests_later();
        read(&mut later, script);
        assert_eq!(later.quick_tests_waiting(), 3, "one a move");
        let waiting: Vec<_> = later
            .take_quick_tests()
            .into_iter()
            .filter(|(_, c)| !crate::quick_dead::open_without_the_solver(&c.position))
            .collect();
        later.quick_tests_sorted(waiting);
        assert_eq!(later.take_assumed_alive(), expected);
        assert_eq!(later.games()[0].ply(), in_line.games()[0].ply());
    }

    /// Issue 38: insufficient material still ends the game in line.
    #[test]
    fn insufficient_material_ends_the_game_in_line() {
        let mut e = Engine::default();
        e.assume_alive_in_line();
        e.sort_quick_tests_later();
        read(
            &mut e,
            "setup 8/8/8/4k3/8/8/4p3/3NK3 w - - 0 1\nlift e2\nlift e1\nplace e2\n",
        );
        assert_eq!(e.game().termination(), Some(Termination::DeadPosition));
        assert_eq!(e.quick_tests_waiting(), 0);
    }

    /// Issue 38: the replay reads the script again with the verdict its
    /// first reading scored provisionally and found otherwise.
    #[test]
    fn a_replay_draws_the_flag_fall_its_first_reading_scored_lost() {
        let e = crate::replay_script("t", BOXED, crate::EngineConfig::default()).unwrap();
        assert_eq!(e.game().outcome(), draw());
    }
}
