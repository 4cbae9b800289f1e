//! Pairings in (issue 36): a round's players from a PGN pairings file or a
//! TRF-16 file, both written here from the formats' definitions, through
//! `eboard pairings` and through `pairings = FILE` in an event file.

use std::path::Path;

use crate::{
    cli::eboard,
    daemon::{Daemon, run_args},
};

/// A TRF-16 player line, each field at the columns the TRF-16 definition
/// gives (1-based): 001 at 1-3, start rank 5-8, sex 10, title 11-13, name
/// 15-47, rating 49-52, federation 54-56, FIDE id 58-68, birth date 70-79,
/// points 81-84, rank 86-89, then per round from column 92 + 10(r-1): the
/// opponent (4), a space, the colour, a space, the result.
fn trf_player(
    rank: u32,
    title: &str,
    name: &str,
    rating: u32,
    id: u64,
    points: &str,
    rounds: &[(u32, char, char)],
) -> String {
    let mut line = format!(
        "001 {rank:>4} m{title:<3} {name:<33} {rating:>4} NOR {id:>11} 1990/01/01 {points:>4} {rank:>4}"
    );
    for (opp, colour, result) in rounds {
        line.push_str(&format!("  {opp:>4} {colour} {result}"));
    }
    line
}

/// Six players, two rounds played and the third paired.
///
/// Round 1: 1-4 1-0, 5-2 0-1, 3-6 draw. Round 2: 2-1 draw, 3-4 0-1,
/// 6-5 1-0. Scores before round 3: 1: 1½, 2: 1½, 3: ½, 4: 1, 5: 0, 6: 1½.
/// Round 3 (not played): 6-1, 2-4, 5-3.
fn six_players() -> Vec<String> {
    vec![
        "012 Loopback Open".to_owned(),
        "XXR 5".to_owned(),
        trf_player(
            1,
            "GM",
            "Alpha, Anna",
            2700,
            100001,
            "1.5",
            &[(4, 'w', '1'), (2, 'b', '='), (6, 'b', ' ')],
        ),
        trf_player(
            2,
            "IM",
            "Bravo, Ben",
            2600,
            100002,
            "1.5",
            &[(5, 'b', '1'), (1, 'w', '='), (4, 'w', ' ')],
        ),
        trf_player(
            3,
            "FM",
            "Charlie, Cid",
            2500,
            100003,
            "0.5",
            &[(6, 'w', '='), (4, 'w', '0'), (5, 'b', ' ')],
        ),
        trf_player(
            4,
            "",
            "Delta, Dora",
            2400,
            100004,
            "1.0",
            &[(1, 'b', '0'), (3, 'b', '1'), (2, 'b', ' ')],
        ),
        trf_player(
            5,
            "",
            "Echo, Eve",
            2300,
            0,
            "0.0",
            &[(2, 'w', '0'), (6, 'b', '0'), (3, 'w', ' ')],
        ),
        trf_player(
            6,
            "",
            "Foxtrot, Fay",
            2200,
            100006,
            "1.5",
            &[(3, 'b', '='), (5, 'w', '1'), (1, 'w', ' ')],
        ),
    ]
}

fn write(dir: &Path, name: &str, lines: &[String], end: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, lines.join(end) + end).unwrap();
    path.to_str().unwrap().to_owned()
}

fn boards_of(toml_text: &str) -> Vec<toml::Value> {
    let v: toml::Value = toml::from_str(toml_text).unwrap_or_else(|e| panic!("{e}: {toml_text}"));
    v["board"].as_array().unwrap().clone()
}

#[test]
fn trf_lines_put_the_fields_where_the_definition_says() {
    let l = trf_player(
        6,
        "GM",
        "Foxtrot, Fay",
        2200,
        100006,
        "1.5",
        &[(3, 'b', '=')],
    );
    let col = |from: usize, to: usize| l[from - 1..to].trim().to_owned();
    assert_eq!(col(1, 3), "001");
    assert_eq!(col(5, 8), "6");
    assert_eq!(col(11, 13), "GM");
    assert_eq!(col(15, 47), "Foxtrot, Fay");
    assert_eq!(col(49, 52), "2200");
    assert_eq!(col(58, 68), "100006");
    assert_eq!(col(81, 84), "1.5");
    assert_eq!(col(92, 95), "3");
    assert_eq!(col(97, 97), "b");
    assert_eq!(col(99, 99), "=");
}

