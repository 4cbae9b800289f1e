//! What the board's sensors show now, and when each square last changed.

use std::cell::Cell;

use shakmaty::{Bitboard, Board, Piece, Position, Role, Square};

use crate::event::{Scan, Sensed};

/// The sensed board: occupancy, the identity of the pieces where the board
/// reported it, and for each square the sequence number of the last event
/// that touched it (used to tell which squares a move could have involved).
#[derive(Debug, Clone)]
pub struct SensedBoard {
    occupied: Bitboard,
    /// Squares whose piece identity the board reported.
    identified: Bitboard,
    pieces: [Option<Piece>; 64],
    /// The same identities as a board (the squares of `identified`), so
    /// that comparing them with a position's is a few bitboard operations.
    identities: Board,
    last_place: [u64; 64],
    last_lift: [u64; 64],
    /// Per square, the later of `last_place` and `last_lift`: what
    /// [`SensedBoard::touched_since`] scans (one word per square, not two).
    last_touch: [u64; 64],
    /// The stamps each square had before its last lift, so that a blip can
    /// be taken back.
    before_lift: [(u64, u64); 64],
    /// The same before its last place, for a blip that fills a square.
    before_place: [(u64, u64); 64],
    /// Squares that may have been emptied and refilled unseen before the
    /// event `unseen_at` (a scan, a dump after an outage) showed them.
    unseen: Bitboard,
    unseen_at: u64,
    /// The last answer of [`SensedBoard::touched_since`] and the `since`
    /// it was for, until the stamps change: a reader asks the same
    /// question for one, two and three moves from the same position.
    touched_memo: Cell<Option<(u64, Bitboard)>>,
    /// Per square, the event that emptied it again after a brief fill
    /// forgotten as a blip ([`SensedBoard::forget_phantom`]): a piece
    /// dragged over an empty square reads the same, so it is weighed
    /// later, never read as a touch (0: none).
    flicker: [u64; 64],
    /// Changed by every method that takes `&mut self` (see
    /// [`SensedBoard::revision`]).
    revision: crate::revision::Revision,
}

/// The pieces of `board` as words: each role's squares, then White's
/// (Black's are the rest).
pub fn board_words(board: &Board) -> [u64; 7] {
    [
        board.pawns().0,
        board.knights().0,
        board.bishops().0,
        board.rooks().0,
        board.queens().0,
        board.kings().0,
        board.white().0,
    ]
}

impl SensedBoard {
    /// Sensors showing `board`, with identities unknown and nothing touched.
    pub fn showing(board: &Board) -> SensedBoard {
        SensedBoard {
            occupied: board.occupied(),
            identified: Bitboard::EMPTY,
            pieces: [None; 64],
            identities: Board::empty(),
            last_place: [0; 64],
            last_lift: [0; 64],
            last_touch: [0; 64],
            before_lift: [(0, 0); 64],
            before_place: [(0, 0); 64],
            unseen: Bitboard::EMPTY,
            unseen_at: 0,
            touched_memo: Cell::new(None),
            flicker: [0; 64],
            revision: crate::revision::Revision::new(),
        }
    }

    /// The occupied squares.
    pub fn occupied(&self) -> Bitboard {
        self.occupied
    }

    /// The reported identity of the piece on `sq`, if any.
    pub fn piece_at(&self, sq: Square) -> Option<Piece> {
        self.pieces[sq.to_usize()]
    }

    /// A piece left `sq`. Returns whether anything changed.
    pub fn lift(&mut self, sq: Square, seq: u64) -> bool {
        self.revision.changed();
        let i = sq.to_usize();
        self.before_lift[i] = (self.last_place[i], self.last_lift[i]);
        self.last_lift[i] = seq;
        self.last_touch[i] = self.last_place[i].max(seq);
        self.stamped(sq, seq);
        let changed = self.occupied.contains(sq);
        self.occupied.discard(sq);
        self.identified.discard(sq);
        self.pieces[sq.to_usize()] = None;
        self.identities.discard_piece_at(sq);
        changed
    }

