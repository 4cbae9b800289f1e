//! A piece caught on a square of its path. A scanning board reports the
//! board at any physical instant, and a piece dragged along a file, rank or
//! diagonal stands for a moment on every square it crosses: a scan may show
//! it there (docs/design/reconstruction.md, the slide). The move it is part
//! of is still in progress; where the piece ends up, the next state tells.
//! The mover's press says only that the move is complete (Art. 6.2.1): a
//! press after a scan that may have caught a slide waits for the next scan.

use shakmaty::{Bitboard, Chess, Color, Move, Position, Role, Square, attacks};

use super::{BoardKind, Engine};
use crate::{event::Millis, sensed::SensedBoard};

impl Engine {
    /// A press by `color` at `t` completes his move (Art. 6.2.1), but not
    /// the squares the last scan caught it on: a scan is one instant, and
    /// the piece it caught on a square of its path may have gone on since.
    /// When the last recorded move was read from the latest scan alone and
    /// its piece could be on its way further along the same line, or when
    /// the latest scan shows a hand at work since the move, the press is
    /// kept for the next scan, which shows where the piece was put down
    /// (the move as recorded, or changed along its path, or into castling);
    /// returns whether it was kept.
    pub(super) fn defer_press_over_slide(&mut self, color: Color, t: Millis) -> bool {
        if !(self.observation.scanned()
            && self.snapshots.board() == BoardKind::Scanning
            && self.sensed.identifies_all())
        {
            return false;
        }
        let game = self.game();
        let n = game.ply();
        let Some((last, before)) = n
            .checked_sub(1)
            .and_then(|p| Some((game.moves().get(p)?, game.position_at(p)?)))
        else {
            return false;
        };
        let to = last.mv.to();
        // The latest scan caught a hand at work since the move's position
        // (the king lifted after the rook of a castling, a piece on its
        // way): it has come down since, where the next scan shows.
        let hand = !self.sensed.shows_position(game.position());
        // Or it showed the piece put down at that very scan (one that
        // showed it there again says it stood a whole scan period, longer
        // than any slide) on a square it could have slid over.
        let slide = self.sensed.last_place(to) == self.seq && may_go_on(before, last.mv);
        if !hand && !slide {
            return false;
        }
        self.clock.slide_press = Some(SlidePress {
            color,
            at: t,
            seq: self.seq,
            ply: n,
        });
        true
    }

    /// Whether the last scan alone shows `m`'s piece on its square, on a
    /// board that names the pieces, where it could have been dragged on
    /// along the same line: a move shown only by a state that may be a
    /// slide waits for the next observation (docs/design/reconstruction.md,
    /// the decision policy), even when that scan also shows the opponent's
    /// hand. His piece off the board in the same instant is no more certain
    /// than the slide (a blip on his square, or a touch before the move
    /// was over), and the next scan tells where the piece was put down.
    pub(super) fn shown_mid_slide(&self, m: Move) -> bool {
        self.observation.scanned()
            && self.sensed.identifies_all()
            && self.sensed.last_place(m.to()) == self.seq
            && may_go_on(self.game().position(), m)
    }

    /// Whether `line`'s last move (from `pos`, after at least one other)
    /// is one the last scan alone shows, its piece where it could be on its
    /// way further along the same line, as [`Engine::shown_mid_slide`]: a
    /// line the search reads from one scan is as certain as its moves
    /// before that one, and the last waits for the next scan.
    pub(super) fn line_ends_mid_slide(&self, pos: &Chess, line: &[Move]) -> bool {
        let Some((&last, prefix)) = line.split_last() else {
            return false;
        };
        // A dump is an instant after the link came back, with no hand at
        // work in it: the line read through it holds nothing back.
        if prefix.is_empty()
            || !(self.observation.scanned() && self.sensed.identifies_all())
            || self.observation.dumped()
            || self.unseen_since_reconnection()
            || self.sensed.last_place(last.to()) != self.seq
        {
            return false;
        }
        let mut before = pos.clone();
        for &m in prefix {
            before.play_unchecked(m);
        }
        may_go_on(&before, last)
    }

    /// Whether the input ended while a scan that may have caught a piece
    /// on its path waited for the next scan (a board that names the pieces
    /// and only scans), the board showing a position legal moves reach: no
    /// scan comes, and the piece stands where the last one showed it.
    pub(super) fn slide_at_end(&self) -> bool {
        self.observation.scanned()
            && self.snapshots.board() == BoardKind::Scanning
            && self.sensed.identifies_all()
            && !super::scanned::exact_now(self.game().position(), &self.sensed).is_empty()
    }

