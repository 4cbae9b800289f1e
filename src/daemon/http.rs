//! The HTTP server: broadcast PGN, board state, server-sent events, arbiter
//! actions and the dashboard.
//!
//! | route | what |
//! |---|---|
//! | `GET /` | the arbiters' dashboard |
//! | `GET /round.pgn` | every board's round game, completed moves only (ETag); `?boards=101-200` for a slice |
//! | `GET /boards` | every board's state (JSON) |
//! | `GET /boards/{id}` | one board's moves, alerts and actions (JSON) |
//! | `GET /boards/{id}.pgn` | one board's round game, completed moves only |
//! | `GET /events` | server-sent events; resumes after `Last-Event-ID` (or `?since=`) |
//! | `GET /favicon.ico` | the tab icon (SVG) |
//! | `POST /boards/{id}/actions` | an arbiter action (`Authorization: Bearer <token>`); `?confirm=retract` to remove published moves |
//!
//! With a broadcast delay (see [`super::delay`]) every read without the
//! arbiters' token (`Authorization: Bearer`, or the dashboard's
//! `eboard_token` cookie once the token is pasted) gets the delayed view:
//! the round as it stood `delay` ago, events included. The reads that
//! depend on the token say so (`Vary: Authorization, Cookie`), so that a
//! cache between the hall and the public never hands the live view to a
//! reader without it.

use std::{
    collections::HashMap,
    convert::Infallible,
    hash::{Hash, Hasher},
    sync::Arc,
};

use axum::{
    Router,
    body::Body,
    extract::{Path, Query, State},
    http::{HeaderMap, HeaderValue, StatusCode, header},
    response::{
        Html, IntoResponse, Response,
        sse::{Event, KeepAlive, Sse},
    },
    routing::{get, post},
};
use serde::Deserialize;
use serde_json::json;
use tokio_stream::StreamExt;

use super::{
    action::Action,
    actor::BoardHandle,
    board::{ActionError, Snapshot},
    delay::Delay,
    hub::{EventId, Hub, Published},
    lichess::{BoardSet, PushStatus},
};

/// The dashboard page (no build step: plain HTML, CSS and JavaScript).
const DASHBOARD: &str = include_str!("dashboard.html");

/// What the handlers share.
#[derive(Debug, Clone)]
pub struct AppState {
    /// The boards in broadcast order.
    pub boards: Arc<Vec<BoardHandle>>,
    /// Board number to index in `boards`.
    pub index: Arc<HashMap<u32, usize>>,
    /// The event hub.
    pub hub: Arc<Hub>,
    /// The arbiters' token.
    pub token: Arc<str>,
    /// The event's name and round, for the dashboard.
    pub title: Arc<str>,
    /// Permits for concurrent event streams; none left: 503.
    pub streams: Arc<tokio::sync::Semaphore>,
    /// How many permits there are (for the 503's message).
    pub max_streams: usize,
    /// The state of the pushes to lichess.
    pub lichess: Arc<PushStatus>,
    /// The delayed public view (`None`: the public sees the round live).
    pub delay: Option<Arc<Delay>>,
}

/// How many event streams may be open at once by default (`/events`
/// answers 503 past it; `--max-event-streams` changes it).
pub const MAX_EVENT_STREAMS: usize = 1_000;

/// The largest action body: an action is a few hundred bytes of JSON.
pub const MAX_ACTION_BODY: usize = 16 * 1024;

/// The dashboard's policy: only its own inline script and style, requests
/// to its own origin, and never inside another site's frame.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

impl AppState {
    fn board(&self, id: &str) -> Option<&BoardHandle> {
        let id: u32 = id.parse().ok()?;
        self.index.get(&id).map(|&i| &self.boards[i])
    }

    /// What a request sees: the delayed view without the token (when the
    /// broadcast is delayed), the live boards with it.
    fn view(&self, headers: &HeaderMap) -> View<'_> {
        match &self.delay {
            Some(d) if !reads_live(headers, &self.token) => View::Delayed(d),
            _ => View::Live,
        }
    }
}

/// Which state a request reads.
#[derive(Debug, Clone, Copy)]
enum View<'a> {
    /// The boards as they are.
    Live,
    /// The boards as they stood the delay ago.
    Delayed(&'a Delay),
}

impl View<'_> {
    fn snapshot(self, b: &BoardHandle) -> Snapshot {
        match self {
            View::Live => b.snapshot(),
            // Never the live snapshot in its place: a board the delay does
            // not know shows nothing.
            View::Delayed(d) => d.snapshot(b.id).unwrap_or_else(|| Snapshot {
                summary: Arc::new(json!({ "id": b.id })),
                pgn: Arc::from(""),
            }),
        }
    }

    fn hub(self, live: &Arc<Hub>) -> Arc<Hub> {
        match self {
            View::Live => Arc::clone(live),
            View::Delayed(d) => Arc::clone(d.hub()),
        }
    }
}

