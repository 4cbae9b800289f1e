//! Issue 14: dead positions (Art. 5.2.2) decided after every move.

use eboard::{
    analyze::parse_fen_line,
    pgn::read_games,
    quick_dead::{is_dead_quick, is_dead_quick_reference},
};
use shakmaty::{Chess, EnPassantMode, Position, fen::Fen};

use crate::util::{corpus_file, read, root};

fn fen(pos: &Chess) -> String {
    Fen::from_position(pos, EnPassantMode::Legal).to_string()
}

/// The cheap per-move test answers exactly as CHA's quick test for both
/// sides, at every ply of every game in ../shared/corpus.
#[test]
fn issue_14_quick_dead_test_matches_the_reference_at_every_corpus_ply() {
    let Some(sample) = corpus_file("lichess-sample.pgn") else {
        return;
    };
    let dir = sample.parent().unwrap().to_owned();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "pgn"))
        .collect();
    files.sort();
    files.push(root().join("pgn/edge-cases.pgn"));
    let (mut plies, mut dead) = (0, 0);
    let mut differ = Vec::new();
    for path in &files {
        let games =
            read_games(read(path).as_bytes()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for game in games {
            let mut pos = game.start.clone();
            let mut check = |pos: &Chess| {
                plies += 1;
                let reference = is_dead_quick_reference(pos);
                dead += usize::from(reference);
                if is_dead_quick(pos) != reference {
                    differ.push(format!("{}: {}", path.display(), fen(pos)));
                }
            };
            check(&pos);
            for &m in &game.moves {
                pos.play_unchecked(m);
                check(&pos);
            }
        }
    }
    assert!(plies > 28_000, "only {plies} positions");
    assert!(
        dead > 0,
        "no dead position met: the comparison proves little"
    );
    assert!(differ.is_empty(), "verdicts differ: {differ:#?}");
}

/// The same on the 1,803 labelled positions of the CHA test vectors, where
/// locked pawn chains, lone bishops and boxed-in pieces abound.
#[test]
fn issue_14_quick_dead_test_matches_the_reference_on_labelled_positions() {
    let Some(path) = corpus_file("unwinnability-test-vector.txt") else {
        return;
    };
    let text = read(&path);
    let positions: Vec<Chess> = text
        .lines()
        .filter(|line| line.len() > 3 && !line.starts_with('#'))
        .map(|line| parse_fen_line(&line[2..]).expect("labelled FEN").position)
        .collect();
    assert_eq!(positions.len(), 1803);
    let mut differ = Vec::new();
    let mut dead = 0;
    for pos in &positions {
        let reference = is_dead_quick_reference(pos);
        dead += usize::from(reference);
        if is_dead_quick(pos) != reference {
            differ.push(fen(pos));
        }
    }
    assert!(dead > 100, "only {dead} dead by the quick test");
    assert!(differ.is_empty(), "verdicts differ: {differ:#?}");
}
