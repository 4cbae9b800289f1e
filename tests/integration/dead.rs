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

/// Issue 14: a flag fall whose verdict takes the full analysis seconds
/// does not hold up another board. Board 1 is set up in a position of the
/// CHA test vectors labelled "WB" (Black can still mate) whose analysis for
/// Black takes seconds, and White flags at once; board 2 plays 1. e4 just
/// after (60 ms). Board 2's move must be published (event and broadcast PGN) while
/// board 1 still waits for its verdict; then board 1's result comes: a loss
/// for White (Art. 6.9), as the label says Black can mate.
#[test]
fn issue_14_a_slow_flag_fall_verdict_does_not_hold_up_another_board() {
    use std::time::{Duration, Instant};

    use crate::daemon::{Daemon, SseReader, run_args};

    let dir = tempfile::tempdir().unwrap();
    let slow = dir.path().join("slow.board");
    std::fs::write(
        &slow,
        "@0 setup k1b5/1p1p4/1P1Pb3/B7/8/8/8/K7 w - - 0 1\n@500 flag white\n",
    )
    .unwrap();
    let quick = dir.path().join("quick.board");
    std::fs::write(
        &quick,
        "@510 lift e2\n@540 place e4 P\n@560 press white\n@580 clock 0:04:58 0:05:00\n",
    )
    .unwrap();
    let config = dir.path().join("event.toml");
    std::fs::write(
        &config,
        format!(
            "event = \"Slow Verdict Cup\"\n[[board]]\nid = 1\nsource = \"script:{}\"\nwhite = {{ name = \"A\" }}\nblack = {{ name = \"B\" }}\n\n[[board]]\nid = 2\nsource = \"script:{}\"\nwhite = {{ name = \"C\" }}\nblack = {{ name = \"D\" }}\n",
            slow.display(),
            quick.display()
        ),
    )
    .unwrap();
    let data = dir.path().join("data");
    let d = Daemon::start(&run_args(&config, &data, "1"));
    let mut sse = SseReader::open(&d.addr, Some("0"));
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut next = || sse.next(deadline).expect("events stopped");

    // Board 2's move, completed, before any result of board 1.
    loop {
        let e = next();
        let board = e.data["board"].as_u64();
        assert!(
            !(board == Some(1) && e.kind == "result"),
            "board 1's result came before board 2's move: {e:?}"
        );
        if board == Some(2) && e.kind == "completed" {
            break;
        }
    }
    let pgn = d.get("/round.pgn").body;
    let games = eboard::pgn::read_games(pgn.as_bytes()).unwrap();
    assert_eq!(games.len(), 2, "{pgn}");
    assert_eq!(
        games[1].moves.len(),
        1,
        "board 2's e4 is in the broadcast: {pgn}"
    );
    assert_eq!(
        games[0].result,
        shakmaty::Outcome::Unknown,
        "board 1 still waits for its verdict: {pgn}"
    );

    // Then board 1's verdict.
    let result = loop {
        let e = next();
        if e.data["board"].as_u64() == Some(1) && e.kind == "result" {
            break e;
        }
    };
    assert_eq!(result.data["result"], "0-1", "{result:?}");
    assert_eq!(result.data["termination"], "time_forfeit", "{result:?}");
}
