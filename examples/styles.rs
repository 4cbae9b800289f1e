//! Prints how well eboard follows each kind of board: every game of a PGN
//! file (by default the lichess sample the tests use) generated in every
//! style, with and without piece identity and clock, replayed, and counted.
//! Two generators make the streams: the simulator (`sim`) and the
//! board-physics generator (`physics`); over several seeds, each row gives
//! the worst seed's numbers.
//!
//! ```sh
//! cargo run --release --example styles                  # the whole sample, sim, seed 1
//! cargo run --release --example styles -- --every 10    # every 10th game
//! cargo run --release --example styles -- games.pgn --seed 3
//! cargo run --release --example styles -- --every 20 --why scan-1000   # where each game went wrong
//! cargo run --release --example styles -- --generator physics --seeds 1,2,3,4,5 --every 4 \
//!     --write --stamp 2026-11-28                                     # docs/performance/board-styles.md
//! cargo run --release --example styles -- --generator both --seeds 1,2,3,4,5 --every 10 \
//!     --physics-every 20 --write --readme --stamp 2026-11-28         # and the README's table
//! ```
//!
//! With `--write` or `--readme`, two test seeds are drawn fresh (never 1–9
//! nor a seed measured) and written beside the table, unless `--test-seeds
//! A,B` names them: the test suite samples games on those seeds.

use std::process::ExitCode;

use shakmaty::uci::UciMove;

use eboard::{
    pgn::{ImportedGame, read_games},
    replay::reported_games,
    replay_script,
    simulate::{
        STYLES, SeedRow, Tally, Variant, compact_table, differences, fresh_seeds, measure,
        physics::{PHYSICS_STYLES, PhysicsStyle, measure_physics, physics_game},
        seeds_table, session, worst,
    },
};

const DEFAULT_WRITE: &str = "docs/performance/board-styles.md";

/// What the command line asked for.
struct Args {
    file: String,
    every: usize,
    seeds: Vec<u64>,
    why: Option<String>,
    sim: bool,
    physics: bool,
    only: Option<Vec<String>>,
    write: Option<String>,
    stamp: Option<String>,
    /// Games of the physics generator: one in this many (its search makes
    /// each game dearer than the simulator's).
    physics_every: Option<usize>,
    /// Also put the compact table and the test seeds in the README.
    readme: bool,
    /// The test suite's seeds, if given; otherwise drawn fresh.
    test_seeds: Option<[u64; 2]>,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        file: String::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../shared/corpus/lichess-sample.pgn"
        )),
        every: 1,
        seeds: vec![1],
        why: None,
        sim: true,
        physics: false,
        only: None,
        write: None,
        stamp: None,
        physics_every: None,
        readme: false,
        test_seeds: None,
    };
    let mut args = std::env::args().skip(1).peekable();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--every" => match args.next().and_then(|v| v.parse::<usize>().ok()) {
                Some(k) if k > 0 => a.every = k,
                _ => return Err("--every needs a number from 1".into()),
            },
            "--seed" => match args.next().and_then(|v| v.parse::<u64>().ok()) {
                Some(s) => a.seeds = vec![s],
                None => return Err("--seed needs a number".into()),
            },
            "--seeds" => {
                let list = args.next().unwrap_or_default();
                let seeds: Result<Vec<u64>, _> = list.split(',').map(str::parse).collect();
                match seeds {
                    Ok(s) if !s.is_empty() => a.seeds = s,
                    _ => return Err("--seeds needs numbers separated by commas".into()),
                }
            }
            "--generator" => match args.next().as_deref() {
                Some("sim") => (a.sim, a.physics) = (true, false),
                Some("physics") => (a.sim, a.physics) = (false, true),
                Some("both") => (a.sim, a.physics) = (true, true),
                _ => return Err("--generator needs sim, physics or both".into()),
            },
            "--styles" => {
                a.only = args
                    .next()
                    .map(|v| v.split(',').map(str::to_owned).collect())
            }
            "--write" => {
                a.write = Some(match args.peek() {
                    Some(p) if !p.starts_with("--") => args.next().unwrap_or_default(),
                    _ => DEFAULT_WRITE.to_owned(),
                })
            }
            "--stamp" => a.stamp = args.next(),
            "--physics-every" => match args.next().and_then(|v| v.parse::<usize>().ok()) {
                Some(k) if k > 0 => a.physics_every = Some(k),
                _ => return Err("--physics-every needs a number from 1".into()),
            },
            "--readme" => a.readme = true,
            "--test-seeds" => {
                let list = args.next().unwrap_or_default();
                let seeds: Result<Vec<u64>, _> = list.split(',').map(str::parse).collect();
                match seeds.as_deref() {
                    Ok(&[x, y]) if x != y => a.test_seeds = Some([x, y]),
                    _ => return Err("--test-seeds needs two different numbers: A,B".into()),
                }
            }
            "--why" => a.why = args.next(),
            _ if arg.starts_with("--") => return Err(format!("unknown option {arg}")),
            _ => a.file = arg,
        }
    }
    Ok(a)
}

