//! The reading step: what a settled board state shows, given the record and
//! the phase. Pure: it decides, [`Engine`](super::Engine) applies.
//!
//! A settled state that differs from the game position is explained, in
//! this order, by: one legal move (the move is *made*, Art. 4.7); the last
//! move, not yet completed, changed into another (Art. 4.7); the last move
//! taken back; two legal moves in a row; an older position restored; three
//! legal moves. When several different moves explain the state, the engine
//! waits for more events rather than guess.

use std::cmp::Ordering;

use shakmaty::{Bitboard, ByColor, Chess, Color, Move, Outcome, Position, Square};

use super::{
    BoardKind,
    cost::{BLIP, HAND, INFERRED_PLY, MARGIN, TRACELESS_PLY, presses_missing},
    hypotheses::SNAPSHOT_PLIES,
    occupancy_slide::{caught_on_its_way, cheapest_lines, slide_square},
    passed_story::reweigh,
    phase::Phase,
    scan_slide::{capture_slide_caught, gone_on_past},
    scanned::{Hands, ScanReading, Slides, SnapshotLines, confirm, passed_over, read_scan_after},
    snapshots::{OddSquares, Snapshots},
};
use crate::{
    event::Millis,
    game::{Game, Termination, draw, win},
    matcher::{Explanation, distinct, explain},
    sensed::SensedBoard,
};

/// What a settled board state shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reading {
    /// Nothing to record: the game position, a move in progress, a state
    /// several moves explain, or one nothing explains.
    Wait,
    /// A scan that a move in progress may explain (perhaps after moves the
    /// scans missed): nothing is certain yet.
    Hand,
    /// A scan that several sequences of moves explain, and no hand does:
    /// the candidates, for the arbiter.
    Ambiguous(Vec<Vec<Move>>),
    /// Moves made from the game position: one (Art. 4.7), or two or three
    /// in a row whose positions the board never showed.
    Moves(Vec<Move>),
    /// The candidates listed earlier, gone on: the lines (from the game
    /// position) that still fit the board, and the moves all of them begin
    /// with that are certain now.
    Narrowed {
        /// Moves made, to record.
        certain: Vec<Move>,
        /// The lines still possible, each beginning with `certain`.
        lines: Vec<Vec<Move>>,
        /// One line left, whose last move only a possible slide showed
        /// (alone, or beside `certain` with a hand after it): the scan is
        /// read again from `certain` recorded, not listed.
        again: bool,
    },
    /// Moves a snapshot shows, some of which stand only if none of the
    /// squares it changed was a blip: the next scan tells (or the one after
    /// it, for one move the blip would make a capture).
    Unconfirmed {
        /// Moves made, to record.
        certain: Vec<Move>,
        /// The moves after them: made, unless at the next scan only a
        /// blip on one of `suspect` explains the board.
        then: Vec<Move>,
        /// The squares whose blip would explain the snapshot otherwise.
        suspect: Bitboard,
    },
    /// The last move, not yet completed, changed into this one (Art. 4.7).
    Changed(Move),
    /// The board went back to the position after this many half-moves.
    Takeback(usize),
    /// Both kings on the centre squares: the players signal this result.
    ResultSignal(Outcome),
    /// The player to move pressed his clock and the opponent then moved
    /// (Art. 7.5.3).
    ClockWithoutMove(Color),
    /// After an irregularity, the position before it (no move), or a legal
    /// move from it (Art. 7.5.1).
    Restored(Option<Move>),
    /// After an illegal move, the opponent moved from the position it left.
    IllegalStands {
        /// The illegal move, and when it was made.
        illegal: (Move, Millis),
        /// The opponent's reply.
        reply: Move,
    },
    /// The game is over and the pieces are set up for a new one.
    NewGame,
    /// The game seemed over by a promotion (an occupancy board reads the new
    /// piece as a queen); the board now identifies another piece: this move.
    Repromoted(Move),
}

/// Whether a full scan changed the sensors last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scanned {
    /// No: square-by-square reports, every change seen.
    No,
    /// One of a scanning board's snapshots.
    Snapshot,
    /// A dump after square-by-square reports (a reconnection).
    Dump,
    /// Square-by-square reports after a dump on a board that does not
    /// identify every piece, before the record has caught up with the
    /// dump: squares may have changed unseen before it.
    AfterDump,
}

/// What bears on reading a state besides the board: the clock and the
/// game's end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Moment<'a> {
    /// A player pressed his clock before the board showed his move.
    pub pending_press: ByColor<bool>,
    /// How many moves the clock shows completed beyond the record (see
    /// [`Clock::presses_ahead`](super::complete::Clock::presses_ahead)).
    pub presses_ahead: usize,
    /// The game is being ended (a resignation, a draw agreed, a result
    /// given): the board stands as the players left it, with no piece in
    /// the air.
    pub closing: bool,
    /// The candidates listed for a board that skipped states (each a line
    /// of moves from the game position): a later scan may show one of them
    /// gone on.
    pub candidates: &'a [Vec<Move>],
    /// The lines an earlier scan from the same position was read among,
    /// as a move in progress (a board that only senses occupancy and only
    /// scans): a later scan that no line from the position reaches may
    /// show one of them gone on.
    pub held: &'a [Vec<Move>],
    /// The lines that exactly explained an earlier scan from the same
    /// position, which was read as a hand at work instead (a board that
    /// identifies pieces and only scans): a later reading of other moves
    /// stands only if none of them, gone on, explains the board as well.
    pub passed: &'a [Vec<Move>],
    /// The candidates are a slide's stories, listed by their costs: they
    /// are followed by the same costs.
    pub costed: bool,
    /// A clock was pressed in this session: a move a reading completes
    /// beyond the presses since the record had its press forgotten, or
    /// still to come.
    pub clock: bool,
}

/// Reads the settled board state at `moment`. `arbiter`: irregularities
/// are watched for; `scanned`: whether a full scan changed the sensors
/// last, so states may have been skipped.
pub fn read(
    game: &Game,
    sensed: &SensedBoard,
    snapshots: &Snapshots,
    phase: &Phase,
    moment: Moment<'_>,
    arbiter: bool,
    scanned: Scanned,
) -> Reading {
    let pending_press = moment.pending_press;
    if game.is_over() {
        return read_after_game(game, sensed);
    }
    if let Phase::Restoring { attempt, .. } = phase {
        let illegal = attempt
            .as_ref()
            .and_then(|(a, at)| a.on_board().map(|m| (m, *at)));
        return read_restoring(game, sensed, illegal);
    }
    if sensed.shows_position(game.position()) {
        return Reading::Wait;
    }
    // On occupancy alone nearly every snapshot has some other explanation
    // with a square changed unseen: there the squares' histories decide.
    // A dump comes once, after an outage: it is read from itself.
    let moves = if matches!(scanned, Scanned::Dump | Scanned::AfterDump)
        || scanned == Scanned::Snapshot && sensed.identifies_all()
    {
        read_scan_moves(game, sensed, moment, scanned, snapshots)
    } else if scanned == Scanned::Snapshot && snapshots.board() == BoardKind::Scanning {
        read_occupancy_snapshot(game, sensed, snapshots, moment)
    } else if scanned == Scanned::No {
        read_event_moves(game, sensed)
    } else {
        read_moves(game, sensed)
    };
    let moves = match moves {
        // The last move changed into a capture on a square that only a dump
        // may have refilled: nothing shows which capture, or that it is not
        // a hand.
        Some(Reading::Changed(m))
            if matches!(scanned, Scanned::Dump | Scanned::AfterDump)
                && !sensed.identifies_all()
                && m.is_capture() =>
        {
            Some(Reading::Hand)
        }
        // A scanning board's dump (its first scan, or its first after the
        // link came back) is a snapshot like any other: it may catch a
        // piece on its way, so the last move it shows waits for the next
        // scan as a snapshot's would (docs/design/reconstruction.md, the
        // slide).
        Some(Reading::Moves(moves))
            if scanned == Scanned::Dump
                && snapshots.board() == BoardKind::Scanning
                && !sensed.identifies_all()
                && !moment.closing =>
        {
            let slide = last_slide(game.position(), &moves, snapshots, moment.presses_ahead);
            let mut certain = moves;
            let then = certain.split_off(certain.len() - 1);
            Some(if slide.any() {
                Reading::Unconfirmed {
                    certain,
                    then,
                    suspect: slide,
                }
            } else {
                Reading::Moves([certain, then].concat())
            })
        }
        other => other,
    };
    moves
        .or_else(|| result_signal(sensed).map(Reading::ResultSignal))
        .or_else(|| clock_without_move(game, sensed, pending_press, arbiter))
        .unwrap_or(Reading::Wait)
}

