//! Dead positions that only the full analysis proves (Art. 5.2.2).
//!
//! The quick test runs on every move (`endings.rs`). A position it leaves
//! open may still be dead, and only CHA's full analysis can tell; that can
//! take seconds, so the engine does not run it. It names the positions that
//! need it ([`Engine::next_dead_check`]) and takes the verdicts back as
//! input ([`Engine::apply_dead_verdict`]), which keeps it pure: a live
//! reader runs the analyses elsewhere and journals the verdicts, a replay
//! reads them back or computes them in line
//! ([`Engine::run_dead_checks_inline`]).
//!
//! Not every position needs the analysis. A position reached by a quiet
//! piece move that can be undone (the opponent shuffles a piece, the move
//! is taken back, the shuffle too: see `quick_dead::leads_back`) has the
//! same future as the one before it, so it inherits its verdict: only
//! pawn moves, captures, castling and the positions after them are
//! analysed.

use std::collections::HashMap;

use shakmaty::{
    Bitboard, Board, CastlingMode, Chess, Color, EnPassantMode, Position, Square, fen::Epd,
};

use super::Engine;
use crate::{
    alert::AlertKind,
    event::{Millis, side_name},
    game::{Termination, draw, win},
    quick_dead::{leads_back, settled_without_the_solver},
    winnability::{Budget, Verdict, is_dead, mate_verdict},
};

/// A flag fall or resignation whose result waits for the full analysis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MateCheck {
    /// The game (index in [`Engine::games`]).
    pub game: usize,
    /// The moves recorded when it happened.
    pub ply: usize,
    /// The side asked about: the opponent of the player who flagged or
    /// resigned.
    pub side: Color,
    /// The position.
    pub position: Chess,
}

/// A position whose deadness waits for the full analysis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadCheck {
    /// The game (index in [`Engine::games`]).
    pub game: usize,
    /// The position after this many moves.
    pub ply: usize,
    /// The position.
    pub position: Chess,
}

impl DeadCheck {
    /// The position as its verdict names it (see [`verdict_position`]).
    pub fn key(&self) -> String {
        verdict_position(&self.position)
    }
}

impl MateCheck {
    /// The position as its verdict names it (see [`verdict_position`]).
    pub fn key(&self) -> String {
        verdict_position(&self.position)
    }
}

/// The position a full-analysis verdict was computed for, as EPD (FEN
/// without the move counters, which the analyses ignore; en passant only
/// when a capture is legal). A verdict comes back after the record may
/// have changed under it (an undo, an arbiter's correction of the moves or
/// the position): it applies only where the record still has this
/// position at its ply.
pub fn verdict_position(pos: &Chess) -> String {
    Epd::from_position(pos, EnPassantMode::Legal).to_string()
}

/// What [`verdict_position`] names, without writing it: the pieces, the
/// side to move, the castling rights and the en passant square when a
/// capture is legal. Two positions have the same key exactly when they
/// have the same EPD, and the key costs no string: a replay compares and
/// looks up tens of thousands of them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct VerdictKey {
    board: Board,
    turn: Color,
    castling: Bitboard,
    ep: Option<Square>,
}

/// Hashes what tells nearly all positions apart (where the pieces stand,
/// which are White's and which are pawns, the side to move) rather than
/// every field: equal keys still hash alike, at a third of the bytes.
impl std::hash::Hash for VerdictKey {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u64(self.board.occupied().0);
        state.write_u64(self.board.white().0);
        state.write_u64(self.board.pawns().0);
        state.write_u8(self.turn as u8);
    }
}

impl VerdictKey {
    pub(super) fn of(pos: &Chess) -> VerdictKey {
        VerdictKey {
            board: pos.board().clone(),
            turn: pos.turn(),
            castling: pos.castles().castling_rights(),
            ep: pos.ep_square(EnPassantMode::Legal),
        }
    }

    /// The key of a position written by [`verdict_position`]; `None` for
    /// text that is no legal position.
    fn parse(epd: &str) -> Option<VerdictKey> {
        let epd: Epd = epd.parse().ok()?;
        let pos: Chess = epd.into_position(CastlingMode::Chess960).ok()?;
        Some(VerdictKey::of(&pos))
    }
}

/// The full dead-position verdicts an engine computed in line, by
/// position ([`verdict_position`]): a replay meets the same positions in
/// game after game (the openings), and analyses each once. The analysis is
/// deterministic (its budget is counted in the solver's nodes, not in
/// time), so a verdict remembered is the one computed again.
#[derive(Debug, Clone, Default)]
pub(super) struct InlineVerdicts {
    known: HashMap<VerdictKey, Option<Verdict>>,
    /// A replay's first reading ([`Engine::assume_alive_in_line`]): the
    /// positions taken as alive without the analysis, for the caller to
    /// confirm.
    pub(super) assumed: Option<Vec<DeadCheck>>,
    /// Flag-fall and resignation verdicts given by the caller, by position
    /// and side ([`Engine::know_mate_verdicts`]).
    pub(super) mates: HashMap<(VerdictKey, Color), Verdict>,
    /// A replay's first reading ([`Engine::assume_mates_in_line`]): the
    /// flag falls and resignations taken as lost (the winner able to
    /// mate), for the caller to confirm.
    pub(super) assumed_mates: Option<Vec<MateCheck>>,
    /// A replay's first reading ([`Engine::sort_quick_tests_later`]): the
    /// positions the quick test is still to sort, each with the length
    /// `assumed` had when it was met.
    pub(super) quick: Option<Vec<(usize, DeadCheck)>>,
}

