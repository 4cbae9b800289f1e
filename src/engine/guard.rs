//! The guard: a check of the engine's output against the board, outside the
//! reading rules.
//!
//! Whatever the reading rules decide, a record that has not moved while the
//! board stood differently from the record's position for longer than the
//! displaced-pieces time has stopped following the board: the sync is then
//! `lost` (or `searching`, if the engine still searches), and the arbiter is
//! told unless the engine already told him of this very state. The check
//! runs after each public step ([`Engine::push`], [`Engine::advance_to`],
//! [`Engine::finish`]) and looks only at what any reader of the engine can
//! see: the record, the sensors and the time, so no rule can bypass it.

use shakmaty::{Color, Move, Position, Rank, Role, Square};

use super::{Engine, progress::in_progress};
use crate::{
    alert::AlertKind,
    event::Millis,
    matcher::occupancy_after,
    quick_dead::{king_unattacked_after_quiet, quiet_move_is_legal},
    resync::SyncState,
};

/// What identifies the record's state: the game, its length and last move.
/// Any change (a move made, changed, taken back, a new game) is the record
/// moving.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Mark {
    game: usize,
    ply: usize,
    last: Option<Move>,
}

/// The guard's state.
#[derive(Debug, Clone, Default)]
pub(super) struct Guard {
    mark: Mark,
    /// Since when the board has differed from the record's position (and
    /// was no move in progress from it), the record unmoved; and how many
    /// alerts the game had then.
    since: Option<(Millis, usize)>,
    /// The record is taken for stopped.
    stopped: bool,
    /// The arbiter was told (or had been by the engine).
    told: bool,
    /// What the last step read of the board against the record, and what
    /// it was read from.
    seen: Option<(Seen, Standing)>,
}

/// Everything [`Engine::standing`] reads: the game's record (its revision
/// covers the position, the last move and whether the game is over), the
/// sensors (their revision covers occupancy and identities), whether the
/// player to move pressed, whether the board scans, and whether the input
/// ended.
/// Equal, the standing is the same: a step after which only the time moved
/// (most steps at the start of [`Engine::push`]) reads nothing again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seen {
    game: crate::revision::Seen,
    sensors: crate::revision::Seen,
    pressed: bool,
    scanned: bool,
    ended: bool,
}

/// How the board stands against the record's position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Standing {
    /// It shows it, or a hand at work on a move from it.
    InStep,
    /// The game is over, or the board shows one legal move made.
    Excused,
    /// Anything else: the record may have stopped following the board.
    Differs,
}

impl Engine {
    /// The sync state to report, given the reading rules' own: a record
    /// found stopped, and not moved since, is `lost`.
    pub(super) fn guarded(&self, rules: SyncState) -> SyncState {
        match rules {
            SyncState::Ok if self.guard.stopped && self.guard.mark == self.mark() => {
                SyncState::Lost
            }
            other => other,
        }
    }

    fn mark(&self) -> Mark {
        let game = self.game();
        Mark {
            game: self.games.len() - 1,
            ply: game.ply(),
            last: game.moves().last().map(|m| m.mv),
        }
    }

    /// How long the board may stand differently from the record before the
    /// record is taken for stopped: the displaced-pieces time, after the
    /// state settled (so that the engine's own `displaced_pieces` comes
    /// first).
    fn guard_wait(&self) -> Millis {
        self.config
            .displaced_ms
            .saturating_add(self.config.settle_ms)
    }

    /// When the guard next has something to decide with no new event.
    pub(super) fn guard_deadline(&self) -> Option<Millis> {
        match self.guard.since {
            Some((since, _)) if !self.guard.stopped => {
                Some(since.saturating_add(self.guard_wait()))
            }
            _ => None,
        }
    }