    /// A piece was put on `sq`. Returns whether anything changed.
    pub fn place(&mut self, sq: Square, piece: Option<Piece>, seq: u64) -> bool {
        self.revision.changed();
        let i = sq.to_usize();
        self.before_place[i] = (self.last_place[i], self.last_lift[i]);
        self.last_place[i] = seq;
        self.last_touch[i] = self.last_lift[i].max(seq);
        self.stamped(sq, seq);
        let changed =
            !self.occupied.contains(sq) || (piece.is_some() && self.piece_at(sq) != piece);
        self.occupied.add(sq);
        self.identified.set(sq, piece.is_some());
        self.pieces[sq.to_usize()] = piece;
        match piece {
            Some(piece) => self.identities.set_piece_at(sq, piece),
            None => self.identities.discard_piece_at(sq),
        }
        changed
    }

    /// Keeps [`SensedBoard::touched_since`]'s remembered answer true once
    /// a stamp of `sq` became `seq`: an event after the question's `since`
    /// only adds `sq` to it (nearly always: events come in order), anything
    /// else drops it. Scanning the 64 squares again after every event was
    /// a thirtieth of a replay.
    fn stamped(&self, sq: Square, seq: u64) {
        let kept = self
            .touched_memo
            .get()
            .filter(|&(since, _)| seq > since)
            .map(|(since, touched)| (since, touched.with(sq)));
        self.touched_memo.set(kept);
    }

    /// The piece lifted from `sq` was put back before the state settled: a
    /// sensor blip or a hand that changed its mind at once. Neither the lift
    /// nor the place is evidence of anything (a touch, a capture), so both
    /// are forgotten as touches.
    pub fn forget_blip(&mut self, sq: Square) {
        self.revision.changed();
        let i = sq.to_usize();
        (self.last_place[i], self.last_lift[i]) = self.before_lift[i];
        self.last_touch[i] = self.last_place[i].max(self.last_lift[i]);
        self.touched_memo.set(None);
    }

    /// An empty square `sq` read full and empty again before the state
    /// settled, with nothing else in between: a sensor blip (no hand puts
    /// a piece down and lifts it within the settle time). Neither the place
    /// nor the lift is evidence of anything.
    pub fn forget_phantom(&mut self, sq: Square) {
        self.revision.changed();
        let i = sq.to_usize();
        self.flicker[i] = self.last_lift[i];
        (self.last_place[i], self.last_lift[i]) = self.before_place[i];
        self.last_touch[i] = self.last_place[i].max(self.last_lift[i]);
        self.touched_memo.set(None);
    }

    /// The squares filled and emptied again at once after event `since`
    /// (see [`SensedBoard::forget_phantom`]): each a blip, or a piece
    /// dragged over it.
    pub fn flickered_since(&self, since: u64) -> Bitboard {
        Square::ALL
            .into_iter()
            .filter(|sq| self.flicker[sq.to_usize()] > since)
            .collect()
    }

    /// These sensors with every square of `squares` that still reads
    /// occupied counted as touched by event `seq` at the latest: a dump after
    /// an outage, where any of them may have been emptied and refilled while
    /// nobody was listening (a capture on it).
    pub fn changed_unseen(&self, squares: Bitboard, seq: u64) -> SensedBoard {
        let mut seen = self.clone();
        for sq in squares & self.occupied {
            let i = sq.to_usize();
            seen.last_place[i] = seen.last_place[i].max(seq);
            seen.last_touch[i] = seen.last_touch[i].max(seq);
        }
        seen.touched_memo.set(None);
        seen.unseen = squares & self.occupied;
        seen.unseen_at = seq;
        seen
    }

    /// Applies a full scan; squares whose reading changed count as touched.
    /// Returns whether anything changed.
    pub fn apply_scan(&mut self, scan: &Scan, seq: u64) -> bool {
        self.revision.changed();
        let mut changed = false;
        for sq in Square::ALL {
            match scan.get(sq) {
                None => {
                    if self.occupied.contains(sq) {
                        changed |= self.lift(sq, seq);
                    }
                }
                Some(Sensed::Occupied) => {
                    if self.occupied.contains(sq) {
                        // A full reading that does not identify the piece:
                        // an identity reported earlier may be stale.
                        self.identified.discard(sq);
                        self.pieces[sq.to_usize()] = None;
                        self.identities.discard_piece_at(sq);
                    } else {
                        changed |= self.place(sq, None, seq);
                    }
                }
                Some(Sensed::Piece(p)) => {
                    if self.piece_at(sq) != Some(p) || !self.occupied.contains(sq) {
                        changed |= self.place(sq, Some(p), seq);
                    }
                }
            }
        }
        // Between two scans any square that reads occupied may have been
        // emptied and refilled (a capture, a recapture).
        self.unseen = self.occupied;
        self.unseen_at = seq;
        changed
    }

