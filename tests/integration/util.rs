//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};

/// The crate's top directory.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared/corpus/<name>`, or `None` when the shared folder is absent:
/// the test says it skipped, unless it runs in CI (`CI=true`), where the
/// shared folder must be there and its absence fails the test.
pub fn corpus_file(name: &str) -> Option<PathBuf> {
    let in_ci = std::env::var("CI").as_deref() == Ok("true");
    present_or_skip(root().join("../shared/corpus").join(name), in_ci)
}

/// `path` if it exists; otherwise a failure in CI, a notice elsewhere.
pub fn present_or_skip(path: PathBuf, in_ci: bool) -> Option<PathBuf> {
    if path.exists() {
        return Some(path);
    }
    assert!(
        !in_ci,
        "{} is missing: CI runs with ../shared beside the clone",
        path.display()
    );
    eprintln!("skipped: {} is absent", path.display());
    None
}

/// Reads a file to a string, panicking with its name.
pub fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The game's moves in SAN, as played.
pub fn sans(game: &eboard::pgn::ImportedGame) -> Vec<String> {
    let mut pos = game.start.clone();
    game.moves
        .iter()
        .map(|&m| shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string())
        .collect()
}
