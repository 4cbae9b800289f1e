//! The resynchronisation search: time per resynchronisation after an outage
//! of 2, 4, 6 and 8 plies on a board that identifies pieces (the full dump
//! after a reconnection), against a floor measured in the same run.
//!
//! Cases: from every game of the corpus (../shared/corpus/lichess-sample.pgn,
//! or the bundled pgn/ games when it is absent), every tenth position, with
//! the game's own next plies as the outage. The p50 and p99 over the cases
//! are printed first (timed case by case, best of three runs each), then
//! criterion measures the whole set:
//! - `floor/legal_moves`: generating the legal moves of each start position
//!   once, the least any search must do;
//! - `resync/outage_N`: the search for every case of N plies.

use std::{hint::black_box, time::Instant};

mod common;

use common::corpus;
use criterion::{Criterion, criterion_group, criterion_main};
use eboard::{Limits, Target, pgn::read_games, resync};
use shakmaty::{Chess, Position};

/// (start position, dump after the outage) for outages of `plies`.
fn cases(text: &str, plies: usize) -> Vec<(Chess, Target)> {
    let games = read_games(text.as_bytes()).expect("corpus reads");
    let mut out = Vec::new();
    for game in &games {
        let mut positions = vec![game.start.clone()];
        for &m in &game.moves {
            let mut next = positions.last().expect("start").clone();
            next.play_unchecked(m);
            positions.push(next);
        }
        for i in (0..positions.len().saturating_sub(plies)).step_by(10) {
            let target = Target::identity(positions[i + plies].board());
            out.push((positions[i].clone(), target));
        }
    }
    out
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i]
}

fn bench(c: &mut Criterion) {
    let text = corpus();
    let limits = Limits::default();
    let all: Vec<(usize, Vec<(Chess, Target)>)> = [2, 4, 6, 8]
        .into_iter()
        .map(|n| (n, cases(&text, n)))
        .collect();
    for (plies, set) in &all {
        let mut times: Vec<f64> = set
            .iter()
            .map(|(pos, target)| {
                (0..3)
                    .map(|_| {
                        let t = Instant::now();
                        black_box(resync(pos, target, &limits));
                        t.elapsed().as_secs_f64() * 1e3
                    })
                    .fold(f64::INFINITY, f64::min)
            })
            .collect();
        times.sort_by(f64::total_cmp);
        let found = set
            .iter()
            .filter(|(pos, target)| !resync(pos, target, &limits).lines().is_empty())
            .count();
        eprintln!(
            "outage of {plies} plies: {} cases, {found} explained; p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
            set.len(),
            percentile(&times, 0.5),
            percentile(&times, 0.99),
            times.last().copied().unwrap_or(0.0)
        );
    }

    let starts: Vec<Chess> = all[0].1.iter().map(|(p, _)| p.clone()).collect();
    c.bench_function("floor/legal_moves", |b| {
        b.iter(|| {
            for pos in &starts {
                black_box(pos.legal_moves());
            }
        })
    });
    let mut group = c.benchmark_group("resync");
    group.sample_size(10);
    for (plies, set) in &all {
        group.bench_function(format!("outage_{plies}"), |b| {
            b.iter(|| {
                for (pos, target) in set {
                    black_box(resync(pos, target, &limits));
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
