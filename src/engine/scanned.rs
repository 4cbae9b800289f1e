//! Reading a board state that a full scan showed. A board that reports by
//! scans (or a dump after a reconnection) can skip states: a square the
//! moves vacated and refilled between two scans (a capture, a recapture on
//! the same square) reads as never touched, and a scan may catch a hand in
//! the middle of a move. So no square's history is trusted here: every
//! sequence of legal moves that leads to what the scan shows counts, and so
//! does every shorter one that leaves a move in progress (a piece in the
//! hand, a piece being captured, castling half done). Only the moves all of
//! them begin with are certain; the rest waits for later scans, the clock
//! or the arbiter (a wrong move is worse than a late one).

use shakmaty::{Bitboard, Chess, Move, Position, Square};

use super::cost::{BLIP, INFERRED_PLY, MARGIN, SLIDE};
use super::progress::{hand_in_progress, in_progress};
use super::read::story_cost;
use super::scan_slide::{capture_caught_on_path, capture_slide_caught, slide_caught};
use super::snapshots::{Sliding, Snapshots};
use crate::{
    matcher::{admits_line, distinct},
    sensed::SensedBoard,
};

/// The longest sequence of moves one scan is explained by here; longer
/// gaps go to the resynchronisation search.
pub(super) const MAX_PLIES: usize = 3;

/// The longest sequence followed by a move in progress that is weighed
/// against the exact explanations.
const MAX_HAND_PLIES: usize = 2;

/// What a scanned state shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum ScanReading {
    /// These moves were certainly made (every explanation begins with them).
    Moves(Vec<Move>),
    /// A move in progress may explain the state: wait.
    Hand,
    /// Several sequences of moves explain the state and no hand does.
    Ambiguous(Vec<Vec<Move>>),
    /// No sequence of up to three moves explains it.
    None,
}

/// Reads `sensed` against `pos`. `pressed`: how many players, in turn from
/// the player to move, pressed their clocks since the board last showed
/// `pos`: their moves are over, and a piece of theirs in the air after
/// fewer moves is not a move in progress (Art. 6.2.1); `hands`: whether
/// any piece may be in the air at all (not while the game is being
/// ended). Moves that only a hand after them explains are not recorded: a
/// piece missing from a scan may be in the hand after a short line or
/// taken in a longer one the scans hid.
pub(super) fn read_scan(
    pos: &Chess,
    sensed: &SensedBoard,
    pressed: usize,
    hands: bool,
    slides: Slides,
) -> ScanReading {
    read_scan_after(pos, sensed, pressed, hands, slides, |_| true)
}

/// As [`read_scan`], a press ahead of its move read only after the lines
/// `ahead_passes` (the scans before this one since `pos` showed no piece of
/// the line's last presser put down).
pub(super) fn read_scan_after(
    pos: &Chess,
    sensed: &SensedBoard,
    pressed: usize,
    hands: bool,
    slides: Slides,
    ahead_passes: impl Fn(&[Move]) -> bool,
) -> ScanReading {
    let (exact, shortest) = exact_explanations(pos, sensed, MAX_PLIES);
    let hand = if hands {
        shorter_hands(pos, sensed, shortest, pressed, slides)
    } else {
        Vec::new()
    };
    let mut hand = hand;
    if exact.is_empty() && sensed.identifies_all() {
        // Only hands explain the scan, and every such line begins with the
        // same moves, each completed by its player's press (Art. 6.2.1): the
        // piece in the air is the next player's (the victim he took off
        // first), and those moves are certain (the decision policy). Unless
        // the last player who pressed pressed ahead of his move, his piece
        // still in the air (3): the stories reading it moved, then taken
        // unseen (a ply no scan showed, 2), cost no less, so his press
        // makes nothing certain of his move.
        let mut ahead = if hands {
            pressed_ahead(pos, sensed, pressed)
        } else {
            Vec::new()
        };
        ahead.retain(|line| ahead_passes(line));
        let completed = common_prefix(hand.iter().chain(&ahead));
        if !completed.is_empty() && completed.len() <= pressed {
            return ScanReading::Moves(completed);
        }
        hand.extend(ahead);
    }
    conclude(exact, &hand)
}

/// The stories of a press ahead of its move: `pressed - 1` legal moves
/// from `pos` (each completed by a press), then the last player who
/// pressed with his piece still in the air, which a player who presses a
/// moment before his piece is down leaves there (something in the air once
/// completed, [`AIR_COMPLETED`](super::cost::AIR_COMPLETED)).
fn pressed_ahead(pos: &Chess, sensed: &SensedBoard, pressed: usize) -> Vec<Vec<Move>> {
    let Some(plies) = pressed.checked_sub(1).filter(|&p| p <= MAX_HAND_PLIES) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    hand_lines(
        pos,
        sensed,
        plies,
        plies,
        Slides::PutDown,
        &mut Vec::new(),
        &mut found,
    );
    // Only lifted: a piece the scan shows where the moves put none, or
    // another piece, is no piece in the air.
    found.retain(|line| {
        let mut end = pos.clone();
        for &m in line {
            end.play_unchecked(m);
        }
        let board = end.board();
        line.len() == plies
            && sensed.occupied().into_iter().all(|sq| {
                board
                    .piece_at(sq)
                    .is_some_and(|p| sensed.piece_at(sq).is_none_or(|q| q == p))
            })
    });
    found
}

/// The lines that leave a move in progress and compete with exact
/// explanations of `shortest` moves: those after fewer moves (after as
/// many, the exact sequence is the shorter story).
fn shorter_hands(
    pos: &Chess,
    sensed: &SensedBoard,
    shortest: Option<usize>,
    pressed: usize,
    slides: Slides,
) -> Vec<Vec<Move>> {
    // A candidate the board shows as it stands (no move on from it) leaves
    // no fewer moves for a hand.
    let plies = shortest
        .map_or(MAX_HAND_PLIES, |k| k.saturating_sub(1))
        .min(MAX_HAND_PLIES);
    // Only a board that names the pieces tells a piece caught on its
    // path from another piece's move there.
    let slides = match slides {
        Slides::Caught if !sensed.identifies_all() => Slides::Snapshot,
        other => other,
    };
    let mut hand = Vec::new();
    hand_lines(
        pos,
        sensed,
        plies,
        pressed,
        slides,
        &mut Vec::new(),
        &mut hand,
    );
    hand
}

/// What the exact explanations of a scan and the lines that leave a move
/// in progress say together: the moves they all begin with, or a hand to
/// wait for, or the candidates.
fn conclude(exact: Vec<Vec<Move>>, hand: &[Vec<Move>]) -> ScanReading {
    if exact.is_empty() {
        return if hand.is_empty() {
            ScanReading::None
        } else {
            ScanReading::Hand
        };
    }
    let prefix = common_prefix(exact.iter().chain(hand));
    if !prefix.is_empty() {
        ScanReading::Moves(prefix)
    } else if !hand.is_empty() {
        ScanReading::Hand
    } else {
        ScanReading::Ambiguous(exact)
    }
}

/// One snapshot of a board that only senses occupancy, with the snapshots
/// before it: the record's position `pos`, shown by event `since`, and
/// `settling`, the squares the last recorded move may still be changing
/// (see [`Snapshots::allow`]).
pub(super) struct SnapshotLines<'a> {
    pub(super) pos: &'a Chess,
    pub(super) sensed: &'a SensedBoard,
    pub(super) snapshots: &'a Snapshots,
    pub(super) since: u64,
    pub(super) settling: Bitboard,
}