/// The router.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/", get(dashboard))
        .route("/round.pgn", get(round_pgn))
        .route("/boards", get(boards))
        .route("/boards/{file}", get(board))
        .route("/events", get(events))
        // The reads above show the token's view.
        .route_layer(axum::middleware::map_response(vary_by_token))
        .route("/boards/{id}/actions", post(action))
        .route("/favicon.ico", get(favicon))
        .with_state(state)
}

/// Marks a response as depending on the request's token (the bearer
/// header or the dashboard's cookie): with a delay, its body does. Sent
/// without a delay too, so that a cache keeps working when one is set.
async fn vary_by_token(mut response: Response) -> Response {
    response.headers_mut().append(
        header::VARY,
        HeaderValue::from_static("Authorization, Cookie"),
    );
    response
}

fn error(status: StatusCode, message: impl Into<String>) -> Response {
    (status, axum::Json(json!({ "error": message.into() }))).into_response()
}

/// The tab icon: a corner of a chessboard. Browsers ask for
/// `/favicon.ico` by themselves and take an SVG served there.
const FAVICON: &str = r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 4 4"><rect width="4" height="4" fill="#f0d9b5"/><path fill="#b58863" d="M1 0h1v1H1zM3 0h1v1H3zM0 1h1v1H0zM2 1h1v1H2zM1 2h1v1H1zM3 2h1v1H3zM0 3h1v1H0zM2 3h1v1H2z"/></svg>"##;

async fn favicon() -> Response {
    (
        [
            (header::CONTENT_TYPE, "image/svg+xml"),
            (header::CACHE_CONTROL, "public, max-age=86400"),
        ],
        FAVICON,
    )
        .into_response()
}

/// The dashboard with the boards' state in it, so that the page shows the
/// boards without waiting for a second request.
async fn dashboard(State(app): State<AppState>, headers: HeaderMap) -> Response {
    let boards = script_safe_json(&boards_json(&app, app.view(&headers)));
    (
        [
            (
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(CONTENT_SECURITY_POLICY),
            ),
            (header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY")),
            (
                header::X_CONTENT_TYPE_OPTIONS,
                HeaderValue::from_static("nosniff"),
            ),
        ],
        Html(DASHBOARD.replacen("/*BOARDS*/", &boards, 1)),
    )
        .into_response()
}

/// JSON that can sit inside a `<script>` element: no `<` (which could
/// start `</script>` or `<!--`), `>` or `&` is left as itself; each is the
/// same JSON string written as a `\u` escape.
fn script_safe_json(value: &serde_json::Value) -> String {
    let text = value.to_string();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            c => out.push(c),
        }
    }
    out
}

/// A PGN body with a strong ETag; 304 when the client has it already.
fn pgn_response(headers: &HeaderMap, text: String) -> Response {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut hasher);
    let etag = format!("\"{:016x}\"", hasher.finish());
    let matches = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let etag_value = HeaderValue::from_str(&etag).unwrap_or(HeaderValue::from_static("\"0\""));
    let common = [
        (header::ETAG, etag_value),
        (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
    ];
    if matches {
        (StatusCode::NOT_MODIFIED, common).into_response()
    } else {
        (
            common,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/x-chess-pgn; charset=utf-8"),
            )],
            text,
        )
            .into_response()
    }
}

#[derive(Debug, Deserialize)]
struct RoundQuery {
    /// A slice of the round: `1-100`, `101-200`, `1-4,11-15`.
    boards: Option<String>,
}

async fn round_pgn(
    State(app): State<AppState>,
    Query(query): Query<RoundQuery>,
    headers: HeaderMap,
) -> Response {
    let set = match query.boards.as_deref().map(str::parse::<BoardSet>) {
        None => None,
        Some(Ok(set)) => Some(set),
        Some(Err(e)) => return error(StatusCode::BAD_REQUEST, e),
    };
    let view = app.view(&headers);
    let mut text = String::new();
    for b in app.boards.iter() {
        if set.as_ref().is_none_or(|s| s.contains(b.id)) {
            // Each game ends with a blank line: the games are separated by one.
            text.push_str(&view.snapshot(b).pgn);
        }
    }
    pgn_response(&headers, text)
}

