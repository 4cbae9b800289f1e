//! Issue 38: nothing acknowledged is ever lost — a clean stop drains every
//! journal line, a data directory removed under the daemon gets its lock
//! back, and journals that were cut, copied or edited are refused at start
//! with their file and line. The daemon runs as a child process on
//! 127.0.0.1, as in `daemon.rs`.

use std::{
    path::Path,
    process::Stdio,
    time::{Duration, Instant},
};

use crate::{
    daemon::{Daemon, run_args, script_board},
    faults::refused,
};

/// A game of a few moves with clock presses, slow enough to be running
/// when the test acts on the daemon.
const SLOW: &str = "\
@1000 lift e2
@1200 place e4 P
@1500 press white
@3000 lift e7
@3200 place e5 p
@3500 press black
@60000 lift g1
@60200 place f3 N
@60500 press white
";

/// Waits (at most `secs`) until `done` holds.
fn wait_until(secs: u64, what: &str, done: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !done() {
        assert!(Instant::now() < deadline, "{what} not within {secs} s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// SIGTERM: the daemon drains what it took, records each journal's length
/// in `journals.json`, reports no failed write, and exits 0.
#[test]
fn sigterm_drains_every_journal_line_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let (config, data) = script_board(dir.path(), "Stop Cup", SLOW);
    let log = dir.path().join("log");
    let d = Daemon::start_logged(
        &run_args(&config, &data, "1"),
        std::fs::File::create(&log).unwrap().into(),
    );
    d.wait_boards(30, |b| b["ply"].as_u64().unwrap_or(0) >= 1);
    let status = d.terminate();
    assert_eq!(
        status.code(),
        Some(0),
        "{}",
        std::fs::read_to_string(&log).unwrap()
    );
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(!text.contains("journal failed"), "{text}");
    let journal = data.join("boards/1.jsonl");
    let len = std::fs::metadata(&journal).unwrap().len();
    let lines = std::fs::read_to_string(&journal).unwrap().lines().count() as u64;
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data.join("journals.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["journals"]["1"]["len"], len, "{manifest}");
    assert_eq!(manifest["journals"]["1"]["seq"], lines, "{manifest}");
    // The journal's first line names its round.
    let first = std::fs::read_to_string(&journal).unwrap();
    let first: serde_json::Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
    assert_eq!(first["round"]["event"], "Stop Cup", "{first}");
    // The journals were synced at the stop: the commit log holds nothing.
    assert_eq!(std::fs::metadata(data.join("commit.log")).unwrap().len(), 0);
}

/// Lines are made durable by one sync of the round's commit log per batch,
/// not one per journal. A crash that takes a journal's last lines with the
/// page cache loses nothing acknowledged: at the next start they are
/// written back from the log, before the journal is read.
#[test]
fn lines_a_crash_took_from_a_journal_are_written_back_from_the_commit_log() {
    let dir = tempfile::tempdir().unwrap();
    let (config, data) = script_board(dir.path(), "Crash Cup", SLOW);
    let d = Daemon::start_logged(&run_args(&config, &data, "1"), Stdio::null());
    let journal = data.join("boards/1.jsonl");
    // Both presses journaled: 1.e4 e5 completed.
    wait_until(30, "two presses journaled", || {
        std::fs::read_to_string(&journal).is_ok_and(|j| j.matches("\"press\"").count() >= 2)
    });
    d.kill();
    let whole = std::fs::read_to_string(&journal).unwrap();
    assert!(std::fs::metadata(data.join("commit.log")).unwrap().len() > 0);
    // As a power cut would: the journal's last lines (1...e5 and Black's
    // press among them) never reached the disk.
    let lines: Vec<&str> = whole.lines().collect();
    let kept = lines.len().saturating_sub(4);
    let cut: String = lines[..kept].iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&journal, cut).unwrap();
    let d = Daemon::start_logged(&run_args(&config, &data, "1"), Stdio::null());
    let again = std::fs::read_to_string(&journal).unwrap();
    assert!(again.starts_with(&whole), "the lines acknowledged are back");
    let pgn = d.get("/boards/1.pgn").body;
    assert!(pgn.contains("1. e4 e5"), "{pgn}");
    d.kill();
}

/// Fault 1: `rm -rf` of a live data directory. The daemon puts the lock,
/// the token and the journal back, and a second daemon on the directory is
/// still refused.
#[test]
fn a_data_directory_removed_under_the_daemon_keeps_its_lock() {
    let dir = tempfile::tempdir().unwrap();
    let (config, data) = script_board(dir.path(), "Lock Cup", SLOW);
    let d = Daemon::start_logged(&run_args(&config, &data, "1"), Stdio::null());
    d.wait_boards(30, |b| b["ply"].as_u64().unwrap_or(0) >= 1);
    let token = std::fs::read_to_string(data.join("token")).unwrap();
    std::fs::remove_dir_all(&data).unwrap();
    wait_until(20, "the lock, token and journal put back", || {
        data.join("lock").exists()
            && data.join("token").exists()
            && data.join("boards/1.jsonl").exists()
    });
    assert_eq!(std::fs::read_to_string(data.join("token")).unwrap(), token);
    let err = refused(&run_args(&config, &data, "1"));
    assert!(err.contains("in use by another eboard daemon"), "{err}");
    d.kill();
}

/// A config of two script boards playing `SLOW`, and its data directory.
fn two_boards(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let script = dir.join("board.board");
    std::fs::write(&script, SLOW).unwrap();
    let config = dir.join("event.toml");
    let mut text = "event = \"Check Cup\"\nround = \"2\"\n".to_owned();
    for id in 1..=2 {
        text.push_str(&format!(
            "[[board]]\nid = {id}\nsource = \"script:{}\"\nwhite = {{ name = \"A\" }}\nblack = {{ name = \"B\" }}\n",
            script.display()
        ));
    }
    std::fs::write(&config, text).unwrap();
    let data = dir.join("data");
    std::fs::create_dir_all(data.join("boards")).unwrap();
    (config, data)
}

/// A tick line.
fn tick(seq: u64, g: u64, at: u64) -> String {
    format!("{{\"seq\":{seq},\"g\":{g},\"at\":{at},\"type\":\"tick\"}}\n")
}

/// Writes board `id`'s journal.
fn journal(data: &Path, id: u32, lines: &[String]) {
    std::fs::write(data.join(format!("boards/{id}.jsonl")), lines.concat()).unwrap();
}

/// Fault 3: journals that were cut, copied from another round or edited
/// are refused at start, with the file and line.
#[test]
fn journals_cut_copied_or_edited_are_refused_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let (config, data) = two_boards(dir.path());
    let args = run_args(&config, &data, "1");
    let three = [tick(1, 1, 0), tick(2, 3, 10), tick(3, 5, 20)];
    let known = |len: usize| {
        format!("{{\"boards\":[1,2],\"journals\":{{\"1\":{{\"len\":{len},\"seq\":3}}}}}}\n")
    };
    let full: usize = three.iter().map(String::len).sum();
    // Emptied to 0 bytes while journals.json lists what it held.
    std::fs::write(data.join("journals.json"), known(full)).unwrap();
    journal(&data, 1, &[]);
    journal(&data, 2, &[]);
    let err = refused(&args);
    assert!(
        err.contains("1.jsonl:1:") && err.contains("cut or replaced"),
        "{err}"
    );
    // Cut at a line boundary.
    journal(&data, 1, &three[..2]);
    let err = refused(&args);
    assert!(
        err.contains("1.jsonl:3:") && err.contains("cut or replaced"),
        "{err}"
    );
    std::fs::remove_file(data.join("journals.json")).unwrap();
    // Copied from another round (its first line names it).
    let mut other = tick(1, 1, 0);
    other.insert_str(
        other.len() - 2,
        ",\"round\":{\"event\":\"Other Open\",\"round\":\"7\"}",
    );
    journal(&data, 1, &[other]);
    let err = refused(&args);
    assert!(
        err.contains("1.jsonl:1:") && err.contains("another round"),
        "{err}"
    );
    // A `g` going backwards.
    journal(&data, 1, &[tick(1, 5, 0), tick(2, 3, 10)]);
    let err = refused(&args);
    assert!(
        err.contains("1.jsonl:2:") && err.contains("must increase"),
        "{err}"
    );
    // An `at` going backwards.
    journal(&data, 1, &[tick(1, 1, 50), tick(2, 2, 10)]);
    let err = refused(&args);
    assert!(
        err.contains("1.jsonl:2:") && err.contains("must not go back"),
        "{err}"
    );
    // A `g` shared with another board.
    journal(&data, 1, &[tick(1, 1, 0), tick(2, 4, 10)]);
    journal(&data, 2, &[tick(1, 2, 0), tick(2, 4, 10)]);
    let err = refused(&args);
    assert!(
        err.contains(":2: g 4 is also") && err.contains("1.jsonl:2"),
        "{err}"
    );
    journal(&data, 2, &[]);
    // `g` or `at` at 2^64 − 1.
    for line in [tick(1, u64::MAX, 0), tick(1, 1, u64::MAX)] {
        journal(&data, 1, &[line]);
        let err = refused(&args);
        assert!(
            err.contains("1.jsonl:1:") && err.contains("beyond"),
            "{err}"
        );
    }
    // A journal written before rounds were named starts (legacy).
    journal(&data, 1, &three);
    let d = Daemon::start_logged(&args, Stdio::null());
    d.kill();
}

/// Fault 4: one client cannot hold the whole connection cap. A peer
/// (127.0.0.2) that opens more half-sent requests than its share is
/// answered 503 on the extra one at once, and another client (127.0.0.1)
/// is served meanwhile.
#[test]
fn one_client_cannot_hold_every_connection() {
    use std::io::{Read, Write};
    let dir = tempfile::tempdir().unwrap();
    let (config, data) = script_board(dir.path(), "Many Cup", SLOW);
    let d = Daemon::start_logged(&run_args(&config, &data, "1"), Stdio::null());
    let addr: std::net::SocketAddr = d.addr.parse().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let open = || {
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind("127.0.0.2:0".parse().unwrap()).unwrap();
        let stream = runtime.block_on(socket.connect(addr)).unwrap();
        let mut s = stream.into_std().unwrap();
        s.set_nonblocking(false).unwrap();
        s.write_all(b"GET /boards HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            .unwrap();
        s
    };
    let held: Vec<_> = (0..eboard::daemon::server::MAX_PER_CLIENT)
        .map(|_| open())
        .collect();
    let mut extra = open();
    extra
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut answer = String::new();
    let _ = extra.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("connections"), "{answer}");
    assert_eq!(d.get("/boards").status, 200, "another client is served");
    drop(held);
    d.kill();
}
