//! Issue 10: the lichess sample played on every kind of board the simulator
//! makes (scan-only boards, blips, slow hands, outages, boards turned
//! round), with and without identity and clock, counting per style the
//! games recorded exactly, the games with a wrong move and the plies
//! missing.
//!
//! The table below is a ratchet: the engine must do at least this well.
//! Whoever improves the engine tightens it (the test prints the numbers it
//! measured). A wrong move is worse than a late one, so where the table
//! allows none, none may appear. By default every 20th game is played (the
//! suite runs in debug builds), each on the same stream as in the full
//! table, so `styles --why` names the same games by the same numbers;
//! `EBOARD_CORPUS_FULL=1` plays all 438, for
//! which the table does not apply, and only the absence of new wrong moves
//! is checked. `cargo run --release --example styles` prints the full table.

use eboard::{
    pgn::read_games,
    replay::reported_games,
    replay_script,
    simulate::{STYLES, Variant, measure_every, session, table},
};

use crate::util::{corpus_file, read, sans};

/// style, identity, clock: at least this many games exact of 22, at most
/// this many with a wrong move, at most this many plies missing of 1151,
/// at most this many games with a false alarm.
const EXPECTED: &[(&str, bool, bool, usize, usize, usize, usize)] = &[
    ("clean", true, true, 22, 0, 0, 0),
    ("clean", true, false, 22, 0, 0, 0),
    ("clean", false, true, 22, 0, 0, 0),
    ("clean", false, false, 22, 0, 0, 0),
    ("human", true, true, 22, 0, 0, 0),
    ("human", true, false, 22, 0, 0, 0),
    ("human", false, true, 22, 0, 0, 0),
    ("human", false, false, 22, 0, 0, 0),
    ("rough", true, true, 22, 0, 0, 0),
    ("rough", true, false, 22, 0, 0, 0),
    ("rough", false, true, 22, 0, 0, 0),
    ("rough", false, false, 22, 0, 0, 0),
    ("scan-250", true, true, 22, 0, 0, 0),
    ("scan-250", true, false, 22, 0, 0, 0),
    ("scan-250", false, true, 22, 0, 0, 0),
    ("scan-250", false, false, 22, 0, 0, 0),
    ("scan-1000", true, true, 22, 0, 0, 0),
    ("scan-1000", true, false, 22, 0, 0, 0),
    ("scan-1000", false, true, 22, 0, 0, 0),
    ("scan-1000", false, false, 22, 0, 0, 0),
    ("blips", true, true, 22, 0, 0, 0),
    ("blips", true, false, 22, 0, 0, 0),
    ("blips", false, true, 22, 0, 0, 0),
    ("blips", false, false, 22, 0, 0, 0),
    ("slow-hands", true, true, 22, 0, 0, 0),
    ("slow-hands", true, false, 22, 0, 0, 0),
    ("slow-hands", false, true, 22, 0, 0, 0),
    ("slow-hands", false, false, 22, 0, 0, 0),
    ("outages", true, true, 22, 0, 0, 0),
    ("outages", true, false, 22, 0, 0, 0),
    ("outages", false, true, 22, 0, 0, 0),
    ("outages", false, false, 22, 0, 0, 0),
    ("rotated", true, true, 22, 0, 0, 0),
    ("rotated", true, false, 22, 0, 0, 0),
    ("rotated", false, true, 22, 0, 0, 0),
    ("rotated", false, false, 22, 0, 0, 0),
    ("hostile", true, true, 22, 0, 0, 0),
    ("hostile", true, false, 22, 0, 0, 0),
    ("hostile", false, true, 22, 0, 0, 0),
    ("hostile", false, false, 22, 0, 0, 0),
];

/// Every 20th game, or all of them with `EBOARD_CORPUS_FULL=1`.
fn every() -> usize {
    if std::env::var_os("EBOARD_CORPUS_FULL").is_some_and(|v| v == "1") {
        1
    } else {
        20
    }
}

#[test]
fn issue10_every_style_counts_exact_wrong_and_missing() {
    let Some(path) = corpus_file("lichess-sample.pgn") else {
        return;
    };
    let every = every();
    let games = read_games(read(&path).as_bytes()).unwrap();
    let mut rows = Vec::new();
    let mut regressions = Vec::new();
    for style in STYLES {
        for variant in Variant::ALL {
            let tally = measure_every(&games, every, style, variant, 1);
            let expected = EXPECTED
                .iter()
                .find(|e| (e.0, e.1, e.2) == (style.name, variant.identity, variant.clock))
                .unwrap_or_else(|| panic!("no expected numbers for {} {variant:?}", style.name));
            let (_, _, _, exact, wrong, missing, alarms) = *expected;
            let worse = if every == 1 {
                wrong == 0 && tally.wrong > 0
            } else {
                tally.exact < exact
                    || tally.wrong > wrong
                    || tally.missing > missing
                    || tally.false_alarms > alarms
            };
            if worse {
                regressions.push(format!(
                    "{} ({}): {tally:?}, expected at least {exact} exact, at most {wrong} wrong, \
                     {missing} missing, {alarms} with a false alarm",
                    style.name,
                    variant.label()
                ));
            }
            rows.push((*style, variant, tally));
        }
    }
    eprintln!("{}", table(&rows));
    assert!(
        regressions.is_empty(),
        "worse than before:\n{}",
        regressions.join("\n")
    );
}

/// Corpus game `index` played in `style` on `variant`'s board (the
/// session the styles table makes for it at position `at` of its games),
/// with the game's moves; `None` without the corpus.
fn replayed(
    index: usize,
    style: &str,
    variant: Variant,
    at: usize,
) -> Option<(eboard::Game, Vec<String>)> {
    let path = corpus_file("lichess-sample.pgn")?;
    let games = read_games(read(&path).as_bytes()).unwrap();
    let game = &games[index];
    let style = STYLES.iter().find(|s| s.name == style).unwrap();
    let script = session(game, style, variant, 1, at);
    let name = format!("{}-{index}", style.name);
    let engine = replay_script(&name, &script, style.engine(variant)).unwrap();
    Some((reported_games(&engine)[0].clone(), sans(game)))
}

/// The board of most corpus regressions: occupancy only, with a clock.
const OCCUPANCY_CLOCK: Variant = Variant {
    identity: false,
    clock: true,
};

/// A board that only senses occupancy, with no clock.
const OCCUPANCY_NO_CLOCK: Variant = Variant {
    identity: false,
    clock: false,
};

/// A board that identifies pieces, with a clock.
const IDENTITY_CLOCK: Variant = Variant {
    identity: true,
    clock: true,
};

/// A board that identifies pieces, with no clock.
const IDENTITY_NO_CLOCK: Variant = Variant {
    identity: true,
    clock: false,
};

/// The kinds of `game`'s alerts, in order.
fn alert_kinds(game: &eboard::Game) -> Vec<&str> {
    game.alerts.iter().map(|a| a.kind.as_str()).collect()
}

/// Replays corpus game `index` in `style` on `variant` and checks that
/// every move of it was read, none that was not played.
fn assert_read_to_end(index: usize, style: &str, variant: Variant) {
    if let Some((game, played)) = replayed(index, style, variant, index) {
        assert_played(&game, &played, played.len());
    }
}

/// As [`assert_read_to_end`], and checks that no alert of `kind` was
/// raised.
fn assert_read_to_end_with_no(index: usize, style: &str, variant: Variant, kind: &str) {
    if let Some((game, played)) = replayed(index, style, variant, index) {
        assert_played(&game, &played, played.len());
        assert!(!alert_kinds(&game).contains(&kind), "{kind} raised");
    }
}

