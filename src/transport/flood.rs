//! A board that floods its port (a faulty board or cable reporting
//! thousands of changes a second) is read at a bounded rate.
//!
//! Every event a board reports costs a journal line, an engine step and a
//! broadcast; a flood of them queues more work than the board's task can
//! do, and its next real moves would wait behind it. Each read is stamped
//! when it arrives, so the times stay true; what the flood repeats is
//! merged here, in the reader, before anything is journaled: the journal
//! holds what the engine was given, and replays to the same record.
//!
//! While a board reports more than [`FLOOD_EVENTS_PER_SECOND`], its square
//! reports are merged into the change of the board's state since what was
//! last passed on, passed on at most every [`FLOOD_WINDOW_MS`]: a square
//! that ends as it was passed on is left out (a flicker), the others are
//! given as lifts, then places. States that stood less than the window
//! are lost, as the engine's settle time would lose them anyway; a move
//! stands longer. Full scans are merged into the last one, clock reports
//! into the last one; every other event (a press, a flag, a result) is
//! passed on in its place, after what was held before it. The arbiter is
//! told once per flood (`board_flooding`).

use shakmaty::Square;

use crate::event::{BoardEvent, Millis, Scan, Sensed, TimedEvent};

/// The alert raised when a board floods its port.
pub const BOARD_FLOODING: &str = "board_flooding";

/// More events than this in one second is a flood. A DGT board at its 9,600
/// baud sends at most about 190 square reports a second, and people make a
/// few; only a fault sends more.
pub const FLOOD_EVENTS_PER_SECOND: usize = 200;

/// While a board floods, what it reported is passed on at most this often
/// (milliseconds of the board's time): below the engine's settle time, so
/// a state that stands long enough to count is passed on.
pub const FLOOD_WINDOW_MS: Millis = 100;

/// A flood alert is raised again only after this long without a flood.
const ALERT_AGAIN_MS: Millis = 60_000;

/// What a square reads: `None` unknown (never reported), `Some(None)`
/// empty.
type Known = Option<Option<Sensed>>;

/// What the guard lets through after a read, and what it has to say.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Admitted {
    /// The events to pass on, in order.
    pub events: Vec<TimedEvent>,
    /// A flood began: the alert's message.
    pub alert: Option<String>,
    /// A flood ended: a line for the log.
    pub note: Option<String>,
}

/// Counts a board's events and merges them while it floods.
#[derive(Debug)]
pub struct FloodGuard {
    /// The port, named in the alert.
    port: String,
    /// The second being counted: its start and the events in it.
    second: (Millis, usize),
    /// Since when the board floods, if it does.
    flooding: Option<Millis>,
    /// Events merged away during the current flood.
    merged: u64,
    /// When the alert was last raised.
    alerted: Option<Millis>,
    /// The squares as passed on.
    passed: [Known; 64],
    /// The squares as reported, not passed on yet where they differ.
    reported: [Known; 64],
    /// A full scan held back.
    scan: Option<Scan>,
    /// A clock report held back.
    clock: Option<BoardEvent>,
    /// When held reports were last passed on.
    flushed: Millis,
}

impl FloodGuard {
    /// A guard for the board on `port`, which has reported nothing yet.
    pub fn new(port: impl Into<String>) -> FloodGuard {
        FloodGuard {
            port: port.into(),
            second: (0, 0),
            flooding: None,
            merged: 0,
            alerted: None,
            passed: [None; 64],
            reported: [None; 64],
            scan: None,
            clock: None,
            flushed: 0,
        }
    }

    /// Whether the board floods now.
    pub fn flooding(&self) -> bool {
        self.flooding.is_some()
    }

    /// The events of one read made at `at`: what to pass on now.
    pub fn admit(&mut self, at: Millis, events: Vec<TimedEvent>) -> Admitted {
        let mut out = self.poll(at);
        for ev in events {
            // What a board's log gives back after an outage is dated before
            // the read: the board's record of the past, passed on whole.
            if ev.at < at {
                self.flush(at, &mut out.events);
                self.note(&ev.event);
                out.events.push(ev);
                continue;
            }
            self.second.1 += 1;
            if self.flooding.is_none() && self.second.1 > FLOOD_EVENTS_PER_SECOND {
                self.flooding = Some(at);
                self.merged = 0;
                self.flushed = at;
                if self.alerted.is_none_or(|last| at >= last + ALERT_AGAIN_MS) {
                    self.alerted = Some(at);
                    out.alert = Some(format!(
                        "{} reports more than {FLOOD_EVENTS_PER_SECOND} changes a second: its reports are merged and passed on every {FLOOD_WINDOW_MS} ms. Check the board and its cable (a faulty sensor, a loose or damaged cable), and compare the board with the record",
                        self.port
                    ));
                }
            }
            if self.flooding.is_some() {
                self.hold(ev, &mut out.events);
            } else {
                self.note(&ev.event);
                out.events.push(ev);
            }
        }
        out
    }

