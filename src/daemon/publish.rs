//! A hall node's publisher: every journal line of every board goes to the
//! broker's stream, in order, once it is on disk (the hub says which lines
//! their boards synced).
//!
//! The local journals stay the source of truth: the publisher reads them
//! (it never sees a line the board did not write and sync), so when the
//! broker is away the boards go on recording and the publisher catches up
//! from the files when it is back. Each board has a cursor, the last line
//! the broker acknowledged; on start it is read back from the stream (the
//! board's last message), so a restarted hall node resumes where the broker
//! is, with no gap. A line may be sent twice (an acknowledgement lost in an
//! outage); its message id (node, board, line) makes the broker drop the
//! second copy, and the central skips lines it already has.

use std::{
    collections::VecDeque,
    fs::File,
    io::{Read, Seek, SeekFrom},
    path::PathBuf,
    sync::Arc,
    time::Duration,
};

use async_nats::jetstream::{self, message::PublishMessage, stream::LastRawMessageErrorKind};
use bytes::Bytes;

use super::{
    hub::Hub,
    nats::{INSTANCE_HEADER, NODE_HEADER, NatsSettings},
};

/// Lines of one board read but not yet acknowledged, at most.
const QUEUE: usize = 512;
/// Lines sent before waiting for their acknowledgements, at most.
const BATCH: usize = 2048;
/// How often the journals are looked at when nothing wakes the publisher.
const POLL: Duration = Duration::from_millis(250);

/// One board's journal as the publisher follows it.
struct Tail {
    board: u32,
    subject: String,
    path: PathBuf,
    file: Option<File>,
    /// Bytes of the file read so far (complete lines only).
    offset: u64,
    /// The last line the broker acknowledged.
    published: u64,
    /// Lines read, not yet acknowledged, in order: `(seq, g, line)`.
    queued: VecDeque<(u64, u64, Bytes)>,
}

#[derive(serde::Deserialize)]
struct SeqOnly {
    seq: u64,
    #[serde(default)]
    g: u64,
}

/// For the load test: when the input of each line the broker stored (by
/// stream sequence) entered the hall node.
pub type AckProbe = Arc<std::sync::Mutex<std::collections::HashMap<u64, std::time::Instant>>>;

impl Tail {
    /// Reads the complete lines appended since the last read (up to the
    /// queue's room), up to the first whose global number is `synced` or
    /// more: that one may not be on disk yet.
    fn read(&mut self, synced: u64) -> std::io::Result<()> {
        if self.queued.len() >= QUEUE {
            return Ok(());
        }
        // A journal deleted or replaced under the daemon is written back at
        // its path (see `Journal::repair`): follow the file at the path, not
        // the old one, whose last line may be one the daemon did not count.
        if let Some(file) = &self.file
            && !super::journal::still_at_path(file, &self.path)?
        {
            self.file = None;
        }
        if self.file.is_none() {
            match File::open(&self.path) {
                Ok(f) => self.file = Some(f),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        let Some(file) = self.file.as_mut() else {
            return Ok(());
        };
        if file.metadata()?.len() <= self.offset {
            return Ok(());
        }
        file.seek(SeekFrom::Start(self.offset))?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)?;
        let mut start = 0;
        while let Some(nl) = bytes[start..].iter().position(|&b| b == b'\n') {
            if self.queued.len() >= QUEUE {
                break;
            }
            let line = &bytes[start..start + nl];
            let parsed = serde_json::from_slice::<SeqOnly>(line);
            // What is published must survive a power cut on this PC too.
            if parsed.as_ref().is_ok_and(|l| l.g >= synced) {
                break;
            }
            start += nl + 1;
            self.offset += nl as u64 + 1;
            match parsed {
                Ok(l) if l.seq > self.published => {
                    let last = self.queued.back().map_or(self.published, |q| q.0);
                    if l.seq > last {
                        self.queued
                            .push_back((l.seq, l.g, Bytes::copy_from_slice(line)));
                    }
                }
                Ok(_) => {}
                Err(e) => tracing::error!(
                    board = self.board,
                    "{}: a line the publisher cannot read ({e}); it is not published",
                    self.path.display()
                ),
            }
        }
        Ok(())
    }
}

/// Starts publishing the journals (`(board, path)`) on the current tokio
/// runtime; `hub` wakes the publisher when a board wrote something.
pub fn spawn(
    settings: NatsSettings,
    journals: Vec<(u32, PathBuf)>,
    hub: Arc<Hub>,
    probe: Option<AckProbe>,
) -> tokio::task::JoinHandle<()> {
    let (finish, finishing) = tokio::sync::watch::channel(false);
    // Never set: this publisher runs as long as the runtime.
    std::mem::forget(finish);
    spawn_until(settings, journals, hub, probe, finishing)
}

/// [`spawn`], ending once `finish` is set and every line the boards
/// synced by then is acknowledged by the broker: a hall stopping cleanly
/// publishes its last lines before it exits (set `finish` after the boards
/// have stopped, and bound the wait: the broker may be away).
pub fn spawn_until(
    settings: NatsSettings,
    journals: Vec<(u32, PathBuf)>,
    hub: Arc<Hub>,
    probe: Option<AckProbe>,
    finish: tokio::sync::watch::Receiver<bool>,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        if let Err(e) = run(settings, journals, hub, probe, finish).await {
            tracing::error!("publishing stopped: {e}");
        }
    })
}

