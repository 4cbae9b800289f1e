//! Boards found and families detected: a `serial:` source finds which
//! family answers (virtual DGT and Millennium boards on pseudo-terminals),
//! and a port that is silent, missing or of another family raises its
//! alert (`board_silent`, `wrong_family`) within 15 s.

use std::{
    path::Path,
    process::Child,
    time::{Duration, Instant},
};

use eboard::transport::{Protocol, probe};
use eboard::virtual_board::{VirtualBoard, VirtualOptions};

use crate::daemon::Daemon;

/// Starts `eboard virtual-board` on the Opera game; returns it and the
/// path it is reachable at.
fn virtual_board(dir: &Path, protocol: &str, speed: &str) -> (Child, String) {
    // The helper also writes an event file naming the family: not used.
    let (board, _) = crate::daemon::virtual_board_with(dir, protocol, speed, &[], "");
    (board, dir.join("vdgt").display().to_string())
}

/// An event file with one board per source.
fn event(dir: &Path, sources: &[&str]) -> String {
    let mut text = "event = \"Detect\"\n".to_owned();
    for (i, source) in sources.iter().enumerate() {
        text.push_str(&format!(
            "\n[[board]]\nid = {}\nsource = \"{source}\"\nwhite = {{ name = \"W\" }}\nblack = {{ name = \"B\" }}\n",
            i + 1
        ));
    }
    let path = dir.join("event.toml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn run(dir: &Path, config: &str) -> Daemon {
    let data = dir.join("data");
    Daemon::start(&[
        "run",
        "--config",
        config,
        "--data-dir",
        data.to_str().unwrap(),
    ])
}

/// The kinds of the board's alerts.
fn alert_kinds(d: &Daemon, board: u32) -> Vec<String> {
    d.json(&format!("/boards/{board}"))["alerts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["kind"].as_str().unwrap().to_owned())
        .collect()
}

/// The port asked directly, as `eboard ports` asks it: a virtual board of
/// each family answers as that family, and says so.
#[test]
fn a_port_is_asked_which_family_it_is() {
    let events = eboard::simulate::simulate(
        &crate::daemon::demo_games()[..1],
        &eboard::daemon::sim_options(1),
    );
    for protocol in [Protocol::Dgt, Protocol::Millennium] {
        let board = VirtualBoard::start(&events, VirtualOptions::new(protocol)).unwrap();
        assert_eq!(probe::answers(&board.path()), protocol.as_str());
        board.stop();
    }
}

#[test]
fn a_serial_source_detects_a_virtual_dgt_and_a_virtual_millennium_board() {
    for (protocol, speed) in [("dgt", "10"), ("millennium", "4")] {
        let dir = tempfile::tempdir().unwrap();
        let (mut board, link) = virtual_board(dir.path(), protocol, speed);
        let config = event(dir.path(), &[&format!("serial:{link}")]);
        let d = run(dir.path(), &config);
        // Found, and read as that family: the moves come.
        let boards = d.wait_boards(60, |b| {
            b["family"] == protocol && b["ply"].as_u64().unwrap_or(0) >= 4
        });
        assert_eq!(boards["boards"][0]["connection"], "connected");
        let kinds = alert_kinds(&d, 1);
        assert!(
            !kinds
                .iter()
                .any(|k| k == "board_silent" || k == "wrong_family"),
            "{protocol}: {kinds:?}"
        );
        let _ = board.kill();
        let _ = board.wait();
        d.kill();
    }
}

/// `millennium:` on a DGT board (the family named wrong), `serial:` on a
/// port where nothing answers, `dgt:` on a port that does not exist: each
/// board gets its alert, naming the port, within 15 s of the start.
#[test]
fn wrong_family_and_silent_ports_raise_their_alerts_within_15_s() {
    let dir = tempfile::tempdir().unwrap();
    let (mut board, link) = virtual_board(dir.path(), "dgt", "10");
    // A pseudo-terminal nobody answers on.
    let (_master, silent) = serialport::TTYPort::pair().unwrap();
    let silent = serialport::SerialPort::name(&silent).unwrap();
    let missing = dir.path().join("ttyUSB9").display().to_string();
    let config = event(
        dir.path(),
        &[
            &format!("millennium:{link}"),
            &format!("serial:{silent}"),
            &format!("dgt:{missing}"),
        ],
    );
    let d = run(dir.path(), &config);
    let started = Instant::now();
    let expected = [
        (1, "wrong_family", link.as_str()),
        (2, "board_silent", silent.as_str()),
        (3, "board_silent", missing.as_str()),
    ];
    loop {
        let details: Vec<serde_json::Value> = expected
            .iter()
            .map(|(id, _, _)| d.json(&format!("/boards/{id}")))
            .collect();
        let done =
            expected
                .iter()
                .zip(&details)
                .all(|((_, kind, port), detail)| {
                    detail["alerts"].as_array().unwrap().iter().any(|a| {
                        a["kind"] == *kind && a["message"].as_str().unwrap().contains(port)
                    })
                });
        if done {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "alerts missing after 15 s: {details:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // The wrong family is named, and the dashboard's summary shows the
    // alerts as open.
    let detail = d.json("/boards/1");
    let message = detail["alerts"][0]["message"].as_str().unwrap().to_owned();
    assert!(message.contains("DGT"), "{message}");
    let boards = d.json("/boards");
    for b in boards["boards"].as_array().unwrap() {
        assert!(!b["open_alerts"].as_array().unwrap().is_empty(), "{b}");
    }
    let _ = board.kill();
    let _ = board.wait();
    d.kill();
}
