//! Can a side still checkmate? Dead positions (FIDE Art. 5.2.2) and the
//! "opponent cannot checkmate by any series of legal moves" exception to
//! losing on flag fall (6.9), resignation (5.1.2) or a second illegal move
//! (7.5.5).
//!
//! The decision procedure is Miguel Ambrona's Chess Unwinnability Analyzer
//! (CHA) as implemented by the `chasolver` crate. chasolver is built on the
//! `chess` crate, so every position is copied square by square from shakmaty
//! into a `chess::Board` (see `SolverBoard`) and every helpmate line it
//! returns is replayed and checked with shakmaty before it is reported.
//!
//! Three answers only: [`Verdict::Yes`] comes with a checked helpmate line,
//! [`Verdict::No`] is a proof by CHA, and [`Verdict::Unknown`] is returned
//! whenever that certainty is missing (budget exhausted, or a position
//! feature the solver cannot represent). Nothing is guessed.
//!
//! The move counters are ignored: like CHA, the analysis asks whether a mate
//! exists at all, not whether it fits before a 50- or 75-move limit.

use std::{
    panic::{AssertUnwindSafe, catch_unwind},
    sync::mpsc,
    time::Duration,
};

use shakmaty::{
    CastlingSide, Chess, Color, EnPassantMode, File, Move, Position, Rank, Role, fen::Fen,
    san::SanPlus, uci::UciMove,
};

/// Answer to "can this side still checkmate?" (or "is this position dead?").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Proven: a series of legal moves reaches the event asked about.
    Yes,
    /// Proven impossible.
    No,
    /// Not decided: the budget ran out, or the quick test could not tell.
    Unknown,
}

impl Verdict {
    /// `Some(true)` for [`Verdict::Yes`], `Some(false)` for [`Verdict::No`],
    /// `None` for [`Verdict::Unknown`]; the shape used in JSON output.
    pub const fn as_option(self) -> Option<bool> {
        match self {
            Verdict::Yes => Some(true),
            Verdict::No => Some(false),
            Verdict::Unknown => None,
        }
    }
}

/// How much work a full analysis may do.
///
/// chasolver 3.0.0 bounds its search internally by fixed node counts (a node
/// is one candidate move considered by its helpmate search; roughly 1,000 to
/// 7,000 per search depth in its early phases and 2^24 in its last phase) and
/// does not let callers change them. With the default budget the analysis
/// runs to those limits, so a verdict depends on the position alone and is
/// reproducible. [`Budget::time_limit`] adds a wall-clock cap on top: useful
/// to keep an arbiter's screen responsive, but the answer may then depend on
/// machine load.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Budget {
    /// Wall-clock limit per side analysed. `None`: only chasolver's node
    /// limits apply (deterministic).
    pub time_limit: Option<Duration>,
}

impl Budget {
    /// chasolver's own node limits only: deterministic verdicts.
    pub const DETERMINISTIC: Budget = Budget { time_limit: None };

    /// chasolver's node limits plus a wall-clock cap of `limit` per side.
    ///
    /// When the cap is hit the verdict is [`Verdict::Unknown`]; the solver
    /// keeps running on a detached thread until its node limit stops it,
    /// because chasolver offers no way to cancel a search.
    pub const fn with_time_limit(limit: Duration) -> Budget {
        Budget {
            time_limit: Some(limit),
        }
    }
}

/// Why a full analysis ended with [`Verdict::Unknown`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnknownCause {
    /// chasolver used up its internal node limits without deciding.
    NodeLimit,
    /// [`Budget::time_limit`] elapsed first.
    TimeLimit,
    /// The solver proved "no mate", but on a copy of the position without
    /// some castling rights it cannot represent (Chess960 castling with the
    /// king off the e-file or a rook off the corner); fewer moves could mean
    /// fewer mates, so the proof does not carry over.
    CastlingNotRepresentable,
}

/// A checkmating line found by the solver and replayed with shakmaty.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Helpmate {
    /// The moves, legal in sequence from the analysed position; the last one
    /// mates. Empty when the position is already checkmate.
    pub moves: Vec<Move>,
    /// The same moves in SAN with `+`/`#` suffixes.
    pub san: Vec<String>,
    /// The same moves in UCI notation.
    pub uci: Vec<String>,
}

