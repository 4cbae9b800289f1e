//! Pushing to lichess (issue 12), against a stand-in of lichess's push API
//! written here from its public documentation: `POST
//! /api/broadcast/round/{round}/push`, `Authorization: Bearer <token>`,
//! `Content-Type: text/plain`, at most 100 games, an answer of `{"games":
//! [{tags, moves} | {tags, error}]}`, 401 for a bad token. The stand-in
//! binds 127.0.0.1 and records every request; the real lichess is never
//! contacted.

use std::{
    collections::{HashMap, VecDeque},
    path::{Path, PathBuf},
    process::{Command, Stdio},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use axum::{
    Json, Router,
    extract::{Path as UrlPath, State},
    http::{HeaderMap, StatusCode, header},
    response::{IntoResponse, Response},
    routing::post,
};
use eboard::pgn::{ImportedGame, read_games};
use serde_json::json;

use crate::daemon::{Daemon, SCRIPT, sans};

/// One request the stand-in received.
#[derive(Debug, Clone)]
struct Push {
    round: String,
    authorization: Option<String>,
    content_type: Option<String>,
    body: String,
    /// What the stand-in answered.
    status: u16,
}

#[derive(Clone)]
struct Shared {
    token: String,
    pushes: Arc<Mutex<Vec<Push>>>,
    /// Answers to give before behaving normally: a status (and a delay).
    script: Arc<Mutex<VecDeque<(u16, Duration)>>>,
}

/// The stand-in lichess, on its own runtime.
struct Lichess {
    url: String,
    shared: Shared,
    _runtime: tokio::runtime::Runtime,
}

impl Lichess {
    fn start(token: &str, script: &[(u16, Duration)]) -> Lichess {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .unwrap();
        let shared = Shared {
            token: token.to_owned(),
            pushes: Arc::default(),
            script: Arc::new(Mutex::new(script.iter().copied().collect())),
        };
        let app = Router::new()
            .route("/api/broadcast/round/{round}/push", post(push))
            .with_state(shared.clone());
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let addr = listener.local_addr().unwrap();
        runtime.spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Lichess {
            url: format!("http://{addr}"),
            shared,
            _runtime: runtime,
        }
    }

    fn pushes(&self) -> Vec<Push> {
        self.shared.pushes.lock().unwrap().clone()
    }

    /// Waits (at most `secs`) until the pushes received satisfy `done`.
    fn wait(&self, secs: u64, done: impl Fn(&[Push]) -> bool) -> Vec<Push> {
        let deadline = Instant::now() + Duration::from_secs(secs);
        loop {
            let pushes = self.pushes();
            if done(&pushes) {
                return pushes;
            }
            assert!(
                Instant::now() < deadline,
                "the stand-in did not get the pushes expected within {secs} s: {} received, statuses {:?}",
                pushes.len(),
                pushes.iter().map(|p| p.status).collect::<Vec<_>>()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

fn tag<'a>(game: &'a ImportedGame, name: &str) -> Option<&'a str> {
    game.tags
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

/// What lichess does with a push, as documented: refuse a bad token,
/// anything but plain text, more than 100 games; answer per game.
async fn push(
    State(s): State<Shared>,
    UrlPath(round): UrlPath<String>,
    headers: HeaderMap,
    body: String,
) -> Response {
    let text = |name| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    };
    let mut record = Push {
        round,
        authorization: text(header::AUTHORIZATION),
        content_type: text(header::CONTENT_TYPE),
        body: body.clone(),
        status: 200,
    };
    let scripted = s.script.lock().unwrap().pop_front();
    let (status, answer) = if let Some((status, delay)) = scripted {
        tokio::time::sleep(delay).await;
        (status, json!({ "error": "scripted" }))
    } else if record.authorization != Some(format!("Bearer {}", s.token)) {
        (401, json!({ "error": "No such token" }))
    } else if record.content_type.as_deref() != Some("text/plain") {
        (400, json!({ "error": "Expected text/plain" }))
    } else {
        match read_games(body.as_bytes()) {
            Err(e) => (400, json!({ "error": format!("Cannot parse: {e}") })),
            Ok(games) if games.len() > 100 => (400, json!({ "error": "Too many games" })),
            Ok(games) => {
                let games: Vec<_> = games
                    .iter()
                    .map(|g| {
                        let tags: HashMap<&str, &str> = g
                            .tags
                            .iter()
                            .map(|(n, v)| (n.as_str(), v.as_str()))
                            .collect();
                        if tag(g, "White").is_none() || tag(g, "Black").is_none() {
                            json!({ "tags": tags, "error": "Missing players" })
                        } else {
                            json!({ "tags": tags, "moves": g.moves.len() })
                        }
                    })
                    .collect();
                (200, json!({ "games": games }))
            }
        }
    };
    record.status = status;
    s.pushes.lock().unwrap().push(record);
    (StatusCode::from_u16(status).unwrap(), Json(answer)).into_response()
}

/// A token file only its owner can read.
fn token_file(dir: &Path, token: &str, mode: u32) -> PathBuf {
    let path = dir.join("lichess.token");
    std::fs::write(&path, format!("{token}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
    }
    #[cfg(not(unix))]
    let _ = mode;
    path
}

/// `eboard demo` at `speed`, pushing to the stand-in's round `AbCd1234`.
fn demo_pushing_to(lichess: &Lichess, speed: &str, token: &Path) -> Daemon {
    Daemon::start(&[
        "demo",
        "--speed",
        speed,
        "--lichess-url",
        &lichess.url,
        "--lichess-round",
        "AbCd1234",
        "--lichess-token-file",
        token.to_str().unwrap(),
    ])
}

/// Every push parses, holds at most 100 games, each with White, Black and
/// a GameId unique in the push; across the successful pushes of a round a
/// game's moves only grow. Returns each GameId's last moves.
fn check_pushes(pushes: &[Push]) -> HashMap<String, Vec<String>> {
    let mut last: HashMap<(String, String), Vec<String>> = HashMap::new();
    for p in pushes.iter().filter(|p| p.status == 200) {
        let games = read_games(p.body.as_bytes())
            .unwrap_or_else(|e| panic!("a push that does not parse ({e}):\n{}", p.body));
        assert!(
            !games.is_empty() && games.len() <= 100,
            "{} games",
            games.len()
        );
        let mut ids = Vec::new();
        for g in &games {
            assert!(
                tag(g, "White").is_some_and(|w| !w.is_empty()),
                "{:?}",
                g.tags
            );
            assert!(
                tag(g, "Black").is_some_and(|b| !b.is_empty()),
                "{:?}",
                g.tags
            );
            let id = tag(g, "GameId").expect("a GameId tag").to_owned();
            let moves = sans(g);
            let key = (p.round.clone(), id.clone());
            if let Some(before) = last.get(&key) {
                assert!(
                    moves.starts_with(before),
                    "{id}: {before:?} was pushed, then {moves:?}"
                );
            }
            last.insert(key, moves);
            ids.push(id);
        }
        let n = ids.len();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), n, "GameIds unique in a push");
    }
    last.into_iter().map(|((_, id), m)| (id, m)).collect()
}

#[test]
fn issue_12_demo_pushes_to_the_stand_in_and_retries_a_503() {
    let dir = tempfile::tempdir().unwrap();
    // The first push gets a 503, the second a slow answer: both are
    // retried, and what is sent is always the latest state.
    let lichess = Lichess::start(
        "lip_demo",
        &[(503, Duration::ZERO), (503, Duration::from_millis(1500))],
    );
    let token = token_file(dir.path(), "lip_demo", 0o600);
    let d = demo_pushing_to(&lichess, "4", &token);
    let pushes = lichess.wait(90, |pushes| {
        let ok: Vec<&Push> = pushes.iter().filter(|p| p.status == 200).collect();
        ok.len() >= 4 && ok.last().is_some_and(|p| p.body.contains("3. "))
    });
    assert_eq!(pushes[0].status, 503);
    assert_eq!(pushes[1].status, 503);
    assert_eq!(pushes[2].status, 200, "a 503 is retried");
    for p in &pushes {
        assert_eq!(p.round, "AbCd1234");
        assert_eq!(p.authorization.as_deref(), Some("Bearer lip_demo"));
        assert_eq!(p.content_type.as_deref(), Some("text/plain"));
    }
    let last = check_pushes(&pushes);
    // The demo's eight boards, one game each: eboard-<board>-<game>.
    let mut ids: Vec<&String> = last.keys().collect();
    ids.sort();
    let expected: Vec<String> = (1..=8).map(|b| format!("eboard-{b}-1")).collect();
    assert_eq!(ids, expected.iter().collect::<Vec<_>>());
    // A board with a clock carries its clocks as tags.
    let final_push = pushes.iter().rev().find(|p| p.status == 200).unwrap();
    assert!(
        final_push.body.contains("[WhiteClock \""),
        "{}",
        final_push.body
    );

    // /boards shows the push state.
    let boards = d.json("/boards");
    let state = &boards["lichess"][0];
    assert_eq!(state["round"], "AbCd1234");
    assert!(state["pushes"].as_u64().unwrap() >= 4, "{state}");
    assert!(state["last_success_ms"].as_u64().is_some(), "{state}");
    assert_eq!(state["stopped"], false);
}

#[test]
fn issue_12_a_401_stops_pushing_and_alerts() {
    let dir = tempfile::tempdir().unwrap();
    let lichess = Lichess::start("lip_right", &[]);
    let token = token_file(dir.path(), "lip_revoked", 0o600);
    let d = demo_pushing_to(&lichess, "40", &token);
    lichess.wait(30, |p| !p.is_empty());
    let deadline = Instant::now() + Duration::from_secs(30);
    let state = loop {
        let state = d.json("/boards")["lichess"][0].clone();
        if state["stopped"] == true {
            break state;
        }
        assert!(Instant::now() < deadline, "{state}");
        std::thread::sleep(Duration::from_millis(100));
    };
    let error = state["last_error"].as_str().unwrap_or_default();
    assert!(
        error.contains("401") && error.contains("No such token"),
        "{state}"
    );
    // The boards go on playing; nothing more is pushed.
    std::thread::sleep(Duration::from_secs(3));
    let pushes = lichess.pushes();
    assert_eq!(
        pushes.len(),
        1,
        "{:?}",
        pushes.iter().map(|p| p.status).collect::<Vec<_>>()
    );
    assert_eq!(pushes[0].status, 401);
}

#[test]
fn issue_12_the_token_file_must_be_private() {
    let dir = tempfile::tempdir().unwrap();
    let token = token_file(dir.path(), "lip_x", 0o644);
    let out = Command::new(env!("CARGO_BIN_EXE_eboard"))
        .args([
            "demo",
            "--listen",
            "127.0.0.1:0",
            "--lichess-round",
            "AbCd1234",
        ])
        .arg("--lichess-token-file")
        .arg(&token)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    if cfg!(unix) {
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("readable by others"), "{stderr}");
        assert!(stderr.contains("chmod 600"), "{stderr}");
    }
}

#[test]
fn issue_12_250_boards_push_in_three_slices_and_poll_by_slice() {
    let dir = tempfile::tempdir().unwrap();
    let lichess = Lichess::start("lip_big", &[]);
    token_file(dir.path(), "lip_big", 0o600);
    let script = dir.path().join("board.board");
    std::fs::write(&script, SCRIPT).unwrap();
    let mut config = String::from(
        "event = \"Big Open\"\nround = \"3\"\ntime_control = \"300+3\"\n\n[lichess]\ntoken_file = \"lichess.token\"\n",
    );
    config.push_str(&format!("url = \"{}\"\n", lichess.url));
    for (round, boards) in [
        ("SliceOne", "1-100"),
        ("SliceTwo", "101-200"),
        ("SliceThree", "201-250"),
    ] {
        config.push_str(&format!(
            "\n[[lichess.slice]]\nround = \"{round}\"\nboards = \"{boards}\"\n"
        ));
    }
    for id in 1..=250 {
        config.push_str(&format!(
            "\n[[board]]\nid = {id}\nsource = \"script:board.board\"\nwhite = {{ name = \"White {id}\" }}\nblack = {{ name = \"Black {id}\" }}\n"
        ));
    }
    let config_path = dir.path().join("event.toml");
    std::fs::write(&config_path, config).unwrap();
    let data = dir.path().join("data");
    let d = Daemon::start(&[
        "run",
        "--config",
        config_path.to_str().unwrap(),
        "--data-dir",
        data.to_str().unwrap(),
        "--speed",
        "5",
    ]);
    d.wait_boards(90, |b| b["connection"] == "ended");
    // Every slice's last push has every board's three moves.
    let slices = [
        ("SliceOne", 1..=100),
        ("SliceTwo", 101..=200),
        ("SliceThree", 201..=250),
    ];
    let pushes = lichess.wait(60, |pushes| {
        slices.iter().all(|(round, boards)| {
            pushes
                .iter()
                .rev()
                .find(|p| p.round == *round && p.status == 200)
                .is_some_and(|p| {
                    read_games(p.body.as_bytes()).is_ok_and(|g| {
                        g.len() == boards.clone().count() && g.iter().all(|g| g.moves.len() == 3)
                    })
                })
        })
    });
    check_pushes(&pushes);
    for p in &pushes {
        let (_, boards) = slices
            .iter()
            .find(|(r, _)| *r == p.round)
            .unwrap_or_else(|| panic!("a push to an unknown round {}", p.round));
        let games = read_games(p.body.as_bytes()).unwrap();
        assert!(games.len() <= 100);
        for g in &games {
            let round = tag(g, "Round").unwrap();
            let board: u32 = round.strip_prefix("3.").unwrap().parse().unwrap();
            assert!(
                boards.contains(&board),
                "board {board} pushed to {}",
                p.round
            );
            assert_eq!(tag(g, "GameId"), Some(format!("eboard-{board}-1").as_str()));
            assert_eq!(tag(g, "TimeControl"), Some("300+3"));
        }
    }

    // Polling by slice: exactly boards 101 to 200, in order.
    let r = d.get("/round.pgn?boards=101-200");
    assert_eq!(r.status, 200);
    let games = read_games(r.body.as_bytes()).unwrap();
    let rounds: Vec<&str> = games.iter().map(|g| tag(g, "Round").unwrap()).collect();
    let expected: Vec<String> = (101..=200).map(|b| format!("3.{b}")).collect();
    assert_eq!(
        rounds,
        expected.iter().map(String::as_str).collect::<Vec<_>>()
    );
    assert_eq!(d.get("/round.pgn?boards=200-101").status, 400);
    assert_eq!(
        read_games(d.get("/round.pgn").body.as_bytes())
            .unwrap()
            .len(),
        250
    );
}
