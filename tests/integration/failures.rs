//! Failures are never silent: a panic in a board's engine (through the
//! test-only hook `EBOARD_INJECT_PANIC`), in the daemon and in `replay`; a
//! daemon restarted while a hardware board was played on.

use std::{
    process::{Command, Stdio},
    time::Duration,
};

use eboard::{BoardEvent, daemon::sim_options, failsafe::INJECT_VAR, simulate};

use crate::daemon::{Daemon, demo_games, demo_pgn, sans, virtual_board_with};

/// Two `pgn:` boards playing games 1 and 4 of the demo file.
fn two_boards(dir: &std::path::Path) -> std::path::PathBuf {
    let mut text = String::from("event = \"Failures\"\n");
    for (id, game) in [(1, 1), (2, 4)] {
        text.push_str(&format!(
            "\n[[board]]\nid = {id}\nsource = \"pgn:{}\"\ngame = {game}\nwhite = {{ name = \"W{id}\" }}\nblack = {{ name = \"B{id}\" }}\n",
            demo_pgn().display()
        ));
    }
    let path = dir.join("event.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn alerts_of(d: &Daemon, board: u32) -> Vec<serde_json::Value> {
    d.json(&format!("/boards/{board}"))["alerts"]
        .as_array()
        .unwrap()
        .clone()
}

/// A panic injected into board 1's engine at one of its clock reports: the
/// board raises `engine_failed` with the panic's message, is rebuilt from
/// its journal without that event and reads the rest of its game; board 2
/// is not touched; a restart on the same journals shows the same.
#[test]
fn a_panic_in_one_boards_engine_is_told_and_the_board_rebuilt() {
    let games = demo_games();
    let events = simulate(std::slice::from_ref(&games[0]), &sim_options(1));
    // Board 1's 3rd clock report after its 10th event (board events are
    // numbered from 1): missing it changes no move.
    let n = events
        .iter()
        .enumerate()
        .skip(10)
        .filter(|(_, e)| matches!(e.event, BoardEvent::Clock(..)))
        .nth(2)
        .map(|(i, _)| i + 1)
        .expect("the game has clock reports");
    let dir = tempfile::tempdir().unwrap();
    let config = two_boards(dir.path());
    let data = dir.path().join("data");
    let args = crate::daemon::run_args(&config, &data, "40");
    let hook = format!("1:{n}");
    let start = || {
        Daemon::start_with(&args, Stdio::null(), |c| {
            c.env(INJECT_VAR, &hook);
        })
    };
    let d = start();
    let boards = d.wait_boards(120, |b| b["result"] != "*");
    for (i, game) in [(0, &games[0]), (1, &games[3])] {
        let b = &boards["boards"][i];
        assert_eq!(b["ply"], sans(game).len(), "board {}: {b}", i + 1);
        assert_eq!(b["sync"], "ok", "{b}");
    }
    let failed: Vec<_> = alerts_of(&d, 1)
        .into_iter()
        .filter(|a| a["kind"] == "engine_failed")
        .collect();
    assert_eq!(failed.len(), 1, "{failed:?}");
    let message = failed[0]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("injected by {INJECT_VAR} at board event {n}")),
        "{message}"
    );
    assert!(message.contains("rebuilt from its journal"), "{message}");
    assert!(
        alerts_of(&d, 2)
            .iter()
            .all(|a| a["kind"] != "engine_failed"),
        "board 2 untouched"
    );
    let pgn = d.get("/round.pgn").body;
    d.kill();
    let d = start();
    assert_eq!(d.get("/round.pgn").body, pgn, "the journal replays alike");
    let again = alerts_of(&d, 1)
        .into_iter()
        .filter(|a| a["kind"] == "engine_failed")
        .count();
    assert_eq!(again, 1);
}

