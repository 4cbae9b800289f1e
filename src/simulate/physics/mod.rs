//! A second generator of board sessions, written from a description of
//! board physics (not from the engine): each move of each game becomes a
//! physical timeline (hands lifting, carrying, dragging and putting down
//! pieces; presses; sensor blips; cable outages), which is then sampled the
//! way a kind of board reports it (square events after a debounce, or full
//! scans at random phases; piece letters or occupancy only).
//!
//! A game is kept only when the generator's own bounded search
//! ([`explain`]) finds exactly one line of legal moves of least cost (plies,
//! then assumed blips) that explains what the board reported, and that
//! line is the game; the others are dropped and counted in the
//! [`PhysicsReport`].

mod decide;
mod hands;
mod sample;
mod styles;
mod timeline;

pub use decide::{DEFAULT_BUDGET, Explanation, explain};
pub use sample::{BoardKind, Reading};
pub use styles::{
    PHYSICS_STYLES, PhysicsGame, PhysicsStyle, measure_physics, physics_game, physics_session,
};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::{Board, Color, Outcome, Piece, Position, Role, Square};

use self::{
    hands::{Hands, PlyTimes},
    sample::{Outage, sample},
    timeline::{Change, Squares},
};
use crate::{
    event::{BoardEvent, Millis, Scan, Seconds, TimedEvent},
    pgn::ImportedGame,
};

/// What to generate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhysicsOptions {
    /// Random seed: the same seed gives the same script.
    pub seed: u64,
    /// An occupancy-only board (no piece letters).
    pub occupancy: bool,
    /// A clock pressed after each move, with time reports.
    pub clock: bool,
    /// A board that reports full scans every N ms instead of square events.
    pub scan_ms: Option<Millis>,
    /// Sensor blips of 5–60 ms on any square, also during a move.
    pub blips: bool,
    /// Pieces held up to 20 s, the second castling piece up to 5 s later.
    pub slow_hands: bool,
    /// Cable outages of 1–10 plies, each ending with `reconnected` and a dump.
    pub outages: bool,
    /// The board turned round.
    pub rotated: bool,
    /// The work the decidability search may spend on one game.
    pub budget: u64,
    /// Run the decidability search and drop the games it cannot decide
    /// (off: every game is kept, for looking at the physics alone).
    pub decide: bool,
}

impl PhysicsOptions {
    /// Events with piece letters, no clock, no hostile artefact, seed 0.
    pub const DEFAULT: PhysicsOptions = PhysicsOptions {
        seed: 0,
        occupancy: false,
        clock: false,
        scan_ms: None,
        blips: false,
        slow_hands: false,
        outages: false,
        rotated: false,
        budget: DEFAULT_BUDGET,
        decide: true,
    };
}

impl Default for PhysicsOptions {
    fn default() -> PhysicsOptions {
        PhysicsOptions::DEFAULT
    }
}

/// Why a game was left out of the script.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DropReason {
    /// Several lines of least cost explain the stream.
    Ambiguous,
    /// The one line of least cost is not the game played.
    Misleading,
    /// No line within the search's bounds explains it.
    Unexplained,
    /// The search ran out of work.
    OverBudget,
}

impl DropReason {
    /// Its name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::Ambiguous => "ambiguous",
            DropReason::Misleading => "misleading",
            DropReason::Unexplained => "unexplained",
            DropReason::OverBudget => "over budget",
        }
    }
}

/// How many games were kept, and why the others were dropped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PhysicsReport {
    /// Games in the input.
    pub total: usize,
    /// Games in the script.
    pub kept: usize,
    /// Each dropped game: its index in the input and why.
    pub dropped: Vec<(usize, DropReason)>,
    /// Each castling of a kept game begun with the rook (a breach of
    /// Art. 4.4.2 the player really made): the game's index in the input
    /// and the ply's number, counted from 1.
    pub rook_first: Vec<(usize, usize)>,
}

impl PhysicsReport {
    /// `physics: kept K of N games; dropped D (reasons...)`.
    pub fn summary(&self) -> String {
        let mut counts: std::collections::BTreeMap<DropReason, usize> = Default::default();
        for (_, r) in &self.dropped {
            *counts.entry(*r).or_default() += 1;
        }
        let reasons: Vec<String> = counts
            .iter()
            .map(|(r, n)| format!("{n} {}", r.as_str()))
            .collect();
        format!(
            "physics: kept {} of {} games; dropped {} ({})",
            self.kept,
            self.total,
            self.dropped.len(),
            if reasons.is_empty() {
                "none".to_owned()
            } else {
                reasons.join(", ")
            }
        )
    }
}

/// The session script's events and the report on the games.
#[derive(Debug, Clone)]
pub struct PhysicsSession {
    /// The board script's events.
    pub events: Vec<TimedEvent>,
    /// Kept and dropped games.
    pub report: PhysicsReport,
}