/// Result of [`can_checkmate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Analysis {
    /// Whether the side asked about can still checkmate.
    pub verdict: Verdict,
    /// Present exactly when `verdict` is [`Verdict::Yes`].
    pub helpmate: Option<Helpmate>,
    /// Present exactly when `verdict` is [`Verdict::Unknown`].
    pub unknown_cause: Option<UnknownCause>,
}

impl Analysis {
    fn no() -> Analysis {
        Analysis {
            verdict: Verdict::No,
            helpmate: None,
            unknown_cause: None,
        }
    }

    fn unknown(cause: UnknownCause) -> Analysis {
        Analysis {
            verdict: Verdict::Unknown,
            helpmate: None,
            unknown_cause: Some(cause),
        }
    }
}

/// Failures of the analysis itself (not "undecided": that is
/// [`Verdict::Unknown`]). Each carries the FEN of the position concerned.
#[derive(Debug, thiserror::Error)]
pub enum WinnabilityError {
    /// The position cannot be handed to the solver at all.
    #[error("position not supported by the solver ({reason}): {fen}")]
    Unsupported {
        /// The position, with the en passant square only when capturable.
        fen: String,
        /// Why the solver cannot take it.
        reason: &'static str,
    },
    /// The solver panicked; a bug in it or in the bridge to it.
    #[error("solver crashed while analysing {side} to mate: {fen}")]
    SolverPanicked {
        fen: String,
        /// The side whose mating chances were analysed.
        side: Color,
    },
    /// The solver reported a line that is not a legal mate in shakmaty.
    #[error("solver returned an invalid helpmate for {side} ({line}): {fen}")]
    InvalidHelpmate {
        fen: String,
        /// The side whose mating chances were analysed.
        side: Color,
        /// The line as returned, in UCI.
        line: String,
    },
}

/// The quick test, meant to run after every move: [`Verdict::No`] when it
/// proves that `side` can no longer checkmate, otherwise
/// [`Verdict::Unknown`]. It never answers [`Verdict::Yes`] (proving a mate
/// needs the full search of [`can_checkmate`]).
///
/// A few microseconds on positions from real games; composed positions can
/// take much longer (chasolver's fast mode is not bounded by a budget), so
/// call it off any latency-critical path.
pub fn can_checkmate_fast(pos: &Chess, side: Color) -> Verdict {
    // Bare king, or lone minor piece facing nothing that could block its
    // own king: settled without touching the solver.
    if pos.has_insufficient_material(side) && !has_mated(pos, side) {
        return Verdict::No;
    }
    let Ok(board) = SolverBoard::from_position(pos) else {
        return Verdict::Unknown;
    };
    let unwinnable =
        catch_unwind(|| chasolver::is_unwinnable_fast(&board.board, solver_color(side)));
    match unwinnable {
        Ok(true) if board.exact => Verdict::No,
        _ => Verdict::Unknown,
    }
}

/// [`can_checkmate_fast`] for both sides: `true` when neither side can
/// checkmate as far as the quick test proves. The same answer as asking
/// each side in turn (White first), with the position copied into the
/// solver once instead of twice.
pub fn neither_can_checkmate_fast(pos: &Chess) -> bool {
    let mut board = None;
    for side in [Color::White, Color::Black] {
        if pos.has_insufficient_material(side) && !has_mated(pos, side) {
            continue;
        }
        let board = match &mut board {
            Some(board) => board,
            None => match SolverBoard::from_position(pos) {
                Ok(built) => board.insert(built),
                Err(_) => return false,
            },
        };
        let unwinnable =
            catch_unwind(|| chasolver::is_unwinnable_fast(&board.board, solver_color(side)));
        if !(matches!(unwinnable, Ok(true)) && board.exact) {
            return false;
        }
    }
    true
}

/// Full analysis: can `side` still checkmate by some series of legal moves
/// (both players cooperating)? On [`Verdict::Yes`] the result holds a
/// helpmate line, checked move by move.
///
/// # Errors
///
/// [`WinnabilityError`] when the position cannot be given to the solver,
/// the solver crashes, or its line fails the check.
pub fn can_checkmate(
    pos: &Chess,
    side: Color,
    budget: Budget,
) -> Result<Analysis, WinnabilityError> {
    analyse(pos, side, budget, Render::Text)
}