impl SnapshotLines<'_> {
    /// Reads the snapshot. Every sequence of up to three legal moves that
    /// leads to it through the snapshots since the record's position, in
    /// order, counts, weighed by the square changes it needs: the fewest
    /// win (between two scans a capture changes a square twice and reads
    /// as nothing at all, so a longer line with fewer captures is as
    /// likely as a shorter one with more). Sequences of fewer moves that
    /// leave a move in progress count too. Only the moves they all begin
    /// with are certain. `pressed` and `hands` as in [`read_scan`].
    pub(super) fn read(&self, pressed: usize, hands: bool) -> ScanReading {
        self.read_costed(pressed, hands, true).0
    }

    /// As [`Self::read`], with what the lines read cost (see
    /// [`Self::costed_lines`]; `usize::MAX` when none is read): more than
    /// none when every line needs a scan to have caught a blip. With
    /// `paths`, a scan before the last may have caught a plain move's
    /// piece on its path (see [`Self::exact_cost`]).
    pub(super) fn read_costed(
        &self,
        pressed: usize,
        hands: bool,
        paths: bool,
    ) -> (ScanReading, usize) {
        let (exact, hand, cost) = self.costed_lines(&[], pressed, hands, (false, paths));
        (conclude(exact, &hand), cost)
    }

    /// As [`Self::read`], with no scan before the last read as a piece
    /// caught on its path: for telling which square of a scan nothing
    /// explained was the blip. The square forgotten is that scan's fault
    /// already; a story reading another square of the same scan as a
    /// piece on its way puts a second fault in it, dearer than the story
    /// that needs the blip alone.
    pub(super) fn read_unslid(&self, pressed: usize, hands: bool) -> ScanReading {
        let (exact, hand, _) = self.costed_lines(&[], pressed, hands, (false, false));
        conclude(exact, &hand)
    }

    /// The lines from the record's position that explain the snapshot: the
    /// position itself (no move), or lines of up to three moves that lead
    /// to it through the snapshots before it; then those that leave a move
    /// in progress after them.
    pub(super) fn explanations(&self) -> (Vec<Vec<Move>>, Vec<Vec<Move>>) {
        if self.still() {
            return (vec![Vec::new()], Vec::new());
        }
        self.lines(&[], 0, true)
    }

    /// Whether the snapshot shows the record's position itself, and the
    /// ones before it allow that no move was made.
    fn still(&self) -> bool {
        self.sensed.occupied() == self.pos.board().occupied()
            && self
                .snapshots
                .allow(self.pos, &[], self.since, self.settling)
    }

    /// How many of `moves`, read from this snapshot, stand even if one
    /// square it shows changed, changed at this very scan, was a blip (a
    /// blip lasts less than a scan period: the next scan shows it gone),
    /// and the squares whose blip would change the rest. A blip on a piece
    /// the player to move does not own, or on an empty square, can make
    /// up moves nobody made (a capture, then a piece moved onto the
    /// capturer's square, reads as the piece gone) or change the last one.
    pub(super) fn blip_proof(&self, moves: &[Move]) -> (usize, Bitboard) {
        let mut proof = moves.len();
        let mut suspect = Bitboard::EMPTY;
        let made = story_cost(self.snapshots, self.pos, moves, self.since);
        let suspects = self
            .snapshots
            .blip_suspects(self.pos.board().occupied(), self.sensed.occupied());
        for sq in suspects {
            let (sensed, snapshots) = self.blipped(sq);
            let without = SnapshotLines {
                sensed: &sensed,
                snapshots: &snapshots,
                ..*self
            };
            let lines = if without.still() {
                vec![Vec::new()]
            } else {
                let (exact, hand) = without.lines(&[], 0, true);
                // Without the blip, a hand at work after fewer moves (its
                // piece lifted, a victim off) is a story too, when the
                // blip and the hand cost no more than the margin above
                // the moves (plies the board never showed alone).
                let rival = |line: &Vec<Move>| {
                    BLIP + story_cost(&snapshots, self.pos, line, self.since) <= made + MARGIN
                };
                exact
                    .into_iter()
                    .chain(hand.into_iter().filter(rival))
                    .collect()
            };
            for line in lines.iter().filter(|line| line.len() <= moves.len()) {
                let agree = moves.iter().zip(line).take_while(|(a, b)| a == b).count();
                if agree < moves.len() {
                    proof = proof.min(agree);
                    suspect.add(sq);
                }
            }
        }
        (proof, suspect)
    }

    /// The board and the snapshots as they would be had this snapshot's
    /// square `sq` been a blip: what the sensors showed there flipped.
    pub(super) fn blipped(&self, sq: Square) -> (SensedBoard, Snapshots) {
        let mut sensed = self.sensed.clone();
        if sensed.occupied().contains(sq) {
            sensed.lift(sq, u64::MAX);
        } else {
            sensed.place(sq, None, u64::MAX);
        }
        let snapshots = self.snapshots.with_last(sensed.occupied());
        (sensed, snapshots)
    }

    /// The square a move read alone from this snapshot filled, filled at
    /// this very scan, if a blip there would make it a capture by the same
    /// piece instead (a knight lifted for Nxb5, and c4 caught full for a
    /// moment, reads as Nc4).
    pub(super) fn one_move_blip(&self, mv: Move) -> Bitboard {
        let to = mv.to();
        if mv.is_capture()
            || mv.is_castle()
            || !self.snapshots.changed_last().contains(to)
            || !self.sensed.occupied().contains(to)
        {
            return Bitboard::EMPTY;
        }
        let mut sensed = self.sensed.clone();
        sensed.lift(to, u64::MAX);
        let snapshots = self.snapshots.with_last(sensed.occupied());
        let without = SnapshotLines {
            sensed: &sensed,
            snapshots: &snapshots,
            ..*self
        };
        let (exact, _) = without.lines(&[], 0, false);
        if exact
            .iter()
            .any(|line| line.len() == 1 && line[0].from() == mv.from() && line[0].is_capture())
        {
            Bitboard::from_square(to)
        } else {
            Bitboard::EMPTY
        }
    }

    /// Reads a snapshot that no line of up to three moves from the record
    /// explains, from the candidates listed for it earlier (each a line
    /// from the record's position): the board may have gone on by up to
    /// three moves from any of them. Returns every line from the record
    /// that explains the snapshot through the ones before it, and every
    /// one that leaves a move in progress after it (a hand): the
    /// candidates that still fit, gone on. A candidate no longer legal
    /// from the record is dropped.
    pub(super) fn candidates(
        &self,
        candidates: &[Vec<Move>],
        hands: bool,
    ) -> (Vec<Vec<Move>>, Vec<Vec<Move>>) {
        let mut exact = Vec::new();
        let mut hand = Vec::new();
        for line in candidates {
            if !is_legal_line(self.pos, line) {
                continue;
            }
            // Whether the player to move at the candidate's end pressed is
            // not known: his hand counts. A scan since may have caught a
            // piece of the line on its way to a capture (a slide).
            let (e, h, _) = self.costed_lines(line, 0, hands, (true, true));
            exact.extend(e);
            hand.extend(h);
            // Its last move, read from a scan that caught the piece on its
            // way (a snapshot is any instant of a move), may have gone on
            // along the same line: the slide is weighed as the scans read
            // it, from the line before that move.
            if let Some((&last, before)) = line.split_last() {
                let (e, h, _) = self.costed_lines(before, 0, hands, (true, true));
                let further =
                    |l: &Vec<Move>| l.get(before.len()).is_some_and(|&m| went_on(last, m));
                exact.extend(e.into_iter().filter(further));
                hand.extend(h.into_iter().filter(further));
            }
        }
        (distinct(exact), distinct(hand))
    }

    /// The lines from `pos` that begin with `prefix` and go on by up to
    /// three moves to the scan, through the snapshots (the fewest square
    /// changes after `prefix` win, then the fewest moves), and, when
    /// `hands`, those that leave a move in progress after fewer moves.
    fn lines(
        &self,
        prefix: &[Move],
        pressed: usize,
        hands: bool,
    ) -> (Vec<Vec<Move>>, Vec<Vec<Move>>) {
        let (exact, hand, _) = self.costed_lines(prefix, pressed, hands, (false, false));
        (exact, hand)
    }

    /// As [`Self::lines`], weighed by what the snapshots make each line
    /// cost ([`Snapshots::cost`]: a scan that caught a piece in two places
    /// is a blip): those within the margin of the cheapest survive, and
    /// that cost. A line needing a blip never survives beside one that
    /// needs none, a hand at work included. With `slides` (candidates
    /// followed), a scan before the last may have caught a piece of the
    /// line on its way to a capture (see [`Snapshots::cost_sliding`]).
    fn costed_lines(
        &self,
        prefix: &[Move],
        pressed: usize,
        hands: bool,
        (slides, paths): (bool, bool),
    ) -> (Vec<Vec<Move>>, Vec<Vec<Move>>, usize) {
        let (pos, sensed) = (self.pos, self.sensed);
        let mut from = pos.clone();
        for &m in prefix {
            from.play_unchecked(m);
        }
        let whole = |line: &[Move]| [prefix, line].concat();
        let (mut exact, mut faults) =
            self.cheapest_exact(prefix, &from, (slides, paths), |_, cost| cost);
        if slides {
            // Followed, a line may go on by a slide or by plies no scan
            // showed, each costing as the table says: the continuations
            // cheapest so are followed too, or the one reading a caught
            // piece as a move made wins over the slide however many moves
            // it infers.
            let (priced, priced_faults) =
                self.cheapest_exact(prefix, &from, (slides, paths), |line, cost| {
                    cost + self.inferred(line, slides)
                });
            exact = distinct(exact.into_iter().chain(priced).collect());
            faults = faults.min(priced_faults);
        }
        if !hands {
            return (exact, Vec::new(), faults);
        }
        let shortest = exact.iter().map(|line| line.len() - prefix.len()).min();
        let pressed = pressed.saturating_sub(prefix.len());
        let mut hand: Vec<Vec<Move>> =
            shorter_hands(&from, sensed, shortest, pressed, taking(slides))
                .iter()
                .map(|line| whole(line))
                .collect();
        for line in &exact {
            hand.extend(moved_then_taken(pos, sensed, line));
        }
        let hand: Vec<(Vec<Move>, usize)> = hand
            .into_iter()
            .filter_map(|line| {
                let cost = self.hand_cost(&line, slides)?;
                Some((line, cost))
            })
            .collect();
        let cheapest = hand.iter().map(|(_, cost)| *cost).fold(faults, usize::min);
        if faults > cheapest.saturating_add(MARGIN) {
            exact.clear();
        }
        let hand = hand
            .into_iter()
            .filter(|(_, cost)| *cost <= cheapest.saturating_add(MARGIN))
            .map(|(line, _)| line)
            .collect();
        (exact, hand, cheapest)
    }
}