impl InlineVerdicts {
    /// At most this many positions are remembered; then the memory starts
    /// afresh.
    const MAX: usize = 1 << 16;

    /// The verdict on `check`'s position; `None` when the solver cannot
    /// take it.
    fn verdict(&mut self, check: &DeadCheck) -> Option<Verdict> {
        let key = VerdictKey::of(&check.position);
        if let Some(&verdict) = self.known.get(&key) {
            return verdict;
        }
        // Taken as alive in a first reading, to be confirmed by how the
        // game went on: nearly all of a replay's positions are alive, and
        // one analysis at the end of a game confirms them all, where
        // analysing each in line (the pawn endings of real games: a pawn
        // move or a capture at nearly every ply) costs more than the rest
        // of the replay. A dead one costs a second reading.
        if let Some(assumed) = &mut self.assumed {
            assumed.push(check.clone());
            return Some(Verdict::No);
        }
        let verdict = is_dead(&check.position, Budget::DETERMINISTIC).ok();
        self.remember(key, verdict);
        verdict
    }

    /// Whether `check.side` can still mate: the verdict given, or taken
    /// as "yes" in a first reading that assumes it (the second member is
    /// then false), or computed here.
    fn mate(&mut self, check: &MateCheck) -> (Verdict, bool) {
        let key = (VerdictKey::of(&check.position), check.side);
        if let Some(&verdict) = self.mates.get(&key) {
            return (verdict, true);
        }
        if let Some(assumed) = &mut self.assumed_mates {
            assumed.push(check.clone());
            return (Verdict::Yes, false);
        }
        let verdict = mate_verdict(&check.position, check.side, Budget::DETERMINISTIC)
            .unwrap_or(Verdict::Unknown);
        (verdict, true)
    }

    pub(super) fn remember(&mut self, key: VerdictKey, verdict: Option<Verdict>) {
        if self.known.len() >= Self::MAX {
            self.known.clear();
        }
        self.known.insert(key, verdict);
    }
}

/// What the games of a replay's first reading say of the positions taken
/// as alive in it ([`Engine::assume_alive_in_line`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confirmation {
    /// Every one is alive: the first reading is the replay.
    Alive,
    /// Some may be dead: the verdicts known (by [`verdict_position`]), for
    /// reading the script again with them ([`Engine::know_dead_verdicts`]).
    Unsure(Vec<(String, Option<Verdict>)>),
}

/// Confirms the positions a replay took as alive, by how each game went on.
///
/// A position from which the record goes on by legal moves to another is
/// alive if that one is: deadness is kept along legal moves (Art. 5.2.2: no
/// series of legal moves from it mates, so none from a position it leads
/// to does). So on each stretch of a game's final record without an
/// illegal move, only the last position asked about is analysed, or none
/// when the stretch ends in checkmate; a position taken back or corrected
/// since is analysed itself. The analyses run in parallel.
pub fn confirm_alive(games: &[crate::game::Game], assumed: &[DeadCheck]) -> Confirmation {
    confirm_alive_given(games, assumed, &|_| false)
}

