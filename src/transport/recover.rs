//! What a DGT board saw while its cable was out, read back from the
//! board's EEPROM log.
//!
//! A DGT board logs every square change and every lever press to its own
//! memory, connected or not. After a reconnection the link reads that log
//! and finds in it the board as the link last saw it (the log is a ring
//! buffer holding much more than the outage); what follows is what the
//! host missed. It is handed on as ordinary board events, in the order the
//! board logged it, so that every move is read as it was played instead
//! of being guessed from the final position (move orders that transpose
//! look alike in a dump).
//!
//! The log carries no times. Its events are dated between the last bytes
//! heard before the outage and the reconnection, a slow record (more than
//! about 250 ms after the previous one) far enough from the last for the
//! engine to read the state between them, a quick record (the board's own
//! flag) close to it, as a sensor sweep is.

use shakmaty::{Board, Color};

use crate::{
    event::{BoardEvent, Millis, Seconds, TimedEvent},
    game::{draw, win},
    protocol::{
        a8_index,
        dgt::{self, EeRecord, MagicPiece, PieceCode},
    },
};

/// The longest gap put between two slow records of the log.
pub const SLOW_GAP_MS: Millis = 1000;

/// The longest gap put between a quick record and the one before it.
pub const QUICK_GAP_MS: Millis = 20;

/// What the host knew of the board when the cable went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LastSeen {
    /// The board, raw codes a8 first (result tokens included).
    pub codes: [u8; 64],
    /// The latest field updates heard (a8 index, code), oldest first.
    pub recent: Vec<(u8, u8)>,
    /// The clock times last reported (White, Black).
    pub times: Option<(Seconds, Seconds)>,
    /// The player whose press the levers showed last.
    pub last_press: Option<Color>,
    /// When the board was last heard.
    pub at: Millis,
}

/// The part of the log after the board as last seen, as board events.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recovered {
    /// The events, dated between the last bytes heard and the reconnection.
    pub events: Vec<TimedEvent>,
    /// Square changes among them.
    pub changes: usize,
    /// Lever presses among them.
    pub presses: usize,
    /// Why the log was not followed to its end, if it was not: the board
    /// then changed without logging it, and its dump tells the rest.
    pub cut: Option<String>,
}

/// Why the log could not be aligned with what the host last saw.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Unaligned {
    /// No point of the log shows the board as last seen.
    #[error(
        "no point of the log shows the board as the host last saw it (log overwritten, or no start-position or power-up mark to count from)"
    )]
    NotFound,
    /// Points show it, but none with the square changes heard last.
    #[error("the log does not hold the square changes the host heard last")]
    History,
}