impl SnapshotLines<'_> {
    /// What the snapshots make `line` cost ([`Snapshots::cost`]), with
    /// `slides` as [`Snapshots::cost_sliding`] reads them.
    fn line_cost(&self, line: &[Move], then_hand: bool, slides: Sliding) -> Option<usize> {
        self.snapshots.cost_sliding(
            self.pos,
            line,
            (self.since, self.settling),
            then_hand,
            slides,
        )
    }

    /// What the snapshots make `line`, explaining the scan exactly, cost.
    /// Read on its own (`paths`), a scan before the last may have caught a
    /// plain move's piece on its path (a slide, 1: a scan is any instant
    /// of a move); a line that needs such a slide is a story as any other,
    /// so it is priced by the whole table, its plies no scan showed (2
    /// each) too, or a line of moves nobody saw would read a caught piece
    /// for less than the move it was making.
    fn exact_cost(&self, line: &[Move], (slides, paths): (bool, bool)) -> Option<usize> {
        let cost = self.line_cost(line, false, sliding(slides, false));
        if cost.is_some() || slides || !paths {
            return cost;
        }
        let unshown = self.snapshots.plies_unshown(self.pos, line, self.since);
        Some(self.line_cost(line, false, Sliding::Any)? + INFERRED_PLY * unshown)
    }

    /// The lines from `prefix` (played to `from`) that go on by up to
    /// three moves to the scan, the cheapest by `price` (a whole line and
    /// what the snapshots make it cost), then by square changes, then by
    /// moves; and what the snapshots make the first of them cost.
    fn cheapest_exact(
        &self,
        prefix: &[Move],
        from: &Chess,
        (slides, paths): (bool, bool),
        price: impl Fn(&[Move], usize) -> usize,
    ) -> (Vec<Vec<Move>>, usize) {
        let sensed = self.sensed;
        let whole = |line: &[Move]| [prefix, line].concat();
        let before = from.board().occupied().count();
        let after = sensed.occupied().count();
        let mut exact: Vec<Vec<Move>> = Vec::new();
        // The cheapest lines so far: their price, then their square changes.
        let mut best = (usize::MAX, usize::MAX);
        let mut faults = usize::MAX;
        if !prefix.is_empty()
            && sensed.occupied() == from.board().occupied()
            && let Some(cost) = self.exact_cost(prefix, (slides, paths))
        {
            // The candidate itself, the board still there.
            exact.push(prefix.to_vec());
            best = (price(prefix, cost), 0);
            faults = cost;
        }
        for plies in 1..=MAX_PLIES {
            // Each move changes at least two squares: longer lines can no
            // longer need as few changes, nor cost less than none.
            if after > before || (best.0 == 0 && 2 * plies > best.1) {
                break;
            }
            if before - after > plies {
                continue;
            }
            for (line, cost) in exact_lines_of(from, sensed, plies)
                .into_iter()
                .filter_map(|line| {
                    let cost = self.exact_cost(&whole(&line), (slides, paths))?;
                    Some((line, cost))
                })
            {
                // Lines are tried shortest first: between as many changes,
                // fewer moves win (castling over the king and the rook
                // moved one after the other, with an opponent's move
                // between).
                let key = (price(&whole(&line), cost), square_changes(&line));
                if key < best {
                    best = key;
                    faults = cost;
                    exact.clear();
                }
                if key == best
                    && exact
                        .first()
                        .is_none_or(|first| first.len() == prefix.len() + plies)
                {
                    exact.push(whole(&line));
                }
            }
        }
        (distinct(exact), faults)
    }

    /// What the plies of `line` no scan showed cost, when a listed line is
    /// followed (`slides`): it may go on by a slide or by such plies, and
    /// each costs as the table says in choosing between them, or the line
    /// reading a caught piece as moves made wins over the slide however
    /// many moves it infers.
    fn inferred(&self, line: &[Move], slides: bool) -> usize {
        if slides {
            INFERRED_PLY * self.snapshots.plies_unshown(self.pos, line, self.since)
        } else {
            0
        }
    }

    /// What the snapshots make `line`, then a move in progress, cost; with
    /// `slides`, a capture's piece the last scan caught on its path, the
    /// victim off, is a slide (1), the scans before it passing through
    /// `line` with that piece in the hand.
    fn hand_cost(&self, line: &[Move], slides: bool) -> Option<usize> {
        let mut end = self.pos.clone();
        for &m in line {
            end.play_unchecked(m);
        }
        match capture_caught_on_path(&end, self.sensed) {
            Some(on) if slides && !hand_in_progress(&end, self.sensed) => {
                let lifted = SnapshotLines {
                    snapshots: &self.snapshots.with_last(self.sensed.occupied().without(on)),
                    ..*self
                };
                Some(SLIDE + lifted.line_cost(line, true, Sliding::Any)?)
            }
            _ => self.line_cost(line, true, sliding(slides, false)),
        }
    }
}

