//! A board whose journal cannot be written: it records the failure, takes
//! no input, and retries until the journal works again.

use tokio::time::Instant;

use super::{Actor, JOURNAL_CHECK, RETRY_FIRST, RETRY_MAX, Unwritten};
use crate::daemon::{
    hub::Payload,
    journal::{Entry, JournalError, JournalLine, JournalState, wall_now},
};
use crate::event::Millis;

/// A board whose journal cannot be written.
pub(super) struct Failure {
    /// The last error.
    pub(super) error: String,
    /// Writes tried since it failed.
    pub(super) attempts: u32,
    /// When to try again.
    pub(super) retry_at: Instant,
    /// Lines already applied but not published, to be journaled first, in
    /// order and with their `seq` (the failure's own record among them),
    /// with what they derived: they get their global number, and their
    /// events are published, only once they are on disk, so that an event
    /// id is never given to something a crash could lose.
    pub(super) pending: Vec<(JournalLine, Vec<Payload>)>,
    /// A live board's event taken before its write failed: journaled and
    /// applied after them. The events after it wait in the reader's channel.
    pub(super) held: Option<(Entry, Millis)>,
}

impl Actor {
    /// Checks that the journal is still the file at its path, so that a
    /// journal deleted while the board is quiet is noticed before the next
    /// write.
    pub(super) fn check_journal(&mut self) {
        self.next_check = Instant::now() + JOURNAL_CHECK;
        let checked = match &self.journal {
            // Written to lately: the writer checked it.
            Some(journal) if !journal.check_due(JOURNAL_CHECK) => return,
            Some(journal) => journal.check(),
            None => return,
        };
        if let Err(e) = checked {
            self.fail(&e);
        }
    }

    /// The journal failed (`error`): the board records it, raises a
    /// `journal_failed` alert and takes no input until a retry works.
    pub(super) fn fail(&mut self, error: &JournalError) {
        let error = error.to_string();
        if let Some(f) = &mut self.failed {
            f.error = error;
            return;
        }
        tracing::error!(
            board = self.state.id(),
            "journal failed, the board waits until it can be written: {error}"
        );
        // Numbered when it is written (see `Failure::pending`).
        let record = JournalLine {
            round: self.first_line(self.state.seq() + 1),
            seq: self.state.seq() + 1,
            g: 0,
            at: self.state.last_at(),
            wall: Some(wall_now()),
            entry: Entry::Journal {
                state: JournalState::Failed,
                message: error.clone(),
            },
        };
        let payloads = self.state.apply(&record);
        // The snapshot (`/boards`) shows the failure at once; its events
        // wait for the disk.
        self.snapshot.send_replace(self.state.snapshot());
        self.failed = Some(Failure {
            error,
            attempts: 0,
            retry_at: Instant::now() + RETRY_FIRST,
            pending: vec![(record, payloads)],
            held: None,
        });
    }

    /// Tries the failed journal again: repairs it, journals what waited,
    /// records that it works, then takes the held input.
    pub(super) async fn retry(&mut self) {
        let Some(mut failure) = self.failed.take() else {
            return;
        };
        let Some(mut journal) = self.journal.take() else {
            // Lost with a panicked writer: nothing to retry with.
            failure.retry_at = Instant::now() + RETRY_MAX;
            self.failed = Some(failure);
            return;
        };
        let joined = tokio::task::spawn_blocking(move || {
            let result = journal.repair();
            (journal, result)
        })
        .await;
        let Ok((journal, repaired)) = joined else {
            failure.retry_at = Instant::now() + RETRY_MAX;
            self.failed = Some(failure);
            return;
        };
        self.journal = Some(journal);
        let written = match repaired {
            Ok(repaired) => self
                .write_pending(&mut failure)
                .await
                .map(|n| (repaired, n)),
            Err(e) => Err(e),
        };
        match written {
            Ok((repaired, written)) => {
                tracing::info!(
                    board = self.state.id(),
                    "journal restored after {} attempt(s): {repaired}",
                    failure.attempts + 1
                );
                let entry = Entry::Journal {
                    state: JournalState::Restored,
                    message: format!("{repaired}; {written} line(s) kept meanwhile were journaled"),
                };
                let at = self.state.last_at();
                let entered = std::time::Instant::now();
                let held = failure.held.take();
                if self.write_apply(entry, at, entered, Unwritten::Drop).await {
                    if let Some((entry, at)) = held {
                        self.write_apply(entry, at, entered, Unwritten::Hold).await;
                    }
                } else if let Some(f) = &mut self.failed {
                    f.held = held;
                }
            }
            Err(e) => {
                failure.error = e.to_string();
                failure.attempts += 1;
                let wait = RETRY_FIRST
                    .saturating_mul(1 << failure.attempts.min(8))
                    .min(RETRY_MAX);
                failure.retry_at = Instant::now() + wait;
                self.failed = Some(failure);
            }
        }
    }

    /// Journals the lines that waited for the journal, each numbered now
    /// and published once on disk; returns how many.
    pub(super) async fn write_pending(
        &mut self,
        failure: &mut Failure,
    ) -> Result<usize, JournalError> {
        let mut written = 0;
        while let Some((line, _)) = failure.pending.first_mut() {
            let ticket = self.hub.reserve(std::time::Instant::now());
            line.g = ticket.g();
            // Published (and so counted by the broadcast delay) from now.
            line.wall = Some(wall_now());
            let line = line.clone();
            // On failure the number is given up with the ticket.
            self.append(&line).await?;
            let (_, payloads) = failure.pending.remove(0);
            self.publish(&line, ticket, payloads);
            written += 1;
        }
        Ok(written)
    }
}