/// [`confirm_alive`], with `ends_alive` telling of a record whose last
/// position is known alive already (a flag fall or resignation after which
/// the winner was found able to mate): its stretch is confirmed as one
/// ending in checkmate is.
fn confirm_alive_given(
    games: &[crate::game::Game],
    assumed: &[DeadCheck],
    ends_alive: &dyn Fn(&crate::game::Game) -> bool,
) -> Confirmation {
    // A stretch: a game and the number of illegal moves its record has
    // before the position; positions of one stretch lead to each other by
    // legal moves.
    // Whether each game's record ends in a position known alive, asked
    // once per game rather than once per position.
    let ends_in_life: Vec<bool> = games
        .iter()
        .map(|record| record.termination() == Some(Termination::Checkmate) || ends_alive(record))
        .collect();
    // Whether each record has an illegal move at all: nearly none has, and
    // then no position's moves are counted (a scan of the record per
    // position, while the reading's end waits for it).
    let any_illegal: Vec<bool> = games
        .iter()
        .map(|record| record.moves().iter().any(|m| m.illegal))
        .collect();
    let stretch = |check: &DeadCheck| {
        let record = &games[check.game];
        let on_record = record
            .position_at(check.ply)
            .is_some_and(|now| VerdictKey::of(now) == VerdictKey::of(&check.position));
        on_record.then(|| {
            let illegal = |ply: usize| {
                if !any_illegal[check.game] {
                    return 0;
                }
                record.moves()[..ply].iter().filter(|m| m.illegal).count()
            };
            let id = illegal(check.ply);
            let mates = ends_in_life[check.game] && illegal(record.ply()) == id;
            (check.game, id, mates)
        })
    };
    let stretches: Vec<_> = assumed.iter().map(stretch).collect();
    // The last position asked about on each stretch (by index in `assumed`).
    let mut last: HashMap<(usize, usize), usize> = HashMap::new();
    for (i, s) in stretches.iter().enumerate() {
        if let Some((game, id, false)) = *s {
            let entry = last.entry((game, id)).or_insert(i);
            if assumed[i].ply > assumed[*entry].ply {
                *entry = i;
            }
        }
    }
    // Analysed: the last of each stretch not ending in mate, and each
    // position no longer on its record.
    let mut analysed: Vec<usize> = last.values().copied().collect();
    analysed.extend((0..assumed.len()).filter(|&i| stretches[i].is_none()));
    analysed.sort_unstable();
    let checks: Vec<&DeadCheck> = analysed.iter().map(|&i| &assumed[i]).collect();
    let verdicts = analyse_in_parallel(&checks);
    if verdicts.iter().all(|v| *v == Some(Verdict::No)) {
        return Confirmation::Alive;
    }
    let by_index: HashMap<usize, Option<Verdict>> = analysed.into_iter().zip(verdicts).collect();
    let known = assumed
        .iter()
        .enumerate()
        .filter_map(|(i, check)| {
            // Analysed itself: that verdict; alive when the last of its
            // stretch is, or its stretch ends in mate; otherwise analysed
            // again as the second reading meets it.
            let alive = match stretches[i] {
                Some((_, _, true)) => true,
                Some((game, id, false)) => {
                    by_index.get(&last[&(game, id)]) == Some(&Some(Verdict::No))
                }
                None => false,
            };
            match by_index.get(&i) {
                Some(&verdict) => Some((check.key(), verdict)),
                None => alive.then(|| (check.key(), Some(Verdict::No))),
            }
        })
        .collect();
    Confirmation::Unsure(known)
}

/// CHA's full analysis of each position, on as many threads as there are
/// cores; `None` where the solver cannot take it.
fn analyse_in_parallel(checks: &[&DeadCheck]) -> Vec<Option<Verdict>> {
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let chunk = checks.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let running: Vec<_> = checks
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|check| is_dead(&check.position, Budget::DETERMINISTIC).ok())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        running
            .into_iter()
            .flat_map(|thread| {
                // A panic in the solver is caught inside `is_dead`; a thread
                // lost anyway leaves its positions undecided.
                thread.join().unwrap_or_default()
            })
            .collect()
    })
}

impl Engine {
    /// The next position of the current game that needs the full
    /// dead-position analysis, if any; asked once: until its verdict comes
    /// back ([`Engine::apply_dead_verdict`]) there is no next one, since
    /// the positions after it may inherit its verdict.
    pub fn next_dead_check(&mut self) -> Option<DeadCheck> {
        let game = self.game_index();
        let record = &mut self.games[game];
        if record.is_over() || record.dead_watch.requested.is_some() {
            return None;
        }
        loop {
            let ply = record.dead_watch.settled.map_or(0, |settled| settled + 1);
            if ply > record.ply() {
                return None;
            }
            let Some(made) = ply.checked_sub(1).map(|i| &record.moves()[i]) else {
                // Only a set-up start lacks a verdict: not a position a move
                // produced, so not analysed.
                record.dead_watch.settled = Some(0);
                continue;
            };
            if made.illegal {
                // Play went on after an illegal move: the position may not
                // be one the solver can take, and the arbiter is already
                // called; the positions after the next move are analysed.
                record.dead_watch.settled = Some(ply);
                record.dead_watch.carried = None;
                continue;
            }
            let inherits = record.dead_watch.carried.is_some()
                && leads_back(
                    record.position_at(ply - 1)?,
                    record.moves()[ply - 1].mv,
                    record.position_at(ply)?,
                );
            if inherits {
                record.dead_watch.settled = Some(ply);
                continue;
            }
            record.dead_watch.requested = Some(ply);
            return Some(DeadCheck {
                game,
                ply,
                position: record.position_at(ply)?.clone(),
            });
        }
    }

    /// The full analysis's verdict on the position after `ply` moves of
    /// `game`: [`Verdict::Yes`] dead, [`Verdict::No`] not dead,
    /// [`Verdict::Unknown`] undecided within its budget.
    ///
    /// A dead position ends the game at that ply as a draw (Art. 5.2.2);
    /// moves made after it are void: they leave the record and are named in
    /// a `moves_void` alert. An undecided one is said in an informational
    /// alert and the game goes on. Verdicts on a game that has ended or
    /// moved back before the position are stale and change nothing, and so
    /// are those computed for another `position` ([`verdict_position`])
    /// than the record now has at `ply`; `None` (journals written before
    /// positions were recorded) goes by the ply alone.
    pub fn apply_dead_verdict(
        &mut self,
        game: usize,
        ply: usize,
        position: Option<&str>,
        verdict: Verdict,
        at: Millis,
    ) {
        if !self.verdict_is_current(game, ply, position) {
            return;
        }
        let watch = &mut self.game_mut().dead_watch;
        if watch.requested.is_some_and(|requested| requested == ply) {
            watch.requested = None;
        }
        if watch.settled.is_some_and(|settled| settled >= ply) {
            return;
        }
        match verdict {
            Verdict::Yes => self.end_by_dead_position(ply, at),
            Verdict::No | Verdict::Unknown => {
                let watch = &mut self.game_mut().dead_watch;
                watch.settled = Some(ply);
                watch.carried = Some(verdict);
                if verdict == Verdict::Unknown {
                    let message = format!(
                        "whether the position after {ply} half-moves is dead could not be decided within the analysis budget; the game goes on (Art. 5.2.2), the arbiter may look at the position"
                    );
                    self.alert(AlertKind::DeadPositionUndecided, None, message, None);
                }
            }
        }
    }