    /// Completes the move a kept press completed once a scan after it has
    /// been read: as the record now has it (the same move, or changed
    /// along its path by the reading).
    pub(super) fn settle_slide_press(&mut self) {
        let Some(kept) = self.clock.slide_press else {
            return;
        };
        if self.seq == kept.seq || self.settle.is_unread() {
            return;
        }
        self.clock.slide_press = None;
        let game = self.game();
        let n = game.ply();
        // Unless the reading completed it already (a later move did), or
        // the record changed otherwise (a takeback, a new game).
        if n == kept.ply
            && !game.is_over()
            && game.mover(n) == kept.color
            && game.moves()[n - 1].completed_at.is_none()
        {
            self.complete_all(kept.at);
        }
    }
}

/// A press kept for the next scan ([`Engine::defer_press_over_slide`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SlidePress {
    /// Who pressed, and when.
    color: Color,
    at: Millis,
    /// The scan that showed the move, and the record's length with it.
    seq: u64,
    ply: usize,
}

impl SlidePress {
    /// The half-move (from 1) the press completed, and when it came.
    pub(super) fn ply(&self) -> usize {
        self.ply
    }

    pub(super) fn at(&self) -> Millis {
        self.at
    }
}

/// Whether `m`'s piece, from `pos`, could have been dragged on past `m`'s
/// square along the same line to make another legal move.
fn may_go_on(pos: &Chess, m: Move) -> bool {
    let Move::Normal { from, to, .. } = m else {
        return false;
    };
    pos.legal_moves()
        .iter()
        .any(|other| other.from() == Some(from) && attacks::between(from, other.to()).contains(to))
}

/// The `candidates` (lines from `pos`) that none of `followed` goes on
/// from and whose last move's piece the scan shows gone on along the same
/// line: its square empty again and a square further on, empty after the
/// candidate, full. One scan caught that piece on its way (a slide, 1)
/// and the following read the square as the move: the candidate died of
/// a gap in the following, not of the scans, and is no evidence against
/// itself (docs/design/reconstruction.md, the tracker). Not when a line
/// followed already tells that story (the longer move in its place).
pub(super) fn gone_on_past(
    pos: &Chess,
    sensed: &SensedBoard,
    candidates: &[Vec<Move>],
    followed: &[Vec<Move>],
) -> Vec<Vec<Move>> {
    candidates
        .iter()
        .filter(|c| !followed.iter().any(|line| line.starts_with(c)))
        .filter(|c| went_on(pos, sensed, c, followed))
        .cloned()
        .collect()
}

/// Whether the scan shows the piece of `line`'s last move (a move to an
/// empty square) gone on past it along its path, to a square no line of
/// `followed` has it go to instead.
fn went_on(pos: &Chess, sensed: &SensedBoard, line: &[Move], followed: &[Vec<Move>]) -> bool {
    let Some((&last, before)) = line.split_last() else {
        return false;
    };
    let (Move::Normal { from, to, .. }, false) = (last, last.is_capture()) else {
        return false;
    };
    let mut p = pos.clone();
    for &m in before {
        if !p.is_legal(m) {
            return false;
        }
        p.play_unchecked(m);
    }
    if sensed.occupied().contains(to) {
        return false;
    }
    let end = p.board().occupied().without(from).with(to);
    p.legal_moves().iter().any(|m| {
        m.from() == Some(from)
            && attacks::between(from, m.to()).contains(to)
            && !end.contains(m.to())
            && sensed.occupied().contains(m.to())
            && !followed
                .iter()
                .any(|l| l.starts_with(before) && l.get(before.len()) == Some(m))
    })
}

/// Whether the sensed board is `pos` with a piece of the player to move
/// caught on a square strictly between the two squares of one of his legal
/// moves (a pawn's double step, a bishop's, rook's or queen's move), the
/// piece it captures, if any, on its square or already taken off.
#[cfg(test)]
pub fn slide_in_progress(pos: &Chess, sensed: &SensedBoard) -> bool {
    slide_caught(pos, sensed).is_some()
}

/// As [`slide_in_progress`]: the square the piece was caught on.
pub fn slide_caught(pos: &Chess, sensed: &SensedBoard) -> Option<Square> {
    let board = pos.board();
    let removed = board.occupied() & !sensed.occupied();
    let added = sensed.occupied() & !board.occupied();
    // One square filled, one or two emptied: nothing else can be a slide.
    let on = added.single_square()?;
    if removed.is_empty() || removed.count() > 2 {
        return None;
    }
    pos.legal_moves()
        .iter()
        .any(|m| caught_on(pos, sensed, m, on, removed))
        .then_some(on)
}

/// As [`slide_caught`], on any board, for a capture only, the piece it
/// takes already off: the hand took the victim off and is dragging its
/// piece over its path (a slide). A scan that also caught a move made
/// there would show the opponent's hand at work besides.
pub fn capture_slide_caught(pos: &Chess, sensed: &SensedBoard) -> Option<Square> {
    capture_caught(pos, sensed, false)
}

/// As [`capture_slide_caught`], the piece it takes still on or already
/// off: a hand takes the victim off before or after it drags its piece
/// over the path, and a scan is any instant of it. With the victim still
/// on, the scan reads on occupancy as the piece's move to that square
/// too; the scans after it part the two stories.
pub fn capture_caught_on_path(pos: &Chess, sensed: &SensedBoard) -> Option<Square> {
    capture_caught(pos, sensed, true)
}

