//! Replay throughput against a floor measured in the same run.
//!
//! The corpus (../shared/corpus/lichess-sample.pgn, or the bundled pgn/
//! games when it is absent) is simulated once at `--noise human`; then:
//! - `floor/san_replay`: parse every game's SAN and play it with shakmaty,
//!   the least any recorder must do per move;
//! - `replay/engine`: the same games' board events through the engine;
//! - `replay/engine_without_arbiter`: the same with the irregularity checks
//!   (illegal moves, touch-move, displaced pieces) off, to measure them;
//! - `replay/parse_and_engine`: the same from board-script text, as
//!   `eboard replay` does.
//!
//! - `rules/per_move`: the draw and dead-position checks the engine runs
//!   after every move (repetition count, move counters, CHA's quick test),
//!   alone, on the same games' positions.
//!
//! The ratio engine / floor is what the README reports.

use std::hint::black_box;

mod common;

use common::corpus;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use eboard::{
    Engine, EngineConfig, Noise, SimOptions, TimedEvent, parse_script, pgn::read_games, simulate,
    write_script,
};
use shakmaty::{Chess, Position, san::San};

fn bench(c: &mut Criterion) {
    let games = read_games(corpus().as_bytes()).expect("corpus reads");
    let sans: Vec<(Chess, Vec<String>)> = games
        .iter()
        .map(|g| {
            let mut pos = g.start.clone();
            let sans = g
                .moves
                .iter()
                .map(|&m| {
                    let san = San::from_move(&pos, m).to_string();
                    pos.play_unchecked(m);
                    san
                })
                .collect();
            (g.start.clone(), sans)
        })
        .collect();
    let moves: u64 = sans.iter().map(|(_, s)| s.len() as u64).sum();
    let opts = SimOptions {
        seed: 7,
        noise: Noise::Human,
        ..SimOptions::default()
    };
    let events: Vec<TimedEvent> = simulate(&games, &opts);
    let script = write_script(&events);
    eprintln!(
        "corpus: {} games, {moves} moves, {} board events ({:.1} per move)",
        games.len(),
        events.len(),
        events.len() as f64 / moves as f64
    );

    let mut group = c.benchmark_group("floor");
    group.throughput(Throughput::Elements(moves));
    group.bench_function("san_replay", |b| {
        b.iter(|| {
            for (start, game) in &sans {
                let mut pos = start.clone();
                for san in game {
                    let m = san
                        .parse::<San>()
                        .expect("SAN parses")
                        .to_move(&pos)
                        .expect("legal");
                    pos.play_unchecked(m);
                }
                black_box(&pos);
            }
        })
    });
    group.finish();

    // The positions after every move, with their repetition keys.
    let positions: Vec<Vec<Chess>> = games
        .iter()
        .map(|g| {
            let mut pos = g.start.clone();
            let mut line = vec![pos.clone()];
            for &m in &g.moves {
                pos.play_unchecked(m);
                line.push(pos.clone());
            }
            line
        })
        .collect();
    let mut group = c.benchmark_group("rules");
    group.throughput(Throughput::Elements(moves));
    group.bench_function("per_move", |b| {
        b.iter(|| {
            let mut ended = 0u32;
            for line in &positions {
                let mut keys: Vec<u64> = Vec::with_capacity(line.len());
                for pos in line {
                    let key = eboard::game::position_key(pos);
                    let since = keys.len().saturating_sub(pos.halfmoves() as usize);
                    let reps = keys[since..].iter().filter(|&&k| k == key).count() + 1;
                    keys.push(key);
                    if reps >= 5 || pos.halfmoves() >= 150 || eboard::engine::is_dead_fast(pos) {
                        ended += 1;
                    }
                }
            }
            black_box(ended)
        })
    });
    group.finish();

    let mut group = c.benchmark_group("replay");
    group.throughput(Throughput::Elements(moves));
    group.bench_function("engine", |b| {
        b.iter(|| run(EngineConfig::default(), &events))
    });
    let without_arbiter = EngineConfig {
        arbiter: false,
        ..EngineConfig::default()
    };
    group.bench_function("engine_without_arbiter", |b| {
        b.iter(|| run(without_arbiter, &events))
    });
    group.bench_function("parse_and_engine", |b| {
        b.iter(|| {
            let lines = parse_script("bench", &script).expect("script parses");
            let mut engine = Engine::new(EngineConfig::default());
            for line in &lines {
                engine.push(&line.event).expect("simulated events apply");
                engine.clear_events();
            }
            engine.finish();
            black_box(engine.games().len())
        })
    });
    group.throughput(Throughput::Elements(events.len() as u64));
    group.bench_function("engine_events", |b| {
        b.iter(|| run(EngineConfig::default(), &events))
    });
    group.finish();
}

/// The events through an engine; the number of games, so nothing is
/// optimised away.
fn run(config: EngineConfig, events: &[TimedEvent]) -> usize {
    let mut engine = Engine::new(config);
    for ev in events {
        engine.push(ev).expect("simulated events apply");
        engine.clear_events();
    }
    engine.finish();
    black_box(engine.games().len())
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench
}
criterion_main!(benches);
