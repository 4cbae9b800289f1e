//! `eboard watch`: one live board in the terminal. Reads the board through
//! the same reader a daemon uses, prints each move and alert as the engine
//! sees it, and the PGN of the session on Ctrl-C. With `--record` it also
//! writes a byte capture for bug reports.

use std::{io::Write, path::PathBuf, time::Duration};

use super::{BoardMessage, Protocol, ReaderConfig, TransportError, spawn_board};
use crate::{
    engine::{Engine, EngineConfig, GameEvent},
    event::Millis,
    protocol::dgt,
    replay::{game_reports, reported_games},
    rules::RuleSet,
};

/// `eboard watch`.
#[derive(Debug, Clone, clap::Args)]
pub struct WatchArgs {
    /// The serial port (see `eboard ports`).
    pub port: String,
    /// The board family.
    #[arg(long, value_enum)]
    pub protocol: Protocol,
    /// Write a capture of every byte the board sends to this file (replay
    /// it with `eboard replay --format <protocol>`).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// DGT: White sits on the clock's right-hand side.
    #[arg(long)]
    pub white_on_right: bool,
    /// At the end print one JSON object per game instead of PGN.
    #[arg(long)]
    pub json: bool,
    /// The rule set: standard, rapid or blitz.
    #[arg(long, default_value = "standard", value_parser = clap::value_parser!(RuleSet))]
    pub rules: RuleSet,
    /// How long (ms) a board state must stand before it counts.
    #[arg(long, default_value_t = EngineConfig::default().settle_ms)]
    pub settle_ms: u64,
    /// The board turned round (`rotated`): needed for occupancy boards;
    /// boards that identify pieces are recognised turned round.
    #[arg(long, default_value = "normal", value_parser = clap::value_parser!(crate::engine::Orientation))]
    pub orientation: crate::engine::Orientation,
}

/// Why `eboard watch` stopped.
#[derive(Debug, thiserror::Error)]
pub enum WatchError {
    /// The reader could not start.
    #[error(transparent)]
    Transport(#[from] TransportError),
    /// The async runtime could not start.
    #[error("cannot start the runtime: {0}")]
    Runtime(std::io::Error),
    /// Writing the output failed.
    #[error("writing output: {0}")]
    Write(#[from] std::io::Error),
}

fn stamp(at: Millis) -> String {
    format!(
        "{}:{:02}:{:02}.{}",
        at / 3_600_000,
        at / 60_000 % 60,
        at / 1000 % 60,
        at % 1000 / 100
    )
}

/// Runs `eboard watch` until Ctrl-C.
pub fn run(args: &WatchArgs, out: &mut dyn Write) -> Result<(), WatchError> {
    let mut config = ReaderConfig::new(args.port.clone(), args.protocol);
    config.record = args.record.clone();
    config.link.dgt = dgt::Config {
        white_on_left: !args.white_on_right,
    };
    let mut engine = Engine::new(EngineConfig {
        settle_ms: args.settle_ms,
        rules: args.rules,
        orientation: args.orientation,
        ..EngineConfig::default()
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(WatchError::Runtime)?;
    let mut handle = spawn_board(config)?;
    eprintln!(
        "eboard: watching {} ({}); Ctrl-C prints the PGN and stops",
        args.port, args.protocol
    );
    rt.block_on(async {
        let mut tick = tokio::time::interval(Duration::from_millis(100));
        let ctrl_c = tokio::signal::ctrl_c();
        tokio::pin!(ctrl_c);
        loop {
            tokio::select! {
                _ = &mut ctrl_c => break,
                message = handle.recv() => match message {
                    None => break,
                    Some(BoardMessage::Event(e)) => push(&mut engine, &e),
                    Some(BoardMessage::Events(events)) => {
                        for e in &events {
                            push(&mut engine, e);
                        }
                    }
                    Some(BoardMessage::Connection { at, state }) => {
                        eprintln!("eboard: [{}] {}: {state}", stamp(at), args.port);
                    }
                    Some(BoardMessage::Note { at, text }) => {
                        eprintln!("eboard: [{}] {text}", stamp(at));
                    }
                    Some(BoardMessage::Family { at, protocol }) => {
                        let family = super::probe::family_name(protocol);
                        eprintln!("eboard: [{}] {}: answers as {family}", stamp(at), args.port);
                    }
                    Some(BoardMessage::Alert { at, kind, message }) => {
                        eprintln!("eboard: [{}] {kind}: {message}", stamp(at));
                    }
                },
                // The last state of the board is read once it has stood
                // long enough, even if nothing else happens. Only then: the
                // engine's time must not run ahead of the board's while the
                // board is away, or what its log gives back afterwards,
                // dated within the outage, would be read as simultaneous.
                _ = tick.tick() => {
                    let now = handle.now();
                    if engine.next_deadline().is_some_and(|due| due <= now) {
                        engine.advance_to(now);
                    }
                }
            }
            print_events(&mut engine, out)?;
        }
        Ok::<(), WatchError>(())
    })?;
    handle.stop();
    engine.finish();
    print_events(&mut engine, out)?;
    if args.json {
        for report in game_reports(&engine) {
            let line = serde_json::to_string(&report).map_err(std::io::Error::other)?;
            writeln!(out, "{line}")?;
        }
    } else {
        for game in reported_games(&engine) {
            write!(out, "{}", game.to_pgn())?;
        }
    }
    out.flush()?;
    Ok(())
}

fn push(engine: &mut Engine, e: &crate::event::TimedEvent) {
    if let Err(err) = engine.push(e) {
        eprintln!("eboard: [{}] {err}", stamp(e.at));
    }
}

fn print_events(engine: &mut Engine, out: &mut dyn Write) -> std::io::Result<()> {
    for e in engine.drain_events() {
        match e {
            GameEvent::GameStarted { game, at } => {
                writeln!(out, "[{}] game {} started", stamp(at), game + 1)?;
            }
            GameEvent::MoveMade { game, ply, san, at } => {
                let dots = if ply % 2 == 1 { "." } else { "..." };
                writeln!(
                    out,
                    "[{}] game {}: {}{dots} {san}",
                    stamp(at),
                    game + 1,
                    ply.div_ceil(2)
                )?;
            }
            GameEvent::MovesRetracted { game, ply, at } => {
                writeln!(
                    out,
                    "[{}] game {}: record back to {ply} half-moves",
                    stamp(at),
                    game + 1
                )?;
            }
            GameEvent::Alert { game, alert } => {
                writeln!(
                    out,
                    "game {}: ALERT {}: {}",
                    game + 1,
                    alert.kind.as_str(),
                    alert.message
                )?;
            }
            GameEvent::GameOver {
                game,
                outcome,
                termination,
                at,
            } => {
                writeln!(
                    out,
                    "[{}] game {} over: {} ({})",
                    stamp(at),
                    game + 1,
                    outcome.as_str(),
                    termination.describe()
                )?;
            }
            GameEvent::MoveCompleted { .. } | GameEvent::GameResumed { .. } => {}
        }
    }
    out.flush()
}