async fn run(
    settings: NatsSettings,
    journals: Vec<(u32, PathBuf)>,
    hub: Arc<Hub>,
    probe: Option<AckProbe>,
    mut finish: tokio::sync::watch::Receiver<bool>,
) -> Result<(), super::DaemonError> {
    let client = settings.connect().await?;
    let js = jetstream::new(client);
    let mut tails: Vec<Tail> = journals
        .into_iter()
        .map(|(board, path)| Tail {
            board,
            subject: settings.board_subject(board),
            path,
            file: None,
            offset: 0,
            published: 0,
            queued: VecDeque::new(),
        })
        .collect();
    let mut wake = hub.subscribe(None).live;
    // Set when the cursors must be read from the stream: at start and after
    // an outage (the broker may have come back without its store).
    let mut failing = true;
    let mut warned = false;
    loop {
        if failing {
            if let Err(e) = cursors(&settings, &js, &mut tails).await {
                if !warned {
                    tracing::warn!(
                        "NATS {}: cannot reach the stream ({e}); recording goes on, the journals are published when it answers",
                        settings.url
                    );
                    warned = true;
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
            tracing::info!(
                node = settings.node,
                stream = settings.stream,
                boards = tails.len(),
                "publishing to NATS {}",
                settings.url
            );
            failing = false;
            warned = false;
        }
        // Every line numbered below this was synced (or given up) by its board.
        let synced = hub.released_below();
        tails = tokio::task::spawn_blocking(move || {
            for t in &mut tails {
                if let Err(e) = t.read(synced) {
                    tracing::error!(board = t.board, "{}: {e}", t.path.display());
                }
            }
            tails
        })
        .await
        .map_err(|e| super::DaemonError::Usage(format!("publisher: {e}")))?;
        let waiting: usize = tails.iter().map(|t| t.queued.len()).sum();
        if waiting == 0 {
            // Read after the stop: nothing is left to publish.
            if *finish.borrow() {
                return Ok(());
            }
            tokio::select! {
                _ = wake.recv() => {}
                _ = finish.changed() => {}
                () = tokio::time::sleep(POLL) => {}
            }
            continue;
        }
        let probe = probe.as_ref().map(|p| (p, &*hub));
        if let Err(e) = send(&settings, &js, &mut tails, probe).await {
            tracing::warn!(
                "NATS {}: cannot publish ({e}); recording goes on, the journals are published when the broker is back",
                settings.url
            );
            failing = true;
            warned = true;
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
}

/// Reads each board's cursor back from the stream (its last line there, if
/// this node sent it): where publishing resumes after a start or an outage.
async fn cursors(
    settings: &NatsSettings,
    js: &jetstream::Context,
    tails: &mut [Tail],
) -> Result<(), String> {
    let stream = settings.stream(js).await?;
    for t in tails.iter_mut() {
        match stream.get_last_raw_message_by_subject(&t.subject).await {
            Ok(msg) => {
                // A message of the same node from another instance is a
                // replaced hall's: this one publishes its journals from
                // their first line (the central starts them as new games).
                let instance = msg.headers.get(INSTANCE_HEADER).map(|v| v.as_str());
                let ours = msg
                    .headers
                    .get(NODE_HEADER)
                    .is_some_and(|v| v.as_str() == settings.node)
                    && (instance.is_none() || instance == settings.instance.as_deref());
                let seq = serde_json::from_slice::<SeqOnly>(&msg.payload)
                    .map(|l| l.seq)
                    .unwrap_or(0);
                t.published = if ours { seq } else { 0 };
            }
            Err(e) if e.kind() == LastRawMessageErrorKind::NoMessageFound => t.published = 0,
            Err(e) => return Err(format!("board {}: {e}", t.board)),
        }
        // Read the journal again from its start: the lines after the
        // cursor are queued, whatever was queued before.
        t.offset = 0;
        t.queued.clear();
    }
    Ok(())
}

/// Sends the queued lines and waits for the broker's acknowledgements;
/// a board's cursor moves over the lines acknowledged without a gap.
async fn send(
    settings: &NatsSettings,
    js: &jetstream::Context,
    tails: &mut [Tail],
    probe: Option<(&AckProbe, &Hub)>,
) -> Result<(), String> {
    let mut sent = Vec::new();
    let mut first_error = None;
    'boards: for (i, t) in tails.iter().enumerate() {
        for (seq, g, line) in &t.queued {
            if sent.len() >= BATCH {
                break 'boards;
            }
            let message = PublishMessage::build()
                .payload(line.clone())
                .message_id(settings.line_id(t.board, *seq))
                .header(NODE_HEADER, settings.node.as_str());
            let message = match &settings.instance {
                Some(instance) => message.header(INSTANCE_HEADER, instance.as_str()),
                None => message,
            };
            let attempt = tokio::time::timeout(
                Duration::from_secs(5),
                js.send_publish(t.subject.clone(), message),
            )
            .await;
            match attempt {
                Ok(Ok(ack)) => sent.push((i, *seq, *g, ack)),
                Ok(Err(e)) => {
                    first_error.get_or_insert(e.to_string());
                    break 'boards;
                }
                Err(_) => {
                    first_error.get_or_insert("timed out".to_owned());
                    break 'boards;
                }
            }
        }
    }
    let mut broken = vec![false; tails.len()];
    for (i, seq, g, ack) in sent {
        let result = ack.await;
        let t = &mut tails[i];
        match result {
            Ok(ack) if !broken[i] && t.queued.front().is_some_and(|q| q.0 == seq) => {
                t.queued.pop_front();
                t.published = seq;
                if let Some((probe, hub)) = probe
                    && let Some(entered) = hub.entered(g)
                {
                    probe
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .insert(ack.sequence, entered);
                }
            }
            Ok(_) => {}
            Err(e) => {
                broken[i] = true;
                first_error.get_or_insert(e.to_string());
            }
        }
    }
    match first_error {
        None => Ok(()),
        Some(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write as _;

    use super::*;

    fn tail(path: PathBuf, published: u64) -> Tail {
        Tail {
            board: 1,
            subject: "EBOARD.board.1".into(),
            path,
            file: None,
            offset: 0,
            published,
            queued: VecDeque::new(),
        }
    }

    fn seqs(t: &Tail) -> Vec<u64> {
        t.queued.iter().map(|q| q.0).collect()
    }

    #[test]
    fn reads_complete_lines_after_the_cursor_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1.jsonl");
        let mut t = tail(path.clone(), 1);
        // No journal yet: nothing to read, no error.
        t.read(u64::MAX).unwrap();
        assert!(t.queued.is_empty());
        let mut f = File::create(&path).unwrap();
        write!(
            f,
            "{{\"seq\":1,\"g\":1,\"at\":0,\"type\":\"tick\"}}\n{{\"seq\":2,\"g\":3,\"at\":5,\"type\":\"tick\"}}\n{{\"seq\":3,\"g\""
        )
        .unwrap();
        t.read(u64::MAX).unwrap();
        // Line 1 is published already; line 3 is not complete yet.
        assert_eq!(seqs(&t), [2]);
        assert_eq!(
            &t.queued[0].2[..],
            br#"{"seq":2,"g":3,"at":5,"type":"tick"}"#
        );
        writeln!(f, ":4,\"at\":6,\"type\":\"tick\"}}").unwrap();
        t.read(u64::MAX).unwrap();
        assert_eq!(seqs(&t), [2, 3]);
        // Reading again finds nothing new.
        t.read(u64::MAX).unwrap();
        assert_eq!(seqs(&t), [2, 3]);
        // A line its board has not synced yet waits.
        writeln!(f, "{{\"seq\":4,\"g\":9,\"at\":7,\"type\":\"tick\"}}").unwrap();
        t.read(9).unwrap();
        assert_eq!(seqs(&t), [2, 3]);
        t.read(10).unwrap();
        assert_eq!(seqs(&t), [2, 3, 4]);
    }

    /// Issue 11: a journal deleted under the daemon and written back at
    /// its path: the publisher follows the file at the path, so a line left
    /// in the deleted file only (one the daemon did not count) is never
    /// published, and the lines written after the repair are.
    #[test]
    fn follows_a_journal_written_back_at_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1.jsonl");
        let line = |seq: u64, kind: &str| {
            format!("{{\"seq\":{seq},\"g\":{seq},\"at\":0,\"type\":\"{kind}\"}}\n")
        };
        let mut f = File::create(&path).unwrap();
        write!(f, "{}", line(1, "tick")).unwrap();
        let mut t = tail(path.clone(), 0);
        t.read(u64::MAX).unwrap();
        assert_eq!(seqs(&t), [1]);
        std::fs::remove_file(&path).unwrap();
        write!(f, "{}", line(2, "draw")).unwrap();
        t.read(u64::MAX).unwrap();
        assert_eq!(seqs(&t), [1], "nothing read from the deleted file");
        std::fs::write(&path, line(1, "tick") + &line(2, "tick")).unwrap();
        t.read(u64::MAX).unwrap();
        assert_eq!(seqs(&t), [1, 2]);
        assert!(
            t.queued[1].2.ends_with(b"\"tick\"}"),
            "the line at the path"
        );
    }

    #[test]
    fn the_queue_is_bounded_and_the_rest_stays_in_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1.jsonl");
        let mut f = File::create(&path).unwrap();
        let n = QUEUE as u64 + 10;
        for seq in 1..=n {
            writeln!(
                f,
                "{{\"seq\":{seq},\"g\":{seq},\"at\":0,\"type\":\"tick\"}}"
            )
            .unwrap();
        }
        let mut t = tail(path, 0);
        t.read(u64::MAX).unwrap();
        assert_eq!(t.queued.len(), QUEUE);
        // The broker acknowledged the first half: the rest comes next.
        for _ in 0..QUEUE / 2 {
            t.published = t.queued.pop_front().unwrap().0;
        }
        t.read(u64::MAX).unwrap();
        let got = seqs(&t);
        assert_eq!(got.first(), Some(&(QUEUE as u64 / 2 + 1)));
        assert_eq!(got.last(), Some(&n));
        assert!(got.windows(2).all(|w| w[1] == w[0] + 1));
    }
}
