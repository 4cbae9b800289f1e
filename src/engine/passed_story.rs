//! The first move of a reading, caught on its path or put down. A scan of
//! a board that names the pieces is one instant: a piece it shows on an
//! empty square of its path, straight from the record's position, may be
//! sliding on (the slide) or put down there (a move made). The scan is read
//! as a hand at work and its exact lines kept (`passed`); the next scans
//! weigh the stories by the cost table (docs/design/reconstruction.md): 2
//! for each ply whose position no scan showed, 1 for the slide a story
//! needs that does not go through the scan as it showed the board. A
//! cheaper story is listed against the passed line gone on (or, if it
//! leaves a move in progress, makes the scan wait for the next) until the
//! board tells them apart (whose turn it is at the next scan, a scan
//! period the board stood, a press). Where the passed line gone on is
//! cheaper than every other story, it was made.

use shakmaty::{Chess, Move, Position};

use super::{
    cost::{INFERRED_PLY, SLIDE},
    read::{Moment, Reading},
    scanned::{
        MAX_PLIES, ScanReading, Slides, caught_explanations, exact_explanations, exact_now,
        hand_explanations, is_legal_line, read_scan,
    },
    snapshots::Snapshots,
};
use crate::{game::Game, sensed::SensedBoard};

/// The most moves one scan is read with after a passed line.
const AFTER_PASSED: usize = 2;

/// The most moves one scan is read with after a story told, when no line
/// from the record's position explains it: as many as from the record.
const AFTER_UNREAD: usize = MAX_PLIES;

/// Reads again, on a board that names the pieces and only scans, a
/// `reading` of the latest scan against the stories the scans told before
/// (the lines an earlier scan from the record's position was read among as
/// a hand at work, and the candidates listed).
pub(super) fn reweigh(
    reading: Option<Reading>,
    game: &Game,
    sensed: &SensedBoard,
    snapshots: &Snapshots,
    moment: Moment<'_>,
    slides: Slides,
) -> Option<Reading> {
    let pos = game.position();
    let since = game.basis(game.ply());
    let told: Vec<Vec<Move>> = moment
        .passed
        .iter()
        .chain(moment.candidates)
        .cloned()
        .collect();
    let story = Story {
        pos,
        snapshots,
        since,
    };
    // While the stories of a slide are listed, moves no line through the
    // scans since the record's position (a piece caught on its path
    // allowed) begins with are no story of them: the candidates are
    // weighed instead. (Not otherwise: a piece misread by one scan fits no
    // line at all.)
    let reading = match reading {
        Some(Reading::Moves(moves))
            if listed_for_a_slide(&moment) && {
                // A piece one scan alone showed gone was a blip.
                let repaired = snapshots.without_pieces_caught_gone(since);
                !exact_now(pos, sensed).iter().any(|line| {
                    line.starts_with(&moves) && repaired.allow_pieces_sliding(pos, line, since)
                })
            } =>
        {
            Some(Reading::Hand)
        }
        other => other,
    };
    // A scan read as a hand at work or among several lines, or as the
    // board gone back to an earlier position (a repetition read as a
    // takeback while the record waited on a slide): the stories through
    // the earlier scans as they showed the board are weighed against those
    // that need one of them to have caught a slide.
    // A scan that no line of up to three moves from the record's position
    // explains (the record waited on a story while play went on) is read
    // from the stories told, gone on by as many moves as a scan is read
    // with from the record: the scans that told them are still the
    // evidence, and a reading from the record alone reaches no further.
    let unread = reading.is_none() && !told.is_empty();
    if !unread
        && !matches!(
            reading,
            Some(Reading::Hand | Reading::Ambiguous(_) | Reading::Takeback(_))
        )
    {
        return reading;
    }
    let reach = if unread { AFTER_UNREAD } else { AFTER_PASSED };
    let weighed = weigh_passed(
        &story,
        sensed,
        (&told, reach),
        moment.presses_ahead,
        !moment.closing,
        slides,
    );
    match (reading, weighed) {
        (_, Some(ScanReading::Moves(moves))) => Some(Reading::Moves(moves)),
        (Some(Reading::Takeback(k)), _) => Some(Reading::Takeback(k)),
        (_, Some(ScanReading::Ambiguous(lines))) => Some(Reading::Ambiguous(lines)),
        (_, Some(ScanReading::Hand)) => Some(Reading::Hand),
        (reading, _) => reading,
    }
}

