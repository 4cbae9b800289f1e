//! Moves a scanning board's snapshot shows that wait for the next scan.
//! A sensor blip lasts less than a scan period, so one scan can catch it
//! and the next one no longer shows it; on a board that only senses
//! occupancy, a piece read gone (or an empty square read full) for one
//! scan can make up moves nobody made: after 7.h3, the c4 bishop read gone
//! is 7...Nxc3 8.Bd5. Two or more moves one snapshot alone shows, that a
//! blip on a square it changed would explain otherwise, are recorded only
//! once the next scan shows they were no blip (a wrong move is worse than
//! a late one). So is one move alone, when a blip on the square it filled
//! would make it a capture by the same piece (the a3 knight lifted for
//! Nxb5, and c4 caught full, is Nc4); if the next scan shows the square
//! empty again, and the capture explains the board with fewer moves, the
//! scan after it tells them apart. If the square stays full, a later move
//! may have filled it for real (Bxg2 with e4 caught full, then e4): the
//! move stands unless only that story explains the board exactly, and is
//! dropped once nothing follows on from it. A snapshot nothing explained,
//! with one square filled that the next scan empties again, is read
//! without it.

mod cheaper_blip;
mod ending;
mod stayed_full;
mod strict;

use shakmaty::{Bitboard, Chess, Color, Move, Position, Square};

use super::{
    Engine,
    cost::EARLY_HAND,
    occupancy_slide::{SlideVerdict, Story, may_be_on_its_way, weigh_slide},
    record::ReadFrom,
    scanned::{
        ScanReading, SnapshotLines, exact_explanations, hand_explanations, is_legal_line,
        may_reach, read_scan,
    },
    snapshots::Snapshots,
};
use crate::{event::Millis, sensed::SensedBoard};

/// Moves a scanning board's snapshot showed that stand unless, at the
/// next scan, only a blip on one of the squares it changed explains the
/// board.
#[derive(Debug, Clone)]
pub(super) struct Unconfirmed {
    /// The record's length they follow on from.
    ply: usize,
    /// How many moves the same snapshot showed before them, recorded.
    before: usize,
    /// The snapshot's event, and the squares it showed occupied.
    seq: u64,
    shown: Bitboard,
    /// The moves that wait for the next scan.
    moves: Vec<Move>,
    /// The squares whose blip would explain the snapshot otherwise.
    suspect: Bitboard,
    /// When, and by which event, the snapshot showed them made.
    made_at: Millis,
    basis: u64,
    /// On a board that identifies pieces: any square shown back drops them
    /// (the board is read again as it is).
    strict: bool,
    /// The clock presses since the snapshot: each completed a move
    /// (Art. 6.2.1), so a story with fewer moves since the record's
    /// position is no story.
    pub(super) presses: usize,
    /// The last scan weighed that one line alone, going on from the
    /// moves, explained exactly: its event, and that line.
    made_shown: Option<(u64, Vec<Move>)>,
    /// The last move's player had not pressed when the snapshot showed it:
    /// its piece may have been on its way (a slide). After his press it
    /// was at rest (Art. 6.2.1).
    may_slide: bool,
    /// The next scan came more than a scan period after the snapshot: the
    /// board stood as it showed the moves (see [`stood_filled`]).
    stood: bool,
    /// The engine's last event when the last move's player first pressed
    /// after the snapshot (see [`Unconfirmed::pressed`]).
    mover_pressed: Option<u64>,
}

/// Whether the board stood as `u`'s snapshot showed the squares it filled
/// (and the next scan shows back) for more than a scan period, with the
/// moves made still explaining the board: a blip lasts less than a period,
/// and a piece dragged over a square crosses it in well under one (the
/// cost table: a slide whose scan the board then stood as for more than
/// one period, never), so the piece was put down there and the moves were
/// made (18.Bf5 shown and standing 1.75 s, then f5 emptied, is no 18.Bxg6
/// caught on f5). A square shown emptied may be a piece held in the hand.
fn stood_filled(u: &Unconfirmed, stories: &Stories) -> bool {
    u.stood
        && (stories.back & !u.shown).is_empty()
        && !(stories.made_exact.is_empty() && stories.made_hand.is_empty())
}