/// [`can_checkmate`]'s verdict alone: the same analysis and the same
/// checks of the line found, which is not written out (a flag fall or
/// resignation decided in a replay needs only the result).
///
/// # Errors
///
/// As [`can_checkmate`].
pub fn mate_verdict(pos: &Chess, side: Color, budget: Budget) -> Result<Verdict, WinnabilityError> {
    Ok(analyse(pos, side, budget, Render::Checked)?.verdict)
}

/// Whether a helpmate line found is written out in SAN and UCI, or only
/// checked move by move (all a verdict needs: the same checks, the same
/// answers, without the notation, which cost more than the search itself
/// on the positions of real games).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Render {
    Text,
    Checked,
}

/// [`can_checkmate`], the line rendered or only checked.
fn analyse(
    pos: &Chess,
    side: Color,
    budget: Budget,
    render: Render,
) -> Result<Analysis, WinnabilityError> {
    if has_mated(pos, side) {
        return Ok(Analysis {
            verdict: Verdict::Yes,
            helpmate: Some(Helpmate {
                moves: Vec::new(),
                san: Vec::new(),
                uci: Vec::new(),
            }),
            unknown_cause: None,
        });
    }
    if pos.has_insufficient_material(side) {
        return Ok(Analysis::no());
    }
    let board = SolverBoard::from_position(pos)?;
    let outcome = match budget.time_limit {
        None => solve_inline(board.board, side),
        Some(limit) => solve_with_deadline(board.board, side, limit),
    };
    match outcome {
        Outcome::Done(Some(chasolver::Winnability::Winnable { helpmate })) => {
            let helpmate = replay_helpmate(pos, side, &helpmate, render)?;
            Ok(Analysis {
                verdict: Verdict::Yes,
                helpmate: Some(helpmate),
                unknown_cause: None,
            })
        }
        Outcome::Done(Some(chasolver::Winnability::Unwinnable)) if board.exact => {
            Ok(Analysis::no())
        }
        Outcome::Done(Some(chasolver::Winnability::Unwinnable)) => {
            Ok(Analysis::unknown(UnknownCause::CastlingNotRepresentable))
        }
        Outcome::Done(None) => Ok(Analysis::unknown(UnknownCause::NodeLimit)),
        Outcome::TimedOut => Ok(Analysis::unknown(UnknownCause::TimeLimit)),
        Outcome::Panicked => Err(WinnabilityError::SolverPanicked {
            fen: fen_of(pos),
            side,
        }),
    }
}

/// Is the position dead (FIDE 5.2.2: neither player can checkmate by any
/// series of legal moves)? [`Verdict::Yes`] only when both sides are proven
/// unable to mate, [`Verdict::No`] as soon as one side has a helpmate.
///
/// Runs the quick test first, so positions that are obviously dead cost
/// microseconds; `budget` applies to each side's full analysis.
///
/// # Errors
///
/// As [`can_checkmate`].
pub fn is_dead(pos: &Chess, budget: Budget) -> Result<Verdict, WinnabilityError> {
    let mut undecided = false;
    for side in [Color::White, Color::Black] {
        if can_checkmate_fast(pos, side) == Verdict::No {
            continue;
        }
        match analyse(pos, side, budget, Render::Checked)?.verdict {
            Verdict::Yes => return Ok(Verdict::No),
            Verdict::No => {}
            Verdict::Unknown => undecided = true,
        }
    }
    Ok(if undecided {
        Verdict::Unknown
    } else {
        Verdict::Yes
    })
}

/// Whether `side` has already checkmated: material counts say nothing then
/// (two bishops on one colour cannot mate, yet a double check by them can
/// be mate on the board).
fn has_mated(pos: &Chess, side: Color) -> bool {
    pos.turn() != side && pos.is_check() && pos.is_checkmate()
}

/// A position as the solver sees it.
struct SolverBoard {
    board: chess::Board,
    /// False when castling rights had to be dropped (see
    /// [`UnknownCause::CastlingNotRepresentable`]).
    exact: bool,
}

