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

/// The positions of random games (legal moves drawn with a fixed seed),
/// from the standard start and from Chess960 starts whose king and rooks
/// castle across other squares: many positions with castling rights, en
/// passant squares, checks and pins, for comparing a shortcut with the
/// computation it leaves out.
pub fn random_positions(seed: u64, games: usize) -> Vec<shakmaty::Chess> {
    use rand::{Rng, SeedableRng};
    use shakmaty::{CastlingMode, Chess, Position, fen::Fen};
    let starts = [
        (
            "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
            CastlingMode::Standard,
        ),
        (
            "bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN w GEge - 0 1",
            CastlingMode::Chess960,
        ),
        (
            "nrkbbqrn/pppppppp/8/8/8/8/PPPPPPPP/NRKBBQRN w GBgb - 0 1",
            CastlingMode::Chess960,
        ),
    ];
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut positions = Vec::new();
    for game in 0..games {
        let (fen, mode) = starts[game % starts.len()];
        let mut pos: Chess = fen
            .parse::<Fen>()
            .expect("valid FEN")
            .into_position(mode)
            .expect("legal position");
        for _ in 0..120 {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            positions.push(pos.clone());
            pos.play_unchecked(moves[rng.random_range(0..moves.len())]);
        }
    }
    positions
}