/// The square a capture's piece was caught on, on its way, with its own
/// square empty and its victim off (or, if `victim_may_be_on`, still on).
fn capture_caught(pos: &Chess, sensed: &SensedBoard, victim_may_be_on: bool) -> Option<Square> {
    let board = pos.board();
    let removed = board.occupied() & !sensed.occupied();
    let on = (sensed.occupied() & !board.occupied()).single_square()?;
    let fewest = if victim_may_be_on { 1 } else { 2 };
    ((fewest..=2).contains(&removed.count())
        && pos.legal_moves().iter().any(|m| {
            m.is_capture() && !m.is_en_passant() && caught_on(pos, sensed, m, on, removed)
        }))
    .then_some(on)
}

/// Whether `m`'s piece, caught on `on` on its way, explains the board with
/// the squares `removed` empty.
fn caught_on(pos: &Chess, sensed: &SensedBoard, m: &Move, on: Square, removed: Bitboard) -> bool {
    let (from, to, role) = match *m {
        Move::Normal { from, to, role, .. } => (from, to, role),
        // A castling king is dragged too, over the square between its own
        // and its castling square, the rook still home (Art. 3.8.2: the king
        // moves first; a scan catching it on f1 is no king move made there).
        Move::Castle { king, .. } => match m.castling_side() {
            Some(side) => (king, side.king_to(pos.turn()), Role::King),
            None => return false,
        },
        _ => return false,
    };
    if !attacks::between(from, to).contains(on) {
        return false;
    }
    let captured_off = if m.is_capture() {
        Bitboard::from_square(to)
    } else {
        Bitboard::EMPTY
    };
    let lifted = Bitboard::from_square(from);
    let piece = role.of(pos.turn());
    (removed == lifted || removed == lifted | captured_off)
        && sensed.piece_at(on).is_none_or(|p| p == piece)
        && identities_stand(pos, sensed, removed | Bitboard::from_square(on))
}

/// Whether every piece the sensors name, off the squares that changed, is
/// the one the position has there.
fn identities_stand(pos: &Chess, sensed: &SensedBoard, changed: Bitboard) -> bool {
    (sensed.occupied() & !changed).into_iter().all(|sq| {
        sensed
            .piece_at(sq)
            .is_none_or(|p| pos.board().piece_at(sq) == Some(p))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::position;

    fn moved(pos: &Chess, from: Square, to: Square) -> SensedBoard {
        let mut s = SensedBoard::showing(pos.board());
        let piece = pos.board().piece_at(from);
        s.lift(from, 1);
        s.place(to, piece, 2);
        s
    }

    #[test]
    fn a_pawn_on_the_square_it_steps_over_is_a_slide() {
        let pos = position("rnbqkbnr/ppp1pppp/8/3p4/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 0 2");
        assert!(slide_in_progress(
            &pos,
            &moved(&pos, Square::C2, Square::C3)
        ));
        // c4 ends the pawn's path: a move made, no slide.
        assert!(!slide_in_progress(
            &pos,
            &moved(&pos, Square::C2, Square::C4)
        ));
        // A knight is carried, not dragged: it crosses no square.
        assert!(!slide_in_progress(
            &pos,
            &moved(&pos, Square::G1, Square::E2)
        ));
    }

    #[test]
    fn a_castling_king_on_the_square_it_crosses_is_a_slide() {
        // 1.e4 e5 2.Nf3 Nf6 3.Bc4 Bc5: O-O drags the king over f1.
        let pos = position("rnbqk2r/pppp1ppp/5n2/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4");
        assert!(slide_in_progress(
            &pos,
            &moved(&pos, Square::E1, Square::F1)
        ));
        // Without the right to castle, Kf1 is the only story: a move made.
        let no_right = position("rnbqk2r/pppp1ppp/5n2/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w kq - 4 4");
        assert!(!slide_in_progress(
            &no_right,
            &moved(&no_right, Square::E1, Square::F1)
        ));
    }

    #[test]
    fn a_bishop_short_of_its_capture_is_a_slide_with_the_piece_on_or_off() {
        // 1.e4 e5 2.Nf3 Nc6 3.Bc4 d6: Bxf7+ crosses d5 and e6.
        let pos = position("r1bqkbnr/ppp2ppp/2np4/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 0 4");
        let on_d5 = moved(&pos, Square::C4, Square::D5);
        assert!(slide_in_progress(&pos, &on_d5));
        let mut off = moved(&pos, Square::C4, Square::E6);
        off.lift(Square::F7, 3);
        assert!(slide_in_progress(&pos, &off));
        // Another piece of the opponent's off is no capture under way.
        let mut other = moved(&pos, Square::C4, Square::E6);
        other.lift(Square::A7, 3);
        assert!(!slide_in_progress(&pos, &other));
    }
}
