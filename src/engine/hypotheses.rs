//! Resynchronising with a board that skipped states: a full scan or a dump
//! after a reconnection that no one, two or three moves explain is given to
//! the [`resync`](crate::resync) search. A unique answer is recorded (with
//! `moves_inferred`); several are kept as hypotheses, nothing is recorded,
//! and the arbiter is told with `out_of_sync` (the candidates in SAN). Later states are searched again from the last
//! certain move, so the hypotheses that no longer fit fall away.

use shakmaty::{Bitboard, Chess, Move, Position, san::SanPlus};

use super::{
    BoardKind, Engine, Reading,
    occupancy_slide::cheapest_lines,
    scanned::{may_reach, went_on},
    snapshots::Snapshots,
};
use crate::{
    alert::AlertKind,
    matcher::{move_squares, occupancy_after},
    resync::{Limits, SyncState},
};

/// The longest sequence recorded from one snapshot of a board that only
/// scans (but see [`IDENTITY_SNAPSHOT_PLIES`]). Longer ones are listed for
/// the arbiter instead: a snapshot may catch a hand in motion, and the
/// shortest sequence that explains it is then often a detour nobody
/// played.
pub(super) const SNAPSHOT_PLIES: usize = 2;

/// The same on a board that identifies pieces, when the line passes
/// through every snapshot before it and no square the last scan changed
/// is shown back by the next one. At four a detour was read on the
/// corpus (24...Kg7 25.Rxh7+ Kg8 26.g7 for 24...h5 25.Rxh5+ Kg7 26.Rh7+
/// Kg8 27.g7).
pub(super) const IDENTITY_SNAPSHOT_PLIES: usize = 3;

/// The hypotheses the engine keeps while the board is out of step.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Hypotheses {
    pub(super) state: SyncState,
    /// Candidate continuations from the current game position.
    pub(super) lines: Vec<Vec<Move>>,
    /// Whether the record could lag the board before the candidates were
    /// first listed: a listing later found to be a blip read as moves
    /// leaves the record as in step as it was.
    pub(super) lagged: bool,
    /// The candidates are a slide's stories, listed by their costs (a
    /// board that only senses occupancy and only scans): they are
    /// followed by the same costs (`occupancy_slide::cheapest_lines`).
    pub(super) costed: bool,
    /// For each line, the board event after which its end position stood
    /// (see `follow.rs`): the squares reported since are the next moves'.
    pub(super) since: Vec<(Vec<Move>, u64)>,
}

impl Hypotheses {
    pub(super) fn clear(&mut self) {
        *self = Hypotheses::default();
    }

    /// The board event after which `line`'s end position stood, if known.
    pub(super) fn since_of(&self, line: &[Move]) -> Option<u64> {
        self.since
            .iter()
            .find(|(l, _)| l.as_slice() == line)
            .map(|&(_, since)| since)
    }

    /// `moves` were recorded: the candidates that began with them go on
    /// from the new position; if none is left, the record is in step.
    pub(super) fn went_on(&mut self, moves: &[Move]) {
        if self.state != SyncState::Ambiguous {
            return;
        }
        self.lines = std::mem::take(&mut self.lines)
            .into_iter()
            .filter(|line| line.len() > moves.len() && line.starts_with(moves))
            .map(|line| line[moves.len()..].to_vec())
            .collect();
        self.since = std::mem::take(&mut self.since)
            .into_iter()
            .filter(|(line, _)| line.len() > moves.len() && line.starts_with(moves))
            .map(|(line, since)| (line[moves.len()..].to_vec(), since))
            .collect();
        if self.lines.is_empty() {
            self.clear();
        }
    }
}

impl Engine {
    /// Whether the record and the board are in step.
    /// A record the guard found stopped is `lost` whatever the reading
    /// rules say (see `guard.rs`).
    pub fn sync_state(&self) -> SyncState {
        self.guarded(self.hypotheses.state)
    }

    /// The candidate continuations of the record while the board is
    /// ambiguous (each a sequence of moves from the current game position);
    /// empty otherwise.
    pub fn candidates(&self) -> &[Vec<Move>] {
        &self.hypotheses.lines
    }

