//! `eboard analyze` and the winnability verdicts behind it.
//!
//! Expected answers come from the FIDE Laws (which material can mate) and
//! from the labels of the CHA test-vector file, never from this program.

use std::{
    io::Cursor,
    sync::atomic::{AtomicUsize, Ordering},
};

use eboard::{
    analyze::{self, AnalyzeArgs, Report},
    winnability::{self, Budget, Verdict},
};
use proptest::prelude::*;
use serde_json::Value;
use shakmaty::{
    Bitboard, CastlingMode, Chess, Color, FromSetup, Piece, Position, PositionError, Role, Setup,
    Square, fen::Fen, uci::UciMove,
};

use crate::util::corpus_file as corpus;

fn verdict(expected: bool) -> Verdict {
    if expected { Verdict::Yes } else { Verdict::No }
}

/// Replays a helpmate given in UCI and checks that it ends with `side`
/// giving mate: an independent check of what the program reports.
fn assert_mates(fen: &str, side: Color, uci: &[String]) {
    // Test vectors include composed positions with more material than a
    // game can produce; the move rules apply to them all the same.
    let mut pos: Chess = fen
        .parse::<Fen>()
        .unwrap()
        .into_position(CastlingMode::Standard)
        .or_else(PositionError::ignore_too_much_material)
        .or_else(PositionError::ignore_impossible_check)
        .unwrap();
    for text in uci {
        let m = text
            .parse::<UciMove>()
            .unwrap()
            .to_move(&pos)
            .unwrap_or_else(|_| panic!("illegal {text} in {uci:?} from {fen}"));
        pos.play_unchecked(m);
    }
    assert!(pos.is_checkmate(), "{uci:?} from {fen} does not mate");
    assert_eq!(
        pos.turn(),
        side.other(),
        "{uci:?} from {fen}: wrong side mated"
    );
}

fn check_report(report: &Report, white: bool, black: bool) {
    assert_eq!(
        report.white.verdict,
        verdict(white),
        "White, {}",
        report.fen
    );
    assert_eq!(
        report.black.verdict,
        verdict(black),
        "Black, {}",
        report.fen
    );
    let dead = if !white && !black {
        Verdict::Yes
    } else {
        Verdict::No
    };
    assert_eq!(report.dead(), dead, "dead, {}", report.fen);
    for (side, analysis) in [(Color::White, &report.white), (Color::Black, &report.black)] {
        match &analysis.helpmate {
            Some(h) => assert_mates(&report.fen, side, &h.uci),
            None => assert_ne!(analysis.verdict, Verdict::Yes),
        }
    }
}

fn analyze(fen: &str) -> Report {
    analyze::analyze_line(fen, Budget::DETERMINISTIC).expect("analysable")
}

#[test]
fn bare_kings_are_dead() {
    check_report(&analyze("8/8/4k3/8/8/3K4/8/8 w - - 0 1"), false, false);
}

#[test]
fn lone_knight_cannot_mate_a_bare_king() {
    check_report(&analyze("8/8/4k3/8/8/3K4/8/6N1 w - - 0 1"), false, false);
    check_report(&analyze("8/8/4k3/8/8/3K4/8/6N1 b - - 0 1"), false, false);
}

#[test]
fn knight_can_mate_when_the_other_side_has_a_pawn() {
    // The pawn can become a piece that blocks its own king's flight square.
    check_report(&analyze("8/8/4k3/4p3/8/3K4/8/6N1 w - - 0 1"), true, true);
}

#[test]
fn bare_king_cannot_mate_the_queen_side() {
    check_report(&analyze("8/8/4k3/8/8/3K4/8/6Q1 w - - 0 1"), true, false);
    check_report(&analyze("8/8/4k3/8/8/3K4/8/6Q1 b - - 0 1"), true, false);
}

