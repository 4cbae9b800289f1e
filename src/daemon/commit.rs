//! Group commit: the journal lines of all boards are written and made
//! durable in batches on dedicated writer threads.
//!
//! A board hands its journal and its next line to the [`Committer`] and
//! waits for them to come back. A writer thread takes every line waiting
//! (up to a batch), writes each to its board's file, makes the batch
//! durable, and answers every board: nothing is acknowledged before its
//! line is durable.
//!
//! With the data directory's commit log ([`super::commit_log`]), one writer
//! logs the whole batch and syncs the log once: one `fdatasync` per batch
//! whatever the number of boards, the journals themselves being synced at
//! checkpoints. Without one (tests of the writer alone), several writers
//! sync each file of their batch, side by side.
//!
//! No batching window is waited for: lines that arrive while a batch is
//! being synced form the next batch, so an idle daemon syncs a lone line at
//! once and a busy one syncs more lines per pass.
//!
//! The check that a journal is still the file at its path (see
//! [`Journal::check`]) is made at most once per [`CHECK_EVERY`] per file.

use std::{
    sync::{Arc, Mutex},
    thread::JoinHandle,
    time::Duration,
};

use tokio::sync::{mpsc, oneshot};

use super::{
    commit_log::{CommitLog, Logged},
    journal::{Journal, JournalError, JournalLine},
};

/// The most lines in one batch when each file is synced: a writer syncs
/// its batch's files one after the other, so a small batch keeps the wait
/// of its first line short; the writers sync their batches side by side.
pub const MAX_BATCH: usize = 64;

/// The most lines in one batch with a commit log: a line costs one
/// `write`, the batch one `fdatasync`.
pub const MAX_LOGGED_BATCH: usize = 4_096;

/// Lines waiting for a writer, at most: boards wait to hand more over
/// (back-pressure) instead of queueing without bound.
const QUEUE: usize = 16_384;

/// How many writer threads. A file system commits syncs that come in side
/// by side together, and one `fdatasync` costs about 0.1 to 1 ms on a
/// virtual disk: measured on the reference machine, two writers syncing
/// their batches file after file held the median latency at ~120 ms for
/// 2,000 boards where one sync per line in parallel held 1 ms.
const WRITERS: usize = 16;

/// How often a written journal is checked to still be at its path.
pub const CHECK_EVERY: Duration = Duration::from_secs(1);

/// What a writer gives back: the journal and whether the line counts.
pub type Committed = (Journal, Result<(), JournalError>);

struct Request {
    journal: Journal,
    text: Vec<u8>,
    reply: oneshot::Sender<Committed>,
}

/// The writers' queue; cloned into every board. The writers stop once every
/// clone is dropped and the lines queued are written.
#[derive(Debug, Clone)]
pub struct Committer {
    tx: mpsc::Sender<Request>,
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("journal", &self.journal.path())
            .finish_non_exhaustive()
    }
}

/// The writer threads, to wait for at a clean stop.
#[derive(Debug)]
pub struct Writers {
    threads: Vec<JoinHandle<()>>,
}

impl Writers {
    /// Waits until the writers have written every queued line and stopped
    /// (every [`Committer`] must have been dropped). Blocking.
    pub fn join(self) {
        for t in self.threads {
            let _ = t.join();
        }
    }
}

/// Starts the writer threads: one that owns `log` when there is one,
/// several that sync each file otherwise.
pub fn start(log: Option<CommitLog>) -> std::io::Result<(Committer, Writers)> {
    let (tx, rx) = mpsc::channel(QUEUE);
    let rx = Arc::new(Mutex::new(rx));
    let mut threads = Vec::new();
    match log {
        Some(mut log) => {
            let rx = Arc::clone(&rx);
            threads.push(
                std::thread::Builder::new()
                    .name("journal-writer".to_owned())
                    .spawn(move || {
                        writer(&rx, MAX_LOGGED_BATCH, |batch| commit(batch, Some(&mut log)));
                        // A clean stop leaves the journals synced and the
                        // log empty.
                        if let Err(e) = log.checkpoint() {
                            tracing::warn!("the journals could not be synced at the stop: {e}");
                        }
                    })?,
            );
        }
        None => {
            for i in 0..WRITERS {
                let rx = Arc::clone(&rx);
                threads.push(
                    std::thread::Builder::new()
                        .name(format!("journal-writer-{i}"))
                        .spawn(move || writer(&rx, MAX_BATCH, |batch| commit(batch, None)))?,
                );
            }
        }
    }
    Ok((Committer { tx }, Writers { threads }))
}

impl Committer {
    /// Writes and syncs `line` to `journal` with the next batch; gives the
    /// journal back with the outcome. `Err` with the journal lost only if
    /// the writers have stopped (they stop only when the daemon does).
    pub async fn append(
        &self,
        journal: Journal,
        line: &JournalLine,
    ) -> Result<Committed, JournalError> {
        let text = match journal.text(line) {
            Ok(text) => text,
            Err(e) => return Ok((journal, Err(e))),
        };
        let (reply, rx) = oneshot::channel();
        let stopped = |path: std::path::PathBuf| JournalError::Io {
            path,
            source: std::io::Error::other("the journal writers have stopped"),
        };
        let path = journal.path().to_owned();
        self.tx
            .send(Request {
                journal,
                text,
                reply,
            })
            .await
            .map_err(|e| stopped(e.0.journal.path().to_owned()))?;
        rx.await.map_err(|_| stopped(path))
    }
}