    /// The squares touched by an event after sequence number `since`:
    /// those whose last lift or placement came after it. A fixed cost per
    /// call, however many touches the current move has seen (a list of
    /// touches, scanned back to `since` at every settled state, made a long
    /// move quadratic).
    pub fn touched_since(&self, since: u64) -> Bitboard {
        if let Some((asked, touched)) = self.touched_memo.get()
            && asked == since
        {
            return touched;
        }
        // Bit by bit (bit i is square i), with no branch per square.
        let mut touched = 0u64;
        for i in 0..64 {
            touched |= u64::from(self.last_touch[i] > since) << i;
        }
        let touched = Bitboard(touched);
        self.touched_memo.set(Some((since, touched)));
        touched
    }

    /// The event of the last scan or dump applied (0 if none): the squares
    /// whose last place is that event were first shown full by it.
    pub fn scanned_at(&self) -> u64 {
        self.unseen_at
    }

    /// Whether the latest scan was the first to show the piece on `sq`:
    /// it was put there since the scan before (a piece caught on its way,
    /// or put down), not standing there a whole scan period.
    pub fn first_shown_by_latest_scan(&self, sq: Square) -> bool {
        self.last_place(sq) == self.scanned_at()
    }

    /// The sequence number of the last event that put a piece on `sq`.
    pub fn last_place(&self, sq: Square) -> u64 {
        self.last_place[sq.to_usize()]
    }

    /// The sequence number of the last event that lifted a piece from `sq`.
    pub fn last_lift(&self, sq: Square) -> u64 {
        self.last_lift[sq.to_usize()]
    }

    /// The event that emptied `sq` before its last place, if it was
    /// emptied then (0 if not): a square emptied, refilled and emptied
    /// again, whose piece may have left at the first lift (a flicker under
    /// the hand as it leaves restarts the square's report).
    pub fn lift_before_last_place(&self, sq: Square) -> u64 {
        let (placed, lifted) = self.before_place[sq.to_usize()];
        if lifted > placed { lifted } else { 0 }
    }

    /// Whether `sq` may have been emptied after event `since`: a lift seen,
    /// or a scan or dump after it that showed the square occupied, when
    /// nobody was watching it before.
    pub fn emptied_since(&self, sq: Square, since: u64) -> bool {
        self.last_lift(sq) > since || (self.unseen.contains(sq) && self.unseen_at > since)
    }

    /// Whether the sensors are consistent with `board`: the same occupancy,
    /// and every reported identity equal to the piece there.
    pub fn shows(&self, board: &Board) -> bool {
        self.occupied == board.occupied() && self.identities_agree(board)
    }

    /// Whether every reported identity equals the piece `board` has there.
    pub fn identities_agree(&self, board: &Board) -> bool {
        self.misidentified(board).is_empty()
    }

    /// The squares whose reported identity is not the piece `board` has
    /// there (another piece, or none).
    pub fn misidentified(&self, board: &Board) -> Bitboard {
        let ours = &self.identities;
        let roles = Role::ALL.into_iter().fold(Bitboard::EMPTY, |differ, role| {
            differ | (ours.by_role(role) ^ board.by_role(role))
        });
        (roles | (ours.white() ^ board.white())) & self.identified
    }

    /// What the sensors report now, as words: the occupied squares and the
    /// identities, without the squares' stamps. Two sensed boards that
    /// report the same words have the same [`SensedBoard::piece_at`]
    /// everywhere.
    pub fn reported(&self) -> [u64; 9] {
        let mut words = [self.occupied.0, self.identified.0, 0, 0, 0, 0, 0, 0, 0];
        words[2..].copy_from_slice(&board_words(&self.identities));
        words
    }

    /// Which state of the sensors this is: two equal looks report the same
    /// [`SensedBoard::reported`] (every method that takes `&mut self`
    /// changes the revision).
    pub(crate) fn revision(&self) -> crate::revision::Seen {
        self.revision.seen()
    }

    /// Whether the board named the piece on every occupied square (a board
    /// that identifies pieces).
    pub fn identifies_all(&self) -> bool {
        (self.occupied & !self.identified).is_empty()
    }

    /// Whether the board named any piece on the board now: a board that
    /// names pieces names the capturing piece on a capture's square, so no
    /// capture goes unseen there, even while squares it has not reported
    /// since the start have no name yet.
    pub fn names_pieces(&self) -> bool {
        (self.occupied & self.identified).any()
    }