#[test]
fn start_position_both_can_mate() {
    check_report(
        &analyze("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
        true,
        true,
    );
}

#[test]
fn same_coloured_bishops_are_dead() {
    // d6 and e3 are both dark squares.
    check_report(&analyze("8/8/3bk3/8/8/4B3/4K3/8 w - - 0 1"), false, false);
}

#[test]
fn mated_side_cannot_mate() {
    // Fool's mate: the game is over and White has been checkmated.
    let report = analyze("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3");
    check_report(&report, false, true);
}

#[test]
fn fast_test_proves_only_what_is_true() {
    let pos = |fen: &str| analyze::parse_fen_line(fen).unwrap().position;
    let kk = pos("8/8/4k3/8/8/3K4/8/8 w - - 0 1");
    assert_eq!(
        winnability::can_checkmate_fast(&kk, Color::White),
        Verdict::No
    );
    assert_eq!(
        winnability::can_checkmate_fast(&kk, Color::Black),
        Verdict::No
    );
    let kqk = pos("8/8/4k3/8/8/3K4/8/6Q1 w - - 0 1");
    assert_eq!(
        winnability::can_checkmate_fast(&kqk, Color::White),
        Verdict::Unknown
    );
    assert_eq!(
        winnability::can_checkmate_fast(&kqk, Color::Black),
        Verdict::No
    );
    assert_eq!(
        winnability::is_dead(&kk, Budget::DETERMINISTIC).unwrap(),
        Verdict::Yes
    );
    assert_eq!(
        winnability::is_dead(&kqk, Budget::DETERMINISTIC).unwrap(),
        Verdict::No
    );
}

/// Every labelled position of the CHA test vectors: `WB` both sides can
/// helpmate, `W-` only White, `-B` only Black, `--` neither.
#[test]
fn unwinnability_test_vectors() {
    let Some(path) = corpus("unwinnability-test-vector.txt") else {
        return;
    };
    let text = std::fs::read_to_string(path).unwrap();
    let cases: Vec<(bool, bool, &str)> = text
        .lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|line| {
            let (label, fen) = line.split_at(2);
            let white = match &label[..1] {
                "W" => true,
                "-" => false,
                _ => panic!("bad label in {line}"),
            };
            let black = match &label[1..] {
                "B" => true,
                "-" => false,
                _ => panic!("bad label in {line}"),
            };
            (white, black, fen.trim())
        })
        .collect();
    assert!(cases.len() > 1000, "only {} test vectors", cases.len());

    let unknown = AtomicUsize::new(0);
    let next = AtomicUsize::new(0);
    // Two workers: the set takes a while, and the machines have two cores.
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                while let Some((white, black, fen)) =
                    cases.get(next.fetch_add(1, Ordering::Relaxed))
                {
                    let report = analyze::analyze_line(fen, Budget::DETERMINISTIC)
                        .unwrap_or_else(|err| panic!("{fen}: {err}"));
                    for (side, analysis, expected) in [
                        (Color::White, &report.white, *white),
                        (Color::Black, &report.black, *black),
                    ] {
                        match analysis.verdict {
                            Verdict::Unknown => {
                                println!("unknown: {side} to mate in {fen}");
                                unknown.fetch_add(1, Ordering::Relaxed);
                            }
                            found => {
                                assert_eq!(found, verdict(expected), "{side} to mate in {fen}")
                            }
                        }
                        if let Some(h) = &analysis.helpmate {
                            assert_mates(&report.fen, side, &h.uci);
                        }
                    }
                }
            });
        }
    });
    let unknown = unknown.into_inner();
    println!(
        "test vectors: {} positions, {} side verdicts unknown (target 0)",
        cases.len(),
        unknown
    );
}

fn run(args: &AnalyzeArgs) -> (i32, String) {
    let mut out = Vec::new();
    let code = analyze::run(args, &mut out).expect("run");
    (code, String::from_utf8(out).unwrap())
}