    /// From now on, the full analyses are not run by the engine: the caller
    /// takes them ([`Engine::next_dead_check`], [`Engine::next_mate_check`]),
    /// runs them where it likes and feeds the verdicts back. A daemon does,
    /// to keep them off a board's task and journal them.
    pub fn defer_analyses(&mut self) {
        self.deferred = true;
    }

    /// For a replay's first reading: the full analyses run in line are not
    /// run; each position that waits for one is taken as alive and listed
    /// ([`Engine::take_assumed_alive`]), for [`confirm_alive`] to confirm
    /// by how the games went on. Verdicts already known
    /// ([`Engine::know_dead_verdicts`]) are used as they are.
    pub fn assume_alive_in_line(&mut self) {
        self.inline_verdicts.assumed = Some(Vec::new());
    }

    /// The positions taken as alive since [`Engine::assume_alive_in_line`];
    /// analyses run in line again from now on.
    pub fn take_assumed_alive(&mut self) -> Vec<DeadCheck> {
        self.inline_verdicts.assumed.take().unwrap_or_default()
    }

    /// [`super::automatic_ending`] of the current game. In a replay's first
    /// reading, a position the quick test cannot settle without the solver
    /// (the blocked pawn endings of real games) is taken as alive and
    /// listed with the others, for [`confirm_alive`]: the quick test only
    /// calls dead what is dead (it proves it), so a position its game went
    /// on from to an alive one, or to mate, is one it leaves open, and the
    /// first reading is the reading in line. A position that may be dead
    /// means a second reading, where the quick test runs in line.
    pub(super) fn automatic_ending_now(&mut self) -> Option<(shakmaty::Outcome, Termination)> {
        let game = self.game_index();
        let record = &self.games[game];
        let rules = self.config.rules();
        let Some(assumed) = &mut self.inline_verdicts.assumed else {
            return super::automatic_ending(record, rules);
        };
        // Sorted by the caller ([`Engine::sort_quick_tests_later`]): only
        // material the Laws call insufficient is dead without the solver;
        // whether another position is open, or waits for the
        // confirmation, changes nothing in this reading.
        if let Some(quick) = &mut self.inline_verdicts.quick {
            let at = assumed.len();
            return super::endings::automatic_ending_by(record, rules, |pos| {
                let dead = pos.is_insufficient_material();
                if !dead {
                    quick.push((
                        at,
                        DeadCheck {
                            game,
                            ply: record.ply(),
                            position: pos.clone(),
                        },
                    ));
                }
                dead
            });
        }
        super::endings::automatic_ending_by(record, rules, |pos| {
            settled_without_the_solver(pos).unwrap_or_else(|| {
                assumed.push(DeadCheck {
                    game,
                    ply: record.ply(),
                    position: pos.clone(),
                });
                false
            })
        })
    }

    /// Ends a replay's first reading ([`Engine::take_assumed_alive`]) and
    /// confirms its positions ([`confirm_alive`]), knowing also the
    /// positions this engine found alive in line: a game that ended by a
    /// flag fall or resignation after which the winner was found able to
    /// mate ends in an alive position, which confirms its stretch without
    /// another analysis.
    pub fn confirm_first_reading(&mut self) -> Confirmation {
        let assumed = self.take_assumed_alive();
        let known = &self.inline_verdicts.known;
        let ends_alive = |record: &crate::game::Game| {
            known.get(&VerdictKey::of(record.position())) == Some(&Some(Verdict::No))
        };
        confirm_alive_given(&self.games, &assumed, &ends_alive)
    }

    /// Full-analysis verdicts already known, by [`verdict_position`]
    /// (`None`: the solver cannot take the position): used in line instead
    /// of analysing those positions again.
    pub fn know_dead_verdicts(&mut self, known: Vec<(String, Option<Verdict>)>) {
        for (key, verdict) in known {
            if let Some(key) = VerdictKey::parse(&key) {
                self.inline_verdicts.remember(key, verdict);
            }
        }
    }

    /// Unless deferred, runs the analyses due after an event.
    pub(super) fn analyse_in_line(&mut self) {
        if !self.deferred {
            self.run_dead_checks_inline();
        }
    }