/// A snapshot of a board that only senses occupancy. What the squares'
/// histories show besides moves made stands (the last move changed, if the
/// snapshots allow it; moves taken back). Moves made, and the several
/// single moves the histories cannot choose between, are read from the
/// snapshots themselves ([`SnapshotLines::read`]): a capture between two scans
/// leaves no trace in the histories, so they would take a line with an
/// unseen refill of an empty square over the real one with an unseen
/// capture.
fn read_occupancy_snapshot(
    game: &Game,
    sensed: &SensedBoard,
    snapshots: &Snapshots,
    moment: Moment<'_>,
) -> Option<Reading> {
    let pos = game.position();
    let n = game.ply();
    let since = game.basis(n);
    let histories = read_histories(game, sensed, snapshots);
    // Several single moves the histories allow are weighed by the
    // snapshots too; if none fits them, the state waits as the histories
    // say.
    let waits = histories == Some(Reading::Wait);
    match histories {
        Some(Reading::Moves(_) | Reading::Wait) | None => {
            // A promoted pawn may still be exchanged for the new piece
            // (Art. 4.6.2 counts the move made when the pawn is released
            // there; an occupancy board sees the pawn).
            let settling = match game.moves().last() {
                Some(last) if last.mv.is_promotion() => Bitboard::from_square(last.mv.to()),
                _ => Bitboard::EMPTY,
            };
            let pressed = moment.presses_ahead;
            let hands = !moment.closing;
            let mut lines = SnapshotLines {
                pos,
                sensed,
                snapshots,
                since,
                settling,
            };
            // While lines are listed, each is followed with the scans'
            // slides weighed on it (`narrowed`); read on its own, the
            // board is asked only for a story none of them is, and a
            // piece caught on its path would find a listed line again by
            // another road and list it anew.
            let paths = moment.candidates.is_empty();
            let (mut reading, in_two_places) = lines.read_costed(pressed, hands, paths);
            // A square one scan alone showed changed may have been a blip
            // (a 5-60 ms flicker that scan caught), if nothing explains the
            // board with it: not if a capture there was possible on the
            // way by a piece that has left its square since (a captured
            // piece taken off before the capturing one is put down looks
            // the same), nor a legal move to a square filled right after
            // the record's position, unless the scan that filled it showed
            // that move's piece still on its square (d8 caught full, the
            // f8 rook that could go there still home). Squares where such
            // a capture fits keep what the scan showed, and the others are
            // tried again: c6 caught empty while 5...cxd4 6.Nxd4 is
            // scanned with d4 empty between is a blip, d4 is not. The
            // capture must fit the scan that caught the square empty (see
            // `capturable`).
            // Lines that need a scan to have caught a piece in two places
            // cost a blip too: they are weighed against the scans read
            // with one scan's odd squares taken for blips.
            let repaired;
            if (reading == ScanReading::None || in_two_places > 0)
                && moment.candidates.is_empty()
                && let Some((odd, blips, second)) = read_past_blips(&lines, pressed, hands)
                && second != reading
            {
                let again = SnapshotLines {
                    snapshots: &odd,
                    ..lines
                };
                let raw_cheaper = reading != ScanReading::None
                    && match weigh_blips(
                        &lines,
                        (&reading, in_two_places),
                        &again,
                        (&second, blips),
                    ) {
                        Ordering::Equal => return Some(Reading::Wait),
                        cheaper => cheaper == Ordering::Less,
                    };
                if !raw_cheaper {
                    repaired = odd;
                    reading = second;
                    lines = SnapshotLines {
                        snapshots: &repaired,
                        ..lines
                    };
                }
            }
            if reading == ScanReading::None
                && moment.candidates.is_empty()
                && let Some(held) = narrowed_from_held(&lines, moment, pressed)
            {
                return Some(held);
            }
            conclude_snapshot(reading, &lines, snapshots, moment, hands, waits)
        }
        other => other,
    }
}

/// Nothing within reach of the position: the lines a hand was read among
/// (`moment.held`) may have gone on. After 2.Nc3, scans that each catch
/// the next hand at work show 2...f5 3.g3 with Black's hand on the g8
/// knight, then 3...Nf6 with White's on the f1 bishop, then 4.Bg2: four
/// moves on, more than one scan is read ahead. One line left is read as
/// far as the snapshots trust it, and the scan is read again from there;
/// with several, the board waits (`None`); the lines are weighed by the
/// plies no scan showed, as listed ones are (the cost table: a slide the
/// scans show beats a detour they do not). A line gone on so, with plies
/// no scan showed, against the record's own moves with one square the
/// last scan changed read as a blip or a taken piece set down for a
/// moment, within the margin: the next scan tells (a wait).
fn narrowed_from_held(
    lines: &SnapshotLines<'_>,
    moment: Moment<'_>,
    pressed: usize,
) -> Option<Reading> {
    if moment.held.is_empty() {
        return None;
    }
    let Some(Reading::Narrowed {
        certain,
        lines: left,
        again,
    }) = narrowed(
        lines,
        Moment {
            candidates: moment.held,
            costed: true,
            ..moment
        },
        false,
    )
    else {
        return None;
    };
    if left.len() != 1 || certain.is_empty() {
        return None;
    }
    if last_scan_rival(lines, &left[0], pressed) {
        return Some(Reading::Wait);
    }
    Some(Reading::Narrowed {
        certain,
        lines: left,
        again,
    })
}

/// Whether the last move, changed into `m`, passes through the
/// identifying snapshots since the position before it (a piece caught on
/// a square of its path allowed).
fn changed_passes_pieces(game: &Game, snapshots: &Snapshots, m: Move) -> bool {
    changed_passes(game, |before, since| {
        snapshots.allow_pieces_sliding(before, &[m], since)
    })
}

/// Whether a change of the last move passes `fits`, asked of the position
/// before that move and the event that showed that position.
fn changed_passes(game: &Game, fits: impl Fn(&Chess, u64) -> bool) -> bool {
    game.ply().checked_sub(1).is_some_and(|prev| {
        game.position_at(prev)
            .is_some_and(|before| fits(before, game.basis(prev)))
    })
}