impl SnapshotLines<'_> {
    /// The lines of fewer than `plies` moves from the record's position
    /// after which the latest scan caught a capture's piece on an empty
    /// square of its path, the piece it takes already off (a slide, 1),
    /// the scans before passing through the line with that piece in the
    /// hand; each with the square it was caught on. A scan is any instant
    /// of a move: the hand takes the victim off, then drags its piece over
    /// the path. Read from the record's position, the same squares read as
    /// moves made (the slider put down there, the victim's square emptied
    /// by plies no scan showed), so the moves past the line wait for the
    /// next scan, which shows where the piece was put down.
    pub(super) fn capture_slides(&self, plies: usize) -> Vec<(Vec<Move>, Square)> {
        let mut found = Vec::new();
        self.capture_slides_from(
            self.pos,
            plies.min(MAX_HAND_PLIES + 1),
            &mut Vec::new(),
            &mut found,
        );
        found
    }

    fn capture_slides_from(
        &self,
        pos: &Chess,
        plies: usize,
        path: &mut Vec<Move>,
        found: &mut Vec<(Vec<Move>, Square)>,
    ) {
        let differ = (pos.board().occupied() ^ self.sensed.occupied()).count();
        if differ == 3
            && !hand_in_progress(pos, self.sensed)
            && let Some(on) = capture_slide_caught(pos, self.sensed)
                .filter(|&on| self.sensed.first_shown_by_latest_scan(on))
        {
            let lifted = SnapshotLines {
                snapshots: &self.snapshots.with_last(self.sensed.occupied().without(on)),
                ..*self
            };
            if lifted.line_cost(path, true, Sliding::No).is_some() {
                found.push((path.clone(), on));
            }
        }
        if path.len() + 1 >= plies {
            return;
        }
        for m in pos.legal_moves() {
            let mut after = pos.clone();
            after.play_unchecked(m);
            path.push(m);
            self.capture_slides_from(&after, plies, path, found);
            path.pop();
        }
    }
}

/// Which pieces a scan before the last may have caught on their path:
/// any, when listed lines are followed (`slides`); a plain move's, when
/// the board is read on its own (`paths`).
fn sliding(slides: bool, paths: bool) -> Sliding {
    match (slides, paths) {
        (true, _) => Sliding::Any,
        (false, true) => Sliding::Plain,
        (false, false) => Sliding::No,
    }
}

/// The pieces in progress read after a line: with `slides`, also a
/// capture's piece caught on its path (see [`Slides::Taking`]).
fn taking(slides: bool) -> Slides {
    if slides {
        Slides::Taking
    } else {
        Slides::Snapshot
    }
}

/// Whether `m` is the move `short` went on further along its line: the
/// same piece from the same square, `short`'s square on its way.
pub(super) fn went_on(short: Move, m: Move) -> bool {
    match (short, m) {
        (
            Move::Normal {
                from,
                to,
                role,
                promotion: None,
                ..
            },
            Move::Normal {
                from: f,
                to: t,
                role: r,
                ..
            },
        ) => from == f && role == r && shakmaty::attacks::between(from, t).contains(to),
        _ => false,
    }
}

/// Whether `line` is a sequence of legal moves from `pos`.
pub(super) fn is_legal_line(pos: &Chess, line: &[Move]) -> bool {
    let mut pos = pos.clone();
    line.iter().all(|&m| {
        let legal = pos.is_legal(m);
        if legal {
            pos.play_unchecked(m);
        }
        legal
    })
}

/// The lines that end like `line` but with its last move, a capture, made
/// to another square instead, where the opponent has begun to take the
/// piece: both only empty the piece's square, and a scan that caught
/// neither the captured piece lifted nor the piece on its other square
/// cannot tell them apart. The next move does.
fn moved_then_taken(pos: &Chess, sensed: &SensedBoard, line: &[Move]) -> Vec<Vec<Move>> {
    let Some((&last, prefix)) = line.split_last() else {
        return Vec::new();
    };
    if !matches!(
        last,
        Move::Normal {
            capture: Some(_),
            ..
        }
    ) {
        return Vec::new();
    }
    let mut before = pos.clone();
    for &m in prefix {
        before.play_unchecked(m);
    }
    before
        .legal_moves()
        .into_iter()
        .filter(|m| m.from() == last.from() && !m.is_capture())
        .filter(|&m| {
            let mut after = before.clone();
            after.play_unchecked(m);
            in_progress(&after, sensed)
        })
        .map(|m| {
            let mut alt = prefix.to_vec();
            alt.push(m);
            alt
        })
        .collect()
}

/// How many times the squares change as `line` is played, hand by hand: a
/// move empties its square and fills another; a capture also empties the
/// captured piece's square first; castling moves two pieces.
fn square_changes(line: &[Move]) -> usize {
    line.iter()
        .map(|m| match m {
            Move::Castle { .. } => 4,
            _ if m.is_capture() => 3,
            _ => 2,
        })
        .sum()
}

/// Checks `moves`, read from the squares' histories, against what the scan
/// alone allows: every sequence of as many moves or fewer that explains it,
/// and every one of fewer moves that leaves a move in progress.
/// The moves they all begin with are certain.
/// `since`: when the board first showed `pos`.
/// `hands`: which moves in progress may be in the state.
pub(super) fn confirm(
    pos: &Chess,
    sensed: &SensedBoard,
    since: u64,
    moves: Vec<Move>,
    pressed: usize,
    hands: Hands,
    slides: Slides,
) -> ScanReading {
    let (mut exact, _) = exact_explanations(pos, sensed, moves.len());
    if matches!(hands, Hands::NotCameDown | Hands::TakingOnly) {
        // A dump hides only what came before it, and the sensors count
        // every square it showed occupied as possibly refilled then: a
        // line their histories rule out (a square filled twice, never
        // emptied in between) was not played.
        exact.retain(|line| admits_line(pos, sensed, since, line));
    }
    // The line the histories read is an explanation too, however many
    // shorter ones the scan alone allows.
    if !exact.contains(&moves) {
        exact.push(moves);
    }
    let mut hand = Vec::new();
    if hands != Hands::None {
        let shortest = exact.iter().map(Vec::len).min().unwrap_or(1);
        let hand_plies = (shortest - 1).min(MAX_HAND_PLIES);
        let slides = if hands == Hands::Any && sensed.identifies_all() {
            slides
        } else {
            Slides::PutDown
        };
        hand_lines(
            pos,
            sensed,
            hand_plies,
            pressed,
            slides,
            &mut Vec::new(),
            &mut hand,
        );
        hand.retain(|line| match hands {
            Hands::NotCameDown => !hand_came_down(pos, sensed, line),
            Hands::TakingOnly => takes_or_castles(pos, sensed, line),
            Hands::None | Hands::Any => true,
        });
    }
    conclude(exact, &hand)
}

/// The lines of moves that exactly explain what an identifying board's
/// scan shows, as [`read_scan`] finds them.
pub(super) fn exact_now(pos: &Chess, sensed: &SensedBoard) -> Vec<Vec<Move>> {
    exact_explanations(pos, sensed, MAX_PLIES).0
}

