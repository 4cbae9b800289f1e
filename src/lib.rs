//! eboard: watches electronic chess boards, reconstructs the moves really
//! played with the FIDE meaning of *made* and *completed* moves, alerts the
//! arbiter and writes PGN.

pub mod event;
pub mod pgn;

pub use event::{BoardEvent, ClaimKind, Millis, Scan, Seconds, Sensed, TimedEvent};
