//! Real-board paths: virtual boards on pseudo-terminals read by the live
//! serial reader, reconnection, and byte-capture replay.

use std::{
    path::{Path, PathBuf},
    time::{Duration, Instant},
};

use eboard::{
    Engine, EngineConfig, Noise, SimOptions, TimedEvent,
    pgn::{ImportedGame, read_games},
    replay::reported_games,
    simulate,
    transport::{
        Backoff, BoardMessage, ConnectionState, Protocol, ReaderConfig, capture, spawn_board,
    },
    virtual_board::{Lockstep, PlanOptions, VirtualBoard, VirtualOptions, play_in_process},
};

use crate::util::{corpus_file, read};

/// The games of a corpus file, or `None` (with a notice) when it is absent.
fn corpus(name: &str) -> Option<Vec<ImportedGame>> {
    let path = corpus_file(name)?;
    Some(read_games(read(&path).as_bytes()).unwrap())
}

/// Every game of the Kasparov–Deep Blue match and 50 games spread evenly
/// over the lichess sample.
fn games() -> Option<Vec<ImportedGame>> {
    let mut games = corpus("kasparov-deep-blue-1997.pgn")?;
    let lichess = corpus("lichess-sample.pgn")?;
    let n = lichess.len();
    games.extend((0..50).map(|i| lichess[i * n / 50].clone()));
    Some(games)
}

/// Wire events and off-wire events in one stream, as a daemon merging the
/// board with the arbiter's console would see them.
fn merge(wire: Vec<TimedEvent>, off_wire: Vec<TimedEvent>) -> Vec<TimedEvent> {
    let mut all: Vec<(u8, TimedEvent)> = off_wire
        .into_iter()
        .map(|e| (0, e))
        .chain(wire.into_iter().map(|e| (1, e)))
        .collect();
    all.sort_by_key(|(origin, e)| (e.at, *origin));
    all.into_iter().map(|(_, e)| e).collect()
}

fn run_engine(events: &[TimedEvent]) -> Engine {
    let mut engine = Engine::new(EngineConfig::default());
    for e in events {
        engine.push(e).unwrap();
        engine.drain_events();
    }
    engine.finish();
    engine
}

fn sans(game: &ImportedGame) -> Vec<String> {
    let mut pos = game.start.clone();
    game.moves
        .iter()
        .map(|&m| shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string())
        .collect()
}

