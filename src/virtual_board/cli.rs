//! `eboard virtual-board`: a board script or PGN played on a virtual board.

use std::{io::Write, path::PathBuf, time::Duration};

use super::{VirtualBoard, VirtualError, VirtualOptions};
use crate::{
    event::{Millis, TimedEvent},
    pgn::read_games,
    script::parse_script,
    simulate::{Noise, SimOptions, simulate},
    transport::Protocol,
};

/// The families a virtual board can speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum VirtualProtocol {
    /// A DGT e-board with its clock.
    Dgt,
    /// A Millennium ChessLink.
    Millennium,
}

impl From<VirtualProtocol> for Protocol {
    fn from(p: VirtualProtocol) -> Protocol {
        match p {
            VirtualProtocol::Dgt => Protocol::Dgt,
            VirtualProtocol::Millennium => Protocol::Millennium,
        }
    }
}

/// A time window of a script, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Start.
    pub from: Millis,
    /// End.
    pub to: Millis,
}

fn parse_window(s: &str) -> Result<Window, String> {
    let bad = || format!("expected FROM-TO in milliseconds (like 60000-75000), not '{s}'");
    let (a, b) = s.split_once('-').ok_or_else(bad)?;
    let from: Millis = a.trim().parse().map_err(|_| bad())?;
    let to: Millis = b.trim().parse().map_err(|_| bad())?;
    if to <= from {
        return Err(format!("the window {s} ends before it starts"));
    }
    Ok(Window { from, to })
}

/// `eboard virtual-board`.
#[derive(Debug, Clone, clap::Args)]
pub struct VirtualBoardArgs {
    /// The board script to play (a PGN file with --pgn; `-` for standard
    /// input).
    pub file: PathBuf,
    /// The board family to speak.
    #[arg(long, value_enum, default_value = "dgt")]
    pub protocol: VirtualProtocol,
    /// FILE is PGN: its games are played the way people play them (as
    /// `eboard simulate` does), with a clock on a DGT board.
    #[arg(long)]
    pub pgn: bool,
    /// Random seed of the simulation and of the sensor artefacts.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Play this many times faster than the script's timestamps.
    #[arg(long, default_value_t = 1.0)]
    pub speed: f64,
    /// With --pgn, the noise of the simulation: none, human or rough.
    #[arg(long, default_value = "human", value_parser = clap::value_parser!(Noise))]
    pub noise: Noise,
    /// DGT: report every move cleanly, without the artefacts of the
    /// sensor sweep (a piece on two squares, arrival before departure).
    #[arg(long)]
    pub no_artefacts: bool,
    /// Keep a symbolic link at PATH pointing at the board's device: a
    /// stable name that survives --unplug, like /dev/serial/by-id.
    #[arg(long, value_name = "PATH")]
    pub link: Option<PathBuf>,
    /// Pull the USB cable from script time FROM to TO (milliseconds), for
    /// example 60000-75000; the board comes back on a new device. May be
    /// given several times.
    #[arg(long, value_name = "FROM-TO", value_parser = parse_window)]
    pub unplug: Vec<Window>,
    /// Set the board up turned round: White's pieces on the side its
    /// squares are numbered a8–h8, a common mistake in playing halls (the
    /// clock keeps its sides).
    #[arg(long)]
    pub rotated: bool,
    /// Start playing at once, instead of when a host asks for the board.
    #[arg(long)]
    pub no_wait: bool,
    /// Exit when the script has been played, instead of staying connected
    /// until Ctrl-C.
    #[arg(long)]
    pub exit_at_end: bool,
}

