//! A whole board script through the engine, and the report of its games.

use serde::Serialize;

use std::sync::mpsc::{Receiver, Sender};

use crate::{
    engine::{Confirmation, DeadCheck, Engine, EngineConfig, EngineError, MateCheck},
    event::side_name,
    failsafe::{Injected, catch},
    game::{Game, RecordedMove},
    quick_dead::open_without_the_solver,
    script::{ScriptError, ScriptLine, line_count, parse_script_in_chunks},
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
/// found otherwise: the same record as computing each in line. On that
/// thread too, the quick dead-position test sorts the positions after each
/// move ([`Engine::sort_quick_tests_later`]), and the script is parsed on
/// a third while the engine reads it.
pub fn replay_script_with(
    file: &str,
    text: &str,
    config: EngineConfig,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Engine, ReplayError> {
    // Parsed while the first reading goes on, then kept for any other.
    let mut lines: Option<Chunks> = None;
    let mut mates: Vec<(MateCheck, Verdict)> = Vec::new();
    let mut engine = loop {
        let mut engine = Engine::new(config);
        engine.assume_alive_in_line();
        engine.know_mate_verdicts(&mates);
        let found = first_reading(file, text, &mut lines, &mut engine, progress)?;
        let lines = lines.as_deref().unwrap_or_default();
        let Some(found) = found else {
            // The thread computing the verdicts was lost: they are
            // computed in line.
            let mut engine = Engine::new(config);
            engine.assume_alive_in_line();
            read_lines(file, lines, &mut engine, progress, None)?;
            break engine;
        };
        let (found, waiting) = found;
        let stands = found.iter().all(|(_, verdict)| *verdict == Verdict::Yes);
        if stands {
            engine.mates_confirmed(&found);
            engine.quick_tests_sorted(waiting);
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
            let lines = lines.as_deref().unwrap_or_default();
            read_lines(file, lines, &mut engine, progress, None)?;
            Ok(engine)
        }
    }
}

/// A script's events, in the pieces its parser handed them over.
type Chunks = Vec<Vec<ScriptLine>>;

/// Events a parser hands over at a time: a few hundred kilobytes, read
/// by the engine while the next are parsed. The first pieces are smaller
/// (from [`FIRST_CHUNK`], doubling): the reading, which the command waits
/// for, starts as soon as a few events are parsed rather than 4,096.
const CHUNK: usize = 4096;
const FIRST_CHUNK: usize = 64;

/// What a first reading leaves to another thread: a flag fall's or
/// resignation's verdict, positions for the quick test to sort.
enum Job {
    Mate(MateCheck),
    Quick(Vec<(usize, DeadCheck)>),
}

/// What that thread found: the verdicts, the positions the quick test
/// leaves to the solver.
type Found = (Vec<(MateCheck, Verdict)>, Vec<(usize, DeadCheck)>);

/// The thread's work: each job as it comes.
fn work(jobs: Receiver<Job>) -> Found {
    let (mut mates, mut waiting) = (Vec::new(), Vec::new());
    for job in jobs {
        match job {
            Job::Mate(check) => {
                let verdict = mate_verdict(&check.position, check.side, Budget::DETERMINISTIC)
                    .unwrap_or(Verdict::Unknown);
                mates.push((check, verdict));
            }
            Job::Quick(checks) => waiting.extend(
                checks
                    .into_iter()
                    .filter(|(_, check)| !open_without_the_solver(&check.position)),
            ),
        }
    }
    (mates, waiting)
}

/// A first reading ([`Engine::assume_mates_in_line`],
/// [`Engine::sort_quick_tests_later`]), the verdicts of the flag falls and
/// resignations it scored provisionally, and the quick test's sorting,
/// done meanwhile on another thread and returned; `None` if that thread
/// was lost. The script is parsed meanwhile too, on a third, unless
/// `lines` holds it already; then `lines` does.
fn first_reading(
    file: &str,
    text: &str,
    lines: &mut Option<Chunks>,
    engine: &mut Engine,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Option<Found>, ReplayError> {
    engine.assume_mates_in_line();
    engine.sort_quick_tests_later();
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::channel::<Job>();
        // The jobs wait while the parser runs: the reading, which the
        // command waits for, keeps a core of its own rather than sharing
        // two with both (the jobs are needed only at the reading's end).
        let (parsed, wait_for_parser) = std::sync::mpsc::channel::<()>();
        // A panic in the solver is caught inside `mate_verdict`; one
        // anywhere else loses the thread's work, not the replay.
        let worker = scope.spawn(move || {
            // Closed when the parser is done (or gone).
            let _ = wait_for_parser.recv();
            catch(|| work(rx)).ok()
        });
        match lines {
            Some(chunks) => {
                drop(parsed);
                read_lines(file, chunks, engine, progress, Some(&tx))?
            }
            None => {
                let chunks = read_while_parsing(file, text, engine, progress, &tx, parsed)?;
                *lines = Some(chunks)
            }
        }
        drop(tx);
        Ok(worker.join().ok().flatten())
    })
}

/// Reads the script into `engine` as another thread parses it, and
/// returns its events; `parsed` is dropped when the parser is done. Nothing is applied unless the whole script parses:
/// a malformed line is the error even when the engine failed on an
/// earlier one (what it read is dropped with it).
fn read_while_parsing(
    file: &str,
    text: &str,
    engine: &mut Engine,
    progress: &mut dyn FnMut(usize, usize),
    mates: &Sender<Job>,
    parsed: Sender<()>,
) -> Result<Chunks, ReplayError> {
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::channel::<Vec<ScriptLine>>();
        let parser = scope.spawn(move || {
            // A reader gone (the engine failed) leaves the parser to find
            // any malformed line, which is the error then.
            let result = parse_script_in_chunks(file, text, (FIRST_CHUNK, CHUNK), &mut |chunk| {
                let _ = tx.send(chunk);
            });
            drop(parsed);
            result
        });
        // Lines, not events, until the parser is done: the bar's length.
        let mut reader = Reader::new(file, line_count(text), Some(mates));
        let mut chunks = Vec::new();
        let mut failed = None;
        for chunk in rx.iter() {
            if let Err(error) = reader.read(&chunk, engine, progress) {
                failed = Some(error);
                break;
            }
            chunks.push(chunk);
        }
        drop(rx);
        parser
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        if let Some(error) = failed {
            return Err(error);
        }
        reader.finish(engine, last_line(&chunks))?;
        Ok(chunks)
    })
}