/// The board read two ways, while moves wait: every line from the
/// record's position that explains it with those moves made (first), or
/// with the squares their snapshot showed back read as a blip (other lines
/// only); each exactly, or leaving a piece in the hand.
struct Stories {
    made_exact: Vec<Vec<Move>>,
    made_hand: Vec<Vec<Move>>,
    blip_exact: Vec<Vec<Move>>,
    blip_hand: Vec<Vec<Move>>,
    /// The squares shown back, and the snapshots without them.
    back: Bitboard,
    /// Whether the next scan showed them back; if not, a patient move's
    /// square is read as a blip that a later move filled for real.
    shown_back: bool,
    repaired: Snapshots,
}

impl Stories {
    /// The squares the moves of the blip's story cross on their way.
    fn crossed(&self) -> Bitboard {
        self.blip_exact
            .iter()
            .chain(&self.blip_hand)
            .flatten()
            .filter_map(|m| Some(shakmaty::attacks::between(m.from()?, m.to())))
            .fold(Bitboard::EMPTY, |all, b| all | b)
    }

    /// Leaves out the lines with fewer moves than the clock was pressed
    /// since the snapshot, if lines of the other story are left: a player
    /// presses having made his move (Art. 6.2.1). 11.Qh5+ shown (f3 empty,
    /// h5 full), then presses by White, Black and White, then a scan with
    /// g6 made and the queen on g4: that is 11.Qh5+ g6 12.Qg4, three
    /// moves, not 11.Qg4 g6 with h5 a blip.
    fn pressed(&mut self, presses: usize) {
        if presses == 0 {
            return;
        }
        let keep = |lines: &[Vec<Move>]| -> Vec<Vec<Move>> {
            lines
                .iter()
                .filter(|line| line.len() >= presses)
                .cloned()
                .collect()
        };
        let made = [keep(&self.made_exact), keep(&self.made_hand)];
        let blip = [keep(&self.blip_exact), keep(&self.blip_hand)];
        let any = |both: &[Vec<Vec<Move>>; 2]| both.iter().any(|l| !l.is_empty());
        if any(&made) && !any(&blip) {
            self.blip_exact.clear();
            self.blip_hand.clear();
            [self.made_exact, self.made_hand] = made;
        } else if any(&blip) && !any(&made) {
            self.made_exact.clear();
            self.made_hand.clear();
            [self.blip_exact, self.blip_hand] = blip;
        }
    }

    /// Whether only the blip story explains the board exactly.
    fn only_the_blip_exact(&self) -> bool {
        self.made_exact.is_empty() && !self.blip_exact.is_empty()
    }
}

impl Unconfirmed {
    /// One move alone, that a blip on the square it filled would make a
    /// capture instead: both stories are weighed on later scans.
    fn patient(&self) -> bool {
        self.before == 0 && self.moves.len() == 1
    }

    /// What the moves made, gone on, cost for the opponent's hand before
    /// the mover's press (`EARLY_HAND`), once the scan after the snapshot
    /// showed the square back (`shown_back`, a clock in use): in that story
    /// the piece was taken or moved on by then, while its player pressed
    /// only after that scan. The slide's story has the move shown made,
    /// then the press; a blip's, the piece at rest all along.
    fn early_hand(&self, snapshots: &Snapshots, shown_back: bool) -> usize {
        let next = snapshots.next_seq_after(self.seq);
        let late_press = self.mover_pressed.zip(next).is_some_and(|(p, n)| p >= n);
        if shown_back && late_press {
            EARLY_HAND
        } else {
            0
        }
    }

    /// Notes a press by `color` at the engine's event `seq`, the record's
    /// player to move being `turn`: the first by the player of the last
    /// move waiting is when that move was completed (Art. 6.2.1).
    pub(super) fn pressed(&mut self, color: Color, turn: Color, seq: u64) {
        self.presses += 1;
        let mover = if self.moves.len() % 2 == 1 {
            turn
        } else {
            !turn
        };
        if color == mover && self.mover_pressed.is_none() {
            self.mover_pressed = Some(seq);
        }
    }
}