/// Checks that `game` recorded at least `plies` moves, all of them the
/// moves `played`.
fn assert_played(game: &eboard::Game, played: &[String], plies: usize) {
    let got: Vec<String> = game.moves().iter().map(|m| m.san.to_string()).collect();
    assert!(got.len() >= plies, "only {} plies read", got.len());
    assert_eq!(
        got[..],
        played[..got.len()],
        "a move not played was recorded"
    );
}

/// Issue 10, a wrong move found on the whole sample: a scanning board that
/// identifies pieces ran three moves ahead (22.Nxd6+ Kf6 23.Ne4+, listed
/// for the arbiter), then a scan showed 23...Kf5 with the knight already
/// lifted for 24.Ng3+; read from the record as "24.Ng3+ with Black's hand
/// on d6", that move was recorded although the listed line says otherwise.
/// Whatever the engine records of this game must be the game's own moves.
#[test]
fn regression_10_no_move_then_hand_read_past_listed_candidates() {
    let Some((game, played)) = replayed(198, "hostile", IDENTITY_CLOCK, 198) else {
        return;
    };
    assert_played(&game, &played, 41);
}

/// Issue 10, a false alarm found on the sample: a board that only senses
/// occupancy, scanning every second, showed a move only after both
/// players had pressed their clocks (the record a move behind). The
/// mover's press, read with his move, was then taken for a press made
/// before the move, and his next press for a second one: Art. 7.5.3 was
/// applied against a player who pressed once per move.
#[test]
fn regression_10_a_press_read_late_is_not_a_press_without_a_move() {
    let Some((game, _)) = replayed(20, "scan-1000", OCCUPANCY_CLOCK, 1) else {
        return;
    };
    let kinds = alert_kinds(&game);
    assert!(!kinds.contains(&"clock_without_move"), "alerts {kinds:?}");
    assert!(game.moves().len() > 30);
}

/// Issue 10, a wrong move found on the whole sample: a board that only
/// senses occupancy, scanning every second, missed 21...Bh5 standing; the
/// next scan caught White's hand lifting the bishop from h5 for 22.Rxh5,
/// which empties only g4, as 21...Bxh3 would. That capture was recorded
/// (Black had pressed his clock, so his own hand was ruled out), then
/// 22.Rxh5 raised a false illegal move. Both readings must now wait for
/// the next scan, which tells them apart.
#[test]
fn regression_10_a_move_then_the_opponents_hand_not_read_as_a_capture() {
    let Some((game, played)) = replayed(229, "scan-1000", OCCUPANCY_CLOCK, 229) else {
        return;
    };
    assert_played(&game, &played, 44);
}

/// Issue 10, a false alarm found on the sample: on a board that only
/// senses occupancy, scanning every second, the squares' histories read
/// the state after 26...cxd5 as several possible single moves, and that
/// answer was taken before the snapshots were: the record waited for good,
/// and White's next press was called an illegal move (a bishop from g2
/// to h3, read off a board three plies ahead). The snapshots now weigh
/// those moves too.
#[test]
fn regression_10_several_moves_by_the_squares_are_weighed_by_the_snapshots() {
    let Some((game, played)) = replayed(102, "scan-1000", OCCUPANCY_CLOCK, 102) else {
        return;
    };
    let kinds = alert_kinds(&game);
    assert!(!kinds.contains(&"illegal_move"), "alerts {kinds:?}");
    assert_played(&game, &played, 41);
}

/// Issue 10, a game lost for good on the whole sample: after 10.dxe5, a
/// scanning board that only senses occupancy showed 10...Nxe5 11.Nd4
/// Qh4+, which leaves the same squares, through the same snapshots, as
/// 10...Nd4 11.Nxd4 Qh4+. Both were listed, but once the board was three
/// moves past the record nothing more was read. The candidates are
/// followed on until the board tells them apart, and the game is recorded
/// to its end.
#[test]
fn regression_10_candidates_are_followed_past_three_moves() {
    assert_read_to_end(94, "scan-1000", OCCUPANCY_CLOCK);
}

/// Issue 10, a false alarm found on the whole sample: an occupancy board's
/// dump after 26.Bxd5 showed the moves played while it was unplugged, but
/// a hand after fewer moves could explain it too, so the search waited;
/// meanwhile `displaced_pieces` was raised against the players. A state the
/// search waits on for a hand is a move in progress, never displaced pieces.
#[test]
fn regression_10_a_dump_waiting_for_a_hand_raises_no_displaced_pieces() {
    let Some((game, played)) = replayed(163, "outages", OCCUPANCY_CLOCK, 163) else {
        return;
    };
    let kinds = alert_kinds(&game);
    assert!(!kinds.contains(&"displaced_pieces"), "alerts {kinds:?}");
    assert_played(&game, &played, played.len());
}

/// Issue 10, a wrong move found on the whole sample: a board that only
/// senses occupancy, scanning every 700 ms, caught the c4 bishop's square
/// empty for one scan after 7.h3 (a sensor blip); 7...Nxc3 8.Bd5 leave
/// exactly that, and were recorded. Two moves one scan alone shows now
/// wait for the next scan, which showed c4 full again and 7...Bh5.
#[test]
fn regression_10_a_blip_one_scan_caught_is_not_read_as_two_moves() {
    let Some((game, played)) = replayed(95, "hostile", OCCUPANCY_CLOCK, 95) else {
        return;
    };
    assert_played(&game, &played, 20);
}

/// Issue 10, a wrong move found on the whole sample: a board that only
/// senses occupancy, scanning every 700 ms, showed h5 filled for one scan
/// after 17...Nxd2 (a sensor blip), which no move explained; the next scan
/// caught the queen lifted for 18.Qxd2 with the knight taken off. Read as
/// passing through the blip, 18.Qh5 and moves after it explained the
/// board and 18.Qh5 was recorded. A square one unexplained scan filled and
/// the next emptied again is now forgotten.
#[test]
fn regression_10_a_square_filled_for_one_unexplained_scan_is_a_blip() {
    let Some((game, played)) = replayed(83, "hostile", OCCUPANCY_CLOCK, 83) else {
        return;
    };
    assert_played(&game, &played, 36);
}

/// Issue 10, the last wrong move found on the whole sample: a board that
/// only senses occupancy, scanning every 700 ms, showed the a3 knight
/// lifted for 11.Nxb5, then one scan caught c4 full for a moment (a sensor
/// blip), which reads as 11.Nc4. The next scan showed c4 empty again with
/// 11...Qd8, which 11.Nc4 only fits if the knight went on at once; 11.Nc4
/// was recorded. A move one scan alone shows, that a blip on the square it
/// filled would make a capture by the same piece, now waits until later
/// scans tell the two apart.
#[test]
fn regression_10_a_blip_where_a_lifted_piece_could_go_is_not_its_move() {
    let Some((game, played)) = replayed(253, "hostile", OCCUPANCY_CLOCK, 253) else {
        return;
    };
    assert_played(&game, &played, 22);
}

/// Issue 10, a game lost on the whole sample: a board that only senses
/// occupancy, scanning every 700 ms and turned round, caught White's f2
/// pawn gone for one scan after 1.c4 (a sensor blip). No line passes
/// through that scan, so 1...f5 and Black's press read as an illegal
/// move, and nothing more was recorded. A square one scan alone showed
/// empty is now read as a blip when nothing else explains the board and
/// no capture there was possible.
#[test]
fn regression_10_a_square_one_scan_shows_empty_is_a_blip() {
    let Some((game, played)) = replayed(2, "hostile", OCCUPANCY_CLOCK, 2) else {
        return;
    };
    assert_played(&game, &played, 4);
    assert!(!alert_kinds(&game).contains(&"illegal_move"));
}

