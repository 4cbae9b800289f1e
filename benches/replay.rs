//! Replay throughput against a floor measured in the same run.
//!
//! The corpus (../shared/corpus/lichess-sample.pgn, or the bundled pgn/
//! games when it is absent) is simulated once at `--noise human`; then:
//! - `floor/san_legal_moves`: the floor issue 14 defines — parse every
//!   game's SAN, generate the position's legal moves, find the move among
//!   them and play it, the least a recorder checking legality does;
//!   `floor/san_to_move_only` parses and plays the SAN with
//!   `San::to_move` (only the moves fitting the SAN generated), shown
//!   beside it;
//! - `replay/engine`: the same games' board events through the engine, its
//!   full analyses deferred as a daemon defers them to its pool;
//! - `replay/engine_without_arbiter`: the same with the irregularity checks
//!   (illegal moves, touch-move, displaced pieces) off, to measure them;
//! - `replay/parse_and_engine`: the same from board-script text, as
//!   `eboard replay` does.
//!
//! - `rules/per_move`: the draw and dead-position checks the engine runs
//!   after every move (repetition count, move counters, CHA's quick test),
//!   alone, on the same games' positions; `rules/per_move_reference` the
//!   same with the quick test as it ran before issue 14 (CHA for each side
//!   after every move);
//! - `rules/replay_every_rule`: the floor's work plus recording each move
//!   in a `Game` (SAN with check and mate, the position's identity) and
//!   every ending the Laws apply by themselves (mate, stalemate, dead
//!   position, fivefold repetition, 75 moves).
//!
//! Under `cargo bench` a summary then times the floor and
//! `replay_every_rule` alternately (15 rounds, medians) and prints their
//! ratio: the figure the README reports, measured in the same run. Then
//! the whole `eboard replay --json` command on the same script, as a
//! process, against the floor (issue 38; `EBOARD_BEFORE` adds another
//! build to the same rounds).

use std::hint::black_box;

mod common;

use common::corpus;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use eboard::{
    Engine, EngineConfig, Game, Noise, SimOptions, TimedEvent,
    engine::automatic_ending,
    parse_script,
    pgn::read_games,
    quick_dead::{is_dead_quick, is_dead_quick_reference},
    rules::Rules,
    simulate, write_script,
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
    group.bench_function("san_legal_moves", |b| b.iter(|| floor(&sans)));
    group.bench_function("san_to_move_only", |b| b.iter(|| san_only(&sans)));
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
        b.iter(|| per_move(&positions, is_dead_quick))
    });
    group.bench_function("per_move_reference", |b| {
        b.iter(|| per_move(&positions, is_dead_quick_reference))
    });
    group.bench_function("replay_every_rule", |b| b.iter(|| every_rule(&sans)));
    group.finish();
    if std::env::args().any(|arg| arg == "--bench") {
        summary(&sans, &positions, moves);
        whole_process(&sans, &script, moves);
    }

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

/// The floor of issue 14: parses every game's SAN, generates the
/// position's legal moves, finds the move among them and plays it — the
/// least a recorder that checks each move's legality does.
fn floor(sans: &[(Chess, Vec<String>)]) {
    for (start, game) in sans {
        let mut pos = start.clone();
        for san in game {
            let m = find_move(&pos, san);
            pos.play_unchecked(m);
        }
        black_box(&pos);
    }
}

/// The move `san` names among `pos`'s legal moves, all generated.
fn find_move(pos: &Chess, san: &str) -> shakmaty::Move {
    let san = san.parse::<San>().expect("SAN parses");
    pos.legal_moves()
        .into_iter()
        .find(|&m| san.matches(m))
        .expect("legal")
}

