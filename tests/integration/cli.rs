//! The `eboard` binary as users call it: exit statuses, one-line errors,
//! the `replay --json` contract, deterministic simulation.

use std::process::{Command, Output, Stdio};

use crate::util::root;

pub fn eboard(args: &[&str], stdin: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_eboard"));
    cmd.args(args).current_dir(root());
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    });
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("eboard runs");
    if let Some(text) = stdin {
        use std::io::Write;
        // A command that refuses its arguments exits without reading its
        // input: the pipe closing under the write is its answer, not a
        // failure of the test.
        let written = child.stdin.take().unwrap().write_all(text.as_bytes());
        if let Err(e) = written {
            assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
        }
    }
    child.wait_with_output().unwrap()
}

#[test]
fn malformed_script_is_one_line_with_file_and_line_and_status_2() {
    let out = eboard(
        &["replay", "tests/scripts/malformed-unknown-verb.board"],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(
            "eboard: tests/scripts/malformed-unknown-verb.board:6: unknown event 'teleport'"
        ),
        "{err}"
    );
    assert!(out.stdout.is_empty(), "nothing is half applied");
}

#[test]
fn stdin_errors_name_stdin() {
    let out = eboard(&["replay", "-"], Some("lift e2\nplace z9\n"));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.starts_with("eboard: <stdin>:2: expected a square"),
        "{err}"
    );
}

#[test]
fn missing_file_is_status_2() {
    let out = eboard(&["replay", "no/such/file.board"], None);
    assert_eq!(out.status.code(), Some(2));
    // Named in full, with what it was for, and the reason in words.
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.starts_with("eboard: board script /"), "{err}");
    assert!(
        err.trim_end().ends_with("no/such/file.board: no such file"),
        "{err}"
    );
}

#[test]
fn replay_json_has_the_contract_fields() {
    let out = eboard(
        &[
            "replay",
            "--json",
            "tests/scripts/move-changed-before-completion.board",
        ],
        None,
    );
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1);
    let v: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(v["moves"], serde_json::json!(["Ra6"]));
    assert_eq!(v["result"], "*");
    assert_eq!(v["termination"], serde_json::Value::Null);
    assert_eq!(v["fen"], "4k3/8/R7/8/8/8/8/4K3 b - - 1 1");
    let alert = &v["alerts"][0];
    assert_eq!(alert["kind"], "move_changed");
    assert_eq!(alert["ply"], 1);
    assert_eq!(alert["side"], "white");
    assert!(alert["message"].as_str().unwrap().contains("Art. 4.7"));
    assert!(v["pgn"].as_str().unwrap().contains("1. Ra6 *"));
}

#[test]
fn replay_json_reports_checkmate() {
    let out = eboard(
        &[
            "replay",
            "--json",
            "tests/scripts/checkmate-ends-the-game.board",
        ],
        None,
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["result"], "0-1");
    assert_eq!(v["termination"], "checkmate");
    assert_eq!(v["alerts"], serde_json::json!([]));
}