/// Issue 10, games lost at their first move on the whole sample (about 25
/// per occupancy variant): a board that only senses occupancy, scanning
/// every 700 ms, sent as its first scan a blip alone (game 0: c6 full), or
/// 1.d4 together with one (game 11: h6 full). No line passes through such
/// a scan, and the game was given up with `displaced_pieces` before its
/// first move. A square one scan alone showed changed right after the
/// record's position is now read as a blip when nothing else explains the
/// board and no move could go there.
#[test]
fn regression_10_a_blip_the_first_scan_caught_is_not_evidence() {
    for index in [0, 11] {
        assert_read_to_end(index, "hostile", OCCUPANCY_CLOCK);
    }
}

/// Issue 10, a wrong move found on the whole sample once squares one scan
/// showed empty were read as blips (the game had been lost earlier): the
/// d5 bishop lifted for 30...Bxg2 and e4 caught
/// full for one scan read as 30...Be4; the next scan showed e4 still full
/// (31.e4 had been played), so the blip was never shown back and 30...Be4
/// was recorded. A move whose square stays full now stands only if it
/// still explains the board exactly, or the blip story does not.
#[test]
fn regression_10_a_blip_a_move_then_fills_is_not_where_the_lifted_piece_went() {
    let Some((game, played)) = replayed(365, "hostile", OCCUPANCY_CLOCK, 365) else {
        return;
    };
    assert_played(&game, &played, 62);
}

/// Issue 10, a false alarm found on the whole sample: a board that only
/// senses occupancy, with no clock, reported 20.Nxb7 (the knight lifted
/// from c5, the pawn taken off b7, the knight put down there), then c5
/// full for 16 ms (a sensor blip). Read as the knight put back on c5 and
/// lifted again, 20.Nxb7 stayed a piece in the hand, and Black's castling
/// then read as that knight put on g8: a false `illegal_move`, and the
/// game was lost. An empty square read full and empty again at once is
/// now a blip.
#[test]
fn regression_10_a_square_filled_and_emptied_at_once_is_a_blip() {
    let Some((game, played)) = replayed(113, "blips", OCCUPANCY_NO_CLOCK, 113) else {
        return;
    };
    assert_played(&game, &played, played.len());
    assert!(game.alerts.is_empty(), "{:?}", game.alerts);
}

/// Issue 10, games lost on the whole sample (13 of scan-1000's occupancy
/// games with no clock): scans a second apart that each caught a move made
/// and the next hand at work (2...f5 with the g2 pawn lifted, 3.g3 with
/// the g8 knight lifted, 3...Nf6 with the f1 bishop lifted) were each read
/// as a move in progress, until the board was four moves on from the
/// record, beyond what one scan is read ahead, and was given up with
/// `displaced_pieces`. The lines the last move in progress was read among
/// are now followed on.
#[test]
fn regression_10_scans_that_each_catch_the_next_hand_are_followed_on() {
    assert_read_to_end(117, "scan-1000", OCCUPANCY_NO_CLOCK);
}

/// Issue 10, a game lost on the whole sample: a board that identifies
/// pieces, scanning every 700 ms, came back from a cable outage with a scan
/// three moves on (17.e5 Nh7 18.Ne4, the only line of three that gives
/// it). A snapshot was trusted for two moves at most, so the line
/// was listed, never confirmed, and the game was lost from there. Three
/// moves that pass through every snapshot before them, with no square the
/// next scan shows back, are now recorded (`moves_inferred`).
#[test]
fn regression_10_three_moves_one_identity_scan_shows_are_recorded() {
    assert_read_to_end(0, "hostile", IDENTITY_CLOCK);
}

/// Issue 10, a stream the simulator called decidable and was not: a rough
/// board showed 1...e5 2.Nf3 by one scan, and the cable was then out for
/// 2.Nf3 Nc6, checked from the position after 1...e5, which the board never
/// showed. From the last position it did show (after 1.e4), 1...e5 2.Nf3
/// Nc6 and 1...Nc6 2.Nf3 e5 lead to the dump alike. An outage now neither
/// starts nor ends between two plies one scan showed.
#[test]
fn regression_10_an_outage_starts_where_the_board_showed_a_position() {
    assert_read_to_end(20, "hostile", IDENTITY_CLOCK);
}

/// Issue 10, a wrong move found on the whole sample: a board that
/// identifies pieces came back from an outage showing 24...h5 25.Rxh5+ Kg7
/// exactly, which also reads as 24...Kg7 with White's hand at work on h7
/// (the rook caught sliding). The next scans showed the rook lifted, then
/// on h7, and the shorter 24...Kg7 25.Rxh7+ was recorded, though the
/// board had shown the longer line (25.Rxh5+ Kg7 26.Rh7+) exactly. Both
/// stories are now listed, and nothing after 24.Qxd3 is recorded.
#[test]
fn regression_10_a_line_a_scan_showed_exactly_is_weighed_against_a_hand() {
    let Some((game, played)) = replayed(349, "hostile", IDENTITY_NO_CLOCK, 349) else {
        return;
    };
    assert_played(&game, &played, 47);
}

/// Issue 10, a game the previous fix would have lost: a scan that a hand
/// explained (23.Nxd5 under way) also showed exactly a line of three
/// moves, so a later scan showing 23.Nxd5 exd4 was listed with that line
/// gone on (five moves, the other player to move). The next scan showed
/// 24.Nxf6+ made, which the long line cannot reach in one move: it is
/// dropped, and the moves are recorded.
#[test]
fn regression_10_a_candidate_that_cannot_have_gone_on_is_dropped() {
    assert_read_to_end(134, "scan-1000", IDENTITY_CLOCK);
}

/// Issue 10, a game lost on the whole sample: a board that identifies
/// pieces and only scans came back from an outage with a scan four moves
/// on (4.Nh3 Be7 5.Ng5 O-O, the only line of four that gives it). A
/// line that long from one snapshot is listed, and each later scan,
/// showing the line gone on, was listed again as a longer line: the game
/// was lost from move 4. A line that passes through every scan since the
/// record's position, piece for piece, and goes on by at most three moves
/// from a position one of them showed exactly, is recorded.
#[test]
fn regression_10_a_long_line_the_next_scans_show_gone_on_is_recorded() {
    assert_read_to_end(340, "hostile", IDENTITY_CLOCK);
}

/// Issue 10, a game lost on the whole sample: on a board that identifies
/// pieces and only scans, a blip after 3...e6 read as a detour of four
/// moves (4.a3 Bxa3 5.Nc3 Bf8, the bishop there and back), which was
/// listed. The next scan showed 4.Nc3 alone, but the listing stood, and
/// every later move was listed with it. A listed line that cannot have
/// led to the board (the a-pawn it captured stands on a2) no longer
/// counts.
#[test]
fn regression_10_a_listing_the_board_has_left_behind_is_dropped() {
    assert_read_to_end(431, "hostile", IDENTITY_NO_CLOCK);
}

/// Issue 10, a stream the simulator called decidable and was not: on an
/// occupancy board that only scans, 12.Qxa7 (e3 emptied, a7 still full)
/// then 12...Qd4 reads as 12.Qd4 Qxd4 too, the scan between them showing
/// White's queen taken off d4. The engine listed both (`out_of_sync`); the
/// board now scans the capture being made (a7 empty for a moment).
#[test]
fn regression_10_a_capture_another_line_would_show_alike_is_scanned_being_made() {
    assert_read_to_end(66, "scan-1000", OCCUPANCY_CLOCK);
}

/// Issue 10, the same when the capture ends a stretch of two plies one scan
/// showed (12...Nxd3 13.Qxd3, then 13...Ng4 reads as 13.Qg4 Nxg4 too).
#[test]
fn regression_10_a_capture_ending_a_skipped_stretch_is_scanned_being_made() {
    assert_read_to_end(346, "scan-1000", OCCUPANCY_CLOCK);
}

