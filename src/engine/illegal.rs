//! Illegal moves: what the board shows a player attempted, why the Laws
//! forbid it, the penalty (Art. 7.5), and play that goes on from it.

use shakmaty::{
    Bitboard, CastlingSide, Chess, Color, File, Move, Outcome, Position, Rank, Role, Square,
    attacks,
};

use super::Engine;
use crate::{
    alert::AlertKind,
    event::{Millis, side_name},
    game::{Termination, draw, win},
    matcher::occupancy_after,
    rules::{IllegalMovePenalty, RuleSet, Rules, minutes},
    sensed::SensedBoard,
    winnability::{Budget, Verdict, can_checkmate, can_checkmate_fast},
};

/// The move a player attempted, as the board shows it: read once, then
/// both described to the arbiter and, when play goes on from it, recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attempt {
    /// Squares the mover's pieces left.
    vacated: Bitboard,
    /// Squares empty in the position that the board shows occupied.
    filled: Bitboard,
    /// The king went two squares along its rank: castling.
    castle: Option<(CastlingSide, Square)>,
    shape: Shape,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    /// One piece went from one square to another.
    Piece {
        mv: Move,
        /// The board shows exactly that piece moved.
        shown: bool,
    },
    /// One piece left its square for no square it can be seen on.
    Lost { role: Role, from: Square },
    /// Several of the mover's pieces left their squares, or none.
    Unreadable,
}

impl Attempt {
    /// Reads the attempted move from the position and the board; `touched`:
    /// squares lifted since the position (a capture shows as a lift).
    pub fn read(pos: &Chess, sensed: &SensedBoard, touched: Bitboard) -> Attempt {
        let turn = pos.turn();
        let board = pos.board();
        let vacated = board.occupied() & !sensed.occupied() & pos.us();
        let filled = sensed.occupied() & !board.occupied();
        let castle = board
            .king_of(turn)
            .filter(|&k| vacated.contains(k))
            .and_then(|k| {
                (filled & Bitboard::from_rank(k.rank()))
                    .into_iter()
                    .find(|&sq| sq.file().distance(k.file()) == 2)
                    .map(|to| (CastlingSide::from_king_side(to.file() > k.file()), k))
            });
        let shape = match vacated
            .single_square()
            .zip(vacated.single_square().and_then(|from| board.role_at(from)))
        {
            None => Shape::Unreadable,
            Some((from, role)) => match filled
                .single_square()
                .or_else(|| (touched & sensed.occupied() & pos.them()).single_square())
            {
                None => Shape::Lost { role, from },
                Some(to) => {
                    let capture = board
                        .role_at(to)
                        .filter(|_| board.color_at(to) == Some(!turn));
                    let mv = Move::Normal {
                        role,
                        from,
                        capture,
                        to,
                        promotion: None,
                    };
                    let mut after = pos.clone();
                    after.play_unchecked(mv);
                    let shown = sensed.shows(after.board());
                    Shape::Piece { mv, shown }
                }
            },
        };
        Attempt {
            vacated,
            filled,
            castle,
            shape,
        }
    }

    /// The move play can go on from: one piece of the side to move went
    /// from one square to another, and the board shows exactly that. Never
    /// a king taken: no game goes on without one.
    pub fn on_board(&self) -> Option<Move> {
        match self.shape {
            Shape::Piece { mv, shown: true } if mv.capture() != Some(Role::King) => Some(mv),
            _ => None,
        }
    }

    /// Says what the board shows as a move, in long notation with the
    /// reason it is illegal: "Ke1-e3: a king cannot go from e1 to e3".
    pub fn describe(&self, pos: &Chess, sensed: &SensedBoard) -> String {
        if let Some((side, king)) = self.castle {
            return describe_castling(pos, side, king);
        }
        match self.shape {
            Shape::Unreadable => format!(
                "the board shows a position no legal move leads to (emptied: {}; filled: {})",
                squares(self.vacated),
                squares(self.filled)
            ),
            Shape::Lost { role, from } => format!(
                "the {} left {from} for no square it can reach",
                role_name(role)
            ),
            Shape::Piece { mv, .. } => describe_piece_move(pos, sensed, mv),
        }
    }
}

