//! Pushing the round to a lichess broadcast (lichess's push API).
//!
//! A hall seldom has a public address with TLS, which polling `/round.pgn`
//! needs, so eboard can push instead: it POSTs the round's PGN to
//! `{url}/api/broadcast/round/{round}/push` with `Authorization: Bearer` and
//! `Content-Type: text/plain`. The PGN is the boards' broadcast snapshots
//! (completed moves only), so what is pushed is always the previous push
//! plus more. One task per lichess round ("slice" of at most 100 boards,
//! lichess's limit per push and per round) follows the hub: it keeps only
//! the latest state to send, pushes at most once a second, retries with
//! backoff on timeouts and 5xx, waits a minute after a 429 (lichess's rule
//! for its API), and stops for good on 401/403 (a bad or revoked token).
//! The state of every slice is kept in [`PushStatus`] for `GET /boards` and
//! the dashboard; a refused token and a game lichess refuses are also
//! alerts on the boards concerned ([`PUSH_FAILED`], [`GAME_REJECTED`]).
//!
//! It reads only [`BoardHandle`] snapshots and the [`Hub`], so `run`,
//! `demo` and a central can all push.

use std::{
    collections::{HashMap, HashSet},
    fmt,
    ops::RangeInclusive,
    path::{Path, PathBuf},
    str::FromStr,
    sync::{Arc, Mutex, OnceLock},
    time::{Duration, Instant, SystemTime, UNIX_EPOCH},
};

use serde::{Deserialize, Serialize};

use super::{DaemonError, actor::BoardHandle, delay::Delay, hub::Hub};

/// lichess takes at most this many games per push, and a broadcast round
/// shows at most this many boards.
pub const MAX_GAMES: usize = 100;
/// The default lichess server.
pub const DEFAULT_URL: &str = "https://lichess.org";
/// At most one push per lichess round in this time.
const MIN_INTERVAL: Duration = Duration::from_secs(1);
/// The longest wait between two attempts after failures.
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// How long one push may take (lichess gives up on a queued push after 10 s).
const TIMEOUT: Duration = Duration::from_secs(15);
/// The pause after a 429 that names none: lichess asks API clients to wait
/// a full minute.
const RATE_LIMIT_PAUSE: Duration = Duration::from_secs(60);

/// The alert raised on every board of a lichess round when pushing stops
/// (lichess refused the token).
pub const PUSH_FAILED: &str = "lichess_push_failed";
/// The alert raised on a board whose game lichess refused in its answer.
pub const GAME_REJECTED: &str = "lichess_game_rejected";

/// A set of board numbers: `1-100`, `101-200`, `1-4,11-15`, `7`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoardSet {
    text: String,
    ranges: Vec<RangeInclusive<u32>>,
}

impl BoardSet {
    /// Whether board `id` is in the set.
    pub fn contains(&self, id: u32) -> bool {
        self.ranges.iter().any(|r| r.contains(&id))
    }
}

impl fmt::Display for BoardSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl FromStr for BoardSet {
    type Err = String;

    fn from_str(s: &str) -> Result<BoardSet, String> {
        let bad = |why: &str| format!("boards '{s}': {why} (e.g. \"1-100\" or \"1-4,11-15\")");
        let number = |t: &str| {
            t.trim()
                .parse::<u32>()
                .map_err(|_| bad("not a board number"))
        };
        let mut ranges = Vec::new();
        for part in s.split(',') {
            let (a, b) = match part.split_once('-') {
                Some((a, b)) => (number(a)?, number(b)?),
                None => {
                    let n = number(part)?;
                    (n, n)
                }
            };
            if a == 0 || b < a {
                return Err(bad("a range goes from a board number ≥ 1 up"));
            }
            ranges.push(a..=b);
        }
        Ok(BoardSet {
            text: s.trim().to_owned(),
            ranges,
        })
    }
}

