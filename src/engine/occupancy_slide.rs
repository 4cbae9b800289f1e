//! A piece caught on its way, on a board that only senses occupancy and
//! reports by scans. A dragged piece stands on each square of its path for
//! a moment (well under a scan period), and castling begun with the rook
//! shows the rook on its castling square with the king still home: a scan
//! catching either reads like a move to that square. Occupancy cannot tell
//! the two stories apart, but time can: a piece on its way is gone from
//! the square at the next scan (or, castling, the king has followed),
//! where a piece put down stays. So such a square is weighed like a blip:
//! the move waits for the next scan (docs/design/reconstruction.md, the
//! slide), and a press meanwhile says the move was made, not where.

use shakmaty::{Bitboard, Chess, Move, Position, Role, Square, attacks};

use super::snapshots::Snapshots;

/// The square `mv`, played from `before`, fills, if the scan that filled
/// it (`changed`: the squares the last scan changed) may have caught the
/// same piece on its way to a square further along the same line (another
/// legal move of it), or the rook of a castling begun with the rook.
pub(super) fn slide_square(before: &Chess, mv: Move, changed: Bitboard) -> Bitboard {
    let Move::Normal {
        from,
        to,
        capture: None,
        ..
    } = mv
    else {
        return Bitboard::EMPTY;
    };
    if !changed.contains(to) {
        return Bitboard::EMPTY;
    }
    let on_the_way = before
        .legal_moves()
        .iter()
        .any(|&other| other != mv && passes(before, other, from, to));
    if on_the_way {
        Bitboard::from_square(to)
    } else {
        Bitboard::EMPTY
    }
}

/// Whether a square of `filled` (filled by the last scan, which shows
/// `shown`) may hold a piece caught on its way: a rook, bishop or queen of
/// `pos` gone from its square, in line with the square, with squares
/// further on it may be dragged to (the a8 rook taking back on d8 caught
/// on b8).
pub(super) fn may_be_on_its_way(pos: &Chess, shown: Bitboard, filled: Bitboard) -> bool {
    let board = pos.board();
    let gone = board.occupied() & !shown;
    filled.into_iter().any(|on| {
        gone.into_iter().any(|from| {
            let reach = match board.role_at(from) {
                Some(Role::Rook) => attacks::rook_attacks(from, Bitboard::EMPTY),
                Some(Role::Bishop) => attacks::bishop_attacks(from, Bitboard::EMPTY),
                Some(Role::Queen) => attacks::queen_attacks(from, Bitboard::EMPTY),
                _ => Bitboard::EMPTY,
            };
            reach
                .into_iter()
                .any(|to| attacks::between(from, to).contains(on))
        })
    })
}

/// Whether the board `shown` differs from `pos` only by one of the
/// mover's pieces gone from its square and caught, by the last scan
/// (`changed`), on a square of the path of one of its legal moves: a move
/// under way (a slide, 1), not plies no scan showed to be searched for
/// (35...Re7 with the rook caught on e6 is no 35...Re7 36.Qe6 Rd7). The
/// next scan shows where it was put down.
pub(super) fn caught_on_its_way(pos: &Chess, shown: Bitboard, changed: Bitboard) -> bool {
    let board = pos.board();
    let removed = board.occupied() & !shown;
    let added = shown & !board.occupied();
    let (Some(from), Some(on)) = (removed.single_square(), added.single_square()) else {
        return false;
    };
    board.by_color(pos.turn()).contains(from)
        && changed.contains(on)
        && pos.legal_moves().iter().any(|&m| passes(pos, m, from, on))
}

/// Whether `other`, played from `before`, moves the piece on `from` over
/// `on` on its way, or is the castling whose king crosses `on` or whose
/// rook, moved first, stands on `on` on its way or at its end (h1 to f1
/// crosses g1, the king's square: the king put down there next hides the
/// square the rook slid over).
fn passes(before: &Chess, other: Move, from: Square, on: Square) -> bool {
    match other {
        Move::Normal { from: f, to, .. } => f == from && attacks::between(from, to).contains(on),
        Move::Castle { king, rook } => {
            let Some(side) = other.castling_side() else {
                return false;
            };
            let turn = before.turn();
            let king_path = king == from && attacks::between(king, side.king_to(turn)).contains(on);
            let rook_to = side.rook_to(turn);
            let rook_first =
                rook == from && (rook_to == on || attacks::between(rook, rook_to).contains(on));
            king_path || rook_first
        }
        _ => false,
    }
}

