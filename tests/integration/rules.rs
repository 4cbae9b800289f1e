//! The draw counters checked against a deliberately naive computation:
//! every corpus game replayed move by move, the repetition count and the
//! half-move counter at every ply recomputed from scratch.

use eboard::{
    EngineConfig, Noise, SimOptions, pgn::read_games, replay_script, simulate, write_script,
};
use shakmaty::{Chess, EnPassantMode, Position, fen::Fen};

use crate::util::{corpus_file, read};

/// The position's identity by Art. 9.2.2, from its FEN: placement, side to
/// move, castling rights, and the en passant square only when a capture
/// there is legal.
fn naive_key(pos: &Chess) -> String {
    let fen = Fen::from_position(pos, EnPassantMode::Legal).to_string();
    fen.split(' ').take(4).collect::<Vec<_>>().join(" ")
}

#[test]
fn repetition_and_halfmove_counters_match_a_naive_count() {
    let Some(path) = corpus_file("lichess-sample.pgn") else {
        return;
    };
    let games = read_games(read(&path).as_bytes()).unwrap();
    let script = write_script(&simulate(
        &games,
        &SimOptions {
            noise: Noise::None,
            ..SimOptions::default()
        },
    ));
    let engine = replay_script("corpus", &script, EngineConfig::default()).unwrap();
    let mut checked = 0;
    for (original, game) in games.iter().zip(engine.games()) {
        assert_eq!(game.ply(), original.moves.len());
        let mut keys = vec![naive_key(&original.start)];
        let mut pos = original.start.clone();
        let mut quiet = original.start.halfmoves() as usize;
        for (i, &m) in original.moves.iter().enumerate() {
            let zeroing = m.is_capture() || m.role() == shakmaty::Role::Pawn;
            pos.play_unchecked(m);
            quiet = if zeroing { 0 } else { quiet + 1 };
            keys.push(naive_key(&pos));
            let ply = i + 1;
            let naive_reps = keys.iter().filter(|k| **k == keys[ply]).count();
            assert_eq!(
                game.repetitions_at(ply),
                naive_reps,
                "repetitions at ply {ply}"
            );
            assert_eq!(
                game.position_at(ply).unwrap().halfmoves() as usize,
                quiet,
                "half-moves at ply {ply}"
            );
            checked += 1;
        }
    }
    assert!(checked > 20_000, "{checked} plies checked");
}