impl<'de> Deserialize<'de> for BoardSet {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<BoardSet, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// The `[lichess]` table of the event file.
///
/// ```toml
/// [lichess]
/// token_file = "lichess.token"   # an API token with the study:write scope, mode 0600
/// round = "AbCd1234"             # the broadcast round's id, for up to 100 boards
/// # or, for more boards, one lichess round per slice:
/// # [[lichess.slice]]
/// # round = "AbCd1234"
/// # boards = "1-100"
/// ```
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LichessConfig {
    /// The lichess server (default `https://lichess.org`).
    #[serde(default)]
    pub url: Option<String>,
    /// The file holding the API token (relative to the config file).
    #[serde(default)]
    pub token_file: Option<PathBuf>,
    /// The broadcast round that shows the whole round.
    #[serde(default)]
    pub round: Option<String>,
    /// Or one broadcast round per slice of boards.
    #[serde(default)]
    pub slice: Vec<SliceConfig>,
    /// Push the round live although the public broadcast is delayed: for
    /// a lichess round that applies its own delay (a delay belongs in one
    /// place only, or viewers wait twice).
    #[serde(default)]
    pub live: bool,
}

/// A `[[lichess.slice]]` entry.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SliceConfig {
    /// The broadcast round's id.
    pub round: String,
    /// Its boards.
    pub boards: BoardSet,
}

/// The flags that push to lichess (a single round; they override the
/// `[lichess]` table).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct LichessArgs {
    /// Push the round to this lichess server (default https://lichess.org).
    #[arg(long, value_name = "URL")]
    pub lichess_url: Option<String>,
    /// Push the round to this lichess broadcast round (its id, from the
    /// round's URL).
    #[arg(long, value_name = "ID")]
    pub lichess_round: Option<String>,
    /// The file holding the lichess API token (study:write scope; mode 0600).
    #[arg(long, value_name = "FILE")]
    pub lichess_token_file: Option<PathBuf>,
    /// How long one push may take, in ms (default 15 000; for tests).
    #[arg(long, value_name = "MS", hide = true)]
    pub lichess_timeout_ms: Option<u64>,
    /// Push live although `--broadcast-delay` delays the public broadcast
    /// (for a lichess round with its own delay; `live = true` in [lichess]).
    #[arg(long)]
    pub lichess_live: bool,
}

/// One lichess round and the boards it shows (`None`: all).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slice {
    /// The broadcast round's id.
    pub round: String,
    /// Its boards.
    pub boards: Option<BoardSet>,
}

impl Slice {
    fn has(&self, id: u32) -> bool {
        self.boards.as_ref().is_none_or(|b| b.contains(id))
    }
}

/// Where and how to push.
#[derive(Clone)]
pub struct LichessSettings {
    /// The server, without a trailing `/`.
    pub url: String,
    /// The API token.
    pub token: String,
    /// The rounds to push.
    pub slices: Vec<Slice>,
    /// How long one push may take.
    pub timeout: Duration,
    /// Push the live round even when the public broadcast is delayed.
    pub live: bool,
}

impl fmt::Debug for LichessSettings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the token.
        f.debug_struct("LichessSettings")
            .field("url", &self.url)
            .field("slices", &self.slices)
            .field("timeout", &self.timeout)
            .field("live", &self.live)
            .finish_non_exhaustive()
    }
}

fn usage(message: String) -> DaemonError {
    DaemonError::Usage(message)
}

