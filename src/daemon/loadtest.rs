//! `eboard loadtest` (hidden): many simulated boards at blitz pace for a
//! while, measuring the daemon's CPU use, resident memory and the latency
//! from an input entering the daemon to its server-sent event reaching a
//! client over loopback.
//!
//! Every board plays a random legal game with human timing and noise and a
//! clock; the speed is chosen so that each board makes one move every
//! `--move-ms` on average. The figures are for the whole process (the
//! simulated boards and the measuring client included), so they overstate
//! the daemon's share a little.

use std::{
    path::PathBuf,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::{Chess, Outcome, Position};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::{engine::EngineConfig, pgn::ImportedGame, simulate::simulate};

use super::{
    BoardSpec, DaemonError, DaemonSpec, actor::Feed, board::RoundInfo, config::Player, sim_options,
    start,
};

/// `eboard loadtest`.
#[derive(Debug, Clone, clap::Args)]
pub struct LoadtestArgs {
    /// How many boards.
    #[arg(long, default_value_t = 500)]
    pub boards: u32,
    /// How long to measure (s).
    #[arg(long, default_value_t = 60)]
    pub seconds: u64,
    /// The mean time between two moves on one board (ms).
    #[arg(long, default_value_t = 2000)]
    pub move_ms: u64,
    /// Where the journals go (default: a temporary directory, removed after).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
}

/// A random legal game of up to `max_ply` half-moves.
pub fn random_game(seed: u64, max_ply: usize) -> ImportedGame {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let start = Chess::default();
    let mut pos = start.clone();
    let mut moves = Vec::new();
    while moves.len() < max_ply {
        let legal = pos.legal_moves();
        if legal.is_empty() {
            break;
        }
        let m = legal[rng.random_range(0..legal.len())];
        pos.play_unchecked(m);
        moves.push(m);
    }
    ImportedGame {
        tags: Vec::new(),
        start,
        setup: None,
        clocks: vec![None; moves.len()],
        moves,
        result: Outcome::Unknown,
    }
}

/// The CPU time (s) a process (`self` or a pid) used so far.
pub(crate) fn cpu_seconds(pid: &str) -> f64 {
    // Fields 14 and 15 of /proc/<pid>/stat: user and system time of all the
    // process's threads, in clock ticks (USER_HZ, 100 on Linux).
    let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
        return f64::NAN;
    };
    let after = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
    };
    (ticks(11) + ticks(12)) / 100.0
}

/// A memory figure (KiB) of /proc/<pid>/status (`VmRSS:`, `VmHWM:`).
pub(crate) fn status_kib(pid: &str, key: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The `p` quantile (0 to 1) of sorted µs figures, in ms.
pub(crate) fn percentile(sorted: &[u64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i] as f64 / 1000.0
}

/// Reads the event stream (chunked HTTP) until `deadline` and calls
/// `seen(id, kind, arrival)` for each event.
pub(crate) async fn sse_client(
    addr: std::net::SocketAddr,
    deadline: Instant,
    mut seen: impl FnMut(&str, &str, Instant),
) -> std::io::Result<()> {
    let mut stream = tokio::net::TcpStream::connect(addr).await?;
    stream
        .write_all(b"GET /events HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n")
        .await?;
    let mut raw: Vec<u8> = Vec::new();
    let mut body: Vec<u8> = Vec::new();
    let mut headers_done = false;
    let mut buf = vec![0u8; 64 * 1024];
    let mut kind = String::new();
    while Instant::now() < deadline {
        let left = deadline.saturating_duration_since(Instant::now());
        let n = match tokio::time::timeout(left, stream.read(&mut buf)).await {
            Ok(r) => r?,
            Err(_) => break,
        };
        if n == 0 {
            break;
        }
        let now = Instant::now();
        raw.extend_from_slice(&buf[..n]);
        if !headers_done {
            let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
                continue;
            };
            raw.drain(..end + 4);
            headers_done = true;
        }
        // De-chunk.
        while let Some(eol) = raw.windows(2).position(|w| w == b"\r\n") {
            let size = std::str::from_utf8(&raw[..eol])
                .ok()
                .and_then(|s| usize::from_str_radix(s.trim(), 16).ok())
                .unwrap_or(0);
            if raw.len() < eol + 2 + size + 2 {
                break;
            }
            body.extend_from_slice(&raw[eol + 2..eol + 2 + size]);
            raw.drain(..eol + 2 + size + 2);
        }
        // SSE lines.
        while let Some(nl) = body.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = body.drain(..=nl).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end();
            if let Some(k) = line.strip_prefix("event: ") {
                kind = k.to_owned();
            } else if let Some(id) = line.strip_prefix("id: ") {
                seen(id, &kind, now);
            }
        }
    }
    Ok(())
}

/// The round of a load test: blitz.
pub(crate) fn load_round() -> RoundInfo {
    RoundInfo {
        event: "load test".into(),
        site: None,
        date: None,
        round: "1".into(),
        time_control: Some("180+2".into()),
    }
}