/// The snapshot that showed `moves` (from `pos`): the last that shows
/// their `suspect` squares as the moves leave them. A later scan may have
/// caught the last move's piece lifted again (f6-d4 caught on d4, then d4
/// empty, read from the record's position only then), and the square is
/// weighed at the scan that filled it, not the one that caught the hand.
fn showing_moves(
    snapshots: &Snapshots,
    pos: &Chess,
    moves: &[Move],
    suspect: Bitboard,
) -> Option<(u64, Bitboard)> {
    let mut after = pos.clone();
    for &m in moves {
        after.play_unchecked(m);
    }
    snapshots
        .last_showing(suspect, after.board().occupied())
        .or_else(|| snapshots.last())
}

/// How many later scans may leave both a patient move and the blip
/// standing before the move is taken as made (as the snapshot showed it):
/// the board is not read meanwhile, and more moves may pile up. One more
/// while neither story shows a position.
const MAX_WEIGHED: usize = 1;

/// How many later scans a slide still in doubt may wait for, the slide the
/// cheaper story, before both are listed (or, as cheap, while the scans
/// show only hands at work, before both are weighed as for a blip): a
/// capture begun on the square comes down there within a scan or two, or
/// the story that reads it so dies.
const MAX_SLIDE_WEIGHED: usize = 3;

impl Engine {
    /// Records the moves of a snapshot that stand whatever the next scan
    /// shows, and keeps the rest for it.
    pub(super) fn unconfirmed_read(
        &mut self,
        certain: Vec<Move>,
        then: Vec<Move>,
        suspect: Bitboard,
        made_at: Millis,
        basis: u64,
        scanned: bool,
    ) {
        if self.contradicts_candidates(&[certain.clone(), then.clone()].concat()) {
            return;
        }
        if !certain.is_empty() {
            self.record_read(&certain, made_at, basis, scanned, ReadFrom::Board);
        }
        // The presses count from the record's position, the moves
        // recorded above taken off.
        let may_slide = self.clock.presses_ahead < then.len();
        let showing = showing_moves(&self.snapshots, self.game().position(), &then, suspect);
        if let Some((seq, shown)) = showing {
            self.scan.unconfirmed = Some(Unconfirmed {
                ply: self.game().ply(),
                before: certain.len(),
                seq,
                shown,
                moves: then,
                suspect,
                made_at,
                basis,
                strict: self.sensed.identifies_all(),
                presses: 0,
                made_shown: None,
                may_slide,
                stood: false,
                mover_pressed: None,
            });
        }
    }

