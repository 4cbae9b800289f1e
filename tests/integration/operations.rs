//! Running the daemon day to day (issue 11, item 7): the listen address,
//! the log, the tab icon, the sources the docs describe.

use std::{
    io::{BufRead, BufReader},
    net::SocketAddr,
    path::Path,
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use eboard::pgn::read_games;

use crate::{
    daemon::{Daemon, demo_games, sans},
    lichess::token_file,
};

/// `--listen localhost:PORT` is resolved, not refused as "invalid socket
/// address syntax".
#[test]
fn issue_11_listen_takes_a_host_name() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_eboard"))
        .args(["demo", "--listen", "localhost:0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(rest) = line.strip_prefix("eboard: listening on http://") {
                let _ = tx.send(rest.trim_end_matches('/').to_owned());
            }
        }
    });
    let listening = rx.recv_timeout(Duration::from_secs(60));
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    let addr = listening.unwrap_or_else(|_| {
        panic!(
            "no address printed: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let addr: SocketAddr = addr.parse().unwrap();
    assert!(addr.ip().is_loopback(), "{addr}");
    assert_ne!(addr.port(), 0);
}

#[test]
fn issue_11_a_listen_address_without_a_port_is_a_clear_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_eboard"))
        .args(["demo", "--listen", "localhost"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("HOST:PORT"), "{stderr}");
}

/// A log written to a file (not a terminal) has no colour escapes.
#[test]
fn issue_11_logs_to_a_file_are_plain_text() {
    let dir = tempfile::tempdir().unwrap();
    let token = token_file(dir.path(), "lip_x", 0o600);
    let log = dir.path().join("eboard.log");
    // Port 1 on loopback refuses the push: a warning, with fields, at once.
    let _d = Daemon::start_logged(
        &[
            "demo",
            "--lichess-url",
            "http://127.0.0.1:1",
            "--lichess-round",
            "AbCd1234",
            "--lichess-token-file",
            token.to_str().unwrap(),
        ],
        Stdio::from(std::fs::File::create(&log).unwrap()),
    );
    let text = wait_for_file(&log, "lichess push failed", 60);
    assert!(
        !text.contains('\u{1b}'),
        "colour escapes in the log: {text:?}"
    );
    assert!(text.contains("WARN"), "{text}");
}

fn wait_for_file(path: &Path, needle: &str, secs: u64) -> String {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.contains(needle) {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "'{needle}' not in {} within {secs} s: {text}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Browsers ask for `/favicon.ico` with every page: an icon, not a 404.
#[test]
fn issue_11_the_dashboard_has_a_favicon() {
    let d = Daemon::start(&["demo"]);
    let r = d.get("/favicon.ico");
    assert_eq!(r.status, 200);
    assert_eq!(r.headers["content-type"], "image/svg+xml");
    assert!(r.body.starts_with("<svg"), "{}", r.body);
}

/// The demo plays its round again once every game is over, so someone who
/// opens the dashboard late sees live boards: each board's broadcast game
/// becomes its second game (a new GameId), and that game is the bundled
/// game again, played to its end.
#[test]
fn issue_11_the_demo_plays_its_round_again() {
    let d = Daemon::start(&["demo", "--speed", "50"]);
    let expected = demo_games();
    let deadline = Instant::now() + Duration::from_secs(180);
    loop {
        let body = d.get("/round.pgn").body;
        let games = read_games(body.as_bytes()).unwrap();
        let second_round_done = games.len() == expected.len()
            && games.iter().zip(&expected).enumerate().all(|(i, (g, e))| {
                let id = g.tags.iter().find(|(n, _)| n == "GameId");
                id.is_some_and(|(_, v)| *v == format!("eboard-{}-2", i + 1))
                    && sans(g) == sans(e)
                    && g.result == e.result
            });
        if second_round_done {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the demo did not play its round a second time within 180 s:\n{body}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    // The boards go on: every one is playing or has played its third game.
    d.wait_boards(120, |b| b["game"].as_u64().unwrap_or(0) >= 2);
}