    /// The candidates in SAN, each line as one string.
    pub fn candidates_san(&self) -> Vec<String> {
        lines_san(self.game().position(), &self.hypotheses.lines)
    }

    /// On a board that only senses occupancy, lines too long to record
    /// that only the last scan showed (`reading` lists them) wait for the
    /// next scan when a square only that scan changed may be a blip: a
    /// blip beside a move reads as moves nobody made (g4 caught empty
    /// beside 26.Bxa6 reads as 26.Bxa6 gxf4 27.g5). Returns what to apply
    /// now; see [`Engine::lists_put_off`] for the next scan.
    pub(super) fn put_off_listing(&mut self, reading: Reading) -> Reading {
        let record = self.game().position().board().occupied();
        let suspects = self.snapshots.blip_suspects(record, self.sensed.occupied());
        match reading {
            Reading::Ambiguous(lines)
                if !self.sensed.identifies_all()
                    && self.hypotheses.state != SyncState::Ambiguous
                    && suspects.any() =>
            {
                self.hypotheses.state = SyncState::Searching;
                self.scan.unlisted = Some(lines);
                let seq = self.snapshots.last().map_or(0, |(seq, _)| seq);
                self.scan.put_off = Some((self.game().ply(), suspects, seq));
                Reading::Wait
            }
            reading => reading,
        }
    }

    /// Whether lines put off at the last scan are listed now, `reading`
    /// being this scan's. Not if it reads other moves; nor if a square
    /// only the last scan changed (`suspects`) is back as the record has
    /// it while the board is read as a hand at work from the record, or
    /// no line can have gone on to what it shows: that scan caught a
    /// blip. Moves that go on from a line, or nothing read, list them:
    /// the board is then read against them, as if listed at once. Lines
    /// that all go on from them are listed instead.
    pub(super) fn lists_put_off(
        &self,
        lines: &[Vec<Move>],
        suspects: Bitboard,
        reading: &Reading,
    ) -> bool {
        if self.game().is_over() {
            return false;
        }
        if let Reading::Moves(moves) = reading {
            return lines.iter().any(|line| moves.starts_with(line));
        }
        // The lines gone on are read now: listed once, as they stand. A
        // line whose last move's piece the put-off scan caught on its way
        // has gone on when that piece went further along its path.
        if let Reading::Ambiguous(now) = reading
            && now
                .iter()
                .all(|later| lines.iter().any(|line| goes_on(line, later)))
        {
            return false;
        }
        let pos = self.game().position();
        let back = !(pos.board().occupied() ^ self.sensed.occupied()) & suspects;
        back.is_empty()
            || !matches!(reading, Reading::Hand)
                && lines
                    .iter()
                    .any(|line| may_reach(pos, line, &self.sensed, IDENTITY_SNAPSHOT_PLIES))
    }

    /// Whether `m` begins every listed candidate (or none are listed).
    pub(super) fn agrees_with_candidates(&self, m: Move) -> bool {
        self.hypotheses.state != SyncState::Ambiguous
            || self
                .hypotheses
                .lines
                .iter()
                .all(|line| line.first() == Some(&m))
    }