fn main() -> ExitCode {
    let a = match parse_args() {
        Ok(a) => a,
        Err(e) => return usage(&e),
    };
    let text = match std::fs::read_to_string(&a.file) {
        Ok(text) => text,
        Err(e) => return usage(&format!("{}: {e}", a.file)),
    };
    let games = match read_games(text.as_bytes()) {
        Ok(games) => games,
        Err(e) => return usage(&format!("{}: {e}", a.file)),
    };
    if let Some(name) = &a.why
        && let Some(style) = PHYSICS_STYLES.iter().find(|s| s.name == name)
    {
        // Numbered as the table samples physics games, so a game the table
        // counts is the game explained.
        let every = a.physics_every.unwrap_or(a.every);
        return why_physics(&games, style, every, a.seeds[0]);
    }
    if let Some(name) = &a.why {
        let games: Vec<_> = games.into_iter().step_by(a.every).collect();
        return why(&games, name, a.seeds[0]);
    }
    let wanted = |name: &str| a.only.as_ref().is_none_or(|o| o.iter().any(|n| n == name));
    let mut rows = Vec::new();
    if a.sim {
        for style in STYLES.iter().filter(|s| wanted(s.name)) {
            let picked: Vec<_> = games.iter().step_by(a.every).cloned().collect();
            rows.extend(rows_for("sim", style.name, &a.seeds, |variant, seed| {
                measure(&picked, style, variant, seed)
            }));
        }
    }
    if a.physics {
        for style in PHYSICS_STYLES.iter().filter(|s| wanted(s.name)) {
            rows.extend(rows_for(
                "physics",
                style.name,
                &a.seeds,
                |variant, seed| {
                    measure_physics(
                        &games,
                        a.physics_every.unwrap_or(a.every),
                        style,
                        variant,
                        seed,
                    )
                },
            ));
        }
    }
    let table = seeds_table(&rows);
    print!("{table}");
    if a.write.is_none() && !a.readme {
        return ExitCode::SUCCESS;
    }
    let test_seeds = a.test_seeds.unwrap_or_else(|| {
        // Fresh each time the table is made: the clock is the entropy, and
        // the seeds measured here or looked at while developing (1–9) are
        // never the test suite's.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        let mut used: Vec<u64> = (1..=9).collect();
        used.extend(&a.seeds);
        fresh_seeds(now, &used)
    });
    if let Some(path) = &a.write {
        let doc = document(&a, &table, games.len(), test_seeds);
        if let Err(e) = std::fs::write(path, doc) {
            return usage(&format!("{path}: {e}"));
        }
        eprintln!("styles: wrote {path}");
    }
    if a.readme {
        if let Err(e) = write_readme(&a, &compact_table(&rows), test_seeds) {
            return usage(&format!("{README}: {e}"));
        }
        eprintln!("styles: wrote the table in {README}");
    }
    ExitCode::SUCCESS
}

const README: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/README.md");
const BEGIN: &str = "<!-- styles table: written by `examples/styles --readme` -->";
const END: &str = "<!-- end of styles table -->";

/// The line the test suite reads its two seeds from.
fn test_seeds_line(seeds: [u64; 2]) -> String {
    format!(
        "Test seeds: {}, {} (drawn fresh when this table was made; the test suite samples its \
         games on them and allows no wrong move where this table has none).",
        seeds[0], seeds[1]
    )
}

/// Replaces the README's table (between its two markers) with `table`.
fn write_readme(a: &Args, table: &str, seeds: [u64; 2]) -> std::io::Result<()> {
    let text = std::fs::read_to_string(README)?;
    let (Some(begin), Some(end)) = (text.find(BEGIN), text.find(END)) else {
        return Err(std::io::Error::other(format!(
            "no `{BEGIN}` … `{END}` markers"
        )));
    };
    let list: Vec<String> = a.seeds.iter().map(u64::to_string).collect();
    let section = format!(
        "{BEGIN}\n\nEach cell: games exact / games with a wrong move / plies missing / games \
         with a false alarm, the worst of seeds {} ({}, {}).\n\n{table}\n{}\n\n",
        list.join(", "),
        sample_words(a),
        a.stamp.as_deref().unwrap_or("an unstated date"),
        test_seeds_line(seeds),
    );
    let new = format!("{}{section}{}", &text[..begin], &text[end..]);
    std::fs::write(README, new)
}

/// Which games were played, in words.
fn sample_words(a: &Args) -> String {
    let physics = a.physics_every.unwrap_or(a.every);
    match (a.sim, a.physics) {
        (true, true) if physics != a.every => format!(
            "one game in {} for the simulator, one in {physics} for the physics generator",
            a.every
        ),
        _ => format!("one game in {}", a.every),
    }
}

/// Every variant of one style, each the worst of the seeds.
fn rows_for(
    generator: &'static str,
    style: &'static str,
    seeds: &[u64],
    mut run: impl FnMut(Variant, u64) -> Tally,
) -> Vec<SeedRow> {
    let mut rows = Vec::new();
    for variant in Variant::ALL {
        let mut tallies = Vec::new();
        for &seed in seeds {
            eprintln!("{generator} {style} ({}), seed {seed}...", variant.label());
            tallies.push((seed, run(variant, seed)));
        }
        if let Some((seed, tally)) = worst(&tallies) {
            rows.push(SeedRow {
                generator,
                style,
                variant,
                seed,
                tally,
            });
        }
    }
    rows
}