    /// Runs every full analysis the engine waits for, here and now (a
    /// replay without journaled verdicts): flags and resignations first,
    /// then dead positions.
    pub fn run_dead_checks_inline(&mut self) {
        if let Some(check) = self.next_mate_check() {
            let (verdict, known) = self.inline_verdicts.mate(&check);
            // Taken provisionally, it is remembered once confirmed
            // ([`Engine::mates_confirmed`]).
            if verdict == Verdict::Yes && known {
                // A side can mate: the position is not dead (Art. 5.2.2).
                self.inline_verdicts
                    .remember(VerdictKey::of(&check.position), Some(Verdict::No));
            }
            let at = self.now();
            self.apply_mate_verdict(check.game, check.ply, None, verdict, at);
        }
        // In line, the record cannot change between question and answer.
        while let Some(check) = self.next_dead_check() {
            let at = self.now();
            match self.inline_verdicts.verdict(&check) {
                Some(verdict) => self.apply_dead_verdict(check.game, check.ply, None, verdict, at),
                // A position the solver cannot take: nothing to say about
                // it, and the quick test still ran on it.
                None => self.skip_dead_check(check.game, check.ply, None),
            }
        }
    }

    /// The flag fall or resignation of the current game whose result waits
    /// for the full analysis, asked once: can `side` still checkmate from
    /// `position`?
    pub fn next_mate_check(&mut self) -> Option<MateCheck> {
        let game = self.game_index();
        let record = &mut self.games[game];
        if record.is_over() {
            return None;
        }
        let pending = record.pending_mate.as_mut()?;
        if pending.requested {
            return None;
        }
        pending.requested = true;
        let (ply, side) = (pending.ply, !pending.loser);
        Some(MateCheck {
            game,
            ply,
            side,
            position: record.position_at(ply)?.clone(),
        })
    }

    /// The full analysis's answer to [`Engine::next_mate_check`]: whether
    /// the opponent of the player who flagged or resigned after `ply` moves
    /// can still checkmate. The game ends there: drawn if not (Art. 6.9,
    /// 5.1.2), lost otherwise; undecided, it is scored lost and the arbiter
    /// is told. Moves made after the flag or resignation are void. A
    /// verdict computed for another `position` than the record now has at
    /// `ply` is stale, as in [`Engine::apply_dead_verdict`].
    pub fn apply_mate_verdict(
        &mut self,
        game: usize,
        ply: usize,
        position: Option<&str>,
        verdict: Verdict,
        at: Millis,
    ) {
        if !self.verdict_is_current(game, ply, position) {
            self.ask_mate_again(game, ply);
            return;
        }
        let Some(pending) = self.game().pending_mate.filter(|p| p.ply == ply) else {
            return;
        };
        self.game_mut().pending_mate = None;
        let winner = !pending.loser;
        let outcome = match verdict {
            Verdict::No => draw(),
            Verdict::Yes => win(winner),
            Verdict::Unknown => {
                let what = match pending.termination {
                    Termination::Resignation => "resignation (Art. 5.1.2)",
                    _ => "flag fall (Art. 6.9)",
                };
                let message = format!(
                    "{what}: whether {} can still checkmate could not be decided; the game is scored as lost, the arbiter should check the position",
                    side_name(winner)
                );
                self.alert(AlertKind::ClaimRejected, Some(pending.loser), message, None);
                win(winner)
            }
        };
        self.void_after(ply, "the game had ended there", at);
        self.end_game(outcome, pending.termination, at);
    }

    /// Moves made after the game ended at `ply` leave the record, named in
    /// a `moves_void` alert.
    fn void_after(&mut self, ply: usize, why: &str, at: Millis) {
        let void: Vec<String> = self.game().moves()[ply..]
            .iter()
            .map(|m| m.san.to_string())
            .collect();
        if void.is_empty() {
            return;
        }
        let game = self.game_index();
        self.game_mut().truncate(ply);
        self.events
            .push(super::GameEvent::MovesRetracted { game, ply, at });
        let message = format!(
            "{why}; the moves made after it are void: {}",
            void.join(" ")
        );
        self.alert(AlertKind::MovesVoid, None, message, None);
    }

    /// Leaves the position after `ply` moves unanalysed: the next move's
    /// position is analysed instead. Stale as a verdict can be.
    pub fn skip_dead_check(&mut self, game: usize, ply: usize, position: Option<&str>) {
        if !self.verdict_is_current(game, ply, position) {
            return;
        }
        let watch = &mut self.game_mut().dead_watch;
        if watch.requested == Some(ply) {
            watch.requested = None;
            watch.settled = Some(ply);
            watch.carried = None;
        }
    }

    /// A mate verdict for the flag fall or resignation after `ply` moves
    /// of `game` came back stale: the record was corrected under it. The
    /// flag fall or resignation still stands, so the position the record
    /// now has there (or at its end, if shorter) is asked about.
    fn ask_mate_again(&mut self, game: usize, ply: usize) {
        if game != self.game_index() {
            return;
        }
        let recorded = self.game().ply();
        if let Some(pending) = self.game_mut().pending_mate.as_mut()
            && pending.ply == ply
        {
            pending.ply = ply.min(recorded);
            pending.requested = false;
        }
    }