/// A line, other than `moves`, that explains what the sensors show and
/// begins with one of the `passed` lines: those that exactly explained an
/// earlier scan from `pos` which was read as a hand at work instead. A
/// rook caught mid-slide on the square a longer line puts it on reads
/// like that line made; when the board then goes on to a position both
/// stories reach, nothing tells them apart. Not a line the snapshots
/// since rule out (`allowed`: it must pass through each in order).
pub(super) fn passed_over(
    pos: &Chess,
    sensed: &SensedBoard,
    moves: &[Move],
    passed: &[Vec<Move>],
    allowed: impl Fn(&[Move]) -> bool,
) -> Option<Vec<Move>> {
    for line in passed {
        if line.starts_with(moves) || moves.starts_with(line) || !is_legal_line(pos, line) {
            continue;
        }
        let mut after = pos.clone();
        for &m in line {
            after.play_unchecked(m);
        }
        if sensed.shows(after.board()) && allowed(line) {
            return Some(line.clone());
        }
        if let Some(whole) = exact_explanations(&after, sensed, 2)
            .0
            .into_iter()
            .map(|tail| line.iter().copied().chain(tail).collect::<Vec<_>>())
            .find(|whole| allowed(whole))
        {
            return Some(whole);
        }
    }
    None
}

/// Whether `line`, played from `pos`, may have gone on to what the sensors
/// show by up to `plies` more moves: they show where it leads, or a few
/// more moves, or a move in progress after them, lead there from it.
pub(super) fn may_reach(pos: &Chess, line: &[Move], sensed: &SensedBoard, plies: usize) -> bool {
    if !is_legal_line(pos, line) {
        return false;
    }
    let mut after = pos.clone();
    for &m in line {
        after.play_unchecked(m);
    }
    sensed.shows(after.board())
        || exact_explanations(&after, sensed, plies.min(MAX_PLIES))
            .1
            .is_some()
        || hand_may_explain(&after, sensed, plies, 0)
}

/// Whether a move in progress after at most `plies` legal moves from `pos`
/// (none of the players who `pressed`, as in [`read_scan`]) may be what
/// the sensors show.
pub(super) fn hand_may_explain(
    pos: &Chess,
    sensed: &SensedBoard,
    plies: usize,
    pressed: usize,
) -> bool {
    let mut found = Vec::new();
    hand_lines(
        pos,
        sensed,
        plies.min(MAX_HAND_PLIES),
        pressed,
        Slides::PutDown,
        &mut Vec::new(),
        &mut found,
    );
    !found.is_empty()
}

/// Whether a move in progress after more of `line`'s moves from `pos` than
/// [`hand_may_explain`] searches (but not all of them) may be what the
/// sensors show. A line ending in a capture always leaves one: the
/// capturing piece still in the hand, the captured one not yet taken off,
/// looks the same to occupancy sensors (7.cxd4 read after an outage may be
/// 6...exd4 with the c3 pawn lifted, still free to go to c4).
pub(super) fn hand_along(pos: &Chess, line: &[Move], sensed: &SensedBoard) -> bool {
    let mut pos = pos.clone();
    let before_last = line.len().saturating_sub(1);
    line[..before_last].iter().enumerate().any(|(i, &m)| {
        pos.play_unchecked(m);
        i >= MAX_HAND_PLIES && hand_in_progress(&pos, sensed)
    })
}

/// The distinct sequences of the fewest legal moves (at most `max`) from
/// `pos` after which the board is what the sensors show, and their length.
pub(super) fn exact_explanations(
    pos: &Chess,
    sensed: &SensedBoard,
    max: usize,
) -> (Vec<Vec<Move>>, Option<usize>) {
    let before = pos.board().occupied().count();
    let after = sensed.occupied().count();
    if after > before {
        return (Vec::new(), None);
    }
    for plies in 1..=max {
        // Each move takes off at most one piece.
        if before - after > plies {
            continue;
        }
        let found = exact_lines_of(pos, sensed, plies);
        if !found.is_empty() {
            return (distinct(found), Some(plies));
        }
    }
    (Vec::new(), None)
}

/// Every sequence of exactly `plies` legal moves from `pos` after which
/// the board is what the sensors show.
pub(super) fn exact_lines_of(pos: &Chess, sensed: &SensedBoard, plies: usize) -> Vec<Vec<Move>> {
    let mut found = Vec::new();
    exact_lines(
        pos,
        sensed,
        plies,
        &mut Vec::with_capacity(plies),
        &mut found,
    );
    found
}

/// Appends to `found` every sequence of exactly `plies` legal moves from
/// `pos` after which the board is what the sensors show.
fn exact_lines(
    pos: &Chess,
    sensed: &SensedBoard,
    plies: usize,
    path: &mut Vec<Move>,
    found: &mut Vec<Vec<Move>>,
) {
    let last = plies == 1;
    for m in pos.legal_moves() {
        // The last move leaves its square empty and its destination full.
        // (Castling is written king takes rook: its squares are checked
        // with the board.)
        if last
            && !m.is_castle()
            && (sensed.occupied().contains(from_square(&m)) || !sensed.occupied().contains(m.to()))
        {
            continue;
        }
        let mut after = pos.clone();
        after.play_unchecked(m);
        path.push(m);
        if last {
            if sensed.shows(after.board()) {
                found.push(path.clone());
            }
        } else {
            exact_lines(&after, sensed, plies - 1, path, found);
        }
        path.pop();
    }
}

/// Every sequence of at most `plies` legal moves from `pos` (no more than
/// [`MAX_HAND_PLIES`]) after which the sensors show a move in progress.
pub(super) fn hand_explanations(pos: &Chess, sensed: &SensedBoard, plies: usize) -> Vec<Vec<Move>> {
    hand_sequences(pos, sensed, plies, Slides::PutDown)
}

/// As [`hand_explanations`], and the sequences after which the latest scan
/// caught a piece on a square of its path (a slide, on a board that names
/// the pieces and only scans).
pub(super) fn caught_explanations(
    pos: &Chess,
    sensed: &SensedBoard,
    plies: usize,
) -> Vec<Vec<Move>> {
    hand_sequences(pos, sensed, plies, Slides::Caught)
}

/// The sequences of [`hand_lines`] from the record's turn, none cut short
/// by a press, with `slides` read as the scan allows.
fn hand_sequences(
    pos: &Chess,
    sensed: &SensedBoard,
    plies: usize,
    slides: Slides,
) -> Vec<Vec<Move>> {
    let mut found = Vec::new();
    hand_lines(
        pos,
        sensed,
        plies.min(MAX_HAND_PLIES),
        0,
        slides,
        &mut Vec::new(),
        &mut found,
    );
    found
}

