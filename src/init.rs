//! `eboard init [DIR]`: a commented event file for a first round, on
//! simulated boards, that `eboard run --config DIR/event.toml` starts as it
//! is; the lines to turn each board into a hardware one are there,
//! commented.

use std::{
    io::{self, Write},
    path::{Path, PathBuf},
};

use crate::daemon::demo::DEMO_PGN;

/// The event file `eboard init` writes.
pub const EVENT_TOML: &str = r#"# A round for `eboard run --config event.toml`, written by `eboard init`.
#
# As it is, four simulated boards play the games of games.pgn (beside this
# file): start it, open the dashboard, and see a round run. Then replace a
# board's `source` with the serial port of a real board (`eboard ports`
# lists them). Every key is described in docs/reference/config.md of
# eboard's documentation; a key eboard does not know is an error, so typos
# are caught before the round starts.

event = "Club Championship"     # the Event tag of every game
site = "Club Hall"              # the Site tag
round = "1"                     # each game's Round tag is "<round>.<board>"
# date = "2026.11.28"           # the Date tag, YYYY.MM.DD
rules = "standard"              # standard, rapid or blitz: the penalties alerts name
# time_control = "5400+30"      # the TimeControl tag
# settle_ms = 150               # how long (ms) a board state must stand before it counts

# One [[board]] table per board, in broadcast order.
#
# source = "pgn:FILE" plays the games of a PGN file on a simulated board
# (game = N picks one). For a board on a serial port, use one of:
#   source = "serial:/dev/ttyUSB0"       # any family: eboard finds which
#   source = "dgt:/dev/ttyACM0"          # a DGT board (USB or Bluetooth)
#   source = "millennium:/dev/ttyUSB0"   # a Millennium ChessLink
#   source = "certabo:/dev/ttyUSB0"      # a Certabo or Tabutronic Sentio board
# On Linux prefer the stable path /dev/serial/by-id/... that `eboard ports`
# prints: /dev/ttyACM0 and its neighbours change when a cable is pulled.

[[board]]
id = 1
source = "pgn:games.pgn"
# source = "dgt:/dev/ttyACM0"
game = 1
white = { name = "Morphy, Paul", title = "GM" }
black = { name = "Isouard, Count" }

[[board]]
id = 2
source = "pgn:games.pgn"
# source = "millennium:/dev/ttyUSB0"
game = 2
white = { name = "Anderssen, Adolf" }
black = { name = "Kieseritzky, Lionel" }

[[board]]
id = 3
source = "pgn:games.pgn"
# source = "certabo:/dev/ttyUSB1"
game = 3
white = { name = "Anderssen, Adolf" }
black = { name = "Dufresne, Jean" }

[[board]]
id = 4
source = "pgn:games.pgn"
# source = "serial:/dev/ttyUSB2"
# orientation = "rotated"       # an occupancy board (Sentio) set up turned round
game = 4
white = { name = "Steinitz, Wilhelm", fide_id = 1000004 }
black = { name = "von Bardeleben, Curt", elo = 2400 }

# Push the round to a lichess broadcast (see the organiser's guide):
# [lichess]
# token_file = "lichess.token"  # a file with only the API token, mode 600
# round = "AbCd1234"            # the lichess round's id
"#;

/// `eboard init`'s arguments.
#[derive(Debug, Clone, clap::Args)]
pub struct InitArgs {
    /// The directory to write event.toml and games.pgn into (created if
    /// missing).
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// Overwrite event.toml and games.pgn if they exist.
    #[arg(long)]
    pub force: bool,
}

/// Why `eboard init` wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// A file is there already.
    #[error("{0} exists: eboard init does not overwrite it (--force does)")]
    Exists(PathBuf),
    /// A file or the directory could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The file or directory.
        path: PathBuf,
        /// What went wrong.
        source: io::Error,
    },
}

/// Writes `DIR/event.toml` and `DIR/games.pgn`, then says what to run next.
pub fn run(args: &InitArgs, out: &mut dyn Write) -> Result<(), InitError> {
    let files = [
        (args.dir.join("event.toml"), EVENT_TOML),
        (args.dir.join("games.pgn"), DEMO_PGN),
    ];
    if !args.force
        && let Some((path, _)) = files.iter().find(|(p, _)| p.exists())
    {
        return Err(InitError::Exists(path.clone()));
    }
    let fail = |path: &Path| {
        let path = path.to_owned();
        move |source| InitError::Write { path, source }
    };
    std::fs::create_dir_all(&args.dir).map_err(fail(&args.dir))?;
    for (path, text) in &files {
        std::fs::write(path, text).map_err(fail(path))?;
    }
    let config = files[0].0.display();
    let written = writeln!(
        out,
        "wrote {config} (4 simulated boards) and {}\nstart the round: eboard run --config {config}",
        files[1].0.display()
    );
    // The files are written; a closed standard output changes nothing.
    drop(written);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::config::{EventConfig, Source};

    #[test]
    fn the_file_is_a_valid_round_of_simulated_boards() {
        let c = EventConfig::parse("event.toml", EVENT_TOML).unwrap();
        assert_eq!(c.boards.len(), 4);
        assert!(
            c.boards
                .iter()
                .all(|b| b.source.as_ref().is_some_and(Source::is_simulated))
        );
        // Each board plays its own game of the bundled round.
        let games: Vec<_> = c.boards.iter().map(|b| b.game).collect();
        assert_eq!(games, [Some(1), Some(2), Some(3), Some(4)]);
        let bundled = crate::pgn::read_games(DEMO_PGN.as_bytes()).unwrap();
        assert!(bundled.len() >= 4);
    }

    #[test]
    fn each_commented_hardware_line_is_valid_as_it_stands() {
        let mut families = Vec::new();
        for line in EVENT_TOML.lines() {
            let Some(source) = line.strip_prefix("# source = ") else {
                continue;
            };
            // Swap the board's simulated source (the line above) for the
            // commented one.
            let text = EVENT_TOML.replacen(
                &format!("source = \"pgn:games.pgn\"\n{line}\n"),
                &format!("{}\n", &line[2..]),
                1,
            );
            if text == EVENT_TOML {
                // A line of the explanation at the top, not a board's.
                continue;
            }
            let c =
                EventConfig::parse("event.toml", &text).unwrap_or_else(|e| panic!("{line}: {e}"));
            let live: Vec<Source> = c
                .boards
                .iter()
                .filter_map(|b| b.source.clone())
                .filter(|s| !s.is_simulated())
                .collect();
            assert_eq!(live.len(), 1, "{source}");
            families.push(live[0].to_string().split(':').next().unwrap().to_owned());
        }
        families.sort();
        assert_eq!(families, ["certabo", "dgt", "millennium", "serial"]);
    }

    #[test]
    fn an_existing_file_is_kept_unless_forced() {
        let dir = tempfile::tempdir().unwrap();
        let args = InitArgs {
            dir: dir.path().join("round"),
            force: false,
        };
        let mut out = Vec::new();
        run(&args, &mut out).unwrap();
        let config = args.dir.join("event.toml");
        assert_eq!(std::fs::read_to_string(&config).unwrap(), EVENT_TOML);
        std::fs::write(&config, "mine").unwrap();
        assert!(matches!(run(&args, &mut out), Err(InitError::Exists(p)) if p == config));
        assert_eq!(std::fs::read_to_string(&config).unwrap(), "mine");
        let forced = InitArgs {
            force: true,
            ..args
        };
        run(&forced, &mut out).unwrap();
        assert_eq!(std::fs::read_to_string(&config).unwrap(), EVENT_TOML);
    }
}
