//! eboard: watches electronic chess boards, reconstructs the moves really
//! played with the FIDE meaning of *made* and *completed* moves, alerts the
//! arbiter and writes PGN.
//!
//! The pieces, in the order data flows through them: [`event`] (what a board
//! reports), [`script`] (the board-script text form of events), [`engine`]
//! (the pure reconstruction engine, with [`sensed`] and [`matcher`]), [`game`]
//! and [`alert`] (what it records), [`pgn`] (the PGN writer and reader),
//! [`simulate`](mod@simulate) (board sessions made from PGN games, for tests), [`replay`]
//! (a whole script through the engine), [`daemon`] (many boards, journals,
//! live PGN and the arbiters' dashboard). Real boards: [`protocol`] (the byte
//! codecs), [`transport`] (serial ports, live reading, captures) and
//! [`virtual_board`] (a board on a pseudo-terminal, for tests and demos).

pub mod alert;
pub mod analyze;
pub mod cli;
pub mod daemon;
pub mod engine;
pub mod event;
pub mod failsafe;
pub mod files;
pub mod game;
pub mod init;
pub mod legal;
pub mod matcher;
pub mod pairings;
pub mod pgn;
pub mod progress;
pub mod protocol;
pub mod quick_dead;
pub mod replay;
pub mod results;
pub mod resync;
pub(crate) mod revision;
pub mod rules;
pub mod script;
pub mod sensed;
pub mod simulate;
pub mod transport;
pub mod verdict;
pub mod virtual_board;
pub mod winnability;

pub use alert::{Alert, AlertKind};
pub use engine::{Engine, EngineConfig, EngineError, GameEvent, Orientation};
pub use event::{BoardEvent, ClaimKind, Millis, Scan, Seconds, Sensed, TimedEvent};
pub use game::{Game, RecordedMove, Termination};
pub use replay::{GameReport, ReplayError, game_reports, replay_script};
pub use resync::{Limits, Resync, SyncState, Target, resync};
pub use rules::RuleSet;
pub use script::{ScriptError, parse_script, write_script};
pub use sensed::SensedBoard;
pub use simulate::{Hostile, Noise, SimOptions, simulate};

#[cfg(test)]
mod test_support;