/// One unit of the log: a change, a press, or a mark of the whole board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Change {
        field: u8,
        code: u8,
        quick: bool,
    },
    Press {
        left: bool,
        secs: Seconds,
    },
    /// The whole board is known here.
    Anchor {
        kind: Anchor,
        codes: [u8; 64],
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Anchor {
    PowerUp,
    Mark,
}

fn board_codes(board: &Board, turned: bool) -> [u8; 64] {
    let mut codes = [dgt::EMPTY; 64];
    for (sq, p) in board.iter() {
        let sq = if turned { sq.rotate_180() } else { sq };
        codes[a8_index(sq)] = dgt::code_of_piece(p);
    }
    codes
}

/// The log as steps. A power-up is followed by one record per piece found
/// (each square once, none empty): they make one anchor.
fn steps(records: &[EeRecord]) -> Vec<Step> {
    let mut out = Vec::with_capacity(records.len());
    let mut i = 0;
    while i < records.len() {
        match records[i] {
            EeRecord::Field {
                square,
                code,
                quick,
            } => out.push(Step::Change {
                field: a8_index(square) as u8,
                code: dgt::code_of(code),
                quick,
            }),
            EeRecord::Clock { left, secs } => out.push(Step::Press { left, secs }),
            EeRecord::PowerUp => {
                let mut codes = [dgt::EMPTY; 64];
                while let Some(EeRecord::Field { square, code, .. }) = records.get(i + 1) {
                    let field = a8_index(*square);
                    if *code == PieceCode::Empty || codes[field] != dgt::EMPTY {
                        break;
                    }
                    codes[field] = dgt::code_of(*code);
                    i += 1;
                }
                out.push(Step::Anchor {
                    kind: Anchor::PowerUp,
                    codes,
                });
            }
            EeRecord::BeginPos | EeRecord::BeginPosRot => out.push(Step::Anchor {
                kind: Anchor::Mark,
                codes: board_codes(&Board::default(), records[i] == EeRecord::BeginPosRot),
            }),
            EeRecord::EmptyBoard => out.push(Step::Anchor {
                kind: Anchor::Mark,
                codes: [dgt::EMPTY; 64],
            }),
            _ => {}
        }
        i += 1;
    }
    out
}

/// Appends a square change to a history, as the board's log keeps it: a
/// square that changes again overwrites its record (a piece lifted and put
/// back leaves one record, of the piece).
fn push_change(history: &mut Vec<(u8, u8)>, field: u8, code: u8) {
    match history.last_mut() {
        Some(last) if last.0 == field => last.1 = code,
        _ => history.push((field, code)),
    }
}

/// How many of the latest changes of `log` and `heard` agree, from the end.
fn common_tail(log: &[(u8, u8)], heard: &[(u8, u8)]) -> usize {
    log.iter()
        .rev()
        .zip(heard.iter().rev())
        .take_while(|(a, b)| a == b)
        .count()
}

/// Where the host's view ends in `steps`: the index of the first step it
/// did not see. Among the points where the board, followed from an anchor,
/// is exactly as last seen, the one whose preceding changes end with most
/// of the changes heard last; the latest on a tie, which replays least.
///
/// The host may also have heard a square change that the next change of
/// the same square then overwrote in the log (a piece lifted as the cable
/// went, put down again while it was out): the point is then before that
/// record, where the board is as last seen but for that square.
fn align(steps: &[Step], seen: &LastSeen) -> Result<usize, Unaligned> {
    let mut heard = Vec::with_capacity(seen.recent.len());
    for &(field, code) in &seen.recent {
        push_change(&mut heard, field, code);
    }
    let mut board: [Option<u8>; 64] = [None; 64];
    let mut changes: Vec<(u8, u8)> = Vec::new();
    let mut best: Option<(usize, usize)> = None;
    let mut found = false;
    let mut consider = |at: usize, score: usize| {
        found = true;
        if best.is_none_or(|(_, s)| score >= s) {
            best = Some((at, score));
        }
    };
    let as_seen_but = |board: &[Option<u8>; 64], except: Option<usize>| {
        board
            .iter()
            .zip(seen.codes)
            .enumerate()
            .all(|(i, (known, code))| Some(i) == except || *known == Some(code))
    };
    for (i, step) in steps.iter().enumerate() {
        match *step {
            Step::Change { field, code, .. } => {
                let f = usize::from(field);
                let overwrote = heard
                    .last()
                    .is_some_and(|&(hf, hc)| hf == field && hc == seen.codes[f])
                    && board[f] != Some(seen.codes[f])
                    && code != seen.codes[f];
                if overwrote && as_seen_but(&board, Some(f)) {
                    // The overwritten change counts as heard: its square is
                    // this record's.
                    consider(i, 1 + common_tail(&changes, &heard[..heard.len() - 1]));
                }
                board[f] = Some(code);
                push_change(&mut changes, field, code);
            }
            Step::Press { .. } => continue,
            Step::Anchor { codes, .. } => {
                for (slot, code) in board.iter_mut().zip(codes) {
                    *slot = Some(code);
                }
            }
        }
        if as_seen_but(&board, None) {
            consider(i + 1, common_tail(&changes, &heard));
        }
    }
    match best {
        Some((at, score)) if score > 0 || seen.recent.is_empty() => Ok(at),
        Some(_) => Err(Unaligned::History),
        None if found => Err(Unaligned::History),
        None => Err(Unaligned::NotFound),
    }
}

fn magic_result(code: u8) -> Option<BoardEvent> {
    match dgt::piece_code(code)? {
        PieceCode::Magic(m) => Some(BoardEvent::Result(match m {
            MagicPiece::Draw => draw(),
            MagicPiece::WhiteWins => win(Color::White),
            MagicPiece::BlackWins => win(Color::Black),
        })),
        _ => None,
    }
}

/// The events that take the board from `old` to `code` on `field`, as the
/// decoder gives them for a field update.
fn change_events(field: u8, old: u8, code: u8, out: &mut Vec<BoardEvent>) {
    let sq = crate::protocol::square_from_a8(usize::from(field));
    if matches!(dgt::piece_code(old), Some(PieceCode::Piece(_))) {
        out.push(BoardEvent::Lift(sq));
    }
    match dgt::piece_code(code) {
        Some(PieceCode::Piece(p)) => out.push(BoardEvent::Place(sq, Some(p))),
        Some(PieceCode::Magic(_)) => out.extend(magic_result(code)),
        _ => {}
    }
}

/// Reads the log (`EE_MOVES` data) against what the host last saw and
/// returns what happened after, dated up to `now` (the reconnection).
pub fn recover(
    log: &[u8],
    seen: &LastSeen,
    now: Millis,
    config: dgt::Config,
) -> Result<Recovered, Unaligned> {
    let steps = steps(&dgt::parse_ee_moves(log));
    let from = align(&steps, seen)?;
    let mut board = seen.codes;
    let mut times = seen.times;
    // The levers as the host last saw them, until the first press.
    let mut heard_press = seen.last_press;
    let mut out = Recovered::default();
    // Each step's events, with whether the step was quick.
    let mut groups: Vec<(bool, Vec<BoardEvent>)> = Vec::new();
    for step in &steps[from..] {
        let mut events = Vec::new();
        let quick = match *step {
            Step::Change { field, code, quick } => {
                let old = std::mem::replace(&mut board[usize::from(field)], code);
                if old == code {
                    continue;
                }
                change_events(field, old, code, &mut events);
                out.changes += 1;
                quick
            }
            Step::Press { left, secs } => {
                let color = if left == config.white_on_left {
                    Color::White
                } else {
                    Color::Black
                };
                // The board logs a press when the levers change: a first
                // press that leaves them as the host last saw them was
                // heard already. Later ones are news even by the same
                // player: the board skips records when moves are fast.
                if heard_press.take() == Some(color) {
                    continue;
                }
                events.push(BoardEvent::Press(color));
                if let Some((w, b)) = &mut times {
                    match color {
                        Color::White => *w = secs,
                        Color::Black => *b = secs,
                    }
                    events.push(BoardEvent::Clock(*w, *b));
                }
                out.presses += 1;
                false
            }
            Step::Anchor { kind, codes } => {
                if kind == Anchor::Mark && codes != [dgt::EMPTY; 64] {
                    // A game set up: its clock was set without a record,
                    // so the next press is news whoever makes it.
                    heard_press = None;
                }
                if codes != board {
                    out.cut = Some(match kind {
                        Anchor::PowerUp => {
                            "the board was switched off while away and changed meanwhile".into()
                        }
                        Anchor::Mark => "the log disagrees with its own position mark".into(),
                    });
                    break;
                }
                continue;
            }
        };
        if !events.is_empty() {
            groups.push((quick, events));
        }
    }
    out.events = date(groups, seen.at, now);
    Ok(out)
}

/// Dates the groups between `from` and `to` (both excluded when there is
/// room): slow groups evenly, quick ones just after the group before. The
/// first quarter of the window (up to a slow gap) is left free: a reader
/// may have let the engine's time pass a little beyond the last bytes
/// heard (a state settling), and events dated before that would be read
/// as simultaneous.
fn date(groups: Vec<(bool, Vec<BoardEvent>)>, from: Millis, to: Millis) -> Vec<TimedEvent> {
    let slow = groups.iter().filter(|(quick, _)| !quick).count() as Millis;
    let window = to.saturating_sub(from);
    let lead = (window / 4).min(SLOW_GAP_MS);
    let gap = ((window - lead) / (slow + 1)).min(SLOW_GAP_MS);
    let quick_gap = (gap / 8).min(QUICK_GAP_MS);
    let mut t = from + lead - gap.min(lead);
    let mut out = Vec::new();
    for (quick, events) in groups {
        t = (t + if quick { quick_gap } else { gap }).min(to);
        out.extend(events.into_iter().map(|event| TimedEvent { at: t, event }));
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use shakmaty::{Piece, Square};

    use super::*;

    const POWERUP: u8 = 0x6A;
    const BEGINPOS: u8 = 0x6F;
    const EOF: u8 = 0x6B;

    fn field(log: &mut Vec<u8>, sq: Square, piece: Option<Piece>, quick: bool) {
        let code = piece.map_or(dgt::EMPTY, dgt::code_of_piece);
        log.push(0x40 | u8::from(quick) << 4 | code);
        log.push(a8_index(sq) as u8);
    }

    /// A move as the board logs it: the piece lifted, then put down.
    fn mv(log: &mut Vec<u8>, from: Square, to: Square, piece: Piece) {
        field(log, from, None, false);
        field(log, to, Some(piece), false);
    }

    fn press(log: &mut Vec<u8>, left: bool, secs: u8) {
        log.extend([
            0x60 | u8::from(left) << 4,
            0x05,
            ((secs / 10) << 4) | (secs % 10),
        ]);
    }

    /// The power-up listing of the start position and its mark.
    fn power_up_in_start_position() -> Vec<u8> {
        let mut log = vec![0x7F, 0x7F, 0x7F, POWERUP];
        for i in 0..64 {
            let sq = crate::protocol::square_from_a8(i);
            if let Some(p) = Board::default().piece_at(sq) {
                field(&mut log, sq, Some(p), true);
            }
        }
        log.push(BEGINPOS);
        log
    }

    fn codes_after(moves: &[(Square, Square)]) -> [u8; 64] {
        let mut codes = board_codes(&Board::default(), false);
        for &(from, to) in moves {
            codes[a8_index(to)] = std::mem::replace(&mut codes[a8_index(from)], dgt::EMPTY);
        }
        codes
    }

    /// 1.e4 e5 seen; 2.Nf3 Nc6 played while away.
    fn game() -> (Vec<u8>, LastSeen) {
        let mut log = power_up_in_start_position();
        mv(&mut log, Square::E2, Square::E4, Color::White.pawn());
        press(&mut log, true, 59);
        mv(&mut log, Square::E7, Square::E5, Color::Black.pawn());
        press(&mut log, false, 58);
        mv(&mut log, Square::G1, Square::F3, Color::White.knight());
        press(&mut log, true, 57);
        mv(&mut log, Square::B8, Square::C6, Color::Black.knight());
        press(&mut log, false, 56);
        log.push(EOF);
        let seen = LastSeen {
            codes: codes_after(&[(Square::E2, Square::E4), (Square::E7, Square::E5)]),
            recent: vec![
                (a8_index(Square::E2) as u8, 0),
                (a8_index(Square::E4) as u8, 1),
                (a8_index(Square::E7) as u8, 0),
                (a8_index(Square::E5) as u8, 7),
            ],
            times: Some((300, 300)),
            last_press: Some(Color::Black),
            at: 10_000,
        };
        (log, seen)
    }

    fn kinds(r: &Recovered) -> Vec<BoardEvent> {
        r.events.iter().map(|e| e.event.clone()).collect()
    }

    #[test]
    fn the_moves_after_the_board_as_last_seen_come_back_in_order() {
        let (log, seen) = game();
        let r = recover(&log, &seen, 20_000, dgt::Config::default()).unwrap();
        assert_eq!(
            kinds(&r),
            vec![
                BoardEvent::Lift(Square::G1),
                BoardEvent::Place(Square::F3, Some(Color::White.knight())),
                BoardEvent::Press(Color::White),
                BoardEvent::Clock(357, 300),
                BoardEvent::Lift(Square::B8),
                BoardEvent::Place(Square::C6, Some(Color::Black.knight())),
                BoardEvent::Press(Color::Black),
                BoardEvent::Clock(357, 356),
            ]
        );
        assert_eq!((r.changes, r.presses, r.cut.clone()), (4, 2, None));
        // Dated after the last bytes heard, before the reconnection, in
        // order, slow records far enough apart to be read one by one.
        let times: Vec<Millis> = r.events.iter().map(|e| e.at).collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
        assert!(times[0] > 10_000 && times[times.len() - 1] < 20_000);
        assert!(times[1] - times[0] >= 500, "{times:?}");
    }

    #[test]
    fn the_clock_sides_follow_the_set_up() {
        // White sits on the clock's right: the left-hand display is Black's.
        let (log, mut seen) = game();
        seen.last_press = Some(Color::White);
        let r = recover(
            &log,
            &seen,
            20_000,
            dgt::Config {
                white_on_left: false,
            },
        )
        .unwrap();
        assert_eq!(kinds(&r)[2], BoardEvent::Press(Color::Black));
        assert_eq!(kinds(&r)[3], BoardEvent::Clock(300, 357));
    }

    #[test]
    fn a_position_seen_twice_is_told_apart_by_the_changes_heard_last() {
        // 1.e4 e5 2.Nf3 Nf6 3.Ng1 Ng8 seen, then 4.Nf3 Nf6 5.Ng1 Ng8
        // played away: the board is as last seen after the 2nd, the 6th
        // and the 10th ply.
        let mut log = power_up_in_start_position();
        let opening = [
            (Square::E2, Square::E4, Color::White.pawn()),
            (Square::E7, Square::E5, Color::Black.pawn()),
        ];
        let knights = [
            (Square::G1, Square::F3, Color::White.knight()),
            (Square::G8, Square::F6, Color::Black.knight()),
            (Square::F3, Square::G1, Color::White.knight()),
            (Square::F6, Square::G8, Color::Black.knight()),
        ];
        let plies: Vec<_> = opening.iter().chain(&knights).chain(&knights).collect();
        for &&(from, to, p) in &plies {
            mv(&mut log, from, to, p);
        }
        let recent = plies[..6]
            .iter()
            .flat_map(|&&(from, to, p)| {
                [
                    (a8_index(from) as u8, 0),
                    (a8_index(to) as u8, dgt::code_of_piece(p)),
                ]
            })
            .collect();
        let seen = LastSeen {
            codes: codes_after(&[(Square::E2, Square::E4), (Square::E7, Square::E5)]),
            recent,
            times: None,
            last_press: None,
            at: 0,
        };
        let r = recover(&log, &seen, 60_000, dgt::Config::default()).unwrap();
        assert_eq!(r.changes, 8, "{:?}", kinds(&r));
        assert_eq!(r.events[0].event, BoardEvent::Lift(Square::G1));
    }

    #[test]
    fn a_log_whose_head_was_overwritten_is_read_from_its_next_mark() {
        let (log, seen) = game();
        // The ring buffer lost its start, cutting a record in two; the
        // start-position mark after the power-up listing is still there.
        let r = recover(&log[5..], &seen, 20_000, dgt::Config::default()).unwrap();
        assert_eq!(r.changes, 4);
        // Garbage, then a start-position mark (a new game set up).
        let mut later = vec![0x45, 0x12, 0x33, 0x40, 0x7E];
        later.extend_from_slice(&log[68..]);
        let r = recover(&later, &seen, 20_000, dgt::Config::default()).unwrap();
        assert_eq!(r.changes, 4);
        // Cut inside the moves: no mark to count from.
        assert_eq!(
            recover(&log[70..], &seen, 20_000, dgt::Config::default()),
            Err(Unaligned::NotFound)
        );
    }

    #[test]
    fn a_board_switched_off_and_changed_meanwhile_is_cut_at_the_power_up() {
        let (mut log, seen) = game();
        log.pop();
        // Powered up again in the start position: the moves played are gone
        // from the board without a record.
        log.extend(power_up_in_start_position());
        let r = recover(&log, &seen, 20_000, dgt::Config::default()).unwrap();
        assert_eq!(r.changes, 4);
        assert!(r.cut.is_some());
        // Powered up again as it stood: nothing is cut.
        let (mut log, seen) = game();
        log.pop();
        log.extend([0x7F, POWERUP]);
        let codes = codes_after(&[
            (Square::E2, Square::E4),
            (Square::E7, Square::E5),
            (Square::G1, Square::F3),
            (Square::B8, Square::C6),
        ]);
        for (i, &c) in codes.iter().enumerate() {
            if c != dgt::EMPTY {
                log.extend([0x50 | c, i as u8]);
            }
        }
        let r = recover(&log, &seen, 20_000, dgt::Config::default()).unwrap();
        assert_eq!((r.changes, r.cut), (4, None));
    }

    #[test]
    fn a_change_heard_as_the_cable_went_and_folded_in_the_log_is_found() {
        // 1.e4 d5 seen, then White's pawn lifted from e4 and Black's from
        // d5 (heard); the cable goes; White's pawn is put down on d5. The
        // board folds the two changes of d5 into one record: it never
        // shows the board as last seen.
        let mut log = power_up_in_start_position();
        mv(&mut log, Square::E2, Square::E4, Color::White.pawn());
        mv(&mut log, Square::D7, Square::D5, Color::Black.pawn());
        field(&mut log, Square::E4, None, false);
        field(&mut log, Square::D5, Some(Color::White.pawn()), false);
        press(&mut log, true, 50);
        let mut codes = codes_after(&[(Square::E2, Square::E4), (Square::D7, Square::D5)]);
        codes[a8_index(Square::E4)] = dgt::EMPTY;
        codes[a8_index(Square::D5)] = dgt::EMPTY;
        let recent = [
            (Square::E2, 0),
            (Square::E4, 1),
            (Square::D7, 0),
            (Square::D5, 7),
            (Square::E4, 0),
            (Square::D5, 0),
        ];
        let seen = LastSeen {
            codes,
            recent: recent
                .iter()
                .map(|&(sq, c)| (a8_index(sq) as u8, c))
                .collect(),
            times: None,
            last_press: Some(Color::Black),
            at: 0,
        };
        let r = recover(&log, &seen, 10_000, dgt::Config::default()).unwrap();
        assert_eq!(
            kinds(&r),
            vec![
                BoardEvent::Place(Square::D5, Some(Color::White.pawn())),
                BoardEvent::Press(Color::White),
            ]
        );
    }

    #[test]
    fn a_press_the_board_skipped_does_not_hide_the_next_one() {
        // Black's press after 2...Nc6 was too fast to be logged: White's
        // next press follows White's last one in the log, and is news.
        let (mut log, seen) = game();
        log.pop();
        let at = log.len() - 3;
        log.truncate(at);
        mv(&mut log, Square::F1, Square::C4, Color::White.bishop());
        press(&mut log, true, 55);
        let r = recover(&log, &seen, 20_000, dgt::Config::default()).unwrap();
        let presses: Vec<BoardEvent> = kinds(&r)
            .into_iter()
            .filter(|e| matches!(e, BoardEvent::Press(_)))
            .collect();
        assert_eq!(
            presses,
            vec![
                BoardEvent::Press(Color::White),
                BoardEvent::Press(Color::White)
            ]
        );
    }

    #[test]
    fn a_log_without_the_changes_heard_last_is_not_trusted() {
        let (log, mut seen) = game();
        seen.recent = vec![(a8_index(Square::A2) as u8, 0)];
        assert_eq!(
            recover(&log, &seen, 20_000, dgt::Config::default()),
            Err(Unaligned::History)
        );
    }

    #[test]
    fn a_short_window_still_keeps_the_order() {
        let (log, seen) = game();
        let r = recover(&log, &seen, 10_003, dgt::Config::default()).unwrap();
        let times: Vec<Millis> = r.events.iter().map(|e| e.at).collect();
        assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
        assert!(times.iter().all(|&t| t <= 10_003));
    }

    proptest! {
        #[test]
        fn any_log_is_read_without_panic(
            log in proptest::collection::vec(any::<u8>(), 0..600),
            codes in proptest::collection::vec(0u8..16, 64),
            recent in proptest::collection::vec((0u8..64, 0u8..16), 0..8),
            at in 0u64..100_000,
            now in 0u64..100_000,
        ) {
            let seen = LastSeen {
                codes: codes.try_into().unwrap(),
                recent,
                times: Some((60, 60)),
                last_press: None,
                at,
            };
            if let Ok(r) = recover(&log, &seen, now, dgt::Config::default()) {
                prop_assert!(r.events.windows(2).all(|w| w[0].at <= w[1].at));
            }
        }

        #[test]
        fn a_real_log_with_garbage_appended_is_read_without_panic(
            tail in proptest::collection::vec(any::<u8>(), 0..200),
        ) {
            let (mut log, seen) = game();
            log.extend(tail);
            let _ = recover(&log, &seen, 20_000, dgt::Config::default());
        }
    }
}
