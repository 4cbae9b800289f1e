//! The command line: `eboard init`, `eboard replay`, `eboard simulate`,
//! `eboard analyze`, `eboard ports`, `eboard watch`, `eboard virtual-board`,
//! `eboard run`, `eboard serve`, `eboard demo`.

use std::{
    io::{self, Read, Write},
    path::PathBuf,
    process::ExitCode,
};

use clap::{Parser, Subcommand};

use crate::{
    engine::{EngineConfig, Orientation},
    pgn::read_games,
    replay::{json_lines, replay_script_with, reported_games},
    rules::{Laws, RuleSet},
    script::write_script,
    simulate::{self, Hostile, Noise, SimOptions, physics::PhysicsOptions, simulate},
};

/// Watches electronic chess boards: reconstructs the moves really played,
/// alerts the arbiter, writes PGN.
#[derive(Debug, Parser)]
#[command(name = "eboard", version, about)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Reads a board script (or a byte capture of a board) and prints the
    /// PGN of every game in it.
    Replay {
        /// The board script (`-` for standard input).
        file: PathBuf,
        /// What FILE is: a board script, or a capture of a board's bytes
        /// (from `eboard watch --record`, or raw bytes without timing).
        #[arg(long, value_enum, default_value = "script")]
        format: crate::transport::capture::ReplayFormat,
        /// Print one JSON object per game (JSON lines) instead of PGN.
        #[arg(long)]
        json: bool,
        /// The rule set: standard, rapid or blitz.
        #[arg(long, default_value = "standard", value_parser = clap::value_parser!(RuleSet))]
        rules: RuleSet,
        /// The edition of the FIDE Laws: 2023 (in force from 1 January 2023)
        /// or 2005.
        #[arg(long, default_value = "2023", value_parser = clap::value_parser!(Laws))]
        laws: Laws,
        /// How long (ms) a board state must stand before it counts; shorter
        /// states are sliding pieces and sensor flicker.
        #[arg(long, default_value_t = EngineConfig::default().settle_ms)]
        settle_ms: u64,
        /// The board turned round (`rotated`): needed for occupancy boards;
        /// boards that identify pieces are recognised turned round.
        #[arg(long, default_value = "normal", value_parser = clap::value_parser!(Orientation))]
        orientation: Orientation,
    },
    /// Turns every game of a PGN file into a board script, the way people
    /// really play.
    Simulate {
        /// The PGN file (`-` for standard input).
        file: PathBuf,
        /// Random seed: the same seed gives the same script.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// An occupancy-only board (no piece letters).
        #[arg(long)]
        occupancy: bool,
        /// Press the clock after each move, with time reports.
        #[arg(long)]
        clock: bool,
        /// Noise: none, human or rough.
        #[arg(long, default_value = "human", value_parser = clap::value_parser!(Noise))]
        noise: Noise,
        /// A board that reports only full scans, one every N ms (100–1000
        /// on real boards), skipping positions in between.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=60_000))]
        scan_ms: Option<u64>,
        /// Sensor blips of 5–60 ms on any square.
        #[arg(long)]
        blips: bool,
        /// Slow hands: the rook put down up to 5 s after the king, pieces
        /// held in the hand up to 20 s.
        #[arg(long)]
        slow_hands: bool,
        /// Cable outages of 1–10 plies, each ending with the board's dump.
        #[arg(long)]
        outages: bool,
        /// The board turned round (White's pieces on the a8–h8 side).
        #[arg(long)]
        rotated: bool,
        /// Every hostile option at once (scans every 700 ms unless
        /// `--scan-ms` says otherwise, rough noise).
        #[arg(long)]
        hostile: bool,
        /// Use the board-physics generator: a physical timeline per move
        /// sampled as the board kind reports it; games its own search
        /// cannot decide are left out (counted on standard error).
        #[arg(long)]
        physics: bool,
    },
    /// Tells whether each side can still checkmate by any series of legal
    /// moves, and whether the position is dead (Art. 5.2.2).
    Analyze(crate::analyze::AnalyzeArgs),
    /// Lists the serial ports, with what USB says about them and which
    /// board family answers on each.
    Ports(crate::transport::ports::PortsArgs),
    /// Reads a board live: prints each move as it is made, the PGN on
    /// Ctrl-C; `--record` writes a byte capture for bug reports.
    Watch(crate::transport::watch::WatchArgs),
    /// Plays a board script (or PGN) on a virtual board on a
    /// pseudo-terminal, speaking a board's byte protocol; prints the
    /// device path.
    VirtualBoard(crate::virtual_board::cli::VirtualBoardArgs),
    /// Writes a commented event file for a first round (simulated boards,
    /// one commented line per hardware family) that `eboard run --config`
    /// starts as it is.
    Init(crate::init::InitArgs),
    /// Runs the daemon for one event round (an event file from
    /// `eboard init`): boards, journals, live PGN, server-sent events and
    /// the arbiters' dashboard.
    Run(crate::daemon::RunArgs),
    /// Serves a whole event from the stream hall nodes publish to
    /// (`eboard run --publish`): `--from nats://HOST:PORT`.
    Serve(crate::daemon::central::CentralArgs),
    /// Runs the daemon on a bundled event of 8 simulated boards.
    Demo(crate::daemon::demo::DemoArgs),
    /// Reads a round's pairings (PGN of tags, or TRF-16) and prints the
    /// boards' players as `[[board]]` entries, for checking before the
    /// round.
    Pairings(crate::pairings::PairingsArgs),
    /// Writes a round's results from the boards' records into the
    /// tournament's TRF-16 file (printed), or as CSV.
    Results(crate::results::ResultsArgs),
    /// Measures the daemon under load (simulated boards at blitz pace).
    #[command(hide = true)]
    Loadtest(crate::daemon::loadtest::LoadtestArgs),
    /// Measures hall nodes publishing through NATS into one central.
    #[command(hide = true)]
    LoadtestHalls(crate::daemon::halls_load::HallsLoadArgs),
}