    /// While candidates are listed, moves read from a later state that
    /// do not begin like all of them are one more candidate, not a
    /// certainty: the
    /// later state may be one of the listed lines gone on (a snapshot that
    /// skipped a king's or a rook's detour reads shorter than it was). The
    /// arbiter is told; returns whether `moves` were held back. So are
    /// several moves read while the record may lag (`behind`).
    pub(super) fn contradicts_candidates(&mut self, moves: &[Move]) -> bool {
        let listed =
            self.hypotheses.state == SyncState::Ambiguous && !self.hypotheses.lines.is_empty();
        if !(listed || self.behind && moves.len() > 1) {
            return false;
        }
        if listed {
            self.keep_cheapest_candidates(moves);
        }
        let agrees = |line: &Vec<Move>| line.iter().zip(moves).all(|(a, b)| a == b);
        if listed && self.hypotheses.lines.iter().all(agrees) {
            return false;
        }
        // Already a candidate: held back, and the arbiter already told.
        if listed && self.hypotheses.lines.iter().any(|line| line == moves) {
            return true;
        }
        // The board went on by some moves from the candidates `moves` agree
        // with. On a board that identifies pieces, a candidate that cannot
        // have gone on by as many to what the board shows now is no longer
        // a story: the others decide. (On occupancy the listed lines are
        // not all the stories there are: none of them may be the one
        // played.)
        let pos = self.game().position();
        let since = self
            .hypotheses
            .lines
            .iter()
            .filter(|line| agrees(line))
            .map(|line| moves.len().saturating_sub(line.len()))
            .max();
        // Nor is a listing none of whose candidates can have gone on to it
        // (a blip read as moves): the moves are read as if none was listed.
        if listed
            && since.is_none()
            && self.sensed.identifies_all()
            && self
                .hypotheses
                .lines
                .iter()
                .all(|line| !may_reach(pos, line, &self.sensed, IDENTITY_SNAPSHOT_PLIES))
        {
            self.behind = self.hypotheses.lagged;
            self.hypotheses.clear();
            return self.contradicts_candidates(moves);
        }
        if listed
            && self.sensed.identifies_all()
            && let Some(since) = since
            && self
                .hypotheses
                .lines
                .iter()
                .all(|line| agrees(line) || !self.may_go_on_through_scans(line, since))
        {
            return false;
        }
        let mut lines = if listed {
            self.hypotheses.lines.clone()
        } else {
            Vec::new()
        };
        lines.push(moves.to_vec());
        self.ambiguous(lines, false);
        true
    }

    /// Whether the listed `line` can have gone on, by at most `plies`
    /// moves, to what the board shows, its moves passing piece for piece
    /// through every scan since the record's position (on a board that
    /// names the pieces, each scan is an instant of the game: a line whose
    /// continuation the scans in between contradict, Black's pawn shown
    /// on b6 while White was to move, is no longer a story). A board
    /// showing a hand at work, or scans none of the continuations pass
    /// once the pieces one scan alone caught gone are put back, keeps the
    /// line (only what the scans rule out is dropped).
    fn may_go_on_through_scans(&self, line: &[Move], plies: usize) -> bool {
        let pos = self.game().position();
        if !may_reach(pos, line, &self.sensed, plies) {
            return false;
        }
        if !self.observation.scanned() || self.snapshots.board() == BoardKind::Reporting {
            return true;
        }
        let mut after = pos.clone();
        for &m in line {
            after.play_unchecked(m);
        }
        let (ways, _) = super::scanned::exact_explanations(&after, &self.sensed, plies);
        if ways.is_empty() && !self.sensed.shows(after.board()) {
            return true;
        }
        let since = self.game().basis(self.game().ply());
        let blips = self.snapshots.without_pieces_caught_gone(since);
        let passes = |rest: &[Move]| {
            let whole: Vec<Move> = line.iter().chain(rest).copied().collect();
            self.snapshots.allow_pieces_sliding(pos, &whole, since)
                || blips.allow_pieces_sliding(pos, &whole, since)
        };
        (self.sensed.shows(after.board()) && passes(&[])) || ways.iter().any(|rest| passes(rest))
    }

    /// A slide's stories, listed by their costs, weighed with `moves`
    /// read since by the same costs (`occupancy_slide::cheapest_lines`):
    /// the candidates dearer than the cheapest by more than the margin are
    /// no longer stories (the bishop caught on f3 on its way to take on
    /// d1, listed as ...Bf3 and ...Bxd1, then the recapture and the next
    /// move shown scan by scan: ...Bf3 would need moves no scan showed).
    fn keep_cheapest_candidates(&mut self, moves: &[Move]) {
        if !self.hypotheses.costed || self.sensed.identifies_all() {
            return;
        }
        let pos = self.game().position();
        let since = self.game().basis(self.game().ply());
        let mut all = self.hypotheses.lines.clone();
        all.push(moves.to_vec());
        let kept = cheapest_lines(pos, all, &self.snapshots, since);
        let cheap = |line: &Vec<Move>| kept.contains(line);
        self.hypotheses.lines.retain(cheap);
        self.hypotheses.since.retain(|(line, _)| cheap(line));
    }