impl SolverBoard {
    /// Copies the position square by square rather than through a FEN
    /// string: shakmaty writes Chess960 castling rights that the `chess`
    /// crate's FEN reader would silently misread, and building directly
    /// keeps the quick test free of string formatting.
    fn from_position(pos: &Chess) -> Result<SolverBoard, WinnabilityError> {
        let unsupported = |reason| WinnabilityError::Unsupported {
            fen: fen_of(pos),
            reason,
        };
        // The `chess` crate's move generator keeps one slot per piece in a
        // fixed array of 18 and panics beyond it; 16 is the most a legal game
        // position can have, and only positions built with shakmaty's
        // too-much-material check switched off exceed it.
        for color in Color::ALL {
            if pos.board().by_color(color).count() > 16 {
                return Err(unsupported("more than 16 pieces for one side"));
            }
        }

        let mut builder = chess::BoardBuilder::new();
        for (square, piece) in pos.board() {
            builder.piece(
                chess::ALL_SQUARES[usize::from(square)],
                solver_role(piece.role),
                solver_color(piece.color),
            );
        }
        builder.side_to_move(solver_color(pos.turn()));

        let mut exact = true;
        for color in Color::ALL {
            let (rights, all_kept) = castle_rights(pos, color);
            exact &= all_kept;
            builder.castle_rights(solver_color(color), rights);
        }

        // Only a legally capturable en passant square changes the position's
        // future; the `chess` crate wants the file of the pawn that just
        // moved two squares, which is the target square's file.
        let ep_file = pos
            .ep_square(EnPassantMode::Legal)
            .map(|square| chess::File::from_index(usize::from(square.file())));
        builder.en_passant(ep_file);

        let board = chess::Board::try_from(&builder)
            .map_err(|_| unsupported("rejected by the chess crate"))?;
        Ok(SolverBoard { board, exact })
    }
}

/// The castling rights of `color` as the `chess` crate can hold them, and
/// whether none had to be left out. That crate only knows standard castling:
/// king on the e-file, rooks in the corners.
fn castle_rights(pos: &Chess, color: Color) -> (chess::CastleRights, bool) {
    let castles = pos.castles();
    let backrank = color.backrank();
    let king_on_e =
        pos.board().king_of(color) == Some(shakmaty::Square::from_coords(File::E, backrank));
    let kept = |side: CastlingSide, corner: File| match castles.rook(color, side) {
        None => (false, true),
        Some(rook) => {
            let ok = king_on_e && rook == shakmaty::Square::from_coords(corner, backrank);
            (ok, ok)
        }
    };
    let (king_side, king_side_kept) = kept(CastlingSide::KingSide, File::H);
    let (queen_side, queen_side_kept) = kept(CastlingSide::QueenSide, File::A);
    let rights = match (king_side, queen_side) {
        (true, true) => chess::CastleRights::Both,
        (true, false) => chess::CastleRights::KingSide,
        (false, true) => chess::CastleRights::QueenSide,
        (false, false) => chess::CastleRights::NoRights,
    };
    (rights, king_side_kept && queen_side_kept)
}

enum Outcome {
    Done(Option<chasolver::Winnability>),
    TimedOut,
    Panicked,
}

fn solve_inline(board: chess::Board, side: Color) -> Outcome {
    // AssertUnwindSafe: the board is a copy and nothing is shared with the
    // solver, so a panic cannot leave our state half-updated.
    match catch_unwind(AssertUnwindSafe(|| {
        chasolver::winnability(&board, solver_color(side))
    })) {
        Ok(result) => Outcome::Done(result),
        Err(_) => Outcome::Panicked,
    }
}

fn solve_with_deadline(board: chess::Board, side: Color, limit: Duration) -> Outcome {
    let (sender, receiver) = mpsc::sync_channel(1);
    let spawned = std::thread::Builder::new()
        .name("eboard-cha".into())
        .spawn(move || {
            // The receiver may be gone after a timeout; nothing to do then.
            let _ = sender.send(solve_inline(board, side));
        });
    if spawned.is_err() {
        // No thread to be had: the node limits still bound the work.
        return solve_inline(board, side);
    }
    match receiver.recv_timeout(limit) {
        Ok(outcome) => outcome,
        Err(mpsc::RecvTimeoutError::Timeout) => Outcome::TimedOut,
        Err(mpsc::RecvTimeoutError::Disconnected) => Outcome::Panicked,
    }
}