/// Generates one board session playing the decidable ones of `games`, one
/// after the other.
pub fn physics(games: &[ImportedGame], opts: &PhysicsOptions) -> PhysicsSession {
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed);
    let mut events = Vec::new();
    let mut report = PhysicsReport {
        total: games.len(),
        ..PhysicsReport::default()
    };
    let mut t = 0;
    for (i, game) in games.iter().enumerate() {
        let first = report.kept == 0;
        let made = make_game(game, opts, &mut rng, t, first);
        match made.verdict {
            None => {
                report.kept += 1;
                report
                    .rook_first
                    .extend(made.rook_first.iter().map(|&ply| (i, ply)));
                t = made.end + 3000;
                events.extend(made.events);
            }
            Some(reason) => report.dropped.push((i, reason)),
        }
    }
    PhysicsSession { events, report }
}

/// One game's reports, and why it is dropped if it is.
struct MadeGame {
    events: Vec<TimedEvent>,
    end: Millis,
    verdict: Option<DropReason>,
    /// The plies (from 1) castled rook first.
    rook_first: Vec<usize>,
}

fn make_game(
    game: &ImportedGame,
    opts: &PhysicsOptions,
    rng: &mut ChaCha8Rng,
    t0: Millis,
    first: bool,
) -> MadeGame {
    let identity = !opts.occupancy;
    let mut header = Vec::new();
    let at = |event| TimedEvent { at: t0, event };
    for (name, value) in &game.tags {
        if !matches!(name.as_str(), "Result" | "SetUp" | "FEN") {
            header.push(at(BoardEvent::Tag(name.clone(), value.clone())));
        }
    }
    let start_scan = || BoardEvent::Board(Box::new(Scan::from_board(game.start.board(), identity)));
    match &game.setup {
        Some(fen) => header.push(at(BoardEvent::Setup(Box::new(fen.clone())))),
        None if !first => header.push(at(start_scan())),
        None => {}
    }
    if opts.rotated && (first || game.setup.is_some()) {
        // A board says what stands on it when the host connects and after
        // the pieces are set up.
        header.push(at(start_scan()));
    }
    let played = play(game, opts, rng, t0 + 1000);
    let rook_first = (1..)
        .zip(&played.plies)
        .filter(|(_, p)| p.rook_first)
        .map(|(ply, _)| ply)
        .collect();
    let squares = with_blips(game.start.board(), played.changes, &played.plies, opts, rng);
    let outages = if opts.outages {
        choose_outages(&played.plies, played.end, rng)
    } else {
        Vec::new()
    };
    let reading = Reading {
        kind: match opts.scan_ms {
            Some(every) => BoardKind::Scans { every },
            None => BoardKind::Events {
                debounce: rng.random_range(20..=80),
            },
        },
        identity,
    };
    let sampled = sample(
        &squares,
        (t0 + 1000, played.end),
        &played.others,
        &outages,
        reading,
        rng,
    );
    let explained = if opts.decide {
        explain(&game.start, &sampled, identity, opts.budget)
    } else {
        Explanation::Unique(game.moves.clone())
    };
    let verdict = match explained {
        Explanation::Unique(line) if line == game.moves => None,
        Explanation::Unique(_) => Some(DropReason::Misleading),
        Explanation::Ambiguous(..) => Some(DropReason::Ambiguous),
        Explanation::Unexplained => Some(DropReason::Unexplained),
        Explanation::OverBudget => Some(DropReason::OverBudget),
    };
    let mut events = header;
    events.extend(sampled);
    events.extend(played.ending);
    if opts.rotated {
        events = events
            .iter()
            .map(|e| TimedEvent {
                at: e.at,
                event: e.event.rotated(),
            })
            .collect();
    }
    MadeGame {
        events,
        end: played.end,
        verdict,
        rook_first,
    }
}

/// A game played on the physical board.
struct Played {
    changes: Vec<Change>,
    plies: Vec<PlyTimes>,
    /// Presses and clock reports.
    others: Vec<TimedEvent>,
    /// The resignation, draw or result after the last move.
    ending: Vec<TimedEvent>,
    end: Millis,
}

