//! Issue 11: the daemon under faults and abuse — clients that never read,
//! journals that vanish or cannot be written, a finished game's broadcast.
//! The daemon runs as a child process on 127.0.0.1, as in `daemon.rs`.

use std::{
    io::{Read, Write},
    net::TcpStream,
    os::unix::process::CommandExt,
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use eboard::daemon::journal::{Entry, JournalLine};

use crate::daemon::{Daemon, SCRIPT, SseReader, connect, http, run_args, script_board};

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

// === nothing lost silently: journals that vanish, fail or are damaged ===

fn token_header(data: &std::path::Path) -> String {
    let token = std::fs::read_to_string(data.join("token")).unwrap();
    format!("Bearer {}", token.trim())
}

fn journal_lines(path: &std::path::Path) -> Vec<JournalLine> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect()
}

/// The journal holds every line once, numbered without gaps, and the
/// script's events exactly once each, in order; it records the journal's
/// failure and its return.
fn assert_journal_complete(path: &std::path::Path, script: &str) {
    let lines = journal_lines(path);
    for (n, l) in lines.iter().enumerate() {
        assert_eq!(l.seq, n as u64 + 1, "line {}: {l:?}", n + 1);
    }
    let journaled: Vec<_> = lines.iter().filter_map(JournalLine::timed_event).collect();
    let expected: Vec<_> = eboard::script::parse_script("t", script)
        .unwrap()
        .into_iter()
        .map(|l| l.event)
        .collect();
    assert_eq!(journaled.len(), expected.len(), "every event once");
    assert!(journaled == expected, "the events in order");
    let states: Vec<String> = lines
        .iter()
        .filter(|l| matches!(l.entry, Entry::Journal { .. }))
        .map(|l| serde_json::to_value(l).unwrap()["state"].to_string())
        .collect();
    assert!(
        states.first().is_some_and(|s| s == "\"failed\"")
            && states.last().is_some_and(|s| s == "\"restored\""),
        "the failure and the return are journaled: {states:?}"
    );
}