/// Replays the solver's line in shakmaty, so that a reported mate is a
/// legal one in the crate's own rules, and renders it.
fn replay_helpmate(
    start: &Chess,
    side: Color,
    line: &[chess::ChessMove],
    render: Render,
) -> Result<Helpmate, WinnabilityError> {
    let uci_line = || {
        line.iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" ")
    };
    let invalid = || WinnabilityError::InvalidHelpmate {
        fen: fen_of(start),
        side,
        line: uci_line(),
    };
    let mode = start.castles().mode();
    let mut pos = start.clone();
    let mut helpmate = Helpmate {
        moves: Vec::with_capacity(line.len()),
        san: Vec::with_capacity(line.len()),
        uci: Vec::with_capacity(line.len()),
    };
    for solver_move in line {
        let uci = UciMove::Normal {
            from: shakmaty_square(solver_move.get_source()),
            to: shakmaty_square(solver_move.get_dest()),
            promotion: solver_move.get_promotion().map(shakmaty_role),
        };
        let m = uci.to_move(&pos).map_err(|_| invalid())?;
        if render == Render::Text {
            helpmate.uci.push(m.to_uci(mode).to_string());
            helpmate
                .san
                .push(SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string());
        } else {
            pos.play_unchecked(m);
        }
        helpmate.moves.push(m);
    }
    if pos.is_checkmate() && pos.turn() == side.other() {
        Ok(helpmate)
    } else {
        Err(invalid())
    }
}

fn fen_of(pos: &Chess) -> String {
    Fen::from_position(pos, EnPassantMode::Legal).to_string()
}

fn solver_color(color: Color) -> chess::Color {
    match color {
        Color::White => chess::Color::White,
        Color::Black => chess::Color::Black,
    }
}

fn solver_role(role: Role) -> chess::Piece {
    match role {
        Role::Pawn => chess::Piece::Pawn,
        Role::Knight => chess::Piece::Knight,
        Role::Bishop => chess::Piece::Bishop,
        Role::Rook => chess::Piece::Rook,
        Role::Queen => chess::Piece::Queen,
        Role::King => chess::Piece::King,
    }
}

fn shakmaty_role(piece: chess::Piece) -> Role {
    match piece {
        chess::Piece::Pawn => Role::Pawn,
        chess::Piece::Knight => Role::Knight,
        chess::Piece::Bishop => Role::Bishop,
        chess::Piece::Rook => Role::Rook,
        chess::Piece::Queen => Role::Queen,
        chess::Piece::King => Role::King,
    }
}

fn shakmaty_square(square: chess::Square) -> shakmaty::Square {
    // Both crates number squares a1 = 0, b1 = 1, ..., h8 = 63.
    shakmaty::Square::from_coords(
        File::new(square.get_file().to_index() as u32),
        Rank::new(square.get_rank().to_index() as u32),
    )
}

#[cfg(test)]
mod tests {
    use shakmaty::{CastlingMode, fen::Fen};

    use super::*;
    use crate::test_support::position;

    fn chess960(fen: &str) -> Chess {
        fen.parse::<Fen>()
            .expect("valid FEN")
            .into_position(CastlingMode::Chess960)
            .expect("legal position")
    }

    #[test]
    fn bridge_keeps_en_passant_only_when_capturable() {
        // After 1. e4 with no black pawn beside e4 the square is irrelevant.
        let pos = position("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1");
        let board = SolverBoard::from_position(&pos).unwrap();
        assert_eq!(board.board.en_passant(), None);
        // Black pawn on d4 can take e3 en passant.
        let pos = position("rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3");
        let board = SolverBoard::from_position(&pos).unwrap();
        assert_eq!(board.board.en_passant(), Some(chess::Square::E4));
        assert!(board.exact);
    }

