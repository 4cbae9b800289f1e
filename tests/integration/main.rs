//! The integration tests: one binary, one module per area.

mod analyze;
mod corpus;
mod daemon;
mod properties;
mod scripts;
mod util;
