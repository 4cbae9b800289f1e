//! What the unit tests share.

use std::path::PathBuf;

/// `../shared/<relative>` beside the crate, or `None` when it is absent:
/// the test says it skipped, unless it runs in CI (`CI=true`), where
/// the shared folder must be there and its absence fails the test.
pub fn shared(relative: &str) -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared")
        .join(relative);
    if path.exists() {
        return Some(path);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{} is missing: CI runs with ../shared beside the clone",
        path.display()
    );
    eprintln!("skipped: {} is absent", path.display());
    None
}

/// The standard-chess position of a FEN that must be valid and legal.
pub fn position(fen: &str) -> shakmaty::Chess {
    fen.parse::<shakmaty::fen::Fen>()
        .expect("valid FEN")
        .into_position(shakmaty::CastlingMode::Standard)
        .expect("legal position")
}