/// Compares the games the engine read from the board with the PGN's moves
/// and with the engine's reading of the script itself (clock times, which
/// the Kasparov games do not give).
fn check(label: &str, games: &[ImportedGame], live: &Engine, direct: &Engine, clocks: bool) {
    let live = reported_games(live);
    let direct = reported_games(direct);
    assert_eq!(live.len(), games.len(), "{label}: number of games");
    assert_eq!(direct.len(), games.len(), "{label}: games in the script");
    let mut failures = Vec::new();
    for (i, ((original, got), reference)) in games.iter().zip(live).zip(direct).enumerate() {
        let want = sans(original);
        let san: Vec<String> = got.moves().iter().map(|m| m.san.to_string()).collect();
        if san != want {
            let at = san.iter().zip(&want).take_while(|(a, b)| a == b).count();
            failures.push(format!(
                "game {}: differs at ply {} (got {:?}, want {:?})",
                i + 1,
                at + 1,
                san.get(at),
                want.get(at)
            ));
            continue;
        }
        let kinds =
            |g: &eboard::Game| -> Vec<&str> { g.alerts.iter().map(|a| a.kind.as_str()).collect() };
        if kinds(got) != kinds(reference) {
            failures.push(format!(
                "game {}: alerts {:?}, reading the script gives {:?}",
                i + 1,
                kinds(got),
                kinds(reference)
            ));
        }
        if clocks {
            let got: Vec<_> = got.moves().iter().map(|m| m.clock).collect();
            let reference: Vec<_> = reference.moves().iter().map(|m| m.clock).collect();
            if got != reference {
                failures.push(format!("game {}: clocks differ from the script's", i + 1));
            } else if original.clocks.iter().any(Option::is_some) && got != original.clocks {
                failures.push(format!("game {}: clocks differ from the PGN's", i + 1));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{label}: {} of {} games failed:\n{}",
        failures.len(),
        games.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}

fn script(games: &[ImportedGame], protocol: Protocol, seed: u64) -> Vec<TimedEvent> {
    script_with(games, protocol, seed, Noise::Human)
}

fn script_with(
    games: &[ImportedGame],
    protocol: Protocol,
    seed: u64,
    noise: Noise,
) -> Vec<TimedEvent> {
    simulate(
        games,
        &SimOptions {
            seed,
            occupancy: false,
            clock: protocol == Protocol::Dgt,
            noise,
            ..SimOptions::default()
        },
    )
}

/// The same without a pseudo-terminal, also with rough noise (flicker on
/// unrelated squares, scans that skip a ply), which is cheap here.
#[test]
fn in_process_dgt_and_millennium_give_the_games() {
    let Some(games) = games() else { return };
    for noise in [Noise::Human, Noise::Rough] {
        for protocol in [Protocol::Dgt, Protocol::Millennium] {
            let events = script_with(&games, protocol, 11, noise);
            let direct = run_engine(&events);
            let opts = PlanOptions {
                artefacts: true,
                seed: 7,
                unplugged: vec![],
            };
            let (wire, off_wire) = play_in_process(&events, protocol, &opts).unwrap();
            let live = run_engine(&merge(wire, off_wire));
            check(
                &format!("{protocol} in process, {noise:?} noise"),
                &games,
                &live,
                &direct,
                protocol == Protocol::Dgt,
            );
        }
    }
}

/// A directory for one test's files, removed afterwards.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("eboard-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What a live session gave.
struct Live {
    /// Board events as the reader delivered them.
    wire: Vec<TimedEvent>,
    /// What the virtual board could not put on the wire.
    off_wire: Vec<TimedEvent>,
    /// Every message of the reader.
    messages: Vec<BoardMessage>,
}

/// Plays `events` on a virtual board on a pseudo-terminal, read by the
/// live reader (the code a daemon uses) through a stable link, in lockstep
/// so that every event carries the script time of its bytes.
fn play_live(
    events: &[TimedEvent],
    protocol: Protocol,
    plan: PlanOptions,
    dir: &Path,
    record: Option<PathBuf>,
) -> Live {
    let lock = Lockstep::new();
    let link = dir.join("board");
    let mut options = VirtualOptions::new(protocol);
    options.plan = plan;
    options.lockstep = Some(lock.clone());
    options.link = Some(link.clone());
    let board = VirtualBoard::start(events, options).unwrap();
    let mut config = ReaderConfig::new(link.display().to_string(), protocol);
    config.clock = lock;
    config.record = record;
    // Quick retries: the virtual board is back at once.
    config.backoff = Backoff {
        initial: Duration::from_millis(20),
        max: Duration::from_millis(200),
    };
    let mut reader = spawn_board(config).unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut messages = Vec::new();
    while !board.is_finished() {
        assert!(
            Instant::now() < deadline,
            "the virtual board did not finish"
        );
        while let Some(m) = reader.try_recv() {
            messages.push(m);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let report = board.join().unwrap();
    // In lockstep the board finished only once the reader had sent every
    // event of its bytes.
    reader.stop();
    while let Some(m) = reader.try_recv() {
        messages.push(m);
    }
    let wire = messages
        .iter()
        .filter_map(|m| match m {
            BoardMessage::Event(e) => Some(e.clone()),
            _ => None,
        })
        .collect();
    Live {
        wire,
        off_wire: report.off_wire,
        messages,
    }
}

fn live_round_trip(protocol: Protocol, seed: u64) {
    let Some(games) = games() else { return };
    let events = script(&games, protocol, seed);
    let direct = run_engine(&events);
    let dir = TempDir::new(&format!("live-{protocol}"));
    let capture_path = dir.path().join("capture.txt");
    let plan = PlanOptions {
        artefacts: true,
        seed: seed + 100,
        unplugged: vec![],
    };
    let started = Instant::now();
    let live = play_live(
        &events,
        protocol,
        plan,
        dir.path(),
        Some(capture_path.clone()),
    );
    eprintln!(
        "{protocol}: {} games, {} board events over the PTY in {:.1} s",
        games.len(),
        live.wire.len(),
        started.elapsed().as_secs_f64()
    );
    let connections = live
        .messages
        .iter()
        .filter(|m| {
            matches!(
                m,
                BoardMessage::Connection {
                    state: ConnectionState::Connected,
                    ..
                }
            )
        })
        .count();
    assert_eq!(connections, 1, "one connection, no reconnect");
    let engine = run_engine(&merge(live.wire.clone(), live.off_wire));
    check(
        &format!("{protocol} over a PTY"),
        &games,
        &engine,
        &direct,
        protocol == Protocol::Dgt,
    );
    // The capture replays to exactly the events the live reader delivered.
    let bytes = std::fs::read(&capture_path).unwrap();
    let replayed: Vec<TimedEvent> =
        capture::capture_events("capture.txt", &bytes, protocol, Default::default())
            .unwrap()
            .into_iter()
            .map(|e| e.event)
            .collect();
    assert!(
        replayed == live.wire,
        "{protocol}: the capture replays differently"
    );
}

#[test]
fn dgt_board_over_a_pty_gives_the_games_and_clocks() {
    live_round_trip(Protocol::Dgt, 21);
}

#[test]
fn millennium_board_over_a_pty_gives_the_games() {
    live_round_trip(Protocol::Millennium, 22);
}

#[test]
fn reader_reconnects_and_catches_up_after_the_board_was_unplugged() {
    let Some(games) = corpus("kasparov-deep-blue-1997.pgn") else {
        return;
    };
    let games = &games[..1];
    let protocol = Protocol::Dgt;
    let events = script(games, protocol, 31);
    // Pulled after the clock report of ply 21 (11.Qe1), back after that of
    // ply 23 (12.a3): 11...Qa5 and 12.a3 are played while it is away.
    let clocks: Vec<u64> = events
        .iter()
        .filter(|e| matches!(e.event, eboard::BoardEvent::Clock(..)))
        .map(|e| e.at)
        .collect();
    let (from, to) = (clocks[20] + 1, clocks[22] + 1);
    let dir = TempDir::new("reconnect");
    let capture_path = dir.path().join("capture.txt");
    let plan = PlanOptions {
        artefacts: true,
        seed: 5,
        unplugged: vec![(from, to)],
    };
    let live = play_live(
        &events,
        protocol,
        plan,
        dir.path(),
        Some(capture_path.clone()),
    );
    let states: Vec<&ConnectionState> = live
        .messages
        .iter()
        .filter_map(|m| match m {
            BoardMessage::Connection { state, .. } => Some(state),
            _ => None,
        })
        .collect();
    // Connected, lost when unplugged, (perhaps failed attempts,) connected
    // again; lost once more when the board goes away at the end.
    assert!(
        matches!(states[0], ConnectionState::Connected),
        "{states:?}"
    );
    assert!(
        matches!(states[1], ConnectionState::Disconnected { .. }),
        "{states:?}"
    );
    let again = states[2..]
        .iter()
        .position(|s| matches!(s, ConnectionState::Connected))
        .expect("connected again");
    assert!(
        states[2..2 + again]
            .iter()
            .all(|s| matches!(s, ConnectionState::Reconnecting { .. })),
        "{states:?}"
    );
    assert!(
        live.messages
            .iter()
            .any(|m| matches!(m, BoardMessage::Note { text, .. } if text.contains("EEPROM log"))),
        "the EEPROM log was asked for after the reconnection"
    );
    let engine = run_engine(&merge(live.wire.clone(), live.off_wire));
    let direct = run_engine(&events);
    let game = &reported_games(&engine)[0];
    let san: Vec<String> = game.moves().iter().map(|m| m.san.to_string()).collect();
    assert_eq!(san, sans(&games[0]), "the record is complete");
    let alerts: Vec<(&str, usize)> = game
        .alerts
        .iter()
        .map(|a| (a.kind.as_str(), a.ply))
        .collect();
    assert_eq!(alerts, vec![("moves_inferred", 23)]);
    let got: Vec<_> = game.moves().iter().map(|m| m.clock).collect();
    let want: Vec<_> = reported_games(&direct)[0]
        .moves()
        .iter()
        .map(|m| m.clock)
        .collect();
    assert_eq!(
        got, want,
        "clock times, including those of the missed moves"
    );
    // The capture marks the reconnection, so replay resets its decoder
    // where the live reader did.
    let bytes = std::fs::read(&capture_path).unwrap();
    let replayed: Vec<TimedEvent> =
        capture::capture_events("capture.txt", &bytes, protocol, Default::default())
            .unwrap()
            .into_iter()
            .map(|e| e.event)
            .collect();
    assert!(replayed == live.wire, "the capture replays differently");
}

/// Every capture in `board-protocols/traces/` replays to the PGN stored
/// next to it (`<trace>.pgn`); the family is the first word of its name.
#[test]
fn traces_replay_to_their_pgn() {
    let dir = crate::util::root().join("board-protocols/traces");
    let mut traces: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "capture" || e == "raw"))
        .collect();
    traces.sort();
    assert!(traces.len() >= 4, "too few traces in {}", dir.display());
    for trace in &traces {
        let name = trace.file_name().unwrap().to_string_lossy().into_owned();
        let protocol: Protocol = name.split('-').next().unwrap().parse().unwrap();
        let bytes = std::fs::read(trace).unwrap();
        let engine = capture::replay_capture(
            &name,
            &bytes,
            protocol,
            Default::default(),
            EngineConfig::default(),
        )
        .unwrap();
        let pgn: String = reported_games(&engine).iter().map(|g| g.to_pgn()).collect();
        let want = read(&dir.join(format!("{name}.pgn")));
        assert_eq!(pgn, want, "{name}");
    }
}

/// Issue 10: a DGT board unplugged for 3, 6 and 10 moves (plies), on the
/// live serial path over a pseudo-terminal; the reader reconnects, and the
/// game is followed to its end with every move recovered.
#[test]
#[ignore = "known miss (issue 10): after the 3-move outage the record stops at 11.O-O; the reconnection's dump and EEPROM log do not reach the resync search yet"]
fn issue_10_a_dgt_board_unplugged_for_3_6_and_10_moves_is_followed_to_the_end() {
    let Some(games) = corpus("kasparov-deep-blue-1997.pgn") else {
        return;
    };
    let games = &games[..1];
    let protocol = Protocol::Dgt;
    let events = script(games, protocol, 41);
    let clocks: Vec<u64> = events
        .iter()
        .filter(|e| matches!(e.event, eboard::BoardEvent::Clock(..)))
        .map(|e| e.at)
        .collect();
    for (first, moves) in [(10, 3), (20, 6), (30, 10)] {
        let (from, to) = (clocks[first] + 1, clocks[first + moves] + 1);
        let dir = TempDir::new(&format!("unplug-{moves}"));
        let plan = PlanOptions {
            artefacts: true,
            seed: 7,
            unplugged: vec![(from, to)],
        };
        let live = play_live(&events, protocol, plan, dir.path(), None);
        let engine = run_engine(&merge(live.wire.clone(), live.off_wire));
        let game = &reported_games(&engine)[0];
        let san: Vec<String> = game.moves().iter().map(|m| m.san.to_string()).collect();
        assert_eq!(
            san,
            sans(&games[0]),
            "unplugged for {moves} moves: the record is complete"
        );
    }
}
