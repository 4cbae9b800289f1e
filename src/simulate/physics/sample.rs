//! What each kind of board reports of the physical timeline: square events
//! after its own debounce, or full scans at its own rhythm; piece letters
//! or occupancy only; nothing while the cable is out, then `reconnected`
//! and a dump.

use rand::Rng;
use rand_chacha::ChaCha8Rng;
use shakmaty::{Piece, Square};

use super::timeline::Squares;
use crate::event::{BoardEvent, Millis, Scan, TimedEvent};

/// How a board reports what stands on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoardKind {
    /// A lift or a put-down per square change that lasted at least the
    /// debounce (a shorter one is sometimes reported, sometimes not),
    /// reported once it has lasted the debounce.
    Events {
        /// The board's debounce in ms.
        debounce: Millis,
    },
    /// A full scan every so many ms, at a phase of its own; a scan equal
    /// to the last one reported is not sent again.
    Scans {
        /// The scan period in ms.
        every: Millis,
    },
}

/// A board: how it reports, and whether it tells pieces apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    /// Events or scans.
    pub kind: BoardKind,
    /// Piece letters (DGT, Certabo); otherwise occupancy only.
    pub identity: bool,
}

/// A stretch during which the board is unheard; at its end the board
/// reports `reconnected` and the position at that instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Outage {
    pub from: Millis,
    pub to: Millis,
}

impl Outage {
    fn covers(&self, t: Millis) -> bool {
        t >= self.from && t < self.to
    }
}

/// Samples the squares' timeline over `[from, to]` as `reading` reports
/// it, merged with `others` (presses, clock reports), leaving out what
/// falls in an outage.
pub(crate) fn sample(
    squares: &Squares,
    span: (Millis, Millis),
    others: &[TimedEvent],
    outages: &[Outage],
    reading: Reading,
    rng: &mut ChaCha8Rng,
) -> Vec<TimedEvent> {
    let mut out: Vec<TimedEvent> = match reading.kind {
        BoardKind::Events { debounce } => events(squares, reading.identity, debounce, rng),
        BoardKind::Scans { every } => scans(squares, span, reading.identity, every, outages, rng),
    };
    out.extend(others.iter().cloned());
    out.retain(|e| !outages.iter().any(|o| o.covers(e.at)));
    for o in outages {
        out.push(TimedEvent {
            at: o.to,
            event: BoardEvent::Reconnected,
        });
        out.push(TimedEvent {
            at: o.to,
            event: BoardEvent::Board(Box::new(Scan::from_board(
                &squares.board_at(o.to),
                reading.identity,
            ))),
        });
    }
    // Stable: events of one instant keep the order they were made in
    // (a lift before its put-down, `reconnected` before its dump).
    out.sort_by_key(|e| e.at);
    out
}

/// Square events after debounce.
fn events(
    squares: &Squares,
    identity: bool,
    debounce: Millis,
    rng: &mut ChaCha8Rng,
) -> Vec<TimedEvent> {
    let mut out = Vec::new();
    for sq in Square::ALL {
        let (start, changes) = squares.runs(sq);
        // The runs the board noticed: a run shorter than the debounce is
        // missed more often than not.
        let mut kept: Vec<(Millis, Option<Piece>)> = Vec::new();
        for (i, &(at, content)) in changes.iter().enumerate() {
            let lasted = changes.get(i + 1).map(|&(next, _)| next - at);
            if lasted.is_some_and(|d| d < debounce) && rng.random_bool(0.7) {
                continue;
            }
            kept.push((at, content));
        }
        let mut was = start;
        for (at, content) in kept {
            let at = at + debounce;
            match (was, content) {
                (Some(_), None) => out.push(lift(at, sq)),
                (None, Some(p)) => out.push(place(at, sq, p, identity)),
                (Some(a), Some(b)) if a != b && identity => {
                    out.push(lift(at, sq));
                    out.push(place(at, sq, b, identity));
                }
                _ => {}
            }
            was = content;
        }
    }
    out.sort_by_key(|e| e.at);
    out
}

fn lift(at: Millis, sq: Square) -> TimedEvent {
    TimedEvent {
        at,
        event: BoardEvent::Lift(sq),
    }
}

fn place(at: Millis, sq: Square, piece: Piece, identity: bool) -> TimedEvent {
    TimedEvent {
        at,
        event: BoardEvent::Place(sq, identity.then_some(piece)),
    }
}

/// Full scans at a random phase, each what stands on the board at that
/// instant, sent when it differs from the last one sent.
fn scans(
    squares: &Squares,
    (from, to): (Millis, Millis),
    identity: bool,
    every: Millis,
    outages: &[Outage],
    rng: &mut ChaCha8Rng,
) -> Vec<TimedEvent> {
    let every = every.max(1);
    let mut out = Vec::new();
    let mut last = Scan::from_board(&squares.board_at(from), identity);
    let mut t = from + rng.random_range(0..every);
    while t <= to {
        if let Some(o) = outages.iter().find(|o| o.covers(t)) {
            // The dump resets what the host last heard.
            last = Scan::from_board(&squares.board_at(o.to), identity);
        } else {
            let scan = Scan::from_board(&squares.board_at(t), identity);
            if scan != last {
                out.push(TimedEvent {
                    at: t,
                    event: BoardEvent::Board(Box::new(scan.clone())),
                });
                last = scan;
            }
        }
        // A little jitter: a scanning board's period is not a metronome.
        t += every - every / 20 + rng.random_range(0..=every / 10);
    }
    out
}