/// The Markdown file: what made it, then the table.
fn document(a: &Args, table: &str, games: usize, test_seeds: [u64; 2]) -> String {
    let generator = match (a.sim, a.physics) {
        (true, true) => "both",
        (false, true) => "physics",
        _ => "sim",
    };
    let seeds: Vec<String> = a.seeds.iter().map(u64::to_string).collect();
    let mut command = format!(
        "cargo run --release --example styles -- --generator {generator} --seeds {} --every {}",
        seeds.join(","),
        a.every
    );
    if let Some(k) = a.physics_every {
        command.push_str(&format!(" --physics-every {k}"));
    }
    if let Some(only) = &a.only {
        command.push_str(&format!(" --styles {}", only.join(",")));
    }
    format!(
        "# How eboard follows each kind of board\n\n\
         Made by `{command} --write` on {} ({} of the {games} games of the PGN file), \
         seeds {}. Each row gives the worst seed's numbers (most wrong moves, then false \
         alarms, then plies missing). Dropped games are those the physics generator's own \
         search could not decide; they are not counted in the other columns. See \
         `docs/guide/physics-generator.md`.\n\n{table}\n{}\n",
        a.stamp.as_deref().unwrap_or("an unstated date"),
        sample_words(a),
        seeds.join(", "),
        test_seeds_line(test_seeds),
    )
}

/// For each game of a simulator style the engine did not record exactly,
/// where its record first differs.
fn why(games: &[ImportedGame], name: &str, seed: u64) -> ExitCode {
    let Some(style) = STYLES.iter().find(|s| s.name == name) else {
        return usage(&format!("no style {name}"));
    };
    for variant in Variant::ALL {
        println!("{} ({}):", style.name, variant.label());
        for line in differences(games, style, variant, seed) {
            println!("  {line}");
        }
        if let Ok(dir) = std::env::var("STYLES_DUMP") {
            // The scripts themselves, to replay with `eboard replay`.
            for (i, game) in games.iter().enumerate() {
                let name = format!(
                    "{dir}/{}-{}{}-{i}.board",
                    style.name,
                    if variant.identity { "i" } else { "o" },
                    if variant.clock { "c" } else { "n" }
                );
                let script = session(game, style, variant, seed, i);
                if let Err(e) = std::fs::write(&name, script) {
                    return usage(&format!("{name}: {e}"));
                }
            }
        }
    }
    ExitCode::SUCCESS
}

/// As [`why`], for a physics style: the games are numbered as
/// `measure_physics` numbers them (every `every`-th of the file).
fn why_physics(games: &[ImportedGame], style: &PhysicsStyle, every: usize, seed: u64) -> ExitCode {
    for variant in Variant::ALL {
        println!("{} ({}):", style.name, variant.label());
        for (i, game) in games.iter().enumerate().step_by(every) {
            let Some(made) = physics_game(game, style, variant, seed, i) else {
                continue;
            };
            if let Ok(dir) = std::env::var("STYLES_DUMP") {
                let name = format!(
                    "{dir}/{}-{}{}-{i}.board",
                    style.name,
                    if variant.identity { "i" } else { "o" },
                    if variant.clock { "c" } else { "n" }
                );
                if let Err(e) = std::fs::write(&name, &made.script) {
                    return usage(&format!("{name}: {e}"));
                }
            }
            let Ok(engine) = replay_script("physics", &made.script, style.engine(variant)) else {
                println!("  game {i}: the script does not replay");
                continue;
            };
            let replayed = reported_games(&engine);
            let got = replayed.first().map_or(&[][..], |g| g.moves());
            let at = got
                .iter()
                .zip(&game.moves)
                .take_while(|(a, b)| a.mv == **b)
                .count();
            let alerts: Vec<String> = replayed
                .iter()
                .flat_map(|g| &g.alerts)
                .map(|a| format!("{}@{}", a.kind.as_str(), a.ply))
                .collect();
            if at == game.moves.len() && got.len() == at && alerts.is_empty() {
                continue;
            }
            println!(
                "  game {i}: ply {}: recorded {:?}, played {:?}; {} of {} plies; alerts {}",
                at + 1,
                got.get(at).map(|m| m.san.to_string()),
                game.moves
                    .get(at)
                    .map(|&m| UciMove::from_standard(m).to_string()),
                got.len(),
                game.moves.len(),
                alerts.join(" ")
            );
        }
    }
    ExitCode::SUCCESS
}

fn usage(message: &str) -> ExitCode {
    eprintln!(
        "styles: {message}\nusage: styles [PGN] [--every K] [--seed N | --seeds N,M,...] \
         [--generator sim|physics|both] [--physics-every K] [--styles A,B] [--write [PATH]] [--readme] \
         [--test-seeds A,B] [--stamp DATE] [--why STYLE]"
    );
    ExitCode::from(2)
}