/// What the square histories read, with a last move changed only if it
/// fits the snapshots since the position before it, as moves made must
/// fit those since the record's.
fn read_histories(game: &Game, sensed: &SensedBoard, snapshots: &Snapshots) -> Option<Reading> {
    match read_moves(game, sensed) {
        // The last move changed must fit the snapshots since the position
        // before it, as moves made must fit those since the record's.
        Some(Reading::Changed(m))
            if !changed_passes(game, |before, since| {
                snapshots.allow(before, &[m], since, Bitboard::EMPTY)
            }) =>
        {
            None
        }
        other => other,
    }
}

/// Whether `moves`, plies no scan showed (2 each) but the last, were read
/// from a scan that may have caught the mover's piece on its way, nothing
/// else changed (a slide, 1): the slide is the cheaper story, and the next
/// scan shows where the piece was put down (35...Re7 with the rook caught
/// on e6 is no 35...Re7 36.Qe6 Rd7). Not once he pressed: the piece was
/// let go of (Art. 6.2.1).
fn slid_not_inferred(
    lines: &SnapshotLines<'_>,
    snapshots: &Snapshots,
    moves: &[Move],
    moment: Moment<'_>,
) -> bool {
    moves.len() > 1
        && moment.presses_ahead == 0
        && caught_on_its_way(lines.pos, lines.sensed.occupied(), snapshots.changed_last())
}

/// What a snapshot read from the scans (`reading`) records, given the
/// candidates followed and how far a snapshot is trusted.
fn conclude_snapshot(
    reading: ScanReading,
    lines: &SnapshotLines<'_>,
    snapshots: &Snapshots,
    moment: Moment<'_>,
    hands: bool,
    waits: bool,
) -> Option<Reading> {
    let (pos, since, settling) = (lines.pos, lines.since, lines.settling);
    match reading {
        // A slide (1) rather than plies no scan showed (2 each).
        ScanReading::Moves(moves)
            if hands && slid_not_inferred(lines, snapshots, &moves, moment) =>
        {
            Some(Reading::Wait)
        }
        // A snapshot is trusted for two moves at most, as on boards
        // that identify pieces: the moves before them must have
        // shown in the snapshots before it, as the moves were read
        // from them (without a blip found there).
        ScanReading::Moves(moves)
            if moves.len() > SNAPSHOT_PLIES
                && lines
                    .snapshots
                    .plies_shown_last(pos, &moves, since, settling)
                    > SNAPSHOT_PLIES =>
        {
            Some(Reading::Ambiguous(vec![moves]))
        }
        // Moves inferred, or read through a hand, against other moves
        // that one scan's odd squares read as a blip explain as cheaply:
        // the next scan tells them apart.
        ScanReading::Moves(moves)
            if hands && moves.len() > 1 && blip_rivals(lines, &moves, moment.presses_ahead) =>
        {
            Some(Reading::Wait)
        }
        // Moves that need a press forgotten (3) and a ply no scan showed
        // (2), read from a scan that changed squares, against a piece
        // caught on its way there (a slide, 1) that no line read: the next
        // scan tells (a slide lasts one scan).
        ScanReading::Moves(moves) if hands && forgets_presses(lines, &moves, moment) => {
            Some(Reading::Wait)
        }
        // Moves whose piece no scan showed put down before the next move
        // took it, read from a scan that may have caught a capture's piece
        // on its way there, its victim off (a slide, 1): the next scan
        // tells (a slide lasts one scan).
        ScanReading::Moves(moves) if hands && taken_unseen_or_slid(lines, &moves) => {
            Some(Reading::Wait)
        }
        // One move read from a snapshot changes squares no blip
        // alone makes up; two may hide one.
        ScanReading::Moves(moves) if hands && moves.len() > 1 => Some(unless_blip_or_slide(
            lines,
            snapshots,
            moves,
            moment.presses_ahead,
        )),
        ScanReading::Moves(moves) if hands && moves.len() == 1 => {
            let suspect = lines.one_move_blip(moves[0])
                | last_slide(pos, &moves, snapshots, moment.presses_ahead);
            Some(unless_blip(moves, suspect))
        }
        // The candidates are followed past a blip too: no line
        // went on through b2 caught empty for one scan while
        // 24...Be4 25.Nxe4 and 24...Bxg4 25.Ne4 were followed, and
        // the rest of the game was never read.
        ScanReading::None if !moment.candidates.is_empty() => narrowed(lines, moment, true)
            .or_else(|| {
                let odd =
                    snapshots.without_odd_squares(since, pos.board().occupied(), Bitboard::FULL)?;
                narrowed(
                    &SnapshotLines {
                        snapshots: &odd.repaired,
                        ..*lines
                    },
                    moment,
                    true,
                )
            })
            .or(waits.then_some(Reading::Wait)),
        ScanReading::None if waits => Some(Reading::Wait),
        reading => from_scan(reading),
    }
}

/// Two or more moves read from one snapshot (`pressed`: the presses in
/// turn since the record's position): those that stand even if a square
/// it changed was a blip, or a piece it caught is on its way, are
/// recorded; the rest wait for the next scan. `snapshots`: as the scans
/// showed them, for the last move's slide.
fn unless_blip_or_slide(
    lines: &SnapshotLines<'_>,
    snapshots: &Snapshots,
    moves: Vec<Move>,
    pressed: usize,
) -> Reading {
    let (mut proof, mut suspect) = lines.blip_proof(&moves);
    // The last move's piece may be on its way on: it waits too.
    let slide = last_slide(lines.pos, &moves, snapshots, pressed);
    if slide.any() {
        proof = proof.min(moves.len() - 1);
        suspect |= slide;
    }
    // Or a capture's piece caught on its way after fewer moves, its
    // victim off, its player not yet pressed: the moves past those wait
    // too.
    for (line, on) in lines.capture_slides(moves.len()) {
        if line.len() < pressed {
            continue;
        }
        let agree = moves.iter().zip(&line).take_while(|(a, b)| a == b).count();
        proof = proof.min(agree);
        suspect.add(on);
    }
    if suspect.is_empty() {
        Reading::Moves(moves)
    } else {
        let mut certain = moves;
        let then = certain.split_off(proof);
        Reading::Unconfirmed {
            certain,
            then,
            suspect,
        }
    }
}

/// Whether `moves`, read from the last scan on a board with a clock,
/// complete a move no press followed and infer a ply no scan showed, while
/// that scan changed squares: two faults, one of them as rare as a blip,
/// where the scan may have caught one piece on its way. The presses of
/// the last two moves may still come (the scan caught the board between
/// the moves and the presses); a move before them had its press before
/// the next two moves were made, or it was forgotten.
fn forgets_presses(lines: &SnapshotLines<'_>, moves: &[Move], moment: Moment<'_>) -> bool {
    moment.clock
        && presses_missing(moves.len().saturating_sub(1), moment.presses_ahead) > 0
        && lines.snapshots.changed_last().any()
        && lines.snapshots.plies_unshown(lines.pos, moves, lines.since) > 0
}