#[test]
fn rules_flag_is_accepted_and_checked() {
    for rules in ["standard", "rapid", "blitz"] {
        let out = eboard(&["replay", "--rules", rules, "pgn/demo.board"], None);
        assert!(out.status.success(), "{rules}");
    }
    let out = eboard(&["replay", "--rules", "bullet", "pgn/demo.board"], None);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn bundled_demo_replays_to_the_opera_game() {
    let out = eboard(&["replay", "pgn/demo.board"], None);
    assert!(out.status.success());
    let pgn = String::from_utf8(out.stdout).unwrap();
    let games = eboard::pgn::read_games(pgn.as_bytes()).unwrap();
    let expected = eboard::pgn::read_games(
        std::fs::read_to_string(root().join("pgn/opera-game.pgn"))
            .unwrap()
            .as_bytes(),
    )
    .unwrap();
    assert_eq!(games.len(), 1);
    assert_eq!(games[0].moves, expected[0].moves);
    assert!(pgn.contains("[White \"Morphy, Paul\"]"));
    assert!(pgn.contains("17. Rd8#"));
}

#[test]
fn simulate_is_deterministic_per_seed() {
    let a = eboard(
        &[
            "simulate",
            "--seed",
            "3",
            "--noise",
            "rough",
            "pgn/opera-game.pgn",
        ],
        None,
    );
    let b = eboard(
        &[
            "simulate",
            "--seed",
            "3",
            "--noise",
            "rough",
            "pgn/opera-game.pgn",
        ],
        None,
    );
    let c = eboard(
        &[
            "simulate",
            "--seed",
            "4",
            "--noise",
            "rough",
            "pgn/opera-game.pgn",
        ],
        None,
    );
    assert!(a.status.success());
    assert_eq!(a.stdout, b.stdout);
    assert_ne!(a.stdout, c.stdout);
}

#[test]
fn simulate_then_replay_through_pipes() {
    let script = eboard(
        &[
            "simulate",
            "--occupancy",
            "--clock",
            "--noise",
            "human",
            "pgn/edge-cases.pgn",
        ],
        None,
    );
    assert!(script.status.success());
    let out = eboard(
        &["replay", "--json", "-"],
        Some(&String::from_utf8(script.stdout).unwrap()),
    );
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let expected = eboard::pgn::read_games(
        std::fs::read_to_string(root().join("pgn/edge-cases.pgn"))
            .unwrap()
            .as_bytes(),
    )
    .unwrap();
    let got: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(got.len(), expected.len());
    for (g, e) in got.iter().zip(&expected) {
        let uci: Vec<String> = e
            .moves
            .iter()
            .map(|&m| shakmaty::uci::UciMove::from_standard(m).to_string())
            .collect();
        assert_eq!(g["uci"], serde_json::json!(uci));
    }
}

#[test]
fn bad_pgn_for_simulate_is_status_2() {
    let out = eboard(&["simulate", "-"], Some("1. e4 e5 2. Ke3 *\n"));
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("Ke3"), "{err}");
}

#[test]
fn rapid_rules_give_one_minute_for_an_illegal_move() {
    let out = eboard(
        &[
            "replay",
            "--json",
            "--rules",
            "rapid",
            "tests/scripts/illegal-king-move-completed.board",
        ],
        None,
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ruling = v["alerts"][0]["ruling"].as_str().unwrap();
    assert!(ruling.starts_with("1 minute to black"), "{ruling}");
    assert!(ruling.contains("A.3"), "{ruling}");
}

#[test]
fn laws_2005_third_illegal_move_loses() {
    let out = eboard(
        &[
            "replay",
            "--json",
            "--laws",
            "2005",
            "tests/scripts/second-illegal-move-loses.board",
        ],
        None,
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // Under the 2005 Laws the second illegal move still costs only time.
    assert_eq!(v["result"], "*");
    assert!(v["alerts"][2]["ruling"].as_str().unwrap().contains("2005"));
}

#[test]
fn play_continued_after_an_illegal_move_stays_parseable() {
    let out = eboard(
        &[
            "replay",
            "--json",
            "tests/scripts/illegal-move-stands-when-play-continues.board",
        ],
        None,
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["moves"], serde_json::json!(["Ke3", "Kd7", "Rh2"]));
    assert_eq!(v["illegal_moves"], serde_json::json!([1]));
    // Every PGN game replays with a strict reader: the part before the
    // illegal move, then the continuation from the position on the board.
    let games = eboard::pgn::read_games(v["pgn"].as_str().unwrap().as_bytes()).unwrap();
    assert_eq!(games.len(), 2);
    assert!(games[0].moves.is_empty());
    let uci: Vec<String> = games[1]
        .moves
        .iter()
        .map(|&m| shakmaty::uci::UciMove::from_standard(m).to_string())
        .collect();
    assert_eq!(uci, ["e8d7", "h1h2"]);
}

/// Issue 11: a real PGN with empty tag values (`[Site ""]`, as many
/// exports write them) goes through `simulate` and back through `replay`.
#[test]
fn issue_11_empty_tag_values_round_trip_through_simulate_and_replay() {
    let script = eboard(&["simulate", "pgn/empty-tags.pgn"], None);
    assert!(script.status.success());
    let script = String::from_utf8(script.stdout).unwrap();
    let out = eboard(&["replay", "-"], Some(&script));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let replayed = eboard::pgn::read_games(out.stdout.as_slice()).unwrap();
    let original = eboard::pgn::read_games(
        std::fs::read(root().join("pgn/empty-tags.pgn"))
            .unwrap()
            .as_slice(),
    )
    .unwrap();
    assert_eq!(replayed.len(), 1);
    assert_eq!(replayed[0].moves, original[0].moves);
    for name in ["Site", "Round", "ECO", "Annotator"] {
        let value = replayed[0].tags.iter().find(|(n, _)| n == name);
        assert_eq!(value.map(|(_, v)| v.as_str()), Some(""), "{name}");
    }
}
