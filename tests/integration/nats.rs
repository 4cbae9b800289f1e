//! Several halls (issue 13): hall nodes publish their journals to a real
//! `nats-server -js` on a free loopback port, centrals serve the whole
//! round from its stream. The broker, the hall nodes and the centrals are
//! child processes, killed the hard way mid-round.
//!
//! Where `nats-server` cannot be found (PATH or /usr/sbin) the tests print
//! a notice and pass without running; `.ci/run` installs it.

use std::{
    collections::HashMap,
    io::Read,
    net::{TcpListener, TcpStream},
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use eboard::pgn::read_games;

use crate::daemon::{Daemon, Sse, SseReader, demo_games, demo_pgn, http, sans};

// === the broker ===

fn nats_server() -> Option<PathBuf> {
    let from_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    from_path
        .into_iter()
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/local/sbin")])
        .map(|d| d.join("nats-server"))
        .find(|p| p.is_file())
}

/// A `nats-server -js` child on 127.0.0.1, its store in a directory of the
/// test; killed when dropped.
struct Broker {
    exe: PathBuf,
    port: u16,
    store: PathBuf,
    child: Option<Child>,
}

fn free_port() -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

impl Broker {
    /// Starts a broker, or prints why it cannot and returns `None`.
    fn start(dir: &Path) -> Option<Broker> {
        let Some(exe) = nats_server() else {
            eprintln!(
                "notice: nats-server is not installed (apt-get install nats-server); the several-halls test is skipped"
            );
            return None;
        };
        let mut b = Broker {
            exe,
            port: free_port(),
            store: dir.join("broker"),
            child: None,
        };
        b.resume();
        Some(b)
    }

    fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Starts the server (again, on the same port and store) and waits until
    /// it accepts connections.
    fn resume(&mut self) {
        let child = Command::new(&self.exe)
            .args([
                "-js",
                "-a",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-sd",
            ])
            .arg(&self.store)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start nats-server");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "nats-server did not listen");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Stops the server (SIGTERM, as an operator would) and waits for it.
    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill")
                .args(["-TERM", &child.id().to_string()])
                .status();
            let deadline = Instant::now() + Duration::from_secs(10);
            while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

// === the round ===

const HEAD: &str = "event = \"Halls Open\"\nsite = \"Loopback\"\nround = \"2\"\ndate = \"2026.03.04\"\ntime_control = \"300\"\n";

/// A hall node's config: board `id` plays game `game` of the demo file.
fn hall_config(dir: &Path, node: &str, boards: &[(u32, usize)]) -> PathBuf {
    let mut text = format!("{HEAD}\n[publish]\nnode = \"{node}\"\n");
    for (id, game) in boards {
        text.push_str(&format!(
            "\n[[board]]\nid = {id}\nsource = \"pgn:{}\"\ngame = {game}\nwhite = {{ name = \"White {id}\" }}\nblack = {{ name = \"Black {id}\" }}\n",
            demo_pgn().display()
        ));
    }
    let path = dir.join(format!("{node}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// The central's round file: the boards and players, no sources.
fn round_config(dir: &Path, ids: &[u32]) -> PathBuf {
    let mut text = HEAD.to_owned();
    for id in ids {
        text.push_str(&format!(
            "\n[[board]]\nid = {id}\nwhite = {{ name = \"White {id}\" }}\nblack = {{ name = \"Black {id}\" }}\n"
        ));
    }
    let path = dir.join("round.toml");
    std::fs::write(&path, text).unwrap();
    path
}

const SPEED: &str = "6";

fn hall(config: &Path, data: &Path, url: &str) -> Daemon {
    Daemon::start(&[
        "run",
        "--config",
        config.to_str().unwrap(),
        "--data-dir",
        data.to_str().unwrap(),
        "--publish",
        url,
        "--speed",
        SPEED,
    ])
}

fn central(config: &Path, data: &Path, url: &str, log: Option<&Path>) -> Daemon {
    let args = [
        "serve",
        "--config",
        config.to_str().unwrap(),
        "--data-dir",
        data.to_str().unwrap(),
        "--from",
        url,
    ];
    match log {
        Some(path) => Daemon::start_logged(&args, std::fs::File::create(path).unwrap().into()),
        None => Daemon::start(&args),
    }
}

/// Polls `d`'s `/round.pgn` (at most `secs`) until it is `expected`.
fn wait_pgn(d: &Daemon, expected: &str, secs: u64, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let got = d.get("/round.pgn").body;
        if got == expected {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{what}: /round.pgn is not the round's within {secs} s:\n{got}\n--- expected ---\n{expected}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Every event of a central from its first one, until none comes for 2 s.
fn all_events(d: &Daemon) -> Vec<Sse> {
    let mut sse = SseReader::open(&d.addr, Some("0"));
    let mut out = Vec::new();
    while let Some(e) = sse.next(Instant::now() + Duration::from_secs(2)) {
        out.push(e);
    }
    out
}

/// How many messages the stream holds per board subject (read with a
/// NATS client of its own).
fn stream_counts(url: &str) -> HashMap<String, usize> {
    use futures_util::StreamExt as _;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let client = async_nats::connect(url).await.unwrap();
        let js = async_nats::jetstream::new(client);
        let stream = js.get_stream("EBOARD").await.unwrap();
        let mut subjects = stream.info_with_subjects("EBOARD.board.>").await.unwrap();
        let mut out = HashMap::new();
        while let Some(s) = subjects.next().await {
            let (subject, count) = s.unwrap();
            out.insert(subject, count);
        }
        out
    })
}

fn token(data: &Path) -> String {
    std::fs::read_to_string(data.join("token"))
        .unwrap()
        .trim()
        .to_owned()
}

// === the tests ===

/// Issue 13: two hall nodes of 4 boards and a central, through a central
/// SIGKILLed and restarted, the broker stopped for 5 s and a hall node
/// SIGKILLed and restarted; a second central from nothing; an action at one
/// central seen by the other; a board number published by a third node.
#[test]
fn regression_13_several_halls_survive_their_failures() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut broker) = Broker::start(dir.path()) else {
        return;
    };
    let url = broker.url();
    let games = demo_games();
    let a_boards: Vec<(u32, usize)> = (1..=4).map(|i| (i, i as usize)).collect();
    let b_boards: Vec<(u32, usize)> = (5..=8).map(|i| (i, i as usize)).collect();
    let a_conf = hall_config(dir.path(), "hall-a", &a_boards);
    let b_conf = hall_config(dir.path(), "hall-b", &b_boards);
    let round = round_config(dir.path(), &(1..=8).collect::<Vec<_>>());
    let (a_data, b_data) = (dir.path().join("a"), dir.path().join("b"));
    let c_data = dir.path().join("c");

    let mut c1 = central(&round, &c_data, &url, None);
    let a = hall(&a_conf, &a_data, &url);
    let mut b = hall(&b_conf, &b_data, &url);

    // (a) The central is killed mid-round and comes back.
    std::thread::sleep(Duration::from_secs(3));
    c1.kill();
    c1 = central(&round, &c_data, &url, None);
    // (b) The broker stops for 5 s; the halls go on recording.
    std::thread::sleep(Duration::from_secs(2));
    broker.stop();
    let b_journal = b_data.join("boards/5.jsonl");
    let before = std::fs::metadata(&b_journal).unwrap().len();
    std::thread::sleep(Duration::from_secs(5));
    assert!(
        std::fs::metadata(&b_journal).unwrap().len() > before,
        "a hall node records while the broker is away"
    );
    broker.resume();
    // (c) A hall node is killed and comes back.
    std::thread::sleep(Duration::from_secs(2));
    b.kill();
    b = hall(&b_conf, &b_data, &url);

    // The halls finish their games.
    for h in [&a, &b] {
        h.wait_boards(120, |x| x["connection"] == "ended");
    }
    let a_pgn = a.get("/round.pgn").body;
    let expected = format!("{a_pgn}{}", b.get("/round.pgn").body);
    // The games played, independently of eboard's output: the demo file's.
    let parsed = read_games(expected.as_bytes()).unwrap();
    assert_eq!(parsed.len(), 8);
    for (i, g) in parsed.iter().enumerate() {
        assert_eq!(sans(g), sans(&games[i]), "board {}", i + 1);
        assert_eq!(g.result, games[i].result, "board {}", i + 1);
    }
    wait_pgn(&c1, &expected, 60, "the central");
    // Every journal line is in the stream once: no gap, no duplicate.
    let counts = stream_counts(&url);
    for id in 1..=8 {
        let data = if id <= 4 { &a_data } else { &b_data };
        let lines = std::fs::read_to_string(data.join(format!("boards/{id}.jsonl")))
            .unwrap()
            .lines()
            .count();
        assert_eq!(
            counts.get(&format!("EBOARD.board.{id}")),
            Some(&lines),
            "board {id}"
        );
    }
    let boards = c1.json("/boards");
    for x in boards["boards"].as_array().unwrap() {
        let node = if x["id"].as_u64().unwrap() <= 4 {
            "hall-a"
        } else {
            "hall-b"
        };
        assert_eq!(x["node"], node, "{x}");
        assert_eq!(x["open_alerts"], serde_json::json!([]), "{x}");
    }

    // The events' ids come from the stream: a restarted central and a
    // second central started from nothing give the same ids and events.
    let events = all_events(&c1);
    assert!(events.iter().any(|e| e.kind == "move"));
    c1.kill();
    let c1 = central(&round, &c_data, &url, None);
    let mid = events.len() / 2;
    let mut resumed = SseReader::open(&c1.addr, Some(&events[mid].id));
    let deadline = Instant::now() + Duration::from_secs(20);
    for expected in &events[mid + 1..] {
        assert_eq!(resumed.next(deadline).as_ref(), Some(expected));
    }
    let c2_data = dir.path().join("c2");
    let c2 = central(&round, &c2_data, &url, None);
    wait_pgn(&c2, &expected, 30, "a second central");
    assert_eq!(all_events(&c2), events);

    // An arbiter action at the second central reaches the first one
    // through the stream; the hall node is told nothing.
    let bearer = format!("Bearer {}", token(&c2_data));
    let r = http(
        &c2.addr,
        "POST",
        "/boards/3/actions",
        &[("Authorization", &bearer)],
        Some(r#"{"action":"players","white":{"name":"Renamed, Player"}}"#),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let renamed = expected.replacen("[White \"White 3\"]", "[White \"Renamed, Player\"]", 1);
    assert_ne!(renamed, expected);
    wait_pgn(&c2, &renamed, 20, "the acting central");
    wait_pgn(&c1, &renamed, 20, "the other central");
    assert_eq!(a.get("/round.pgn").body, a_pgn);

    // A third node publishes board 2 too: an alert and a log line naming
    // both nodes on the central; nothing of its board is merged.
    drop(c1);
    let log = dir.path().join("central.log");
    let c1 = central(&round, &c_data, &url, Some(&log));
    wait_pgn(&c1, &renamed, 30, "the central again");
    let x_conf = hall_config(dir.path(), "hall-x", &[(2, 6)]);
    let x = hall(&x_conf, &dir.path().join("x"), &url);
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let board = c1.json("/boards/2");
        let alerts = board["alerts"].as_array().unwrap();
        if let Some(alert) = alerts.iter().find(|a| a["kind"] == "duplicate_board") {
            let m = alert["message"].as_str().unwrap();
            assert!(m.contains("hall-a") && m.contains("hall-x"), "{m}");
            assert_eq!(board["node"], "hall-a");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no duplicate_board alert: {board}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(c1.get("/round.pgn").body, renamed, "never merged");
    let mut text = String::new();
    std::fs::File::open(&log)
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    assert!(
        text.lines()
            .any(|l| l.contains("ERROR") && l.contains("hall-a") && l.contains("hall-x")),
        "{text}"
    );
    drop(x);
}

/// Issue 38, fault 9: a hall stopped with SIGTERM publishes every line of
/// its journals before it exits (status 0): the stream holds as many
/// messages of the board as its journal has lines.
#[test]
fn a_hall_stopped_with_sigterm_publishes_its_last_line_first() {
    let dir = tempfile::tempdir().unwrap();
    let Some(broker) = Broker::start(dir.path()) else {
        return;
    };
    let url = broker.url();
    let conf = hall_config(dir.path(), "hall-t", &[(1, 1)]);
    let data = dir.path().join("t");
    let h = hall(&conf, &data, &url);
    h.wait_boards(60, |b| b["ply"].as_u64().unwrap_or(0) >= 4);
    let status = h.terminate();
    assert_eq!(status.code(), Some(0));
    let lines = std::fs::read_to_string(data.join("boards/1.jsonl"))
        .unwrap()
        .lines()
        .count();
    let counts = stream_counts(&url);
    assert_eq!(counts.get("EBOARD.board.1"), Some(&lines), "{counts:?}");
}