/// Appends to `found` every sequence of at most `plies` legal moves from
/// `pos` after which the sensors show a move in progress, but not those
/// shorter than `pressed` (the players who pressed, in turn from the
/// player to move, are done with their moves).
fn hand_lines(
    pos: &Chess,
    sensed: &SensedBoard,
    plies: usize,
    pressed: usize,
    slides: Slides,
    path: &mut Vec<Move>,
    found: &mut Vec<Vec<Move>>,
) {
    if path.len() >= pressed
        && (hand_in_progress(pos, sensed)
            // Castling half done is a piece in the air on any board that
            // shows any instant (a dump shows where pieces were put down):
            // only the rook caught on its way there is a slide.
            || slides != Slides::PutDown && rook_first(pos, sensed, slides == Slides::Caught)
            || slides == Slides::Taking
                && capture_caught_on_path(pos, sensed)
                    .is_some_and(|on| sensed.first_shown_by_latest_scan(on))
            || slides == Slides::Caught
                && slide_caught(pos, sensed).is_some_and(|on| {
                    // After the moves the presses completed, or on a square
                    // the latest scan was the first to show it on: a piece
                    // that stood there a whole scan period was put down.
                    // The square is empty in `pos`, so a piece the scan
                    // before showed there (another piece crossing it, the
                    // rooks of 33...Re2 34.Rd3 both caught on d2) had gone.
                    path.len() == pressed || sensed.first_shown_by_latest_scan(on)
                }))
    {
        found.push(path.clone());
    }
    if plies == 0 {
        return;
    }
    for m in pos.legal_moves() {
        let mut after = pos.clone();
        after.play_unchecked(m);
        path.push(m);
        hand_lines(&after, sensed, plies - 1, pressed, slides, path, found);
        path.pop();
    }
}

/// Whether the sensors show `pos` with the rook of a legal castling on its
/// castling square, or (with `drag`) on a square on its way there, and the
/// king still on its own: a rook move made, or a castling begun with the
/// rook (castling half done). A scan is one instant, and the king may
/// follow; so nothing tells them apart until the king moves, a press
/// completes the rook move, or the board goes on. Occupancy shows the same
/// (the rook put down on its castling square), so it holds there too.
fn rook_first(pos: &Chess, sensed: &SensedBoard, drag: bool) -> bool {
    let board = pos.board();
    let removed = board.occupied() & !sensed.occupied();
    let added = sensed.occupied() & !board.occupied();
    pos.legal_moves().iter().any(|m| {
        let Move::Castle { rook, .. } = *m else {
            return false;
        };
        let side = m.castling_side().expect("a castling move has a side");
        let rook_to = side.rook_to(pos.turn());
        // On its castling square, or caught on its way there (a drag).
        let way = if drag {
            shakmaty::attacks::between(rook, rook_to).with(rook_to)
        } else {
            Bitboard::from_square(rook_to)
        };
        removed == Bitboard::from_square(rook)
            && added.single_square().is_some_and(|on| way.contains(on))
            && (added & way)
                .single_square()
                .and_then(|on| sensed.piece_at(on))
                .is_none_or(|p| p == pos.turn().rook())
    })
}

/// Whether a piece caught on a square of its path counts as a move in
/// progress (after moves the presses completed, of the first player who
/// has not pressed: without a press nothing says the moves before it are
/// over, and the moves read as they stand are weighed later): on a board that reports only by scans, which show any
/// physical instant, it does; a dump, or a full reading now and then from
/// a board that reports each square, shows where pieces were put down.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Slides {
    Caught,
    PutDown,
    /// A board that only scans, sensing occupancy: no piece is read as
    /// caught on its path (too many other stories fit the same squares),
    /// but castling half done with the rook on its castling square is a
    /// piece in the air, as on any board that shows any instant.
    Snapshot,
    /// Only a capture's piece caught on its path with the piece it takes
    /// already off: on occupancy, a move made there would need the
    /// opponent's hand at work besides (see
    /// [`super::scan_slide::capture_slide_caught`]).
    Taking,
}

/// Which moves in progress may explain a state, besides moves made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Hands {
    /// None: a dump on a board that identifies pieces, read before any hand
    /// moved again, or the board as the players left it at the game's end.
    None,
    /// Any: a snapshot may catch a hand at any moment.
    Any,
    /// On occupancy, square by square after a dump: a hand whose pieces
    /// came down on a square (a capture made) is no longer in the air.
    NotCameDown,
    /// On occupancy, in a dump: only a hand that took an opponent's piece
    /// off, or castles. A piece of the player to move missing from a dump,
    /// with a capture that explains it, is read as that capture made: the
    /// board was still while it was unplugged.
    TakingOnly,
}

/// Whether the move in progress after `line` from `pos` took an opponent's
/// piece off the board, or is castling (a square filled).
fn takes_or_castles(pos: &Chess, sensed: &SensedBoard, line: &[Move]) -> bool {
    let mut after = pos.clone();
    for &m in line {
        after.play_unchecked(m);
    }
    let board = after.board();
    (board.by_color(!after.turn()) & !sensed.occupied()).any()
        || (sensed.occupied() & !board.occupied()).any()
}

/// Whether, after `line` from `pos`, the pieces of the player to move that
/// the sensors miss were all lifted before a piece was last put on a
/// square that reads occupied in both: the hand holding them came down
/// there, capturing.
fn hand_came_down(pos: &Chess, sensed: &SensedBoard, line: &[Move]) -> bool {
    let mut after = pos.clone();
    for &m in line {
        after.play_unchecked(m);
    }
    let board = after.board();
    let held = board.by_color(after.turn()) & !sensed.occupied();
    let Some(lifted) = held.into_iter().map(|sq| sensed.last_lift(sq)).max() else {
        return false;
    };
    (board.occupied() & sensed.occupied())
        .into_iter()
        .any(|sq| sensed.last_place(sq) > lifted)
}

fn from_square(m: &Move) -> Square {
    m.from().expect("chess moves have an origin")
}

/// The moves every line begins with.
pub(super) fn common_prefix<'a>(mut lines: impl Iterator<Item = &'a Vec<Move>>) -> Vec<Move> {
    let Some(first) = lines.next() else {
        return Vec::new();
    };
    let mut len = first.len();
    for line in lines {
        len = first
            .iter()
            .zip(line)
            .take(len)
            .take_while(|(a, b)| a == b)
            .count();
    }
    first[..len].to_vec()
}

#[cfg(test)]
mod tests {
    use shakmaty::uci::UciMove;

    use super::*;
    use crate::{event::Scan, test_support::position};

    fn play(pos: &Chess, ucis: &[&str]) -> (Chess, Vec<Move>) {
        let mut pos = pos.clone();
        let mut moves = Vec::new();
        for uci in ucis {
            let m = uci.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
            pos.play_unchecked(m);
            moves.push(m);
        }
        (pos, moves)
    }

    /// The sensors after one scan of `board`, from a board that showed
    /// `pos` before.
    fn scanned(pos: &Chess, board: &shakmaty::Board, identity: bool) -> SensedBoard {
        let mut sensed = SensedBoard::showing(pos.board());
        sensed.apply_scan(&Scan::from_board(board, identity), 1);
        sensed
    }

    /// The position after `sans` from the start.
    fn after_sans(sans: &str) -> Chess {
        let mut pos = Chess::default();
        for san in sans.split(' ') {
            let m = san
                .parse::<shakmaty::san::San>()
                .unwrap()
                .to_move(&pos)
                .unwrap();
            pos.play_unchecked(m);
        }
        pos
    }

    /// The game after 11...O-O-O (White to play 12. Qxa7).
    fn before_qxa7() -> Chess {
        after_sans(
            "e4 e5 Nf3 Nf6 Nc3 Nc6 d4 exd4 Nxd4 Bc5 Nxc6 dxc6 Bd3 Bg4 f3 Be6 Qe2 Qd7 Be3 Bxe3 Qxe3 O-O-O",
        )
    }

    #[test]
    fn a_candidate_reaches_a_board_only_by_as_many_moves_as_were_made() {
        let start = Chess::default();
        let (now, _) = play(&start, &["e2e4", "e7e5", "g1f3"]);
        let sensed = scanned(&start, now.board(), true);
        let (_, listed) = play(&start, &["e2e4", "e7e5"]);
        assert!(may_reach(&start, &listed, &sensed, 1));
        assert!(!may_reach(&start, &listed, &sensed, 0));
        // Pawns do not go back: 1.d4 d5 never leads there.
        let (_, other) = play(&start, &["d2d4", "d7d5"]);
        assert!(!may_reach(&start, &other, &sensed, 3));
    }