    /// Moves a snapshot showed, once a later scan came. If none of the
    /// squares a blip would explain is shown back as it was, or the board
    /// is still explained with the moves made, they were made, when the
    /// snapshot showed them. If only the blip explains it, the snapshot is
    /// read without that square. A patient move the blip explains with
    /// fewer moves waits one scan more.
    pub(super) fn settle_unconfirmed(&mut self) {
        self.forget_unexplained_blip();
        let Some(mut u) = self.scan.unconfirmed.take() else {
            return;
        };
        if self.game().ply() != u.ply || self.game().is_over() {
            return;
        }
        let since =
            |sq: Square| self.sensed.last_lift(sq) > u.seq || self.sensed.last_place(sq) > u.seq;
        let next = match self.snapshots.next_after(u.seq) {
            Some(next) => next,
            // No scan since, but squares reported one by one (a board
            // that scans only now and then): the board as they leave it
            // is the next state.
            None if Square::ALL.into_iter().any(since) => self.sensed.occupied(),
            None => {
                self.scan.unconfirmed = Some(u);
                return;
            }
        };
        u.stood |= self.snapshots.count_after(u.seq) == 1
            && self.scan.scan_period.stood_until_last(u.made_at);
        if u.strict {
            return self.settle_strict(u, next);
        }
        let Some(stories) = self.stories(&u, next) else {
            return self.confirm(u);
        };
        if stories.shown_back && self.sensed.shows_position(self.game().position()) {
            // The board is back to the record's position: the squares
            // shown back were a blip, whatever longer line may return to
            // the same squares (29...Bd4 30.c5 read from c4 caught empty,
            // then c4 full again: the moves would have to go on for three
            // more to leave the board as it was).
            return self.forget(u, stories);
        }
        if stood_filled(&u, &stories) {
            return self.confirm(u);
        }
        if !stories.shown_back {
            // The square may have been crossed and then filled by another
            // piece (the castling rook caught on g1, the king put down
            // there): the slide is weighed as when the square is shown
            // back, by the cost table.
            let Some((u, stories)) = self.settle_slide(u, stories) else {
                return;
            };
            return self.settle_stayed_full(u, stories);
        }
        let Some((u, stories)) = self.settle_slide(u, stories) else {
            return;
        };
        // Read without the square, the board shows fewer moves, where with
        // it a piece leaves the square again at once (Nc4, then the knight
        // lifted again or on to e5; or Nxb5): the next scans tell them
        // apart, since that piece must go on somewhere.
        let fewest = stories.made_exact.iter().map(Vec::len).min();
        let weighed = self.snapshots.count_after(u.seq);
        let shorter_blip = stories
            .blip_exact
            .iter()
            .any(|line| fewest.is_none_or(|n| line.len() < n));
        // Neither story shows a position any more, both leave a hand at
        // work (18.Qxe4 with b3 caught full read as 18.Qb3; after 18...h5,
        // 19.Nd5 begun): no scan has told them apart yet, so one more.
        let only_hands = fewest.is_none() && !stories.blip_hand.is_empty();
        let weigh = u.patient()
            && (shorter_blip && weighed <= MAX_WEIGHED || only_hands && weighed <= MAX_WEIGHED + 1);
        let made = !stories.made_exact.is_empty() || !stories.made_hand.is_empty();
        let blip = !stories.blip_exact.is_empty() || !stories.blip_hand.is_empty();
        match (made, blip) {
            (true, _) if weigh => {
                let mut u = u;
                if let ([line], Some((seq, _))) = (&stories.made_exact[..], self.snapshots.last()) {
                    u.made_shown = Some((seq, line.clone()));
                }
                self.scan.unconfirmed = Some(u);
            }
            // The blip the cheaper story (see `blip_cheaper`).
            (true, true) if self.blip_cheaper(&u, &stories) => self.weigh_cheaper_blip(u, stories),
            // A blip is the rarer story: it must be the only one, or no
            // cheaper.
            (true, _) => self.confirm(u),
            (false, true) => self.forget(u, stories),
            // Neither: the moves went on past what one scan is read for.
            (false, false) => self.go_on_as_shown(u),
        }
    }