    /// Whether a verdict on the position after `ply` moves of `game`,
    /// computed for `position`, still speaks of the current record: the
    /// game is the current one and goes on, and its record has that
    /// position at that ply.
    fn verdict_is_current(&self, game: usize, ply: usize, position: Option<&str>) -> bool {
        let record = self.game();
        game == self.game_index()
            && !record.is_over()
            && record
                .position_at(ply)
                .is_some_and(|now| position.is_none_or(|then| verdict_position(now) == then))
    }

    fn end_by_dead_position(&mut self, ply: usize, at: Millis) {
        let why = format!(
            "the position after {ply} half-moves was dead: neither player could checkmate by any series of legal moves, as the full analysis proved; the game is drawn there (Art. 5.2.2)"
        );
        self.void_after(ply, &why, at);
        self.complete_all(at);
        self.end_game(draw(), Termination::DeadPosition, at);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{EngineConfig, alert::AlertKind, game::Termination, parse_script};

    /// An engine that leaves the analyses to the test.
    fn engine(script: &str) -> Engine {
        let mut engine = Engine::default();
        engine.defer_analyses();
        for line in parse_script("test", script).expect("script parses") {
            engine.push(&line.event).expect("event applies");
        }
        engine.finish();
        engine
    }

    /// A replay's first reading of `script`.
    fn first_reading(script: &str) -> Engine {
        let mut e = Engine::default();
        e.assume_alive_in_line();
        for line in parse_script("test", script).expect("script parses") {
            e.push(&line.event).expect("event applies");
        }
        e.finish();
        e
    }

    /// Labelled in the CHA test vectors: "W-" before g4-g5, "--" after.
    const BEFORE_G5: &str = "setup Bb1k1b2/bKp1p1p1/1pP1P1P1/pP6/6P1/P7/8/8 w - - 0 1\n";

    #[test]
    fn a_verdict_arriving_late_voids_the_moves_after_the_dead_position() {
        let mut e = engine(&format!(
            "{BEFORE_G5}lift g4\nplace g5\nlift d8\nplace e8\n"
        ));
        assert_eq!(e.game().ply(), 2, "g5 and Ke8 recorded before any verdict");
        // The set-up position is no move's: g5 is the first analysed.
        let check = e.next_dead_check().expect("g5 is a pawn move: analysed");
        assert_eq!(check.ply, 1);
        assert_eq!(e.next_dead_check(), None, "one analysis asked at a time");
        e.apply_dead_verdict(0, 1, Some(&check.key()), Verdict::Yes, 20);
        let game = e.game();
        let moves: Vec<String> = game.moves().iter().map(|m| m.san.to_string()).collect();
        assert_eq!(moves, ["g5"]);
        assert_eq!(game.termination(), Some(Termination::DeadPosition));
        assert_eq!(game.outcome(), draw());
        let void = game
            .alerts
            .iter()
            .find(|a| a.kind == AlertKind::MovesVoid)
            .expect("the void move is named");
        assert!(void.message.ends_with("void: Ke8"), "{}", void.message);
        assert!(void.message.contains("Art. 5.2.2"), "{}", void.message);
        assert_eq!(e.next_dead_check(), None);
    }

    #[test]
    fn the_full_analysis_itself_finds_the_dead_position() {
        let mut e = engine(&format!("{BEFORE_G5}lift g4\nplace g5\n"));
        e.run_dead_checks_inline();
        assert_eq!(e.game().ply(), 1);
        assert_eq!(e.game().termination(), Some(Termination::DeadPosition));
    }

    /// Issue 38: a position analysed in line once is not analysed again;
    /// its verdict is remembered, by position. Planted here: "alive" for
    /// the dead position after g5, which the analysis would find dead.
    #[test]
    fn a_position_analysed_in_line_is_analysed_once() {
        let mut e = engine(&format!("{BEFORE_G5}lift g4\nplace g5\n"));
        let check = e.next_dead_check().expect("g5 analysed");
        assert_eq!(e.inline_verdicts.verdict(&check), Some(Verdict::Yes));
        e.know_dead_verdicts(vec![(check.key(), Some(Verdict::No))]);
        assert_eq!(e.inline_verdicts.verdict(&check), Some(Verdict::No));
    }

    /// Issue 38: the verdicts remembered in line are keyed without writing
    /// the EPD, with the same identity: an en passant square no pawn can
    /// use is no part of it (as in the EPD), castling rights are, and a
    /// key read back from its EPD is the same key.
    #[test]
    fn a_verdict_key_is_the_epd_without_the_string() {
        use crate::test_support::position;
        let after_e4 = position("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1");
        let no_ep = position("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 5 9");
        let no_castling = position("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b Qkq - 0 1");
        let white_to_move = position("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 1");
        assert_eq!(VerdictKey::of(&after_e4), VerdictKey::of(&no_ep));
        assert_ne!(VerdictKey::of(&after_e4), VerdictKey::of(&no_castling));
        assert_ne!(VerdictKey::of(&after_e4), VerdictKey::of(&white_to_move));
        let ep = position("rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3");
        let ep_gone = position("rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 3");
        assert_ne!(VerdictKey::of(&ep), VerdictKey::of(&ep_gone));
        for pos in [&after_e4, &no_castling, &white_to_move, &ep, &ep_gone] {
            assert_eq!(
                VerdictKey::parse(&verdict_position(pos)),
                Some(VerdictKey::of(pos))
            );
        }
    }

    /// Issue 38: a replay's first reading takes every position as alive;
    /// a game that went on to checkmate confirms them all, with no
    /// analysis.
    #[test]
    fn a_game_that_ends_in_mate_confirms_its_positions_alive() {
        let mut e = Engine::default();
        e.assume_alive_in_line();
        let script = "lift f2\nplace f3\nlift e7\nplace e5\nlift g2\nplace g4\nlift d8\nplace h4\n";
        for line in parse_script("test", script).unwrap() {
            e.push(&line.event).unwrap();
        }
        e.finish();
        assert_eq!(e.game().termination(), Some(Termination::Checkmate));
        let assumed = e.take_assumed_alive();
        assert!(assumed.len() >= 3, "{assumed:?}");
        assert_eq!(confirm_alive(e.games(), &assumed), Confirmation::Alive);
    }

    /// Issue 38: even a blocked structure, where the dead positions of real
    /// games are, is taken as alive in a first reading; the confirmation
    /// analyses it (the last position of its game) and finds it dead, so
    /// the replay must read the script again.
    #[test]
    fn a_first_reading_takes_blocked_structures_as_alive_for_the_confirmation() {
        let mut e = first_reading(&format!(
            "{BEFORE_G5}lift g4\nplace g5\nlift d8\nplace e8\n"
        ));
        assert_eq!(e.games()[0].ply(), 2, "nothing analysed in line");
        let assumed = e.take_assumed_alive();
        // After g5: the quick test's solver fallback, then the full
        // analysis; after Ke8 the quick test's again (a king move that can
        // be undone inherits g5's full verdict).
        assert_eq!(assumed.iter().map(|c| c.ply).collect::<Vec<_>>(), [1, 1, 2]);
        assert_eq!(
            confirm_alive(e.games(), &assumed),
            Confirmation::Unsure(vec![(assumed[2].key(), Some(Verdict::Yes))])
        );
    }

    /// Issue 38: a position that the quick test proves dead, but only
    /// with the solver, is taken as alive in a replay's first reading;
    /// the confirmation finds its game dead, and the second reading ends
    /// the game there, as reading in line does. Dead: every pawn blocked,
    /// the bishops on one colour (labelled "--" in CHA's test vectors).
    #[test]
    fn a_replay_ends_a_game_the_quick_test_proves_dead_with_the_solver() {
        let script = "setup 2b2k2/8/8/1p1p1p1p/1P1P1P1P/8/8/2B1K3 b - - 0 1\nlift f8\nplace e8\nlift e1\nplace d1\n";
        let mut first = first_reading(script);
        assert_eq!(first.games()[0].ply(), 2, "taken as alive");
        assert!(matches!(
            first.confirm_first_reading(),
            Confirmation::Unsure(_)
        ));
        let e = crate::replay::replay_script("t", script, EngineConfig::default()).unwrap();
        assert_eq!(e.games()[0].ply(), 1);
        assert_eq!(e.games()[0].termination(), Some(Termination::DeadPosition));
    }

    /// Issue 38: a game whose last position is known alive (the winner of
    /// a flag fall or resignation found able to mate there) confirms the
    /// positions before it without analysing them. Planted here: "alive"
    /// for the position after Ke8, so the dead position after g5, which
    /// the analysis would find dead, is confirmed with no analysis.
    #[test]
    fn a_game_ending_in_a_position_known_alive_confirms_its_positions() {
        let mut e = first_reading(&format!(
            "{BEFORE_G5}lift g4\nplace g5\nlift d8\nplace e8\n"
        ));
        let last = verdict_position(e.game().position());
        e.know_dead_verdicts(vec![(last, Some(Verdict::No))]);
        assert_eq!(e.confirm_first_reading(), Confirmation::Alive);
    }

    /// Issue 38: a flag fall decided in line, the winner able to mate,
    /// leaves its position known alive (not dead, Art. 5.2.2).
    #[test]
    fn a_mate_found_after_a_flag_fall_is_remembered_alive() {
        let mut e = Engine::default();
        for line in parse_script("test", "lift e2\nplace e4\nflag white\n").unwrap() {
            e.push(&line.event).unwrap();
        }
        e.finish();
        assert_eq!(e.game().outcome(), win(Color::Black));
        let key = VerdictKey::of(e.game().position());
        assert_eq!(e.inline_verdicts.known.get(&key), Some(&Some(Verdict::No)));
    }

    /// A position no longer on its game's record (taken back, corrected)
    /// is analysed itself: here a dead one, so the script is read again
    /// with its verdict.
    #[test]
    fn a_position_taken_back_is_analysed_itself() {
        let e = engine("lift e2\nplace e4\n");
        let dead = engine(&format!("{BEFORE_G5}lift g4\nplace g5\n"));
        let check = DeadCheck {
            game: 0,
            ply: 1,
            position: dead.game().position_at(1).unwrap().clone(),
        };
        assert_eq!(
            confirm_alive(e.games(), std::slice::from_ref(&check)),
            Confirmation::Unsure(vec![(check.key(), Some(Verdict::Yes))])
        );
    }

    /// The whole replay: a position only the full analysis proves dead
    /// ends the game there, at once, as when every position is analysed
    /// in line (no move made after it, so none void).
    #[test]
    fn a_replay_ends_the_game_where_the_full_analysis_finds_it_dead() {
        let script = format!("{BEFORE_G5}lift g4\nplace g5\nlift d8\nplace e8\n");
        let e = crate::replay_script("test", &script, EngineConfig::default()).unwrap();
        let game = &e.games()[0];
        let moves: Vec<String> = game.moves().iter().map(|m| m.san.to_string()).collect();
        assert_eq!(moves, ["g5"]);
        assert_eq!(game.termination(), Some(Termination::DeadPosition));
        assert!(!game.alerts.iter().any(|a| a.kind == AlertKind::MovesVoid));
    }

    #[test]
    fn undecided_is_said_and_the_game_goes_on() {
        let mut e = engine(&format!("{BEFORE_G5}lift g4\nplace g5\n"));
        let check = e.next_dead_check().expect("g5 analysed");
        e.apply_dead_verdict(0, check.ply, Some(&check.key()), Verdict::Unknown, 20);
        assert!(!e.game().is_over());
        assert!(
            e.game()
                .alerts
                .iter()
                .any(|a| a.kind == AlertKind::DeadPositionUndecided)
        );
    }

    #[test]
    fn quiet_piece_moves_that_can_be_undone_inherit_the_verdict() {
        // From the start (alive): knights out and back need no analysis;
        // the pawn move e4 does.
        let mut e = engine(
            "lift g1\nplace f3\nlift g8\nplace f6\nlift f3\nplace g1\nlift f6\nplace g8\nlift e2\nplace e4\n",
        );
        assert_eq!(e.game().ply(), 5);
        let check = e.next_dead_check().expect("e4 is analysed");
        assert_eq!(check.ply, 5);
    }

    #[test]
    fn stale_verdicts_change_nothing() {
        let mut e = engine("lift e2\nplace e4\n");
        e.apply_dead_verdict(3, 1, None, Verdict::Yes, 10);
        e.apply_dead_verdict(0, 7, None, Verdict::Yes, 10);
        assert!(!e.game().is_over());
    }

    /// Issue 14: a verdict in flight while the arbiter replaces the move it
    /// was asked about is dropped; the new position at that ply is asked
    /// about and its own verdict applies.
    #[test]
    fn issue_14_a_verdict_for_a_replaced_position_is_dropped() {
        let mut e = engine("lift e2\nplace e4\n");
        let stale = e.next_dead_check().expect("e4 is a pawn move: analysed");
        assert_eq!(stale.ply, 1);
        // The scoresheets say White played d4, not e4.
        e.correct_moves(0, &["d4".to_owned()], 30).unwrap();
        let fresh = e
            .next_dead_check()
            .expect("the position after d4 is analysed");
        assert_eq!(fresh.ply, 1);
        assert_ne!(fresh.key(), stale.key());
        // A verdict "dead" computed for the position after e4 comes back
        // now: it speaks of another position.
        e.apply_dead_verdict(0, 1, Some(&stale.key()), Verdict::Yes, 40);
        assert!(
            !e.game().is_over(),
            "the game after d4 ended by e4's verdict"
        );
        assert_eq!(e.game().moves()[0].san.to_string(), "d4");
        assert_eq!(e.next_dead_check(), None, "d4's verdict is still awaited");
        e.apply_dead_verdict(0, 1, Some(&fresh.key()), Verdict::Unknown, 50);
        assert!(
            e.game()
                .alerts
                .iter()
                .any(|a| a.kind == AlertKind::DeadPositionUndecided),
            "d4's own verdict applies"
        );
    }

    /// Issue 14: the same for a flag fall: the mate verdict computed for
    /// the position of the flag fall before the arbiter corrected the move
    /// that led to it is dropped, and the corrected position is asked
    /// about instead.
    #[test]
    fn issue_14_a_mate_verdict_for_a_replaced_position_is_dropped() {
        let mut e = engine("lift e2\nplace e4\nflag white\n");
        let stale = e.next_mate_check().expect("the flag fall waits");
        assert_eq!((stale.ply, stale.side), (1, Color::Black));
        e.correct_moves(0, &["d4".to_owned()], 30).unwrap();
        // "Black cannot mate", computed after e4: it would draw the game
        // (Art. 6.9); stale, it is dropped and the position after d4 asked
        // about.
        e.apply_mate_verdict(0, 1, Some(&stale.key()), Verdict::No, 40);
        assert!(!e.game().is_over());
        let fresh = e.next_mate_check().expect("asked again");
        assert_eq!((fresh.ply, fresh.side), (1, Color::Black));
        assert_ne!(fresh.key(), stale.key());
        e.apply_mate_verdict(0, 1, Some(&fresh.key()), Verdict::Yes, 50);
        assert_eq!(e.game().outcome(), win(Color::Black));
    }
}