/// Whether a move of `moves` (from the record's position) put its piece on
/// a square no snapshot before the last showed full, and the next move
/// took it there: the opponent's hand took it within the scan period it
/// was put down in (the cost table: a hand so early, 1, as
/// `EARLY_HAND`), while the last scan may have caught a capture's piece,
/// after fewer of `moves`, on an empty square of its path with its victim
/// off (a slide, 1): the two stories cost the same.
fn taken_unseen_or_slid(lines: &SnapshotLines<'_>, moves: &[Move]) -> bool {
    let Some(before_last) = lines.snapshots.all_but_last(lines.since) else {
        return false;
    };
    let taken_unseen = moves.windows(2).any(|pair| {
        pair[1].is_capture()
            && pair[1].to() == pair[0].to()
            && !before_last.iter().any(|shown| shown.contains(pair[0].to()))
    });
    if !taken_unseen {
        return false;
    }
    let mut pos = lines.pos.clone();
    moves.iter().any(|&m| {
        let slid = capture_slide_caught(&pos, lines.sensed)
            .is_some_and(|on| lines.sensed.first_shown_by_latest_scan(on));
        pos.play_unchecked(m);
        slid
    })
}

/// The square the last of `moves` (from `pos`) filled at the last scan, if
/// its piece may have been caught there on its way (see
/// [`slide_square`]). Not once its player pressed (`pressed`: the presses
/// in turn since `pos`): the press came after the piece was let go of
/// (Art. 6.2.1), and the scans after it show it at rest.
fn last_slide(pos: &Chess, moves: &[Move], snapshots: &Snapshots, pressed: usize) -> Bitboard {
    let Some((&last, before)) = moves.split_last() else {
        return Bitboard::EMPTY;
    };
    if pressed >= moves.len() {
        return Bitboard::EMPTY;
    }
    let mut pos = pos.clone();
    for &m in before {
        pos.play_unchecked(m);
    }
    slide_square(&pos, last, snapshots.changed_last())
}

/// The snapshots read again with the squares one scan alone showed changed
/// taken for blips, and what they then show, if that explains the board
/// (see `read_occupancy_snapshot`): squares where a capture fits keep what
/// the scan showed, and the others are tried again.
fn read_past_blips(
    lines: &SnapshotLines<'_>,
    pressed: usize,
    hands: bool,
) -> Option<(Snapshots, usize, ScanReading)> {
    let pos = lines.pos;
    let mut squares = Bitboard::FULL;
    while let Some(odd) =
        lines
            .snapshots
            .without_odd_squares(lines.since, pos.board().occupied(), squares)
        && !pos.legal_moves().iter().any(|m| {
            odd.fills.contains(m.to())
                && odd
                    .filled_in
                    .is_none_or(|shown| !m.from().is_some_and(|from| shown.contains(from)))
        })
    {
        let again = SnapshotLines {
            snapshots: &odd.repaired,
            ..*lines
        };
        let second = again.read(pressed, hands);
        let lines_read = match &second {
            ScanReading::Moves(moves) => vec![moves.clone()],
            ScanReading::Ambiguous(all) => all.clone(),
            ScanReading::Hand | ScanReading::None => vec![Vec::new()],
        };
        if second == ScanReading::None {
            return None;
        }
        let whole = !matches!(second, ScanReading::Hand);
        let captured = lines_read
            .iter()
            .map(|line| capturable(pos, line, &odd, whole))
            .fold(Bitboard::EMPTY, |all, on| all | on);
        if captured.is_empty() {
            let blips = BLIP * (odd.empties | odd.fills).count();
            return Some((odd.repaired, blips, second));
        }
        squares &= !captured;
    }
    None
}

/// Which of two readings of the scans is the cheaper, each with what its
/// blips cost: lines that need a scan to have caught a piece in two places
/// (`raw`), against the scans with one scan's odd squares taken for blips
/// (`repaired`). Each pays its blips, then 2 per ply no scan showed and 1
/// per scan read as a hand at work (the cost table); `Less` when `raw` is
/// cheaper beyond the margin, `Equal` within it, or when either reads no
/// moves: the next scan tells.
fn weigh_blips(
    raw: &SnapshotLines<'_>,
    (raw_read, raw_blips): (&ScanReading, usize),
    repaired: &SnapshotLines<'_>,
    (repaired_read, repaired_blips): (&ScanReading, usize),
) -> Ordering {
    let cost = |lines: &SnapshotLines<'_>, reading: &ScanReading, blips: usize| match reading {
        ScanReading::Moves(moves) => {
            Some(blips + story_cost(lines.snapshots, lines.pos, moves, lines.since))
        }
        _ => None,
    };
    match (
        cost(raw, raw_read, raw_blips),
        cost(repaired, repaired_read, repaired_blips),
    ) {
        (Some(a), Some(b)) if a + MARGIN < b => Ordering::Less,
        (Some(a), Some(b)) if b + MARGIN < a => Ordering::Greater,
        _ => Ordering::Equal,
    }
}

/// Whether other moves than `moves` (read from the snapshots since the
/// record) explain them with the squares one scan alone showed changed
/// read as a blip, within the margin of `moves`' own cost: 3 per blip
/// against 2 per ply no scan showed and 1 per scan read as a hand at work
/// (the cost table). A bishop on g5 with g7 caught empty by the scan that
/// first showed it is read as Bh6, g5, Bg7 with a hand at that scan only
/// at a cost no lower than the blip's.
fn blip_rivals(lines: &SnapshotLines<'_>, moves: &[Move], pressed: usize) -> bool {
    let (pos, since) = (lines.pos, lines.since);
    let Some(odd) =
        lines
            .snapshots
            .without_odd_squares(since, pos.board().occupied(), Bitboard::FULL)
    else {
        return false;
    };
    let cost = |snapshots: &Snapshots, line: &[Move]| story_cost(snapshots, pos, line, since);
    let made = cost(lines.snapshots, moves);
    let again = SnapshotLines {
        snapshots: &odd.repaired,
        ..*lines
    };
    let ScanReading::Moves(rival) = again.read(pressed, true) else {
        return false;
    };
    let blips = (odd.empties | odd.fills).count();
    rival.first() != moves.first() && BLIP * blips + cost(&odd.repaired, &rival) <= made + MARGIN
}

/// What the scans since event `since` make `line` (from `pos`) cost: 2
/// per ply no scan showed (3 more if no scan saw a trace of it), 1 per
/// scan read as a hand at work (the cost table).
pub(super) fn story_cost(snapshots: &Snapshots, pos: &Chess, line: &[Move], since: u64) -> usize {
    INFERRED_PLY * snapshots.unshown_plies_so_far(pos, line, since).len()
        + TRACELESS_PLY * snapshots.traceless_plies(pos, line, since)
        + HAND * snapshots.caught_in_motion(pos, line, since, None)
}

