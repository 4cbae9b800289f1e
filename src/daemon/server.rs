//! The HTTP connections: hyper's HTTP/1.1 server with a header-read timeout
//! (which also closes keep-alive connections left idle) and a cap on
//! concurrent connections, so that clients that open connections and never
//! finish a request cannot take every file descriptor of the daemon.
//!
//! One client (one IP address) holds at most [`MAX_PER_CLIENT`] of them: a
//! peer that keeps reopening half-open connections cannot fill the cap and
//! starve the others. Its connections beyond that are answered 503 and
//! closed at once.

use std::{
    collections::HashMap,
    net::IpAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use hyper_util::{
    rt::{TokioIo, TokioTimer},
    service::TowerToHyperService,
};
use tokio::{net::TcpListener, sync::Semaphore};

/// How long a client has to send a request's headers, counted from when
/// the server starts waiting for them: a half-sent request, and a
/// keep-alive connection idle between requests, are closed after it.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How many connections are served at once; more wait in the listen
/// backlog until one closes.
pub const MAX_CONNECTIONS: usize = 2_048;

/// How many connections one IP address may hold at once.
pub const MAX_PER_CLIENT: usize = 256;

/// The connections each client holds.
#[derive(Debug, Default)]
struct Clients(Mutex<HashMap<IpAddr, usize>>);

/// One client's connection, counted until dropped.
struct Counted {
    clients: Arc<Clients>,
    ip: IpAddr,
}

impl Clients {
    /// Counts a connection of `ip`, unless it holds [`MAX_PER_CLIENT`].
    fn admit(self: &Arc<Clients>, ip: IpAddr) -> Option<Counted> {
        let mut map = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let held = map.entry(ip).or_insert(0);
        if *held >= MAX_PER_CLIENT {
            return None;
        }
        *held += 1;
        Some(Counted {
            clients: Arc::clone(self),
            ip,
        })
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        let mut map = self.clients.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(held) = map.get_mut(&self.ip) {
            *held -= 1;
            if *held == 0 {
                map.remove(&self.ip);
            }
        }
    }
}

/// Answers a connection over its client's limit and closes it.
async fn refuse(mut stream: tokio::net::TcpStream) {
    use tokio::io::AsyncWriteExt;
    let body = format!(
        "this client holds {MAX_PER_CLIENT} connections to eboard already; close some and retry\n"
    );
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nRetry-After: 10\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let _ = tokio::time::timeout(Duration::from_secs(2), stream.write_all(answer.as_bytes())).await;
}

/// Serves `router` on `listener` until the process ends.
pub async fn serve(listener: TcpListener, router: axum::Router) {
    let permits = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let clients = Arc::new(Clients::default());
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .keep_alive(true);
    loop {
        let Ok(permit) = Arc::clone(&permits).acquire_owned().await else {
            return;
        };
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of file descriptors, most likely: wait for some to be
                // closed rather than spin.
                tracing::warn!("cannot accept a connection: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Some(counted) = clients.admit(peer.ip()) else {
            tokio::spawn(refuse(stream));
            continue;
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(router.clone());
        let connection = builder.serve_connection(TokioIo::new(stream), service);
        tokio::spawn(async move {
            // A client that goes away mid-request is not the daemon's error.
            let _ = connection.await;
            drop(counted);
            drop(permit);
        });
    }
}