    /// Whether `line` goes on, by no more moves than one snapshot is
    /// trusted with, from a line an earlier scan from the record's position
    /// showed exactly (read then as a hand at work instead): that scan is
    /// a position of the line, not a detour read into it.
    pub(super) fn goes_on_from_passed(&self, line: &[Move]) -> bool {
        self.passed_lines().iter().any(|shown| {
            line.starts_with(shown) && line.len() - shown.len() <= IDENTITY_SNAPSHOT_PLIES
        })
    }

    /// Whether `line` from `pos` passes, piece for piece, through every
    /// scan since the record's position, one of them before the last
    /// showed it exactly after some of its moves, and no more than one
    /// snapshot is trusted with follow: a scan after a long gap (a
    /// reconnection looks no different on a board that only scans) that
    /// the next scans show gone on.
    pub(super) fn goes_on_from_shown(&self, pos: &Chess, line: &[Move]) -> bool {
        let since = self.game().basis(self.game().ply());
        self.snapshots
            .shown_exactly(pos, line, since)
            .is_some_and(|k| line.len() - k <= IDENTITY_SNAPSHOT_PLIES)
            && self.snapshots.allow_pieces(pos, line, since)
    }

    /// Whether `line` from `pos` passes, piece for piece, through every
    /// scan since the record's position, and the scans pin its positions
    /// (each shows one exactly, or with only the pieces of the next move
    /// off their squares) so that no stretch of more than
    /// [`IDENTITY_SNAPSHOT_PLIES`] moves rests on one scan alone, the last
    /// one included; or does so once the pieces one scan alone showed gone
    /// are put back (a blip: the e7 bishop caught gone while 20.Bxd2 Nxd2
    /// was scanned).
    pub(super) fn pinned_by_snapshots(&self, pos: &Chess, line: &[Move]) -> bool {
        let since = self.game().basis(self.game().ply());
        let pinned = |snapshots: &Snapshots| {
            snapshots.trusted_plies(pos, line, since, Bitboard::EMPTY, IDENTITY_SNAPSHOT_PLIES)
                == line.len()
                && snapshots.allow_pieces(pos, line, since)
        };
        pinned(&self.snapshots) || pinned(&self.snapshots.without_pieces_caught_gone(since))
    }

    /// Lines read from a snapshot of a board that only senses occupancy,
    /// once squares one scan alone showed changed were read as a blip
    /// (see `read_occupancy_snapshot`): if the scans pass through them only
    /// without those squares, the squares are forgotten for good, so that
    /// the lines, listed or put off, are followed through the scans to
    /// come. 8...Qxc3+ 9.Bd2 Qa3 read with f8 caught empty as a blip, put
    /// off, then listed: with f8 kept, no line went through that scan, and
    /// 10.Bd3 and the rest of the game were never read.
    pub(super) fn forget_blips_read_past(&mut self, lines: &[Vec<Move>]) {
        if !self.observation.scanned()
            || self.snapshots.board() == BoardKind::Reporting
            || self.sensed.identifies_all()
        {
            return;
        }
        let game = self.game();
        let pos = game.position();
        let since = game.basis(game.ply());
        let through = |snapshots: &Snapshots| {
            lines
                .iter()
                .all(|line| snapshots.allow(pos, line, since, Bitboard::EMPTY))
        };
        if through(&self.snapshots) {
            return;
        }
        if let Some(odd) =
            self.snapshots
                .without_odd_squares(since, pos.board().occupied(), Bitboard::FULL)
            && through(&odd.repaired)
        {
            self.snapshots = odd.repaired;
        }
    }

    /// The listed lines went on in more ways than the tracker's budget
    /// follows (`wanted` lines): rather than grow without end (each scan
    /// multiplying the lines by the moves nobody saw), the board is lost
    /// and the arbiter told; the record stops at the last certain move, and
    /// later states are read from it afresh, or the arbiter corrects it.
    fn cannot_follow(&mut self, wanted: usize) {
        let listed = self.hypotheses.lines.len();
        self.hypotheses.clear();
        self.hypotheses.state = SyncState::Lost;
        self.scan.passed = None;
        self.behind = true;
        let game = self.game();
        let at_move = match game.moves().last() {
            Some(m) => format!("after {} (half-move {})", m.san, game.ply()),
            None => "before the first move".to_owned(),
        };
        let message = format!(
            "the board went on from the {listed} sequences of moves listed in {wanted} ways, more than eboard follows at once ({}): eboard has lost this board until the record catches up or is corrected; the record stops {at_move} with {} to move. Check the board against the scoresheets and correct the record",
            Limits::default().max_candidates,
            crate::event::side_name(game.position().turn()),
        );
        self.alert(AlertKind::RecordStopped, None, message, None);
    }

