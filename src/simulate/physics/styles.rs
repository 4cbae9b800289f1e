//! The physics generator's styles of board and play, and how the engine is
//! measured on them (the same counts as the simulator's styles, plus the
//! games the generator dropped as undecidable).

use super::{PhysicsOptions, physics};
use crate::{
    EngineConfig,
    pgn::ImportedGame,
    replay::reported_games,
    replay_script,
    script::write_script,
    simulate::{Tally, Variant, reading_config},
};

/// A kind of board and of players, as the physics generator makes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PhysicsStyle {
    /// Its name in the table (`physics-…`).
    pub name: &'static str,
    /// What it generates, for the table.
    pub what: &'static str,
    /// The generator's options (seed, identity and clock come from the
    /// variant and the measurement).
    pub options: PhysicsOptions,
}

const BASE: PhysicsOptions = PhysicsOptions::DEFAULT;

/// Every physics style, gentlest first.
pub const PHYSICS_STYLES: &[PhysicsStyle] = &[
    PhysicsStyle {
        name: "physics-human",
        what: "square events: capture orders, drags, castling and promotion styles",
        options: BASE,
    },
    PhysicsStyle {
        name: "physics-events",
        what: "square events with blips and slow hands",
        options: PhysicsOptions {
            blips: true,
            slow_hands: true,
            ..BASE
        },
    },
    PhysicsStyle {
        name: "physics-blips-events",
        what: "square events with 5–60 ms blips on any square",
        options: PhysicsOptions {
            blips: true,
            ..BASE
        },
    },
    PhysicsStyle {
        name: "physics-slow-hands",
        what: "pieces held up to 20 s, the second castling piece up to 5 s later",
        options: PhysicsOptions {
            slow_hands: true,
            ..BASE
        },
    },
    PhysicsStyle {
        name: "physics-rotated",
        what: "square events from a board turned round",
        options: PhysicsOptions {
            rotated: true,
            ..BASE
        },
    },
    PhysicsStyle {
        name: "physics-outages",
        what: "the cable out for 1–10 plies, then `reconnected` and a dump",
        options: PhysicsOptions {
            outages: true,
            ..BASE
        },
    },
    PhysicsStyle {
        name: "physics-scan-1000",
        what: "full scans every second at a random phase",
        options: PhysicsOptions {
            scan_ms: Some(1000),
            ..BASE
        },
    },
    PhysicsStyle {
        name: "physics-scan-700-hostile",
        what: "scans every 700 ms with blips, slow hands, outages, turned round",
        options: PhysicsOptions {
            scan_ms: Some(700),
            blips: true,
            slow_hands: true,
            outages: true,
            rotated: true,
            ..BASE
        },
    },
];

impl PhysicsStyle {
    /// The generator's options for a variant and seed.
    pub fn options(&self, variant: Variant, seed: u64) -> PhysicsOptions {
        PhysicsOptions {
            seed,
            occupancy: !variant.identity,
            clock: variant.clock,
            ..self.options
        }
    }

    /// How the board is read: an occupancy board turned round is
    /// configured so; one that identifies pieces is recognised.
    pub fn engine(&self, variant: Variant) -> EngineConfig {
        reading_config(self.options.rotated, variant)
    }
}

/// The script of game number `index` of a measured sample, or `None` when
/// the generator dropped it as undecidable.
pub fn physics_session(
    game: &ImportedGame,
    style: &PhysicsStyle,
    variant: Variant,
    seed: u64,
    index: usize,
) -> Option<String> {
    physics_game(game, style, variant, seed, index).map(|g| g.script)
}

/// One generated game of a measured sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhysicsGame {
    /// The board script.
    pub script: String,
    /// The plies (from 1) the player castled rook first: a real breach of
    /// Art. 4.4.2, so an alert on them is not a false alarm.
    pub rook_first: Vec<usize>,
}

/// As [`physics_session`], with what the player really did wrong.
pub fn physics_game(
    game: &ImportedGame,
    style: &PhysicsStyle,
    variant: Variant,
    seed: u64,
    index: usize,
) -> Option<PhysicsGame> {
    let opts = style.options(
        variant,
        seed.wrapping_mul(100_003).wrapping_add(index as u64),
    );
    let session = physics(std::slice::from_ref(game), &opts);
    (session.report.kept == 1).then(|| PhysicsGame {
        script: write_script(&session.events),
        rook_first: session
            .report
            .rook_first
            .iter()
            .map(|&(_, ply)| ply)
            .collect(),
    })
}

/// Generates every `step`-th of `games` (one session per game) and counts
/// what the engine gave back; dropped games are counted apart.
pub fn measure_physics(
    games: &[ImportedGame],
    step: usize,
    style: &PhysicsStyle,
    variant: Variant,
    seed: u64,
) -> Tally {
    let mut tally = Tally::default();
    for (i, game) in games.iter().enumerate().step_by(step.max(1)) {
        let Some(made) = physics_game(game, style, variant, seed, i) else {
            tally.dropped += 1;
            continue;
        };
        let replayed = replay_script("physics", &made.script, style.engine(variant));
        let replayed = replayed.as_ref().map(reported_games).unwrap_or_default();
        tally.add_excusing(game, replayed, &made.rook_first);
    }
    tally
}
