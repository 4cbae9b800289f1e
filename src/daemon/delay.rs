//! The broadcast delay: what the public sees is the round as it stood
//! `delay` ago.
//!
//! Each journal line carries when it was written (`wall`). The delay folds
//! every board's lines a second time, into a second [`BoardState`] per
//! board, but only once a line is `delay` old; the public reads (the PGN,
//! `/boards`, `/events`, the dashboard without the token, the lichess push)
//! come from these states and from a hub of their own. Since the fold is
//! the same pure function of the same lines, the delayed events carry the
//! live events' ids, and a restarted daemon, folding its journals up to
//! `now − delay`, shows exactly what it showed before.
//!
//! Lines cross the delay line in their global order (`g`): a line waits for
//! every line numbered before it, so the delayed hub's ids increase as the
//! live hub's do. The players, the round's tags and the pairings come from
//! the config, so they show at once; moves show when their time comes.

use std::{
    collections::{BTreeMap, HashMap},
    sync::{Arc, Mutex, MutexGuard},
    time::Duration,
};

use super::{
    board::{BoardState, Snapshot},
    hub::{EventId, Hub, Published},
    journal::{JournalLine, wall_now},
};

/// A `delay` value that is not a duration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "broadcast delay '{0}': expected a number and a unit, s, m or h (e.g. 90s, 15m, 1h), at most 1h"
)]
pub struct DelayError(String);

/// The longest delay: lichess's relay takes at most an hour too.
pub const MAX_DELAY: Duration = Duration::from_secs(3600);

/// Reads a delay: `90s`, `15m`, `1h` (`0` alone: none).
pub fn parse_delay(text: &str) -> Result<Duration, DelayError> {
    let bad = || DelayError(text.to_owned());
    let t = text.trim();
    if t == "0" {
        return Ok(Duration::ZERO);
    }
    let unit = t.chars().last().ok_or_else(bad)?;
    let scale = match unit {
        's' => 1,
        'm' => 60,
        'h' => 3600,
        _ => return Err(bad()),
    };
    let number = &t[..t.len() - 1];
    if number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let n: u64 = number.parse().map_err(|_| bad())?;
    let d = Duration::from_secs(n.checked_mul(scale).ok_or_else(bad)?);
    if d > MAX_DELAY {
        return Err(bad());
    }
    Ok(d)
}

/// What waits for the delay line, for one board.
#[derive(Debug)]
// Nearly every item is a line: boxing it would cost an allocation each.
#[allow(clippy::large_enum_variant)]
enum Queued {
    /// A journal line.
    Line(JournalLine),
    /// The board's hall was replaced (a central): the board starts again
    /// as a new game, with this `hall_replaced` alert, when the central
    /// took it (Unix ms).
    Restart { wall: u64, message: String },
}

impl Queued {
    /// When it happened (Unix ms; a line without `wall`, from an older
    /// journal, counts as long ago).
    fn wall(&self) -> u64 {
        match self {
            Queued::Line(line) => line.wall.unwrap_or(0),
            Queued::Restart { wall, .. } => *wall,
        }
    }
}

/// What has not crossed the delay line: each global number's lines (a
/// central folds several lines under one stream message).
type Queue = BTreeMap<u64, Vec<(usize, Queued)>>;

#[derive(Debug)]
struct Inner {
    index: HashMap<u32, usize>,
    states: Vec<BoardState>,
    /// Each board's state before any line (a restarted board's).
    fresh: Vec<BoardState>,
    snapshots: Vec<Snapshot>,
    queue: Queue,
}

/// The delayed view of a round.
#[derive(Debug)]
pub struct Delay {
    delay_ms: u64,
    /// The public hub: the delayed events, with the live events' ids.
    hub: Arc<Hub>,
    /// The live hub: a line crosses only once it was published live, so
    /// that no line numbered before it can still come.
    live: Arc<Hub>,
    /// The boards ask for their analyses after each line (a hall's do; a
    /// central's only read the verdicts).
    analyses: bool,
    inner: Mutex<Inner>,
    wake: tokio::sync::Notify,
}

