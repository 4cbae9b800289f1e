//! Applying a reading: moves recorded, changed or taken back, candidates
//! followed, and the arbiter told of displaced pieces.

use shakmaty::{Bitboard, Chess, Move, Position, Square};

use super::{
    BoardKind, Engine, Reading,
    hypotheses::Hypotheses,
    record::ReadFrom,
    scanned::{self, ScanReading},
};
use crate::{alert::AlertKind, event::Millis, game::Termination, resync::SyncState};

impl Engine {
    /// A takeback held for the next scan, once a later state came: it was
    /// no blip if the squares a blip would explain still show what that
    /// scan showed, or if the board is read from the position it went
    /// back to and not from the record (4.Bxc6 taken back, then 4.Ba4: the
    /// b5 bishop leaves again). The moves are then taken back when the
    /// scan showed it, and the board is read again from there (returns
    /// true).
    pub(super) fn takes_back_held(&mut self) -> bool {
        let Some(held) = self.scan.takeback_held.take() else {
            return false;
        };
        if held.made_at == self.settle.since() {
            // Still the same state: it waits on.
            self.scan.takeback_held = Some(held);
            return false;
        }
        let game = self.game();
        let (Some(back), false) = (game.position_at(held.back_to), game.is_over()) else {
            return false;
        };
        if game.ply() != held.ply {
            return false;
        }
        let reads = |pos: &Chess, pressed: usize| {
            self.sensed.shows_position(pos)
                || scanned::read_scan(pos, &self.sensed, pressed, true, scanned::Slides::Caught)
                    != ScanReading::None
        };
        let stands = self.sensed.occupied() & held.suspects == held.shown
            || !reads(game.position(), self.clock.presses_ahead) && reads(back, 0);
        if stands {
            self.take_back(held.back_to, held.made_at, held.basis);
        }
        stands
    }

    /// Whether lines a scan was read among as a move in progress, gone on
    /// by up to three moves, still explain the board (exactly or with a
    /// hand), though no reading was certain: the record lags the board,
    /// and no piece is displaced. Once the board has gone on further than
    /// that, pieces are taken for displaced as before.
    pub(super) fn held_lines_go_on(&self) -> bool {
        let held = self.lines_at_ply(&self.scan.held);
        if held.is_empty() || self.sensed.identifies_all() {
            return false;
        }
        let game = self.game();
        let (exact, hand) = scanned::SnapshotLines {
            pos: game.position(),
            sensed: &self.sensed,
            snapshots: &self.snapshots,
            since: game.basis(game.ply()),
            settling: Bitboard::EMPTY,
        }
        .candidates(held, true);
        !(exact.is_empty() && hand.is_empty())
    }

    /// Records moves read from the board. Only the first of the moves a
    /// scan shows may be certain: the rest are read later from the same
    /// scan, whose changes must then count as after the record.
    pub(super) fn record_read(
        &mut self,
        moves: &[Move],
        made_at: Millis,
        basis: u64,
        scanned: bool,
        from: ReadFrom,
    ) {
        let mut after = self.game().position().clone();
        for &m in moves {
            after.play_unchecked(m);
        }
        let basis = if scanned && !self.sensed.shows_position(&after) {
            let game = self.game();
            if self.observation.scanned() {
                basis.saturating_sub(1)
            } else {
                // Read square by square after a dump: every change since
                // the record's position may belong to the moves still to
                // read.
                game.basis(game.ply()).min(basis.saturating_sub(1))
            }
        } else {
            basis
        };
        // On occupancy, the board is read on from the first scan since the
        // record's position that showed where the moves lead: what later
        // scans showed (a square caught empty, a capture under way) is
        // evidence for the next move, not part of these. Unless the board
        // came back there after a scan that differed only on the last
        // move's squares: a capture's position is also its piece still in
        // the hand, the victim on; the victim then caught off was that
        // capture under way, not the next move's.
        let basis = if scanned
            && self.observation.scanned()
            && self.snapshots.board() == BoardKind::Scanning
            && !self.sensed.identifies_all()
        {
            let game = self.game();
            let last = moves.last().map_or(Bitboard::EMPTY, |&m| {
                let mover = if moves.len() % 2 == 1 {
                    game.position().turn()
                } else {
                    !game.position().turn()
                };
                crate::matcher::move_squares(m, mover)
            });
            self.snapshots
                .made_showing(
                    game.basis(game.ply()),
                    basis,
                    after.board().occupied(),
                    last,
                )
                .map_or(basis, |seq| seq.min(basis))
        } else {
            basis
        };
        self.record_from(moves, made_at, basis, from);
    }

