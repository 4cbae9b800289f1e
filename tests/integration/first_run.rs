//! A first run as a new user makes it: `eboard init`, then `eboard run
//! --config` on the file it wrote, unchanged.

use std::process::{Command, Stdio};

use crate::daemon::Daemon;

#[test]
fn init_then_run_starts_a_round() {
    let dir = tempfile::tempdir().unwrap();
    let round = dir.path().join("round1");
    let out = Command::new(env!("CARGO_BIN_EXE_eboard"))
        .args(["init", round.to_str().unwrap()])
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(out.status.success(), "eboard init failed");
    let config = round.join("event.toml");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains(&format!("eboard run --config {}", config.display())),
        "init names the next command: {said}"
    );
    // A second init keeps the file.
    let again = Command::new(env!("CARGO_BIN_EXE_eboard"))
        .args(["init", round.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("event.toml exists"));

    let data = dir.path().join("data");
    let d = Daemon::start(&[
        "run",
        "--config",
        config.to_str().unwrap(),
        "--data-dir",
        data.to_str().unwrap(),
        "--speed",
        "20",
    ]);
    // The round runs: every board of the file is there, named as the file
    // names it, and each gets moves from its simulated players.
    let boards = d.wait_boards(60, |b| b["ply"].as_u64().unwrap_or(0) >= 2);
    let names: Vec<&str> = boards["boards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["white"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "Morphy, Paul",
            "Anderssen, Adolf",
            "Anderssen, Adolf",
            "Steinitz, Wilhelm"
        ]
    );
    assert!(
        boards["title"]
            .as_str()
            .unwrap()
            .contains("Club Championship")
    );
    d.kill();
}
