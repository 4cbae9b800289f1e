//! `eboard loadtest-halls` (hidden): many hall nodes publishing to one
//! broker, one central serving them, measured.
//!
//! The hall nodes run in this process (each with its own boards, data
//! directory and publisher, as `run --publish` has them); the central is a
//! child `eboard serve`, so its CPU time and memory are its own. The
//! latency is from an input entering a hall node (just before its journal
//! line is written and synced) to the central's server-sent event for it
//! reaching a client over loopback: the hall's publisher notes, for each
//! line the broker stored, the stream sequence and when the input
//! entered; the central names its events after that sequence.

use std::{
    collections::HashMap,
    io::{BufRead, BufReader, Write},
    path::Path,
    process::{Child, Command, Stdio},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use crate::engine::EngineConfig;

use super::{
    DaemonError, DaemonSpec,
    loadtest::{cpu_seconds, load_round, percentile, simulated_boards, sse_client, status_kib},
    nats::NatsSettings,
    publish::{self, AckProbe},
    start,
};

/// `eboard loadtest-halls`.
#[derive(Debug, Clone, clap::Args)]
pub struct HallsLoadArgs {
    /// The broker (a `nats-server -js` you started).
    #[arg(long, value_name = "URL")]
    pub nats: String,
    /// How many hall nodes.
    #[arg(long, default_value_t = 10)]
    pub halls: u32,
    /// Boards per hall node.
    #[arg(long, default_value_t = 100)]
    pub boards: u32,
    /// How long to measure (s).
    #[arg(long, default_value_t = 60)]
    pub seconds: u64,
    /// The mean time between two moves on one board (ms).
    #[arg(long, default_value_t = 2000)]
    pub move_ms: u64,
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> DaemonError + '_ {
    move |source| DaemonError::Io {
        path: path.to_owned(),
        source,
    }
}

/// Starts the central as a child process; returns it and its address.
fn central(
    dir: &Path,
    stream: &str,
    url: &str,
    boards: u32,
) -> Result<(Child, String), DaemonError> {
    let mut text = format!("event = \"load test\"\n[publish]\nstream = \"{stream}\"\n");
    for id in 1..=boards {
        text.push_str(&format!(
            "[[board]]\nid = {id}\nwhite = {{ name = \"White {id}\" }}\nblack = {{ name = \"Black {id}\" }}\n"
        ));
    }
    let config = dir.join("round.toml");
    std::fs::write(&config, text).map_err(io(&config))?;
    let exe = std::env::current_exe().map_err(io(dir))?;
    let mut child = Command::new(exe)
        .arg("serve")
        .arg("--config")
        .arg(&config)
        .arg("--data-dir")
        .arg(dir.join("central"))
        .args(["--from", url, "--listen", "127.0.0.1:0"])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::piped())
        .spawn()
        .map_err(io(dir))?;
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| DaemonError::Usage("no stdout".into()))?;
    let addr = BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .find_map(|l| {
            l.strip_prefix("eboard: listening on http://")
                .map(|a| a.trim_end_matches('/').to_owned())
        })
        .ok_or_else(|| DaemonError::Usage("the central did not start".into()))?;
    Ok((child, addr))
}

/// A hall node: its daemon, the journals it publishes, its NATS settings.
type Hall = (DaemonSpec, Vec<(u32, std::path::PathBuf)>, NatsSettings);

/// The hall nodes' specs, journals and NATS settings, and the speed that
/// gives the target time per move.
fn hall_specs(args: &HallsLoadArgs, dir: &std::path::Path, stream: &str) -> (Vec<Hall>, f64) {
    let mut speed = 1.0;
    let mut halls = Vec::new();
    for h in 0..args.halls {
        let first = h * args.boards + 1;
        let (boards, mean_ply_ms) = simulated_boards(first..=first + args.boards - 1);
        speed = mean_ply_ms / args.move_ms.max(1) as f64;
        let data_dir = dir.join(format!("hall-{h}"));
        let journals = boards
            .iter()
            .map(|b| {
                (
                    b.id,
                    data_dir.join("boards").join(format!("{}.jsonl", b.id)),
                )
            })
            .collect();
        halls.push((
            DaemonSpec {
                round: load_round(),
                engine: EngineConfig::default(),
                boards,
                data_dir,
                listen: ([127, 0, 0, 1], 0).into(),
                speed,
                probe: true,
                max_event_streams: super::http::MAX_EVENT_STREAMS,
                fresh_boards: Vec::new(),
                broadcast_delay: std::time::Duration::ZERO,
            },
            journals,
            NatsSettings {
                url: args.nats.clone(),
                credentials: None,
                node: format!("hall-{h}"),
                instance: None,
                stream: stream.to_owned(),
                max_age: Duration::from_secs(86_400),
            },
        ));
    }
    (halls, speed)
}

