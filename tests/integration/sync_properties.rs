//! Issue 35, the guard as a property: for games of the corpus, seeds and
//! board kinds of the simulator, a record that stopped short of the game
//! is never `sync: ok` at the end, however the reading rules got there.

use std::sync::OnceLock;

use eboard::{
    BoardEvent, EngineConfig, Hostile, Noise, SimOptions, SyncState, pgn::ImportedGame,
    replay::reported_games, replay_script, simulate, write_script,
};
use proptest::prelude::*;

fn corpus() -> Option<&'static [ImportedGame]> {
    static GAMES: OnceLock<Option<Vec<ImportedGame>>> = OnceLock::new();
    GAMES
        .get_or_init(|| {
            let path = crate::util::corpus_file("lichess-sample.pgn")?;
            let text = std::fs::read_to_string(path).ok()?;
            eboard::pgn::read_games(text.as_bytes()).ok()
        })
        .as_deref()
}

/// A board kind of the simulator (not turned round: an occupancy board
/// turned round needs its orientation configured).
fn options() -> impl Strategy<Value = SimOptions> {
    (
        any::<u64>(),
        any::<bool>(),
        any::<bool>(),
        prop_oneof![Just(None), Just(Some(700)), Just(Some(1000))],
        any::<[bool; 3]>(),
        prop_oneof![Just(Noise::Human), Just(Noise::Rough)],
    )
        .prop_map(
            |(seed, occupancy, clock, scan_ms, [blips, slow_hands, outages], noise)| SimOptions {
                seed,
                occupancy,
                clock,
                noise,
                hostile: Hostile {
                    scan_ms,
                    blips,
                    slow_hands,
                    outages,
                    rotated: false,
                },
            },
        )
}

/// The game's record and whether the board is said in sync at the end. The
/// players' resignation or agreement is left out: it ends the game however
/// the board stands, and the guard speaks of games under way.
fn replayed(game: &ImportedGame, opts: &SimOptions) -> (Vec<shakmaty::Move>, SyncState) {
    let mut events = simulate(std::slice::from_ref(game), opts);
    if events.last().is_some_and(|e| {
        matches!(
            e.event,
            BoardEvent::Resign(_) | BoardEvent::Draw | BoardEvent::Result(_)
        )
    }) {
        events.pop();
    }
    let engine =
        replay_script("sim.board", &write_script(&events), EngineConfig::default()).unwrap();
    let moves = reported_games(&engine)[0]
        .moves()
        .iter()
        .map(|m| m.mv)
        .collect();
    (moves, engine.sync_state())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Any board whose record stopped short of the game is not `ok`.
    #[test]
    fn a_record_short_of_the_game_is_never_in_sync(index in 0usize..438, opts in options()) {
        let Some(games) = corpus() else { return Ok(()) };
        let game = &games[index % games.len()];
        let (moves, sync) = replayed(game, &opts);
        if moves.len() < game.moves.len() {
            prop_assert_ne!(sync, SyncState::Ok, "{} of {} plies, {:?}", moves.len(), game.moves.len(), opts);
        }
    }

    /// The record is a prefix of the real game: no move that was not
    /// played.
    #[test]
    #[ignore = "issue 34: the reading rules still record moves that were not played on scanning and hostile boards (wrong moves on other seeds); the engine rewrite makes this pass"]
    fn the_record_is_a_prefix_of_the_game(index in 0usize..438, opts in options()) {
        let Some(games) = corpus() else { return Ok(()) };
        let game = &games[index % games.len()];
        let (moves, _) = replayed(game, &opts);
        prop_assert!(game.moves.starts_with(&moves), "{:?}", opts);
    }
}