    /// Whether the sensors show `pos`'s board.
    pub fn shows_position<P: Position>(&self, pos: &P) -> bool {
        self.shows(pos.board())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 38: the squares touched since an event, scanned from each
    /// square's latest stamp, are those whose last lift or last place came
    /// after it, through lifts, places, blips and phantoms forgotten, and
    /// an outage's unseen changes.
    #[test]
    fn touched_since_is_the_later_of_lift_and_place() {
        let mut s = SensedBoard::showing(&Board::default());
        let pawn = Piece::from_char('P');
        let mut state = 7u64;
        for seq in 1..400u64 {
            // A small deterministic generator: any square, any kind of event.
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let sq = Square::new(((state >> 33) % 64) as u32);
            match (state >> 40) % 5 {
                0 => _ = s.lift(sq, seq),
                1 => _ = s.place(sq, pawn, seq),
                2 => s.forget_blip(sq),
                3 => s.forget_phantom(sq),
                _ => s = s.changed_unseen(Bitboard::from(sq), seq),
            }
            for since in [0, seq / 2, seq.saturating_sub(3), seq] {
                let expected: Bitboard = Square::ALL
                    .into_iter()
                    .filter(|sq| s.last_lift(*sq) > since || s.last_place(*sq) > since)
                    .collect();
                assert_eq!(
                    s.touched_since(since),
                    expected,
                    "event {seq}, since {since}"
                );
            }
        }
    }

    /// Issue 38: the identities compared as bitboards give, square by
    /// square, what comparing each reported piece with the board's does.
    #[test]
    fn misidentified_squares_are_those_whose_piece_differs() {
        let board = Board::default();
        let mut s = SensedBoard::showing(&board);
        s.place(Square::E2, Some(Piece::from_char('P').unwrap()), 1);
        s.place(Square::D1, Some(Piece::from_char('K').unwrap()), 2);
        s.place(Square::E8, Some(Piece::from_char('K').unwrap()), 3);
        s.place(Square::E4, Some(Piece::from_char('N').unwrap()), 4);
        s.place(Square::B1, None, 5);
        let by_square: Bitboard = s
            .identified
            .into_iter()
            .filter(|&sq| board.piece_at(sq) != s.piece_at(sq))
            .collect();
        assert_eq!(
            s.misidentified(&board),
            Bitboard::from_iter([Square::D1, Square::E8, Square::E4])
        );
        assert_eq!(s.misidentified(&board), by_square);
        assert!(!s.identities_agree(&board));
        s.lift(Square::D1, 6);
        s.lift(Square::E8, 7);
        s.lift(Square::E4, 8);
        assert!(s.identities_agree(&board));
        assert!(!s.identifies_all());
    }

    #[test]
    fn a_dump_counts_its_occupied_squares_as_touched_no_later_than_it() {
        let mut s = SensedBoard::showing(&Board::default());
        s.lift(Square::E2, 5);
        s.place(Square::E4, None, 9);
        let dumped = Bitboard::from_square(Square::E2)
            .with(Square::E4)
            .with(Square::D2);
        let seen = s.changed_unseen(dumped, 7);
        // d2 may have been refilled unseen; e4 was placed later than the
        // dump; e2 is empty; g1 was not in the dump.
        assert_eq!(seen.last_place(Square::D2), 7);
        assert_eq!(seen.last_place(Square::E4), 9);
        assert_eq!(seen.last_place(Square::E2), 0);
        assert_eq!(seen.last_place(Square::G1), 0);
        // d2 may also have been emptied before the dump, not after it; g1
        // not at all.
        assert!(seen.emptied_since(Square::D2, 6));
        assert!(!seen.emptied_since(Square::D2, 7));
        assert!(!seen.emptied_since(Square::G1, 0));
        assert!(seen.emptied_since(Square::E2, 4));
        // The sensors themselves are untouched.
        assert_eq!(s.last_place(Square::D2), 0);
        assert!(!s.emptied_since(Square::D2, 6));
    }

    #[test]
    fn a_scan_may_have_emptied_any_square_it_reads_occupied() {
        let mut s = SensedBoard::showing(&Board::default());
        s.lift(Square::E2, 3);
        s.place(Square::E4, None, 4);
        let after = Board::from_ascii_board_fen(b"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR")
            .expect("valid board");
        let scan = Scan::from_board(&after, false);
        s.apply_scan(&scan, 8);
        // Nothing changed, but between scans e4 and d2 may have been
        // emptied and refilled; e2 reads empty.
        assert!(s.emptied_since(Square::E4, 5));
        assert!(s.emptied_since(Square::D2, 7));
        assert!(!s.emptied_since(Square::D2, 8));
        assert!(!s.emptied_since(Square::E2, 3));
        // Square-by-square reports after it are seen as they happen.
        s.place(Square::E2, None, 9);
        assert!(!s.emptied_since(Square::E2, 8));
    }

    #[test]
    fn touched_since_names_the_squares_changed_after_an_event() {
        let mut s = SensedBoard::showing(&Board::default());
        s.lift(Square::E2, 5);
        s.place(Square::E4, None, 6);
        s.lift(Square::G1, 7);
        s.place(Square::G1, None, 8);
        let bb = |sqs: &[Square]| sqs.iter().copied().collect::<Bitboard>();
        assert_eq!(
            s.touched_since(4),
            bb(&[Square::E2, Square::E4, Square::G1])
        );
        assert_eq!(s.touched_since(5), bb(&[Square::E4, Square::G1]));
        assert_eq!(s.touched_since(7), bb(&[Square::G1]));
        assert_eq!(s.touched_since(8), Bitboard::EMPTY);
    }

    /// Remembered answers kept up event by event are the squares' own
    /// stamps read afresh: events in order and out of order, lifts and
    /// places, questions about several `since`s in turn.
    #[test]
    fn touched_since_kept_up_by_events_is_the_scan() {
        let mut s = SensedBoard::showing(&Board::default());
        let fresh = |s: &SensedBoard, since: u64| {
            let copy = s.clone();
            copy.touched_memo.set(None);
            copy.touched_since(since)
        };
        // A walk over squares, stamps and questions (a linear congruential
        // sequence): stamps mostly rising, sometimes older than the question.
        let mut x: u64 = 12345;
        let mut next = |m: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        let (mut seq, mut since) = (0, 0);
        for _ in 0..20_000 {
            let sq = Square::new(next(64) as u32);
            seq += 1;
            let stamp = if next(10) == 0 { next(seq + 1) } else { seq };
            if next(2) == 0 {
                s.lift(sq, stamp);
            } else {
                s.place(sq, None, stamp);
            }
            // The same question after most events, as a reader asks it.
            if next(8) == 0 {
                since = seq.saturating_sub(next(12));
            }
            assert_eq!(s.touched_since(since), fresh(&s, since), "since {since}");
            if next(16) == 0 {
                let other = seq.saturating_sub(next(40));
                assert_eq!(s.touched_since(other), fresh(&s, other), "since {other}");
            }
        }
    }

    /// The answer is remembered for the next question with the same
    /// `since`: every change of the stamps must be seen in the next one.
    #[test]
    fn touched_since_follows_every_change() {
        let mut s = SensedBoard::showing(&Board::default());
        let bb = |sqs: &[Square]| sqs.iter().copied().collect::<Bitboard>();
        assert_eq!(s.touched_since(0), Bitboard::EMPTY);
        s.lift(Square::E2, 1);
        assert_eq!(s.touched_since(0), bb(&[Square::E2]));
        s.place(Square::E4, None, 2);
        assert_eq!(s.touched_since(0), bb(&[Square::E2, Square::E4]));
        // A blip on d2 (lifted and put back) is forgotten as a touch.
        s.lift(Square::D2, 3);
        assert_eq!(
            s.touched_since(0),
            bb(&[Square::E2, Square::E4, Square::D2])
        );
        s.place(Square::D2, None, 4);
        s.forget_blip(Square::D2);
        assert_eq!(s.touched_since(0), bb(&[Square::E2, Square::E4]));
        // A phantom on e5 (read full, then empty) is forgotten too.
        s.place(Square::E5, None, 5);
        assert_eq!(
            s.touched_since(0),
            bb(&[Square::E2, Square::E4, Square::E5])
        );
        s.lift(Square::E5, 6);
        s.forget_phantom(Square::E5);
        assert_eq!(s.touched_since(0), bb(&[Square::E2, Square::E4]));
        // A dump's copy counts g1 as touched; the sensors do not.
        let seen = s.changed_unseen(bb(&[Square::G1, Square::E3]), 7);
        assert_eq!(
            seen.touched_since(0),
            bb(&[Square::E2, Square::E4, Square::G1])
        );
        assert_eq!(s.touched_since(0), bb(&[Square::E2, Square::E4]));
    }
}
