//! What the benchmarks share.

use std::path::Path;

/// The corpus text: ../shared/corpus/lichess-sample.pgn, or the bundled
/// pgn/ games when it is absent.
pub fn corpus() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = root.join("../shared/corpus/lichess-sample.pgn");
    if let Ok(text) = std::fs::read_to_string(&shared) {
        return text;
    }
    eprintln!("note: {} is absent; using pgn/*.pgn", shared.display());
    ["pgn/opera-game.pgn", "pgn/edge-cases.pgn"]
        .iter()
        .filter_map(|p| std::fs::read_to_string(root.join(p)).ok())
        .collect::<Vec<_>>()
        .join("\n")
}