    /// Checks the record against the board after a step. `ended`: the input
    /// ended, so the board stands as it is for good.
    pub(super) fn guard_step(&mut self, ended: bool) {
        let mark = self.mark();
        if mark != self.guard.mark {
            self.guard = Guard {
                mark,
                ..Guard::default()
            };
        }
        let game = self.game();
        let pos = game.position();
        let seen = Seen {
            game: game.revision(),
            sensors: self.sensed.revision(),
            pressed: self.clock.pending_press[pos.turn()] || self.clock.presses_ahead > 0,
            scanned: self.observation.scanned(),
            ended,
        };
        let standing = match self.guard.seen {
            Some((before, standing)) if before == seen => standing,
            _ => {
                let standing = self.standing(seen.pressed, ended);
                self.guard.seen = Some((seen, standing));
                standing
            }
        };
        match standing {
            Standing::InStep => {
                // In step again (or a hand at work): whatever was stopped
                // goes on.
                self.guard.since = None;
                self.guard.stopped = false;
                self.guard.told = false;
                return;
            }
            Standing::Excused => {
                self.guard.since = None;
                return;
            }
            Standing::Differs => {}
        }
        let game = self.game();
        let now = self.now;
        let alerts = game.alerts.len();
        let (since, alerts_then) = *self.guard.since.get_or_insert((now, alerts));
        if !self.guard.stopped && (ended || now >= since.saturating_add(self.guard_wait())) {
            self.guard.stopped = true;
        }
        // While the reading rules say they search, `searching` says it; the
        // arbiter is told once the record is taken for lost.
        if !self.guard.stopped || self.guard.told || self.sync_state() != SyncState::Lost {
            return;
        }
        self.guard.told = true;
        // The engine already told the arbiter of this state (a pawn left
        // on the last rank stands for the queen recorded, Art. 7.5.2).
        let ply = self.game().ply();
        let told = self.game().alerts.iter().enumerate().any(|(i, a)| {
            let since_then = i >= alerts_then
                && matches!(
                    a.kind,
                    AlertKind::DisplacedPieces
                        | AlertKind::OutOfSync
                        | AlertKind::IllegalMove
                        | AlertKind::IllegalPosition
                        | AlertKind::RecordStopped
                );
            since_then || a.kind == AlertKind::PawnNotPromoted && a.ply == ply
        });
        if !told {
            self.alert_stopped(since, ended);
        }
    }

    /// How the board stands against the record's position; `pressed`: the
    /// player to move pressed his clock.
    fn standing(&self, pressed: bool, ended: bool) -> Standing {
        let game = self.game();
        let pos = game.position();
        // A hand at work excuses the board's difference only while the
        // player to move has not pressed: his press completed his move
        // (Art. 6.2.1), so a piece of his off the board is no move under
        // way any more, however the record got there.
        if self.sensed.shows_position(pos)
            || !pressed && (in_progress(pos, &self.sensed) || self.half_castling())
        {
            Standing::InStep
        } else if game.is_over() || !ended && one_move_on(pos, &self.sensed) {
            // The pieces are set up again: no move is to be followed. Or the
            // board shows one legal move made, which the record is about to
            // take (the reading rules wait for its completion or the next
            // scan); two moves on, or the input ended, it is stopped.
            Standing::Excused
        } else {
            Standing::Differs
        }
    }

    fn alert_stopped(&mut self, since: Millis, ended: bool) {
        let squares: Vec<String> = self
            .differ_from_record()
            .into_iter()
            .map(|sq| sq.to_string())
            .collect();
        let game = self.game();
        let at_move = match game.moves().last() {
            Some(m) => format!("after {} (half-move {})", m.san, game.ply()),
            None => "before the first move".to_owned(),
        };
        let how_long = if ended {
            "when the input ended".to_owned()
        } else {
            format!("for {} s", (self.now - since) / 1000)
        };
        let message = format!(
            "the record has not moved while the board differed from its position on {} {how_long}: eboard has lost this board until the record catches up or is corrected; the record stops {at_move} with {} to move. Check the board against the scoresheets and correct the record",
            squares.join(", "),
            crate::event::side_name(game.position().turn()),
        );
        self.alert(AlertKind::RecordStopped, None, message, None);
    }
}

/// Whether the sensors show the position after one legal move from `pos`.
fn one_move_on(pos: &shakmaty::Chess, sensed: &crate::sensed::SensedBoard) -> bool {
    let occupied = pos.board().occupied();
    // Nearly always one square of the side to move emptied and one empty
    // square filled: then only two kinds of move can show, the piece's
    // quiet move between them (a capture fills no square, en passant
    // empties two) and castling (Chess960 may empty and fill one square
    // each). The quiet move's legality is decided on the board, with no
    // scan of the legal moves.
    let vacated = occupied & !sensed.occupied();
    let filled = sensed.occupied() & !occupied;
    if let (Some(from), Some(to)) = (vacated.single_square(), filled.single_square())
        && pos.us().contains(from)
        && let Some(role) = pos.board().role_at(from)
    {
        return quiet_move_shown(pos, role, from, to, sensed)
            || pos.castles().has_color(pos.turn())
                && crate::legal::legal_moves(pos).iter().any(|&m| {
                    m.is_castle()
                        && occupancy_after(occupied, m, pos.turn()) == sensed.occupied()
                        && shows_after(pos, m, sensed)
                });
    }
    one_move_on_scanned(pos, sensed)
}

