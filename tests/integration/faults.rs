//! Issue 11: the daemon under faults and abuse — clients that never read,
//! journals that vanish or cannot be written, a finished game's broadcast.
//! The daemon runs as a child process on 127.0.0.1, as in `daemon.rs`.

use std::{
    io::{Read, Write},
    net::TcpStream,
    time::{Duration, Instant},
};

use crate::daemon::{Daemon, SCRIPT, connect, http, run_args, script_board};

/// The daemon's resident memory (`VmRSS`), in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .expect("VmRSS")
}

/// Opens `GET /events?since=<since>` and reads the response's first bytes
/// (at most `want`, until a blank line ends the head or `want` is reached).
fn open_stream(addr: &str, since: &str, want: usize) -> (TcpStream, String) {
    let mut s = connect(addr);
    let req = format!("GET /events?since={since} HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    s.write_all(req.as_bytes()).unwrap();
    let mut got = Vec::new();
    let mut buf = [0u8; 64];
    while got.len() < want && !got.windows(4).any(|w| w == b"\r\n\r\n") {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    (s, String::from_utf8_lossy(&got).into_owned())
}

/// A journal line that derives one event (`connection`), cheap to replay.
fn connection_line(seq: u64, g: u64) -> String {
    format!(
        "{{\"seq\":{seq},\"g\":{g},\"at\":0,\"type\":\"connection\",\"state\":\"connected\"}}\n"
    )
}

/// 100 clients ask for the whole backlog (`since=0`, 210,000 events from
/// journals written before the start) and never read it: the daemon's
/// resident memory stays under 300 MB, and does not grow after they leave.
/// The stream cap (set to 100 here) answers the 101st stream 503, a client
/// asking for events older than the log keeps gets `resync` first, and the
/// permits come back when the clients go.
#[test]
fn issue_11_clients_that_never_read_a_large_backlog_keep_memory_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("quiet.board");
    std::fs::write(&script, "@1000 lift e2\n@1300 place e4\n").unwrap();
    let config = dir.path().join("event.toml");
    let mut text = String::from("event = \"Backlog Open\"\n");
    for id in [1, 2] {
        text.push_str(&format!(
            "[[board]]\nid = {id}\nsource = \"script:{}\"\nwhite = {{ name = \"A\" }}\nblack = {{ name = \"B\" }}\n",
            script.display()
        ));
    }
    std::fs::write(&config, text).unwrap();
    // Board 1 has the odd numbers up to 199,999, board 2 the even ones and
    // 10,000 more: 210,000 events, 10,000 more than the hub's log keeps.
    let data = dir.path().join("data");
    let boards = data.join("boards");
    std::fs::create_dir_all(&boards).unwrap();
    let (n1, n2) = (100_000u64, 110_000u64);
    let mut one = String::with_capacity(7_000_000);
    for seq in 1..=n1 {
        one.push_str(&connection_line(seq, 2 * seq - 1));
    }
    std::fs::write(boards.join("1.jsonl"), one).unwrap();
    let mut two = String::with_capacity(8_000_000);
    for seq in 1..=n2 {
        let g = if seq <= n1 { 2 * seq } else { n1 + seq };
        two.push_str(&connection_line(seq, g));
    }
    std::fs::write(boards.join("2.jsonl"), two).unwrap();

    let mut args = run_args(&config, &data, "1");
    args.extend(["--max-event-streams", "100"]);
    let d = Daemon::start(&args);
    let pid = d.pid();
    let baseline = rss_kib(pid);

    let clients: Vec<TcpStream> = (0..100)
        .map(|i| {
            let (s, head) = open_stream(&d.addr, "0", 12);
            assert!(head.starts_with("HTTP/1.1 200"), "client {i}: {head}");
            s
        })
        .collect();
    let (_, head) = open_stream(&d.addr, "0", 12);
    assert!(head.starts_with("HTTP/1.1 503"), "the 101st stream: {head}");
    // The daemon fills the clients' sockets and then holds a page each:
    // sample it for a while.
    let mut during = 0;
    for _ in 0..25 {
        during = during.max(rss_kib(pid));
        assert_eq!(d.get("/boards").status, 200, "answers beside them");
        std::thread::sleep(Duration::from_millis(200));
    }
    drop(clients);

    // The permits come back as the streams end.
    let deadline = Instant::now() + Duration::from_secs(30);
    let (mut reader, mut seen) = loop {
        let (s, head) = open_stream(&d.addr, "0", 12);
        if head.starts_with("HTTP/1.1 200") {
            break (s, head);
        }
        assert!(
            Instant::now() < deadline,
            "no stream accepted 30 s after the clients left: {head}"
        );
        std::thread::sleep(Duration::from_millis(200));
    };
    // Events before the log's start were asked for: `resync` comes before
    // the first event.
    reader
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut buf = [0u8; 4096];
    while !seen.contains("\nid: ") {
        let n = reader.read(&mut buf).expect("the stream goes on");
        assert!(n > 0, "the stream ended: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    let first_id = seen.find("\nid: ").unwrap();
    assert!(
        seen[..first_id].contains("event: resync"),
        "resync before the first event: {seen}"
    );
    drop(reader);
    std::thread::sleep(Duration::from_secs(1));
    let after = rss_kib(pid);
    eprintln!(
        "resident memory: {} MiB at start, {} MiB with 100 clients not reading, {} MiB after",
        baseline / 1024,
        during / 1024,
        after / 1024
    );
    assert!(
        during < 300 * 1024,
        "{} MiB resident with 100 clients",
        during / 1024
    );
    assert!(
        during < baseline + 100 * 1024,
        "100 clients cost {} MiB",
        (during - baseline) / 1024
    );
    assert!(
        after <= during + 16 * 1024,
        "{} MiB after the clients left, {} MiB with them",
        after / 1024,
        during / 1024
    );
}

/// A script that plays three moves, then a clock that goes on reporting
/// for a minute.
fn reporting_clock_script() -> String {
    let mut script = String::from(SCRIPT);
    for s in 0..=60u64 {
        let at = 10_000 + s * 1000;
        script.push_str(&format!(
            "@{at} clock 0:04:{:02} 0:03:{:02}\n",
            50 - s % 50,
            59 - s % 59
        ));
    }
    script
}

/// Issue 11, item 6: after the arbiter's result the clock goes on reporting
/// for a minute; the finished game's broadcast PGN stays byte for byte the
/// same, and no move is completed again on the event stream.
#[test]
fn issue_11_finished_game_pgn_is_frozen_against_clock_reports() {
    let dir = tempfile::tempdir().unwrap();
    let (config, data) = script_board(dir.path(), "Frozen Cup", &reporting_clock_script());
    let d = Daemon::start(&run_args(&config, &data, "10"));
    let mut sse = crate::daemon::SseReader::open(&d.addr, Some("0"));
    d.wait_boards(30, |b| b["completed"].as_u64().unwrap_or(0) >= 3);
    let token = std::fs::read_to_string(data.join("token")).unwrap();
    let bearer = format!("Bearer {}", token.trim());
    let r = http(
        &d.addr,
        "POST",
        "/boards/1/actions",
        &[("Authorization", bearer.as_str())],
        Some(r#"{"action":"result","result":"1-0","note":"forfeit"}"#),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    let board_pgn = d.get("/boards/1.pgn").body;
    let round_pgn = d.get("/round.pgn").body;
    assert!(board_pgn.contains("[Result \"1-0\"]"), "{board_pgn}");
    assert!(board_pgn.contains("2. Nf3 {[%clk 0:04:50]}"), "{board_pgn}");
    assert!(
        board_pgn.contains("[WhiteClock \"0:04:50\"]"),
        "{board_pgn}"
    );
    d.wait_boards(30, |b| b["connection"] == "ended");
    assert_eq!(d.get("/boards/1.pgn").body, board_pgn);
    assert_eq!(d.get("/round.pgn").body, round_pgn);
    let detail = d.json("/boards/1");
    assert_eq!(detail["moves"][2]["clock"], 290, "{detail}");

    // On the stream: after the result, clock reports but no completion.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut after_result = Vec::new();
    let mut ended = false;
    while let Some(e) = sse.next(deadline) {
        if ended {
            after_result.push(e.kind.clone());
        }
        if e.kind == "result" {
            ended = true;
        }
        if e.kind == "connection" && e.data["state"] == "ended" {
            break;
        }
    }
    assert!(ended, "a result event");
    assert!(
        after_result.iter().filter(|k| *k == "clock").count() > 10,
        "{after_result:?}"
    );
    assert!(
        !after_result.iter().any(|k| k == "completed"),
        "{after_result:?}"
    );
}