    /// A square shown back that the piece may have crossed on its way:
    /// the cheaper story wins; both within the margin wait one more scan
    /// (the piece shown where it went, or the board going on from the move
    /// made), then are weighed as any blip. Returns them if not settled.
    fn settle_slide(&mut self, u: Unconfirmed, stories: Stories) -> Option<(Unconfirmed, Stories)> {
        let made_lines = [&stories.made_exact[..], &stories.made_hand[..]].concat();
        // The piece on its way, put down further on, and the opponent's
        // hand already at work: a hand costs nothing while his move is not
        // complete, so those lines are the slide's story as much as the
        // exact ones.
        let slid_lines = [&stories.blip_exact[..], &stories.blip_hand[..]].concat();
        let pos = self.game().position();
        let (past_blip, blind) = self.made_past_blip(&u, stories.back);
        let since = self.game().basis(u.ply);
        let presses = self.clock.in_use.then_some(self.clock.presses_ahead);
        let story = |lines, snapshots| Story {
            lines,
            snapshots,
            since,
            presses,
            weighed: u.seq,
        };
        let early = u.early_hand(&self.snapshots, self.clock.in_use && stories.shown_back);
        let slide = weigh_slide(
            pos,
            &u.moves,
            stories.back,
            [
                story(&made_lines, &self.snapshots),
                story(&past_blip, &blind),
            ],
            story(&slid_lines, &stories.repaired),
            early,
        );
        // The move made's cheapest story leaves a hand at work (27.Rh3,
        // then 27...Rxh3 begun, against 27.Rxh5 caught on h3): no scan has
        // shown it at rest, so the scans have not told it from the slide,
        // whatever dearer line explains them exactly. With no hand line
        // left (the players have stopped, or the scans went past every
        // hand), nothing is in motion to wait for.
        let made_exact = story(&stories.made_exact, &self.snapshots).cost(pos, |_| early);
        let made_hand = story(&stories.made_hand, &self.snapshots).cost(pos, |_| early);
        let made_in_motion = made_hand.is_some_and(|h| made_exact.is_none_or(|e| h < e));
        // The scan after the one awaited filled a square where it may have
        // caught a piece on its way too (the rook taking back caught on
        // b8), which only the scan after it tells: the move made is not
        // recorded on it.
        let last = self
            .snapshots
            .last()
            .map_or(Bitboard::EMPTY, |(_, shown)| shown);
        let in_doubt = may_be_on_its_way(pos, last, self.snapshots.changed_last() & last)
            && (MAX_WEIGHED + 1..=MAX_SLIDE_WEIGHED).contains(&self.snapshots.count_after(u.seq));
        match slide.filter(|_| u.may_slide) {
            Some(SlideVerdict::Slid) => self.forget(u, stories),
            Some(SlideVerdict::Made) if in_doubt => self.scan.unconfirmed = Some(u),
            Some(SlideVerdict::Both | SlideVerdict::BothSlidCheaper)
                if self.snapshots.count_after(u.seq) <= MAX_WEIGHED =>
            {
                self.scan.unconfirmed = Some(u);
            }
            // The slide the cheaper a scan later: the story the scans go
            // against dies within a scan or two (the capture begun on the
            // square comes down there, or never does), so one more scan is
            // awaited before the two are listed. As cheap, while the move
            // made's cheapest story has a hand at work (the scans tell
            // nothing yet, and a slide is no rarer than a move made, as a
            // blip is): 2.Rh2 or 2.Rxh5 caught on h2, then h5 emptied.
            Some(v @ (SlideVerdict::Both | SlideVerdict::BothSlidCheaper))
                if self.snapshots.count_after(u.seq) <= MAX_SLIDE_WEIGHED
                    && (v == SlideVerdict::BothSlidCheaper || made_in_motion) =>
            {
                self.scan.unconfirmed = Some(u);
            }
            // Still both a scan later, the slide the cheaper: the scans
            // cannot tell them apart, and recording the move made would
            // publish a move the cheapest story says did not happen (a
            // wrong move is worse than a late one): both are listed for
            // the arbiter, and followed. The scans are read on as both
            // stories read them: the piece in the air at the scan that
            // caught the square (the slide's path, or the moment before it
            // was put down there). The move made no dearer is weighed as
            // for a blip below: the rarer story must be the only one.
            Some(SlideVerdict::BothSlidCheaper) => {
                let mut stories = stories;
                if made_lines.is_empty() {
                    stories.made_exact = past_blip;
                }
                self.snapshots = stories.repaired.clone();
                self.list_stories(u, stories);
                self.hypotheses.costed = true;
            }
            Some(SlideVerdict::Both | SlideVerdict::Made) => {
                let mut stories = stories;
                if made_lines.is_empty() {
                    stories.made_exact = past_blip;
                }
                return Some((u, stories));
            }
            None => return Some((u, stories)),
        }
        None
    }

    /// The lines that go on from the moves waiting, with the squares
    /// `back` read wrong by the scan after them alone (a blip on a piece
    /// at rest there): sensors flicker on any square, the square a move
    /// just filled too.
    fn made_past_blip(&self, u: &Unconfirmed, back: Bitboard) -> (Vec<Vec<Move>>, Snapshots) {
        let mut after = self.game().position().clone();
        for &m in &u.moves {
            after.play_unchecked(m);
        }
        let mut snapshots = self.snapshots.clone();
        snapshots.forget_blips_after(u.seq, back);
        let (exact, _) = SnapshotLines {
            pos: &after,
            sensed: &self.sensed,
            snapshots: &snapshots,
            since: u.seq,
            settling: Bitboard::EMPTY,
        }
        .explanations();
        let lines = exact
            .into_iter()
            .map(|line| [&u.moves[..], &line].concat())
            .collect();
        (lines, snapshots)
    }

