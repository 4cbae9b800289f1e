//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};

/// The crate's top directory.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared/corpus/<name>`, or `None` with a printed notice when the shared
/// folder is absent.
pub fn corpus_file(name: &str) -> Option<PathBuf> {
    let path = root().join("../shared/corpus").join(name);
    if path.exists() {
        Some(path)
    } else {
        eprintln!("skipped: {} is absent", path.display());
        None
    }
}

/// Reads a file to a string, panicking with its name.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}
