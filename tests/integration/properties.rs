//! Property tests: random legal games survive the simulated board, and no
//! input makes the parser or the engine panic.

use eboard::{
    BoardEvent, Engine, EngineConfig, Noise, Scan, SimOptions, TimedEvent,
    pgn::ImportedGame,
    replay::reported_games,
    replay_script,
    script::{parse_event, parse_script},
    simulate,
    winnability::{self, Budget, Verdict},
    write_script,
};
use proptest::prelude::*;
use shakmaty::{Chess, Color, Outcome, Piece, Position, Role, Square};

use crate::util::sans;

/// A random legal game from move choices. It stops where the game ends by
/// itself: checkmate, stalemate, or a dead position (Art. 5.2.2), which
/// random moves reach through positions no player would (a check that only
/// a capture answers, leaving the other king stalemated).
fn random_game(choices: &[u16]) -> ImportedGame {
    let mut pos = Chess::default();
    let mut moves = Vec::new();
    for &c in choices {
        let legal = pos.legal_moves();
        if legal.is_empty() {
            break;
        }
        let m = legal[usize::from(c) % legal.len()];
        pos.play_unchecked(m);
        moves.push(m);
        if winnability::is_dead(&pos, Budget::DETERMINISTIC).is_ok_and(|v| v == Verdict::Yes) {
            break;
        }
    }
    let result = pos.outcome();
    ImportedGame {
        tags: vec![("White".into(), "Random".into())],
        start: Chess::default(),
        setup: None,
        clocks: vec![None; moves.len()],
        moves,
        result: if result.is_known() {
            result
        } else {
            Outcome::Unknown
        },
    }
}

fn noise() -> impl Strategy<Value = Noise> {
    prop_oneof![Just(Noise::None), Just(Noise::Human), Just(Noise::Rough)]
}

proptest! {
    // A fixed seed: CI runs the same cases every time, so a red run always
    // names a reproducible case, never a new draw (new cases come from
    // changing this seed on purpose). Chosen before it was run: the seed
    // of an earlier trial.
    #![proptest_config(ProptestConfig {
        cases: 200,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x0eb0_a4d1_0000_0001),
        ..ProptestConfig::default()
    })]

    /// Random games, several per session, come back move for move.
    #[test]
    fn random_games_round_trip(
        games in prop::collection::vec(prop::collection::vec(any::<u16>(), 0..160), 1..4),
        seed in any::<u64>(),
        occupancy in any::<bool>(),
        clock in any::<bool>(),
        noise in noise(),
    ) {
        let games: Vec<ImportedGame> = games.iter().map(|c| random_game(c)).collect();
        let opts = SimOptions {
            seed,
            occupancy,
            clock,
            noise,
            ..SimOptions::default()
        };
        let script = write_script(&simulate(&games, &opts));
        let engine = replay_script("random", &script, EngineConfig::default()).unwrap();
        let replayed = reported_games(&engine);
        prop_assert_eq!(replayed.len(), games.len());
        for (game, got) in games.iter().zip(replayed) {
            let got_sans: Vec<String> = got.moves().iter().map(|m| m.san.to_string()).collect();
            prop_assert_eq!(got_sans, sans(game), "{:?}", opts);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Any text: parsing a script never panics, and a failure names a line
    /// of the input.
    #[test]
    fn script_parser_never_panics(text in "(\\PC{0,40}\n){0,20}") {
        match parse_script("fuzz", &text) {
            Ok(_) => {}
            Err(e) => prop_assert!(e.line >= 1 && e.line <= text.lines().count().max(1)),
        }
    }

    /// Lines made of the script's own words in random order never panic.
    #[test]
    fn script_words_never_panic(words in prop::collection::vec(prop::sample::select(vec![
        "@", "@12", "@99999999999999999999999", "lift", "place", "board", "setup", "press",
        "clock", "flag", "resign", "draw", "claim", "result", "tag", "white", "black", "e4",
        "h9", "P", "k", "x", "threefold", "fifty", "e2e4", "1-0", "*", "0:00:01", "9:99:99",
        "8/8/8/8/8/8/8/8", "xxxxxxxx/8/8/8/8/8/8/K6k", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR",
        "w", "-", "0", "1", "#", "\t",
    ]), 0..12)) {
        let line = words.join(" ");
        let _ = parse_event(&line);
        let _ = parse_script("fuzz", &line);
    }

    /// Any sequence of board events: the engine never panics and its record
    /// stays a legal game, but for the illegal moves play went on from,
    /// which are recorded as played and marked (Art. 7.5.1, A.5.2).
    #[test]
    fn engine_never_panics(events in prop::collection::vec(event(), 0..300)) {
        let mut engine = Engine::new(EngineConfig::default());
        let mut t = 0;
        for (dt, event) in events {
            t += dt;
            let _ = engine.push(&TimedEvent { at: t, event });
        }
        engine.finish();
        for game in engine.games() {
            let mut pos = game.start().clone();
            for m in game.moves() {
                prop_assert!(m.illegal || pos.is_legal(m.mv));
                pos.play_unchecked(m.mv);
            }
        }
    }
}

fn square() -> impl Strategy<Value = Square> {
    (0u32..64).prop_map(Square::new)
}

fn piece() -> impl Strategy<Value = Option<Piece>> {
    prop::option::of((any::<bool>(), 0usize..6).prop_map(|(white, r)| {
        let role = [
            Role::Pawn,
            Role::Knight,
            Role::Bishop,
            Role::Rook,
            Role::Queen,
            Role::King,
        ][r];
        role.of(if white { Color::White } else { Color::Black })
    }))
}

fn color() -> impl Strategy<Value = Color> {
    any::<bool>().prop_map(|w| if w { Color::White } else { Color::Black })
}

fn event() -> impl Strategy<Value = (u64, BoardEvent)> {
    let ev = prop_oneof![
        6 => square().prop_map(BoardEvent::Lift),
        6 => (square(), piece()).prop_map(|(s, p)| BoardEvent::Place(s, p)),
        1 => prop::collection::vec(prop::option::of(piece()), 64).prop_map(|cells| {
            let mut scan = Scan::empty();
            for (i, c) in cells.into_iter().enumerate() {
                scan.0[i] = c.map(|p| p.map_or(eboard::Sensed::Occupied, eboard::Sensed::Piece));
            }
            BoardEvent::Board(Box::new(scan))
        }),
        1 => color().prop_map(BoardEvent::Press),
        1 => (0u32..10000, 0u32..10000).prop_map(|(w, b)| BoardEvent::Clock(w, b)),
        1 => color().prop_map(BoardEvent::Resign),
        1 => Just(BoardEvent::Board(Box::new(Scan::from_board(&shakmaty::Board::default(), true)))),
    ];
    (prop_oneof![Just(0u64), 0u64..100, 100u64..1000], ev)
}
