//! Cost of the winnability checks.
//!
//! 1. Quick test ([`can_checkmate_fast`]) on every position of the corpus
//!    games, both sides: criterion timing of the whole set, plus a
//!    per-position distribution.
//! 2. Full analysis ([`can_checkmate`]) on the CHA test vectors, both
//!    sides: mean, median, p99 and max, measured with `Instant` because
//!    criterion reports no percentiles.
//!
//! `cargo bench --bench winnability`. Under `cargo test --benches` (no
//! `--bench` flag) only a few positions are run, as a smoke test.

use std::{
    fs,
    hint::black_box,
    ops::ControlFlow,
    path::PathBuf,
    time::{Duration, Instant},
};

use criterion::{Criterion, Throughput};
use eboard::{
    analyze::parse_fen_line,
    winnability::{Budget, Verdict, can_checkmate, can_checkmate_fast},
};
use pgn_reader::{Reader, SanPlus, Visitor};
use shakmaty::{Chess, Color, Position};

fn corpus(name: &str) -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus")
        .join(name);
    if path.exists() {
        Some(path)
    } else {
        println!("skipped: {} not found", path.display());
        None
    }
}

/// Collects the position after every move of every game.
#[derive(Default)]
struct Positions {
    all: Vec<Chess>,
}

impl Visitor for Positions {
    type Tags = ();
    type Movetext = Chess;
    type Output = ();

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, _tags: ()) -> ControlFlow<Self::Output, Chess> {
        ControlFlow::Continue(Chess::default())
    }

    fn san(&mut self, pos: &mut Chess, san: SanPlus) -> ControlFlow<Self::Output> {
        match san.san.to_move(pos) {
            Ok(m) => {
                pos.play_unchecked(m);
                self.all.push(pos.clone());
                ControlFlow::Continue(())
            }
            // A game from a set-up position or with a bad move: keep what
            // was collected and go on with the next game.
            Err(_) => ControlFlow::Break(()),
        }
    }

    fn end_game(&mut self, _pos: Chess) -> Self::Output {}
}

fn game_positions() -> Vec<Chess> {
    let Some(path) = corpus("lichess-sample.pgn") else {
        return Vec::new();
    };
    let mut positions = Positions::default();
    Reader::new(fs::File::open(path).expect("open PGN"))
        .visit_all_games(&mut positions)
        .expect("read PGN");
    positions.all
}

fn vector_positions() -> Vec<Chess> {
    let Some(path) = corpus("unwinnability-test-vector.txt") else {
        return Vec::new();
    };
    fs::read_to_string(path)
        .expect("read test vectors")
        .lines()
        .filter(|line| line.len() > 3 && !line.starts_with('#'))
        // Two-character label, then the FEN.
        .map(|line| {
            parse_fen_line(&line[2..])
                .expect("test-vector FEN")
                .position
        })
        .collect()
}

struct Stats {
    count: usize,
    mean: Duration,
    median: Duration,
    p99: Duration,
    max: Duration,
}

fn stats(mut times: Vec<Duration>) -> Stats {
    times.sort_unstable();
    let count = times.len();
    let at = |q: f64| times[((count as f64 * q).ceil() as usize).clamp(1, count) - 1];
    Stats {
        count,
        mean: times.iter().sum::<Duration>() / count as u32,
        median: at(0.5),
        p99: at(0.99),
        max: times[count - 1],
    }
}

fn print_stats(what: &str, s: &Stats) {
    println!(
        "{what}: n={} mean={:.2?} p50={:.2?} p99={:.2?} max={:.2?}",
        s.count, s.mean, s.median, s.p99, s.max
    );
}

fn fast_test(c: &mut Criterion, positions: &[Chess]) {
    let mut group = c.benchmark_group("winnability");
    group.throughput(Throughput::Elements(2 * positions.len() as u64));
    group.bench_function("fast test, corpus game positions x 2 sides", |b| {
        b.iter(|| {
            for pos in positions {
                black_box(can_checkmate_fast(black_box(pos), Color::White));
                black_box(can_checkmate_fast(black_box(pos), Color::Black));
            }
        })
    });
    group.finish();

    let mut times = Vec::with_capacity(2 * positions.len());
    let mut proven = 0;
    for pos in positions {
        for side in [Color::White, Color::Black] {
            let start = Instant::now();
            let verdict = can_checkmate_fast(black_box(pos), side);
            times.push(start.elapsed());
            proven += usize::from(verdict == Verdict::No);
        }
    }
    print_stats("fast test per position and side (games)", &stats(times));
    println!("fast test: {proven} (position, side) pairs proven unable to mate");
}

fn full_analysis(positions: &[Chess]) {
    let mut times = Vec::with_capacity(2 * positions.len());
    let mut unknown = 0;
    let mut slowest: Vec<(Duration, String, Color)> = Vec::new();
    for pos in positions {
        for side in [Color::White, Color::Black] {
            let start = Instant::now();
            let analysis = can_checkmate(pos, side, Budget::DETERMINISTIC).expect("analysis");
            let elapsed = start.elapsed();
            times.push(elapsed);
            unknown += usize::from(analysis.verdict == Verdict::Unknown);
            slowest.push((elapsed, fen(pos), side));
            slowest.sort_unstable_by_key(|entry| std::cmp::Reverse(entry.0));
            slowest.truncate(3);
        }
    }
    print_stats(
        "full analysis per position and side (test vectors)",
        &stats(times),
    );
    println!("full analysis: {unknown} unknown");
    for (time, fen, side) in slowest {
        println!("  slow: {time:.2?} {side} to mate in {fen}");
    }
}

fn fen(pos: &Chess) -> String {
    shakmaty::fen::Fen::from_position(pos, shakmaty::EnPassantMode::Legal).to_string()
}

fn main() {
    // cargo passes --bench only for `cargo bench`; otherwise smoke-test.
    let benching = std::env::args().any(|arg| arg == "--bench");
    let mut games = game_positions();
    let mut vectors = vector_positions();
    if !benching {
        games.truncate(50);
        vectors.truncate(20);
    }
    println!(
        "{} game positions, {} test-vector positions",
        games.len(),
        vectors.len()
    );

    let mut criterion = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .configure_from_args();
    if !games.is_empty() {
        fast_test(&mut criterion, &games);
    }
    if !vectors.is_empty() {
        full_analysis(&vectors);
    }
    criterion.final_summary();
}