/// One writer thread: takes a batch of at most `max` lines, commits it.
fn writer(
    rx: &Mutex<mpsc::Receiver<Request>>,
    max: usize,
    mut commit: impl FnMut(&mut Vec<Request>),
) {
    let mut batch = Vec::with_capacity(max.min(MAX_BATCH));
    loop {
        {
            // One writer gathers at a time; the others sync meanwhile.
            let mut rx = rx.lock().unwrap_or_else(|e| e.into_inner());
            match rx.blocking_recv() {
                Some(first) => batch.push(first),
                None => return,
            }
            while batch.len() < max {
                match rx.try_recv() {
                    Ok(next) => batch.push(next),
                    Err(_) => break,
                }
            }
        }
        commit(&mut batch);
    }
}

/// Writes every line of the batch, makes them durable (one sync of the
/// log, or one sync per file), then answers.
fn commit(batch: &mut Vec<Request>, log: Option<&mut CommitLog>) {
    // A board has one line in flight at a time: each request is its own
    // file, and its line goes where the journal's counted bytes end.
    let offsets: Vec<u64> = batch.iter().map(|r| r.journal.len()).collect();
    let mut results: Vec<Result<(), JournalError>> = batch
        .iter_mut()
        .map(|r| {
            r.journal.write_unsynced(&r.text)?;
            if r.journal.check_due(CHECK_EVERY) {
                r.journal.check()?;
            }
            Ok(())
        })
        .collect();
    match log {
        Some(log) => {
            let lines: Vec<Logged<'_>> = batch
                .iter()
                .zip(&offsets)
                .zip(&results)
                .filter(|(_, result)| result.is_ok())
                .map(|((r, &offset), _)| Logged {
                    journal: r.journal.path(),
                    offset,
                    text: &r.text,
                })
                .collect();
            if let Err(e) = log.append(&lines) {
                for (r, result) in batch.iter().zip(results.iter_mut()) {
                    if result.is_ok() {
                        *result = Err(JournalError::Io {
                            path: r.journal.path().to_owned(),
                            source: std::io::Error::new(
                                e.kind(),
                                format!(
                                    "its line could not be logged in {}: {e}",
                                    log.path().display()
                                ),
                            ),
                        });
                    }
                }
            }
        }
        None => {
            for (r, result) in batch.iter().zip(results.iter_mut()) {
                if result.is_ok() {
                    *result = r.journal.sync_file();
                }
            }
        }
    }
    for (mut r, result) in batch.drain(..).zip(results) {
        if result.is_ok() {
            r.journal.count(r.text.len() as u64);
        }
        // A board that stopped waiting drops the journal with the answer.
        let _ = r.reply.send((r.journal, result));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::journal::Entry;

    fn line(seq: u64) -> JournalLine {
        JournalLine {
            round: None,
            seq,
            g: seq,
            at: seq * 10,
            wall: None,
            entry: Entry::Tick,
        }
    }

    /// Lines of many boards handed over at once are all on disk, in order,
    /// when their boards get their journals back; the writers stop once
    /// every queued line is written.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn every_line_acknowledged_is_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let (committer, writers) = start(None).unwrap();
        let mut boards = Vec::new();
        for b in 0..50 {
            let path = dir.path().join(format!("{b}.jsonl"));
            let journal = Journal::open(&path).unwrap().journal;
            let committer = committer.clone();
            boards.push(tokio::spawn(async move {
                let mut journal = journal;
                for seq in 1..=20 {
                    let (j, result) = committer.append(journal, &line(seq)).await.unwrap();
                    result.unwrap();
                    // Acknowledged: another reader finds it complete.
                    let on_disk = Journal::open(j.path()).unwrap().lines;
                    assert_eq!(on_disk.len() as u64, seq);
                    journal = j;
                }
                journal.len()
            }));
        }
        for b in boards {
            assert!(b.await.unwrap() > 0);
        }
        drop(committer);
        tokio::task::spawn_blocking(move || writers.join())
            .await
            .unwrap();
        for b in 0..50 {
            let lines = Journal::open(&dir.path().join(format!("{b}.jsonl")))
                .unwrap()
                .lines;
            assert_eq!(lines, (1..=20).map(line).collect::<Vec<_>>());
        }
    }

    /// A journal deleted while it is written is noticed within the check
    /// period: the line written then does not count.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_deleted_journal_fails_a_write_within_the_check_period() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("1.jsonl");
        let (committer, _writers) = start(None).unwrap();
        let mut journal = Journal::open(&path).unwrap().journal;
        let (j, result) = committer.append(journal, &line(1)).await.unwrap();
        result.unwrap();
        journal = j;
        std::fs::remove_file(&path).unwrap();
        tokio::time::sleep(CHECK_EVERY).await;
        let (j, result) = committer.append(journal, &line(2)).await.unwrap();
        let err = result.unwrap_err();
        assert!(err.to_string().contains("deleted"), "{err}");
        assert_eq!(j.len(), j.text(&line(1)).unwrap().len() as u64);
    }
}