fn fen_args(fen: &str, json: bool) -> AnalyzeArgs {
    AnalyzeArgs {
        fen: fen.split(' ').map(str::to_owned).collect(),
        json,
        ..AnalyzeArgs::default()
    }
}

const KEYS: [&str; 8] = [
    "fen",
    "white_can_mate",
    "black_can_mate",
    "dead",
    "helpmate_white",
    "helpmate_black",
    "checkmated",
    "stalemate",
];

fn assert_shape(object: &Value) {
    let map = object.as_object().expect("JSON object");
    let mut keys: Vec<&str> = map.keys().map(String::as_str).collect();
    keys.sort_unstable();
    let mut expected = KEYS.to_vec();
    expected.sort_unstable();
    assert_eq!(keys, expected);
}

#[test]
fn json_for_a_dead_position() {
    let (code, out) = run(&fen_args("8/8/4k3/8/8/3K4/8/8 w - -", true));
    assert_eq!(code, 0);
    assert_eq!(out.lines().count(), 1);
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_shape(&json);
    assert_eq!(json["fen"], "8/8/4k3/8/8/3K4/8/8 w - -");
    assert_eq!(json["white_can_mate"], false);
    assert_eq!(json["black_can_mate"], false);
    assert_eq!(json["dead"], true);
    assert!(json["helpmate_white"].is_null());
    assert!(json["helpmate_black"].is_null());
}

#[test]
fn json_with_a_helpmate() {
    let fen = "8/8/4k3/8/8/3K4/8/6Q1 b - - 0 1";
    let (code, out) = run(&fen_args(fen, true));
    assert_eq!(code, 0);
    let json: Value = serde_json::from_str(&out).unwrap();
    assert_shape(&json);
    assert_eq!(json["white_can_mate"], true);
    assert_eq!(json["black_can_mate"], false);
    assert_eq!(json["dead"], false);
    assert!(json["helpmate_black"].is_null());
    let line: Vec<String> = json["helpmate_white"]
        .as_array()
        .expect("helpmate list")
        .iter()
        .map(|m| m.as_str().expect("move string").to_owned())
        .collect();
    assert!(!line.is_empty());
    assert_mates(fen, Color::White, &line);
}

#[test]
fn human_output_names_both_sides_and_deadness() {
    let (code, out) = run(&fen_args("8/8/4k3/8/8/3K4/8/6Q1 w - - 0 1", false));
    assert_eq!(code, 0);
    assert!(out.contains("White can checkmate: yes"), "{out}");
    assert!(out.contains("Black can checkmate: no"), "{out}");
    assert!(out.contains("Dead position (FIDE 5.2.2): no"), "{out}");
    assert!(out.contains("1. "), "helpmate with move numbers: {out}");
}

#[test]
fn bad_single_fen_is_an_input_error() {
    let mut out = Vec::new();
    let err = analyze::run(&fen_args("8/8/8/8/8/8/8/8 w - -", false), &mut out).unwrap_err();
    assert_eq!(err.exit_code(), 2);
    assert!(!err.to_string().contains('\n'));
    assert!(out.is_empty());
}

#[test]
fn batch_keeps_order_and_reports_bad_lines() {
    let input = "# comment\n\
                 \n\
                 8/8/4k3/8/8/3K4/8/8 w - -\n\
                 not a fen\n\
                 8/8/4k3/8/8/3K4/8/6Q1 w - - 0 1 extra words\n\
                 8/8/4k3/8/8/3K4/8/6N1 b\n";
    let mut out = Vec::new();
    let code =
        analyze::run_batch(&mut Cursor::new(input), Budget::DETERMINISTIC, &mut out).unwrap();
    assert_eq!(code, 1);
    let lines: Vec<Value> = String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_shape(&lines[0]);
    assert_eq!(lines[0]["dead"], true);
    assert_eq!(lines[1]["line"], 4);
    assert_eq!(lines[1]["input"], "not a fen");
    assert!(lines[1]["error"].is_string());
    assert_shape(&lines[2]);
    assert_eq!(lines[2]["fen"], "8/8/4k3/8/8/3K4/8/6Q1 w - - 0 1");
    assert_eq!(lines[2]["white_can_mate"], true);
    assert_shape(&lines[3]);
    assert_eq!(lines[3]["dead"], true);
}