#[test]
fn issue_36_trf_pairings_give_the_boards_in_fide_order() {
    let dir = tempfile::tempdir().unwrap();
    // TRF-16 ends lines with a carriage return.
    let file = write(dir.path(), "round.trf", &six_players(), "\r");
    let out = eboard(&["pairings", &file, "--round", "3"], None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let boards = boards_of(&String::from_utf8(out.stdout).unwrap());
    // C.04.2: by the higher player's score, then the lower player's, then
    // the higher player's rank. 6-1: 1½ and 1½ (higher: rank 1); 2-4: 1½
    // and 1; 5-3: ½ and 0.
    let names: Vec<(i64, &str, &str)> = boards
        .iter()
        .map(|b| {
            (
                b["id"].as_integer().unwrap(),
                b["white"]["name"].as_str().unwrap(),
                b["black"]["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            (1, "Foxtrot, Fay", "Alpha, Anna"),
            (2, "Bravo, Ben", "Delta, Dora"),
            (3, "Echo, Eve", "Charlie, Cid")
        ]
    );
    assert_eq!(boards[0]["black"]["title"].as_str(), Some("GM"));
    assert_eq!(boards[0]["black"]["elo"].as_integer(), Some(2700));
    assert_eq!(boards[0]["black"]["fide_id"].as_integer(), Some(100001));
    // A FIDE id of 0 is none.
    assert!(boards[2]["white"].get("fide_id").is_none());

    // Round 2, already played, reads too: 2-1, 3-4, 6-5 by the scores
    // after round 1 (1: 1, 2: 1, 4: 0, 3: ½, 6: ½, 5: 0).
    let out = eboard(&["pairings", &file, "--round", "2"], None);
    let boards = boards_of(&String::from_utf8(out.stdout).unwrap());
    let whites: Vec<&str> = boards
        .iter()
        .map(|b| b["white"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(whites, ["Bravo, Ben", "Charlie, Cid", "Foxtrot, Fay"]);
}

#[test]
fn issue_36_trf_errors_name_the_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let lines = six_players();
    let file = write(dir.path(), "ok.trf", &lines, "\n");
    let out = eboard(&["pairings", &file, "--round", "4"], None);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("ok.trf") && err.contains("no pairing of round 4"),
        "{err}"
    );

    // Player 2 (line 4) says he meets 4 in round 3, but 4 says 5.
    let mut bad = lines.clone();
    bad[5] = trf_player(
        4,
        "",
        "Delta, Dora",
        2400,
        100004,
        "1.0",
        &[(1, 'b', '0'), (3, 'b', '1'), (5, 'b', ' ')],
    );
    let file = write(dir.path(), "bad.trf", &bad, "\n");
    let out = eboard(&["pairings", &file, "--round", "3"], None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.trf:4:"), "{err}");

    // Start rank 3 twice.
    let mut twice = lines.clone();
    twice.push(trf_player(3, "", "Golf, Gus", 2100, 100007, "0.0", &[]));
    let file = write(dir.path(), "twice.trf", &twice, "\n");
    let out = eboard(&["pairings", &file, "--round", "3"], None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("twice.trf:9:") && err.contains("first at line 5"),
        "{err}"
    );
}

const PGN_PAIRINGS: &str = r#"[Event "Loopback Open"]
[Site "Hall"]
[Round "2.1"]
[White "Old, Game"]
[Black "Older, Game"]
[Result "1-0"]

1. e4 e5 1-0

[Event "Loopback Open"]
[Round "3.2"]
[White "Caruana, Fabiano"]
[Black "Nakamura, Hikaru"]
[WhiteFideId "2020009"]
[BlackElo "2790"]
[Result "*"]

*

[Event "Loopback Open"]
[Round "3.1"]
[White "Carlsen, Magnus"]
[Black "Ding, Liren"]
[WhiteTitle "GM"]
[WhiteElo "2830"]
[WhiteFideId "1503014"]
[WhiteTeam "Norway"]
[BlackTitle "GM"]
[BlackTeam "China"]
[Result "*"]

*
"#;

#[test]
fn issue_36_pgn_pairings_and_their_errors() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("round3.pgn");
    std::fs::write(&file, PGN_PAIRINGS).unwrap();
    let file = file.to_str().unwrap();
    let out = eboard(&["pairings", file, "--round", "3"], None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let boards = boards_of(&String::from_utf8(out.stdout).unwrap());
    assert_eq!(boards.len(), 2);
    assert_eq!(boards[0]["id"].as_integer(), Some(1));
    assert_eq!(boards[0]["white"]["name"].as_str(), Some("Carlsen, Magnus"));
    assert_eq!(boards[0]["white"]["team"].as_str(), Some("Norway"));
    assert_eq!(boards[0]["white"]["elo"].as_integer(), Some(2830));
    assert_eq!(boards[0]["black"]["team"].as_str(), Some("China"));
    assert_eq!(boards[1]["white"]["fide_id"].as_integer(), Some(2020009));
    assert_eq!(boards[1]["black"]["elo"].as_integer(), Some(2790));

    let out = eboard(&["pairings", file, "--round", "5"], None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("round3.pgn") && err.contains("round(s) 2, 3"),
        "{err}"
    );

    // Ding paired twice in round 3: the second game's first line is named.
    let twice = PGN_PAIRINGS.replace("Nakamura, Hikaru", "Ding, Liren");
    std::fs::write(dir.path().join("twice.pgn"), twice).unwrap();
    let out = eboard(
        &[
            "pairings",
            dir.path().join("twice.pgn").to_str().unwrap(),
            "--round",
            "3",
        ],
        None,
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("twice.pgn:20:")
            && err.contains("Ding, Liren")
            && err.contains("first at line 10"),
        "{err}"
    );
}

/// Issue 36: a name read from a pairings file is checked as the event
/// file's names and the `players` action's are (1 to 200 bytes, no control
/// character: names are printed in PGN tags), the error naming the file
/// and the line.
#[test]
fn issue_36_pairings_names_are_checked_as_config_names() {
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, text: &str| -> String {
        let file = dir.path().join(name);
        std::fs::write(&file, text).unwrap();
        let out = eboard(&["pairings", file.to_str().unwrap(), "--round", "3"], None);
        assert_eq!(out.status.code(), Some(2), "{name} is refused");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    // White's tag of round 3's second game is at line 12, Black's at 13.
    let long = PGN_PAIRINGS.replace("Caruana, Fabiano", &"x".repeat(201));
    let err = run("long.pgn", &long);
    assert!(
        err.contains("long.pgn:12:") && err.contains("1 to 200 bytes"),
        "{err}"
    );
    let control = PGN_PAIRINGS.replace("Nakamura, Hikaru", "Nakamura,\u{1b}[31m Hikaru");
    let err = run("control.pgn", &control);
    assert!(
        err.contains("control.pgn:13:") && err.contains("control character"),
        "{err}"
    );
    // 200 bytes is a name still.
    let file = dir.path().join("fits.pgn");
    std::fs::write(
        &file,
        PGN_PAIRINGS.replace("Caruana, Fabiano", &"x".repeat(200)),
    )
    .unwrap();
    let out = eboard(&["pairings", file.to_str().unwrap(), "--round", "3"], None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // TRF: player 2's line (line 4) with a control character in its name.
    let mut lines = six_players();
    // The same number of characters: every column stays where it was.
    lines[3] = lines[3].replace("Bravo, Ben", "Bravo,\u{7}Ben");
    let file = write(dir.path(), "control.trf", &lines, "\n");
    let out = eboard(&["pairings", &file, "--round", "3"], None);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("control.trf:4:") && err.contains("control character"),
        "{err}"
    );
}

#[test]
fn issue_36_a_config_takes_its_players_from_the_pairings() {
    let dir = tempfile::tempdir().unwrap();
    let trf = write(dir.path(), "round.trf", &six_players(), "\n");
    let script = dir.path().join("board.board");
    std::fs::write(&script, crate::daemon::SCRIPT).unwrap();
    let mut config = format!(
        "event = \"Loopback Open\"\nround = \"3\"\npairings = \"{}\"\n",
        trf
    );
    for id in 1..=3 {
        config.push_str(&format!(
            "\n[[board]]\nid = {id}\nsource = \"script:{}\"\n",
            script.display()
        ));
    }
    let path = dir.path().join("event.toml");
    std::fs::write(&path, &config).unwrap();
    let data = dir.path().join("data");
    let d = Daemon::start(&run_args(&path, &data, "1"));
    let boards = d.json("/boards");
    let b1 = &boards["boards"][0];
    assert_eq!(b1["white"]["name"], "Foxtrot, Fay");
    assert_eq!(b1["black"]["name"], "Alpha, Anna");
    let pgn = d.get("/boards/1.pgn").body;
    for tag in [
        "[White \"Foxtrot, Fay\"]",
        "[BlackTitle \"GM\"]",
        "[BlackElo \"2700\"]",
        "[BlackFideId \"100001\"]",
    ] {
        assert!(pgn.contains(tag), "{tag} in {pgn}");
    }
    drop(d);

    // A fourth board the file does not pair.
    config.push_str(&format!(
        "\n[[board]]\nid = 4\nsource = \"script:{}\"\n",
        script.display()
    ));
    std::fs::write(&path, &config).unwrap();
    let out = eboard(&run_args(&path, &data, "1"), None);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("round.trf") && err.contains("board 4 is not paired"),
        "{err}"
    );
}

/// Results out (issue 36): a demo round played to the end, then `eboard
/// results` fills round 1 of a TRF whose pairings are the demo's boards.
#[test]
fn issue_36_results_fill_the_trf_from_a_finished_demo_round() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let d = Daemon::start(&[
        "demo",
        "--data-dir",
        data.to_str().unwrap(),
        "--speed",
        "20",
    ]);
    d.wait_boards(180, |b| b["connection"] == "ended");
    // Before the demo starts its next round (new games).
    d.kill();

    // 16 players; board k pairs ranks k and k + 8 (all scores 0, so FIDE's
    // order is by the higher rank), White being k on odd boards.
    let mut lines = vec!["012 Demo".to_owned()];
    let white_of = |k: u32| if k % 2 == 1 { k } else { k + 8 };
    for rank in 1..=16u32 {
        let k = if rank > 8 { rank - 8 } else { rank };
        let opp = if rank > 8 { k } else { k + 8 };
        let colour = if white_of(k) == rank { 'w' } else { 'b' };
        lines.push(trf_player(
            rank,
            "",
            &format!("Player {rank:02}"),
            2000,
            0,
            "0.0",
            &[(opp, colour, ' ')],
        ));
    }
    let trf = write(dir.path(), "demo.trf", &lines, "\n");
    let results = |extra: &[&str]| {
        let mut args = vec![
            "results",
            "--data-dir",
            data.to_str().unwrap(),
            "--trf",
            &trf,
            "--round",
            "1",
        ];
        args.extend_from_slice(extra);
        eboard(&args, None)
    };
    let out = results(&[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    // The demo plays the games of pgn/demo-round.pgn, board k game k: their
    // Result tags are the expected results.
    let expected: Vec<String> = crate::daemon::demo_games()
        .iter()
        .map(|g| {
            g.tags
                .iter()
                .find(|(k, _)| k == "Result")
                .map(|(_, v)| v.clone())
                .unwrap()
        })
        .collect();
    for line in text.lines().filter(|l| l.starts_with("001")) {
        let col = |from: usize, to: usize| line.get(from - 1..to).unwrap_or("").trim().to_owned();
        let rank: u32 = col(5, 8).parse().unwrap();
        let k = if rank > 8 { rank - 8 } else { rank };
        let white = white_of(k) == rank;
        let opp = if rank > 8 { k } else { k + 8 };
        assert_eq!(col(92, 95), opp.to_string(), "{line}");
        assert_eq!(col(97, 97), if white { "w" } else { "b" }, "{line}");
        let result = &expected[k as usize - 1];
        let code = match (result.as_str(), white) {
            ("1-0", true) | ("0-1", false) => "1",
            ("1-0", false) | ("0-1", true) => "0",
            _ => "=",
        };
        assert_eq!(col(99, 99), code, "board {k}: {result}: {line}");
        let points = if code == "1" {
            "1.0"
        } else if code == "=" {
            "0.5"
        } else {
            "0.0"
        };
        assert_eq!(col(81, 84), points, "{line}");
    }

    let csv = results(&["--csv"]);
    let csv = String::from_utf8(csv.stdout).unwrap();
    assert!(csv.starts_with("board,white,black,result\n"), "{csv}");
    assert!(
        csv.contains(&format!("1,\"Player 01\",\"Player 09\",{}", expected[0])),
        "{csv}"
    );

    // A board without a finished game is an error naming it, unless --partial.
    std::fs::remove_file(data.join("boards/3.jsonl")).unwrap();
    let out = results(&[]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("board(s) 3 have no result"), "{err}");
    let out = results(&["--partial"]);
    assert!(out.status.success());
}