/// Why `eboard virtual-board` failed.
#[derive(Debug, thiserror::Error)]
pub enum VirtualBoardError {
    /// The input could not be read.
    #[error("{file}: {source}")]
    Read {
        /// The file.
        file: String,
        /// What went wrong.
        source: std::io::Error,
    },
    /// The input is not a valid script or PGN file.
    #[error("{0}")]
    Input(String),
    /// The board failed.
    #[error(transparent)]
    Board(#[from] VirtualError),
    /// The async runtime could not start.
    #[error("cannot start the runtime: {0}")]
    Runtime(std::io::Error),
    /// Writing the output failed.
    #[error("writing output: {0}")]
    Write(std::io::Error),
}

fn read(path: &PathBuf) -> Result<(String, String), VirtualBoardError> {
    let (name, bytes) = if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes).map_err(|source| {
            VirtualBoardError::Read {
                file: "<stdin>".into(),
                source,
            }
        })?;
        ("<stdin>".to_owned(), bytes)
    } else {
        let name = path.display().to_string();
        let bytes = std::fs::read(path).map_err(|source| VirtualBoardError::Read {
            file: name.clone(),
            source,
        })?;
        (name, bytes)
    };
    let text = String::from_utf8(bytes)
        .map_err(|e| VirtualBoardError::Input(format!("{name}: not UTF-8 text ({e})")))?;
    Ok((name, text))
}

/// The events the arguments ask to play.
pub fn events(args: &VirtualBoardArgs) -> Result<Vec<TimedEvent>, VirtualBoardError> {
    let (name, text) = read(&args.file)?;
    if args.pgn {
        let games = read_games(text.as_bytes())
            .map_err(|e| VirtualBoardError::Input(format!("{name}: {e}")))?;
        let opts = SimOptions {
            seed: args.seed,
            occupancy: false,
            clock: args.protocol == VirtualProtocol::Dgt,
            noise: args.noise,
            ..SimOptions::default()
        };
        Ok(simulate(&games, &opts))
    } else {
        let lines =
            parse_script(&name, &text).map_err(|e| VirtualBoardError::Input(e.to_string()))?;
        Ok(lines.into_iter().map(|l| l.event).collect())
    }
}

/// Runs `eboard virtual-board` until the script ends (with
/// `--exit-at-end`) or Ctrl-C.
pub fn run(args: &VirtualBoardArgs, out: &mut dyn Write) -> Result<(), VirtualBoardError> {
    let events = events(args)?;
    let protocol = Protocol::from(args.protocol);
    let mut options = VirtualOptions::new(protocol);
    options.plan.artefacts = protocol == Protocol::Dgt && !args.no_artefacts;
    options.plan.seed = args.seed;
    options.plan.unplugged = args.unplug.iter().map(|w| (w.from, w.to)).collect();
    options.plan.rotated = args.rotated;
    options.speed = args.speed;
    options.wait_for_host = !args.no_wait;
    options.link = args.link.clone();
    options.linger = !args.exit_at_end;
    options.log = true;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(VirtualBoardError::Runtime)?;
    let last = events.last().map_or(0, |e| e.at);
    let board = VirtualBoard::start(&events, options)?;
    writeln!(out, "{}", board.path()).map_err(VirtualBoardError::Write)?;
    out.flush().map_err(VirtualBoardError::Write)?;
    eprintln!(
        "eboard: virtual {protocol} board on {} playing {} events ({} s of script) at speed {}{}",
        board.device(),
        events.len(),
        last / 1000,
        args.speed,
        if args.no_wait {
            ""
        } else {
            "; it starts when a host asks for the board"
        }
    );
    eprintln!(
        "eboard: read it with: eboard watch {} --protocol {protocol}",
        board.path()
    );
    rt.block_on(async {
        let ctrl_c = tokio::signal::ctrl_c();
        tokio::pin!(ctrl_c);
        while !board.is_finished() {
            tokio::select! {
                _ = &mut ctrl_c => break,
                _ = tokio::time::sleep(Duration::from_millis(100)) => {}
            }
        }
    });
    board.stop();
    let report = board.join()?;
    eprintln!(
        "eboard: virtual board done: {} bytes sent, {} read, {} dropped",
        report.bytes_sent, report.bytes_read, report.bytes_dropped
    );
    Ok(())
}
