//! Issue 35, the guard as a property: for games of the corpus, seeds and
//! board kinds of both generators, the record is a prefix of the game, and
//! one that stopped short of the game is never `sync: ok` at the end,
//! however the reading rules got there.

use std::sync::OnceLock;

use eboard::{
    BoardEvent, Engine, EngineConfig, Hostile, Noise, SimOptions, SyncState, TimedEvent,
    pgn::ImportedGame,
    replay::reported_games,
    script::parse_script,
    simulate,
    simulate::{
        Variant,
        physics::{PHYSICS_STYLES, PhysicsStyle, physics_session},
    },
    write_script,
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
/// the board stands, and the guard speaks of games under way. The board
/// then stands as it was left for longer than the displaced-pieces
/// deadline: the guard speaks of a board that has stood differently from
/// the record for that long, not of a move made a moment before the input
/// ended.
fn replayed(game: &ImportedGame, opts: &SimOptions) -> (Vec<shakmaty::Move>, SyncState) {
    replayed_events(simulated(game, opts))
}

/// The simulator's events for the game, the players' resignation or
/// agreement left out (see [`replayed`]).
fn simulated(game: &ImportedGame, opts: &SimOptions) -> Vec<TimedEvent> {
    let mut events = simulate(std::slice::from_ref(game), opts);
    if events.last().is_some_and(|e| {
        matches!(
            e.event,
            BoardEvent::Resign(_) | BoardEvent::Draw | BoardEvent::Result(_)
        )
    }) {
        events.pop();
    }
    events
}

/// The record and sync state after the events, then a wait longer than
/// the displaced-pieces deadline (see [`replayed`]).
fn replayed_events(events: Vec<TimedEvent>) -> (Vec<shakmaty::Move>, SyncState) {
    let config = EngineConfig::default();
    let mut engine = Engine::new(config);
    for e in parse_script("sim.board", &write_script(&events)).unwrap() {
        engine.push(&e.event).unwrap();
    }
    let last = events.last().map_or(0, |e| e.at);
    engine.advance_to(last + 2 * config.displaced_ms + config.settle_ms);
    engine.finish();
    let moves = reported_games(&engine)[0]
        .moves()
        .iter()
        .map(|m| m.mv)
        .collect();
    (moves, engine.sync_state())
}

/// Whether the record stopped one ply short because the game's last move
/// is a capture on an occupancy board with no clock: the board then shows
/// exactly what the capturing piece lifted and still in the hand shows (the
/// captured piece's square stays occupied), and nothing completes the move
/// (no press, no opponent's lift, Art. 6.2.1). Waiting is right; no guard
/// may call that board lost.
fn last_capture_never_completed(game: &ImportedGame, opts: &SimOptions, recorded: usize) -> bool {
    last_capture_never_completed_on(opts.occupancy, opts.clock, game, recorded)
}

/// As [`last_capture_never_completed`], for a board that senses occupancy
/// only or not, with a clock or not.
fn last_capture_never_completed_on(
    occupancy: bool,
    clock: bool,
    game: &ImportedGame,
    recorded: usize,
) -> bool {
    occupancy
        && !clock
        && recorded + 1 == game.moves.len()
        && game.moves.last().is_some_and(|m| m.is_capture())
}

/// Found by the property below with a random seed: 20.Rxg4, the game's
/// last move, on an occupancy board scanning every second with no clock.
/// The record waits one ply short, and may: the capture is never completed.
#[test]
fn a_last_capture_no_press_completes_is_the_only_wait_excused() {
    let Some(games) = corpus() else { return };
    let opts = SimOptions {
        seed: 1039918073723395517,
        occupancy: true,
        clock: false,
        noise: Noise::Human,
        hostile: Hostile {
            scan_ms: Some(1000),
            blips: false,
            slow_hands: true,
            outages: false,
            rotated: false,
        },
    };
    let game = &games[80];
    let (moves, sync) = replayed(game, &opts);
    assert!(
        moves.len() == game.moves.len()
            || sync != SyncState::Ok
            || last_capture_never_completed(game, &opts, moves.len()),
        "{} of {} plies, {sync:?}",
        moves.len(),
        game.moves.len()
    );
    // With a clock, the press completes it: the whole game is recorded.
    let (moves, _) = replayed(
        game,
        &SimOptions {
            clock: true,
            ..opts
        },
    );
    assert_eq!(moves.len(), game.moves.len());
}

proptest! {
    // A fixed seed: CI runs the same cases every time, so a red run always
    // names a reproducible case (new cases come from the README's fresh
    // test seeds and from changing this seed on purpose).
    #![proptest_config(ProptestConfig {
        cases: 24,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x0eb0_a4d1_0000_0035),
        ..ProptestConfig::default()
    })]

    /// Any board whose record stopped short of the game is not `ok`.
    #[test]
    fn a_record_short_of_the_game_is_never_in_sync(index in 0usize..438, opts in options()) {
        let Some(games) = corpus() else { return Ok(()) };
        let game = &games[index % games.len()];
        let (moves, sync) = replayed(game, &opts);
        if moves.len() < game.moves.len() && !last_capture_never_completed(game, &opts, moves.len()) {
            prop_assert_ne!(sync, SyncState::Ok, "{} of {} plies, {:?}", moves.len(), game.moves.len(), opts);
        }
    }

    /// The record is a prefix of the real game: no move that was not
    /// played.
    ///
    /// It holds on these cases; it is not yet true everywhere (the README's
    /// table shows games with a wrong move on hostile occupancy boards and
    /// scanning boards, issue 34), so it guards these cases from getting
    /// worse.
    #[test]
    fn the_record_is_a_prefix_of_the_game(index in 0usize..438, opts in options()) {
        let Some(games) = corpus() else { return Ok(()) };
        let game = &games[index % games.len()];
        let (moves, _) = replayed(game, &opts);
        prop_assert!(game.moves.starts_with(&moves), "{:?}", opts);
    }
}