/// The cost table's figures that weigh a slide against moves made.
use super::cost::{
    BLIP, HAND, INFERRED_PLY as INFERRED, MARGIN, MISSING_PRESS, SLIDE, TRACELESS_PLY,
    presses_missing, within_margin,
};

/// One story's lines from the record's position, with the snapshots
/// (since event `since`, the record's last state) as that story reads
/// them.
pub(super) struct Story<'a> {
    pub lines: &'a [Vec<Move>],
    pub snapshots: &'a Snapshots,
    pub since: u64,
    /// With a clock, the presses since the record's position (in turn).
    pub presses: Option<usize>,
    /// The event of the scan that showed the square weighed: the fault
    /// each story assumes there weighs it.
    pub weighed: u64,
}

impl Story<'_> {
    /// The cheapest line: `fault` for the story's one fault (its own, or
    /// as `fault` says for a line), 1 per scan that shows none of the
    /// line's positions exactly (a move in progress caught), 2 per ply no
    /// snapshot showed (3 more if no snapshot saw a trace of it), and 3 per
    /// press the line's completed moves lack.
    pub(super) fn cost(&self, pos: &Chess, fault: impl Fn(&[Move]) -> usize) -> Option<usize> {
        self.lines
            .iter()
            .map(|l| {
                fault(l)
                    + HAND
                        * self
                            .snapshots
                            .caught_in_motion(pos, l, self.since, Some(self.weighed))
                    + INFERRED
                        * self
                            .snapshots
                            .unshown_plies_so_far(pos, l, self.since)
                            .len()
                    + TRACELESS_PLY * self.snapshots.traceless_plies(pos, l, self.since)
                    + MISSING_PRESS * self.presses.map_or(0, |p| presses_missing(l.len(), p))
            })
            .min()
    }
}

/// Of candidate lines followed on from `pos` on a board that only senses
/// occupancy, each explaining the scans exactly, those whose
/// cost is within the margin of the cheapest: 2 per ply no snapshot since
/// event `since` showed. A story whose capture, begun at one scan, needs
/// moves no scan showed to reach the next (1.Qf4 e4 2.Qe5 Kf8 with the e4
/// pawn taken off, then the king on g8 and the queen back on e5) loses to
/// one the scans show move by move (1.Qe4 Kf8 2.Qxe5 Kg8).
pub(super) fn cheapest_lines(
    pos: &Chess,
    lines: Vec<Vec<Move>>,
    snapshots: &Snapshots,
    since: u64,
) -> Vec<Vec<Move>> {
    within_margin(lines, |l| INFERRED * snapshots.plies_unshown(pos, l, since))
}

