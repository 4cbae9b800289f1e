//! What the snapshots of a board that names pieces show: the lines that
//! pass through them, and the pieces one scan alone caught gone (blips).

use super::*;

impl Snapshots {
    /// Whether `line`, played from `pos` (shown by event `since`), passes
    /// through what every identifying snapshot after `since` shows, in
    /// order: each one is a position of the line, or one with the next
    /// move in progress (each square that move changes empty, or holding
    /// what it held before or after the move).
    pub fn allow_pieces(&self, pos: &Chess, line: &[Move], since: u64) -> bool {
        self.allow_pieces_as(pos, line, since, false)
    }

    /// As [`Snapshots::allow_pieces`], a snapshot may also catch a move's
    /// piece on a square of its path (a slide: weighed where a line is
    /// looked for that a slide may explain, not where lines compete).
    pub fn allow_pieces_sliding(&self, pos: &Chess, line: &[Move], since: u64) -> bool {
        self.allow_pieces_as(pos, line, since, true)
    }

    /// As [`Snapshots::allow_pieces_sliding`], for a line the last snapshot
    /// shows with a move in progress after it: the snapshots before the
    /// last must pass.
    pub fn allow_pieces_sliding_then_hand(&self, pos: &Chess, line: &[Move], since: u64) -> bool {
        self.allow_pieces_then_hand_as(pos, line, since, true)
    }

    /// As [`Snapshots::allow_pieces_sliding_then_hand`], with no piece
    /// caught on its path: a story that needs no fault but the hand the
    /// last snapshot shows.
    pub fn allow_pieces_then_hand(&self, pos: &Chess, line: &[Move], since: u64) -> bool {
        self.allow_pieces_then_hand_as(pos, line, since, false)
    }

    fn allow_pieces_then_hand_as(
        &self,
        pos: &Chess,
        line: &[Move],
        since: u64,
        slides: bool,
    ) -> bool {
        let before_last = self.pieces.len().saturating_sub(1);
        PieceStates::new(pos, line, slides).passes(
            self.pieces[..before_last]
                .iter()
                .filter(|(seq, _)| *seq > since)
                .map(|(_, shown)| &**shown),
        )
    }

    /// How many of `line`'s plies, played from `pos` (shown by event
    /// `since`), leave a position no identifying snapshot after `since`
    /// showed, piece for piece or with pieces of the next move only lifted:
    /// the plies the line infers (docs/design/reconstruction.md, the cost
    /// table). A snapshot that caught a piece on its path shows no position.
    /// `hand`: the last snapshot shows the line's last position with a move
    /// in progress after it, which shows that ply.
    pub fn plies_unseen(&self, pos: &Chess, line: &[Move], since: u64, hand: bool) -> usize {
        let states = PieceStates::new(pos, line, false);
        let shown: Vec<&[Option<Piece>; 64]> = self
            .pieces
            .iter()
            .filter(|(seq, _)| *seq > since)
            .map(|(_, shown)| &**shown)
            .collect();
        let counted = line.len() - usize::from(hand && !line.is_empty());
        (1..=counted)
            .filter(|&k| !shown.iter().any(|s| states.shows(k, s)))
            .count()
    }

    fn allow_pieces_as(&self, pos: &Chess, line: &[Move], since: u64, slides: bool) -> bool {
        PieceStates::new(pos, line, slides).passes(
            self.pieces
                .iter()
                .filter(|(seq, _)| *seq > since)
                .map(|(_, shown)| &**shown),
        )
    }

    /// These snapshots with the pieces one identifying snapshot after event
    /// `since` alone showed gone put back: a square that snapshot shows
    /// empty where the snapshots either side of it show the same piece (a
    /// sensor blip one scan caught). The last snapshot keeps what it shows:
    /// no scan after it says yet whether it was a blip.
    pub fn without_pieces_caught_gone(&self, since: u64) -> Snapshots {
        let mut repaired = self.clone();
        for j in 1..self.pieces.len().saturating_sub(1) {
            let (seq, shown) = &self.pieces[j];
            if *seq <= since {
                continue;
            }
            let (before, after) = (&self.pieces[j - 1].1, &self.pieces[j + 1].1);
            for sq in Square::ALL {
                let i = sq.to_usize();
                if shown[i].is_none() && before[i].is_some() && before[i] == after[i] {
                    repaired.pieces[j].1[i] = before[i];
                    if let Some(entry) = repaired.list.iter_mut().find(|(s, _)| s == seq) {
                        entry.1.add(sq);
                    }
                }
            }
        }
        repaired
    }

    /// Those of `lines`, played from `pos` (shown by event `since`), that
    /// pass as in [`Snapshots::allow_pieces`] through every identifying
    /// snapshot after `since` that at least one of them can show: a
    /// snapshot none of them explains (a blip) is no evidence. A line that
    /// passes only with a piece caught on its path (a slide, cost 1) does
    /// not: against lines of as many moves that need no fault it buys
    /// nothing (docs/design/reconstruction.md, the cost table).
    pub fn through_pieces(&self, pos: &Chess, lines: &[Vec<Move>], since: u64) -> Vec<Vec<Move>> {
        self.through_pieces_as(pos, lines, since, false)
    }

    /// [`Snapshots::through_pieces`], with slides weighed or not.
    fn through_pieces_as(
        &self,
        pos: &Chess,
        lines: &[Vec<Move>],
        since: u64,
        slides: bool,
    ) -> Vec<Vec<Move>> {
        let states: Vec<PieceStates> = lines
            .iter()
            .map(|l| PieceStates::new(pos, l, slides))
            .collect();
        let evidence: Vec<&[Option<Piece>; 64]> = self
            .pieces
            .iter()
            .filter(|(seq, _)| *seq > since)
            .map(|(_, shown)| &**shown)
            .filter(|shown| {
                states
                    .iter()
                    .any(|st| (0..st.boards.len()).any(|k| st.fits(k, shown)))
            })
            .collect();
        lines
            .iter()
            .zip(&states)
            .filter(|(_, st)| st.passes(evidence.iter().copied()))
            .map(|(line, _)| line.clone())
            .collect()
    }

    /// The most moves of `line`, played from `pos` (shown by event
    /// `since`), after which an identifying snapshot before the last one
    /// showed the position piece for piece; `None` if none did.
    pub fn shown_exactly(&self, pos: &Chess, line: &[Move], since: u64) -> Option<usize> {
        let earlier: Vec<&[Option<Piece>; 64]> = match self.pieces.split_last() {
            Some((_, earlier)) => earlier
                .iter()
                .filter(|(seq, _)| *seq > since)
                .map(|(_, shown)| &**shown)
                .collect(),
            None => return None,
        };
        let mut after = pos.clone();
        let mut found = None;
        for (k, &m) in line.iter().enumerate() {
            after.play_unchecked(m);
            let board = after.board();
            if earlier.iter().any(|shown| {
                Square::ALL
                    .into_iter()
                    .all(|sq| shown[sq.to_usize()] == board.piece_at(sq))
            }) {
                found = Some(k + 1);
            }
        }
        found
    }

    /// What the identifying snapshot before the last one showed on `sq`;
    /// `None` if there is none.
    pub fn piece_before_last(&self, sq: Square) -> Option<Option<Piece>> {
        match self.pieces.as_slice() {
            [.., (_, before), _] => Some(before[sq.to_usize()]),
            _ => None,
        }
    }
}