/// Whether other moves from the record than `line` explain the last scan
/// with one square it changed read as a blip, within the margin of
/// `line`'s own cost: 3 for the square (a sensor flicker, or a piece
/// taken set down there for a moment: one report off the story either
/// way) against 2 per ply of `line` no scan showed. After 47...Bxd6, a
/// scan of d6 full, c7 empty and e7 full is 48.Bxd6 with the captured
/// bishop put on e7 on its way off the board (3), not four moves nobody
/// saw returning to the same squares (48.Bd8 Bc7 49.Be7 Bd6, 6 or more).
fn last_scan_rival(lines: &SnapshotLines<'_>, line: &[Move], pressed: usize) -> bool {
    let (pos, since) = (lines.pos, lines.since);
    let made = story_cost(lines.snapshots, pos, line, since);
    let suspects = lines
        .snapshots
        .blip_suspects(pos.board().occupied(), lines.sensed.occupied());
    suspects.into_iter().any(|sq| {
        let (sensed, snapshots) = lines.blipped(sq);
        let again = SnapshotLines {
            sensed: &sensed,
            snapshots: &snapshots,
            ..*lines
        };
        let ScanReading::Moves(rival) = again.read(pressed, true) else {
            return false;
        };
        rival.first() != line.first()
            && BLIP + story_cost(&snapshots, pos, &rival, since) <= made + MARGIN
    })
}

/// The squares one snapshot alone showed empty (`odd`) where a capture may
/// have been under way: in a position `line` passes through from `pos`
/// (its last included), the player to move can capture there with a piece
/// that has left its square since (not on `odd.stayed`: a capture the
/// board showed being made would have emptied one). When `line` is all
/// the board went through (`whole`; not the moves before a hand), the
/// capture must also fit the snapshot that caught the square empty: the
/// rest of the board as in that position, the capturing piece at most
/// lifted. A pawn caught gone while nothing else had moved is no capture
/// by a knight that came within reach only two moves later.
fn capturable(pos: &Chess, line: &[Move], odd: &OddSquares, whole: bool) -> Bitboard {
    let mut found = Bitboard::EMPTY;
    let mut look = |pos: &Chess| {
        let occupied = pos.board().occupied();
        for c in pos.capture_moves() {
            let from = c.from().map_or(Bitboard::EMPTY, Bitboard::from_square);
            let under_way = |&(empty, shown): &(Bitboard, Bitboard)| {
                empty.contains(c.to()) && ((shown ^ occupied) & !from).is_empty()
            };
            if odd.empties.contains(c.to())
                && (from & odd.stayed).is_empty()
                && (!whole || odd.caught.iter().any(under_way))
            {
                found.add(c.to());
            }
        }
    };
    let mut pos = pos.clone();
    for &m in line {
        look(&pos);
        pos.play_unchecked(m);
    }
    look(&pos);
    found
}

/// The lines a snapshot of a board that only senses occupancy is read
/// among, when it is read as a move in progress: every line of up to
/// three moves from the game position that explains it, and every one
/// that leaves a hand after it.
pub(super) fn held_lines(
    game: &Game,
    sensed: &SensedBoard,
    snapshots: &Snapshots,
) -> Vec<Vec<Move>> {
    let (exact, hand) = SnapshotLines {
        pos: game.position(),
        sensed,
        snapshots,
        since: game.basis(game.ply()),
        settling: Bitboard::EMPTY,
    }
    .explanations();
    distinct(exact.into_iter().chain(hand).collect())
}

/// `moves` read from a snapshot, made at once unless a blip on one of the
/// `suspect` squares may explain the snapshot otherwise: then they wait
/// for the next scan.
fn unless_blip(moves: Vec<Move>, suspect: Bitboard) -> Reading {
    if suspect.is_empty() {
        Reading::Moves(moves)
    } else {
        Reading::Unconfirmed {
            certain: Vec::new(),
            then: moves,
            suspect,
        }
    }
}

/// The most candidates followed on from one snapshot to the next.
const MAX_CANDIDATES: usize = 16;

/// A snapshot that no line of up to three moves from the game position
/// explains, read against the candidates listed earlier (item 2 of the
/// resynchronisation: the board is followed along every candidate until
/// one is left). The moves every candidate still fitting begins with are
/// certain, as far as the snapshots showed them: two moves at most from
/// one snapshot alone, or three that a snapshot showed exactly and a later
/// one showed gone on from (see [`Snapshots::followed_plies`]). `listed`:
/// the candidates are those listed with `out_of_sync` (the shortest lines
/// then), not the lines a hand was read among.
fn narrowed(lines: &SnapshotLines<'_>, moment: Moment<'_>, listed: bool) -> Option<Reading> {
    let (exact, hand) = lines.candidates(moment.candidates, !moment.closing);
    if exact.is_empty() {
        // A hand after a candidate, or nothing: the candidates stand.
        return (!hand.is_empty()).then_some(Reading::Hand);
    }
    // A slide's stories, listed by their costs, are followed by them: the
    // lines the scans showed move by move win over those needing moves no
    // scan showed (the cost table); a hand at work shows no position of
    // its own to weigh.
    let exact = if moment.costed {
        cheapest_lines(lines.pos, exact, lines.snapshots, lines.since)
    } else {
        exact
    };
    let followed: Vec<Vec<Move>> = exact.iter().chain(&hand).cloned().collect();
    // A listed line no line within reach follows on from, whose last move's
    // piece the scan shows gone on along its path, died of the following
    // (it read a slide as the move), not of the scans: it stays listed, so
    // the lines left are not recorded alone.
    let stale = if listed {
        gone_on_past(lines.pos, lines.sensed, moment.candidates, &followed)
    } else {
        Vec::new()
    };
    let all = distinct(followed.into_iter().chain(stale).collect());
    if all.len() > MAX_CANDIDATES {
        // Too many to follow: the arbiter has the list he was given.
        return Some(Reading::Wait);
    }
    let mut certain = super::scanned::common_prefix(all.iter());
    // The listing held the shortest lines only: a line going on from one
    // by more plies no scan showed than the margin allows may be dearer
    // than one the listing left out (a ply longer then, shown since), so
    // nothing is certain from it.
    if listed && beyond_listing(lines, moment.candidates, &exact) > MARGIN {
        certain.clear();
    }
    // A line that ends in a hand shows no position of its own to weigh.
    for line in &exact {
        certain.truncate(lines.snapshots.followed_plies(
            lines.pos,
            line,
            lines.since,
            lines.settling,
            SNAPSHOT_PLIES,
        ));
    }
    // A move only a possible slide showed waits for the next observation
    // (the policy), as one read from the record's position does: the one
    // line left, certain to its end, whose last move's piece the last scan
    // may have caught on its way (24...Rd7, the rook dragged on to d5), is
    // read to the move before, and the next scan, read from there, shows
    // where the piece was put down (a line of that move alone stays as
    // it was: nothing recorded, nothing to read again from). The same
    // when the line's moves before the last stand beside it with a hand
    // after them: that hand is the slide's story, not a rival listing.
    let again = if listed
        && let [line] = all.as_slice()
        && certain.len() == line.len()
        && line.len() > 1
        && last_slide(lines.pos, line, lines.snapshots, moment.presses_ahead).any()
    {
        certain.pop();
        true
    } else {
        listed && slide_beside_hand(lines, &all, &certain, moment.presses_ahead)
    };
    Some(Reading::Narrowed {
        certain,
        lines: all,
        again,
    })
}

/// The lines left are `certain` with a hand after it and one line going
/// on from it by a move whose piece the last scan may have caught on its
/// way (16...Bc3+ read from the bishop caught on c3 on its way to take on
/// b2): the hand is that move, or another, under way, and the one line
/// left is no listing. `certain` is recorded and the scan read again from
/// it, where the move and the slide are weighed as for any move.
fn slide_beside_hand(
    lines: &SnapshotLines<'_>,
    all: &[Vec<Move>],
    certain: &[Move],
    pressed: usize,
) -> bool {
    let [a, b] = all else {
        return false;
    };
    let (line, hand) = if a.len() > b.len() { (a, b) } else { (b, a) };
    !certain.is_empty()
        && hand.as_slice() == certain
        && line.len() == certain.len() + 1
        && line.starts_with(certain)
        && last_slide(lines.pos, line, lines.snapshots, pressed).any()
}