impl LichessSettings {
    /// The settings from the `[lichess]` table and the flags; `None` when
    /// neither asks for a push. `boards` are the round's board numbers.
    pub fn resolve(
        config: Option<&LichessConfig>,
        args: &LichessArgs,
        boards: &[u32],
    ) -> Result<Option<LichessSettings>, DaemonError> {
        let flagged = args.lichess_live
            || args.lichess_url.is_some()
            || args.lichess_round.is_some()
            || args.lichess_token_file.is_some();
        if config.is_none() && !flagged {
            return Ok(None);
        }
        let config = config.cloned().unwrap_or_default();
        let live = args.lichess_live || config.live;
        let url = args
            .lichess_url
            .clone()
            .or(config.url)
            .unwrap_or_else(|| DEFAULT_URL.to_owned());
        let url = url.trim_end_matches('/').to_owned();
        if !(url.starts_with("https://") || url.starts_with("http://")) {
            return Err(usage(format!(
                "lichess url '{url}': expected https://HOST (e.g. {DEFAULT_URL})"
            )));
        }
        let slices = if let Some(round) = &args.lichess_round {
            vec![Slice {
                round: round.clone(),
                boards: None,
            }]
        } else {
            match (config.round, config.slice.is_empty()) {
                (Some(_), false) => {
                    return Err(usage(
                        "[lichess]: give either round or [[lichess.slice]] entries, not both"
                            .into(),
                    ));
                }
                (Some(round), true) => vec![Slice {
                    round,
                    boards: None,
                }],
                (None, false) => config
                    .slice
                    .into_iter()
                    .map(|s| Slice {
                        round: s.round,
                        boards: Some(s.boards),
                    })
                    .collect(),
                (None, true) => {
                    return Err(usage(
                        "pushing to lichess needs a broadcast round: --lichess-round ID, or round (or [[lichess.slice]]) in [lichess]".into(),
                    ));
                }
            }
        };
        for s in &slices {
            check_round_id(&s.round)?;
            let n = boards.iter().filter(|&&b| s.has(b)).count();
            if n > MAX_GAMES {
                return Err(usage(format!(
                    "lichess round {}: {n} boards, but a lichess round shows at most {MAX_GAMES}; split the round with [[lichess.slice]] entries (boards = \"1-100\", ...)",
                    s.round
                )));
            }
        }
        let Some(token_file) = args.lichess_token_file.clone().or(config.token_file) else {
            return Err(usage(
                "pushing to lichess needs an API token: --lichess-token-file FILE, or token_file in [lichess]".into(),
            ));
        };
        let token = read_token_file(&token_file)?;
        let timeout = args
            .lichess_timeout_ms
            .map_or(TIMEOUT, Duration::from_millis);
        Ok(Some(LichessSettings {
            url,
            token,
            slices,
            timeout,
            live,
        }))
    }
}

/// A round id goes into the request's path: letters and digits only.
fn check_round_id(round: &str) -> Result<(), DaemonError> {
    if round.is_empty() || !round.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(usage(format!(
            "lichess round '{round}': expected the round's id (letters and digits, the last part of the round's URL)"
        )));
    }
    Ok(())
}

/// Reads an API token from a file that only its owner may read (as ssh
/// requires of private keys).
pub fn read_token_file(path: &Path) -> Result<String, DaemonError> {
    let io = |e| usage(crate::files::unreadable("lichess token file", path, &e));
    let meta = std::fs::metadata(path).map_err(io)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o077 != 0 {
            return Err(usage(format!(
                "{}: the lichess token file is readable by others than its owner (mode {mode:03o}); make it private with `chmod 600 {}`",
                path.display(),
                path.display()
            )));
        }
    }
    #[cfg(not(unix))]
    let _ = meta;
    let text = std::fs::read_to_string(path).map_err(io)?;
    let token = text.trim();
    if token.is_empty() || token.contains(char::is_whitespace) {
        return Err(usage(format!(
            "{}: expected one lichess API token (create one at https://lichess.org/account/oauth/token/create with the study:write scope)",
            path.display()
        )));
    }
    Ok(token.to_owned())
}

/// A game lichess refused, from its answer to a push.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct GameError {
    /// The board, when the answer's tags name it.
    pub board: Option<u32>,
    /// The game's `GameId`, when the answer's tags have it.
    pub game: Option<String>,
    /// lichess's reason.
    pub error: String,
}

/// The push state of one lichess round.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SliceStatus {
    /// The broadcast round's id.
    pub round: String,
    /// Its boards (`all`, or as configured).
    pub boards: String,
    /// Successful pushes.
    pub pushes: u64,
    /// Games in the last successful push.
    pub games: usize,
    /// When the last push succeeded (ms since 1970).
    pub last_success_ms: Option<u64>,
    /// The last failure, if it came after the last success.
    pub last_error: Option<String>,
    /// When it happened (ms since 1970).
    pub last_error_ms: Option<u64>,
    /// Pushing stopped (lichess refused the token).
    pub stopped: bool,
    /// The games lichess refused in its last answer.
    pub game_errors: Vec<GameError>,
}

/// The push state of every lichess round, for `GET /boards`.
#[derive(Debug, Default)]
pub struct PushStatus {
    slices: Mutex<Vec<SliceStatus>>,
}

