//! Progress bars: `replay`, `simulate` and `analyze --batch` draw one on
//! standard error when it is a terminal (a pseudo-terminal here), and never
//! when it is a pipe.

use std::{
    io::Read,
    os::fd::{FromRawFd, IntoRawFd},
    path::Path,
    process::{Command, Stdio},
    time::{Duration, Instant},
};

use crate::daemon::demo_games;

/// Runs `eboard <args>` with standard error on a pseudo-terminal; returns
/// what the terminal received.
fn on_a_terminal(args: &[&str]) -> String {
    let (mut master, slave) = serialport::TTYPort::pair().expect("a pseudo-terminal");
    serialport::SerialPort::set_timeout(&mut master, Duration::from_millis(100)).unwrap();
    // The child gets its own end; ours stays open, so that what the child
    // wrote can still be read after it exited.
    let end = slave.try_clone_native().unwrap();
    // SAFETY: the descriptor comes from `into_raw_fd`, so it is open and
    // owned by nothing else; the Stdio takes it over.
    let stderr = unsafe { Stdio::from_raw_fd(end.into_raw_fd()) };
    let mut child = Command::new(env!("CARGO_BIN_EXE_eboard"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut exited = false;
    loop {
        match master.read(&mut buf) {
            Ok(n) if n > 0 => seen.extend_from_slice(&buf[..n]),
            // Nothing for a while: done once the child had exited before.
            _ if exited => break,
            _ => exited = child.try_wait().unwrap().is_some(),
        }
        assert!(Instant::now() < deadline, "eboard {args:?} did not finish");
    }
    drop(slave);
    assert!(child.wait().unwrap().success(), "eboard {args:?} failed");
    String::from_utf8_lossy(&seen).into_owned()
}

/// The same with standard error on a pipe: what came through it.
fn in_a_pipe(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_eboard"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(out.status.success(), "eboard {args:?} failed");
    assert!(!out.stdout.is_empty(), "eboard {args:?} printed nothing");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn files(dir: &Path) -> (String, String, String) {
    let pgn = dir.join("games.pgn");
    std::fs::copy(crate::daemon::demo_pgn(), &pgn).unwrap();
    let events = eboard::simulate::simulate(&demo_games(), &eboard::daemon::sim_options(1));
    let script = dir.join("round.board");
    std::fs::write(&script, eboard::script::write_script(&events)).unwrap();
    let fens = dir.join("positions.fen");
    std::fs::write(
        &fens,
        "8/8/8/8/8/2k5/8/K6N b - -\nrnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq -\n",
    )
    .unwrap();
    let s = |p: &Path| p.display().to_string();
    (s(&pgn), s(&script), s(&fens))
}

#[test]
fn progress_bars_appear_on_a_terminal_and_never_in_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    let (pgn, script, fens) = files(dir.path());
    for (args, label) in [
        (vec!["replay", script.as_str()], "replaying board events"),
        (vec!["simulate", pgn.as_str()], "simulating 8 game(s)"),
        (
            vec!["analyze", "--batch", fens.as_str()],
            "analysing positions",
        ),
    ] {
        let terminal = on_a_terminal(&args);
        assert!(
            terminal.contains(label),
            "{args:?} on a terminal: {terminal:?}"
        );
        let pipe = in_a_pipe(&args);
        assert!(pipe.is_empty(), "{args:?} in a pipe: {pipe:?}");
    }
}
