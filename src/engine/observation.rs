//! What changed the sensors last, and so which observation model reads the
//! state (issue 34: one model per board kind, as a type).
//!
//! - *Square events* (a lift, a place) come with a settle time: the board
//!   showed every change (`square_times.rs`).
//! - A *snapshot* is a scanning board's full scan: any physical instant,
//!   states in between may have been skipped (`snapshots.rs`,
//!   `scan_evidence.rs`).
//! - A *dump* is a full scan after a reconnection, or after square-by-square
//!   reports: the position alone, after any number of plies nobody saw
//!   (`dump_watch.rs`).

use super::{BoardKind, Scanned};

/// What changed the sensors last.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum ChangedBy {
    /// A lift or a place (or nothing yet): the board reported each change.
    #[default]
    Squares,
    /// A full scan (a snapshot or a dump): states may have been skipped.
    Scan,
}

/// What the last full scan that changed the sensors was. It stays known
/// after square events: until the record has caught up past a dump, the
/// squares it showed may have changed unseen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum ScanKind {
    /// One of a scanning board's snapshots, its first of the session
    /// included: any physical instant.
    #[default]
    Snapshot,
    /// A dump: the position alone after any number of unseen plies.
    Dump,
}

/// The state of the link to the board.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Link {
    /// Connected, or its first scan after coming back was read.
    #[default]
    Up,
    /// The link came back (`reconnected`): the board's next scan is a dump.
    Back,
}

/// The observation model the engine reads the board's state under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Observation {
    changed_by: ChangedBy,
    last_scan: ScanKind,
    link: Link,
}

impl Observation {
    /// Whether a full scan (a snapshot or a dump) changed the sensors
    /// last: states may have been skipped.
    pub(super) fn scanned(&self) -> bool {
        self.changed_by == ChangedBy::Scan
    }

    /// Whether the last full scan that changed the sensors was a dump.
    pub(super) fn dumped(&self) -> bool {
        self.last_scan == ScanKind::Dump
    }

    /// Whether the link came back and the board's next scan is a dump.
    pub(super) fn reconnected(&self) -> bool {
        self.link == Link::Back
    }

    /// The link to the board came back.
    pub(super) fn link_back(&mut self) {
        self.link = Link::Back;
    }

    /// A lift or a place changed the sensors.
    pub(super) fn square_changed(&mut self) {
        self.changed_by = ChangedBy::Squares;
    }

    /// A full scan changed the sensors. It is a dump after square-by-square
    /// reports (a reconnection), and so is a scanning board's first scan
    /// after the link came back; otherwise one of a scanning board's
    /// snapshots, its first of the session included: a scanning board
    /// sends no dump but after the link came back, and its first scan is
    /// any instant. Returns whether it is a scanning board's first scan
    /// after the link came back.
    pub(super) fn scan_changed(&mut self, board: BoardKind) -> bool {
        let back = self.link == Link::Back;
        let first_after_link = back && self.scanned();
        let after_reports = !self.scanned() && board == BoardKind::Reporting;
        self.last_scan = if back || after_reports {
            ScanKind::Dump
        } else {
            ScanKind::Snapshot
        };
        self.link = Link::Up;
        self.changed_by = ChangedBy::Scan;
        first_after_link
    }

    /// A full scan showed what the sensors already showed. A scanning
    /// board's first scan shows what already stands: its next scans are
    /// snapshots, not a dump. Returns whether it counts as a snapshot.
    pub(super) fn scan_unchanged(&mut self, board: BoardKind) -> bool {
        let first = !self.scanned() && board == BoardKind::Scanning;
        if first {
            self.changed_by = ChangedBy::Scan;
        }
        first
    }

    /// How the state being read was observed. `after_dump`: square by
    /// square after a dump on occupancy, before the record has caught up
    /// with it (squares may have changed unseen, and a piece lifted looks
    /// like one taken).
    pub(super) fn kind(&self, after_dump: bool) -> Scanned {
        match (self.changed_by, self.last_scan) {
            (ChangedBy::Squares, _) if after_dump => Scanned::AfterDump,
            (ChangedBy::Squares, _) => Scanned::No,
            (ChangedBy::Scan, ScanKind::Snapshot) => Scanned::Snapshot,
            (ChangedBy::Scan, ScanKind::Dump) => Scanned::Dump,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_scan_after_square_reports_is_a_dump_and_stays_known_after_them() {
        let mut seen = Observation::default();
        assert_eq!(seen.kind(false), Scanned::No);
        // An event board's scan: a dump.
        assert!(!seen.scan_changed(BoardKind::Reporting));
        assert_eq!(seen.kind(false), Scanned::Dump);
        seen.square_changed();
        assert!(!seen.scanned() && seen.dumped());
        assert_eq!(seen.kind(true), Scanned::AfterDump);
    }

    #[test]
    fn a_scanning_board_sends_snapshots_and_a_dump_after_the_link_came_back() {
        let mut seen = Observation::default();
        assert!(seen.scan_unchanged(BoardKind::Scanning));
        assert!(!seen.scan_unchanged(BoardKind::Scanning));
        assert!(!seen.scan_changed(BoardKind::Scanning));
        assert_eq!(seen.kind(false), Scanned::Snapshot);
        seen.link_back();
        assert!(seen.reconnected());
        assert!(seen.scan_changed(BoardKind::Scanning));
        assert_eq!(seen.kind(false), Scanned::Dump);
        assert!(!seen.reconnected());
        assert!(!seen.scan_changed(BoardKind::Scanning));
        assert_eq!(seen.kind(false), Scanned::Snapshot);
    }
}