impl clap::builder::ValueParserFactory for RuleSet {
    type Parser = clap::builder::ValueParser;
    fn value_parser() -> Self::Parser {
        clap::builder::ValueParser::new(|s: &str| s.parse::<RuleSet>())
    }
}

impl clap::builder::ValueParserFactory for Laws {
    type Parser = clap::builder::ValueParser;
    fn value_parser() -> Self::Parser {
        clap::builder::ValueParser::new(|s: &str| s.parse::<Laws>())
    }
}

impl clap::builder::ValueParserFactory for Noise {
    type Parser = clap::builder::ValueParser;
    fn value_parser() -> Self::Parser {
        clap::builder::ValueParser::new(|s: &str| s.parse::<Noise>())
    }
}

/// A failure to report: one line, and the exit status.
struct Failure(String, u8);

impl Failure {
    /// Bad input: exit status 2.
    fn input(message: String) -> Failure {
        Failure(message, 2)
    }
}

fn daemon_failure(e: crate::daemon::DaemonError) -> Failure {
    Failure(e.to_string(), e.exit_code())
}

fn read_input(path: &PathBuf, purpose: &str) -> Result<(String, String), Failure> {
    if path.as_os_str() == "-" {
        let mut text = String::new();
        io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| Failure::input(format!("<stdin>: {e}")))?;
        Ok(("<stdin>".to_owned(), text))
    } else {
        let name = path.display().to_string();
        let bytes = std::fs::read(path)
            .map_err(|e| Failure::input(crate::files::unreadable(purpose, path, &e)))?;
        let text = String::from_utf8(bytes)
            .map_err(|e| Failure::input(format!("{name}: not UTF-8 text ({e})")))?;
        Ok((name, text))
    }
}