fn boards_json(app: &AppState, view: View<'_>) -> serde_json::Value {
    // The last id first: a client resuming from it after reading the
    // boards may see an event twice but misses none.
    let last = view.hub(&app.hub).last_id().map(|id| id.to_string());
    let boards: Vec<serde_json::Value> = app
        .boards
        .iter()
        .map(|b| (*view.snapshot(b).summary).clone())
        .collect();
    json!({
        "title": &*app.title,
        "last_event_id": last,
        "boards": boards,
        "lichess": app.lichess.get(),
    })
}

async fn boards(State(app): State<AppState>, headers: HeaderMap) -> Response {
    axum::Json(boards_json(&app, app.view(&headers))).into_response()
}

async fn board(
    State(app): State<AppState>,
    Path(file): Path<String>,
    headers: HeaderMap,
) -> Response {
    let view = app.view(&headers);
    if let Some(id) = file.strip_suffix(".pgn") {
        return match app.board(id) {
            Some(b) => pgn_response(&headers, view.snapshot(b).pgn.to_string()),
            None => error(StatusCode::NOT_FOUND, format!("no board '{id}'")),
        };
    }
    let detail = match (view, app.board(&file)) {
        (View::Delayed(d), Some(b)) => Some(d.detail(b.id)),
        _ => None,
    };
    if let Some(detail) = detail {
        return match detail {
            Some(detail) => axum::Json(detail).into_response(),
            None => error(StatusCode::NOT_FOUND, format!("no board '{file}'")),
        };
    }
    match app.board(&file) {
        Some(b) => match b.detail().await {
            Some(detail) => axum::Json(detail).into_response(),
            None => error(StatusCode::SERVICE_UNAVAILABLE, "the board has stopped"),
        },
        None => error(StatusCode::NOT_FOUND, format!("no board '{file}'")),
    }
}

/// Compares without stopping at the first difference.
fn same_secret(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

fn authorized(headers: &HeaderMap, token: &str) -> bool {
    headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|given| same_secret(given.trim().as_bytes(), token.as_bytes()))
}

/// The dashboard keeps the pasted token in this cookie, so that its page,
/// its reads and its event stream (which cannot send a header) are live.
pub const TOKEN_COOKIE: &str = "eboard_token";

/// A read with the token (header or cookie) sees the boards live. The
/// cookie gives reads only: an action needs the header, so another site
/// cannot act through a browser that holds the cookie.
fn reads_live(headers: &HeaderMap, token: &str) -> bool {
    authorized(headers, token)
        || headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(';'))
            .filter_map(|c| c.trim().split_once('='))
            .any(|(name, value)| {
                name == TOKEN_COOKIE && same_secret(value.trim().as_bytes(), token.as_bytes())
            })
}

#[derive(Debug, Deserialize)]
struct ActionQuery {
    /// `retract`: the arbiter confirmed removing published moves.
    confirm: Option<String>,
}

async fn action(
    State(app): State<AppState>,
    Path(id): Path<String>,
    Query(query): Query<ActionQuery>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    // The token is checked before a byte of the body is read: a client
    // without it cannot make the daemon buffer anything.
    if !authorized(&headers, &app.token) {
        let mut r = error(
            StatusCode::UNAUTHORIZED,
            "an arbiter action needs 'Authorization: Bearer <token>' (the token file is in the data directory)",
        );
        r.headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        return r;
    }
    let Some(board) = app.board(&id) else {
        return error(StatusCode::NOT_FOUND, format!("no board '{id}'"));
    };
    let body = match axum::body::to_bytes(body, MAX_ACTION_BODY).await {
        Ok(body) => body,
        Err(_) => {
            return error(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("an action is at most {MAX_ACTION_BODY} bytes"),
            );
        }
    };
    let action: Action = match serde_json::from_slice(&body) {
        Ok(a) => a,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("not an action: {e}; e.g. {{\"action\":\"resign\",\"side\":\"white\"}}"),
            );
        }
    };
    let name = action.name();
    let confirmed = query.confirm.as_deref() == Some("retract");
    match board.act(action, confirmed).await {
        Ok(done) => {
            tracing::info!(
                board = board.id,
                action = name,
                seq = done.seq,
                "arbiter action"
            );
            axum::Json(json!({ "ok": true, "seq": done.seq, "g": done.g })).into_response()
        }
        Err(ActionError::Invalid(m)) => error(StatusCode::BAD_REQUEST, m),
        Err(ActionError::Conflict(m)) => error(StatusCode::CONFLICT, m),
        Err(ActionError::Retracts(m)) => (
            StatusCode::CONFLICT,
            axum::Json(json!({ "error": m, "confirm": "retract" })),
        )
            .into_response(),
        Err(ActionError::Unavailable(m)) => error(StatusCode::SERVICE_UNAVAILABLE, m),
    }
}

#[derive(Debug, Deserialize)]
struct EventsQuery {
    since: Option<String>,
}

