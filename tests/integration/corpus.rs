//! Round trips over real games: every game of the lichess sample is played
//! on a simulated board and must come back as exactly its SAN moves.

use eboard::{
    EngineConfig, Noise, SimOptions, pgn::read_games, replay::reported_games, replay_script,
    simulate, write_script,
};

use crate::util::{corpus_file, present_or_skip, read, root};

fn round_trip(noise: Noise, occupancy: bool, clock: bool, seed: u64) {
    let Some(path) = corpus_file("lichess-sample.pgn") else {
        return;
    };
    let games = read_games(read(&path).as_bytes()).unwrap();
    assert_eq!(games.len(), 438);
    let opts = SimOptions {
        seed,
        occupancy,
        clock,
        noise,
        ..SimOptions::default()
    };
    let script = write_script(&simulate(&games, &opts));
    let engine = replay_script("simulated", &script, EngineConfig::default()).unwrap();
    let replayed = reported_games(&engine);
    assert_eq!(replayed.len(), games.len(), "{opts:?}: number of games");
    let mut failures = Vec::new();
    for (i, (original, game)) in games.iter().zip(replayed).enumerate() {
        let mut pos = original.start.clone();
        let want: Vec<String> = original
            .moves
            .iter()
            .map(|&m| shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string())
            .collect();
        let got: Vec<String> = game.moves().iter().map(|m| m.san.to_string()).collect();
        if got != want {
            let at = got.iter().zip(&want).take_while(|(a, b)| a == b).count();
            failures.push(format!(
                "game {}: differs at ply {} (got {:?}, want {:?})",
                i + 1,
                at + 1,
                got.get(at),
                want.get(at)
            ));
            continue;
        }
        let unexpected: Vec<&str> = game
            .alerts
            .iter()
            .filter(|a| a.kind.is_irregularity())
            .map(|a| a.kind.as_str())
            .filter(|&k| noise != Noise::Rough || k != "moves_inferred")
            .collect();
        if !unexpected.is_empty() {
            failures.push(format!("game {}: false alarms {unexpected:?}", i + 1));
        }
        if clock {
            // The %clk of every move is the time the PGN gives.
            let got: Vec<_> = game.moves().iter().map(|m| m.clock).collect();
            if got != original.clocks {
                failures.push(format!("game {}: clocks differ", i + 1));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{opts:?}: {} of {} games failed:\n{}",
        failures.len(),
        games.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}

#[test]
fn lichess_sample_human_identity_with_clock() {
    round_trip(Noise::Human, false, true, 1);
}

#[test]
fn lichess_sample_human_occupancy() {
    round_trip(Noise::Human, true, false, 2);
}

#[test]
fn lichess_sample_rough_identity() {
    round_trip(Noise::Rough, false, false, 3);
}

#[test]
fn lichess_sample_rough_occupancy_with_clock() {
    round_trip(Noise::Rough, true, true, 4);
}

#[test]
fn lichess_sample_without_noise() {
    round_trip(Noise::None, true, false, 5);
}

/// Issue 9: a missing shared corpus fails the tests in CI, and is said to
/// be skipped elsewhere.
#[test]
fn a_missing_corpus_fails_in_ci_and_is_skipped_elsewhere() {
    let missing = root().join("../shared/corpus/no-such-file.pgn");
    assert_eq!(present_or_skip(missing.clone(), false), None);
    let in_ci = std::panic::catch_unwind(|| present_or_skip(missing, true));
    assert!(in_ci.is_err());
    assert!(present_or_skip(root().join("Cargo.toml"), true).is_some());
}
