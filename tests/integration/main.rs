//! The integration tests: one binary, one module per area.

mod analyze;
mod corpus;
mod properties;
mod scripts;
mod serial;
mod util;