    /// Issue 38: a verdict's line is checked move by move and not written
    /// out; the same line, the same verdict as the analysis that writes it.
    #[test]
    fn a_checked_line_is_the_written_line_without_its_notation() {
        for fen in [
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
            "8/8/8/4k3/8/8/3PK3/8 w - - 0 1",
            "Bb1k1b2/bKp1p1p1/1pP1P1P1/pP4P1/8/P7/8/8 b - - 0 1",
        ] {
            let pos = position(fen);
            for side in Color::ALL {
                let written = can_checkmate(&pos, side, Budget::DETERMINISTIC).unwrap();
                let checked = analyse(&pos, side, Budget::DETERMINISTIC, Render::Checked).unwrap();
                assert_eq!(checked.verdict, written.verdict, "{fen} {side:?}");
                let moves = |a: &Analysis| a.helpmate.as_ref().map(|h| h.moves.clone());
                assert_eq!(moves(&checked), moves(&written), "{fen} {side:?}");
                if let Some(h) = &checked.helpmate {
                    assert!(h.san.is_empty() && h.uci.is_empty());
                }
                if let Some(h) = &written.helpmate {
                    assert_eq!(h.san.len(), h.moves.len());
                }
            }
        }
    }

    #[test]
    fn bridge_keeps_standard_castling_and_flags_chess960() {
        let pos = Chess::default();
        let board = SolverBoard::from_position(&pos).unwrap();
        assert_eq!(
            board.board.castle_rights(chess::Color::White),
            chess::CastleRights::Both
        );
        assert_eq!(
            board.board.castle_rights(chess::Color::Black),
            chess::CastleRights::Both
        );
        assert!(board.exact);

        // Chess960 start with the king on f1/f8: not representable.
        let pos = chess960("rbbqnkrn/pppppppp/8/8/8/8/PPPPPPPP/RBBQNKRN w GAga - 0 1");
        let board = SolverBoard::from_position(&pos).unwrap();
        assert_eq!(
            board.board.castle_rights(chess::Color::White),
            chess::CastleRights::NoRights
        );
        assert!(!board.exact);
    }

    #[test]
    fn too_many_pieces_is_an_error_not_a_panic() {
        // 18 white pieces: only reachable with shakmaty's material check off.
        let pos: Chess = "7k/8/8/8/NNNNN3/NNNN4/PPPPPPPP/K7 w - - 0 1"
            .parse::<Fen>()
            .unwrap()
            .into_position(CastlingMode::Standard)
            .or_else(shakmaty::PositionError::ignore_too_much_material)
            .unwrap();
        assert!(matches!(
            can_checkmate(&pos, Color::White, Budget::DETERMINISTIC),
            Err(WinnabilityError::Unsupported { .. })
        ));
        assert_eq!(can_checkmate_fast(&pos, Color::White), Verdict::Unknown);
        // A bare king needs no solver.
        assert_eq!(can_checkmate_fast(&pos, Color::Black), Verdict::No);
    }

    #[test]
    fn squares_map_one_to_one() {
        for (index, square) in chess::ALL_SQUARES.iter().enumerate() {
            assert_eq!(usize::from(shakmaty_square(*square)), index);
        }
    }

    #[test]
    fn mate_already_on_board_has_empty_line() {
        // Fool's mate: White is mated, Black has "mated".
        let pos = position("rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3");
        let black = can_checkmate(&pos, Color::Black, Budget::DETERMINISTIC).unwrap();
        assert_eq!(black.verdict, Verdict::Yes);
        assert!(black.helpmate.unwrap().moves.is_empty());
        let white = can_checkmate(&pos, Color::White, Budget::DETERMINISTIC).unwrap();
        assert_eq!(white.verdict, Verdict::No);
    }

    #[test]
    fn time_limit_reports_unknown_or_a_real_answer() {
        let pos = Chess::default();
        let budget = Budget::with_time_limit(Duration::from_secs(30));
        let white = can_checkmate(&pos, Color::White, budget).unwrap();
        assert_eq!(white.verdict, Verdict::Yes);
        let zero = Budget::with_time_limit(Duration::ZERO);
        let white = can_checkmate(&pos, Color::White, zero).unwrap();
        assert!(matches!(white.verdict, Verdict::Yes | Verdict::Unknown));
    }
}