/// What the cheapest of `exact` (lines followed on from `candidates`)
/// adds beyond the candidate it goes on from: 2 per ply after it no
/// snapshot showed (the cost table's inferred ply). Zero with no line.
fn beyond_listing(
    lines: &SnapshotLines<'_>,
    candidates: &[Vec<Move>],
    exact: &[Vec<Move>],
) -> usize {
    exact
        .iter()
        .map(|line| {
            let from = candidates
                .iter()
                .filter(|c| line.starts_with(c))
                .map(Vec::len)
                .max()
                .unwrap_or(0);
            INFERRED_PLY
                * lines
                    .snapshots
                    .unshown_plies_so_far(lines.pos, line, lines.since)
                    .iter()
                    .filter(|&&ply| ply > from)
                    .count()
        })
        .min()
        .unwrap_or(0)
}

/// A scanned state. The squares' histories may have missed a square
/// vacated and refilled between two scans: moves read from them stand only
/// as far as every other sequence of as many moves, or fewer, that explains
/// the scan once any square may have changed unseen, or leaves a move in
/// progress, agrees with them (see [`confirm`]); what they cannot explain is
/// read from the scan alone ([`read_scan`]).
fn read_scan_moves(
    game: &Game,
    sensed: &SensedBoard,
    moment: Moment<'_>,
    scanned: Scanned,
    snapshots: &Snapshots,
) -> Option<Reading> {
    let slides = match snapshots.board() {
        BoardKind::Scanning => Slides::Caught,
        BoardKind::Reporting => Slides::PutDown,
    };
    let reading = read_scanned_state(game, sensed, snapshots, moment, scanned, slides);
    let pos = game.position();
    // Nothing read from the record's position: what is read now comes
    // from the stories told before.
    let unread = reading.is_none();
    // Stories the scans told before are weighed (see `passed_story`).
    let reading = if scanned == Scanned::Snapshot && sensed.identifies_all() {
        reweigh(reading, game, sensed, snapshots, moment, slides)
    } else {
        reading
    };
    match reading {
        Some(Reading::Moves(moves))
            if scanned == Scanned::Snapshot
                && let Some(other) = passed_over(pos, sensed, &moves, moment.passed, |line| {
                    snapshots.allow_pieces_sliding(pos, line, game.basis(game.ply()))
                }) =>
        {
            Some(Reading::Ambiguous(vec![moves, other]))
        }
        // Lines of as many moves, one of which the snapshots since the
        // record's position (the one that showed it included) show with no
        // piece caught on its path: the others need a slide (1) for
        // nothing (an e-pawn shown on e6, then taken there: 5...e6 6.dxe6,
        // not 5...e5 caught on e6 and taken en passant).
        Some(Reading::Ambiguous(lines))
            if scanned == Scanned::Snapshot
                && sensed.identifies_all()
                && let [line] = snapshots
                    .through_pieces(pos, &lines, game.basis(game.ply()).saturating_sub(1))
                    .as_slice() =>
        {
            Some(Reading::Moves(line.clone()))
        }
        // More than two moves one snapshot shows must pass through the
        // snapshots before it (a hand at work after other moves may read
        // as a detour nobody played); they are listed for the arbiter if
        // not. A story told before, gone on, that does not is no reading:
        // the stories stay as they were listed.
        Some(Reading::Moves(moves))
            if scanned == Scanned::Snapshot
                && moves.len() > SNAPSHOT_PLIES
                && !passes_snapshots(pos, sensed, snapshots, &moves, game.basis(game.ply())) =>
        {
            (!unread).then(|| Reading::Ambiguous(vec![moves]))
        }
        // A line shorter than that is read from the last scan alone; but
        // when it cannot pass an earlier scan since the record's position
        // (not even with a piece caught on its path) and a line of one
        // more ply reaching the same board passes every one, that scan
        // showed a position the short line never had: read as blips, one
        // per square the move it showed changed, it costs more than the
        // ply the long line infers (6 or more against 2), so the short
        // line is no certain story. Both are listed, and the next states
        // (whose turn it is) tell them apart (or a hand, `against`).
        Some(Reading::Moves(moves))
            if scanned == Scanned::Snapshot
                && sensed.identifies_all()
                && moves.len() <= SNAPSHOT_PLIES
                && shows_after(pos, sensed, &moves)
                && let since = game.basis(game.ply())
                && !snapshots.allow_pieces_sliding(pos, &moves, since)
                && let rivals =
                    rivals_through_snapshots(pos, sensed, snapshots, moves.len(), since)
                && !rivals.lines.is_empty() =>
        {
            Some(rivals.against(moves, moment.closing))
        }
        // Those that do wait for the next scan if a square the last one
        // changed could be a blip (unless the players ended the game: no
        // scan comes).
        Some(Reading::Moves(moves))
            if scanned == Scanned::Snapshot && moves.len() > SNAPSHOT_PLIES && !moment.closing =>
        {
            let suspect = snapshots.blip_suspects(pos.board().occupied(), sensed.occupied());
            Some(unless_blip(moves, suspect))
        }
        other => other,
    }
}

/// The lines of exactly `plies` legal moves from `pos` after which the
/// board is what the sensors show and that pass through every identifying
/// snapshot since event `since` with no fault (no slide, no blip).
fn longer_through_snapshots(
    pos: &Chess,
    sensed: &SensedBoard,
    snapshots: &Snapshots,
    plies: usize,
    since: u64,
) -> Vec<Vec<Move>> {
    if plies > super::scanned::MAX_PLIES {
        return Vec::new();
    }
    super::scanned::exact_lines_of(pos, sensed, plies)
        .into_iter()
        .filter(|line| snapshots.allow_pieces(pos, line, since))
        .collect()
}

/// The rivals of a line of `plies` moves the last scan shows but an
/// earlier one since event `since` rules out: the lines of one ply more
/// to the same board through every snapshot
/// ([`longer_through_snapshots`]), or else the lines of as many plies
/// the last scan shows with the next move in progress (a hand at work,
/// 1), passing every snapshot before it with no fault (53...Qb3 shown
/// with White's knight lifted, then 54.Nd4 with the queen in the hand:
/// no 53...Qd4 54.Nxd4, which no scan of the queen on b3 is an instant of).
fn rivals_through_snapshots<'a>(
    pos: &'a Chess,
    sensed: &'a SensedBoard,
    snapshots: &'a Snapshots,
    plies: usize,
    since: u64,
) -> Rivals<'a> {
    let mut rivals = Rivals {
        lines: longer_through_snapshots(pos, sensed, snapshots, plies + 1, since),
        hand: false,
        pos,
        sensed,
        snapshots,
        since,
    };
    if rivals.lines.is_empty() {
        rivals.hand = true;
        rivals.lines = super::scanned::hand_explanations(pos, sensed, plies)
            .into_iter()
            .filter(|line| {
                line.len() == plies && snapshots.allow_pieces_then_hand(pos, line, since)
            })
            .collect();
    }
    rivals
}