/// A scanning board that only senses occupancy, as the simulator's scan
/// styles make it (no blips, outages or rough hands): where a scan may
/// catch a piece on its way or a capture half done.
fn scanning_occupancy() -> impl Strategy<Value = SimOptions> {
    (
        any::<u64>(),
        any::<bool>(),
        prop_oneof![Just(700), Just(1000)],
        any::<bool>(),
    )
        .prop_map(|(seed, clock, scan_ms, slow_hands)| SimOptions {
            seed,
            occupancy: true,
            clock,
            noise: Noise::Human,
            hostile: Hostile {
                scan_ms: Some(scan_ms),
                blips: false,
                slow_hands,
                outages: false,
                rotated: false,
            },
        })
}

proptest! {
    // Issue 34 on scanning occupancy boards: a seed of its own, fixed as
    // above.
    #![proptest_config(ProptestConfig {
        cases: 16,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x0eb0_a4d1_0000_0034),
        ..ProptestConfig::default()
    })]

    /// On scanning occupancy boards too, the record is a prefix of the
    /// game, and one stopped short is not `ok`.
    #[test]
    fn on_scanning_occupancy_boards_the_record_is_a_prefix_and_never_a_silent_freeze(
        index in 0usize..438,
        opts in scanning_occupancy(),
    ) {
        let Some(games) = corpus() else { return Ok(()) };
        let game = &games[index % games.len()];
        let (moves, sync) = replayed(game, &opts);
        prop_assert!(game.moves.starts_with(&moves), "{:?}", opts);
        if moves.len() < game.moves.len() && !last_capture_never_completed(game, &opts, moves.len()) {
            prop_assert_ne!(sync, SyncState::Ok, "{} of {} plies, {:?}", moves.len(), game.moves.len(), opts);
        }
    }
}

/// Which of the game's presses a stray press follows, and by whom.
#[derive(Debug, Clone, Copy)]
struct StrayPress {
    /// After this share of the game's presses (per mille).
    at: u16,
    white: bool,
}

/// The events with one press that completes no move: a player's hand
/// slips onto the clock while the board stands still, between a press and
/// whatever comes next (the frozen record began with one). Not
/// during a move: a press while a piece stands on a square of its way
/// completes the move made there (Art. 6.2.1), which is no stray press.
fn with_stray_press(mut events: Vec<TimedEvent>, stray: StrayPress) -> Vec<TimedEvent> {
    let presses: Vec<usize> = (0..events.len())
        .filter(|&i| matches!(events[i].event, BoardEvent::Press(_)))
        .collect();
    let Some(&after) = presses.get(presses.len() * usize::from(stray.at) / 1000) else {
        return events;
    };
    let from = events[after].at;
    let to = events.get(after + 1).map_or(from + 2000, |e| e.at);
    if to <= from + 1 {
        return events;
    }
    let side = if stray.white {
        shakmaty::Color::White
    } else {
        shakmaty::Color::Black
    };
    events.insert(
        after + 1,
        TimedEvent {
            at: from + (to - from) / 2,
            event: BoardEvent::Press(side),
        },
    );
    events
}

proptest! {
    // Issue 35's first frozen record, as a property: seeded as above.
    #![proptest_config(ProptestConfig {
        cases: 24,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x0eb0_a4d1_0035_0003),
        ..ProptestConfig::default()
    })]

    /// A press that completes no move (Art. 6.2.1 needs a move made) is
    /// only `clock_without_move`: the game's moves after it are all
    /// recorded, in sync, on either kind of event board and whoever
    /// pressed.
    #[test]
    fn a_stray_press_between_moves_costs_no_move(
        index in 0usize..438,
        occupancy in any::<bool>(),
        at in 0u16..1000,
        white in any::<bool>(),
    ) {
        let Some(games) = corpus() else { return Ok(()) };
        let game = &games[index % games.len()];
        let opts = SimOptions {
            seed: index as u64,
            occupancy,
            clock: true,
            noise: Noise::Human,
            hostile: Hostile::default(),
        };
        let events = with_stray_press(simulated(game, &opts), StrayPress { at, white });
        let (moves, sync) = replayed_events(events);
        prop_assert_eq!(moves, game.moves.clone(), "{:?}, stray press {}", opts, at);
        prop_assert_eq!(sync, SyncState::Ok);
    }
}