/// Whether the sensors show `pos` after a legal quiet move of its `role`
/// from `from` to the empty square `to`: for a piece, `quiet_move_is_legal`
/// (exact for such moves); for a pawn, a push (or a double step from its
/// first square over an empty one) that leaves its king unattacked, with
/// each promotion piece on the last rank.
fn quiet_move_shown(
    pos: &shakmaty::Chess,
    role: Role,
    from: Square,
    to: Square,
    sensed: &crate::sensed::SensedBoard,
) -> bool {
    let quiet = |promotion| Move::Normal {
        role,
        from,
        capture: None,
        to,
        promotion,
    };
    if role != Role::Pawn {
        return quiet_move_is_legal(pos.board(), pos.turn(), quiet(None))
            && shows_after(pos, quiet(None), sensed);
    }
    let (us, board) = (pos.turn(), pos.board());
    let (step, first, last) = match us {
        Color::White => (8, Rank::Second, Rank::Eighth),
        Color::Black => (-8, Rank::Seventh, Rank::First),
    };
    let Some(one) = from.offset(step) else {
        return false;
    };
    let pushed = to == one
        || from.rank() == first && !board.occupied().contains(one) && one.offset(step) == Some(to);
    if !pushed || !king_unattacked_after_quiet(board, us, from, to) {
        return false;
    }
    if to.rank() != last {
        return shows_after(pos, quiet(None), sensed);
    }
    [Role::Queen, Role::Rook, Role::Bishop, Role::Knight]
        .into_iter()
        .any(|promoted| shows_after(pos, quiet(Some(promoted)), sensed))
}

/// Whether the sensors show `pos` after its legal move `m`.
fn shows_after(pos: &shakmaty::Chess, m: Move, sensed: &crate::sensed::SensedBoard) -> bool {
    let mut after = pos.clone();
    after.play_unchecked(m);
    sensed.shows_position(&after)
}

