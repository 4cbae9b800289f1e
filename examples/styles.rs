//! Prints how well eboard follows each kind of board: every game of a PGN
//! file (by default the lichess sample the tests use) simulated in every
//! style, with and without piece identity and clock, replayed, and counted.
//!
//! ```sh
//! cargo run --release --example styles                  # the whole sample
//! cargo run --release --example styles -- --every 10    # every 10th game
//! cargo run --release --example styles -- games.pgn --seed 3
//! cargo run --release --example styles -- --every 20 --why scan-1000   # where each game went wrong
//! ```

use std::process::ExitCode;

use eboard::{
    pgn::read_games,
    simulate::{STYLES, Variant, differences, measure, session, table},
};

fn main() -> ExitCode {
    let mut file = String::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../shared/corpus/lichess-sample.pgn"
    ));
    let mut every = 1usize;
    let mut seed = 1u64;
    let mut why: Option<String> = None;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--every" => match args.next().and_then(|v| v.parse::<usize>().ok()) {
                Some(k) if k > 0 => every = k,
                _ => return usage("--every needs a number from 1"),
            },
            "--seed" => match args.next().and_then(|v| v.parse::<u64>().ok()) {
                Some(s) => seed = s,
                None => return usage("--seed needs a number"),
            },
            "--why" => why = args.next(),
            _ if arg.starts_with("--") => return usage(&format!("unknown option {arg}")),
            _ => file = arg,
        }
    }
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) => return usage(&format!("{file}: {e}")),
    };
    let games = match read_games(text.as_bytes()) {
        Ok(games) => games,
        Err(e) => return usage(&format!("{file}: {e}")),
    };
    let games: Vec<_> = games.into_iter().step_by(every).collect();
    if let Some(name) = why {
        let Some(style) = STYLES.iter().find(|s| s.name == name) else {
            return usage(&format!("no style {name}"));
        };
        for variant in Variant::ALL {
            println!("{} ({}):", style.name, variant.label());
            for line in differences(&games, style, variant, seed) {
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
        return ExitCode::SUCCESS;
    }
    let mut rows = Vec::new();
    for style in STYLES {
        for variant in Variant::ALL {
            eprintln!(
                "{} ({}): {} games...",
                style.name,
                variant.label(),
                games.len()
            );
            rows.push((*style, variant, measure(&games, style, variant, seed)));
        }
    }
    print!("{}", table(&rows));
    ExitCode::SUCCESS
}

fn usage(message: &str) -> ExitCode {
    eprintln!("styles: {message}\nusage: styles [PGN] [--every K] [--seed N] [--why STYLE]");
    ExitCode::from(2)
}