/// What a run measured.
struct Measured<'a> {
    halls: u32,
    boards: u32,
    move_ms: u64,
    wall: f64,
    speed: f64,
    stored: usize,
    delivered: usize,
    /// Hall input to central SSE, sorted (µs).
    lat: &'a [u64],
    cpu: f64,
    peak_rss: u64,
    hwm: u64,
}

fn print_report(m: &Measured) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "eboard loadtest-halls");
    let _ = writeln!(
        out,
        "  hall nodes        {} x {} boards (in this process)",
        m.halls, m.boards
    );
    let _ = writeln!(out, "  measured          {:.1} s", m.wall);
    let _ = writeln!(
        out,
        "  speed             {:.2}x (target {} ms per move per board)",
        m.speed, m.move_ms
    );
    let _ = writeln!(
        out,
        "  lines stored      {} ({:.1} per s)",
        m.stored,
        m.stored as f64 / m.wall
    );
    let _ = writeln!(
        out,
        "  events delivered  {} by the central ({} matched to a hall line)",
        m.delivered,
        m.lat.len()
    );
    let _ = writeln!(
        out,
        "  central CPU       {:.1} % of one core",
        100.0 * m.cpu / m.wall
    );
    let _ = writeln!(
        out,
        "  central memory    {:.1} MiB resident (peak sampled), {:.1} MiB high-water",
        m.peak_rss as f64 / 1024.0,
        m.hwm as f64 / 1024.0
    );
    let _ = writeln!(
        out,
        "  hall input to central SSE  p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        percentile(m.lat, 0.5),
        percentile(m.lat, 0.9),
        percentile(m.lat, 0.99),
        percentile(m.lat, 1.0)
    );
}

/// Runs the load test and prints its report.
pub fn run(args: &HallsLoadArgs) -> Result<(), DaemonError> {
    super::init_tracing();
    let temp = tempfile::Builder::new()
        .prefix("eboard-halls-")
        .tempdir()
        .map_err(io(&std::env::temp_dir()))?;
    let dir = temp.path().to_owned();
    let total = args.halls * args.boards;
    // A stream of its own, so that an earlier run's lines are not read.
    let stream = format!("LOAD{}", std::process::id());
    let (mut child, addr) = central(&dir, &stream, &args.nats, total)?;
    let pid = child.id().to_string();
    let result = super::runtime()?.block_on(async {
        let probe: AckProbe = Arc::new(Mutex::new(HashMap::new()));
        let (halls, speed) = hall_specs(args, &dir, &stream);
        let sock: std::net::SocketAddr = addr
            .parse()
            .map_err(|_| DaemonError::Usage(format!("address {addr}")))?;
        let deadline = Instant::now() + Duration::from_secs(args.seconds);
        let arrivals = Arc::new(Mutex::new(Vec::new()));
        let seen = Arc::clone(&arrivals);
        let client = tokio::spawn(sse_client(sock, deadline, move |id, _kind, now| {
            if let Some(s) = id.split('.').next().and_then(|s| s.parse::<u64>().ok()) {
                seen.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((s, now));
            }
        }));
        let mut daemons = Vec::new();
        for (spec, journals, nats) in halls {
            let d = start(spec).await?;
            publish::spawn(nats, journals, Arc::clone(&d.hub), Some(Arc::clone(&probe)));
            daemons.push(d);
        }
        let cpu0 = cpu_seconds(&pid);
        let wall0 = Instant::now();
        let mut peak_rss = 0;
        while Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(500)).await;
            peak_rss = peak_rss.max(status_kib(&pid, "VmRSS:").unwrap_or(0));
        }
        let cpu = cpu_seconds(&pid) - cpu0;
        let wall = wall0.elapsed().as_secs_f64();
        let hwm = status_kib(&pid, "VmHWM:").unwrap_or(0);
        let _ = client.await;
        let probe = probe.lock().unwrap_or_else(|e| e.into_inner());
        let arrivals = arrivals.lock().unwrap_or_else(|e| e.into_inner());
        let mut lat: Vec<u64> = arrivals
            .iter()
            .filter_map(|(s, at)| {
                probe
                    .get(s)
                    .map(|entered| at.saturating_duration_since(*entered).as_micros() as u64)
            })
            .collect();
        lat.sort_unstable();
        print_report(&Measured {
            halls: args.halls,
            boards: args.boards,
            move_ms: args.move_ms,
            wall,
            speed,
            stored: probe.len(),
            delivered: arrivals.len(),
            lat: &lat,
            cpu,
            peak_rss,
            hwm,
        });
        Ok::<(), DaemonError>(())
    });
    let _ = child.kill();
    let _ = child.wait();
    result
}