fn read_bytes(path: &PathBuf) -> Result<(String, Vec<u8>), Failure> {
    if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| Failure::input(format!("<stdin>: {e}")))?;
        Ok(("<stdin>".to_owned(), bytes))
    } else {
        let name = path.display().to_string();
        let bytes = std::fs::read(path)
            .map_err(|e| Failure::input(crate::files::unreadable("capture file", path, &e)))?;
        Ok((name, bytes))
    }
}

/// Runs the command line; returns the process exit status (2 for bad input).
pub fn main() -> ExitCode {
    // Before any thread starts (see the function).
    crate::daemon::limits::limit_malloc_arenas();
    let cli = Cli::parse();
    let mut stdout = io::stdout().lock();
    match run(cli, &mut stdout) {
        Ok(0) => ExitCode::SUCCESS,
        Ok(code) => ExitCode::from(code),
        Err(Failure(message, code)) => {
            let _ = stdout.flush();
            eprintln!("eboard: {message}");
            ExitCode::from(code)
        }
    }
}

/// A replay is a batch of a second or so: memory it frees is kept for
/// its next allocations rather than given back to the system at once.
/// With glibc's defaults the solver's tables, allocated and freed for
/// every full analysis, were mapped, faulted in page by page and unmapped
/// again, and the heap's top was trimmed and grown back: a tenth of the
/// replay's page faults and about 5% of its CPU time (issue 38). Pages
/// are still only faulted in when used: the resident size does not grow.
fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets parameters of glibc's allocator, which
    // takes its own lock; it touches no memory of ours.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 64 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
        libc::mallopt(libc::M_TOP_PAD, 64 << 20);
    }
}

/// `eboard replay`: a script or a capture through the engine, the games
/// out as PGN or JSON lines.
fn replay(
    file: &std::path::PathBuf,
    format: crate::transport::capture::ReplayFormat,
    json: bool,
    config: EngineConfig,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let write_err = |e: io::Error| Failure::input(format!("writing output: {e}"));
    keep_freed_memory();
    // Whole games, most of them shorter than this.
    crate::game::make_games_with_room(128);
    let engine = match format.protocol() {
        None => {
            let (name, text) = read_input(file, "board script")?;
            let bar = crate::progress::bar(None, "replaying board events");
            let mut progress = |done: usize, total: usize| {
                // Every 256 events: the bar redraws at most 20 times a second anyway.
                if done.is_multiple_of(256) {
                    bar.set_length(total as u64);
                    bar.set_position(done as u64);
                }
            };
            let engine = replay_script_with(&name, &text, config, &mut progress);
            bar.finish_and_clear();
            engine.map_err(|e| Failure(e.to_string(), e.exit_code()))?
        }
        Some(protocol) => {
            let (name, bytes) = read_bytes(file)?;
            crate::transport::capture::replay_capture(
                &name,
                &bytes,
                protocol,
                Default::default(),
                config,
            )
            .map_err(|e| Failure::input(e.to_string()))?
        }
    };
    if json {
        let lines = json_lines(&engine).map_err(|e| Failure::input(e.to_string()))?;
        out.write_all(&lines).map_err(write_err)?;
    } else {
        for game in reported_games(&engine) {
            write!(out, "{}", game.to_pgn()).map_err(write_err)?;
        }
    }
    // The command ends here: its games, every position of every one, go
    // with the process rather than allocation by allocation.
    std::mem::forget(engine);
    Ok(())
}