/// Which story the next scan favours, once the square the last of `moves`
/// (from `pos`) filled is shown back empty: `made`, the lines that go on
/// from `moves` as they were read (or `past_blip`, as they were read with
/// the square's piece at rest and the scan after them alone blind to it: a
/// blip, 3), or `slid`, those that read the square as the piece's path and
/// show where it went on to; a line of `slid` whose piece never crossed
/// the square reads it as a blip (3), not a slide (1); one that stops
/// short of its move, its piece off at the last scan and a square past
/// the one weighed still empty for it (the piece it can take there off,
/// or none there), has it in the hand on its way (1). Each ply no
/// snapshot showed costs 2: the slide's piece is put down at the end of
/// its path at once, so the next scan shows it there. `None` if the
/// square is no slide square, or no line of one story is left.
pub(super) fn weigh_slide(
    pos: &Chess,
    moves: &[Move],
    back: Bitboard,
    [made, past_blip]: [Story<'_>; 2],
    slid: Story<'_>,
    made_early: usize,
) -> Option<SlideVerdict> {
    let (&last, before) = moves.split_last()?;
    let mut from = pos.clone();
    for &m in before {
        from.play_unchecked(m);
    }
    let square = slide_square(&from, last, Bitboard::FULL) & back;
    let on = square.first()?;
    let k = moves.len();
    let gone_on = made.cost(pos, |_| made_early);
    let stood = past_blip.cost(pos, |_| BLIP);
    let made_cost = gone_on.into_iter().chain(stood).min()?;
    // The piece still in the hand at the last scan (its square empty, the
    // line stopping short of its move), with a square past the one it was
    // caught on still empty for it (the piece it can take there already
    // off, or none there), is on its way as much as one put down further
    // on: a dragged piece reads on no square between two it crosses, nor
    // just above the one it is put down on (Qxa6 caught on d3, then a6 and
    // d3 both empty; Bd3 caught on g6, then g6 and h7 both empty).
    let lifted = slid.snapshots.last().is_some_and(|(_, shown)| {
        last.from().is_some_and(|f| {
            !shown.contains(f)
                && from
                    .legal_moves()
                    .iter()
                    .any(|&c| !shown.contains(c.to()) && passes(&from, c, f, on))
        })
    });
    // The piece crossed the square on its way, after the moves before it
    // or fewer of them (a capture begun with its victim taken off, before
    // the scans that read those moves).
    let crossed = |l: &[Move]| {
        let mut at = pos.clone();
        (0..k.min(l.len())).any(|j| {
            let crosses = l[..j] == before[..j]
                && l[j].role() == last.role()
                && last.from().is_some_and(|f| passes(&at, l[j], f, on));
            at.play_unchecked(l[j]);
            crosses
        }) || lifted && l == before
    };
    let slid_cost = slid.cost(pos, |l| if crossed(l) { SLIDE } else { BLIP })?;
    Some(if slid_cost + MARGIN < made_cost {
        SlideVerdict::Slid
    } else if made_cost + MARGIN < slid_cost {
        SlideVerdict::Made
    } else if slid_cost < made_cost {
        SlideVerdict::BothSlidCheaper
    } else {
        SlideVerdict::Both
    })
}

/// See [`weigh_slide`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SlideVerdict {
    /// The piece was on its way: the square was its path.
    Slid,
    /// The move was made there, and the board went on.
    Made,
    /// Both within the margin, the move made no dearer: neither is
    /// recorded yet.
    Both,
    /// Both within the margin, the slide the cheaper: neither is recorded
    /// yet, and recording the move made would publish a move the
    /// cheapest story says did not happen.
    BothSlidCheaper,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::position;

    fn normal(pos: &Chess, from: Square, to: Square) -> Move {
        pos.legal_moves()
            .into_iter()
            .find(|m| m.from() == Some(from) && m.to() == to)
            .unwrap()
    }

    #[test]
    fn a_square_short_of_the_end_of_a_line_may_be_a_slide() {
        // 1.d4 d5 2.e4 e6 3.Nc3: the f8 bishop crosses e7 on its way to b4.
        let pos = position("rnbqkbnr/ppp2ppp/4p3/3p4/3PP3/2N5/PPP2PPP/R1BQKBNR b KQkq - 1 3");
        let be7 = normal(&pos, Square::F8, Square::E7);
        let e7 = Bitboard::from_square(Square::E7);
        assert_eq!(slide_square(&pos, be7, Bitboard::FULL), e7);
        // A scan before this one already showed it there: no slide
        // stands that long.
        assert_eq!(slide_square(&pos, be7, !e7), Bitboard::EMPTY);
        // b4 too: the bishop may be on its way on to a3.
        let bb4 = normal(&pos, Square::F8, Square::B4);
        assert_eq!(
            slide_square(&pos, bb4, Bitboard::FULL),
            Bitboard::from_square(Square::B4)
        );
        // A knight is carried: it crosses nothing.
        let ne7 = normal(&pos, Square::G8, Square::E7);
        assert_eq!(slide_square(&pos, ne7, Bitboard::FULL), Bitboard::EMPTY);
        // Nor is the last square of a pawn's double step on its way.
        let e5 = normal(&pos, Square::E6, Square::E5);
        assert_eq!(slide_square(&pos, e5, Bitboard::FULL), Bitboard::EMPTY);
    }

    /// The occupancy after `line` from `pos`.
    fn after(pos: &Chess, line: &[Move]) -> Bitboard {
        let mut pos = pos.clone();
        for &m in line {
            pos.play_unchecked(m);
        }
        pos.board().occupied()
    }

    #[test]
    fn a_line_whose_piece_never_crossed_the_square_reads_it_as_a_blip() {
        // Rd1-e1 shown, then e1 empty: the rook may have crossed e1 on its
        // way to f1 (a slide, 1), not on its way to a1 (a blip, 3).
        let pos = position("4k3/8/8/8/8/8/8/3R2K1 w - - 0 1");
        let re1 = normal(&pos, Square::D1, Square::E1);
        let kd8 = {
            let mut p = pos.clone();
            p.play_unchecked(re1);
            normal(&p, Square::E8, Square::D8)
        };
        // Made, the next scan alone blind to e1, and ...Kd8 never shown:
        // 3 + 2.
        let made_line = vec![vec![re1, kd8]];
        let mut blind = Snapshots::default();
        blind.push(1, after(&pos, &[re1]));
        blind.push(2, after(&pos, &[re1]));
        let made = |lines| Story {
            lines,
            snapshots: &blind,
            since: 0,
            presses: None,
            weighed: 1,
        };
        for (to, verdict) in [
            (Square::F1, SlideVerdict::Slid),
            (Square::A1, SlideVerdict::BothSlidCheaper),
        ] {
            let line = vec![normal(&pos, Square::D1, to)];
            let mut repaired = Snapshots::default();
            repaired.push(1, pos.board().occupied());
            repaired.push(2, after(&pos, &line));
            let slid = [line];
            let story = Story {
                lines: &slid,
                snapshots: &repaired,
                since: 0,
                presses: None,
                weighed: 1,
            };
            let got = weigh_slide(
                &pos,
                &[re1],
                Bitboard::from_square(Square::E1),
                [made(&[]), made(&made_line)],
                story,
                0,
            );
            assert_eq!(got, Some(verdict), "Rd1-{to}");
        }
    }

    #[test]
    fn a_rook_on_its_castling_square_may_be_castling_begun() {
        // White may castle short: Rf1 is the rook's half of O-O (Art. 3.8.2).
        let pos = position("rnbqk2r/pppp1ppp/5n2/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4");
        let rf1 = normal(&pos, Square::H1, Square::F1);
        assert_eq!(
            slide_square(&pos, rf1, Bitboard::FULL),
            Bitboard::from_square(Square::F1)
        );
        // The king on f1 is on its way to g1.
        let kf1 = normal(&pos, Square::E1, Square::F1);
        assert_eq!(
            slide_square(&pos, kf1, Bitboard::FULL),
            Bitboard::from_square(Square::F1)
        );
        // The knight's move to g1 is no castling.
        let ng1 = normal(&pos, Square::F3, Square::G1);
        assert_eq!(slide_square(&pos, ng1, Bitboard::FULL), Bitboard::EMPTY);
    }

    /// The line `sans` (UCI) from `pos`.
    fn uci_line(pos: &Chess, ucis: &[&str]) -> Vec<Move> {
        let mut p = pos.clone();
        ucis.iter()
            .map(|u| {
                let m = u
                    .parse::<shakmaty::uci::UciMove>()
                    .unwrap()
                    .to_move(&p)
                    .unwrap();
                p.play_unchecked(m);
                m
            })
            .collect()
    }

    #[test]
    fn each_completed_move_the_clock_did_not_see_costs_a_blip() {
        // 1.Re3 Kf8 2.Re5, every position shown by a scan: with one press
        // since the record's position, the second completed move (1...Kf8,
        // completed by 2.Re5) had no press: 3. Without a clock, nothing.
        let pos = position("6k1/8/8/8/8/8/8/4R1K1 w - - 0 1");
        let line = uci_line(&pos, &["e1e3", "g8f8", "e3e5"]);
        let mut shown = Snapshots::default();
        for k in 1..=line.len() {
            shown.push(k as u64, after(&pos, &line[..k]));
        }
        let lines = [line];
        let story = |presses| Story {
            lines: &lines,
            snapshots: &shown,
            since: 0,
            presses,
            weighed: 0,
        };
        assert_eq!(story(None).cost(&pos, |_| 0), Some(0));
        assert_eq!(story(Some(1)).cost(&pos, |_| 0), Some(BLIP));
        assert_eq!(story(Some(2)).cost(&pos, |_| 0), Some(0));
        // The last move may wait for its press.
        assert_eq!(presses_missing(1, 0), 0);
    }

    #[test]
    fn a_story_reading_scan_after_scan_as_a_hand_at_work_is_the_dearer() {
        // ...Bxd1 dragged over f3 and caught there (g4 empty, f3 full),
        // then f3 empty with d1 full, then f1 empty: the bishop took on d1
        // and the f1 rook took back, each scan a position (a slide, 1).
        // Read as ...Bf3 made, both later scans are White's hand taking
        // f3 (the bishop off, then the rook lifted): two scans of a hand
        // at work (2), where the slide's story shows positions.
        let pos = position("6k1/8/8/8/6b1/8/7K/3R1R2 b - - 0 1");
        let made_line = uci_line(&pos, &["g4f3"]);
        let slid_line = uci_line(&pos, &["g4d1", "f1d1"]);
        let f3 = Bitboard::from_square(Square::F3);
        let caught = after(&pos, &made_line);
        let taken = after(&pos, &slid_line[..1]);
        let mut shown = Snapshots::default();
        shown.push(1, caught);
        shown.push(2, taken);
        shown.push(3, after(&pos, &slid_line));
        let mut repaired = shown.clone();
        repaired.forget_blips(1, f3);
        assert_eq!(shown.caught_in_motion(&pos, &made_line, 0, Some(1)), 2);
        assert_eq!(repaired.caught_in_motion(&pos, &slid_line, 0, Some(1)), 0);
        // Weighing every scan, the made story's first shows its position.
        assert_eq!(shown.caught_in_motion(&pos, &made_line, 0, None), 2);
        let story = |lines, snapshots| Story {
            lines,
            snapshots,
            since: 0,
            presses: None,
            weighed: 1,
        };
        let made = [made_line.clone()];
        let slid = [slid_line];
        let got = weigh_slide(
            &pos,
            &made_line,
            f3,
            [story(&made, &shown), story(&[], &shown)],
            story(&slid, &repaired),
            0,
        );
        assert_eq!(got, Some(SlideVerdict::BothSlidCheaper));
    }

    #[test]
    fn candidates_needing_moves_no_scan_showed_lose_to_one_the_scans_show() {
        // 1.Qe4 Kf8 2.Qxe5 Kg8 against 1.Qf4 e4 2.Qe5 Kf8 3.Qxe4 Kg8 4.Qe5:
        // the scans showed f4 (read as the queen in the air), e4, f8, e5
        // with e4 empty, then g8.
        let pos = position("6k1/8/8/4p3/7Q/8/8/6K1 w - - 0 1");
        let slid = uci_line(&pos, &["h4e4", "g8f8", "e4e5", "f8g8"]);
        let made = uci_line(
            &pos,
            &["h4f4", "e5e4", "f4e5", "g8f8", "e5e4", "f8g8", "e4e5"],
        );
        let mut shown = Snapshots::default();
        let queen_up = pos.board().occupied() ^ Bitboard::from_square(Square::H4);
        shown.push(1, queen_up);
        for k in 1..=slid.len() {
            shown.push(1 + k as u64, after(&pos, &slid[..k]));
        }
        // Both stories pass through every scan; the longer one shows
        // neither 1...e4 nor 3.Qxe4 nor 3...Kg8 (nor 1.Qf4: f4 was read as
        // the queen in the air).
        assert!(shown.allow(&pos, &made, 0, Bitboard::EMPTY));
        assert_eq!(shown.unshown_plies(&pos, &made, 0), vec![1, 2, 5, 6]);
        assert_eq!(shown.plies_unshown(&pos, &slid, 0), 0);
        let left = cheapest_lines(&pos, vec![made, slid.clone()], &shown, 0);
        assert_eq!(left, vec![slid]);
    }
}