/// Issue 10: on an occupancy board that only scans, c6 caught empty for
/// one scan (a blip on the pinned knight) while 5...cxd4 6.Nxd4 was
/// scanned with d4 empty between. No line passes through both scans, and
/// a capture by the f3 knight fits d4, so neither square was read as a
/// blip; White's press then read as an illegal move. The b5 bishop, the
/// only piece that could take on c6, never left its square: c6 is now read
/// as a blip alone.
#[test]
fn regression_10_a_blip_beside_a_capture_being_made_is_read_as_a_blip() {
    let Some((game, played)) = replayed(82, "hostile", OCCUPANCY_CLOCK, 82) else {
        return;
    };
    assert_played(&game, &played, 19);
    assert!(!alert_kinds(&game).contains(&"illegal_move"));
}

/// Issue 10: two games the rule above reads further than before, to where
/// a blip one scan caught showed other moves (24.Bg1 Kd7 for 24.Bxa7 Kd7,
/// g1 caught full; 20.Ne4 with 20...Qxd2 being made for 20.Nxe2 Qe4, d2
/// caught empty). With streams that kept such scans, the engine recorded
/// those wrong moves; the simulator no longer takes them (it promises
/// decidable streams), and both games are read to the end.
#[test]
fn regression_10_a_blip_that_shows_other_moves_is_not_scanned() {
    for (index, variant) in [(43, OCCUPANCY_CLOCK), (318, OCCUPANCY_NO_CLOCK)] {
        assert_read_to_end(index, "hostile", variant);
    }
}

/// Issue 10: a press came before the scans showed the move, and the first
/// scan after it caught a blip; no move explained that scan, so the press
/// was judged on it at once as an illegal move (hostile, occupancy, clock,
/// game 20: `illegal_move` at ply 7; identity, clock, game 279, where a
/// blip read a square full with no piece named: at ply 30). A scan one
/// square of which, read as the scan before showed it, is explained, now
/// waits for the next scan.
#[test]
fn regression_10_a_blip_in_the_first_scan_after_a_press_is_no_illegal_move() {
    for (index, variant) in [(20, OCCUPANCY_CLOCK), (279, IDENTITY_CLOCK)] {
        assert_read_to_end(index, "hostile", variant);
    }
}

/// Issue 10: a board that only scans lost its cable after 5...Nxe4 for
/// 6.d4 exd4 7.cxd4 (hostile, occupancy, clock, game 355). Its first scan
/// after the link came back was read like any other scan, at most three
/// moves deep: the record stopped at 5.c3 and Black's press became an
/// illegal move. Read like a dump, the scan and the next one are
/// explained by one line of moves.
#[test]
fn regression_10_a_scanning_board_is_read_on_after_its_cable_was_out() {
    assert_read_to_end(355, "hostile", OCCUPANCY_CLOCK);
}

/// Issue 10: 18.Qxe4 with b3 caught full (a blip) reads as 18.Qb3; two
/// scans later both stories left only a hand at work, and 18.Qb3 was
/// taken as made: a wrong move (hostile, occupancy, clock, game 414, read
/// that far once the scan after its outage was read). It now waits one
/// scan more, which shows 19.Nd5 made.
#[test]
fn regression_10_a_blip_that_shows_a_queen_move_is_no_wrong_move() {
    assert_read_to_end(414, "hostile", OCCUPANCY_CLOCK);
}

/// Issue 10: the players ended the game (a resignation) while the scan
/// after an outage waited for the next one, because a piece in the hand
/// could explain it too (hostile, occupancy, no clock, games 238 and 296):
/// the last moves were never read, with no alert. With the game over, the
/// board stands as the players left it and the search's one line is
/// recorded.
#[test]
fn regression_10_a_resignation_reads_the_scan_after_an_outage() {
    for index in [238, 296] {
        assert_read_to_end(index, "hostile", OCCUPANCY_NO_CLOCK);
    }
}

/// Issue 10: a scanning board's first scan showed the start position as it
/// stood, so the next scan was the first to change the board and was read
/// as a dump; when that scan caught a blip, nothing explained it and the
/// game was lost at its first move (hostile, occupancy, no clock, games
/// 153 and 157, with and without a clock: `displaced_pieces` at ply 0).
#[test]
fn regression_10_a_blip_in_the_first_scan_after_the_start_is_no_dump() {
    for index in [153, 157] {
        for variant in [OCCUPANCY_CLOCK, OCCUPANCY_NO_CLOCK] {
            assert_read_to_end(index, "hostile", variant);
        }
    }
}

/// Issue 10: a snapshot nothing explained had two squares full for that
/// scan alone, d5 (a blip) and d4 (11.d4 exd4, then the pawn taken off
/// for 12.Qxd4); a blip was read out of such a scan only when one square
/// was, and White's press became an illegal move (hostile, occupancy,
/// clock, game 291). The one square without which moves explain the scan
/// is now read as the blip.
#[test]
fn regression_10_one_of_two_squares_filled_for_one_scan_is_the_blip() {
    assert_read_to_end(291, "hostile", OCCUPANCY_CLOCK);
}

/// Issue 10: on a board that identifies pieces, a knight caught gone from
/// b1 for one scan while 4.Nf3 was shown listed 4.Na3 Bxa3 5.Nf3 Bf8
/// (hostile, identity, no clock, game 238). The next scan, b1 back and
/// 4...Bd6, dropped that listing as a blip, but the record stayed marked
/// as behind the board, and 4.Nf3 Bd6 were listed instead of recorded:
/// the game was lost at ply 6. Game 23 (identity, clock) lost ply 14 the
/// same way.
#[test]
fn regression_10_a_listing_dropped_as_a_blip_leaves_the_record_in_step() {
    for (index, variant) in [(238, IDENTITY_NO_CLOCK), (23, IDENTITY_CLOCK)] {
        assert_read_to_end(index, "hostile", variant);
    }
}

/// Issue 10: White played 14.Nf3 and pressed, and the next scan caught the
/// e1 king gone (a blip); on a board that identifies pieces, the press was
/// judged on that scan at once, as an illegal move (hostile, identity,
/// clock, game 59). A square caught empty is now read back with the piece
/// the scan before named, and the press waits for the next scan.
#[test]
fn regression_10_a_king_caught_gone_after_a_press_is_no_illegal_move() {
    assert_read_to_end_with_no(59, "hostile", IDENTITY_CLOCK, "illegal_move");
}

/// Issue 10: one scan showed 14.Bg4 Bxg4 15.hxg4, and the next g4 empty
/// again with the e6 queen lifted, 15...Qxg4 begun; on a board that
/// identifies pieces, the change on g4 dropped the three moves, and
/// White's press became an illegal move (hostile, identity, clock, game
/// 144). Shown gone on, with no other line explaining the board, they
/// stand.
#[test]
fn regression_10_moves_a_scan_showed_stand_when_the_next_capture_goes_on_from_them() {
    assert_read_to_end_with_no(144, "hostile", IDENTITY_CLOCK, "illegal_move");
}

/// Issue 10: after 2...Bb7, one scan caught a6 full, the next, 0.15 s
/// later, c6 full instead, and the next the position again; the c6 scan
/// was never read on its own, so it stayed in the snapshots as evidence,
/// and 3.Bd3 Nc6 fitted no line: `displaced_pieces` at ply 4 (hostile,
/// occupancy, no clock, game 209). Once the position is back, such
/// squares are read as blips.
#[test]
fn regression_10_blips_too_brief_to_be_read_are_forgotten_once_the_position_is_back() {
    assert_read_to_end(209, "hostile", OCCUPANCY_NO_CLOCK);
}

/// Issue 10: a scan showed 11.Qh5+, then White, Black and White pressed
/// before the next scan showed 11...g6 and the queen on g4; read with h5
/// as a blip, that is 11.Qg4 g6, and with both stories standing the board
/// was no longer read and White's press became an illegal move (hostile,
/// occupancy, clock, game 243). Three presses are three moves.
#[test]
fn regression_10_presses_since_a_scan_count_the_moves_made_after_it() {
    assert_read_to_end(243, "hostile", OCCUPANCY_CLOCK);
}