/// The lines through every snapshot since event `since` that rival a
/// short line an earlier snapshot rules out; `hand`: the last snapshot
/// shows them with the next move in progress.
struct Rivals<'a> {
    lines: Vec<Vec<Move>>,
    hand: bool,
    pos: &'a Chess,
    sensed: &'a SensedBoard,
    snapshots: &'a Snapshots,
    since: u64,
}

impl Rivals<'_> {
    /// Reads `moves`, which the last scan shows but an earlier one since
    /// `since` rules out (at least a blip, 3), against the rivals by the
    /// cost table: one longer line each ply of which a scan showed (0) is
    /// cheaper beyond the margin and is read as moves (53...Qb3 54.Nd4
    /// Qc4, each caught, not 53...Qc4 54.Nd4 with the queen on b3 a blip);
    /// a rival that infers a ply (2) or ends in a hand (1) is not, and both
    /// are listed. `closing`: no scan comes to show a blip.
    fn against(self, moves: Vec<Move>, closing: bool) -> Reading {
        let (pos, snapshots, since) = (self.pos, self.snapshots, self.since);
        if !self.hand
            && let [line] = self.lines.as_slice()
            && INFERRED_PLY * snapshots.plies_unseen(pos, line, since, false) + MARGIN < BLIP
        {
            // A square the last scan changed may still be a blip.
            let occupied = self.sensed.occupied();
            let suspect = snapshots.blip_suspects(pos.board().occupied(), occupied);
            return if closing {
                Reading::Moves(line.clone())
            } else {
                unless_blip(line.clone(), suspect)
            };
        }
        Reading::Ambiguous(std::iter::once(moves).chain(self.lines).collect())
    }
}

/// Whether the sensors show the position after `line` from `pos`.
fn shows_after(pos: &Chess, sensed: &SensedBoard, line: &[Move]) -> bool {
    let mut after = pos.clone();
    for &m in line {
        after.play_unchecked(m);
    }
    sensed.shows(after.board())
}

/// Whether `moves` pass through the snapshots since event `since`. On a
/// board that names the pieces, a scan may have caught a piece on a square
/// of its path (a slide, docs/design/reconstruction.md): the one line that
/// explains the board costs that slide, and no other line is left to weigh
/// it against (the first scan of a session, 1.e4 caught on e3, then 1...e5
/// and 2.Nf3 shown).
fn passes_snapshots(
    pos: &Chess,
    sensed: &SensedBoard,
    snapshots: &Snapshots,
    moves: &[Move],
    since: u64,
) -> bool {
    snapshots.allow(pos, moves, since, Bitboard::EMPTY)
        || sensed.identifies_all() && snapshots.allow_pieces_sliding(pos, moves, since)
}

/// [`read_scan_moves`] before the length limit.
fn read_scanned_state(
    game: &Game,
    sensed: &SensedBoard,
    snapshots: &Snapshots,
    moment: Moment<'_>,
    scanned: Scanned,
    slides: Slides,
) -> Option<Reading> {
    let pos = game.position();
    let pressed = moment.presses_ahead;
    match read_moves(game, sensed) {
        Some(Reading::Moves(moves)) => {
            // A dump is read before any hand moved again, but on occupancy
            // a piece lifted looks like a piece taken: the hand is weighed,
            // after the dump with what the squares' reports show.
            let hands = match scanned {
                _ if moment.closing => Hands::None,
                Scanned::Snapshot => Hands::Any,
                _ if sensed.identifies_all() => Hands::None,
                Scanned::AfterDump => Hands::NotCameDown,
                _ => Hands::TakingOnly,
            };
            let since = game.basis(game.ply());
            let confirmed = confirm(pos, sensed, since, moves, pressed, hands, slides);
            return from_scan(confirmed);
        }
        None => {}
        // A move a scan showed standing cannot have been changed into one
        // no scan since shows it on its way to (Art. 4.7 forbids it, and
        // plies the scans skipped explain the same board): the change must
        // pass the identifying snapshots since the position before it, a
        // piece caught on its path allowed, as moves made must pass those
        // since the record's. Otherwise the board is read from the record.
        Some(Reading::Changed(m))
            if scanned == Scanned::Snapshot
                && sensed.identifies_all()
                && !changed_passes_pieces(game, snapshots, m) => {}
        other => return other,
    }
    if scanned != Scanned::Snapshot {
        // After a reconnection the gap may be long: the resynchronisation
        // search reads it, deeper than this.
        return None;
    }
    // A press ahead of its move leaves the piece in the air: no scan since
    // the record's position showed it put down.
    let since = game.basis(game.ply());
    from_scan(read_scan_after(
        pos,
        sensed,
        pressed,
        !moment.closing,
        slides,
        |line| snapshots.allow_pieces_then_hand(pos, line, since),
    ))
}

/// The reading a scan reading is; `None` when nothing explains the scan.
fn from_scan(reading: ScanReading) -> Option<Reading> {
    match reading {
        ScanReading::Moves(moves) => Some(Reading::Moves(moves)),
        ScanReading::Hand => Some(Reading::Hand),
        ScanReading::Ambiguous(lines) => Some(Reading::Ambiguous(lines)),
        ScanReading::None => None,
    }
}

/// Moves made, changed or taken back; `Some(Wait)` when several moves
/// explain the state.
/// The moves a state of square events shows. Three moves read at once
/// are weighed against a capture the board never showed on its square
/// and a reply (`unseen_capture.rs`): the squares' histories only count
/// captures on squares seen changing, so a queen dragged over f3 to take
/// on g2 unseen, then the reply exf6, also reads as Qf3 exf6 Qxf6, the
/// queen lifted off f3 before the reply began. Each explains the squares;
/// neither is certain, so both are listed and the next moves tell them
/// apart (docs/design/reconstruction.md, the decision policy).
fn read_event_moves(game: &Game, sensed: &SensedBoard) -> Option<Reading> {
    use super::unseen_capture::unseen_capture_then_reply;
    match read_moves(game, sensed) {
        Some(Reading::Moves(line)) if line.len() > 2 => {
            match unseen_capture_then_reply(game, sensed) {
                Some(Reading::Moves(two)) => Some(Reading::Ambiguous(vec![two, line])),
                Some(Reading::Ambiguous(mut lines)) => {
                    lines.push(line);
                    Some(Reading::Ambiguous(lines))
                }
                Some(Reading::Wait) => Some(Reading::Wait),
                _ => Some(Reading::Moves(line)),
            }
        }
        None => unseen_capture_then_reply(game, sensed),
        other => other,
    }
}