#[test]
fn batch_of_good_lines_exits_zero() {
    let input = "8/8/4k3/8/8/3K4/8/8 w - -\n";
    let mut out = Vec::new();
    let code =
        analyze::run_batch(&mut Cursor::new(input), Budget::DETERMINISTIC, &mut out).unwrap();
    assert_eq!(code, 0);
}

/// A legal position from arbitrary piece placement; shakmaty decides
/// legality. Castling and en passant come from the FEN fields so that the
/// bridge to the solver sees them too.
fn arbitrary_position() -> impl Strategy<Value = Chess> {
    let piece = (0usize..12).prop_map(|i| {
        let roles = [
            Role::Pawn,
            Role::Knight,
            Role::Bishop,
            Role::Rook,
            Role::Queen,
            Role::King,
        ];
        Piece {
            role: roles[i % 6],
            color: if i < 6 { Color::White } else { Color::Black },
        }
    });
    (
        prop::collection::vec((0u32..64, piece), 0..12),
        0u32..64,
        0u32..64,
        any::<bool>(),
        any::<u8>(),
        0u32..16,
    )
        .prop_filter_map(
            "illegal position",
            |(pieces, wk, bk, black, castling, ep)| {
                let mut setup = Setup::empty();
                for (sq, piece) in pieces {
                    if piece.role != Role::King {
                        setup.board.set_piece_at(Square::new(sq), piece);
                    }
                }
                setup
                    .board
                    .set_piece_at(Square::new(wk), Role::King.of(Color::White));
                setup
                    .board
                    .set_piece_at(Square::new(bk), Role::King.of(Color::Black));
                setup.turn = if black { Color::Black } else { Color::White };
                let corners = [Square::A1, Square::H1, Square::A8, Square::H8];
                setup.castling_rights = corners
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| castling & (1 << i) != 0)
                    .map(|(_, sq)| *sq)
                    .collect::<Bitboard>();
                // Ranks 3 and 6 hold the only possible en passant targets.
                if ep < 8 {
                    let rank = if black { 2 } else { 5 };
                    setup.ep_square = Some(Square::new(rank * 8 + ep));
                }
                Chess::from_setup(setup, CastlingMode::Standard)
                    .or_else(PositionError::ignore_invalid_castling_rights)
                    .or_else(PositionError::ignore_invalid_ep_square)
                    .ok()
            },
        )
}

/// A position reached by playing `choices` as indices into the legal moves.
fn played_position(choices: &[usize]) -> Chess {
    let mut pos = Chess::default();
    for choice in choices {
        let moves = pos.legal_moves();
        if moves.is_empty() {
            break;
        }
        pos.play_unchecked(moves[choice % moves.len()]);
    }
    pos
}

fn analyse_everything(pos: &Chess) {
    let budget = Budget::DETERMINISTIC;
    for side in [Color::White, Color::Black] {
        let fast = winnability::can_checkmate_fast(pos, side);
        let full = winnability::can_checkmate(pos, side, budget).expect("no analysis error");
        if fast == Verdict::No {
            assert_eq!(full.verdict, Verdict::No, "fast and full disagree");
        }
        assert_eq!(full.verdict == Verdict::Yes, full.helpmate.is_some());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn placed_positions_never_panic(pos in arbitrary_position()) {
        analyse_everything(&pos);
    }

    #[test]
    fn played_positions_never_panic(choices in prop::collection::vec(any::<usize>(), 0..200)) {
        analyse_everything(&played_position(&choices));
    }
}
