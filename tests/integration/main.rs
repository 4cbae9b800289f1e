//! The integration tests: one binary, one module per area.

mod analyze;
mod cli;
mod corpus;
mod daemon;
mod dashboard;
mod dead;
mod delay;
mod detect;
mod durability;
mod failures;
mod faults;
mod first_run;
mod hostile;
mod lichess;
mod nats;
mod operations;
mod pairings;
mod physics;
mod progress;
mod properties;
mod reference;
mod rules;
mod scripts;
mod serial;
mod sync_properties;
mod util;