fn play(game: &ImportedGame, opts: &PhysicsOptions, rng: &mut ChaCha8Rng, t0: Millis) -> Played {
    let mut others = Vec::new();
    let mut plies = Vec::new();
    let mut pos = game.start.clone();
    let mut clocks: [Option<Seconds>; 2] = [None, None];
    let mut hands = Hands {
        rng,
        slow: opts.slow_hands,
        t: t0,
        changes: Vec::new(),
    };
    for (i, &m) in game.moves.iter().enumerate() {
        let think = if hands.rng.random_bool(0.3) {
            hands.rng.random_range(400..1500)
        } else {
            hands.rng.random_range(1500..8000)
        };
        hands.t += think;
        let mover = pos.turn();
        plies.push(hands.play(&pos, m));
        if opts.clock {
            // A press comes after the hand let go of the piece.
            hands.t += hands.rng.random_range(80..1500);
            others.push(TimedEvent {
                at: hands.t,
                event: BoardEvent::Press(mover),
            });
            if let Some(Some(left)) = game.clocks.get(i) {
                clocks[mover as usize] = Some(*left);
            }
            if let [Some(w), Some(b)] =
                [clocks[Color::White as usize], clocks[Color::Black as usize]]
            {
                others.push(TimedEvent {
                    at: hands.t,
                    event: BoardEvent::Clock(w, b),
                });
            }
        }
        pos.play_unchecked(m);
    }
    // Time for a scanning board to show the last move before the game is
    // over.
    let end = hands.t + 3000;
    let mut ending = Vec::new();
    if !(pos.is_checkmate() || pos.is_stalemate()) {
        let event = match game.result {
            Outcome::Known(shakmaty::KnownOutcome::Decisive { winner }) => {
                BoardEvent::Resign(!winner)
            }
            Outcome::Known(shakmaty::KnownOutcome::Draw) => BoardEvent::Draw,
            Outcome::Unknown => BoardEvent::Result(Outcome::Unknown),
        };
        ending.push(TimedEvent {
            at: hands.t + 1500,
            event,
        });
    }
    Played {
        changes: hands.changes,
        plies,
        others,
        ending,
        end,
    }
}

/// Adds sensor blips (5–60 ms, a vacancy of an occupied square or a
/// phantom on an empty one) around four plies in ten, on squares no hand
/// touches meanwhile.
fn with_blips(
    start: &Board,
    mut changes: Vec<Change>,
    plies: &[PlyTimes],
    opts: &PhysicsOptions,
    rng: &mut ChaCha8Rng,
) -> Squares {
    if !opts.blips {
        return Squares::new(start.clone(), &changes);
    }
    let squares = Squares::new(start.clone(), &changes);
    for ply in plies {
        if !rng.random_bool(0.4) {
            continue;
        }
        let at = rng.random_range(ply.first.saturating_sub(500)..ply.released + 500);
        let lasts = rng.random_range(5..=60);
        let sq = Square::new(rng.random_range(0..64));
        if squares
            .busy(at.saturating_sub(1), at + lasts + 1)
            .contains(sq)
        {
            continue;
        }
        let now = squares.at(sq, at);
        let blip = match now {
            Some(_) => None,
            None => Some(Piece {
                color: if rng.random_bool(0.5) {
                    Color::White
                } else {
                    Color::Black
                },
                role: Role::ALL[rng.random_range(0..6)],
            }),
        };
        changes.push(Change {
            at,
            square: sq,
            content: blip,
        });
        changes.push(Change {
            at: at + lasts,
            square: sq,
            content: now,
        });
    }
    Squares::new(start.clone(), &changes)
}

/// One or two outages of 1–10 plies each: from a quiet moment before a
/// ply to a quiet moment after the last ply it hides.
fn choose_outages(plies: &[PlyTimes], end: Millis, rng: &mut ChaCha8Rng) -> Vec<Outage> {
    let mut out: Vec<Outage> = Vec::new();
    let mut next_free = 0;
    let count = rng.random_range(1..=2);
    for _ in 0..count {
        if next_free >= plies.len() {
            break;
        }
        let first = rng.random_range(next_free..plies.len());
        let len = rng.random_range(1..=10).min(plies.len() - first);
        let last = first + len - 1;
        let quiet_before = if first == 0 {
            plies[0].first.saturating_sub(200)
        } else {
            (plies[first - 1].released + plies[first].first) / 2
        };
        let quiet_after = match plies.get(last + 1) {
            Some(next) => (plies[last].released + next.first) / 2,
            None => (plies[last].released + end) / 2,
        };
        out.push(Outage {
            from: quiet_before,
            to: quiet_after.max(quiet_before + 1),
        });
        next_free = last + 2;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{pgn::read_games, script::parse_script, write_script};

    fn games(pgn: &str) -> Vec<ImportedGame> {
        read_games(pgn.as_bytes()).unwrap()
    }

    #[test]
    fn a_short_game_on_an_event_board_is_kept_and_parses() {
        let g = games("[White \"A\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bb5 a6 1-0\n");
        let s = physics(&g, &PhysicsOptions::default());
        assert_eq!(s.report.kept + s.report.dropped.len(), 1);
        let text = write_script(&s.events);
        assert!(parse_script("p", &text).is_ok(), "{text}");
    }
}
