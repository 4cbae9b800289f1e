//! A whole board script through the engine, and the report of its games.

use serde::Serialize;

use std::sync::mpsc::Sender;

use crate::{
    engine::{Confirmation, Engine, EngineConfig, EngineError, MateCheck},
    event::side_name,
    failsafe::{Injected, catch},
    game::Game,
    script::{ScriptError, parse_script},
    winnability::{Budget, Verdict, mate_verdict},
};

/// Why a script could not be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// A malformed line.
    #[error(transparent)]
    Script(#[from] ScriptError),
    /// A line the engine cannot apply.
    #[error("{file}:{line}: {source}")]
    Engine {
        file: String,
        /// The 1-based line.
        line: usize,
        /// What is wrong.
        source: EngineError,
    },
    /// The engine panicked (a bug in eboard): the line it was reading.
    #[error(
        "{file}:{line}: the engine failed on this line ({message}); this is a bug in eboard: please report it with the script"
    )]
    Panic {
        file: String,
        /// The 1-based line (the last one when the end of the input was
        /// being read).
        line: usize,
        /// The panic's message.
        message: String,
    },
}

impl ReplayError {
    /// The exit status `eboard replay` gives: 3 for a failure of the
    /// engine, 2 for bad input.
    pub fn exit_code(&self) -> u8 {
        match self {
            ReplayError::Panic { .. } => 3,
            _ => 2,
        }
    }
}

/// Replays a script and returns the engine at its end. Nothing is applied
/// unless the whole script parses.
pub fn replay_script(file: &str, text: &str, config: EngineConfig) -> Result<Engine, ReplayError> {
    replay_script_with(file, text, config, &mut |_, _| {})
}

/// [`replay_script`], calling `progress(done, total)` as the script's
/// events go through the engine (`eboard replay`'s progress bar).
///
/// A replay knows how each game went on, which a live board does not:
/// the script is first read with every position that needs CHA's full
/// dead-position analysis taken as alive, then those positions are
/// confirmed by how their games went on ([`crate::engine::confirm_alive`]: a position
/// the game left by legal moves for an alive one, or for checkmate, is
/// alive), analysing only the last of each stretch, in parallel. Only when
/// one may be dead is the script read again, in line with the verdicts
/// found: the same record as analysing every position in line.
///
/// Flag falls and resignations are scored as losses in the first reading
/// and their verdicts ("can the winner still mate?") computed meanwhile on
/// another thread ([`Engine::assume_mates_in_line`]); the first reading
/// stands when every one is "yes", and is read again with the verdicts
/// found otherwise: the same record as computing each in line.
pub fn replay_script_with(
    file: &str,
    text: &str,
    config: EngineConfig,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Engine, ReplayError> {
    let lines = parse_script(file, text)?;
    let mut mates: Vec<(MateCheck, Verdict)> = Vec::new();
    let mut engine = loop {
        let mut engine = Engine::new(config);
        engine.assume_alive_in_line();
        engine.know_mate_verdicts(&mates);
        let Some(found) = first_reading(file, &lines, &mut engine, progress)? else {
            // The thread computing the verdicts was lost: they are
            // computed in line.
            let mut engine = Engine::new(config);
            engine.assume_alive_in_line();
            read_lines(file, &lines, &mut engine, progress, None)?;
            break engine;
        };
        let stands = found.iter().all(|(_, verdict)| *verdict == Verdict::Yes);
        if stands {
            engine.mates_confirmed(&found);
            break engine;
        }
        // Each reading adds the verdicts it met: the readings end.
        mates.extend(found);
    };
    match engine.confirm_first_reading() {
        Confirmation::Alive => Ok(engine),
        Confirmation::Unsure(known) => {
            let mut engine = Engine::new(config);
            engine.know_dead_verdicts(known);
            engine.know_mate_verdicts(&mates);
            read_lines(file, &lines, &mut engine, progress, None)?;
            Ok(engine)
        }
    }
}

/// A first reading ([`Engine::assume_mates_in_line`]), the verdicts of the
/// flag falls and resignations it scored provisionally computed meanwhile
/// on another thread, and returned; `None` if that thread was lost.
fn first_reading(
    file: &str,
    lines: &[crate::script::ScriptLine],
    engine: &mut Engine,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Option<Vec<(MateCheck, Verdict)>>, ReplayError> {
    engine.assume_mates_in_line();
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::channel::<MateCheck>();
        let worker = scope.spawn(move || {
            // A panic in the solver is caught inside `mate_verdict`; one
            // anywhere else loses the thread's verdicts, not the replay.
            catch(|| {
                rx.iter()
                    .map(|check| {
                        let verdict =
                            mate_verdict(&check.position, check.side, Budget::DETERMINISTIC)
                                .unwrap_or(Verdict::Unknown);
                        (check, verdict)
                    })
                    .collect::<Vec<_>>()
            })
            .ok()
        });
        read_lines(file, lines, engine, progress, Some(&tx))?;
        drop(tx);
        Ok(worker.join().ok().flatten())
    })
}