fn describe_castling(pos: &Chess, side: CastlingSide, king: Square) -> String {
    let turn = pos.turn();
    let board = pos.board();
    let (name, passed) = match side {
        CastlingSide::KingSide => ("O-O", File::F),
        CastlingSide::QueenSide => ("O-O-O", File::D),
    };
    let passed = Square::from_coords(passed, king.rank());
    let legal = pos.legal_moves().into_iter().find_map(|m| match m {
        Move::Castle { king: k, rook } if k == king && m.castling_side() == Some(side) => {
            Some(rook)
        }
        _ => None,
    });
    if let Some(rook) = legal {
        // Castling was allowed: only the rook's half of it is missing.
        return format!(
            "{name} not completed: the king went to {} but the rook is still on {rook}; castling is made when the rook is released on {} (Art. 4.7.2)",
            side.king_to(turn),
            side.rook_to(turn)
        );
    }
    let reason = if !pos.castles().has(turn, side) {
        "castling after the king or that rook has moved (Art. 3.8.2.1)"
    } else if pos.is_check() {
        "castling out of check (Art. 3.8.2.2)"
    } else if board.attacks_to(passed, !turn, board.occupied()).any() {
        "castling through check (Art. 3.8.2.2)"
    } else {
        "castling into check or with a piece in between (Art. 3.8.2)"
    };
    format!("{name}: {reason}")
}

fn describe_piece_move(pos: &Chess, sensed: &SensedBoard, mv: Move) -> String {
    let turn = pos.turn();
    let board = pos.board();
    let Move::Normal {
        role,
        from,
        capture,
        to,
        ..
    } = mv
    else {
        return "the board shows a position no legal move leads to".to_owned();
    };
    let letter = if role == Role::Pawn {
        String::new()
    } else {
        role.upper_char().to_string()
    };
    let text = format!(
        "{letter}{from}{}{to}",
        if capture.is_some() { 'x' } else { '-' }
    );
    let behind = Square::from_coords(to.file(), from.rank());
    if role == Role::Pawn
        && capture.is_none()
        && attacks::pawn_attacks(turn, from).contains(to)
        && board.piece_at(behind) == Some((!turn).pawn())
        && !sensed.occupied().contains(behind)
    {
        return format!(
            "{}x{to} en passant: allowed only on the move right after the pawn's double step (Art. 3.7.3.2)",
            from.file().char()
        );
    }
    let reaches = match role {
        Role::Pawn => {
            let step = turn.fold_wb(8, -8);
            let one = from.offset(step);
            let two = one.and_then(|s| s.offset(step));
            let home = turn.fold_wb(Rank::Second, Rank::Seventh);
            if capture.is_some() {
                attacks::pawn_attacks(turn, from).contains(to)
            } else {
                Some(to) == one || (Some(to) == two && from.rank() == home)
            }
        }
        _ => attacks::attacks(from, role.of(turn), board.occupied()).contains(to),
    };
    if !reaches {
        return format!(
            "{text}: a {} cannot go from {from} to {to} (Art. 3)",
            role_name(role)
        );
    }
    let mut after = pos.clone();
    after.play_unchecked(mv);
    if let Some(k) = after.board().king_of(turn)
        && after
            .board()
            .attacks_to(k, !turn, after.board().occupied())
            .any()
    {
        return format!("{text} leaves the king in check (Art. 3.9)");
    }
    format!("{text} is not a legal move here (Art. 3)")
}

/// The name of a piece, in words.
pub(crate) fn role_name(role: Role) -> &'static str {
    match role {
        Role::Pawn => "pawn",
        Role::Knight => "knight",
        Role::Bishop => "bishop",
        Role::Rook => "rook",
        Role::Queen => "queen",
        Role::King => "king",
    }
}

