//! The integration tests: one binary, one module per area.

mod corpus;
mod scripts;
mod util;