/// Reads the script's lines into `engine`, to the end of the input.
fn read_lines(
    file: &str,
    lines: &[crate::script::ScriptLine],
    engine: &mut Engine,
    progress: &mut dyn FnMut(usize, usize),
    mates: Option<&Sender<MateCheck>>,
) -> Result<(), ReplayError> {
    // Sent as they come, for the verdicts to be computed meanwhile; a
    // receiver gone (its thread lost) is told by its result.
    let send = |engine: &mut Engine| {
        if let Some(tx) = mates {
            for check in engine.take_assumed_mates() {
                let _ = tx.send(check);
            }
        }
    };
    let inject = Injected::from_env();
    let panicked = |line: usize, message: String| ReplayError::Panic {
        file: file.to_owned(),
        line,
        message,
    };
    for (done, line) in lines.iter().enumerate() {
        progress(done, lines.len());
        let n = done as u64 + 1;
        catch(|| {
            if let Some(hook) = inject {
                hook.check(None, n);
            }
            engine.push(&line.event)
        })
        .map_err(|message| panicked(line.line, message))?
        .map_err(|source| ReplayError::Engine {
            file: file.to_owned(),
            line: line.line,
            source,
        })?;
        // The events are for live listeners; a replay only wants the record.
        engine.clear_events();
        send(engine);
    }
    let last = lines.last().map_or(1, |l| l.line);
    catch(|| engine.finish()).map_err(|message| panicked(last, message))?;
    send(engine);
    Ok(())
}

/// The games worth reporting: all of them but a last one in which nothing
/// happened (the board set up again after the last game).
pub fn reported_games(engine: &Engine) -> &[Game] {
    let games = engine.games();
    match games.split_last() {
        Some((last, rest)) if !rest.is_empty() && last.is_untouched() => rest,
        _ => games,
    }
}

/// One alert in `replay --json`.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct AlertReport {
    /// The alert kind, snake_case.
    pub kind: &'static str,
    /// Half-moves recorded when it was raised.
    pub ply: usize,
    /// `white`, `black` or null.
    pub side: Option<&'static str>,
    /// What happened.
    pub message: String,
    /// What the Laws prescribe, if anything.
    pub ruling: Option<String>,
}

/// One game in `replay --json` (one JSON object per line).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct GameReport {
    /// The moves in SAN.
    pub moves: Vec<String>,
    /// The moves in UCI.
    pub uci: Vec<String>,
    /// `1-0`, `0-1`, `1/2-1/2` or `*`.
    pub result: &'static str,
    /// How the game ended, snake_case, or null.
    pub termination: Option<&'static str>,
    /// The final position.
    pub fen: String,
    /// The alerts raised.
    pub alerts: Vec<AlertReport>,
    /// The game as PGN.
    pub pgn: String,
    /// The plies (from 1) of illegal moves play continued from; they are in
    /// `moves`, and the PGN splits there (see [`Game::to_pgn`]).
    pub illegal_moves: Vec<usize>,
    /// Whether the board and the record were in step at the end: `ok`,
    /// `searching`, `ambiguous` or `lost` (only the session's current game
    /// can be other than `ok`).
    pub sync: &'static str,
    /// While `ambiguous`: the sequences of moves that could follow `moves`,
    /// each in SAN, as the `out_of_sync` alert numbers them.
    pub candidates: Vec<String>,
}

/// The reports of the games worth reporting ([`reported_games`]); the
/// session's current game carries the board's sync state and candidates.
pub fn game_reports(engine: &Engine) -> Vec<GameReport> {
    let games = reported_games(engine);
    let current = engine.games().len() - 1;
    games
        .iter()
        .enumerate()
        .map(|(i, game)| {
            let mut report = GameReport::new(game);
            if i == current {
                report.sync = engine.sync_state().as_str();
                report.candidates = engine.candidates_san();
            }
            report
        })
        .collect()
}

/// A move's SAN as text, written straight into a string of its size
/// (through `Display` it went character by character into a string that
/// grew twice).
fn san_text(san: shakmaty::san::SanPlus) -> String {
    let mut text = String::with_capacity(8);
    san.append_to_string(&mut text);
    text
}

impl GameReport {
    /// The report of a game.
    pub fn new(game: &Game) -> GameReport {
        GameReport {
            moves: game.moves().iter().map(|m| san_text(m.san)).collect(),
            uci: game.uci_moves(),
            result: game.outcome().as_str(),
            termination: game.termination().map(|t| t.as_str()),
            fen: game.fen(),
            alerts: game
                .alerts
                .iter()
                .map(|a| AlertReport {
                    kind: a.kind.as_str(),
                    ply: a.ply,
                    side: a.side.map(side_name),
                    message: a.message.clone(),
                    ruling: a.ruling.clone(),
                })
                .collect(),
            pgn: game.to_pgn(),
            illegal_moves: game
                .moves()
                .iter()
                .enumerate()
                .filter(|(_, m)| m.illegal)
                .map(|(i, _)| i + 1)
                .collect(),
            sync: "ok",
            candidates: Vec::new(),
        }
    }
}