fn sse_event(p: &Published) -> Event {
    Event::default()
        .id(p.id.to_string())
        .event(p.kind)
        .data(&*p.data)
}

fn resync() -> Event {
    Event::default()
        .event("resync")
        .data("{\"reason\":\"events were missed: reload /boards\"}")
}

async fn events(
    State(app): State<AppState>,
    Query(query): Query<EventsQuery>,
    headers: HeaderMap,
) -> Response {
    let given = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .or(query.since);
    let after = match given.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(text) => match text.parse::<EventId>() {
            Ok(id) => Some(id),
            Err(()) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    format!("'{text}' is not an event id (<number>.<number>)"),
                );
            }
        },
    };
    let Ok(permit) = Arc::clone(&app.streams).try_acquire_owned() else {
        let mut r = error(
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "{} event streams are open already; retry later",
                app.max_streams
            ),
        );
        r.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("10"));
        return r;
    };
    // A task per stream feeds a small channel: it takes the next page of
    // the backlog only when the client has read the previous events, so a
    // client that does not read holds a few events, not the backlog.
    let (tx, rx) = tokio::sync::mpsc::channel(PAGE);
    let hub = app.view(&headers).hub(&app.hub);
    tokio::spawn(feed_stream(hub, after, tx, permit));
    let stream = tokio_stream::wrappers::ReceiverStream::new(rx).map(Ok::<Event, Infallible>);
    Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response()
}

/// How many backlog events a catching-up client is sent per page.
const PAGE: usize = 256;

/// Sends a stream's events: the backlog after `after` a page at a time,
/// then the live events; a client too far behind gets `resync`. Ends when
/// the client goes (the permit is released with it).
async fn feed_stream(
    hub: Arc<Hub>,
    after: Option<EventId>,
    tx: tokio::sync::mpsc::Sender<Event>,
    _permit: tokio::sync::OwnedSemaphorePermit,
) {
    let mut live = match after {
        None => hub.subscribe(None).live,
        Some(mut cursor) => loop {
            let page = hub.page(cursor, PAGE);
            if page.resync && tx.send(resync()).await.is_err() {
                return;
            }
            for p in &page.events {
                if tx.send(sse_event(p)).await.is_err() {
                    return;
                }
                cursor = p.id;
            }
            if let Some(live) = page.live {
                break live;
            }
        },
    };
    loop {
        let event = tokio::select! {
            r = live.recv() => match r {
                Ok(p) => sse_event(&p),
                // The client fell too far behind: it must reload the boards.
                Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => resync(),
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            },
            () = tx.closed() => return,
        };
        if tx.send(event).await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream whose client falls behind the live events by more than the
    /// hub holds for it gets `resync` (and then goes on), not an error or
    /// an end.
    #[tokio::test]
    async fn a_stream_that_falls_behind_the_live_events_gets_resync() {
        let hub = Hub::new(Vec::new(), 0, false);
        let (tx, mut rx) = tokio::sync::mpsc::channel(1);
        let permit = Arc::new(tokio::sync::Semaphore::new(1))
            .try_acquire_owned()
            .unwrap();
        tokio::spawn(feed_stream(Arc::clone(&hub), None, tx, permit));
        // The stream subscribes before the events come.
        tokio::task::yield_now().await;
        for _ in 0..20_000 {
            let ticket = hub.reserve(std::time::Instant::now());
            let payload = super::super::hub::Payload {
                kind: "clock",
                data: "{}".into(),
            };
            hub.publish(ticket, vec![payload]);
        }
        let first = rx.recv().await.expect("an event");
        assert!(format!("{first:?}").contains("resync"), "{first:?}");
        let next = rx.recv().await.expect("the stream goes on");
        assert!(format!("{next:?}").contains("clock"), "{next:?}");
    }

    #[test]
    fn bearer_token() {
        let mut h = HeaderMap::new();
        assert!(!authorized(&h, "abc"));
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer abd"),
        );
        assert!(!authorized(&h, "abc"));
        h.insert(
            header::AUTHORIZATION,
            HeaderValue::from_static("Bearer abc"),
        );
        assert!(authorized(&h, "abc"));
        h.insert(header::AUTHORIZATION, HeaderValue::from_static("Basic abc"));
        assert!(!authorized(&h, "abc"));
        assert!(!same_secret(b"ab", b"abc"));
    }

    #[test]
    fn the_token_cookie_reads_live() {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; eboard_token=abd"),
        );
        assert!(!reads_live(&h, "abc"));
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; eboard_token=abc"),
        );
        assert!(reads_live(&h, "abc"));
        // The cookie does not authorise actions.
        assert!(!authorized(&h, "abc"));
    }
}
