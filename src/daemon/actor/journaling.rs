//! How a board's actor journals a line (group commit), applies it and
//! publishes what it derived, in that order.

use super::{Actor, Unwritten};
use crate::daemon::{
    hub::{Payload, Ticket},
    journal::{Entry, JournalError, JournalLine, RoundName, wall_now},
};
use crate::event::Millis;

impl Actor {
    /// Journals an entry, then applies and publishes it.
    pub(super) async fn write_apply(
        &mut self,
        entry: Entry,
        at: Millis,
        entered: std::time::Instant,
        unwritten: Unwritten,
    ) -> bool {
        match self.write(entry, at, entered, unwritten).await {
            Some((ticket, line)) => {
                let payloads = self.state.apply(&line);
                self.publish(&line, ticket, payloads);
                true
            }
            None => false,
        }
    }

    /// Appends a line and syncs it. On failure the board stops taking input
    /// until the journal works again (nothing unjournaled is ever acted
    /// on); the line is dropped or held as `unwritten` says.
    pub(super) async fn write(
        &mut self,
        entry: Entry,
        at: Millis,
        entered: std::time::Instant,
        unwritten: Unwritten,
    ) -> Option<(Ticket, JournalLine)> {
        let ticket = self.hub.reserve(entered);
        let line = JournalLine {
            round: self.first_line(self.state.seq() + 1),
            seq: self.state.seq() + 1,
            g: ticket.g(),
            at,
            wall: Some(wall_now()),
            entry,
        };
        match self.append(&line).await {
            Ok(()) => Some((ticket, line)),
            Err(e) => {
                // The number is given up: later lines are not held back.
                drop(ticket);
                self.fail(&e);
                if let (Unwritten::Hold, Some(f)) = (unwritten, &mut self.failed) {
                    f.held = Some((line.entry, line.at));
                }
                None
            }
        }
    }

    /// Appends a line with the next group commit (see [`super::commit`]).
    pub(super) async fn append(&mut self, line: &JournalLine) -> Result<(), JournalError> {
        let lost = || JournalError::Io {
            path: format!("journal of board {}", self.state.id()).into(),
            source: std::io::Error::other("the journal was lost with a failed writer"),
        };
        let journal = self.journal.take().ok_or_else(lost)?;
        let (journal, result) = self.committer.append(journal, line).await?;
        self.journal = Some(journal);
        result
    }

    /// The round's name for the journal's first line (`seq` 1), `None` on
    /// the others.
    pub(super) fn first_line(&self, seq: u64) -> Option<RoundName> {
        (seq == 1).then(|| self.round.clone())
    }

    pub(super) fn publish(&mut self, line: &JournalLine, ticket: Ticket, payloads: Vec<Payload>) {
        // Before the hub: the delay releases a line only once the hub has
        // published it, and then finds it queued.
        if let Some(delay) = &self.delay {
            delay.push(self.state.id(), line.g, line.clone());
        }
        // The snapshot first: a client that reads it and then resumes from
        // the last published id may see an event twice, never miss one.
        if !payloads.is_empty() {
            self.snapshot.send_replace(self.state.snapshot());
        }
        self.hub.publish(ticket, payloads);
    }
}