/// Reads the script's events into `engine`, to the end of the input.
fn read_lines(
    file: &str,
    lines: &[Vec<ScriptLine>],
    engine: &mut Engine,
    progress: &mut dyn FnMut(usize, usize),
    mates: Option<&Sender<Job>>,
) -> Result<(), ReplayError> {
    let total = lines.iter().map(Vec::len).sum();
    let mut reader = Reader::new(file, total, mates);
    for chunk in lines {
        reader.read(chunk, engine, progress)?;
    }
    reader.finish(engine, last_line(lines))
}

/// The script's last event line (1 for none).
fn last_line(lines: &[Vec<ScriptLine>]) -> usize {
    lines.last().and_then(|c| c.last()).map_or(1, |l| l.line)
}

/// Events read into an engine, piece by piece.
struct Reader<'a> {
    file: &'a str,
    /// Events read so far.
    done: usize,
    /// For the progress bar.
    total: usize,
    /// Where the flag falls and resignations scored provisionally go.
    mates: Option<&'a Sender<Job>>,
    inject: Option<Injected>,
}

impl<'a> Reader<'a> {
    fn new(file: &'a str, total: usize, mates: Option<&'a Sender<Job>>) -> Reader<'a> {
        Reader {
            file,
            done: 0,
            total,
            mates,
            inject: Injected::from_env(),
        }
    }

    /// Sent as they come, for the verdicts to be computed meanwhile, and
    /// the positions to sort by the batch (`all`: whatever is left); a
    /// receiver gone (its thread lost) is told by its result.
    fn send(&self, engine: &mut Engine, all: bool) {
        /// Positions sent at a time: one wake-up of the other thread per
        /// few hundred moves.
        const BATCH: usize = 512;
        if let Some(tx) = self.mates {
            for check in engine.take_assumed_mates() {
                let _ = tx.send(Job::Mate(check));
            }
            let waiting = engine.quick_tests_waiting();
            if waiting >= BATCH || all && waiting > 0 {
                let _ = tx.send(Job::Quick(engine.take_quick_tests()));
            }
        }
    }

    fn panicked(&self, line: usize, message: String) -> ReplayError {
        ReplayError::Panic {
            file: self.file.to_owned(),
            line,
            message,
        }
    }

    fn read(
        &mut self,
        lines: &[ScriptLine],
        engine: &mut Engine,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<(), ReplayError> {
        for line in lines {
            progress(self.done, self.total);
            self.done += 1;
            let n = self.done as u64;
            let inject = self.inject;
            catch(|| {
                if let Some(hook) = inject {
                    hook.check(None, n);
                }
                engine.push(&line.event)
            })
            .map_err(|message| self.panicked(line.line, message))?
            .map_err(|source| ReplayError::Engine {
                file: self.file.to_owned(),
                line: line.line,
                source,
            })?;
            // The events are for live listeners; a replay only wants the record.
            engine.clear_events();
            self.send(engine, false);
        }
        Ok(())
    }

    /// The end of the input (`last`: its last event line).
    fn finish(&self, engine: &mut Engine, last: usize) -> Result<(), ReplayError> {
        catch(|| engine.finish()).map_err(|message| self.panicked(last, message))?;
        self.send(engine, true);
        Ok(())
    }
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

/// `replay --json`'s output: one line per game worth reporting, the same
/// bytes as serialising [`game_reports`] in order. The later games' lines
/// are made on a second thread while this one makes the earlier ones: the
/// games are finished and each line depends on its game only, so the two
/// halves, joined in order, are the same text (issue 38: a tenth of the
/// command, made after the reading, when the other core is idle).
pub fn json_lines(engine: &Engine) -> Result<Vec<u8>, serde_json::Error> {
    let games = reported_games(engine);
    // The session's current game carries the board's sync state, which
    // only the engine knows: its report is made here.
    let current = engine.games().len() - 1;
    let current_report = games.get(current).map(|game| {
        let mut report = GameLine::new(game);
        report.sync = engine.sync_state().as_str();
        report.candidates = engine.candidates_san();
        report
    });
    let lines = |range: std::ops::Range<usize>| -> Result<Vec<u8>, serde_json::Error> {
        let mut out = Vec::new();
        for i in range {
            match &current_report {
                Some(report) if i == current => serde_json::to_writer(&mut out, report)?,
                _ => serde_json::to_writer(&mut out, &GameLine::new(&games[i]))?,
            }
            out.push(b'\n');
        }
        Ok(out)
    };
    let split = half_of_the_work(games);
    std::thread::scope(|scope| {
        let later = scope.spawn(|| lines(split..games.len()));
        let mut out = lines(0..split)?;
        let later = later
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        out.extend_from_slice(&later);
        Ok(out)
    })
}

/// Where to split `games` for two threads to report them in about the same
/// time: a report costs about its moves, and a few for its tags.
fn half_of_the_work(games: &[Game]) -> usize {
    let work = |game: &Game| game.ply() + 16;
    let total: usize = games.iter().map(work).sum();
    let mut done = 0;
    games
        .iter()
        .position(|game| {
            done += work(game);
            2 * done >= total
        })
        .map_or(0, |i| i + 1)
}

impl GameReport {
    /// The report of a game.
    pub fn new(game: &Game) -> GameReport {
        let line = GameLine::new(game);
        GameReport {
            moves: game
                .moves()
                .iter()
                .map(|m| crate::game::san_text(m.san))
                .collect(),
            uci: game.uci_moves(),
            result: line.result,
            termination: line.termination,
            fen: line.fen,
            alerts: line.alerts,
            pgn: line.pgn,
            illegal_moves: line.illegal_moves,
            sync: line.sync,
            candidates: line.candidates,
        }
    }
}

/// A [`GameReport`] as [`json_lines`] writes it: the same fields in the
/// same order, serialised to the same JSON, but with the moves written
/// from the game through one buffer instead of a string each (issue 38:
/// two allocations per move, a tenth of the reports).
#[derive(Serialize)]
struct GameLine<'a> {
    moves: Sans<'a>,
    uci: Ucis<'a>,
    result: &'static str,
    termination: Option<&'static str>,
    fen: String,
    alerts: Vec<AlertReport>,
    pgn: String,
    illegal_moves: Vec<usize>,
    sync: &'static str,
    candidates: Vec<String>,
}