/// Issue 10: a scan caught the e8 king gone after 4.Bc4 c6 (both unseen),
/// the next ones showed White castling; the snapshots read without the
/// blip explain 4.Bc4 c6 5.O-O, but the moves were counted against the
/// snapshots with the blip, where no scan showed 4.Bc4 c6, so three moves
/// rested on the last scan alone and were listed, never recorded (hostile,
/// occupancy, clock, game 104, lost at ply 6). The same change reads
/// games 333 (clock) and 247 (no clock) to the end.
#[test]
fn regression_10_moves_read_past_a_blip_count_the_positions_shown_without_it() {
    for (index, variant) in [
        (104, OCCUPANCY_CLOCK),
        (333, OCCUPANCY_CLOCK),
        (247, OCCUPANCY_NO_CLOCK),
    ] {
        assert_read_to_end(index, "hostile", variant);
    }
}

/// Issue 10: a scan after 28.Qg5+ Kc4 showed g5 empty, the next c6 empty
/// and c5 full: 29.Qxh5 c5, or 29.Qc5+ with Black's c6 pawn in the hand,
/// though after 29.Qc5+ that pawn has no legal move. The second story kept
/// the board waiting until the moves were out of reach: `displaced_pieces`
/// at ply 56 (scan-1000, occupancy, no clock, game 87; hostile,
/// occupancy, clock, game 257 the same way). A piece no legal move moves
/// is no move in progress.
#[test]
fn regression_10_a_piece_no_legal_move_moves_is_not_held_for_a_move() {
    for (index, style, variant) in [
        (87, "scan-1000", OCCUPANCY_NO_CLOCK),
        (257, "hostile", OCCUPANCY_CLOCK),
    ] {
        assert_read_to_end(index, style, variant);
    }
}

/// Issue 10: on a board that identifies pieces, the scans showed 25.f4
/// exf4 26.Bxf4 Be5 one position after another, each with the next move's
/// pieces already lifted, none exactly; the line was listed, then lost
/// when 27.Bg3 made a shorter line fit too (scan-1000, identity, no clock,
/// game 122, lost at ply 49).
#[test]
fn regression_10_a_line_each_scan_shows_begun_is_recorded() {
    assert_read_to_end(122, "scan-1000", IDENTITY_NO_CLOCK);
}

/// Issue 10: three moves one scan showed were listed and the board then
/// followed that one candidate to the end of the game, nothing recorded
/// (hostile, occupancy, clock, games 214 and 281; no clock, 274 and 332;
/// scan-1000, occupancy, no clock, game 41). Shown exactly, then gone on
/// from, they stand.
#[test]
fn regression_10_three_moves_one_scan_showed_stand_once_the_board_goes_on() {
    for (index, style, variant) in [
        (281, "hostile", OCCUPANCY_CLOCK),
        (214, "hostile", OCCUPANCY_CLOCK),
        (274, "hostile", OCCUPANCY_NO_CLOCK),
        (332, "hostile", OCCUPANCY_NO_CLOCK),
        (41, "scan-1000", OCCUPANCY_NO_CLOCK),
    ] {
        assert_read_to_end(index, style, variant);
    }
}

/// Issue 10: scans read as hands at work were resolved by a later one that
/// left a single line, 27...Rxe1+ 28.Qxe1 Re8 29.Qd1 Qd8; the two
/// moves the scans trusted were recorded and the rest was dropped, so the
/// board stood four moves past the record: `displaced_pieces` at ply 55
/// (scan-1000, occupancy, no clock, game 265). The scan is now read again
/// from the moves recorded. Hostile occupancy games 147 and 371 (clock),
/// 11 and 371 (no clock) were lost the same way.
#[test]
fn regression_10_a_scan_read_past_a_hand_is_read_again_from_the_moves_recorded() {
    for (index, style, variant) in [
        (265, "scan-1000", OCCUPANCY_NO_CLOCK),
        (147, "hostile", OCCUPANCY_CLOCK),
        (371, "hostile", OCCUPANCY_CLOCK),
        (11, "hostile", OCCUPANCY_NO_CLOCK),
        (371, "hostile", OCCUPANCY_NO_CLOCK),
    ] {
        assert_read_to_end(index, style, variant);
    }
}

/// Issue 10: on a board that identifies pieces, one scan showed 20.Bxd2
/// Nxd2 with the e7 bishop caught gone (a blip); no line passed through
/// that scan, so the candidate 20.Bxd2 Nxd2 21.Qxd2, then the same with
/// each next move, stayed listed and the board was lost after 38 plies
/// (hostile, identity, clock, game 386). A piece one scan alone showed
/// gone is read back there.
#[test]
fn regression_10_a_piece_one_scan_caught_gone_does_not_keep_a_line_listed() {
    assert_read_to_end(386, "hostile", IDENTITY_CLOCK);
}

/// Issue 10: on a board that only senses occupancy, a square one scan
/// alone showed empty was kept as a possible capture whenever a piece came
/// within reach of it later on the line, though nothing could capture
/// there while the board stood as that scan showed it (hostile, occupancy,
/// clock, game 136: e6 caught empty after 14...a5, the knight reaching g5
/// only with 15.Ng5; displaced pieces and a false illegal move, 67 plies
/// lost; game 226 without a clock lost its last 29). The capture must fit
/// the scan that caught the square empty.
#[test]
fn regression_10_a_square_caught_empty_where_no_capture_fits_that_scan_is_a_blip() {
    assert_read_to_end(136, "hostile", OCCUPANCY_CLOCK);
    assert_read_to_end(226, "hostile", OCCUPANCY_NO_CLOCK);
}

/// Issue 10: on a board that only senses occupancy, a scan was read as a
/// hand holding two pieces of the player to move at once (not castling),
/// which kept a shorter story alive until the board was taken for
/// displaced pieces and a false illegal move (hostile, occupancy, clock:
/// game 340 from 12...Nxe4, game 338 from 28...gxf6). A move lifts one of
/// the mover's pieces, or his king and rook.
#[test]
fn regression_10_two_pieces_of_the_player_to_move_lifted_are_no_move_under_way() {
    assert_read_to_end(338, "hostile", OCCUPANCY_CLOCK);
    assert_read_to_end(340, "hostile", OCCUPANCY_CLOCK);
}

/// Issue 10: on a board that only senses occupancy, a blip on g4 in the
/// scan that showed 26.Bxa6 read as 26.Bxa6 gxf4 27.g5, which was listed
/// at once and kept the board from being read (hostile, occupancy, no
/// clock, game 46, once a hand holds one piece of the mover). Such a
/// listing waits for the next scan, and is dropped when that scan shows
/// the blip gone.
#[test]
fn regression_10_a_long_line_one_scan_shows_with_a_blip_waits_for_the_next_scan() {
    assert_read_to_end(46, "hostile", OCCUPANCY_NO_CLOCK);
}

/// Issue 10: on a board that only senses occupancy (or a scan of an
/// identity board that did not name every piece), a scan with a blip read
/// as several lines of three moves was listed at once, and the board,
/// read against them, was lost: hostile, occupancy, clock, games 27
/// (19...Qxd7 under way, a4 caught full) and 121; identity, clock, 257;
/// occupancy, no clock, 60 and 173. Such lines wait for the next scan,
/// and are dropped when it shows a square of the blip back while the
/// board reads as a hand at work from the record.
#[test]
fn regression_10_lines_one_scan_shows_with_a_blip_are_dropped_when_the_next_reads_a_hand() {
    assert_read_to_end(27, "hostile", OCCUPANCY_CLOCK);
    assert_read_to_end(121, "hostile", OCCUPANCY_CLOCK);
    assert_read_to_end(257, "hostile", IDENTITY_CLOCK);
    assert_read_to_end(60, "hostile", OCCUPANCY_NO_CLOCK);
    assert_read_to_end(173, "hostile", OCCUPANCY_NO_CLOCK);
}