    pub(super) fn ambiguous(&mut self, lines: Vec<Vec<Move>>, more: bool) {
        if self.hypotheses.state == SyncState::Ambiguous && self.hypotheses.lines == lines {
            return;
        }
        if !follows_within_budget(&self.hypotheses, &lines) {
            self.cannot_follow(lines.len());
            return;
        }
        let lagged = if self.hypotheses.state == SyncState::Ambiguous {
            self.hypotheses.lagged
        } else {
            self.behind
        };
        self.behind = true;
        // Lines listed before keep the event their end stood from; new
        // ones stand from this state's.
        let now = self.settle.basis();
        let since = lines
            .iter()
            .map(|line| (line.clone(), self.hypotheses.since_of(line).unwrap_or(now)))
            .collect();
        self.hypotheses = Hypotheses {
            state: SyncState::Ambiguous,
            lines,
            lagged,
            costed: false,
            since,
        };
        let sans = self.candidates_san();
        let numbered: Vec<String> = sans
            .iter()
            .enumerate()
            .map(|(i, s)| format!("{}) {s}", i + 1))
            .collect();
        let (lead, decide) = match (sans.len(), more) {
            (1, false) => ("1 sequence of legal moves leads".to_owned(), "confirms it"),
            (n, _) => (
                format!("{n} sequences of legal moves lead"),
                "tells them apart",
            ),
        };
        let message = format!(
            "the board skipped states and {lead} to what it shows{}: {}; the record stops at the last certain move until the board or the arbiter {decide}",
            if more { " (at least)" } else { "" },
            numbered.join("; ")
        );
        self.alert(AlertKind::OutOfSync, None, message, None);
    }
}

/// Whether listing `lines` keeps the tracker within its budget
/// (docs/design/reconstruction.md, the tracker and its budget): the
/// lines listed are the hypotheses, a set bounded as the search's answer
/// is ([`Limits::max_candidates`]), so that following them on costs at most
/// that many searches of one observation's reach. Only lines followed on
/// from lines already listed are held to it: the search's own answer is
/// bounded by the search.
fn follows_within_budget(listed: &Hypotheses, lines: &[Vec<Move>]) -> bool {
    let followed = listed.state == SyncState::Ambiguous && !listed.lines.is_empty();
    !followed || lines.len() <= Limits::default().max_candidates
}

/// Whether `line`, played from `pos`, leaves the squares a dump showed
/// occupied (`dump`) after one of its moves, and every move after that one
/// changes only squares reported since the dump (`reported`): those moves
/// were made while the board was connected again.
pub(super) fn through_dump(pos: &Chess, line: &[Move], dump: Bitboard, reported: Bitboard) -> bool {
    let mut occupied = pos.board().occupied();
    let mut turn = pos.turn();
    let mut after = Vec::with_capacity(line.len());
    for &m in line {
        occupied = occupancy_after(occupied, m, turn);
        turn = !turn;
        after.push((occupied, turn));
    }
    (0..line.len()).any(|k| {
        after[k].0 == dump
            && line[k + 1..]
                .iter()
                .zip(&after[k..])
                .all(|(&m, &(_, mover))| move_squares(m, mover).is_subset(reported))
    })
}