/// Parses every game's SAN and plays it through `San::to_move`, which
/// generates only the moves that fit the SAN: cheaper than the floor, shown
/// beside it for comparison.
fn san_only(sans: &[(Chess, Vec<String>)]) {
    for (start, game) in sans {
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
}

/// The floor's work, each move recorded in a `Game`, and every ending the
/// Laws apply by themselves checked after it; the number of games ended.
fn every_rule(sans: &[(Chess, Vec<String>)]) -> usize {
    let rules = Rules::default();
    let mut ended = 0;
    for (start, moves) in sans {
        let mut game = Game::new(start.clone(), 0);
        for san in moves {
            let m = find_move(game.position(), san);
            game.push_move(m, 0, 0);
            if automatic_ending(&game, rules).is_some() {
                ended += 1;
            }
        }
        black_box(&game);
    }
    black_box(ended)
}

/// The checks run after every move, alone, with `dead` as the quick test.
fn per_move(positions: &[Vec<Chess>], dead: fn(&Chess) -> bool) -> u32 {
    let mut ended = 0u32;
    for line in positions {
        let mut keys: Vec<u64> = Vec::with_capacity(line.len());
        for pos in line {
            let key = eboard::game::position_key(pos);
            let since = keys.len().saturating_sub(pos.halfmoves() as usize);
            let reps = keys[since..].iter().filter(|&&k| k == key).count() + 1;
            keys.push(key);
            if reps >= 5 || pos.halfmoves() >= 150 || dead(pos) {
                ended += 1;
            }
        }
    }
    black_box(ended)
}

/// Times the floor, the replay with every rule and the per-move checks
/// (with the quick test as it is and as it was) alternately, so all see
/// the same machine load, and prints the medians and their ratios to the
/// floor.
fn summary(sans: &[(Chess, Vec<String>)], positions: &[Vec<Chess>], moves: u64) {
    const ROUNDS: usize = 15;
    let time = |f: &dyn Fn()| {
        let start = Instant::now();
        f();
        start.elapsed()
    };
    let runs: [(&str, &dyn Fn()); 5] = [
        ("floor (SAN + legal moves)", &|| floor(sans)),
        ("SAN + to_move only (no full generation)", &|| {
            san_only(sans)
        }),
        ("replay with every rule", &|| {
            every_rule(sans);
        }),
        ("per-move checks alone", &|| {
            per_move(positions, is_dead_quick);
        }),
        ("per-move checks, quick test as before", &|| {
            per_move(positions, is_dead_quick_reference);
        }),
    ];
    let mut times = vec![Vec::new(); runs.len()];
    for _ in 0..ROUNDS {
        for (i, (_, run)) in runs.iter().enumerate() {
            times[i].push(time(run));
        }
    }
    let medians: Vec<Duration> = times
        .iter_mut()
        .map(|t| {
            t.sort_unstable();
            t[t.len() / 2]
        })
        .collect();
    println!("summary (medians of {ROUNDS} alternating rounds, {moves} plies):");
    for ((name, _), median) in runs.iter().zip(&medians) {
        println!(
            "  {name}: {:.3} µs/ply, {:.2}x the floor",
            median.as_secs_f64() * 1e6 / moves as f64,
            median.as_secs_f64() / medians[0].as_secs_f64()
        );
    }
}

/// Issue 38: the whole `eboard replay --json` command (this build's
/// binary: process start, reading and parsing the script, the engine with
/// its full dead-position analyses in line, the output) on the corpus
/// script, timed against the floor in alternating rounds, so both see the
/// same machine load. `EBOARD_BEFORE=/path/to/eboard` times another build
/// in the same rounds (the "before" of a change).
fn whole_process(sans: &[(Chess, Vec<String>)], script: &str, moves: u64) {
    const ROUNDS: usize = 7;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("corpus.board");
    std::fs::write(&path, script).expect("the script is written");
    let mut binaries = vec![("this build", env!("CARGO_BIN_EXE_eboard").to_owned())];
    if let Ok(before) = std::env::var("EBOARD_BEFORE") {
        binaries.push(("EBOARD_BEFORE", before));
    }
    // Wall time and CPU time: on a shared machine a process of a few hundred
    // milliseconds gets its share of the cores, while the floor's short
    // burst mostly runs at once, so the wall-time ratio grows with the
    // machine's load; the CPU-time ratio does not.
    let replay = |binary: &str| {
        let (start, cpu) = (Instant::now(), children_cpu());
        let out = std::process::Command::new(binary)
            .arg("replay")
            .arg("--json")
            .arg(&path)
            .stdout(std::process::Stdio::null())
            .status()
            .expect("eboard replay runs");
        assert!(out.success(), "eboard replay failed: {out}");
        (start.elapsed(), children_cpu() - cpu)
    };
    let floor_time = || {
        let (start, cpu) = (Instant::now(), thread_cpu());
        floor(sans);
        (start.elapsed(), thread_cpu() - cpu)
    };
    let load = || std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let load_before = load();
    let mut floors = Vec::new();
    let mut times = vec![Vec::new(); binaries.len()];
    for _ in 0..ROUNDS {
        floors.push(floor_time());
        for (i, (_, binary)) in binaries.iter().enumerate() {
            times[i].push(replay(binary));
        }
    }
    let median = |t: &[(Duration, Duration)], cpu: bool| {
        let mut t: Vec<Duration> = t.iter().map(|&(w, c)| if cpu { c } else { w }).collect();
        t.sort_unstable();
        t[t.len() / 2]
    };
    let (floor_wall, floor_cpu) = (median(&floors, false), median(&floors, true));
    println!(
        "whole process, `eboard replay --json` of the corpus script (medians of {ROUNDS} alternating rounds, {moves} plies; load average {} before, {} after):",
        load_before.trim(),
        load().trim()
    );
    // Wall: elapsed time, start to exit, the process's threads on all the
    // machine's cores (the replay parses, reads and analyses in parallel);
    // it grows with the machine's load. CPU: the work done, whatever the
    // load (a parallel replay's CPU can exceed its wall).
    println!(
        "  floor (SAN + legal moves, one thread): {:.1} ms wall, {:.1} ms CPU",
        floor_wall.as_secs_f64() * 1e3,
        floor_cpu.as_secs_f64() * 1e3
    );
    for ((name, binary), t) in binaries.iter().zip(&times) {
        let (wall, cpu) = (median(t, false), median(t, true));
        println!(
            "  eboard replay, {name} ({binary}): wall {:.1} ms, {:.1}x the floor's wall (issue 38's figure); CPU {:.1} ms (user + system, all threads), {:.1}x the floor's CPU",
            wall.as_secs_f64() * 1e3,
            wall.as_secs_f64() / floor_wall.as_secs_f64(),
            cpu.as_secs_f64() * 1e3,
            cpu.as_secs_f64() / floor_cpu.as_secs_f64()
        );
    }
}

/// The CPU time (user and system) of the children waited for so far.
fn children_cpu() -> Duration {
    // SAFETY: getrusage only writes the struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// The CPU time of the calling thread.
fn thread_cpu() -> Duration {
    // SAFETY: clock_gettime only writes the struct it is given.
    let t = unsafe {
        let mut t: libc::timespec = std::mem::zeroed();
        libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t);
        t
    };
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// The events through an engine; the number of games, so nothing is
/// optimised away.
fn run(config: EngineConfig, events: &[TimedEvent]) -> usize {
    let mut engine = Engine::new(config);
    // The move path as a daemon runs it: CHA's full analyses (after pawn
    // moves and captures the quick test cannot settle) go to its pool.
    engine.defer_analyses();
    for ev in events {
        engine.push(ev).expect("simulated events apply");
        engine.clear_events();
    }
    engine.finish();
    black_box(engine.games().len())
}

fn main() {
    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    bench(&mut criterion);
    criterion.final_summary();
}