    /// Time passed with or without a read (`at`, the board's time now): a
    /// second counted ends, and what was held for a window is passed on.
    pub fn poll(&mut self, at: Millis) -> Admitted {
        let mut out = Admitted::default();
        if at >= self.second.0 + 1000 {
            let calm = self.second.1 <= FLOOD_EVENTS_PER_SECOND;
            self.second = (at, 0);
            if calm && let Some(since) = self.flooding.take() {
                self.flush(at, &mut out.events);
                out.note = Some(format!(
                    "{} no longer floods: {} reports in {} s were merged",
                    self.port,
                    self.merged,
                    at.saturating_sub(since) / 1000
                ));
            }
        }
        if self.flooding.is_some() && at >= self.flushed + FLOOD_WINDOW_MS {
            self.flush(at, &mut out.events);
        }
        out
    }

    /// Keeps track of an event passed on as it is.
    fn note(&mut self, event: &BoardEvent) {
        let mut squares = self.reported;
        apply(&mut squares, event);
        self.reported = squares;
        self.passed = squares;
    }

    /// Holds an event reported during a flood, passing on what was held
    /// before it where it cannot be merged with it.
    fn hold(&mut self, ev: TimedEvent, out: &mut Vec<TimedEvent>) {
        self.merged += 1;
        match ev.event {
            BoardEvent::Lift(_) | BoardEvent::Place(..) => {
                if self.scan.is_some() {
                    self.flush(ev.at, out);
                }
                apply(&mut self.reported, &ev.event);
            }
            BoardEvent::Board(scan) => {
                if self.reported != self.passed {
                    self.flush(ev.at, out);
                }
                let mut squares = self.reported;
                apply(&mut squares, &BoardEvent::Board(scan.clone()));
                self.reported = squares;
                self.scan = Some(*scan);
            }
            BoardEvent::Clock(..) => self.clock = Some(ev.event),
            _ => {
                self.flush(ev.at, out);
                out.push(ev);
            }
        }
    }

    /// Passes on what is held, stamped `at`.
    fn flush(&mut self, at: Millis, out: &mut Vec<TimedEvent>) {
        self.flushed = at;
        let stamp = |event| TimedEvent { at, event };
        if let Some(scan) = self.scan.take() {
            // The same scan again is no news.
            if self.reported != self.passed {
                out.push(stamp(BoardEvent::Board(Box::new(scan))));
            }
        } else {
            let changed: Vec<Square> = Square::ALL
                .into_iter()
                .filter(|sq| self.reported[sq.to_usize()] != self.passed[sq.to_usize()])
                .collect();
            // Lifts first, then places: how a hand moves pieces.
            for &sq in &changed {
                let (passed, now) = (self.passed[sq.to_usize()], self.reported[sq.to_usize()]);
                if matches!(passed, Some(Some(_))) || passed.is_none() && now == Some(None) {
                    out.push(stamp(BoardEvent::Lift(sq)));
                }
            }
            for &sq in &changed {
                if let Some(Some(sensed)) = self.reported[sq.to_usize()] {
                    let piece = match sensed {
                        Sensed::Piece(piece) => Some(piece),
                        Sensed::Occupied => None,
                    };
                    out.push(stamp(BoardEvent::Place(sq, piece)));
                }
            }
        }
        self.passed = self.reported;
        if let Some(clock) = self.clock.take() {
            out.push(stamp(clock));
        }
    }
}

