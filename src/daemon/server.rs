//! The HTTP connections: hyper's HTTP/1.1 server with a header-read timeout
//! (which also closes keep-alive connections left idle) and a cap on
//! concurrent connections, so that clients that open connections and never
//! finish a request cannot take every file descriptor of the daemon.

use std::{sync::Arc, time::Duration};

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

/// Serves `router` on `listener` until the process ends.
pub async fn serve(listener: TcpListener, router: axum::Router) {
    let permits = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .keep_alive(true);
    loop {
        let Ok(permit) = Arc::clone(&permits).acquire_owned().await else {
            return;
        };
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors, most likely: wait for some to be
                // closed rather than spin.
                tracing::warn!("cannot accept a connection: {e}");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(router.clone());
        let connection = builder.serve_connection(TokioIo::new(stream), service);
        tokio::spawn(async move {
            // A client that goes away mid-request is not the daemon's error.
            let _ = connection.await;
            drop(permit);
        });
    }
}