/// The record of a physics game and whether the board is said in sync at
/// the end, after the board stood as it was left for longer than the
/// displaced-pieces deadline (see [`replayed`]); `None` when the generator
/// dropped the game as undecidable.
fn replayed_physics(
    game: &ImportedGame,
    style: &PhysicsStyle,
    variant: Variant,
    seed: u64,
) -> Option<(Vec<shakmaty::Move>, SyncState)> {
    let script = physics_session(game, style, variant, seed, 0)?;
    let config = style.engine(variant);
    let mut engine = Engine::new(config);
    let events = parse_script("physics.board", &script).unwrap();
    for e in &events {
        engine.push(&e.event).unwrap();
    }
    let last = events.last().map_or(0, |e| e.event.at);
    engine.advance_to(last + 2 * config.displaced_ms + config.settle_ms);
    engine.finish();
    let games = reported_games(&engine);
    let moves = games[0].moves().iter().map(|m| m.mv).collect();
    Some((moves, engine.sync_state()))
}

/// The physics properties' check on game `index` of the corpus: the record
/// is a prefix of the game, and one stopped short is not `ok` (save the
/// wait [`last_capture_never_completed_on`] excuses). Whether the game was
/// checked: not when the generator dropped it as undecidable.
fn a_physics_record_is_a_prefix_and_never_a_silent_freeze(
    index: usize,
    style: &PhysicsStyle,
    variant: Variant,
    seed: u64,
) -> Result<bool, TestCaseError> {
    let Some(games) = corpus() else {
        return Ok(false);
    };
    let game = &games[index % games.len()];
    let Some((moves, sync)) = replayed_physics(game, style, variant, seed) else {
        return Ok(false);
    };
    prop_assert!(
        game.moves.starts_with(&moves),
        "{} {:?}",
        style.name,
        variant
    );
    let excused =
        last_capture_never_completed_on(!variant.identity, variant.clock, game, moves.len());
    if moves.len() < game.moves.len() && !excused {
        prop_assert_ne!(
            sync,
            SyncState::Ok,
            "{} of {} plies, {} {:?}",
            moves.len(),
            game.moves.len(),
            style.name,
            variant
        );
    }
    Ok(true)
}

proptest! {
    // The second generator's board kinds, seeded as above.
    #![proptest_config(ProptestConfig {
        cases: 32,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x0eb0_a4d1_0035_0004),
        ..ProptestConfig::default()
    })]

    /// On the physics generator's event boards (every style but the
    /// scanning ones), the record is a prefix of the game, and one stopped
    /// short is not `ok`.
    #[test]
    fn on_physics_event_boards_the_record_is_a_prefix_and_never_a_silent_freeze(
        index in 0usize..438,
        style in 0usize..6,
        variant in 0usize..4,
        seed in any::<u64>(),
    ) {
        let style = &PHYSICS_STYLES[style];
        prop_assert!(style.options.scan_ms.is_none());
        a_physics_record_is_a_prefix_and_never_a_silent_freeze(index, style, Variant::ALL[variant], seed)?;
    }
}

proptest! {
    // The physics generator's scanning boards that identify pieces, with
    // a seed of their own chosen before the first run, fixed as above.
    // Fewer cases than the event boards: a scanning game is read from
    // many more readings. (The simulator's identity scans, occupancy false
    // with a scan period, are among the cases of `options()` above.)
    #![proptest_config(ProptestConfig {
        cases: 16,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x0eb0_a4d1_0035_0005),
        ..ProptestConfig::default()
    })]

    /// On the physics generator's scanning boards that identify pieces
    /// (with a clock or not), the record is a prefix of the game, and one
    /// stopped short is not `ok`. The hostile style's generator drops most
    /// games as undecidable, so a case takes the first kept game of up to
    /// four from `index` on.
    #[test]
    fn on_physics_identity_scans_the_record_is_a_prefix_and_never_a_silent_freeze(
        index in 0usize..438,
        style in 6usize..8,
        clock in any::<bool>(),
        seed in any::<u64>(),
    ) {
        let style = &PHYSICS_STYLES[style];
        prop_assert!(style.options.scan_ms.is_some());
        let variant = Variant { identity: true, clock };
        for next in index..index + 4 {
            if a_physics_record_is_a_prefix_and_never_a_silent_freeze(next, style, variant, seed)? {
                break;
            }
        }
    }
}