/// `squares` after `event`.
fn apply(squares: &mut [Known; 64], event: &BoardEvent) {
    match event {
        BoardEvent::Lift(sq) => squares[sq.to_usize()] = Some(None),
        BoardEvent::Place(sq, piece) => {
            squares[sq.to_usize()] = Some(Some(piece.map_or(Sensed::Occupied, Sensed::Piece)));
        }
        BoardEvent::Board(scan) => {
            for sq in Square::ALL {
                squares[sq.to_usize()] = Some(scan.get(sq));
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{Color, Piece, Role};

    fn at(t: Millis, event: BoardEvent) -> TimedEvent {
        TimedEvent { at: t, event }
    }

    const PAWN: Option<Piece> = Some(Piece {
        color: Color::White,
        role: Role::Pawn,
    });

    /// A flicker of h2 (lift, place) `pairs` times in one read at `t`.
    fn flicker(t: Millis, pairs: usize) -> Vec<TimedEvent> {
        (0..pairs)
            .flat_map(|_| {
                [
                    at(t, BoardEvent::Lift(Square::H2)),
                    at(t, BoardEvent::Place(Square::H2, PAWN)),
                ]
            })
            .collect()
    }

    #[test]
    fn a_few_reports_pass_as_they_are() {
        let mut guard = FloodGuard::new("/dev/ttyACM0");
        let events = flicker(1000, 3);
        let admitted = guard.admit(1000, events.clone());
        assert_eq!(admitted.events, events);
        assert_eq!(admitted.alert, None);
    }

    #[test]
    fn a_flood_is_told_once_and_its_flicker_is_merged_away() {
        let mut guard = FloodGuard::new("/dev/ttyACM0");
        let mut passed = Vec::new();
        let mut alerts = Vec::new();
        // 10,000 reports a second for two seconds, read every 10 ms.
        for t in (1000..3000).step_by(10) {
            let admitted = guard.admit(t, flicker(t, 50));
            passed.extend(admitted.events);
            alerts.extend(admitted.alert);
        }
        assert_eq!(alerts.len(), 1, "{alerts:?}");
        assert!(alerts[0].contains("/dev/ttyACM0") && alerts[0].contains("cable"));
        // Until the flood was seen, the reports passed; after, nothing
        // (h2 always ends where it was).
        assert!(
            passed.len() <= FLOOD_EVENTS_PER_SECOND + 100,
            "{}",
            passed.len()
        );
        assert!(guard.flooding());
        // A move made during the flood (e2 lifted, the pawn on e4 150 ms
        // later) passes as it stood, each part within a window, at the
        // time of a read after it.
        let mut out = Vec::new();
        for t in (3000..3400).step_by(10) {
            let mut read = flicker(t, 50);
            match t {
                3000 => read.push(at(t, BoardEvent::Lift(Square::E2))),
                3150 => read.push(at(t, BoardEvent::Place(Square::E4, PAWN))),
                _ => {}
            }
            out.extend(guard.admit(t, read).events);
        }
        let [lift, place] = out.as_slice() else {
            panic!("{out:?}");
        };
        assert_eq!(lift.event, BoardEvent::Lift(Square::E2));
        assert_eq!(place.event, BoardEvent::Place(Square::E4, PAWN));
        assert!((3000..3100).contains(&lift.at) && (3150..3250).contains(&place.at));
        // A press passes at once, after what was held before it.
        let out = guard
            .admit(
                3400,
                vec![
                    at(3400, BoardEvent::Lift(Square::D2)),
                    at(3400, BoardEvent::Press(Color::White)),
                ],
            )
            .events;
        assert_eq!(
            out,
            [
                at(3400, BoardEvent::Lift(Square::D2)),
                at(3400, BoardEvent::Press(Color::White))
            ]
        );
        // A calm second ends the flood; the board is read as it reports.
        // The second counted when the flood was last seen was not calm;
        // the one after it is.
        assert_eq!(guard.poll(4500).note, None);
        assert!(guard.flooding());
        let note = guard.poll(5600).note.expect("the flood's end is said");
        assert!(note.contains("no longer floods"), "{note}");
        assert!(!guard.flooding());
        let events = flicker(7000, 1);
        assert_eq!(guard.admit(7000, events.clone()).events, events);
    }

    #[test]
    fn the_past_a_board_gives_back_passes_whole() {
        let mut guard = FloodGuard::new("p");
        for t in (1000..2000).step_by(10) {
            guard.admit(t, flicker(t, 50));
        }
        assert!(guard.flooding());
        let log = vec![at(500, BoardEvent::Lift(Square::A2))];
        assert_eq!(guard.admit(2000, log.clone()).events, log);
    }
}