/// What the square histories read from the record's position (event
/// boards): one move, the last changed or taken back, two, an older
/// position, three.
pub(super) fn read_moves(game: &Game, sensed: &SensedBoard) -> Option<Reading> {
    let n = game.ply();
    let since = game.basis(n);
    let pos = game.position();
    match explain(pos, sensed, since, 1) {
        Explanation::Unique(moves) => return Some(Reading::Moves(moves)),
        Explanation::Ambiguous => return Some(Reading::Wait),
        Explanation::None => {}
    }
    if n > 0 && game.moves()[n - 1].completed_at.is_none() {
        let prev = game.position_at(n - 1).expect("positions follow moves");
        match explain(prev, sensed, game.basis(n - 1), 1) {
            Explanation::Unique(moves) if could_move_on(game.moves()[n - 1].mv, moves[0]) => {
                return Some(Reading::Changed(moves[0]));
            }
            Explanation::Unique(_) | Explanation::None => {}
            Explanation::Ambiguous => return Some(Reading::Wait),
        }
    }
    if n > 0
        && sensed.shows_position(game.position_at(n - 1).expect("ply > 0"))
        && undone_touched(game, sensed, n - 1)
    {
        return Some(Reading::Takeback(n - 1));
    }
    match explain(pos, sensed, since, 2) {
        Explanation::Unique(moves) => return Some(Reading::Moves(moves)),
        Explanation::Ambiguous => return Some(Reading::Wait),
        Explanation::None => {}
    }
    // Positions earlier in the game never have fewer pieces.
    let fewer = sensed.occupied().count() < pos.board().occupied().count();
    if !fewer
        && let Some(ply) = (0..n.saturating_sub(1)).rev().find(|&ply| {
            sensed.shows_position(game.position_at(ply).expect("ply < n"))
                && undone_touched(game, sensed, ply)
        })
    {
        return Some(Reading::Takeback(ply));
    }
    match explain(pos, sensed, since, 3) {
        Explanation::Unique(moves) => Some(Reading::Moves(moves)),
        _ => None,
    }
}

/// Whether every square the record's moves after half-move `ply` changed
/// was touched (or may have been, unseen by a scan) since the record's
/// position was shown: taking them back moves each of their pieces again.
/// A board that only senses occupancy
/// shows an earlier position's occupancy too when a piece is put on a
/// square the last move emptied (a promotion's new piece put down before
/// the pawn is lifted, Art. 4.6.2, on the square the last move left), and
/// that is no takeback while the last move's own squares stand untouched.
fn undone_touched(game: &Game, sensed: &SensedBoard, ply: usize) -> bool {
    let since = game.basis(game.ply());
    let touched = sensed.touched_since(since);
    (ply..game.ply()).all(|k| {
        let pos = game.position_at(k).expect("k < ply");
        // A scan or dump may have hidden a lift and a place on a square
        // it shows full.
        crate::matcher::move_squares(game.moves()[k].mv, pos.turn())
            .into_iter()
            .all(|sq| touched.contains(sq) || sensed.emptied_since(sq, since))
    })
}

/// Only the position before the irregularity, or a legal move from it,
/// brings the record back in step (Art. 7.5.1); or the opponent moved from
/// the position the illegal move left, and play goes on from the board.
fn read_restoring(game: &Game, sensed: &SensedBoard, illegal: Option<(Move, Millis)>) -> Reading {
    let pos = game.position();
    let since = game.basis(game.ply());
    if sensed.shows_position(pos) {
        return Reading::Restored(None);
    }
    if let Explanation::Unique(moves) = explain(pos, sensed, since, 1) {
        return Reading::Restored(Some(moves[0]));
    }
    if let Some((mv, at)) = illegal {
        let mut on_board = pos.clone();
        on_board.play_unchecked(mv);
        if let Explanation::Unique(moves) = explain(&on_board, sensed, since, 1) {
            return Reading::IllegalStands {
                illegal: (mv, at),
                reply: moves[0],
            };
        }
    }
    Reading::Wait
}

/// A game over: a new one starts when the pieces are set up again; or a
/// promotion that seemed to end it was corrected.
fn read_after_game(game: &Game, sensed: &SensedBoard) -> Reading {
    if sensed.shows(Chess::default().board()) {
        return Reading::NewGame;
    }
    repromoted(game, sensed).map_or(Reading::Wait, Reading::Repromoted)
}

/// A pawn put on the last rank of an occupancy board reads as a queen,
/// which may mate, stalemate or leave a dead position at once (Art. 5.2.2:
/// a check whose one answer stalemates); when the board then identifies
/// another piece replacing the pawn, that was the promotion (Art. 4.7.3:
/// the move is made when the new piece is released), so the game goes on
/// from the corrected move.
fn repromoted(game: &Game, sensed: &SensedBoard) -> Option<Move> {
    let n = game.ply();
    if n == 0
        || !matches!(
            game.termination(),
            Some(Termination::Checkmate | Termination::Stalemate | Termination::DeadPosition)
        )
    {
        return None;
    }
    let last = game.moves()[n - 1].mv;
    if !last.is_promotion() || sensed.shows_position(game.position()) {
        return None;
    }
    let prev = game.position_at(n - 1).expect("ply > 0");
    match explain(prev, sensed, game.basis(n - 1), 1) {
        Explanation::Unique(moves) if same_move_in_hand(last, moves[0]) && last != moves[0] => {
            Some(moves[0])
        }
        _ => None,
    }
}

/// The player to move pressed his clock and the opponent then moved: the
/// clock was pressed without a move (Art. 7.5.3).
fn clock_without_move(
    game: &Game,
    sensed: &SensedBoard,
    pending_press: ByColor<bool>,
    arbiter: bool,
) -> Option<Reading> {
    let turn = game.position().turn();
    if !arbiter || !pending_press[turn] {
        return None;
    }
    let passed = game.position().clone().swap_turn().ok()?;
    match explain(&passed, sensed, game.basis(game.ply()), 1) {
        Explanation::Unique(_) => Some(Reading::ClockWithoutMove(turn)),
        _ => None,
    }
}

/// Whether the board can show `new` after `old` was made from the same
/// position without the opponent moving. A piece that captured and moved on
/// leaves the captured piece off the board, which no single move from the
/// earlier position shows; so a capture can only change into a capture on
/// the same square (another promotion piece). Otherwise a state that looks
/// like another move is the opponent starting his own.
fn could_move_on(old: Move, new: Move) -> bool {
    match (old.capture(), new.capture()) {
        (None, _) => true,
        (Some(_), Some(_)) => old.to() == new.to(),
        (Some(_), None) => false,
    }
}

/// Whether changing `old` into `new` is still the same move in the player's
/// hand: the promotion piece chosen after the pawn touched the last rank, or
/// castling after the rook was put down first.
pub(super) fn same_move_in_hand(old: Move, new: Move) -> bool {
    match (old, new) {
        (Move::Normal { from: a, to: b, .. }, Move::Normal { from: c, to: d, .. }) => {
            a == c && b == d
        }
        (
            Move::Normal {
                role: shakmaty::Role::Rook,
                from,
                to,
                ..
            },
            Move::Castle { king, rook },
        ) => {
            let turn = if king.rank() == shakmaty::Rank::First {
                Color::White
            } else {
                Color::Black
            };
            let side = new.castling_side().expect("castle has a side");
            from == rook && to == side.rook_to(turn)
        }
        _ => false,
    }
}

/// Both kings on the centre squares, identified by the board: the result
/// the players signal (light squares d5 and e4 for White's win, dark d4 and
/// e5 for Black's, one of each for a draw).
fn result_signal(sensed: &SensedBoard) -> Option<Outcome> {
    let centre = [Square::D4, Square::D5, Square::E4, Square::E5];
    let find = |king: shakmaty::Piece| {
        centre
            .into_iter()
            .find(|&sq| sensed.piece_at(sq) == Some(king))
    };
    let white = find(Color::White.king())?;
    let black = find(Color::Black.king())?;
    Some(match (white.is_light(), black.is_light()) {
        (true, true) => win(Color::White),
        (false, false) => win(Color::Black),
        _ => draw(),
    })
}
