//! Alerts: what the engine tells the arbiter.

use shakmaty::Color;

/// The kind of an alert. The snake_case names are a public contract
/// (`replay --json`, the journal, the dashboard): extend, never rename.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AlertKind {
    /// The board reached a state explained only by two or three moves in a
    /// row: they were recorded, but the board never showed the positions in
    /// between.
    MovesInferred,
    /// The board went back to an earlier position; the moves after it were
    /// removed from the record.
    Takeback,
    /// A piece released on a square as a legal move was then moved on to
    /// another square before the move was completed (Art. 4.7); the final
    /// move was recorded.
    MoveChanged,
    /// The position has occurred for at least the third time: the player
    /// having the move may claim a draw (Art. 9.2).
    ThreefoldClaimable,
    /// The last 50 moves by each player had no pawn move and no capture: the
    /// player having the move may claim a draw (Art. 9.3).
    FiftyMovesClaimable,
    /// A draw claim was checked and found incorrect (Art. 9.5.3).
    ClaimRejected,
    /// A draw agreed before both players had moved is not valid (Art. 5.2.3).
    DrawRejected,
    /// A completed illegal move (Art. 7.5.1): the clock was pressed with the
    /// board in a state no legal move explains.
    IllegalMove,
    /// A pawn moved to the last rank and the clock pressed with the pawn
    /// still there (Art. 7.5.2): recorded as a queen promotion.
    PawnNotPromoted,
    /// The clock was pressed without a move (Art. 7.5.3).
    ClockWithoutMove,
    /// The board shows again the position before an irregularity.
    PositionRestored,
    /// The board differs from the game position and no move explains it
    /// (Art. 7.4, 7.6): pieces knocked over or moved out of turn.
    DisplacedPieces,
    /// The player having the move lifted one piece and moved another, lifted
    /// a capturable opponent piece and did not capture it, or lifted the
    /// rook first and then castled (Art. 4.3, 4.4). Advisory.
    TouchMove,
    /// Play continued from the position an illegal move left on the board
    /// (A.5.2 in rapid and blitz: the illegal move stands once the opponent
    /// has moved; in standard play the arbiter must still restore, 7.5.1).
    IllegalMoveStands,
    /// The position on the board cannot arise in a game: both kings in
    /// check, or a pawn on its first or last rank (A.5.4).
    IllegalPosition,
    /// Both kings were put on the centre squares: the way players at
    /// DGT-equipped events signal a result; never read as moves.
    ResultSignal,
    /// The board is set up turned round (White's pieces on the side it
    /// numbers a8–h8); it is read turned back.
    BoardRotated,
    /// Several sequences of legal moves explain what the board shows (after
    /// skipped scans or a cable outage): the record stops at the last
    /// certain move and the message lists the candidates in SAN, for the
    /// arbiter to pick one.
    OutOfSync,
    /// The full analysis could not decide, within its budget, whether a
    /// position the quick test left open is dead (Art. 5.2.2): the game goes
    /// on; information for the arbiter, nothing is guessed.
    DeadPositionUndecided,
    /// The full analysis proved dead a position moves had already been made
    /// from: the game ended there (Art. 5.2.2) and those moves are void.
    MovesVoid,
    /// The record has not moved while the board stood differently from the
    /// record's position for longer than the displaced-pieces time, and the
    /// engine had told the arbiter nothing of it: eboard no longer follows
    /// the board (sync `lost`), whatever the reason.
    RecordStopped,
    /// A clock report shows a player's time at 0:00: his flag counts as
    /// fallen once the arbiter observes it (Art. 6.8). Information, once
    /// per game and player; the game goes on until the fall is recorded.
    FlagShown,
}