/// `replay` reports a panic in the engine as an error naming the script
/// line, with exit status 3.
#[test]
fn replay_reports_a_panic_with_its_line_and_status_3() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("game.board");
    std::fs::write(
        &script,
        "# a comment\n@0 lift e2\n@300 place e4\n\n@500 press white\n@900 lift e7\n",
    )
    .unwrap();
    // The third event is on line 5.
    let out = Command::new(env!("CARGO_BIN_EXE_eboard"))
        .args(["replay", script.to_str().unwrap()])
        .env(INJECT_VAR, "3")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let line = stderr
        .lines()
        .find(|l| l.starts_with("eboard: "))
        .unwrap_or_else(|| panic!("no error line: {stderr}"));
    assert!(
        line.contains("game.board:5: the engine failed on this line"),
        "{line}"
    );
    assert!(line.contains("bug in eboard"), "{line}");
}

/// A Millennium board played on while the daemon was down: the first state
/// read after the restart is read like a dump after a reconnection, so the
/// moves made meanwhile are recovered (`moves_inferred`), not judged as an
/// illegal move, and the broadcast has the whole game.
#[test]
fn a_restart_reads_a_millennium_board_played_on_meanwhile() {
    let dir = tempfile::tempdir().unwrap();
    let (mut board, config) = virtual_board_with(dir.path(), "millennium", "2", &[], "");
    let data = dir.path().join("data");
    let args = crate::daemon::run_args(&config, &data, "1");
    let d = Daemon::start_logged(&args, Stdio::null());
    let before = d.wait_boards(90, |b| b["ply"].as_u64().unwrap() >= 6)["boards"][0]["ply"]
        .as_u64()
        .unwrap();
    d.kill();
    // The board plays on with nobody listening (a move or two: more make
    // transpositions the arbiter must pick from, `out_of_sync`).
    std::thread::sleep(Duration::from_millis(1000));
    let d = Daemon::start_logged(&args, Stdio::null());
    let (game, expected) = crate::daemon::opera_game_broadcast(&d, &mut board);
    assert_eq!(game.moves, expected.moves, "stopped at ply {before}");
    let kinds: Vec<String> = alerts_of(&d, 1)
        .iter()
        .map(|a| a["kind"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        kinds.iter().all(|k| k == "moves_inferred"),
        "only the moves made meanwhile are told, no illegal move: {kinds:?}"
    );
}

/// Issue 35: a 700 ms occupancy scanner with a clock, games one after the
/// other. A mate the record had not read yet left its game open, so the
/// next game's tags overwrote its players and the start position read as a
/// takeback: 426 games of 438. Every game must come back, with its own
/// players. The first 40 games of the corpus hold such a mate (games 17
/// and 18); the whole corpus takes minutes in a debug build (438 games,
/// checked with `eboard simulate ... | eboard replay --json`).
#[test]
fn scanned_sessions_keep_every_game_and_its_players() {
    let Some(path) = crate::util::corpus_file("lichess-sample.pgn") else {
        return;
    };
    let text = std::fs::read_to_string(path).unwrap();
    let mut games = eboard::pgn::read_games(text.as_bytes()).unwrap();
    games.truncate(40);
    let opts = eboard::SimOptions {
        occupancy: true,
        clock: true,
        noise: eboard::Noise::Human,
        hostile: eboard::Hostile {
            scan_ms: Some(700),
            ..eboard::Hostile::default()
        },
        ..eboard::SimOptions::default()
    };
    let script = eboard::write_script(&simulate(&games, &opts));
    let engine =
        eboard::replay_script("scan.board", &script, eboard::EngineConfig::default()).unwrap();
    let reported = eboard::replay::reported_games(&engine);
    assert_eq!(reported.len(), games.len());
    let players = |tags: &[(String, String)]| -> Vec<String> {
        ["White", "Black"]
            .iter()
            .map(|name| {
                tags.iter()
                    .find(|(n, _)| n == name)
                    .map_or(String::new(), |(_, v)| v.clone())
            })
            .collect()
    };
    for (i, (got, want)) in reported.iter().zip(&games).enumerate() {
        assert_eq!(players(&got.tags), players(&want.tags), "game {}", i + 1);
    }
}
