//! The integration tests: one binary, one module per area.

mod analyze;
mod cli;
mod corpus;
mod daemon;
mod dashboard;
mod dead;
mod delay;
mod faults;
mod hostile;
mod lichess;
mod nats;
mod operations;
mod pairings;
mod properties;
mod rules;
mod scripts;
mod serial;
mod util;