/// Whether the candidates listed are a slide's stories: one of them goes
/// on from a line an earlier scan showed and was read as a hand at work.
fn listed_for_a_slide(moment: &Moment<'_>) -> bool {
    moment.candidates.iter().any(|line| {
        moment
            .passed
            .iter()
            .any(|shown| !shown.is_empty() && line.starts_with(shown))
    })
}

/// The record's position and the snapshots since it: what a story costs.
struct Story<'a> {
    pos: &'a Chess,
    snapshots: &'a Snapshots,
    since: u64,
}

impl Story<'_> {
    /// Whether `line` passes through the scans since the record's position,
    /// a piece caught on its path allowed; `hand`: the last scan shows a
    /// move in progress after it.
    fn allowed(&self, line: &[Move], hand: bool) -> bool {
        if hand {
            self.snapshots
                .allow_pieces_sliding_then_hand(self.pos, line, self.since)
        } else {
            self.snapshots
                .allow_pieces_sliding(self.pos, line, self.since)
        }
    }

    /// The cost table's figure for `line` (docs/design/reconstruction.md):
    /// each ply whose position no scan showed, and the slide a line needs
    /// when it does not go through the `passed` scan as that showed the board.
    fn cost(&self, line: &[Move], hand: bool, passed: &[Vec<Move>]) -> usize {
        let through = passed.iter().any(|p| !p.is_empty() && line.starts_with(p));
        INFERRED_PLY
            * self
                .snapshots
                .plies_unseen(self.pos, line, self.since, hand)
            + if through { 0 } else { SLIDE }
    }
}

impl Story<'_> {
    /// Whether a line that does not go through the `passed` scans, after
    /// which the latest scan caught a piece on a square of its path (a
    /// board that names the pieces and only scans), costs no more than the
    /// `cheapest` passed line gone on (of `fewest` plies). That slide costs one more (1): two
    /// slides, the passed scan's and this one, against the ply the passed
    /// line infers (2) are a story as cheap, not a rarer one (13.Qc4+ with
    /// the queen caught on d3, then Black's bishop caught on d7 on its way
    /// to e6 to block, against 13.Qd3 Bd7 14.Qc4+). Waiting costs one
    /// scan: the next shows where the piece was put down.
    fn caught_as_cheap(
        &self,
        sensed: &SensedBoard,
        passed: &[Vec<Move>],
        (fewest, cheapest): (usize, usize),
        pressed: usize,
    ) -> bool {
        caught_explanations(self.pos, sensed, fewest.saturating_sub(1))
            .iter()
            .any(|line| {
                // A player who pressed has made his move (Art. 6.2.1).
                line.len() >= pressed
                    && !passed.iter().any(|p| !p.is_empty() && line.starts_with(p))
                    && self.cost(line, true, passed) + SLIDE <= cheapest
                    && self.allowed(line, true)
            })
    }
}