impl GameLine<'_> {
    fn new(game: &Game) -> GameLine<'_> {
        GameLine {
            moves: Sans(game.moves()),
            uci: Ucis(game.moves()),
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

/// The moves in SAN, serialised as [`GameReport::moves`] is.
struct Sans<'a>(&'a [RecordedMove]);

/// The moves in UCI, serialised as [`GameReport::uci`] is.
struct Ucis<'a>(&'a [RecordedMove]);

impl Serialize for Sans<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        texts(serializer, self.0, |m, text| m.san.append_to_string(text))
    }
}

impl Serialize for Ucis<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        texts(serializer, self.0, |m, text| {
            shakmaty::uci::UciMove::from_standard(m.mv).append_to_string(text)
        })
    }
}

/// A sequence of one string per move, as a `Vec<String>` is serialised,
/// each written by `write` into the same buffer.
fn texts<S: serde::Serializer>(
    serializer: S,
    moves: &[RecordedMove],
    write: impl Fn(&RecordedMove, &mut String),
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeSeq;
    let mut seq = serializer.serialize_seq(Some(moves.len()))?;
    let mut text = String::with_capacity(8);
    for m in moves {
        text.clear();
        write(m, &mut text);
        seq.serialize_element(text.as_str())?;
    }
    seq.end()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `replay --json`'s lines, made on two threads, are the reports of
    /// [`game_reports`] serialised in order, the current game's (still
    /// under way, a piece in the hand) with its sync state.
    #[test]
    fn json_lines_are_the_game_reports_in_order() {
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR";
        let mut script = String::new();
        for (i, game) in ["A", "B", "C", "D"].iter().enumerate() {
            let at = 10_000 * i;
            script.push_str(&format!("@{at} tag White {game}\n@{at} board {start}\n"));
            script.push_str(&format!(
                "@{} lift e2\n@{} place e4 P\n",
                at + 1000,
                at + 1300
            ));
            script.push_str(&format!(
                "@{} lift e7\n@{} place e5 p\n",
                at + 2000,
                at + 2300
            ));
            if i < 3 {
                script.push_str(&format!("@{} resign white\n", at + 3000));
            }
        }
        script.push_str("@40000 lift g1\n");
        let engine = replay_script("t", &script, EngineConfig::default()).unwrap();
        let reports = game_reports(&engine);
        assert_eq!(reports.len(), 4);
        let mut expected = String::new();
        for report in &reports {
            expected.push_str(&serde_json::to_string(report).unwrap());
            expected.push('\n');
        }
        let lines = json_lines(&engine).unwrap();
        assert_eq!(String::from_utf8(lines).unwrap(), expected);
    }

    /// Nothing is applied unless the whole script parses: with the script
    /// parsed while the engine reads it, a malformed line is still the
    /// error when the engine failed on an earlier one (here a setup in
    /// the middle of a game, line 3; the bad time is on line 4 000 or so,
    /// in a later piece than the engine's failure).
    #[test]
    fn a_malformed_line_is_the_error_even_after_the_engine_failed() {
        let mut script = String::from("lift e2\nplace e4\nsetup 8/8/8/4k3/8/8/8/3NK3 w - - 0 1\n");
        for _ in 0..2 * CHUNK {
            script.push_str("@1000 lift d2\n");
        }
        script.push_str("@5 place d4\n");
        let bad = script.lines().count();
        match replay_script("t", &script, EngineConfig::default()) {
            Err(ReplayError::Script(e)) => assert_eq!(e.line, bad),
            other => panic!("expected the malformed line, got {other:?}"),
        }
        // Without it, the engine's own error on line 3.
        let good = script.replace("@5 place d4", "@1000 place d4");
        match replay_script("t", &good, EngineConfig::default()) {
            Err(ReplayError::Engine { line, .. }) => assert_eq!(line, 3),
            other => panic!("expected the engine's error, got {other:?}"),
        }
    }
}