/// Issue 10: on a board that only senses occupancy, with a clock, a scan
/// showing three moves was read as two with a piece of the next mover
/// still in his hand, though he had pressed his clock since; the board
/// went on past what the scans could follow and ended with a false
/// illegal move (hostile, occupancy, clock: games 28, 268 and 320; 132
/// ended out of sync). The presses since the record count: a player who
/// pressed holds no piece after fewer moves than that (Art. 6.2.1).
#[test]
fn regression_10_presses_since_the_record_rule_out_a_hand_after_fewer_moves() {
    for index in [28, 132, 268, 320] {
        assert_read_to_end(index, "hostile", OCCUPANCY_CLOCK);
    }
}

/// Issue 10: on a board that only senses occupancy, a scan showing the
/// game position again after a blip was itself taken for a scan nothing
/// explained; at the next scan its square was forgotten as a blip, the
/// blip became the truth, and the next moves no longer fitted the scans
/// (hostile, occupancy, clock, game 234: f7 caught empty before 19.Kc2 f6,
/// displaced pieces and a false illegal move; no clock, game 311).
#[test]
fn regression_10_a_scan_showing_the_game_position_is_no_blip() {
    assert_read_to_end(234, "hostile", OCCUPANCY_CLOCK);
    assert_read_to_end(311, "hostile", OCCUPANCY_NO_CLOCK);
}

/// Issue 10: on a board that only senses occupancy, with a clock, three
/// presses came before the scans showed their moves; the first move
/// recorded took both of White's presses with it, White's next press
/// completed 35.Bxf7 instead of his 36.Re5, and the board ended with a
/// false illegal move against Black (hostile, occupancy, clock, game 409).
/// Each press completes one move, in turn.
#[test]
fn regression_10_presses_ahead_of_the_scans_complete_each_move_in_turn() {
    assert_read_to_end(409, "hostile", OCCUPANCY_CLOCK);
}

/// Issue 10: on a board that only senses occupancy, moves settled by a
/// scan were read on from that scan alone, though an earlier scan had
/// shown their position and the scans between showed the next move under
/// way; a capture taken for a blip was listed against the real one, and
/// the board was lost (hostile, occupancy, clock: game 297, 12.Qxc6+
/// against 12.Qxf7+ after a cable outage, and 140; no clock: 100 and 342).
/// The board is read on from the first scan that showed the moves' end.
#[test]
fn regression_10_moves_recorded_from_a_scan_count_from_the_scan_that_first_showed_them() {
    assert_read_to_end(140, "hostile", OCCUPANCY_CLOCK);
    assert_read_to_end(297, "hostile", OCCUPANCY_CLOCK);
    assert_read_to_end(100, "hostile", OCCUPANCY_NO_CLOCK);
    assert_read_to_end(342, "hostile", OCCUPANCY_NO_CLOCK);
}

/// Issue 10: on a board that only senses occupancy, a blip on e4 read as
/// three moves was put off for the next scan, which showed the blip gone
/// and the next move made; nothing explained that scan with the blip
/// kept, so the three-move lines were listed and the board was lost
/// (hostile, occupancy, clock, game 296, after 20.Bxe6). The scan is read
/// again without the blip first.
#[test]
fn regression_10_a_line_put_off_for_a_blip_gives_way_when_the_board_reads_without_it() {
    assert_read_to_end(296, "hostile", OCCUPANCY_CLOCK);
}

/// Issue 10: on a board that only senses occupancy, one scan caught b6
/// full while 22...Bxe3 was made, and e3 was emptied again for 23.Rxe3 at
/// the next: two squares that scan alone filled, each explaining it
/// without the other, so neither was taken for the blip and the board
/// ended with displaced pieces (hostile, occupancy, no clock, game 16).
/// The blip is the square without which the scans after it are read.
#[test]
fn regression_10_of_two_odd_fills_the_blip_is_the_one_the_next_scans_read_without() {
    assert_read_to_end(16, "hostile", OCCUPANCY_NO_CLOCK);
}

/// Issue 10: on a board that only senses occupancy, d8 caught full for one
/// scan right after 27.Qa4 was kept as shown because 27...Rd8 was legal,
/// though that scan showed the f8 rook still on its square; nothing
/// explained the scans after it, and the board ended with displaced
/// pieces (hostile, occupancy, no clock, game 283). A legal move to the
/// square counts only if that scan showed its piece gone.
#[test]
fn regression_10_a_fill_no_move_can_have_made_with_its_piece_still_home_is_a_blip() {
    assert_read_to_end(283, "hostile", OCCUPANCY_NO_CLOCK);
}

/// Issue 10: on a board that only senses occupancy, 9...Bc8 was weighed
/// against a blip on c8 (9...Bd7 10.Bd2 reads the same squares as 9...Bc8
/// 10.Bd2 Bd7), and by the scan after, 11.Qe2 Qe7 had been made too: more
/// moves than one scan is read for in either story, so nothing more was
/// recorded and the board ended with displaced pieces (hostile, occupancy,
/// no clock, games 81 and 179, the latter after 33.Qd5). The line the
/// weighed scan showed exactly is recorded when it leads on to the board.
#[test]
fn regression_10_a_move_weighed_against_a_blip_goes_on_as_the_scan_after_it_showed() {
    assert_read_to_end(81, "hostile", OCCUPANCY_NO_CLOCK);
    assert_read_to_end(179, "hostile", OCCUPANCY_NO_CLOCK);
}

/// Issue 10: on a board that only senses occupancy, one scan that caught
/// a blip on the square a capture left showed the board as it was before
/// the capture, and the capture was taken back at once, to be recorded
/// again later (hostile, occupancy: games 17 and 46 with a clock, 177, 332
/// and 347 without); in game 434 (no clock) c5 caught full after
/// 38...Rd5 made the board look as it was after 36.Rb6, five moves were
/// taken back and the board was lost. A takeback one scan alone shows
/// waits for the next scan.
#[test]
fn regression_10_a_takeback_one_scan_alone_shows_waits_for_the_next_scan() {
    for index in [17, 46] {
        assert_read_to_end_with_no(index, "hostile", OCCUPANCY_CLOCK, "takeback");
    }
    for index in [177, 332, 347, 434] {
        assert_read_to_end_with_no(index, "hostile", OCCUPANCY_NO_CLOCK, "takeback");
    }
}

/// Issue 10: on a board that only senses occupancy, c4 caught empty after
/// 29.Qc3+ read as 29...Bd4 30.c5 with a hand at work; the next scan
/// showed the game position again, but a longer line back to the same
/// squares kept the moves, which were recorded and then taken back
/// (hostile, occupancy, no clock, game 308). The board back at the record's
/// position makes the squares shown back a blip.
#[test]
fn regression_10_moves_one_scan_showed_are_a_blip_when_the_next_shows_the_game_position() {
    assert_read_to_end_with_no(308, "hostile", OCCUPANCY_NO_CLOCK, "takeback");
}

/// Issue 10: on a board that only senses occupancy, f8 caught empty beside
/// 8...Qxc3+ was read as a blip to read 8...Qxc3+ 9.Bd2 Qa3, which were
/// listed; f8 stayed empty in the snapshots, no line went through that
/// scan any more, and nothing more was recorded (hostile, occupancy, no
/// clock, game 242). Lines read past a blip are followed without it.
#[test]
fn regression_10_lines_read_past_a_blip_are_followed_without_it() {
    assert_read_to_end(242, "hostile", OCCUPANCY_NO_CLOCK);
}

