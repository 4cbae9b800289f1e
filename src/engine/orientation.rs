//! A board turned round: set up with White's pieces on the side the board
//! numbers a8–h8, a common mistake in playing halls. Its squares are turned
//! back before anything else reads them.

use std::str::FromStr;

use shakmaty::Position;

use super::Engine;
use crate::{
    alert::AlertKind,
    event::{BoardEvent, Scan, Sensed, TimedEvent},
};

/// Which way round the board stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Orientation {
    /// As the board numbers its squares: a1 at White's left.
    #[default]
    Normal,
    /// Turned by 180°: what the board calls a1 is h8.
    Rotated,
}

impl FromStr for Orientation {
    type Err = String;

    fn from_str(s: &str) -> Result<Orientation, String> {
        match s {
            "normal" => Ok(Orientation::Normal),
            "rotated" => Ok(Orientation::Rotated),
            other => Err(format!(
                "unknown orientation '{other}': expected normal or rotated"
            )),
        }
    }
}

impl Engine {
    /// The event with the board's squares turned back when the board is
    /// turned round; first recognises a board that identifies pieces and
    /// shows the game's start position turned round (its first dump).
    pub(super) fn oriented(&mut self, ev: &TimedEvent) -> Option<TimedEvent> {
        if !self.rotated
            && let BoardEvent::Board(scan) = &ev.event
            && self.shows_start_turned(scan)
        {
            self.rotated = true;
            self.alert(
                AlertKind::BoardRotated,
                None,
                "the board is turned round (White's pieces stand where it numbers a8-h8): \
                 eboard reads it turned back; set it up the right way round between games"
                    .into(),
                None,
            );
        }
        self.rotated.then(|| TimedEvent {
            at: ev.at,
            event: ev.event.rotated(),
        })
    }

    /// Whether `scan` identifies pieces and shows, turned round, the start
    /// of a game that has no move yet (and not the start as it is).
    fn shows_start_turned(&self, scan: &Scan) -> bool {
        let identifies = scan.0.iter().any(|s| matches!(s, Some(Sensed::Piece(_))));
        if !identifies || self.game().ply() > 0 {
            return false;
        }
        let start = Scan::from_board(self.game().start().board(), true);
        *scan != start && scan.rotated() == start
    }
}