impl AlertKind {
    /// Every kind, in the order they are declared (the reference checks
    /// that each is documented).
    pub const ALL: [AlertKind; 22] = [
        AlertKind::MovesInferred,
        AlertKind::Takeback,
        AlertKind::MoveChanged,
        AlertKind::ThreefoldClaimable,
        AlertKind::FiftyMovesClaimable,
        AlertKind::ClaimRejected,
        AlertKind::DrawRejected,
        AlertKind::IllegalMove,
        AlertKind::PawnNotPromoted,
        AlertKind::ClockWithoutMove,
        AlertKind::PositionRestored,
        AlertKind::DisplacedPieces,
        AlertKind::TouchMove,
        AlertKind::IllegalMoveStands,
        AlertKind::IllegalPosition,
        AlertKind::ResultSignal,
        AlertKind::BoardRotated,
        AlertKind::OutOfSync,
        AlertKind::DeadPositionUndecided,
        AlertKind::MovesVoid,
        AlertKind::RecordStopped,
        AlertKind::FlagShown,
    ];

    /// Whether the alert reports an irregularity (something an arbiter must
    /// look into), rather than information such as a claimable draw.
    pub fn is_irregularity(self) -> bool {
        !matches!(
            self,
            AlertKind::ThreefoldClaimable
                | AlertKind::FiftyMovesClaimable
                | AlertKind::PositionRestored
                | AlertKind::DeadPositionUndecided
                | AlertKind::FlagShown
        )
    }

    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            AlertKind::MovesInferred => "moves_inferred",
            AlertKind::Takeback => "takeback",
            AlertKind::MoveChanged => "move_changed",
            AlertKind::ThreefoldClaimable => "threefold_claimable",
            AlertKind::FiftyMovesClaimable => "fifty_moves_claimable",
            AlertKind::ClaimRejected => "claim_rejected",
            AlertKind::DrawRejected => "draw_rejected",
            AlertKind::IllegalMove => "illegal_move",
            AlertKind::PawnNotPromoted => "pawn_not_promoted",
            AlertKind::ClockWithoutMove => "clock_without_move",
            AlertKind::PositionRestored => "position_restored",
            AlertKind::DisplacedPieces => "displaced_pieces",
            AlertKind::TouchMove => "touch_move",
            AlertKind::IllegalMoveStands => "illegal_move_stands",
            AlertKind::IllegalPosition => "illegal_position",
            AlertKind::ResultSignal => "result_signal",
            AlertKind::BoardRotated => "board_rotated",
            AlertKind::OutOfSync => "out_of_sync",
            AlertKind::DeadPositionUndecided => "dead_position_undecided",
            AlertKind::MovesVoid => "moves_void",
            AlertKind::RecordStopped => "record_stopped",
            AlertKind::FlagShown => "flag_shown",
        }
    }
}

/// An alert for the arbiter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alert {
    /// What happened.
    pub kind: AlertKind,
    /// Half-moves in the record when the alert was raised.
    pub ply: usize,
    /// The player concerned, if one is.
    pub side: Option<Color>,
    /// What happened, in words, citing the Article.
    pub message: String,
    /// What the Laws prescribe, where they prescribe a consequence.
    pub ruling: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::AlertKind;

    /// `ALL` holds every kind once: a kind added to the enum must be added
    /// there too, or this match stops compiling.
    #[test]
    fn all_holds_every_kind_once() {
        for (i, kind) in AlertKind::ALL.iter().enumerate() {
            let declared = match kind {
                AlertKind::MovesInferred => 0,
                AlertKind::Takeback => 1,
                AlertKind::MoveChanged => 2,
                AlertKind::ThreefoldClaimable => 3,
                AlertKind::FiftyMovesClaimable => 4,
                AlertKind::ClaimRejected => 5,
                AlertKind::DrawRejected => 6,
                AlertKind::IllegalMove => 7,
                AlertKind::PawnNotPromoted => 8,
                AlertKind::ClockWithoutMove => 9,
                AlertKind::PositionRestored => 10,
                AlertKind::DisplacedPieces => 11,
                AlertKind::TouchMove => 12,
                AlertKind::IllegalMoveStands => 13,
                AlertKind::IllegalPosition => 14,
                AlertKind::ResultSignal => 15,
                AlertKind::BoardRotated => 16,
                AlertKind::OutOfSync => 17,
                AlertKind::DeadPositionUndecided => 18,
                AlertKind::MovesVoid => 19,
                AlertKind::RecordStopped => 20,
                AlertKind::FlagShown => 21,
            };
            assert_eq!(declared, i, "{}", kind.as_str());
        }
    }
}