/// One board for [`Delay::new`]: its state before any line, and the lines
/// its journal holds.
#[derive(Debug)]
pub struct DelayedBoard {
    /// The board's state with an empty journal.
    pub fresh: BoardState,
    /// Its journal's lines.
    pub lines: Vec<JournalLine>,
}

impl Delay {
    /// The delayed view of boards whose journals hold `boards`' lines, as
    /// it stands at `now_ms` (Unix ms): every line `delay` old is folded,
    /// in global order, the others wait.
    pub fn new(
        delay: Duration,
        boards: Vec<DelayedBoard>,
        live: Arc<Hub>,
        analyses: bool,
        now_ms: u64,
    ) -> Arc<Delay> {
        let delay_ms = u64::try_from(delay.as_millis()).unwrap_or(u64::MAX);
        let mut index = HashMap::new();
        let mut states = Vec::new();
        let mut fresh = Vec::new();
        let mut queue = Queue::new();
        for (i, b) in boards.into_iter().enumerate() {
            index.insert(b.fresh.id(), i);
            fresh.push(b.fresh.clone());
            states.push(b.fresh);
            for line in b.lines {
                queue
                    .entry(line.g)
                    .or_default()
                    .push((i, Queued::Line(line)));
            }
        }
        let mut inner = Inner {
            index,
            states,
            fresh,
            snapshots: Vec::new(),
            queue,
        };
        let mut replayed = Vec::new();
        let mut max_g = 0;
        let due = |lines: &[(usize, Queued)]| is_due(lines, delay_ms, now_ms);
        while let Some(entry) = inner.queue.first_entry() {
            if !due(entry.get()) {
                break;
            }
            let (g, lines) = entry.remove_entry();
            max_g = g;
            for (k, p) in fold(&mut inner.states, &inner.fresh, &lines, analyses, None)
                .into_iter()
                .enumerate()
            {
                replayed.push(Published {
                    id: EventId {
                        g,
                        k: u32::try_from(k).unwrap_or(u32::MAX),
                    },
                    kind: p.kind,
                    data: p.data.into(),
                });
            }
        }
        inner.snapshots = inner.states.iter_mut().map(BoardState::snapshot).collect();
        Arc::new(Delay {
            delay_ms,
            hub: Hub::new(replayed, max_g, false),
            live,
            analyses,
            inner: Mutex::new(inner),
            wake: tokio::sync::Notify::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Every update leaves consistent data: keep serving after a panic.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The delay.
    pub fn delay(&self) -> Duration {
        Duration::from_millis(self.delay_ms)
    }

    /// The public hub (the delayed events).
    pub fn hub(&self) -> &Arc<Hub> {
        &self.hub
    }

    /// A line of `board` the live view applied under global number `g`:
    /// it waits for its time.
    pub fn push(&self, board: u32, g: u64, line: JournalLine) {
        self.queue(board, g, Queued::Line(line));
    }

    /// `board` started again as a new game under global number `g`, before
    /// the lines numbered `g` (a central whose hall was replaced): the
    /// public view does the same when its time comes.
    pub fn restart(&self, board: u32, g: u64, message: String) {
        let wall = wall_now();
        self.queue(board, g, Queued::Restart { wall, message });
    }

    fn queue(&self, board: u32, g: u64, item: Queued) {
        {
            let mut inner = self.lock();
            let Some(&i) = inner.index.get(&board) else {
                return;
            };
            inner.queue.entry(g).or_default().push((i, item));
        }
        self.wake.notify_one();
    }

    /// Folds and publishes every line that has crossed the delay line at
    /// `now_ms`; returns when the next one will (`None`: none waits, or
    /// the next waits for the live hub).
    pub fn release(&self, now_ms: u64) -> Option<u64> {
        let released_below = self.live.released_below();
        let mut inner = self.lock();
        let inner = &mut *inner;
        loop {
            let entry = inner.queue.first_entry()?;
            let g = *entry.key();
            if g >= released_below {
                return None;
            }
            if !is_due(entry.get(), self.delay_ms, now_ms) {
                return Some(due_at(entry.get(), self.delay_ms));
            }
            let lines = entry.remove();
            let payloads = fold(
                &mut inner.states,
                &inner.fresh,
                &lines,
                self.analyses,
                Some(&mut inner.snapshots),
            );
            // The snapshot first, as live: a client that reads it and then
            // resumes from the last id may see an event twice, never miss one.
            self.hub.publish_at(g, payloads);
        }
    }

    /// Releases the lines as their time comes, for as long as the daemon
    /// runs.
    pub fn spawn(self: &Arc<Delay>) {
        let delay = Arc::clone(self);
        tokio::spawn(async move {
            loop {
                let now = wall_now();
                let next = delay.release(now);
                // A line waiting for the live hub is published within
                // moments: look again soon.
                let wait = next.map_or(Duration::from_millis(50), |at| {
                    Duration::from_millis(at.saturating_sub(now).max(1))
                });
                tokio::select! {
                    () = tokio::time::sleep(wait) => {}
                    () = delay.wake.notified(), if next.is_none() => {}
                }
            }
        });
    }

    /// A board's delayed snapshot.
    pub fn snapshot(&self, board: u32) -> Option<Snapshot> {
        let inner = self.lock();
        let &i = inner.index.get(&board)?;
        Some(inner.snapshots[i].clone())
    }

    /// A board's delayed detail (`GET /boards/{id}`).
    pub fn detail(&self, board: u32) -> Option<serde_json::Value> {
        let inner = self.lock();
        let &i = inner.index.get(&board)?;
        Some(inner.states[i].detail())
    }
}

/// Applies a global number's lines to their boards' states in the live
/// view's steps: apply the line; if it derived events, take the snapshot
/// (into `snapshots`, or only note what it shows); then, on a hall, ask for
/// the analyses, which holds moves back from the PGN until the verdict's
/// line. The moves a snapshot showed stay shown, so the order matters.
fn fold(
    states: &mut [BoardState],
    fresh: &[BoardState],
    lines: &[(usize, Queued)],
    analyses: bool,
    mut snapshots: Option<&mut Vec<Snapshot>>,
) -> Vec<super::hub::Payload> {
    let mut out = Vec::new();
    for (i, item) in lines {
        let state = &mut states[*i];
        let payloads = match item {
            Queued::Line(line) => state.apply(line),
            Queued::Restart { message, .. } => {
                *state = fresh[*i].clone();
                state.raise_alert("hall_replaced", message.clone())
            }
        };
        if !payloads.is_empty() {
            match snapshots.as_deref_mut() {
                Some(s) => s[*i] = state.snapshot(),
                None => state.note_shown(),
            }
        }
        out.extend(payloads);
        if analyses {
            let _ = state.next_mate_check();
            while state.next_dead_check().is_some() {}
        }
    }
    out
}

/// When a global number's lines are `delay` old (a line without `wall`,
/// from an older journal, is old enough at once).
fn due_at(lines: &[(usize, Queued)], delay_ms: u64) -> u64 {
    lines
        .iter()
        .map(|(_, q)| q.wall().saturating_add(delay_ms))
        .max()
        .unwrap_or(0)
}

fn is_due(lines: &[(usize, Queued)], delay_ms: u64, now_ms: u64) -> bool {
    due_at(lines, delay_ms) <= now_ms
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_read() {
        assert_eq!(parse_delay("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_delay("15m"), Ok(Duration::from_secs(900)));
        assert_eq!(parse_delay("1h"), Ok(Duration::from_secs(3600)));
        assert_eq!(parse_delay("0"), Ok(Duration::ZERO));
        for bad in [
            "",
            "15",
            "m",
            "1.5m",
            "-1m",
            "2h",
            "15 min",
            "99999999999999999999s",
        ] {
            assert!(parse_delay(bad).is_err(), "{bad}");
        }
    }
}