impl PushStatus {
    /// A copy of the state (empty: no push configured).
    pub fn get(&self) -> Vec<SliceStatus> {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<SliceStatus>> {
        self.slices.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn update(&self, i: usize, f: impl FnOnce(&mut SliceStatus)) {
        if let Some(s) = self.lock().get_mut(i) {
            f(s);
        }
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// The PGN of the boards of a slice, in broadcast order (at most
/// [`MAX_GAMES`] games), and how many games it holds.
pub fn slice_pgn(
    boards: &[BoardHandle],
    set: Option<&BoardSet>,
    delay: Option<&Delay>,
) -> (String, usize) {
    let mut text = String::new();
    let mut n = 0;
    for b in boards {
        if n == MAX_GAMES {
            break;
        }
        if set.is_none_or(|s| s.contains(b.id)) {
            // Each game ends with a blank line: games are separated by one.
            match delay {
                Some(d) => text.push_str(&d.snapshot(b.id).map(|s| s.pgn).unwrap_or_default()),
                None => text.push_str(&b.snapshot().pgn),
            }
            n += 1;
        }
    }
    (text, n)
}

/// lichess's answer to a push: one entry per game.
#[derive(Debug, Deserialize)]
struct Answer {
    #[serde(default)]
    games: Vec<AnswerGame>,
}

#[derive(Debug, Deserialize)]
struct AnswerGame {
    #[serde(default)]
    tags: HashMap<String, String>,
    #[serde(default)]
    error: Option<String>,
}

/// Why a push failed.
#[derive(Debug)]
enum Failure {
    /// Try again later: a timeout, no connection, a 5xx.
    Retry(String),
    /// Too many requests (429): try again after this pause.
    RateLimited(String, Duration),
    /// lichess refused the token (401, 403): stop.
    Auth(String),
    /// lichess refused the PGN (another 4xx): wait for the next change.
    Refused(String),
}

/// The board a game of lichess's answer is about, from its tags: its
/// `GameId` (`eboard-<board>-<game>`), else its `Round` (`<round>.<board>`).
fn board_of(tags: &HashMap<String, String>) -> Option<u32> {
    let by_id = tags
        .get("GameId")
        .and_then(|id| id.strip_prefix("eboard-")?.split('-').next()?.parse().ok());
    by_id.or_else(|| tags.get("Round")?.rsplit_once('.')?.1.parse().ok())
}

/// The pause a 429 asks for: its `Retry-After` in seconds, else a minute.
fn rate_limit_pause(retry_after: Option<&str>) -> Duration {
    retry_after
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map_or(RATE_LIMIT_PAUSE, Duration::from_secs)
        .clamp(MIN_INTERVAL, Duration::from_secs(600))
}

/// The short reason of an error answer (`{"error": "..."}` or the text).
fn reason(status: reqwest::StatusCode, body: &str) -> String {
    let error = serde_json::from_str::<serde_json::Value>(body)
        .ok()
        .and_then(|v| {
            v.get("error")
                .map(|e| e.as_str().map_or(e.to_string(), str::to_owned))
        });
    let detail = error.unwrap_or_else(|| body.chars().take(200).collect());
    format!("HTTP {status}: {}", detail.trim())
}

/// POSTs one push; returns the games lichess refused.
async fn post(
    client: &reqwest::Client,
    settings: &LichessSettings,
    round: &str,
    body: String,
) -> Result<Vec<GameError>, Failure> {
    let url = format!("{}/api/broadcast/round/{round}/push", settings.url);
    let sent = client
        .post(&url)
        .bearer_auth(&settings.token)
        .header(reqwest::header::CONTENT_TYPE, "text/plain")
        .body(body)
        .send()
        .await
        .map_err(|e| {
            Failure::Retry(if e.is_timeout() {
                format!(
                    "{url}: no answer within {} s",
                    settings.timeout.as_secs_f64()
                )
            } else {
                format!("{url}: {e}")
            })
        })?;
    let status = sent.status();
    let retry_after = sent
        .headers()
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let text = sent
        .text()
        .await
        .map_err(|e| Failure::Retry(format!("{url}: {e}")))?;
    if status.is_success() {
        let answer: Answer = serde_json::from_str(&text).unwrap_or(Answer { games: Vec::new() });
        return Ok(answer
            .games
            .into_iter()
            .filter_map(|g| {
                g.error.map(|error| GameError {
                    board: board_of(&g.tags),
                    game: g.tags.get("GameId").cloned(),
                    error,
                })
            })
            .collect());
    }
    let why = reason(status, &text);
    Err(match status.as_u16() {
        401 | 403 => Failure::Auth(why),
        429 => Failure::RateLimited(why, rate_limit_pause(retry_after.as_deref())),
        500..=599 => Failure::Retry(why),
        _ => Failure::Refused(why),
    })
}

/// Starts pushing on the current tokio runtime: one task per lichess round.
/// `status` is filled with one entry per slice.
pub fn spawn(
    settings: LichessSettings,
    boards: Arc<Vec<BoardHandle>>,
    hub: Arc<Hub>,
    delay: Option<Arc<Delay>>,
    status: Arc<PushStatus>,
) -> Result<(), DaemonError> {
    // Pushed live, the round is delayed by lichess or not at all.
    let delay = delay.filter(|_| !settings.live);
    let hub = delay.as_ref().map_or(hub, |d| Arc::clone(d.hub()));
    let client = reqwest::Client::builder()
        .user_agent(concat!("eboard/", env!("CARGO_PKG_VERSION")))
        .timeout(settings.timeout)
        .build()
        .map_err(|e| usage(format!("lichess client: {e}")))?;
    *status.lock() = settings
        .slices
        .iter()
        .map(|s| SliceStatus {
            round: s.round.clone(),
            boards: s
                .boards
                .as_ref()
                .map_or_else(|| "all".to_owned(), ToString::to_string),
            ..SliceStatus::default()
        })
        .collect();
    let settings = Arc::new(settings);
    let stop = Arc::new(OnceLock::new());
    for i in 0..settings.slices.len() {
        let pusher = Pusher {
            i,
            client: client.clone(),
            settings: Arc::clone(&settings),
            boards: Arc::clone(&boards),
            hub: Arc::clone(&hub),
            delay: delay.clone(),
            status: Arc::clone(&status),
            stop: Arc::clone(&stop),
            alerted: HashSet::new(),
        };
        tokio::spawn(pusher.run());
    }
    tracing::info!(
        url = settings.url,
        rounds = settings.slices.len(),
        "pushing to lichess"
    );
    Ok(())
}

/// The task that pushes one lichess round.
struct Pusher {
    i: usize,
    client: reqwest::Client,
    settings: Arc<LichessSettings>,
    boards: Arc<Vec<BoardHandle>>,
    /// The hub whose events wake the pusher: the delayed one when the
    /// push is delayed.
    hub: Arc<Hub>,
    /// The delayed view the push shows (`None`: live).
    delay: Option<Arc<Delay>>,
    status: Arc<PushStatus>,
    /// Set, with lichess's reason, when lichess refused the token: every
    /// round stops.
    stop: Arc<OnceLock<String>>,
    /// The refused games already alerted on: a game lichess goes on
    /// refusing is one alert, not one per push.
    alerted: HashSet<GameError>,
}

impl Pusher {
    async fn run(mut self) {
        let settings = Arc::clone(&self.settings);
        let slice = &settings.slices[self.i];
        let mut wake = self.hub.subscribe(None).live;
        let mut pushed: Option<String> = None;
        let mut backoff = Duration::ZERO;
        loop {
            if let Some(why) = self.stop.get() {
                self.stop_pushing(slice, why).await;
                return;
            }
            // Only the latest state is sent: it is read afresh each time.
            let (body, games) =
                slice_pgn(&self.boards, slice.boards.as_ref(), self.delay.as_deref());
            if games > 0 && pushed.as_deref() != Some(body.as_str()) {
                let started = Instant::now();
                match post(&self.client, &self.settings, &slice.round, body.clone()).await {
                    Ok(errors) => {
                        backoff = Duration::ZERO;
                        self.alert_refused_games(slice, &errors).await;
                        self.status.update(self.i, |s| {
                            s.pushes += 1;
                            s.games = games;
                            s.last_success_ms = Some(now_ms());
                            s.last_error = None;
                            s.game_errors = errors;
                        });
                        pushed = Some(body);
                    }
                    Err(Failure::Auth(why)) => {
                        tracing::error!(
                            round = slice.round,
                            "lichess refused the token ({why}); pushing stopped: check the token's study:write scope and that its owner is a contributor of the broadcast"
                        );
                        // The first refusal names the reason for every round.
                        let _ = self.stop.set(why);
                        continue;
                    }
                    Err(Failure::Retry(why)) => {
                        backoff = (backoff * 2).clamp(MIN_INTERVAL, MAX_BACKOFF);
                        self.retry_after(slice, why, backoff).await;
                        continue;
                    }
                    Err(Failure::RateLimited(why, pause)) => {
                        self.retry_after(slice, why, pause).await;
                        continue;
                    }
                    Err(Failure::Refused(why)) => {
                        tracing::warn!(round = slice.round, "lichess refused the push: {why}");
                        self.failed(why, false);
                        // Not sent again as it is: the next change is.
                        pushed = Some(body);
                    }
                }
                tokio::time::sleep_until((started + MIN_INTERVAL).into()).await;
            }
            tokio::select! {
                r = wake.recv() => {
                    if matches!(r, Err(tokio::sync::broadcast::error::RecvError::Closed)) {
                        tokio::time::sleep(MIN_INTERVAL).await;
                    }
                }
                () = tokio::time::sleep(MIN_INTERVAL) => {}
            }
        }
    }

    async fn retry_after(&self, slice: &Slice, why: String, pause: Duration) {
        tracing::warn!(
            round = slice.round,
            "lichess push failed ({why}); retrying in {} s",
            pause.as_secs()
        );
        self.failed(why, false);
        tokio::time::sleep(pause).await;
    }

    fn failed(&self, why: String, stopped: bool) {
        self.status.update(self.i, |s| {
            s.last_error = Some(why);
            s.last_error_ms = Some(now_ms());
            s.stopped |= stopped;
        });
    }

    /// Marks the round stopped and tells the arbiters on each of its boards:
    /// from now on viewers see none of their moves.
    async fn stop_pushing(&self, slice: &Slice, why: &str) {
        self.failed(why.to_owned(), true);
        let message = format!(
            "pushing to lichess round {} stopped: lichess refused the token ({why}); viewers see no new moves of this board. Check that the token has the study:write scope and that its owner is a contributor of the broadcast, then restart the daemon.",
            slice.round
        );
        for b in self.boards.iter().filter(|b| slice.has(b.id)) {
            b.alert(PUSH_FAILED, message.clone()).await;
        }
    }

    /// An alert on the board of each game lichess refused, once per game
    /// and reason (also across a restart, while the alert is open).
    async fn alert_refused_games(&mut self, slice: &Slice, errors: &[GameError]) {
        for e in errors {
            if !self.alerted.insert(e.clone()) {
                continue;
            }
            tracing::warn!(
                round = slice.round,
                board = e.board,
                game = e.game,
                "lichess refused a game: {}",
                e.error
            );
            let Some(board) = e
                .board
                .filter(|&id| slice.has(id))
                .and_then(|id| self.boards.iter().find(|b| b.id == id))
            else {
                continue;
            };
            let message = format!(
                "lichess round {} refused the game {} of board {}: {}; viewers do not see it until it is fixed",
                slice.round,
                e.game.as_deref().unwrap_or("without a GameId"),
                board.id,
                e.error
            );
            let open = board.snapshot().summary["open_alerts"]
                .as_array()
                .is_some_and(|open| {
                    open.iter()
                        .any(|a| a["kind"] == GAME_REJECTED && a["message"] == message.as_str())
                });
            if !open {
                board.alert(GAME_REJECTED, message).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn board_sets_parse() {
        let s: BoardSet = "1-100".parse().unwrap();
        assert!(s.contains(1) && s.contains(100) && !s.contains(101) && !s.contains(0));
        let s: BoardSet = "1-4, 11-15,20".parse().unwrap();
        assert!(s.contains(3) && !s.contains(5) && s.contains(11) && s.contains(20));
        for bad in ["", "0-3", "5-2", "a-b", "1-", "-"] {
            assert!(bad.parse::<BoardSet>().is_err(), "{bad}");
        }
    }

    fn args(round: &str, token: &Path) -> LichessArgs {
        LichessArgs {
            lichess_url: Some("http://127.0.0.1:1/".into()),
            lichess_round: Some(round.into()),
            lichess_token_file: Some(token.to_owned()),
            lichess_timeout_ms: None,
            lichess_live: false,
        }
    }

    #[cfg(unix)]
    #[test]
    fn the_token_file_must_be_private() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "lip_secret\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let e = LichessSettings::resolve(None, &args("r1", &path), &[1]).unwrap_err();
        assert!(e.to_string().contains("readable by others"), "{e}");
        assert!(e.to_string().contains("chmod 600"), "{e}");
        assert_eq!(e.exit_code(), 2);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        let s = LichessSettings::resolve(None, &args("r1", &path), &[1])
            .unwrap()
            .unwrap();
        assert_eq!(s.token, "lip_secret");
        assert_eq!(s.url, "http://127.0.0.1:1");
        assert!(!format!("{s:?}").contains("lip_secret"));
    }

    #[test]
    fn a_missing_token_file_is_named_with_its_purpose() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tok");
        let e = LichessSettings::resolve(None, &args("r1", &path), &[1]).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("lichess token file {}: no such file", path.display())
        );
    }

    #[test]
    fn rounds_and_slices_are_checked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "t").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        let boards: Vec<u32> = (1..=250).collect();
        // A single lichess round cannot show 250 boards.
        let e = LichessSettings::resolve(None, &args("r1", &path), &boards).unwrap_err();
        assert!(e.to_string().contains("[[lichess.slice]]"), "{e}");
        // A path in the round id is refused.
        let e = LichessSettings::resolve(None, &args("../x", &path), &[1]).unwrap_err();
        assert!(e.to_string().contains("letters and digits"), "{e}");
        let config = LichessConfig {
            token_file: Some(path.clone()),
            slice: vec![
                SliceConfig {
                    round: "a".into(),
                    boards: "1-100".parse().unwrap(),
                },
                SliceConfig {
                    round: "b".into(),
                    boards: "101-250".parse().unwrap(),
                },
            ],
            ..LichessConfig::default()
        };
        let e =
            LichessSettings::resolve(Some(&config), &LichessArgs::default(), &boards).unwrap_err();
        assert!(e.to_string().contains("150 boards"), "{e}");
        let mut config = config;
        config.slice[1].boards = "101-200".parse().unwrap();
        let s = LichessSettings::resolve(Some(&config), &LichessArgs::default(), &boards)
            .unwrap()
            .unwrap();
        assert_eq!(s.url, DEFAULT_URL);
        assert_eq!(s.slices.len(), 2);
        // Nothing configured: no push.
        assert!(
            LichessSettings::resolve(None, &LichessArgs::default(), &boards)
                .unwrap()
                .is_none()
        );
    }

    proptest::proptest! {
        /// Any `boards=` text from a URL or a config: a set or an error,
        /// never a panic; a set contains exactly what its ranges say.
        #[test]
        fn any_board_set_text_is_handled(text in "[0-9,\\- ]{0,24}|\\PC{0,24}", id in 0u32..400) {
            if let Ok(set) = text.parse::<BoardSet>() {
                let inside = text.split(',').any(|part| {
                    let (a, b) = part.split_once('-').unwrap_or((part, part));
                    let (a, b): (u32, u32) = (a.trim().parse().unwrap(), b.trim().parse().unwrap());
                    (a..=b).contains(&id)
                });
                proptest::prop_assert_eq!(set.contains(id), inside);
            }
        }
    }

    #[test]
    fn a_429_waits_a_minute_unless_told_otherwise() {
        // lichess's API rule: after a 429, wait a full minute.
        assert_eq!(rate_limit_pause(None), Duration::from_secs(60));
        assert_eq!(rate_limit_pause(Some("junk")), Duration::from_secs(60));
        assert_eq!(rate_limit_pause(Some("5")), Duration::from_secs(5));
        assert_eq!(rate_limit_pause(Some("0")), MIN_INTERVAL);
        assert_eq!(rate_limit_pause(Some("99999")), Duration::from_secs(600));
    }

    #[test]
    fn refused_games_name_their_board() {
        let tags = HashMap::from([("GameId".to_owned(), "eboard-17-2".to_owned())]);
        assert_eq!(board_of(&tags), Some(17));
        assert_eq!(board_of(&HashMap::new()), None);
        // Without a GameId, the board of `Round` (`<round>.<board>`).
        let tags = HashMap::from([("Round".to_owned(), "3.42".to_owned())]);
        assert_eq!(board_of(&tags), Some(42));
        let r = reason(
            reqwest::StatusCode::UNAUTHORIZED,
            r#"{"error":"No such token"}"#,
        );
        assert_eq!(r, "HTTP 401 Unauthorized: No such token");
    }
}