fn squares(bb: Bitboard) -> String {
    if bb.is_empty() {
        return "none".to_owned();
    }
    bb.into_iter()
        .map(|sq| sq.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A pawn of the side to move put on the last rank and left there, as the
/// board shows it (identity boards only: an occupancy board reads the piece
/// as a queen anyway). Returns the queen promotion to record (Art. 7.5.2).
fn unpromoted_pawn(pos: &Chess, sensed: &SensedBoard) -> Option<Move> {
    let pawn = pos.turn().pawn();
    pos.legal_moves().into_iter().find(|&m| {
        matches!(m, Move::Normal { promotion: Some(Role::Queen), to, .. }
            if sensed.piece_at(to) == Some(pawn)
                && occupancy_after(pos.board().occupied(), m, pos.turn()) == sensed.occupied())
    })
}

/// What the arbiter does after the penalty: restore the position before
/// the illegal move, and what the player must then play. A press without a
/// move touched nothing, so any legal move follows; a king released two
/// squares along its rank must castle on that side when that is legal, or
/// else make another king move (Art. 4.7.2); otherwise the piece touched
/// must be moved (Art. 4.3).
fn restore_ruling(
    pos: &Chess,
    kind: crate::alert::AlertKind,
    castle: Option<(CastlingSide, Square)>,
) -> String {
    if kind == crate::alert::AlertKind::ClockWithoutMove {
        return "restore the position before it; no piece was touched, so any legal move may follow (Art. 7.5.1, 7.5.3)".to_owned();
    }
    if let Some((side, king)) = castle {
        let legal = pos.legal_moves().iter().any(|m| {
            matches!(m, Move::Castle { king: k, .. } if *k == king)
                && m.castling_side() == Some(side)
        });
        let name = match side {
            CastlingSide::KingSide => "O-O",
            CastlingSide::QueenSide => "O-O-O",
        };
        return if legal {
            format!(
                "restore the position before it; the king was released, so the player must castle {name} (Art. 7.5.1, 4.7.2)"
            )
        } else {
            format!(
                "restore the position before it; {name} is illegal, so the player must make another legal king move, castling on the other side included, or any legal move if the king has none (Art. 7.5.1, 4.7.2)"
            )
        };
    }
    "restore the position before it, then a move with the piece touched (Art. 7.5.1, 4.3)"
        .to_owned()
}

/// The ruling for the `count`th illegal move by `offender` in `pos`, and
/// the result when it ends the game (Art. 7.5.5, A.4.2, B.3).
fn penalty(
    rules: Rules,
    pos: &Chess,
    offender: Color,
    count: u32,
    restore: Option<String>,
) -> (String, Option<Outcome>) {
    let article = rules.illegal_move_article();
    match rules.illegal_move_penalty(count) {
        IllegalMovePenalty::TimeToOpponent(secs) => {
            let mut ruling = format!(
                "{} to {} ({article}; illegal move number {count} by {})",
                minutes(secs),
                side_name(!offender),
                side_name(offender)
            );
            if let Some(restore) = restore {
                ruling.push_str("; ");
                ruling.push_str(&restore);
            }
            (ruling, None)
        }
        IllegalMovePenalty::Loss { unless_no_mate } => {
            let opponent_can_mate = !unless_no_mate
                || can_checkmate_fast(pos, !offender) != Verdict::No
                    && can_checkmate(pos, !offender, Budget::DETERMINISTIC)
                        .map_or(true, |a| a.verdict != Verdict::No);
            if opponent_can_mate {
                (
                    format!(
                        "illegal move number {count} by {}: the game is lost ({article})",
                        side_name(offender)
                    ),
                    Some(win(!offender)),
                )
            } else {
                (
                    format!(
                        "illegal move number {count} by {}: the game is drawn, as {} cannot checkmate by any series of legal moves ({article})",
                        side_name(offender),
                        side_name(!offender)
                    ),
                    Some(draw()),
                )
            }
        }
    }
}

/// Both kings in check, or a pawn on its first or last rank: a position
/// that cannot arise in a game.
fn illegal_position(pos: &Chess) -> Option<String> {
    let board = pos.board();
    let occupied = board.occupied();
    let in_check = |c: Color| {
        board
            .king_of(c)
            .is_some_and(|k| board.attacks_to(k, !c, occupied).any())
    };
    if in_check(Color::White) && in_check(Color::Black) {
        Some("both kings are in check".to_owned())
    } else {
        (board.pawns() & Bitboard::BACKRANKS)
            .first()
            .map(|sq| format!("a pawn stands on {sq}, a rank no pawn can be on"))
    }
}

impl Engine {
    /// The clock was pressed by the player to move with the board showing
    /// no legal move: a completed illegal move (Art. 7.5.1), or a pawn left
    /// on the last rank (7.5.2).
    pub(super) fn completed_irregularity(&mut self, color: Color, t: Millis) {
        let game = self.game();
        let pos = game.position().clone();
        let touched = self.sensed.touched_since(game.basis(game.ply()));
        if let Some(m) = unpromoted_pawn(&pos, &self.sensed) {
            self.record(&[m], self.settle.since(), self.settle.basis());
            self.complete_all(t);
            let san = self
                .game()
                .moves()
                .last()
                .map(|m| m.san.to_string())
                .unwrap_or_default();
            let message = format!(
                "{} pressed the clock with a pawn on the last rank: recorded as {san}, a queen promotion (Art. 7.5.2: treated as an illegal move)",
                side_name(color)
            );
            self.illegal(AlertKind::PawnNotPromoted, color, message, None, t);
            return;
        }
        let attempt = Attempt::read(&pos, &self.sensed, touched);
        let message = format!(
            "{} completed an illegal move: {} (Art. 7.5.1)",
            side_name(color),
            attempt.describe(&pos, &self.sensed)
        );
        let attempt = (attempt, self.settle.since());
        self.illegal(AlertKind::IllegalMove, color, message, Some(attempt), t);
    }

    /// Counts a completed illegal move (or an act treated as one), applies
    /// Art. 7.5.5 (time to the opponent, or the game lost on the second,
    /// drawn if the opponent cannot checkmate), and waits for the position
    /// before it.
    pub(super) fn illegal(
        &mut self,
        kind: AlertKind,
        offender: Color,
        message: String,
        attempt: Option<(Attempt, Millis)>,
        at: Millis,
    ) {
        let restore = kind != AlertKind::PawnNotPromoted;
        self.penalise(kind, offender, message, attempt, at, restore);
    }

    /// [`Engine::illegal`], saying whether the position before the act must
    /// be restored (not when the act left the position as it should be).
    pub(super) fn penalise(
        &mut self,
        kind: AlertKind,
        offender: Color,
        message: String,
        attempt: Option<(Attempt, Millis)>,
        at: Millis,
        restore: bool,
    ) {
        let count = {
            let game = self.game_mut();
            game.illegal_moves[offender] += 1;
            game.illegal_moves[offender]
        };
        let what_next = restore.then(|| {
            restore_ruling(
                self.game().position(),
                kind,
                attempt.as_ref().and_then(|(a, _)| a.castle),
            )
        });
        let (ruling, ending) = penalty(
            self.config.rules(),
            self.game().position(),
            offender,
            count,
            what_next,
        );
        self.alert(kind, Some(offender), message, Some(ruling));
        match ending {
            Some(outcome) => self.end_game(outcome, Termination::IllegalMoves, at),
            None if restore => self.phase.irregularity(offender, attempt),
            None => {}
        }
    }

    /// Play continued from the position an illegal move left on the board:
    /// the illegal move is kept in the record (marked), and so is the reply.
    pub(super) fn continue_after_illegal(
        &mut self,
        (illegal, illegal_at): (Move, Millis),
        reply: Move,
        made_at: Millis,
        basis: u64,
    ) {
        let offender = self.phase.end_irregularity();
        let n = self.game().ply();
        let basis_before = self.game().basis(n);
        self.game_mut()
            .push_illegal(illegal, illegal_at, basis_before);
        let san = &self.game().moves()[n].san;
        let message = match self.config.rules {
            RuleSet::Rapid | RuleSet::Blitz => format!(
                "the illegal move {san} stands: the opponent has made his next move without the arbiter intervening (A.5.2); play goes on from the position on the board"
            ),
            RuleSet::Standard => format!(
                "play continued after the illegal move {san} without the position being restored; the arbiter must still restore the position before it (Art. 7.5.1); the record goes on from the board"
            ),
        };
        self.alert(AlertKind::IllegalMoveStands, offender, message, None);
        if let Some(what) = illegal_position(self.game().position()) {
            let ruling = match self.config.rules {
                RuleSet::Rapid | RuleSet::Blitz => {
                    "wait until the next move is completed; if the illegal position is still on the board, the game is drawn (A.5.4)"
                }
                RuleSet::Standard => "the arbiter must intervene at once (Art. 7.5.1)",
            };
            let message = format!("illegal position on the board: {what}");
            self.alert(
                AlertKind::IllegalPosition,
                offender,
                message,
                Some(ruling.to_owned()),
            );
        }
        self.record(&[reply], made_at, basis);
    }

    /// The board is back in step after an irregularity: the position before
    /// it, or a legal move from it.
    pub(super) fn restored(&mut self, mv: Option<Move>, made_at: Millis, basis: u64) {
        let offender = self.phase.end_irregularity();
        let message =
            "the board shows again the position before the irregularity (Art. 7.5.1)".to_owned();
        self.alert(AlertKind::PositionRestored, offender, message, None);
        if let Some(m) = mv {
            self.record(&[m], made_at, basis);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shakmaty::{CastlingMode, fen::Fen};

    fn describe(fen: &str, lift: &[Square], place: &[Square]) -> String {
        let pos: Chess = fen
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .unwrap();
        let mut sensed = SensedBoard::showing(pos.board());
        for (i, &sq) in lift.iter().chain(place).enumerate() {
            if lift.contains(&sq) {
                sensed.lift(sq, i as u64 + 1);
            } else {
                sensed.place(sq, None, i as u64 + 1);
            }
        }
        let touched = sensed.touched_since(0);
        Attempt::read(&pos, &sensed, touched).describe(&pos, &sensed)
    }

    #[test]
    fn a_king_on_g1_without_the_rook_is_an_incomplete_castling() {
        let text = describe(
            "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3K2R w KQkq - 0 1",
            &[Square::E1],
            &[Square::G1],
        );
        assert!(
            text.starts_with("O-O not completed: the king went to g1 but the rook is still on h1"),
            "{text}"
        );
    }

    #[test]
    fn castling_that_is_not_allowed_says_why() {
        // A bishop on f1 stands in between: not allowed, not incomplete.
        let text = describe(
            "r3k2r/pppppppp/8/8/8/8/PPPPPPPP/R3KB1R w KQkq - 0 1",
            &[Square::E1],
            &[Square::G1],
        );
        assert!(!text.contains("not completed"), "{text}");
    }
}