/// Issue 10: on a board that identifies pieces, with a clock, 46.Kh7 Rf5
/// 47.h5 shown by one scan, with a press for each, waited for the next
/// scan in case h5 was a blip; that scan showed the pawn taken off for
/// 47...Rxh5+, the moves were dropped, and Black's press raised a false
/// illegal_move against White (hostile, identity, clock, game 393). The
/// presses say the moves were made.
#[test]
fn regression_10_presses_for_every_move_one_scan_showed_confirm_them() {
    assert_read_to_end_with_no(393, "hostile", IDENTITY_CLOCK, "illegal_move");
}

/// Issue 10: on a board that only senses occupancy, a scan read as a move
/// in progress among several lines, then one scan four moves from the
/// record that the lines, gone on, still explained: the board was taken
/// for displaced pieces until the next scan settled the moves (hostile,
/// occupancy, no clock: games 21, 89, 336 and 388). The record lags the
/// board; no piece is displaced.
#[test]
fn regression_10_lines_a_hand_was_read_among_gone_on_are_no_displaced_pieces() {
    for index in [21, 89, 336, 388] {
        assert_read_to_end_with_no(index, "hostile", OCCUPANCY_NO_CLOCK, "displaced_pieces");
    }
}

/// Issue 10, a game lost on the whole sample: a scanning board that
/// identifies pieces caught the e8 rook gone for one scan after 21...Rae8.
/// Four lines of four moves lead there (22.Reb1 Re1+ 23.Rxe1 Re7 and the
/// like); they were listed at once, and the next scans, which showed the
/// rook back and 22.Rxe7 made, were read as those lines gone on: nothing
/// after 21...Rae8 was recorded (hostile, identity, no clock: game 322).
#[test]
fn regression_10_lines_one_scan_alone_showed_are_not_listed_against_the_next_scans() {
    assert_read_to_end_with_no(322, "hostile", IDENTITY_NO_CLOCK, "out_of_sync");
}

/// Issue 10, a game lost on the whole sample: a scanning board that only
/// senses occupancy showed 24...Be4 in one scan, which 24...Bxg4 with a
/// blip on e4 also explains; 24...Be4 25.Nxe4 and 24...Bxg4 25.Ne4 were
/// listed and followed, until one scan caught b2 empty during 29.exf4.
/// No line went on through that scan, and nothing after 24.g4 was
/// recorded (hostile, occupancy, clock: game 247).
#[test]
fn regression_10_listed_lines_are_followed_past_a_blip() {
    assert_read_to_end(247, "hostile", OCCUPANCY_CLOCK);
}

/// Issue 10, a false alarm found on the whole sample: a scanning board
/// that only senses occupancy caught e6 full after 40...e3, then 41.Rb1
/// with e4 full, each a blip; the 2 s before pieces are taken for
/// displaced were counted from the first of the two states, and
/// `displaced_pieces` was raised (hostile, occupancy, no clock: game 196).
#[test]
fn regression_10_two_blips_one_after_the_other_are_no_displaced_pieces() {
    assert_read_to_end_with_no(196, "hostile", OCCUPANCY_NO_CLOCK, "displaced_pieces");
}

/// Issue 10, a false alarm found on the whole sample: after an outage the
/// record caught up through listed lines, and the next scans' moves
/// (18.Qxh5, then 18...Rf8) were held back as one more listed line; the
/// listing was cleared in the same reading, and `displaced_pieces` came
/// before the moves were recorded (hostile, occupancy, no clock: game
/// 86).
#[test]
fn regression_10_moves_held_back_as_a_listed_line_are_no_displaced_pieces() {
    assert_read_to_end_with_no(86, "hostile", OCCUPANCY_NO_CLOCK, "displaced_pieces");
}

/// Issue 10, a false alarm found on the whole sample: Black pressed for
/// 42...Re5 before the scan that confirmed it, the cable was then out for
/// three moves (their presses lost), and his press after 44...Qg3+, made
/// before the record caught up, read as his second press after a press
/// without a move (hostile, occupancy, clock: game 88).
#[test]
fn regression_10_a_press_after_an_outage_is_no_second_press() {
    assert_read_to_end_with_no(88, "hostile", OCCUPANCY_CLOCK, "clock_without_move");
}

mod simulator {
    //! What each hostile option puts in the stream, checked on the stream
    //! itself (the engine's reading is the table's business).

    use eboard::{
        BoardEvent, Scan, SimOptions, TimedEvent, event::Sensed, pgn::read_games, simulate,
        simulate::Hostile,
    };
    use shakmaty::{Board, Color, Piece, Role, Square};

    const SCANDINAVIAN: &str = "[Event \"?\"]\n\n1. e4 d5 2. exd5 Qxd5 3. Nc3 Qa5 4. Nf3 Nf6 \
        5. Bc4 c6 6. O-O Bf5 7. d3 e6 *\n";

    fn run(pgn: &str, opts: SimOptions) -> Vec<TimedEvent> {
        simulate(&read_games(pgn.as_bytes()).unwrap(), &opts)
    }

    fn piece(scan: &Scan, sq: Square) -> Option<Sensed> {
        scan.get(sq)
    }

    #[test]
    fn a_scan_board_reports_only_scans_and_can_miss_a_capture_recapture() {
        let mut recapture_unseen = false;
        for seed in 0..60 {
            let events = run(
                SCANDINAVIAN,
                SimOptions {
                    seed,
                    hostile: Hostile {
                        scan_ms: Some(1000),
                        ..Hostile::default()
                    },
                    ..SimOptions::default()
                },
            );
            assert!(
                !events
                    .iter()
                    .any(|e| matches!(e.event, BoardEvent::Lift(_) | BoardEvent::Place(..))),
                "seed {seed}: a scan board reports no lifts or places"
            );
            let scans: Vec<&Scan> = events
                .iter()
                .filter_map(|e| match &e.event {
                    BoardEvent::Board(scan) => Some(&**scan),
                    _ => None,
                })
                .collect();
            // exd5 Qxd5 between two scans: d5 was emptied and refilled
            // without a scan showing the pawn there.
            let white_pawn = Some(Sensed::Piece(Piece {
                color: Color::White,
                role: Role::Pawn,
            }));
            let black_queen = Some(Sensed::Piece(Piece {
                color: Color::Black,
                role: Role::Queen,
            }));
            let before = scans.iter().position(|s| {
                piece(s, Square::E4) == white_pawn && piece(s, Square::D8) == black_queen
            });
            let after = scans.iter().position(|s| {
                piece(s, Square::E4).is_none() && piece(s, Square::D5) == black_queen
            });
            if let (Some(a), Some(b)) = (before, after) {
                recapture_unseen |= scans[a..b]
                    .iter()
                    .all(|s| piece(s, Square::D5) != white_pawn);
            }
        }
        assert!(recapture_unseen, "no scan skipped exd5 Qxd5 in 60 sessions");
    }

    #[test]
    fn an_outage_loses_the_clock_presses_and_ends_with_a_dump() {
        let mut outages = 0;
        for seed in 0..20 {
            let events = run(
                SCANDINAVIAN,
                SimOptions {
                    seed,
                    clock: true,
                    hostile: Hostile {
                        outages: true,
                        ..Hostile::default()
                    },
                    ..SimOptions::default()
                },
            );
            let presses = events
                .iter()
                .filter(|e| matches!(e.event, BoardEvent::Press(_)))
                .count();
            let dumps = events
                .iter()
                .filter(|e| matches!(e.event, BoardEvent::Board(_)))
                .count();
            assert!(presses <= 14 && dumps <= 1, "seed {seed}");
            // The host saw the link come back just before the dump.
            for w in events.windows(2) {
                if matches!(w[1].event, BoardEvent::Board(_)) {
                    assert_eq!(w[0].event, BoardEvent::Reconnected, "seed {seed}");
                }
            }
            if presses < 14 {
                // Every press lost is a ply the dump shows.
                assert_eq!(dumps, 1, "seed {seed}: an outage without a dump");
                outages += 1;
            }
        }
        assert!(outages >= 5, "only {outages} outages in 20 sessions");
    }