/// Polls board 1's summary until `done` holds (at most `secs`).
fn wait_board_1(
    d: &Daemon,
    secs: u64,
    done: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        let boards = d.json("/boards");
        let b = boards["boards"][0].clone();
        if done(&b) {
            return b;
        }
        assert!(
            Instant::now() < deadline,
            "board 1 not there within {secs} s: {b}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn has_alert(b: &serde_json::Value, kind: &str) -> bool {
    b["open_alerts"]
        .as_array()
        .is_some_and(|a| a.iter().any(|x| x["kind"] == kind))
}

/// A journal deleted while the daemon runs: the board notices it (at its
/// next write, or within seconds when quiet), raises `journal_failed`,
/// refuses actions meanwhile, and writes the journal back at its path; every
/// action answered 200 is in it, and a restart replays it all.
#[test]
fn issue_11_deleted_journal_is_noticed_and_nothing_answered_200_is_lost() {
    let dir = tempfile::tempdir().unwrap();
    let script = reporting_clock_script();
    let (config, data) = script_board(dir.path(), "Deleted Cup", &script);
    let d = Daemon::start(&run_args(&config, &data, "10"));
    d.wait_boards(30, |b| b["ply"].as_u64().unwrap_or(0) >= 2);
    let journal = data.join("boards/1.jsonl");
    std::fs::remove_file(&journal).unwrap();
    let bearer = token_header(&data);
    let auth = [("Authorization", bearer.as_str())];
    let mut answered = Vec::new();
    let r = http(
        &d.addr,
        "POST",
        "/boards/1/actions",
        &auth,
        Some(r#"{"action":"players","white":{"name":"First, Rename"}}"#),
    );
    // Refused while the journal is being put back, or taken once it is.
    assert!(
        r.status == 503 || r.status == 200,
        "{} {}",
        r.status,
        r.body
    );
    if r.status == 200 {
        answered.push("First, Rename");
    } else {
        assert!(r.body.contains("journal"), "{}", r.body);
    }
    let b = wait_board_1(&d, 30, |b| has_alert(b, "journal_failed"));
    let alert = b["open_alerts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["kind"] == "journal_failed")
        .unwrap()
        .clone();
    assert!(
        alert["message"]
            .as_str()
            .unwrap()
            .contains("1.jsonl: deleted"),
        "{alert}"
    );
    wait_board_1(&d, 30, |b| b["connection"] != "journal_failed");
    assert!(journal.exists(), "the journal is back at its path");
    let r = http(
        &d.addr,
        "POST",
        "/boards/1/actions",
        &auth,
        Some(r#"{"action":"players","black":{"name":"Second, Rename"}}"#),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    answered.push("Second, Rename");
    d.wait_boards(30, |b| b["connection"] == "ended");
    let pgn = d.get("/boards/1.pgn").body;
    d.kill();

    assert_journal_complete(&journal, &script);
    let d = Daemon::start(&run_args(&config, &data, "10"));
    assert_eq!(d.get("/boards/1.pgn").body, pgn);
    for name in answered {
        assert!(pgn.contains(name), "{name} is in the broadcast: {pgn}");
    }
    let detail = d.json("/boards/1");
    assert!(
        detail["alerts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["kind"] == "journal_failed"),
        "the failure is part of the record: {detail}"
    );
    assert_eq!(detail["connection"], "ended");
}

/// Starts the daemon with files limited to `limit` bytes, as on a full
/// disk: a write past it fails (EFBIG) instead of killing the process.
fn file_size_limit(limit: libc::rlim_t) -> impl FnOnce(&mut Command) {
    move |cmd| {
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                let r = libc::rlimit {
                    rlim_cur: limit,
                    rlim_max: libc::RLIM_INFINITY,
                };
                if libc::setrlimit(libc::RLIMIT_FSIZE, &r) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
}

/// Space comes back: the running daemon's file-size limit is lifted.
fn lift_file_size_limit(pid: u32) {
    let lifted = libc::rlimit {
        rlim_cur: libc::RLIM_INFINITY,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: a plain system call on the child's pid with valid pointers.
    let done = unsafe {
        libc::prlimit(
            pid as libc::pid_t,
            libc::RLIMIT_FSIZE,
            &lifted,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(done, 0, "{}", std::io::Error::last_os_error());
}

/// The journal's file cannot grow (the daemon runs with a file-size limit,
/// as a full disk): the board shows `journal_failed` and an alert, refuses
/// actions with 503, and once the limit is lifted it journals the events it
/// waited with, in order, and goes on by itself.
#[test]
fn issue_11_journal_that_cannot_be_written_fails_visibly_then_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let script = reporting_clock_script();
    let (config, data) = script_board(dir.path(), "Full Cup", &script);
    let limit: libc::rlim_t = 1500;
    let d = Daemon::start_with(
        &run_args(&config, &data, "10"),
        Stdio::null(),
        file_size_limit(limit),
    );
    let b = wait_board_1(&d, 30, |b| b["connection"] == "journal_failed");
    assert!(has_alert(&b, "journal_failed"), "{b}");
    assert!(
        b["journal_error"]
            .as_str()
            .is_some_and(|e| e.contains("1.jsonl")),
        "{b}"
    );
    let bearer = token_header(&data);
    let r = http(
        &d.addr,
        "POST",
        "/boards/1/actions",
        &[("Authorization", bearer.as_str())],
        Some(r#"{"action":"draw"}"#),
    );
    assert_eq!(r.status, 503, "{}", r.body);
    let journal = data.join("boards/1.jsonl");
    let size = std::fs::metadata(&journal).unwrap().len();
    assert!(size <= limit, "{size} bytes");

    // Space comes back.
    lift_file_size_limit(d.pid());
    d.wait_boards(60, |b| b["connection"] == "ended");
    let pgn = d.get("/boards/1.pgn").body;
    assert!(pgn.contains("2. Nf3"), "{pgn}");
    d.kill();
    assert_journal_complete(&journal, &script);
    let d = Daemon::start(&run_args(&config, &data, "10"));
    assert_eq!(d.get("/boards/1.pgn").body, pgn);
}

/// Runs `eboard <args>`, which must refuse to start; returns its errors.
pub(crate) fn refused(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_eboard"))
        .args(args)
        .args(["--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .output()
        .expect("run eboard");
    assert!(!out.status.success(), "eboard {args:?} must not start");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A hardware board (a virtual DGT board on a pseudo-terminal) whose
/// journal cannot be written for a while: what it reports meanwhile waits
/// in memory and is journaled in order once the journal works again, so
/// the broadcast has the whole game.
#[test]
fn issue_11_live_board_events_wait_in_memory_while_the_journal_fails() {
    let dir = tempfile::tempdir().unwrap();
    let (mut board, config) = crate::daemon::virtual_dgt_board(dir.path(), "10");
    let data = dir.path().join("data");
    let args = [
        "run",
        "--config",
        config.to_str().unwrap(),
        "--data-dir",
        data.to_str().unwrap(),
    ];
    let d = Daemon::start_with(&args, Stdio::null(), file_size_limit(1500));
    wait_board_1(&d, 60, |b| b["connection"] == "journal_failed");
    let waiting = d.json("/boards")["boards"][0]["ply"].clone();
    // The board plays on meanwhile.
    std::thread::sleep(Duration::from_secs(2));
    lift_file_size_limit(d.pid());
    let (game, expected) = crate::daemon::opera_game_broadcast(&d, &mut board);
    assert_eq!(game.moves, expected.moves, "failed at ply {waiting}");
    assert!(
        waiting.as_u64().unwrap() < expected.moves.len() as u64 / 2,
        "the journal failed early in the game: at ply {waiting}"
    );
    let lines = journal_lines(&data.join("boards/1.jsonl"));
    for (n, l) in lines.iter().enumerate() {
        assert_eq!(l.seq, n as u64 + 1);
    }
    assert!(
        lines.windows(2).all(|w| w[0].at <= w[1].at),
        "the board's times in order"
    );
    assert!(
        lines
            .iter()
            .any(|l| matches!(l.entry, Entry::Journal { .. })),
        "the failure is journaled"
    );
}

/// A complete last line (ending in a newline) that does not read is damage:
/// the daemon refuses to start, naming the file and the line. Only a line
/// without its newline is a torn write, dropped.
#[test]
fn issue_11_damaged_complete_last_line_is_an_error_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let (config, data) = script_board(dir.path(), "Damage Cup", SCRIPT);
    let boards = data.join("boards");
    std::fs::create_dir_all(&boards).unwrap();
    let good = concat!(
        r#"{"seq":1,"g":1,"at":0,"type":"connection","state":"connected"}"#,
        "\n",
        r#"{"seq":2,"g":2,"at":1000,"type":"lift","square":"e2"}"#,
        "\n",
    );
    let journal = boards.join("1.jsonl");
    let damaged = format!("{good}{{\"seq\":3,\"g\":3,\"at\":13#0,\"type\n");
    std::fs::write(&journal, &damaged).unwrap();
    let stderr = refused(&run_args(&config, &data, "1"));
    assert!(stderr.contains("1.jsonl:3:"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(&journal).unwrap(),
        damaged,
        "the damaged journal is left as it was"
    );

    // The same line without its newline was being written: dropped.
    std::fs::write(&journal, format!("{good}{{\"seq\":3,\"g\":3,\"at\":13")).unwrap();
    let d = Daemon::start_logged(&run_args(&config, &data, "1"), Stdio::null());
    assert_eq!(d.get("/boards").status, 200);
}

/// A journal missing at start from a data directory that had it: the
/// daemon refuses to start, naming the file and the flag; with
/// `--fresh-board` it starts the board afresh on purpose.
#[test]
fn issue_11_missing_journal_at_start_is_an_error_unless_started_afresh() {
    let dir = tempfile::tempdir().unwrap();
    let (config, data) = script_board(dir.path(), "Missing Cup", SCRIPT);
    let d = Daemon::start(&run_args(&config, &data, "20"));
    d.wait_boards(30, |b| b["connection"] == "ended");
    d.kill();
    let journal = data.join("boards/1.jsonl");
    std::fs::remove_file(&journal).unwrap();
    let stderr = refused(&run_args(&config, &data, "20"));
    assert!(stderr.contains(journal.to_str().unwrap()), "{stderr}");
    assert!(stderr.contains("--fresh-board 1"), "{stderr}");
    assert!(!journal.exists(), "nothing created");

    let mut args = run_args(&config, &data, "20");
    args.extend(["--fresh-board", "1"]);
    let d = Daemon::start(&args);
    d.wait_boards(30, |b| b["connection"] == "ended");
    assert!(d.get("/boards/1.pgn").body.contains("2. Nf3"));
}

// === the dashboard (item 5) ===

/// The opening tag of the element with `id` in a dumped page.
fn tag_of<'a>(dom: &'a str, id: &str) -> &'a str {
    let at = dom
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id} on the page:\n{dom}"));
    let start = dom[..at].rfind('<').unwrap();
    let end = at + dom[at..].find('>').unwrap();
    &dom[start..=end]
}

/// The text of the element with `id` (up to its first child tag).
fn text_after<'a>(dom: &'a str, id: &str) -> &'a str {
    let tag = tag_of(dom, id);
    let start = dom.find(tag).unwrap() + tag.len();
    &dom[start..start + dom[start..].find('<').unwrap()]
}

/// In headless Chromium: a card shows its most serious open alert first
/// (a displaced piece before the later `position_restored`), information
/// alone (a claimable draw) does not keep the frame red, the running clock
/// is marked, and every action that ends a game or rewrites the record asks
/// for confirmation. The diagram keeps eight equal ranks.
#[test]
fn issue_11_dashboard_shows_the_most_serious_alert_and_the_running_clock() {
    let dir = tempfile::tempdir().unwrap();
    let root = crate::util::root();
    let knocked = root.join("tests/scripts/knocked-over-piece-then-restored.board");
    let repeated = dir.path().join("repeated.board");
    std::fs::write(
        &repeated,
        "lift g1\nplace f3\nlift g8\nplace f6\nlift f3\nplace g1\nlift f6\nplace g8\nlift g1\nplace f3\nlift g8\nplace f6\nlift f3\nplace g1\nlift f6\nplace g8\n",
    )
    .unwrap();
    let clocked = dir.path().join("clocked.board");
    std::fs::write(&clocked, SCRIPT).unwrap();
    let config = dir.path().join("event.toml");
    let mut text = String::from("event = \"Dashboard Cup\"\n");
    for (id, script) in [(1, &knocked), (2, &repeated), (3, &clocked)] {
        text.push_str(&format!(
            "[[board]]\nid = {id}\nsource = \"script:{}\"\nwhite = {{ name = \"W{id}\" }}\nblack = {{ name = \"B{id}\" }}\n",
            script.display()
        ));
    }
    std::fs::write(&config, text).unwrap();
    let data = dir.path().join("data");
    let d = Daemon::start(&run_args(&config, &data, "20"));
    d.wait_boards(60, |b| b["connection"] == "ended");
    let page = d.get("/");
    for action in ["resign", "flag", "draw", "result", "undo", "new_game"] {
        assert!(
            page.body.contains(&format!("  {action}: (")),
            "no confirmation for {action}"
        );
    }
    assert!(
        page.body.contains("grid-template-rows: repeat(8, 1fr)"),
        "eight equal ranks"
    );
    let Some(browser) = crate::daemon::chromium() else {
        eprintln!("notice: chromium is not installed; the browser half is skipped");
        return;
    };
    let dom = crate::daemon::dump_dom(&browser, dir.path(), &d.addr);
    let card1 = tag_of(&dom, "board-1");
    assert!(card1.contains("alerting"), "{card1}");
    let alerts = &dom[dom.find("id=\"al-1\"").unwrap()..];
    let first = alerts
        .find("displaced_pieces")
        .expect("displaced_pieces shown");
    let later = alerts
        .find("position_restored")
        .expect("position_restored shown");
    assert!(first < later, "the most serious first: {alerts}");
    let card2 = tag_of(&dom, "board-2");
    assert!(!card2.contains("alerting"), "information only: {card2}");
    assert!(dom.contains("threefold_claimable"), "{dom}");
    // After 2. Nf3 and White's press, Black's clock runs.
    assert!(
        tag_of(&dom, "cb-3").contains("running"),
        "{}",
        tag_of(&dom, "cb-3")
    );
    assert!(!tag_of(&dom, "cw-3").contains("running"));
    assert!(text_after(&dom, "cb-3").contains("0:04:57"));
    // Every square of every diagram is drawn: 64 per board.
    let squares = dom[dom.find("id=\"sq-1\"").unwrap()..]
        .split("</div>")
        .next()
        .unwrap()
        .matches("<span")
        .count();
    assert_eq!(squares, 64);
}

// === file descriptors ===

/// The soft and hard limits of open files of a process.
fn open_file_limits(pid: u32) -> (String, String) {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).expect("/proc limits");
    let line = limits
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .expect("Max open files");
    let mut fields = line["Max open files".len()..].split_whitespace();
    (
        fields.next().unwrap().to_owned(),
        fields.next().unwrap().to_owned(),
    )
}

/// Started with a low soft limit of open files (1,024 is common), the
/// daemon raises it to the hard limit: every connection and journal takes
/// a descriptor, and running out stops the dashboard and the broadcast.
#[test]
fn issue_11_open_file_limit_is_raised_to_the_hard_limit() {
    let mut ours = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: a plain system call with a valid pointer.
    assert_eq!(
        unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut ours) },
        0
    );
    if ours.rlim_max <= 256 {
        eprintln!("notice: the hard limit of open files is too low to test raising it");
        return;
    }
    let hard = ours.rlim_max;
    let dir = tempfile::tempdir().unwrap();
    let (config, data) = script_board(dir.path(), "Files Cup", SCRIPT);
    let d = Daemon::start_with(&run_args(&config, &data, "1"), Stdio::inherit(), |cmd| {
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            cmd.pre_exec(move || {
                let r = libc::rlimit {
                    rlim_cur: 256,
                    rlim_max: hard,
                };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &r) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    });
    let (soft, hard) = open_file_limits(d.pid());
    assert_eq!(soft, hard, "the soft limit is raised to the hard one");
    assert_ne!(soft, "256");
}

/// Issue 38, fault 2: an event is published only once its journal line is
/// on disk. The daemon is killed (SIGKILL) while its journal cannot be
/// written; the restarted daemon serves every event id served before with
/// the same event: none was lost, none given to something else.
#[test]
fn issue_38_no_event_is_published_before_its_line_is_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let script = reporting_clock_script();
    let (config, data) = script_board(dir.path(), "Full Cup", &script);
    let d = Daemon::start_with(
        &run_args(&config, &data, "10"),
        Stdio::null(),
        file_size_limit(1500),
    );
    let mut sse = SseReader::open(&d.addr, Some("0"));
    wait_board_1(&d, 30, |b| b["connection"] == "journal_failed");
    let mut before = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(2);
    while let Some(e) = sse.next(deadline) {
        before.push(e);
    }
    d.kill();
    let d = Daemon::start_logged(&run_args(&config, &data, "10"), Stdio::null());
    let mut sse = SseReader::open(&d.addr, Some("0"));
    let mut after = std::collections::HashMap::new();
    let deadline = Instant::now() + Duration::from_secs(3);
    while let Some(e) = sse.next(deadline) {
        after.insert(e.id.clone(), e);
    }
    assert!(!before.is_empty());
    for e in &before {
        assert_eq!(
            after.get(&e.id),
            Some(e),
            "event {} after the restart",
            e.id
        );
    }
}

/// Issue 38, fault 6: a board whose sensor floods its port (here 10,000
/// square reports a second for 3 s, a faulty sensor flickering on h2) is
/// read at a bounded rate: the arbiter is told (`board_flooding`), and the
/// two moves played right after it are recorded, at the times the board
/// reported them, not queued behind the flood and stamped together.
#[test]
fn issue_38_a_flooding_board_is_told_and_its_next_moves_keep_their_times() {
    let dir = tempfile::tempdir().unwrap();
    let mut script = String::from("@0 tag White Alice\n@0 tag Black Bob\n");
    for i in 0..15_000u64 {
        // Ten reports a millisecond: five lifts and five places of h2.
        let at = 1000 + i / 5;
        script.push_str(&format!("@{at} lift h2\n@{at} place h2 P\n"));
    }
    script.push_str(
        "@6000 lift e2\n@6300 place e4 P\n@6500 press white\n\
         @7500 lift e7\n@7800 place e5 p\n@8000 press black\n",
    );
    let path = dir.path().join("flood.board");
    std::fs::write(&path, script).unwrap();
    let (mut board, config) = crate::daemon::virtual_board_playing(
        dir.path(),
        &[path.to_str().unwrap(), "--no-artefacts"],
        "dgt",
        "1",
        &[],
        "",
    );
    let data = dir.path().join("data");
    let d = Daemon::start(&run_args(&config, &data, "1"));
    // A generous deadline: the flood lasts 3 s, the moves come 3 s later.
    let b = wait_board_1(&d, 90, |b| b["ply"] == 2);
    assert!(has_alert(&b, "board_flooding"), "{b}");
    let detail = d.json("/boards/1");
    let moves: Vec<&str> = detail["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["san"].as_str().unwrap())
        .collect();
    assert_eq!(moves, ["e4", "e5"]);
    let flooding = detail["alerts"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["kind"] == "board_flooding")
        .collect::<Vec<_>>();
    assert_eq!(flooding.len(), 1, "said once: {flooding:?}");
    let message = flooding[0]["message"].as_str().unwrap();
    assert!(message.contains("cable"), "{message}");
    let _ = board.kill();
    let _ = board.wait();
    // The journal: each move's place at its own time, in order.
    let lines = journal_lines(&data.join("boards/1.jsonl"));
    let placed = |square: shakmaty::Square| {
        lines
            .iter()
            .rev()
            .find(|l| {
                matches!(l.entry, Entry::Event(eboard::BoardEvent::Place(sq, _)) if sq == square)
            })
            .map(|l| l.at)
            .expect("the move's place is journaled")
    };
    let (e4, e5) = (placed(shakmaty::Square::E4), placed(shakmaty::Square::E5));
    assert!(e4 < e5, "the two moves journaled at {e4} and {e5}");
    // The flood was merged, not journaled report by report.
    assert!(lines.len() < 15_000, "{} journal lines", lines.len());
}