    /// How the board is explained now with the moves that wait made, and
    /// without the squares of their snapshot shown back at scan `next`
    /// (none if no such square: the moves stand).
    fn stories(&self, u: &Unconfirmed, next: Bitboard) -> Option<Stories> {
        let mut back = u.suspect & (next ^ u.shown);
        let shown_back = back.any();
        if !shown_back {
            if !u.patient() {
                return None;
            }
            back = u.suspect;
        }
        // A square shown back may be a blip gone, or the next moves:
        // whichever explains the board now.
        let pos = self.game().position().clone();
        let mut after = pos.clone();
        for &m in &u.moves {
            after.play_unchecked(m);
        }
        let mut repaired = self.snapshots.clone();
        repaired.forget_blips(u.seq, back);
        // The piece gone on from the square may be caught on its way by a
        // later scan too, or the next move's (a rook caught on d7 taking
        // on d8, then the one taking back caught on b8). Not where a
        // piece stood in the record's position: a piece shown there between
        // two scans showing it empty was put down where one was taken off
        // (15...Bxe6 caught on d7, then on e6, then 16.Qxe6 begun).
        repaired.forget_odd_fills_after(u.seq, pos.board().occupied());
        let whole = |line: Vec<Move>| [&u.moves[..], &line].concat();
        let (made_exact, made_hand) = SnapshotLines {
            pos: &after,
            sensed: &self.sensed,
            snapshots: &self.snapshots,
            since: u.seq,
            settling: Bitboard::EMPTY,
        }
        .explanations();
        let (blip_exact, blip_hand) = SnapshotLines {
            pos: &pos,
            sensed: &self.sensed,
            snapshots: &repaired,
            since: self.game().basis(u.ply),
            settling: Bitboard::EMPTY,
        }
        .explanations();
        // Read without the square, the board may still show the same moves.
        let other = |line: &Vec<Move>| !line.starts_with(&u.moves);
        let mut stories = Stories {
            made_exact: made_exact.into_iter().map(whole).collect(),
            made_hand: made_hand.into_iter().map(whole).collect(),
            blip_exact: blip_exact.into_iter().filter(other).collect(),
            blip_hand: blip_hand.into_iter().filter(other).collect(),
            back,
            shown_back,
            repaired,
        };
        stories.pressed(u.presses);
        Some(stories)
    }

    /// Neither story explains the board any more: the players went on by
    /// more moves than one scan is read for, while the moves waited. If a
    /// scan weighed showed the moves made and one line going on from them,
    /// exactly, and that line still leads on to the board, they were made
    /// and so was that line (a blip is the rarer story). Otherwise the
    /// board is read as it is. 9...Bc8 shown (c8 also a blip beside
    /// 9...Bd7), then 10.Bd2 Bd7 (or 9...Bd7 10.Bd2, the same board), then
    /// 11.Qe2 Qe7: both stories are four or five moves from the record by
    /// then, but 9...Bc8 10.Bd2 Bd7 leads on to it.
    fn go_on_as_shown(&mut self, u: Unconfirmed) {
        let Some((seq, line)) = u.made_shown.clone() else {
            return;
        };
        if !line.starts_with(&u.moves) || !is_legal_line(self.game().position(), &line) {
            return;
        }
        let mut after = self.game().position().clone();
        for &m in &line {
            after.play_unchecked(m);
        }
        let (exact, hand) = SnapshotLines {
            pos: &after,
            sensed: &self.sensed,
            snapshots: &self.snapshots,
            since: seq,
            settling: Bitboard::EMPTY,
        }
        .explanations();
        if exact.is_empty() && hand.is_empty() {
            return;
        }
        // The weighed scan's time is not kept: the rest is timed by this
        // state's, late rather than early.
        let made_at = self.settle.since();
        let rest = line[u.moves.len()..].to_vec();
        let ply = self.game().ply() + u.moves.len();
        self.confirm(u);
        if self.game().ply() == ply && !self.contradicts_candidates(&rest) {
            self.record(&rest, made_at, seq);
            self.hypotheses.went_on(&rest);
        }
    }
}