    /// Issue 10: a board that only scans has no dump of its own after an
    /// outage; the host says when the link came back, and the board's
    /// first scan then shows the plies played meanwhile.
    #[test]
    fn an_outage_on_a_scanning_board_is_announced_before_its_next_scan() {
        let mut outages = 0;
        for seed in 0..20 {
            let events = run(
                SCANDINAVIAN,
                SimOptions {
                    seed,
                    hostile: Hostile {
                        scan_ms: Some(700),
                        outages: true,
                        ..Hostile::default()
                    },
                    ..SimOptions::default()
                },
            );
            for (i, e) in events.iter().enumerate() {
                if e.event == BoardEvent::Reconnected {
                    outages += 1;
                    let next = events[i + 1..]
                        .iter()
                        .find(|n| matches!(n.event, BoardEvent::Board(_)));
                    assert_eq!(next.map(|n| n.at), Some(e.at), "seed {seed}");
                }
            }
        }
        assert!(outages >= 5, "only {outages} outages in 20 sessions");
    }

    /// Lift-then-place (or place-then-lift) pairs on one square, with the
    /// time between them.
    fn flickers(events: &[TimedEvent]) -> Vec<u64> {
        events
            .windows(2)
            .filter_map(|w| match (&w[0].event, &w[1].event) {
                (BoardEvent::Lift(a), BoardEvent::Place(b, _))
                | (BoardEvent::Place(a, _), BoardEvent::Lift(b))
                    if a == b && w[1].at - w[0].at < 100 =>
                {
                    Some(w[1].at - w[0].at)
                }
                _ => None,
            })
            .collect()
    }

    #[test]
    fn blips_last_5_to_60_ms() {
        let opts = SimOptions {
            seed: 7,
            noise: eboard::Noise::None,
            ..SimOptions::default()
        };
        assert!(flickers(&run(SCANDINAVIAN, opts)).is_empty());
        let blips = flickers(&run(
            SCANDINAVIAN,
            SimOptions {
                hostile: Hostile {
                    blips: true,
                    ..Hostile::default()
                },
                ..opts
            },
        ));
        assert!(blips.len() >= 3, "{blips:?}");
        assert!(blips.iter().all(|d| (5..=60).contains(d)), "{blips:?}");
    }

    #[test]
    fn slow_hands_hold_pieces_and_castle_slowly() {
        let mut held = 0u64;
        let mut castling_gap = 0u64;
        for seed in 0..30 {
            let events = run(
                SCANDINAVIAN,
                SimOptions {
                    seed,
                    hostile: Hostile {
                        slow_hands: true,
                        ..Hostile::default()
                    },
                    noise: eboard::Noise::Human,
                    ..SimOptions::default()
                },
            );
            for w in events.windows(2) {
                if let (BoardEvent::Lift(_), BoardEvent::Place(..)) = (&w[0].event, &w[1].event) {
                    held = held.max(w[1].at - w[0].at);
                }
                if let (BoardEvent::Place(Square::G1, _), BoardEvent::Lift(Square::H1)) =
                    (&w[0].event, &w[1].event)
                {
                    castling_gap = castling_gap.max(w[1].at - w[0].at);
                }
            }
        }
        assert!((2000..=20_000).contains(&held), "held {held} ms at most");
        assert!(
            (1000..=5000).contains(&castling_gap),
            "rook {castling_gap} ms after the king at most"
        );
    }

    #[test]
    fn a_rotated_board_reports_the_start_position_turned_round() {
        let events = run(
            SCANDINAVIAN,
            SimOptions {
                hostile: Hostile {
                    rotated: true,
                    ..Hostile::default()
                },
                noise: eboard::Noise::None,
                ..SimOptions::default()
            },
        );
        let mut turned = Board::default();
        turned.rotate_180();
        let physical: Vec<&BoardEvent> = events
            .iter()
            .map(|e| &e.event)
            .filter(|e| {
                matches!(
                    e,
                    BoardEvent::Board(_) | BoardEvent::Lift(_) | BoardEvent::Place(..)
                )
            })
            .collect();
        assert_eq!(
            physical[0],
            &BoardEvent::Board(Box::new(Scan::from_board(&turned, true)))
        );
        // 1. e4: the pawn leaves what the board calls d7 for d5.
        assert_eq!(physical[1], &BoardEvent::Lift(Square::D7));
        assert!(matches!(physical[2], BoardEvent::Place(Square::D5, _)));
    }

    /// On occupancy a capture shows only its emptied square, as the piece
    /// in the hand does; after a checkmate with no clock nothing comes to
    /// tell them apart, so the scans must catch the captured piece taken
    /// off. 2.Rxe8# is the only capture the rook has, which alone would
    /// let a scan skip it.
    #[test]
    fn a_last_capture_with_no_clock_is_scanned_being_made() {
        const BACK_RANK: &str = "[SetUp \"1\"]\n[FEN \"6k1/5ppp/8/1b6/8/8/5PPP/4R1K1 b - - 0 1\"]\n\n\
            1... Be8 2. Rxe8# 1-0\n";
        for seed in 0..30 {
            let events = run(
                BACK_RANK,
                SimOptions {
                    seed,
                    occupancy: true,
                    hostile: Hostile {
                        scan_ms: Some(1000),
                        ..Hostile::default()
                    },
                    ..SimOptions::default()
                },
            );
            let e8: Vec<bool> = events
                .iter()
                .filter_map(|e| match &e.event {
                    BoardEvent::Board(scan) => Some(piece(scan, Square::E8).is_some()),
                    _ => None,
                })
                .collect();
            let filled = e8.iter().position(|&full| full);
            assert!(
                filled.is_some_and(|i| e8[i..].contains(&false)),
                "seed {seed}: no scan shows e8 emptied for the capture: {e8:?}"
            );
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_stream() {
        let opts = SimOptions {
            seed: 3,
            clock: true,
            noise: eboard::Noise::Rough,
            ..SimOptions::default()
        };
        let a = run(SCANDINAVIAN, opts);
        let b = run(SCANDINAVIAN, opts);
        assert_eq!(a, b);
        assert!(
            a.iter()
                .any(|e| matches!(e.event, BoardEvent::Lift(_) | BoardEvent::Place(..)))
        );
    }

    #[test]
    fn simulate_takes_the_hostile_flags() {
        let out = crate::cli::eboard(
            &[
                "simulate",
                "-",
                "--hostile",
                "--occupancy",
                "--clock",
                "--seed",
                "4",
            ],
            Some(SCANDINAVIAN),
        );
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let script = String::from_utf8(out.stdout).unwrap();
        assert!(eboard::parse_script("out", &script).is_ok());
        assert!(script.lines().any(|l| l.contains(" board ")));
        let out = crate::cli::eboard(&["simulate", "pgn/demo-round.pgn", "--scan-ms", "0"], None);
        assert_eq!(out.status.code(), Some(2));
    }
}

#[test]
fn replay_reads_a_board_turned_round_when_told() {
    let script = "tests/scripts/rotated-occupancy-board-read-as-configured.board";
    let turned = crate::cli::eboard(
        &["replay", "--json", "--orientation", "rotated", script],
        None,
    );
    assert!(turned.status.success());
    let json = String::from_utf8(turned.stdout).unwrap();
    assert!(json.contains(r#""moves":["e4","d5","exd5"]"#), "{json}");
    let plain = crate::cli::eboard(&["replay", "--json", script], None);
    assert!(
        !String::from_utf8(plain.stdout)
            .unwrap()
            .contains(r#""moves":["e4","d5","exd5"]"#)
    );
    let bad = crate::cli::eboard(&["replay", "--orientation", "sideways", script], None);
    assert_eq!(bad.status.code(), Some(2));
}