    /// Applies a reading. `scanned`: the state was read as one a scan may
    /// have skipped states of. Returns whether the state is to be read
    /// again from the moves recorded (see [`Engine::narrowed`]).
    pub(super) fn apply(
        &mut self,
        reading: Reading,
        made_at: Millis,
        basis: u64,
        scanned: bool,
    ) -> bool {
        match reading {
            Reading::Wait | Reading::Hand => {}
            Reading::Ambiguous(lines) => self.ambiguous(lines, false),
            Reading::Moves(moves) => {
                if !self.contradicts_candidates(&moves) {
                    self.record_read(&moves, made_at, basis, scanned, ReadFrom::Board);
                }
            }
            Reading::Unconfirmed {
                certain,
                then,
                suspect,
            } => self.unconfirmed_read(certain, then, suspect, made_at, basis, scanned),
            Reading::Narrowed {
                certain,
                lines,
                again,
            } => return self.narrowed(certain, lines, again, made_at, basis, scanned),
            Reading::Changed(m) => self.replace_last(m, made_at, basis),
            Reading::Takeback(ply) => self.take_back(ply, made_at, basis),
            Reading::ResultSignal(outcome) => {
                let message = format!(
                    "both kings were put on the centre squares: the players signal the result {} (the convention at DGT-equipped events: both on light squares 1-0, both on dark squares 0-1, one of each 1/2-1/2); not read as moves",
                    outcome.as_str()
                );
                self.alert(AlertKind::ResultSignal, None, message, None);
                self.end_game(outcome, Termination::ResultSignal, made_at);
            }
            Reading::ClockWithoutMove(turn) => {
                self.clock.pending_press[turn] = false;
                self.clock.presses_ahead = 0;
                let message = format!(
                    "{} pressed the clock without making a move, and {} then moved (Art. 7.5.3: treated as an illegal move)",
                    crate::event::side_name(turn),
                    crate::event::side_name(!turn)
                );
                self.illegal(AlertKind::ClockWithoutMove, turn, message, None, made_at);
            }
            Reading::Restored(m) => self.restored(m, made_at, basis),
            Reading::IllegalStands { illegal, reply } => {
                self.continue_after_illegal(illegal, reply, made_at, basis)
            }
            Reading::NewGame => self.start_game(Chess::default(), made_at),
            Reading::Repromoted(m) => self.repromote(m, made_at, basis),
        }
        false
    }

    /// Applies lines narrowed to the moves they all begin with. Returns
    /// whether the state is to be read again from the moves recorded: the
    /// lines showed more than was recorded from them.
    fn narrowed(
        &mut self,
        certain: Vec<Move>,
        lines: Vec<Vec<Move>>,
        again: bool,
        made_at: Millis,
        basis: u64,
        scanned: bool,
    ) -> bool {
        // Lines a hand was read among, nothing listed: the moves they
        // begin with are read as any, and the scan is read again from
        // them if it showed more than the snapshots trust.
        if self.hypotheses.state != SyncState::Ambiguous {
            if certain.is_empty() || self.contradicts_candidates(&certain) {
                return false;
            }
            self.record_read(&certain, made_at, basis, scanned, ReadFrom::Board);
            return lines.iter().any(|line| line.len() > certain.len());
        }
        let (lagged, costed) = (self.hypotheses.lagged, self.hypotheses.costed);
        if !certain.is_empty() {
            self.record_read(&certain, made_at, basis, scanned, ReadFrom::Listing);
        }
        // One line left, its last move perhaps a piece caught on its way:
        // read from the moves recorded, as any move.
        if again {
            self.hypotheses = Hypotheses::default();
            return true;
        }
        let rest: Vec<_> = lines
            .into_iter()
            .filter(|line| line.len() > certain.len())
            .map(|line| line[certain.len()..].to_vec())
            .collect();
        // The arbiter was told when the candidates were first listed; they
        // are only followed on here.
        self.hypotheses = if rest.is_empty() {
            Hypotheses::default()
        } else {
            self.behind = true;
            Hypotheses {
                state: SyncState::Ambiguous,
                lines: rest,
                lagged,
                costed,
                since: Vec::new(),
            }
        };
        false
    }

    /// The squares where the board differs from the game position: in
    /// occupancy, or in the piece a board that identifies pieces names.
    pub(super) fn differ_from_record(&self) -> shakmaty::Bitboard {
        let board = self.game().position().board();
        Square::ALL
            .into_iter()
            .filter(|&sq| {
                board.occupied().contains(sq) != self.sensed.occupied().contains(sq)
                    || self
                        .sensed
                        .piece_at(sq)
                        .is_some_and(|p| board.piece_at(sq) != Some(p))
            })
            .collect()
    }

    /// A board state no move explains that stands longer than a move in
    /// progress would: pieces displaced or knocked over (Art. 7.4, 7.6).
    pub(super) fn check_displaced(&mut self, t: Millis) {
        if !self.config.arbiter || self.game().is_over() {
            return;
        }
        match self.phase.displaced_deadline(self.config.displaced_ms) {
            // Candidates were listed to the arbiter in `out_of_sync`.
            Some(_) if self.sync_state() == SyncState::Ambiguous => return,
            Some(due) if t >= due => {}
            _ => return,
        }
        if let Some(lines) = self.scan.unlisted.take() {
            self.ambiguous(lines, false);
            return;
        }
        self.phase.told_displaced();
        let differ: Vec<String> = self
            .differ_from_record()
            .into_iter()
            .map(|sq| sq.to_string())
            .collect();
        let message = format!(
            "the board differs from the game position on {} and no move explains it: pieces displaced? Nothing is recorded until the position or a legal move from it is on the board again (Art. 7.4, 7.6)",
            differ.join(", ")
        );
        self.alert(AlertKind::DisplacedPieces, None, message, None);
    }
}