/// [`one_move_on`], by a scan of all legal moves.
fn one_move_on_scanned(pos: &shakmaty::Chess, sensed: &crate::sensed::SensedBoard) -> bool {
    let occupied = pos.board().occupied();
    // Every move but castling empties the square it leaves: one from a
    // square the sensors read occupied cannot show (a cheaper test than
    // the occupancy after it, asked of every legal move on most events).
    let vacated = occupied & !sensed.occupied();
    crate::legal::legal_moves(pos).iter().any(|&m| {
        if let Move::Normal { from, .. } | Move::EnPassant { from, .. } = m
            && !vacated.contains(from)
        {
            return false;
        }
        // Only a move that leaves the squares the sensors read occupied
        // can show; the others are not played.
        occupancy_after(occupied, m, pos.turn()) == sensed.occupied() && shows_after(pos, m, sensed)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::parse_script;

    /// One legal move on from a position (Art. 3.1-3.8: a quiet move, a
    /// capture, castling, which empties no square the king stands on in
    /// Chess960, and en passant), told from a board two moves on or a
    /// piece moved where it cannot go.
    #[test]
    fn one_move_on_knows_every_kind_of_move() {
        use crate::{sensed::SensedBoard, test_support::position};
        let on = |fen: &str, board: &str| {
            let shown = position(&format!("{board} w - - 0 1"));
            one_move_on(&position(fen), &SensedBoard::showing(shown.board()))
        };
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        assert!(on(start, "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR"));
        assert!(!on(
            start,
            "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR"
        ));
        assert!(on(start, "rnbqkbnr/pppppppp/8/8/8/4P3/PPPP1PPP/RNBQKBNR"));
        assert!(!on(start, "rnbqkbnr/pppppppp/8/8/8/3P4/PPPP1PPP/RNBQKBNR"));
        let capture = "rnbqkbnr/ppp1pppp/8/3p4/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2";
        assert!(on(capture, "rnbqkbnr/ppp1pppp/8/3P4/8/8/PPPP1PPP/RNBQKBNR"));
        let castle = "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1";
        assert!(on(castle, "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R4RK1"));
        assert!(on(castle, "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/2KR3R"));
        // Chess960: king g1, rook h1; castling short leaves the king on g1.
        let fischer: shakmaty::Chess = "1r4kr/pppppppp/8/8/8/8/PPPPPPPP/1R4KR w HBhb - 0 1"
            .parse::<shakmaty::fen::Fen>()
            .unwrap()
            .into_position(shakmaty::CastlingMode::Chess960)
            .unwrap();
        let shown = position("1r4kr/pppppppp/8/8/8/8/PPPPPPPP/1R3RK1 b - - 0 1");
        assert!(one_move_on(&fischer, &SensedBoard::showing(shown.board())));
        let passant = "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3";
        assert!(on(
            passant,
            "rnbqkbnr/ppp1p1pp/5P2/3p4/8/8/PPPP1PPP/RNBQKBNR"
        ));
    }

    /// The board shortcut answers as the scan of all legal moves: for the
    /// position after each legal move (the sensors reading occupancy only,
    /// and identifying the piece put down, rightly or as another piece),
    /// and for each piece of the side to move put on each empty square,
    /// legal or not, in positions of random games (standard and Chess960:
    /// pins, checks, castling).
    #[test]
    fn one_move_on_answers_as_the_scan() {
        use crate::sensed::SensedBoard;
        use shakmaty::{Piece, Role};
        let (mut shown, mut not_shown, mut promotions) = (0, 0, 0);
        let mut check = |pos: &shakmaty::Chess, sensed: &SensedBoard| {
            let expected = one_move_on_scanned(pos, sensed);
            assert_eq!(one_move_on(pos, sensed), expected, "{pos:?} {sensed:?}");
            if expected {
                shown += 1;
            } else {
                not_shown += 1;
            }
        };
        for pos in crate::test_support::random_positions(24, 40) {
            for m in pos.legal_moves() {
                let mut after = pos.clone();
                after.play_unchecked(m);
                check(&pos, &SensedBoard::showing(after.board()));
                promotions += usize::from(m.is_promotion() && !m.is_capture());
                // (Castling's `to` is the rook's square in shakmaty.)
                let to = m.to();
                let Some(moved) = after.board().piece_at(to).filter(|_| !m.is_castle()) else {
                    continue;
                };
                for role in [moved.role, Role::Queen, Role::Knight] {
                    let mut sensed = SensedBoard::showing(after.board());
                    sensed.place(to, Some(Piece { role, ..moved }), 1);
                    check(&pos, &sensed);
                }
            }
            for from in pos.us() {
                for to in !pos.board().occupied() {
                    let mut board = pos.board().clone();
                    let piece = board.remove_piece_at(from).expect("our piece");
                    board.set_piece_at(to, piece);
                    check(&pos, &SensedBoard::showing(&board));
                }
            }
        }
        // Pushes onto the last rank among them, each promotion piece.
        assert!(
            shown > 1_000 && not_shown > 10_000 && promotions > 0,
            "{shown} {not_shown} {promotions}"
        );
    }

    fn replayed(script: &str, until: Millis) -> Engine {
        let mut e = Engine::default();
        for line in parse_script("t", script).unwrap() {
            e.push(&line.event).unwrap();
        }
        e.advance_to(until);
        e
    }

    #[test]
    fn a_piece_held_in_the_hand_is_no_stopped_record() {
        // Art. 7.4 concerns pieces let go of: a knight held for 20 s is a
        // move in progress, however long.
        let e = replayed("@1000 lift g1\n", 21_000);
        assert_eq!(e.sync_state(), SyncState::Ok);
        assert!(e.game().alerts.is_empty());
    }

    #[test]
    fn a_record_behind_the_board_past_the_deadline_is_lost_until_it_moves() {
        // 1.e4 e5 2.Nf3 shown at once after a press with no move, read by
        // no rule here: the knight and both pawns moved, the record at 0.
        let script = "@0 board rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R\n";
        let mut e = Engine::default();
        e.guard.mark = e.mark();
        // Stand-in for a rule that lets the board go: the sensors only.
        for line in parse_script("t", script).unwrap() {
            if let crate::event::BoardEvent::Board(scan) = &line.event.event {
                e.sensed.apply_scan(scan, 1);
            }
        }
        e.now = 100;
        e.guard_step(false);
        assert_eq!(e.sync_state(), SyncState::Ok, "not before the deadline");
        e.now = 100 + e.guard_wait();
        e.guard_step(false);
        assert_eq!(e.sync_state(), SyncState::Lost);
        let kinds: Vec<AlertKind> = e.game().alerts.iter().map(|a| a.kind).collect();
        assert_eq!(kinds, [AlertKind::RecordStopped]);
        assert!(
            e.game().alerts[0]
                .message
                .contains("g1, e2, f3, e4, e5, e7")
        );
        // Once the board shows the record's position again, in step.
        e.sensed = crate::sensed::SensedBoard::showing(e.game().position().board());
        e.guard_step(false);
        assert_eq!(e.sync_state(), SyncState::Ok);
    }
}