/// Each line in SAN from `pos`, moves separated by spaces.
pub fn lines_san(pos: &Chess, lines: &[Vec<Move>]) -> Vec<String> {
    lines
        .iter()
        .map(|line| {
            let mut p = pos.clone();
            // A line that stops being legal (it was computed for another
            // position) is cut there rather than played.
            line.iter()
                .map_while(|&m| {
                    p.is_legal(m)
                        .then(|| SanPlus::from_move_and_play_unchecked(&mut p, m).to_string())
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// Whether `later` goes on from `line`: begins with it, or with its moves
/// but the last, whose piece then went further along the same path.
fn goes_on(line: &[Move], later: &[Move]) -> bool {
    match line.split_last() {
        Some((&last, before)) if !later.starts_with(line) => {
            later.starts_with(before) && later.get(before.len()).is_some_and(|&m| went_on(last, m))
        }
        _ => later.starts_with(line),
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::uci::UciMove;

    use super::*;

    #[test]
    fn one_line_listed_is_told_as_one() {
        let mut e = Engine::default();
        let mut pos = Chess::default();
        let mut line = Vec::new();
        for u in ["e2e4", "e7e5", "g1f3"] {
            let m = u.parse::<UciMove>().unwrap().to_move(&pos).unwrap();
            pos.play_unchecked(m);
            line.push(m);
        }
        e.ambiguous(vec![line], false);
        let message = &e.game().alerts.last().unwrap().message;
        assert!(
            message.contains("1 sequence of legal moves leads to what it shows: 1) e4 e5 Nf3;"),
            "{message}"
        );
        assert!(message.ends_with("until the board or the arbiter confirms it"));
    }

    #[test]
    fn lines_followed_past_the_budget_lose_the_board_rather_than_grow() {
        let mut e = Engine::default();
        let moves: Vec<Move> = Chess::default().legal_moves().into_iter().collect();
        let lines = |k: usize| moves[..k].iter().map(|&m| vec![m]).collect::<Vec<_>>();
        let most = Limits::default().max_candidates;
        // A search's own answer is bounded by the search.
        e.ambiguous(lines(most + 1), false);
        assert_eq!(e.sync_state(), SyncState::Ambiguous);
        e.ambiguous(lines(2), false);
        // Followed on within the budget: listed.
        e.ambiguous(lines(most), false);
        assert_eq!(e.sync_state(), SyncState::Ambiguous);
        assert_eq!(e.candidates().len(), most);
        // One more than the budget follows: lost, the arbiter told.
        e.ambiguous(lines(most + 1), false);
        assert_eq!(e.sync_state(), SyncState::Lost);
        assert!(e.candidates().is_empty());
        let last = e.game().alerts.last().unwrap();
        assert_eq!(last.kind, AlertKind::RecordStopped);
        assert!(last.message.contains("in 17 ways"), "{}", last.message);
    }

    #[test]
    fn candidates_go_on_from_the_moves_recorded() {
        let pos = Chess::default();
        let uci = |pos: &mut Chess, u: &str| {
            let m = u.parse::<UciMove>().unwrap().to_move(pos).unwrap();
            pos.play_unchecked(m);
            m
        };
        let mut p = pos.clone();
        let (e4, e5, nf3) = (
            uci(&mut p, "e2e4"),
            uci(&mut p, "e7e5"),
            uci(&mut p, "g1f3"),
        );
        let mut p = pos.clone();
        let (d4, d5) = (uci(&mut p, "d2d4"), uci(&mut p, "d7d5"));
        let mut h = Hypotheses {
            state: SyncState::Ambiguous,
            lines: vec![vec![e4, e5, nf3], vec![d4, d5], vec![e4]],
            lagged: false,
            costed: false,
            since: Vec::new(),
        };
        h.went_on(&[e4, e5]);
        assert_eq!(h.state, SyncState::Ambiguous);
        assert_eq!(h.lines, vec![vec![nf3]]);
        h.went_on(&[nf3]);
        assert_eq!(h, Hypotheses::default());
    }

    #[test]
    fn a_line_from_another_position_is_cut_not_played() {
        // 1. e4 from the start, then a "line" whose second move belongs to
        // some other position (a queen taking a king on e8).
        let pos = Chess::default();
        let e4 = "e2e4".parse::<UciMove>().unwrap().to_move(&pos).unwrap();
        let stray = Move::Normal {
            role: shakmaty::Role::Queen,
            from: shakmaty::Square::D1,
            capture: Some(shakmaty::Role::King),
            to: shakmaty::Square::E8,
            promotion: None,
        };
        assert_eq!(lines_san(&pos, &[vec![e4, stray]]), vec!["e4".to_owned()]);
    }
}