/// Weighs a scan that was read as a hand at work, or among several lines,
/// against the `passed` lines (those that exactly explained an earlier scan
/// from the record's position, read as a hand at work then, and the
/// candidates listed for an earlier one: stories the scans so far told).
/// `None`: no passed line goes on to what the sensors show. Otherwise the
/// cheapest stories, by the plies no scan showed and the slides they need:
/// the passed lines gone on, and the lines that do not pass through them
/// (which need that earlier scan to have caught a piece in motion, a slide)
/// when they cost less; a line that leaves a move in progress (a piece
/// caught on its path, then the opponent's hand at work) is such a story
/// too, and the scan waits for the next. One story alone is read on from
/// its passed line. Every story must pass through the scans since the
/// record's position, a piece caught on its path allowed.
fn weigh_passed(
    story: &Story<'_>,
    sensed: &SensedBoard,
    (passed, reach): (&[Vec<Move>], usize),
    pressed: usize,
    hands: bool,
    slides: Slides,
) -> Option<ScanReading> {
    let pos = story.pos;
    let mut gone: Vec<Vec<Move>> = Vec::new();
    for line in passed {
        if line.is_empty() || !is_legal_line(pos, line) {
            continue;
        }
        let after = played(pos, line);
        for tail in exact_explanations(&after, sensed, reach).0 {
            let whole: Vec<Move> = line.iter().copied().chain(tail).collect();
            if !gone.contains(&whole) && story.allowed(&whole, false) {
                gone.push(whole);
            }
        }
    }
    let fewest = gone.iter().map(Vec::len).min()?;
    gone.retain(|line| line.len() == fewest);
    let cheapest = gone
        .iter()
        .map(|line| story.cost(line, false, passed))
        .min()?;
    let through_passed =
        |line: &[Move]| passed.iter().any(|p| !p.is_empty() && line.starts_with(p));
    // A rival story costs less than the cheapest passed line gone on, or,
    // counting every ply as unshown, has a ply fewer than they all do.
    let rival = |line: &[Move], hand: bool| {
        !through_passed(line)
            && (story.cost(line, hand, passed) < cheapest
                || !hand && INFERRED_PLY * line.len() + SLIDE < INFERRED_PLY * fewest)
            && story.allowed(line, hand)
    };
    // Read past what the record's position reaches, rivals are sought as
    // far as a scan is read from it (none is found there, or the scan
    // would have been read): the stories told are the evidence.
    let rival_plies = if reach > AFTER_PASSED {
        fewest.min(MAX_PLIES)
    } else {
        fewest
    };
    let rivals: Vec<Vec<Move>> = exact_explanations(pos, sensed, rival_plies)
        .0
        .into_iter()
        .filter(|line| rival(line, false))
        .collect();
    if !rivals.is_empty() {
        return Some(ScanReading::Ambiguous([rivals, gone].concat()));
    }
    // A story with a move still in progress that costs less: nothing is
    // certain until the next scan shows where the hand put its piece.
    if hands
        && hand_explanations(pos, sensed, fewest.saturating_sub(1))
            .iter()
            // A player who pressed has made his move (Art. 6.2.1).
            .any(|line| line.len() >= pressed && rival(line, true))
    {
        return Some(ScanReading::Hand);
    }
    // The same with a piece caught on its path (identity scans).
    if hands
        && slides == Slides::Caught
        && story.caught_as_cheap(sensed, passed, (fewest, cheapest), pressed)
    {
        return Some(ScanReading::Hand);
    }
    // The longest passed line every cheapest story goes on from: it was
    // made, and the rest is read from it as any scan is.
    let Some(line) = passed
        .iter()
        .filter(|p| !p.is_empty() && gone.iter().all(|line| line.starts_with(p)))
        .max_by_key(|p| p.len())
    else {
        return Some(ScanReading::Ambiguous(gone));
    };
    let after = played(pos, line);
    let rest = match read_scan(
        &after,
        sensed,
        pressed.saturating_sub(line.len()),
        hands,
        slides,
    ) {
        ScanReading::Moves(rest) => rest,
        _ => Vec::new(),
    };
    Some(ScanReading::Moves([line.clone(), rest].concat()))
}

/// `pos` after `line`.
fn played(pos: &Chess, line: &[Move]) -> Chess {
    let mut after = pos.clone();
    for &m in line {
        after.play_unchecked(m);
    }
    after
}
