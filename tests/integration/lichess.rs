//! Pushing to lichess (issue 12), against a stand-in of lichess's push API
//! written here from its public documentation: `POST
//! /api/broadcast/round/{round}/push`, `Authorization: Bearer <token>`,
//! `Content-Type: text/plain`, at most 100 games, an answer of `{"games":
//! [{tags, moves} | {tags, error}]}`, 401 for a bad token, 429 when asked
//! too often. The stand-in binds 127.0.0.1 and records every request as it
//! arrives; the real lichess is never contacted.

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

use crate::daemon::{Daemon, SCRIPT, Sse, SseReader, run_args, sans};

/// One request the stand-in received.
#[derive(Debug, Clone)]
struct Push {
    round: String,
    authorization: Option<String>,
    content_type: Option<String>,
    body: String,
    /// What the stand-in answered (0: the client gave up before the answer).
    status: u16,
    /// When it arrived.
    at: Instant,
}

#[derive(Clone)]
struct Shared {
    token: String,
    pushes: Arc<Mutex<Vec<Push>>>,
    /// Answers to give before behaving normally: a status (and a delay).
    script: Arc<Mutex<VecDeque<(u16, Duration)>>>,
    /// Games to refuse in the answer: `GameId` → lichess's error.
    refuse: Arc<Mutex<HashMap<String, String>>>,
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
            refuse: Arc::default(),
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