    #[test]
    fn a_capture_on_a_square_never_seen_empty_is_an_explanation() {
        let pos = before_qxa7();
        let (after, moves) = play(&pos, &["e3a7"]);
        // The only move that empties e3 and nothing else is the queen's only
        // capture: a7 was emptied and refilled between the scans.
        let sensed = scanned(&pos, after.board(), false);
        let mut found = Vec::new();
        exact_lines(&pos, &sensed, 1, &mut Vec::new(), &mut found);
        assert_eq!(found, vec![moves.clone()]);
        // But the queen may be in the hand, unless he pressed his clock.
        assert_eq!(
            read_scan(&pos, &sensed, 0, true, Slides::Caught),
            ScanReading::Hand
        );
        assert_eq!(
            read_scan(&pos, &sensed, 1, true, Slides::Caught),
            ScanReading::Moves(moves)
        );
    }

    #[test]
    fn two_moves_that_another_pair_explains_as_well_are_not_recorded() {
        let pos = before_qxa7();
        // Qxa7 Qd4 and Qd4 Qxd4 leave the same squares occupied.
        let (after, _) = play(&pos, &["e3a7", "d7d4"]);
        let sensed = scanned(&pos, after.board(), false);
        let reading = read_scan(&pos, &sensed, 1, true, Slides::Caught);
        assert!(
            !matches!(reading, ScanReading::Moves(_)),
            "nothing is certain: {reading:?}"
        );
        // A board that identifies pieces tells them apart; Black's queen
        // may still be sliding on down the d-file until his press
        // completes the move (Art. 6.2.1).
        let sensed = scanned(&pos, after.board(), true);
        let (_, moves) = play(&pos, &["e3a7", "d7d4"]);
        assert_eq!(
            read_scan(&pos, &sensed, 1, true, Slides::Caught),
            ScanReading::Moves(moves[..1].to_vec())
        );
        assert_eq!(
            read_scan(&pos, &sensed, 2, true, Slides::Caught),
            ScanReading::Moves(moves)
        );
    }

    #[test]
    fn capture_and_recapture_on_one_square_of_an_identity_board() {
        // 1. e4 d5 2. exd5 Qxd5: d5 shows a black piece before and after.
        let pos = position("rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2");
        let (after, moves) = play(&pos, &["e4d5", "d8d5"]);
        let sensed = scanned(&pos, after.board(), true);
        assert_eq!(
            read_scan(&pos, &sensed, 0, true, Slides::Caught),
            ScanReading::Moves(moves)
        );
    }

    #[test]
    fn a_piece_held_is_not_read_as_a_move() {
        let pos = Chess::default();
        let mut board = pos.board().clone();
        board.discard_piece_at(Square::G1);
        let sensed = scanned(&pos, &board, false);
        assert_eq!(
            read_scan(&pos, &sensed, 0, true, Slides::Caught),
            ScanReading::Hand
        );
    }

    #[test]
    fn a_piece_first_caught_on_its_path_after_the_opponents_move_waits() {
        // 1.e4 e5 2.Nf3, then one scan (no press) shows 2...Nc6 made and
        // the f1 bishop on e2, a square of its way to b5: 2...Nc6 is
        // certain, 3.Be2 may be 3.Bb5 caught sliding.
        let (pos, _) = play(&Chess::default(), &["e2e4", "e7e5", "g1f3"]);
        let (after, moves) = play(&pos, &["b8c6", "f1e2"]);
        let sensed = scanned(&pos, after.board(), true);
        assert_eq!(
            read_scan(&pos, &sensed, 0, true, Slides::Caught),
            ScanReading::Moves(vec![moves[0]])
        );
        // The same board at a second scan: the bishop stood a whole scan
        // period on e2, so it was put down there.
        let mut again = sensed.clone();
        again.apply_scan(&Scan::from_board(after.board(), true), 2);
        assert_eq!(
            read_scan(&pos, &again, 0, true, Slides::Caught),
            ScanReading::Moves(moves)
        );
    }