/// Boards `ids` playing random games, and the mean time per ply (ms) in
/// their scripts.
pub(crate) fn simulated_boards(ids: std::ops::RangeInclusive<u32>) -> (Vec<BoardSpec>, f64) {
    let mut boards = Vec::new();
    let mut plies = 0usize;
    let mut span: u64 = 0;
    for id in ids {
        let game = random_game(u64::from(id), 200);
        let events = simulate(std::slice::from_ref(&game), &sim_options(u64::from(id)));
        plies += game.moves.len();
        span += events.last().map_or(0, |e| e.at);
        boards.push(BoardSpec {
            id,
            feed: Feed::Simulated(Arc::new(events)),
            white: Player {
                name: format!("White {id}"),
                ..Player::default()
            },
            black: Player {
                name: format!("Black {id}"),
                ..Player::default()
            },
            orientation: Default::default(),
        });
    }
    (boards, span as f64 / plies.max(1) as f64)
}

/// Runs the load test and prints its report.
pub fn run(args: &LoadtestArgs) -> Result<(), DaemonError> {
    super::init_tracing();
    let (boards, mean_ply_ms) = simulated_boards(1..=args.boards);
    // The simulated boards' scripts are the harness's, not the daemon's:
    // their memory is told apart.
    let harness_kib = status_kib("self", "VmRSS:").unwrap_or(0);
    let speed = mean_ply_ms / args.move_ms.max(1) as f64;
    let (data_dir, _temp) = match &args.data_dir {
        Some(d) => (d.clone(), None),
        None => {
            let t = tempfile::Builder::new()
                .prefix("eboard-load-")
                .tempdir()
                .map_err(|source| DaemonError::Io {
                    path: std::env::temp_dir(),
                    source,
                })?;
            (t.path().to_owned(), Some(t))
        }
    };
    let spec = DaemonSpec {
        round: load_round(),
        engine: EngineConfig::default(),
        boards,
        data_dir: data_dir.clone(),
        listen: "127.0.0.1:0"
            .parse()
            .map_err(|_| DaemonError::Usage("address".into()))?,
        speed,
        probe: true,
        max_event_streams: super::http::MAX_EVENT_STREAMS,
        fresh_boards: Vec::new(),
        broadcast_delay: std::time::Duration::ZERO,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|source| DaemonError::Io {
            path: "<tokio runtime>".into(),
            source,
        })?;
    runtime.block_on(async move {
        let latencies = Arc::new(Mutex::new(Vec::new()));
        let moves = Arc::new(Mutex::new(0u64));
        let started = Instant::now();
        let mut daemon = start(spec).await?;
        let deadline = started + Duration::from_secs(args.seconds);
        let (hub, lat, mv) = (
            Arc::clone(&daemon.hub),
            Arc::clone(&latencies),
            Arc::clone(&moves),
        );
        let client = tokio::spawn(sse_client(daemon.addr, deadline, move |id, kind, now| {
            let g = id.split('.').next().and_then(|g| g.parse::<u64>().ok());
            if let Some(entered) = g.and_then(|g| hub.entered_in_order(g)) {
                let us = now.saturating_duration_since(entered).as_micros() as u64;
                lat.lock().unwrap_or_else(|e| e.into_inner()).push(us);
            }
            if kind == "move" {
                *mv.lock().unwrap_or_else(|e| e.into_inner()) += 1;
            }
        }));
        let cpu0 = cpu_seconds("self");
        let wall0 = Instant::now();
        let mut peak_rss = 0;
        while Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(500)).await;
            peak_rss = peak_rss.max(status_kib("self", "VmRSS:").unwrap_or(0));
        }
        let cpu = cpu_seconds("self") - cpu0;
        let wall = wall0.elapsed().as_secs_f64();
        let _ = client.await;
        // A clean stop: every line taken is journaled, none reported failed.
        daemon.stop_boards().await;
        let mut lat = latencies.lock().unwrap_or_else(|e| e.into_inner()).clone();
        lat.sort_unstable();
        let moves = *moves.lock().unwrap_or_else(|e| e.into_inner());
        println!("eboard loadtest");
        println!("  boards            {}", args.boards);
        println!("  measured          {wall:.1} s (journals in {})", data_dir.display());
        println!("  speed             {speed:.2}x (mean {mean_ply_ms:.0} ms per ply in the scripts; target {} ms)", args.move_ms);
        println!("  moves made        {moves} ({:.1} per s)", moves as f64 / wall);
        println!("  events delivered  {} ({:.1} per s)", lat.len(), lat.len() as f64 / wall);
        println!("  CPU               {:.1} % of one core", 100.0 * cpu / wall);
        println!("  resident memory   {:.1} MiB (peak sampled), {:.1} MiB high-water", peak_rss as f64 / 1024.0, status_kib("self", "VmHWM:").unwrap_or(0) as f64 / 1024.0);
        println!("                    of which {:.1} MiB before the daemon started (the simulated boards' scripts)", harness_kib as f64 / 1024.0);
        println!(
            "  latency to SSE    p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
            percentile(&lat, 0.5),
            percentile(&lat, 0.9),
            percentile(&lat, 0.99),
            percentile(&lat, 1.0)
        );
        Ok::<(), DaemonError>(())
    })
}