    /// From now on, answer the game `game_id` with `error`.
    fn refuse(&self, game_id: &str, error: &str) {
        self.shared
            .refuse
            .lock()
            .unwrap()
            .insert(game_id.to_owned(), error.to_owned());
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
/// anything but plain text, more than 100 games; answer per game. The
/// request is recorded when it arrives and its status when answered, so a
/// request the client gave up on stays with status 0.
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
    let record = Push {
        round,
        authorization: text(header::AUTHORIZATION),
        content_type: text(header::CONTENT_TYPE),
        body: body.clone(),
        status: 0,
        at: Instant::now(),
    };
    let index = {
        let mut pushes = s.pushes.lock().unwrap();
        pushes.push(record.clone());
        pushes.len() - 1
    };
    let scripted = s.script.lock().unwrap().pop_front();
    let (status, answer) = if let Some((status, delay)) = scripted {
        tokio::time::sleep(delay).await;
        if status == 200 {
            // A slow but successful answer.
            (200, json!({ "games": [] }))
        } else {
            (status, json!({ "error": "scripted" }))
        }
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
                        let refused = tag(g, "GameId")
                            .and_then(|id| s.refuse.lock().unwrap().get(id).cloned());
                        if let Some(error) = refused {
                            json!({ "tags": tags, "error": error })
                        } else if tag(g, "White").is_none() || tag(g, "Black").is_none() {
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
    s.pushes.lock().unwrap()[index].status = status;
    let mut response = (StatusCode::from_u16(status).unwrap(), Json(answer)).into_response();
    if status == 429 {
        // lichess asks for a minute; the stand-in for less, so the test is short.
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, header::HeaderValue::from_static("2"));
    }
    response
}

/// A token file with `mode` (0600: only its owner can read it).
pub(crate) fn token_file(dir: &Path, token: &str, mode: u32) -> PathBuf {
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

/// `eboard demo` at `speed`, pushing to the stand-in's round `AbCd1234`,
/// with `extra` flags.
fn demo_pushing_to(lichess: &Lichess, speed: &str, token: &Path, extra: &[&str]) -> Daemon {
    let mut args = vec![
        "demo",
        "--speed",
        speed,
        "--lichess-url",
        &lichess.url,
        "--lichess-round",
        "AbCd1234",
        "--lichess-token-file",
        token.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    Daemon::start(&args)
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
    let d = demo_pushing_to(&lichess, "4", &token, &[]);
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

    // /boards shows the push state. The stand-in records a push before
    // the daemon has read its answer: wait for the daemon to count it.
    let deadline = Instant::now() + Duration::from_secs(30);
    let state = loop {
        let state = d.json("/boards")["lichess"][0].clone();
        if state["pushes"].as_u64().is_some_and(|n| n >= 4) {
            break state;
        }
        assert!(Instant::now() < deadline, "{state}");
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_eq!(state["round"], "AbCd1234");
    assert!(state["pushes"].as_u64().unwrap() >= 4, "{state}");
    assert!(state["last_success_ms"].as_u64().is_some(), "{state}");
    assert_eq!(state["stopped"], false);
}

/// The `alert` events of `kind` in `/events` from the start, until `done`
/// holds for them (at most `secs`).
fn alert_events(d: &Daemon, kind: &str, secs: u64, done: impl Fn(&[Sse]) -> bool) -> Vec<Sse> {
    let mut sse = SseReader::open(&d.addr, Some("0"));
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut alerts = Vec::new();
    while !done(&alerts) {
        let ev = sse
            .next(deadline)
            .unwrap_or_else(|| panic!("no more {kind} alerts within {secs} s: {alerts:?}"));
        if ev.kind == "alert" && ev.data["kind"] == kind {
            alerts.push(ev);
        }
    }
    alerts
}

/// The alerts of `kind` in `/boards/{id}`.
fn board_alerts(d: &Daemon, id: u32, kind: &str) -> Vec<serde_json::Value> {
    d.json(&format!("/boards/{id}"))["alerts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["kind"] == kind)
        .cloned()
        .collect()
}

#[test]
fn issue_12_a_401_stops_pushing_and_alerts() {
    let dir = tempfile::tempdir().unwrap();
    let lichess = Lichess::start("lip_right", &[]);
    let token = token_file(dir.path(), "lip_revoked", 0o600);
    let d = demo_pushing_to(&lichess, "40", &token, &[]);
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

    // The arbiters are alerted on every board of the round, once, with
    // lichess's reason: in the event stream and in each board's alerts.
    let alerts = alert_events(&d, "lichess_push_failed", 30, |a| a.len() == 8);
    let mut boards: Vec<u64> = alerts
        .iter()
        .map(|a| a.data["board"].as_u64().unwrap())
        .collect();
    boards.sort_unstable();
    assert_eq!(boards, (1..=8).collect::<Vec<u64>>());
    for id in 1..=8 {
        let alerts = board_alerts(&d, id, "lichess_push_failed");
        assert_eq!(alerts.len(), 1, "board {id}: {alerts:?}");
        let message = alerts[0]["message"].as_str().unwrap();
        assert!(message.contains("No such token"), "{message}");
        assert!(message.contains("AbCd1234"), "{message}");
        assert_eq!(alerts[0]["acked"], false);
    }
}

#[test]
fn issue_12_a_game_lichess_refuses_is_one_alert_on_its_board() {
    let dir = tempfile::tempdir().unwrap();
    let lichess = Lichess::start("lip_games", &[]);
    lichess.refuse("eboard-3-1", "Invalid PGN: illegal move 4. Qh8");
    let token = token_file(dir.path(), "lip_games", 0o600);
    let d = demo_pushing_to(&lichess, "4", &token, &[]);
    // Five answers, each refusing board 3's game: the pusher has read at
    // least four of them (it sends one push after reading the previous
    // answer), so their alerts are journaled before /boards/3 is read.
    lichess.wait(90, |p| p.iter().filter(|p| p.status == 200).count() >= 5);
    let alerts = alert_events(&d, "lichess_game_rejected", 30, |a| !a.is_empty());
    assert_eq!(alerts[0].data["board"], 3, "{alerts:?}");
    let on_3 = board_alerts(&d, 3, "lichess_game_rejected");
    assert_eq!(on_3.len(), 1, "one alert however many pushes: {on_3:?}");
    let message = on_3[0]["message"].as_str().unwrap();
    assert!(
        message.contains("Invalid PGN: illegal move 4. Qh8"),
        "{message}"
    );
    assert!(message.contains("eboard-3-1"), "{message}");
    for id in (1..=8).filter(|&id| id != 3) {
        assert!(board_alerts(&d, id, "lichess_game_rejected").is_empty());
    }
    // The push state lists it too; the other games went through.
    let state = &d.json("/boards")["lichess"][0];
    assert_eq!(state["game_errors"][0]["board"], 3, "{state}");
    assert_eq!(state["game_errors"][0]["game"], "eboard-3-1", "{state}");
    assert_eq!(state["stopped"], false);
}

#[test]
fn issue_12_a_429_and_a_timeout_are_retried() {
    let dir = tempfile::tempdir().unwrap();
    // A 429 (with Retry-After: 2), then an answer that never comes in
    // time: eboard waits, gives up on the slow one after its timeout, and
    // then succeeds.
    let lichess = Lichess::start(
        "lip_slow",
        &[(429, Duration::ZERO), (200, Duration::from_secs(300))],
    );
    let token = token_file(dir.path(), "lip_slow", 0o600);
    let _d = demo_pushing_to(&lichess, "4", &token, &["--lichess-timeout-ms", "500"]);
    let pushes = lichess.wait(60, |p| p.iter().filter(|p| p.status == 200).count() >= 2);
    let statuses: Vec<u16> = pushes.iter().map(|p| p.status).collect();
    assert_eq!(statuses[..3], [429, 0, 200], "{statuses:?}");
    check_pushes(&pushes);
}

#[test]
fn issue_12_clock_tags_and_clk_follow_the_clock() {
    let dir = tempfile::tempdir().unwrap();
    let lichess = Lichess::start("lip_clock", &[]);
    token_file(dir.path(), "lip_clock", 0o600);
    std::fs::write(dir.path().join("board.board"), SCRIPT).unwrap();
    let config = format!(
        "event = \"Clock Cup\"\nround = \"1\"\n\n[lichess]\ntoken_file = \"lichess.token\"\nround = \"ClockRound\"\nurl = \"{}\"\n\n[[board]]\nid = 1\nsource = \"script:board.board\"\nwhite = {{ name = \"A\" }}\nblack = {{ name = \"B\" }}\n",
        lichess.url
    );
    let config_path = dir.path().join("event.toml");
    std::fs::write(&config_path, config).unwrap();
    let data = dir.path().join("data");
    let _d = Daemon::start(&run_args(&config_path, &data, "5"));
    let pushes = lichess.wait(60, |pushes| {
        pushes.iter().any(|p| {
            p.status == 200 && read_games(p.body.as_bytes()).is_ok_and(|g| g[0].moves.len() == 3)
        })
    });
    let last = pushes
        .iter()
        .rfind(|p| p.status == 200)
        .expect("a successful push");
    let game = &read_games(last.body.as_bytes()).unwrap()[0];
    // From the script: after 1. e4 the clock shows 4:58 for White, after
    // 1... e5 4:57 for Black, after 2. Nf3 4:50 for White.
    assert_eq!(sans(game), ["e4", "e5", "Nf3"]);
    assert_eq!(
        game.clocks,
        [Some(298), Some(297), Some(290)],
        "{}",
        last.body
    );
    assert_eq!(tag(game, "WhiteClock"), Some("0:04:50"), "{}", last.body);
    assert_eq!(tag(game, "BlackClock"), Some("0:04:57"), "{}", last.body);
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
    let d = Daemon::start(&run_args(&config_path, &data, "5"));
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

/// How many moves the games of a push hold in all.
fn pushed_moves(p: &Push) -> usize {
    read_games(p.body.as_bytes())
        .map(|games| games.iter().map(|g| g.moves.len()).sum())
        .unwrap_or(0)
}

/// Issue 36: with a broadcast delay the push shows the delayed round (no
/// move before the delay has passed since the daemon started), and with
/// `--lichess-live` (for a lichess round that delays by itself) the live
/// one.
#[test]
fn issue_36_the_push_is_delayed_with_the_broadcast_or_live_when_asked() {
    const DELAY: u64 = 10;
    for live in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let token = token_file(dir.path(), "lip_secret", 0o600);
        let lichess = Lichess::start("lip_secret", &[]);
        let started = Instant::now();
        let mut extra = vec!["--broadcast-delay", "10s"];
        if live {
            extra.push("--lichess-live");
        }
        let d = demo_pushing_to(&lichess, "4", &token, &extra);
        let pushes = lichess.wait(60, |p| p.iter().any(|p| pushed_moves(p) > 0));
        let first = pushes.iter().find(|p| pushed_moves(p) > 0).unwrap();
        let after = first.at.duration_since(started);
        if live {
            assert!(
                after < Duration::from_secs(DELAY - 1),
                "live: the first move was pushed {after:?} after the start"
            );
            // The public reads stay delayed meanwhile.
            let boards = d.json("/boards");
            if started.elapsed() < Duration::from_secs(DELAY - 1) {
                assert!(
                    boards["boards"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .all(|b| b["ply"] == 0),
                    "{boards}"
                );
            }
        } else {
            assert!(
                after >= Duration::from_secs(DELAY),
                "delayed: a move was pushed {after:?} after the start"
            );
        }
        check_pushes(&pushes);
    }
}