/// `eboard simulate`: every game of a PGN file as a board script, made by
/// the simulator or (`physics`) the board-physics generator.
fn simulate_file(
    file: &PathBuf,
    opts: &SimOptions,
    physics: bool,
    out: &mut dyn Write,
) -> Result<(), Failure> {
    let write_err = |e: io::Error| Failure::input(format!("writing output: {e}"));
    let (name, text) = read_input(file, "PGN file")?;
    let games = read_games(text.as_bytes()).map_err(|e| Failure::input(format!("{name}: {e}")))?;
    if physics {
        let physics = PhysicsOptions {
            seed: opts.seed,
            occupancy: opts.occupancy,
            clock: opts.clock,
            scan_ms: opts.hostile.scan_ms,
            blips: opts.hostile.blips,
            slow_hands: opts.hostile.slow_hands,
            outages: opts.hostile.outages,
            rotated: opts.hostile.rotated,
            ..PhysicsOptions::default()
        };
        let session = simulate::physics::physics(&games, &physics);
        eprintln!("{}", session.report.summary());
        return out
            .write_all(write_script(&session.events).as_bytes())
            .map_err(write_err);
    }
    // The simulator works on the whole file at once: a spinner shows it is
    // at work.
    let bar = crate::progress::bar(None, &format!("simulating {} game(s)", games.len()));
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    let script = write_script(&simulate(&games, opts));
    bar.finish_and_clear();
    out.write_all(script.as_bytes()).map_err(write_err)
}

fn run(cli: Cli, out: &mut dyn Write) -> Result<u8, Failure> {
    let write_err = |e: io::Error| Failure::input(format!("writing output: {e}"));
    match cli.command {
        Command::Replay {
            file,
            format,
            json,
            rules,
            laws,
            settle_ms,
            orientation,
        } => {
            let config = EngineConfig {
                settle_ms,
                rules,
                laws,
                orientation,
                ..EngineConfig::default()
            };
            replay(&file, format, json, config, out)?;
        }
        Command::Simulate {
            file,
            seed,
            occupancy,
            clock,
            noise,
            scan_ms,
            blips,
            slow_hands,
            outages,
            rotated,
            hostile,
            physics,
        } => {
            let opts = SimOptions {
                seed,
                occupancy,
                clock,
                noise: if hostile { Noise::Rough } else { noise },
                hostile: Hostile {
                    scan_ms: scan_ms.or(hostile.then_some(700)),
                    blips: blips || hostile,
                    slow_hands: slow_hands || hostile,
                    outages: outages || hostile,
                    rotated: rotated || hostile,
                },
            };
            simulate_file(&file, &opts, physics, out)?;
        }
        Command::Ports(args) => {
            crate::transport::ports::run(&args, out).map_err(|e| Failure(e.to_string(), 1))?;
        }
        Command::Watch(args) => {
            crate::transport::watch::run(&args, out).map_err(|e| Failure(e.to_string(), 1))?;
        }
        Command::VirtualBoard(args) => {
            crate::virtual_board::cli::run(&args, out).map_err(|e| Failure(e.to_string(), 1))?;
        }
        Command::Init(args) => {
            crate::init::run(&args, out).map_err(|e| Failure(e.to_string(), 1))?;
        }
        Command::Run(args) => crate::daemon::run(&args).map_err(daemon_failure)?,
        Command::Serve(args) => crate::daemon::central::run(&args).map_err(daemon_failure)?,
        Command::Demo(args) => crate::daemon::demo::run(&args).map_err(daemon_failure)?,
        Command::Results(args) => {
            let text = crate::results::run(&args).map_err(|e| Failure::input(e.to_string()))?;
            out.write_all(text.as_bytes()).map_err(write_err)?;
        }
        Command::Pairings(args) => {
            let text = crate::pairings::run(&args).map_err(|e| Failure::input(e.to_string()))?;
            out.write_all(text.as_bytes()).map_err(write_err)?;
        }
        Command::LoadtestHalls(args) => {
            crate::daemon::halls_load::run(&args).map_err(daemon_failure)?
        }
        Command::Loadtest(args) => crate::daemon::loadtest::run(&args).map_err(daemon_failure)?,
        Command::Analyze(args) => {
            let code = crate::analyze::run(&args, out)
                .map_err(|e| Failure(e.to_string(), u8::try_from(e.exit_code()).unwrap_or(1)))?;
            out.flush().map_err(write_err)?;
            return Ok(u8::try_from(code).unwrap_or(1));
        }
    }
    out.flush().map_err(write_err)?;
    Ok(0)
}