    #[test]
    fn a_rook_on_its_castling_square_with_the_king_home_waits() {
        // 1.e4 e5 2.Nf3 Nc6 3.Bc4 Bc5, then the h1 rook on f1, the king
        // on e1: 4.Rf1, or castling begun with the rook.
        let (pos, _) = play(
            &Chess::default(),
            &["e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "f8c5"],
        );
        let (after, _) = play(&pos, &["h1f1"]);
        let sensed = scanned(&pos, after.board(), true);
        assert_eq!(
            read_scan(&pos, &sensed, 0, true, Slides::Caught),
            ScanReading::Hand
        );
        // White pressed: his move is over, a rook move.
        assert!(matches!(
            read_scan(&pos, &sensed, 1, true, Slides::Caught),
            ScanReading::Moves(_)
        ));
        // The rook caught on g1, on its way to f1 (a drag), the king home:
        // 4.Rg1, or the same castling begun with the rook.
        let (dragged, _) = play(&pos, &["h1g1"]);
        let sensed = scanned(&pos, dragged.board(), true);
        assert_eq!(
            read_scan(&pos, &sensed, 0, true, Slides::Caught),
            ScanReading::Hand
        );
    }

    #[test]
    fn a_move_and_the_next_players_hand_waits() {
        // 1. e4 and Black's knight in the hand. No exact line gives the
        // scan, so nothing is recorded from it here; the engine's
        // move_then_in_progress reads this case when the move's piece is
        // seen on its square.
        let pos = Chess::default();
        let (after, _) = play(&pos, &["e2e4"]);
        let mut board = after.board().clone();
        board.discard_piece_at(Square::G8);
        let sensed = scanned(&pos, &board, true);
        assert_eq!(
            read_scan(&pos, &sensed, 0, true, Slides::Caught),
            ScanReading::Hand
        );
    }

    #[test]
    fn a_player_who_pressed_twice_holds_no_piece_after_two_moves() {
        // Game 268 after 21.Qb4: the scan shows 21...Bxh3 22.g3 Qg4, or
        // 21...Qg4 22.g3 with the c8 bishop in Black's hand. Black,
        // White and Black pressed since 21.Qb4: Black's second move is
        // over too (Art. 6.2.1), so only the three moves are left.
        let pos = position("r1b2rk1/p1p3pp/1p6/4p1q1/1QP1Pp2/7R/PB3PPP/5RK1 b - - 1 21");
        let (after, moves) = play(&pos, &["c8h3", "g2g3", "g5g4"]);
        let sensed = scanned(&pos, after.board(), false);
        for pressed in 0..=2 {
            assert_eq!(
                read_scan(&pos, &sensed, pressed, true, Slides::Caught),
                ScanReading::Hand
            );
        }
        assert_eq!(
            read_scan(&pos, &sensed, 3, true, Slides::Caught),
            ScanReading::Moves(moves)
        );
    }

    /// The lines from `pos` to the last of `snapshots`, all of them shown
    /// since `pos` was.
    fn from_the_start<'a>(
        pos: &'a Chess,
        sensed: &'a SensedBoard,
        snapshots: &'a Snapshots,
    ) -> SnapshotLines<'a> {
        SnapshotLines {
            pos,
            sensed,
            snapshots,
            since: 0,
            settling: Bitboard::EMPTY,
        }
    }

    /// The blip: after 7.h3 in the blip script's game, one scan
    /// shows the c4 bishop gone.
    fn before_the_blip() -> Chess {
        after_sans("e4 d5 exd5 Nf6 Nc3 Nxd5 Bc4 c6 Nf3 Bg4 O-O e6 h3")
    }

    #[test]
    fn two_moves_a_blip_would_explain_otherwise_are_not_blip_proof() {
        let pos = before_the_blip();
        let mut board = pos.board().clone();
        board.discard_piece_at(Square::C4);
        let sensed = scanned(&pos, &board, false);
        let mut snapshots = Snapshots::default();
        snapshots.push(0, pos.board().occupied());
        snapshots.push(1, sensed.occupied());
        let lines = from_the_start(&pos, &sensed, &snapshots);
        // 7...Nxc3 8.Bd5 leave exactly c4 empty ...
        let (_, moves) = play(&pos, &["d5c3", "c4d5"]);
        assert_eq!(lines.read(0, true), ScanReading::Moves(moves.clone()));
        // ... and so does c4 read empty for a moment, with no move at all.
        assert_eq!(
            lines.blip_proof(&moves),
            (0, Bitboard::from_square(Square::C4))
        );
        // When an earlier scan already showed c4 empty (the last one only
        // changed h8 back), no blip of the last scan explains c4: the
        // moves stand.
        let mut seen = Snapshots::default();
        seen.push(0, pos.board().occupied());
        seen.push(1, sensed.occupied());
        seen.push(2, sensed.occupied() ^ Bitboard::from_square(Square::H8));
        seen.push(3, sensed.occupied());
        let lines = SnapshotLines {
            snapshots: &seen,
            ..lines
        };
        assert_eq!(lines.blip_proof(&moves), (2, Bitboard::EMPTY));
    }

    #[test]
    fn a_hand_with_its_victim_off_and_a_blip_rivals_two_moves_no_scan_showed_apart() {
        let pos = after_sans(
            "e4 e5 Nf3 Nc6 Nc3 d6 Bb5 Bd7 O-O f5 d3 f4 h3 h5 Bxc6 bxc6 d4 g5 dxe5 dxe5 Nxe5 Nf6 Ng6 Rh6",
        );
        // The knight lifted from g6, the f8 bishop taken off, a3 full.
        let mut board = pos.board().clone();
        board.discard_piece_at(Square::G6);
        let bishop = board.remove_piece_at(Square::F8).unwrap();
        board.set_piece_at(Square::A3, bishop);
        let sensed = scanned(&pos, &board, false);
        let mut snapshots = Snapshots::default();
        snapshots.push(0, pos.board().occupied());
        snapshots.push(1, sensed.occupied());
        let lines = from_the_start(&pos, &sensed, &snapshots);
        // 13.Nxf4 Ba3 leave exactly that board, with no scan of 13.Nxf4
        // alone (2) ...
        let (_, moves) = play(&pos, &["g6f4", "f8a3"]);
        assert_eq!(lines.read(0, true), ScanReading::Moves(moves.clone()));
        // ... and 13.Nxf8 under way with a3 a blip costs 3 + 1: within the
        // margin, so neither move stands on this scan alone.
        assert_eq!(
            lines.blip_proof(&moves),
            (0, Bitboard::from_square(Square::A3))
        );
        // When a scan showed 13.Nxf4 made first, the moves cost nothing:
        // the hand and the blip are no rival.
        let (after_first, _) = play(&pos, &["g6f4"]);
        let mut seen = Snapshots::default();
        seen.push(0, pos.board().occupied());
        seen.push(1, after_first.board().occupied());
        seen.push(2, sensed.occupied());
        let lines = SnapshotLines {
            snapshots: &seen,
            ..lines
        };
        assert_eq!(lines.blip_proof(&moves), (2, Bitboard::EMPTY));
    }

    /// Scans of a piece lifted from `from` (one scan), then shown on `to`:
    /// what the last one shows, and all three snapshots.
    fn lifted_then_put(pos: &Chess, from: Square, to: Square) -> (SensedBoard, Snapshots) {
        let mut lifted = pos.board().clone();
        let piece = lifted.remove_piece_at(from).unwrap();
        let mut board = lifted.clone();
        board.set_piece_at(to, piece);
        let sensed = scanned(pos, &board, false);
        let mut snapshots = Snapshots::default();
        snapshots.push(0, pos.board().occupied());
        snapshots.push(1, lifted.occupied());
        snapshots.push(2, sensed.occupied());
        (sensed, snapshots)
    }

    #[test]
    fn one_move_a_blip_would_make_a_capture_waits() {
        // The blip script's game: after 2...Nf6 the c3 knight is lifted
        // (one scan), then a scan shows b5 full as well.
        let pos = after_sans("e4 d5 Nc3 Nf6");
        let (sensed, snapshots) = lifted_then_put(&pos, Square::C3, Square::B5);
        let lines = from_the_start(&pos, &sensed, &snapshots);
        let (_, moves) = play(&pos, &["c3b5"]);
        assert_eq!(lines.read(1, true), ScanReading::Moves(moves.clone()));
        // b5 read full for a moment leaves 3.Nxd5, by the same knight.
        assert_eq!(
            lines.one_move_blip(moves[0]),
            Bitboard::from_square(Square::B5)
        );
        // 3.Nf3 the same way: no capture by the g1 knight leaves the board
        // without f3.
        let (sensed, snapshots) = lifted_then_put(&pos, Square::G1, Square::F3);
        let lines = SnapshotLines {
            sensed: &sensed,
            snapshots: &snapshots,
            ..lines
        };
        let (_, moves) = play(&pos, &["g1f3"]);
        assert_eq!(lines.read(1, true), ScanReading::Moves(moves.clone()));
        assert_eq!(lines.one_move_blip(moves[0]), Bitboard::EMPTY);
    }

    #[test]
    fn a_candidate_the_board_shows_as_it_stands_is_read_with_no_hand_before_it() {
        // A candidate 1.e4 e5 listed, and the board showing just that: no
        // shorter line leaves a hand (this once underflowed in debug
        // builds).
        let pos = Chess::default();
        let (after, moves) = play(&pos, &["e2e4", "e7e5"]);
        let sensed = scanned(&pos, after.board(), false);
        let mut snapshots = Snapshots::default();
        snapshots.push(0, pos.board().occupied());
        snapshots.push(1, sensed.occupied());
        let lines = from_the_start(&pos, &sensed, &snapshots);
        let (exact, hand) = lines.candidates(std::slice::from_ref(&moves), true);
        assert_eq!(exact, vec![moves]);
        assert!(hand.is_empty());
    }

    #[test]
    fn a_long_line_ending_in_a_capture_may_be_its_piece_still_in_the_hand() {
        let pos = after_sans("e4 e5 Nf3 Nc6 Bc4 Bc5 O-O Nf6 c3");
        // 5...Nxe4 6.d4 exd4 7.cxd4 shows as 6...exd4 with the c3 pawn
        // lifted: three moves on, more than hand_may_explain searches.
        let (after, line) = play(&pos, &["f6e4", "d2d4", "e5d4", "c3d4"]);
        let sensed = scanned(&pos, after.board(), false);
        assert!(!hand_may_explain(&pos, &sensed, line.len() - 1, 0));
        assert!(hand_along(&pos, &line, &sensed));
        // Ending with 7.Re1 instead, no hand looks like it.
        let (after, line) = play(&pos, &["f6e4", "d2d4", "e5d4", "f1e1"]);
        let sensed = scanned(&pos, after.board(), false);
        assert!(!hand_along(&pos, &line, &sensed));
    }
}
