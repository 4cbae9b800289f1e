//! The board script: a plain-text recording of one board session.
//!
//! One event per line; `#` starts a comment (at the start of a line or after
//! white space); blank lines are ignored. A line may start with `@<ms>`,
//! milliseconds since the session began (non-decreasing); a line without it
//! happens 250 ms after the previous event line (the first at 0).
//!
//! ```text
//! @0     setup rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1
//! @1200  lift e2
//! @1450  place e4 P        # the piece letter only on boards that identify pieces
//!        press white       # 250 ms later
//!        clock 0:04:58 0:05:00
//! board rnbqkbnr/pppppppp/8/8/4x3/8/PPPP1PPP/RNBQKBNR
//! ```
//!
//! Verbs: `setup <FEN>`, `lift <sq>`, `place <sq> [<piece>]`,
//! `board <placement>` (`x` = occupied, identity unknown), `press white|black`,
//! `clock <h:mm:ss> <h:mm:ss>`, `flag white|black`, `resign white|black`,
//! `draw`, `claim white|black threefold|fifty [<uci>]`, and two extensions:
//! `result 1-0|0-1|1/2-1/2|*` (the arbiter records a result) and
//! `tag <Name> [<value>]` (a PGN tag for the current game; no value: an
//! empty one, as in `[Site ""]`).

use std::fmt::Write as _;

use shakmaty::{CastlingMode, Chess, Color, Piece, Square, fen::Fen, uci::UciMove};

use crate::event::{
    BoardEvent, ClaimKind, Millis, Scan, Sensed, TimedEvent, format_clock, parse_clock, side_name,
};
use crate::verdict::Verdict;

/// The gap a line without a timestamp gets after the previous event line.
pub const DEFAULT_GAP_MS: Millis = 250;

/// A malformed line: where it is and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct ScriptError {
    /// The file name as the user gave it (`<stdin>` for standard input).
    pub file: String,
    /// The 1-based line number.
    pub line: usize,
    /// What is wrong and what was expected.
    pub message: String,
}

/// An event with the line it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptLine {
    /// The 1-based line number.
    pub line: usize,
    pub event: TimedEvent,
}

/// Parses a whole script. Either every line is good or nothing is returned,
/// so a bad script is never half applied.
pub fn parse_script(file: &str, text: &str) -> Result<Vec<ScriptLine>, ScriptError> {
    // One event a line at most: sized once, where growing it copied every
    // line parsed so far again and again.
    let mut out = Vec::with_capacity(line_count(text));
    let mut parser = LineParser { file, last: None };
    for (index, raw) in text.lines().enumerate() {
        out.extend(parser.line(index + 1, raw)?);
    }
    Ok(out)
}

/// [`parse_script`] in pieces of `first` events, then twice as many each
/// time up to `chunk` (the last may be shorter), each handed to `emit` as soon as it is parsed: `eboard replay` reads
/// them meanwhile on another thread. An error is the first bad line; the
/// pieces emitted before it must then not be applied (the caller discards
/// what it read of them).
pub(crate) fn parse_script_in_chunks(
    file: &str,
    text: &str,
    (first, chunk): (usize, usize),
    emit: &mut dyn FnMut(Vec<ScriptLine>),
) -> Result<(), ScriptError> {
    let chunk = chunk.max(1);
    let mut size = first.clamp(1, chunk);
    let mut out = Vec::with_capacity(size);
    let mut parser = LineParser { file, last: None };
    for (index, raw) in text.lines().enumerate() {
        out.extend(parser.line(index + 1, raw)?);
        if out.len() == size {
            size = (size * 2).min(chunk);
            emit(std::mem::replace(&mut out, Vec::with_capacity(size)));
        }
    }
    if !out.is_empty() {
        emit(out);
    }
    Ok(())
}

/// The number of lines of `text`, at most one more than its events.
pub(crate) fn line_count(text: &str) -> usize {
    text.bytes().filter(|&b| b == b'\n').count() + 1
}

/// A script read line by line: a line's time depends on the line before.
struct LineParser<'a> {
    file: &'a str,
    /// The time of the last event line.
    last: Option<Millis>,
}

impl LineParser<'_> {
    /// The event of line `line` (1-based), `None` for a blank or comment
    /// line.
    fn line(&mut self, line: usize, raw: &str) -> Result<Option<ScriptLine>, ScriptError> {
        let err = |message: String| ScriptError {
            file: self.file.to_owned(),
            line,
            message,
        };
        let content = strip_comment(raw).trim();
        if content.is_empty() {
            return Ok(None);
        }
        let last = self.last;
        let (at, rest) = match content.strip_prefix('@') {
            Some(after) => {
                let end = after.find(char::is_whitespace).unwrap_or(after.len());
                let digits = &after[..end];
                let at: Millis = digits.parse().map_err(|_| {
                    err(format!(
                        "expected a time in milliseconds after '@', found '@{digits}'"
                    ))
                })?;
                if let Some(prev) = last
                    && at < prev
                {
                    return Err(err(format!(
                        "time @{at} is earlier than the previous line's @{prev}; times must not decrease"
                    )));
                }
                (at, after[end..].trim_start())
            }
            None => (
                last.map_or(0, |prev| prev.saturating_add(DEFAULT_GAP_MS)),
                content,
            ),
        };
        let event = parse_event(rest).map_err(err)?;
        self.last = Some(at);
        Ok(Some(ScriptLine {
            line,
            event: TimedEvent { at, event },
        }))
    }
}

fn strip_comment(line: &str) -> &str {
    let bytes = line.as_bytes();
    // From one '#' to the next (a search by memchr), not byte by byte:
    // nearly every line has none.
    let mut from = 0;
    while let Some(i) = line[from..].find('#').map(|i| from + i) {
        if i == 0 || bytes[i - 1].is_ascii_whitespace() {
            return &line[..i];
        }
        from = i + 1;
    }
    line
}

/// Parses one event (a line without its timestamp and comment).
pub fn parse_event(text: &str) -> Result<BoardEvent, String> {
    let mut words = text.split_whitespace();
    let verb = words.next().ok_or("expected an event")?;
    // The events of nearly every line of a script, read without collecting
    // the words into a vector (the same checks in the same order).
    match verb {
        "lift" => {
            return match (words.next(), words.next()) {
                (Some(square), None) => Ok(BoardEvent::Lift(parse_square(square)?)),
                _ => Err("expected 'lift <square>'".to_owned()),
            };
        }
        "place" => {
            return match (words.next(), words.next(), words.next()) {
                (Some(square), piece, None) => {
                    let sq = parse_square(square)?;
                    let piece = piece.map(parse_piece).transpose()?;
                    Ok(BoardEvent::Place(sq, piece))
                }
                _ => Err("expected 'place <square> [<piece>]'".to_owned()),
            };
        }
        _ => {}
    }
    let args: Vec<&str> = words.collect();
    let arity = |min: usize, max: usize, usage: &str| -> Result<(), String> {
        if args.len() < min || args.len() > max {
            Err(format!("expected '{usage}'"))
        } else {
            Ok(())
        }
    };
    match verb {
        "setup" => parse_setup(&args),
        "board" => {
            arity(1, 1, "board <FEN placement, x for an occupied square>")?;
            Ok(BoardEvent::Board(Box::new(parse_scan(args[0])?)))
        }
        "press" => {
            arity(1, 1, "press white|black")?;
            Ok(BoardEvent::Press(parse_side(args[0])?))
        }
        "clock" => {
            arity(2, 2, "clock <h:mm:ss> <h:mm:ss>")?;
            let time = |t: &str| {
                parse_clock(t).ok_or_else(|| format!("expected a time h:mm:ss, found '{t}'"))
            };
            Ok(BoardEvent::Clock(time(args[0])?, time(args[1])?))
        }
        "flag" => {
            arity(1, 1, "flag white|black")?;
            Ok(BoardEvent::Flag(parse_side(args[0])?))
        }
        "resign" => {
            arity(1, 1, "resign white|black")?;
            Ok(BoardEvent::Resign(parse_side(args[0])?))
        }
        "draw" => {
            arity(0, 0, "draw")?;
            Ok(BoardEvent::Draw)
        }
        "reconnected" => {
            arity(0, 0, "reconnected")?;
            Ok(BoardEvent::Reconnected)
        }
        "claim" => {
            arity(2, 3, "claim white|black threefold|fifty [<uci move>]")?;
            parse_claim(&args)
        }
        "result" => {
            arity(1, 1, "result 1-0|0-1|1/2-1/2|*|+/-|-/+|-/-|0-0|1/2-0|0-1/2")?;
            match Verdict::parse(args[0]) {
                Some(Verdict::Outcome(outcome)) => Ok(BoardEvent::Result(outcome)),
                Some(Verdict::Special(special)) => Ok(BoardEvent::Special(special)),
                None => Err(format!(
                    "expected {}, found '{}'",
                    crate::verdict::EXPECTED,
                    args[0]
                )),
            }
        }
        "tag" => parse_tag(&args),
        other => Err(format!(
            "unknown event '{other}': expected setup, lift, place, board, press, clock, flag, resign, draw, claim, result or tag"
        )),
    }
}

fn parse_setup(args: &[&str]) -> Result<BoardEvent, String> {
    if args.is_empty() {
        return Err("expected 'setup <FEN>'".into());
    }
    let text = args.join(" ");
    let fen: Fen = text
        .parse()
        .map_err(|e| format!("bad FEN '{text}' in setup: {e}"))?;
    fen.clone()
        .into_position::<Chess>(CastlingMode::Standard)
        .map_err(|e| format!("setup FEN '{text}' is not a legal position: {e}"))?;
    Ok(BoardEvent::Setup(Box::new(fen)))
}

fn parse_claim(args: &[&str]) -> Result<BoardEvent, String> {
    let side = parse_side(args[0])?;
    let kind = match args[1] {
        "threefold" => ClaimKind::Threefold,
        "fifty" => ClaimKind::Fifty,
        other => return Err(format!("expected threefold or fifty, found '{other}'")),
    };
    let mv = args
        .get(2)
        .map(|m| {
            m.parse::<UciMove>()
                .map_err(|_| format!("expected a UCI move such as e2e4, found '{m}'"))
        })
        .transpose()?;
    Ok(BoardEvent::Claim(side, kind, mv))
}

fn parse_tag(args: &[&str]) -> Result<BoardEvent, String> {
    // An empty value is common in real files (`[Site ""]`) and is what
    // `format_event` writes for one: the name alone.
    if args.is_empty() {
        return Err("expected 'tag <Name> [<value>]'".into());
    }
    let name = args[0];
    if !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
        return Err(format!(
            "a tag name has letters, digits and '_' only, found '{name}'"
        ));
    }
    Ok(BoardEvent::Tag(name.to_owned(), args[1..].join(" ")))
}

fn parse_square(text: &str) -> Result<Square, String> {
    text.parse()
        .map_err(|_| format!("expected a square a1..h8, found '{text}'"))
}

fn parse_piece(text: &str) -> Result<Piece, String> {
    let mut chars = text.chars();
    match (chars.next().and_then(Piece::from_char), chars.next()) {
        (Some(piece), None) => Ok(piece),
        _ => Err(format!(
            "expected a piece letter PNBRQK (White) or pnbrqk (Black), found '{text}'"
        )),
    }
}

fn parse_side(text: &str) -> Result<Color, String> {
    match text {
        "white" => Ok(Color::White),
        "black" => Ok(Color::Black),
        other => Err(format!("expected white or black, found '{other}'")),
    }
}

/// Parses a FEN placement field in which `x` means an occupied square of
/// unknown identity.
pub fn parse_scan(text: &str) -> Result<Scan, String> {
    let bad = |why: &str| format!("bad board placement '{text}': {why}");
    let ranks: Vec<&str> = text.split('/').collect();
    if ranks.len() != 8 {
        return Err(bad("expected 8 ranks separated by '/'"));
    }
    let mut scan = Scan::empty();
    for (i, rank_text) in ranks.iter().enumerate() {
        let rank = 7 - i;
        let mut file = 0usize;
        for c in rank_text.chars() {
            if let Some(d) = c.to_digit(10) {
                if !(1..=8).contains(&d) {
                    return Err(bad("digits must be 1 to 8"));
                }
                file += d as usize;
            } else {
                let sensed = if c == 'x' || c == 'X' {
                    Sensed::Occupied
                } else {
                    Sensed::Piece(Piece::from_char(c).ok_or_else(|| {
                        bad(&format!("'{c}' is not a piece letter, a digit or x"))
                    })?)
                };
                if file >= 8 {
                    return Err(bad(&format!("rank {} has more than 8 squares", rank + 1)));
                }
                scan.0[rank * 8 + file] = Some(sensed);
                file += 1;
            }
            if file > 8 {
                return Err(bad(&format!("rank {} has more than 8 squares", rank + 1)));
            }
        }
        if file != 8 {
            return Err(bad(&format!("rank {} has {file} squares, not 8", rank + 1)));
        }
    }
    Ok(scan)
}

/// Writes one event as a script line body (without timestamp).
pub fn format_event(event: &BoardEvent) -> String {
    match event {
        BoardEvent::Setup(fen) => format!("setup {fen}"),
        BoardEvent::Lift(sq) => format!("lift {sq}"),
        BoardEvent::Place(sq, None) => format!("place {sq}"),
        BoardEvent::Place(sq, Some(p)) => format!("place {sq} {}", p.char()),
        BoardEvent::Board(scan) => format!("board {scan}"),
        BoardEvent::Press(c) => format!("press {}", side_name(*c)),
        BoardEvent::Clock(w, b) => format!("clock {} {}", format_clock(*w), format_clock(*b)),
        BoardEvent::Flag(c) => format!("flag {}", side_name(*c)),
        BoardEvent::Resign(c) => format!("resign {}", side_name(*c)),
        BoardEvent::Draw => "draw".to_owned(),
        BoardEvent::Reconnected => "reconnected".to_owned(),
        BoardEvent::Claim(c, kind, mv) => {
            let mut s = format!("claim {} {}", side_name(*c), kind.as_str());
            if let Some(mv) = mv {
                let _ = write!(s, " {mv}");
            }
            s
        }
        BoardEvent::Result(outcome) => format!("result {}", outcome.as_str()),
        BoardEvent::Special(special) => format!("result {}", special.as_str()),
        BoardEvent::Tag(name, value) => {
            // A value is one line and must not start a comment.
            let value: String = value
                .chars()
                .map(|c| if c.is_control() || c == '#' { ' ' } else { c })
                .collect();
            let value = value.trim();
            if value.is_empty() {
                format!("tag {name}")
            } else {
                format!("tag {name} {value}")
            }
        }
    }
}

/// Writes events as a script, every line with its timestamp.
pub fn write_script(events: &[TimedEvent]) -> String {
    let mut out = String::new();
    for ev in events {
        let _ = writeln!(out, "@{} {}", ev.at, format_event(&ev.event));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> Result<BoardEvent, String> {
        parse_event(text)
    }

    #[test]
    fn parses_every_verb() {
        assert_eq!(one("lift e2"), Ok(BoardEvent::Lift(Square::E2)));
        assert_eq!(
            one("place e4 P"),
            Ok(BoardEvent::Place(
                Square::E4,
                Some(Piece::from_char('P').unwrap())
            ))
        );
        assert_eq!(one("place h8"), Ok(BoardEvent::Place(Square::H8, None)));
        assert_eq!(one("press black"), Ok(BoardEvent::Press(Color::Black)));
        assert_eq!(
            one("clock 1:30:00 0:00:59"),
            Ok(BoardEvent::Clock(5400, 59))
        );
        assert_eq!(one("flag white"), Ok(BoardEvent::Flag(Color::White)));
        assert_eq!(one("resign black"), Ok(BoardEvent::Resign(Color::Black)));
        assert_eq!(one("draw"), Ok(BoardEvent::Draw));
        assert_eq!(one("reconnected"), Ok(BoardEvent::Reconnected));
        assert_eq!(
            one("claim white threefold g1f3"),
            Ok(BoardEvent::Claim(
                Color::White,
                ClaimKind::Threefold,
                Some("g1f3".parse().unwrap())
            ))
        );
        assert_eq!(
            one("claim black fifty"),
            Ok(BoardEvent::Claim(Color::Black, ClaimKind::Fifty, None))
        );
        assert!(matches!(
            one("setup 8/8/8/8/8/8/8/K1k5 w - - 0 1"),
            Ok(BoardEvent::Setup(_))
        ));
        assert!(matches!(one("result 1/2-1/2"), Ok(BoardEvent::Result(_))));
        assert_eq!(
            one("tag White Carlsen, Magnus"),
            Ok(BoardEvent::Tag("White".into(), "Carlsen, Magnus".into()))
        );
        // Issue 11: an empty value, as `simulate` writes `[Site ""]`.
        let empty = BoardEvent::Tag("Site".into(), String::new());
        assert_eq!(format_event(&empty), "tag Site");
        assert_eq!(one(&format_event(&empty)), Ok(empty));
    }

    #[test]
    fn scan_with_unknowns() {
        let scan = parse_scan("xxxxxxxx/xxxxxxxx/8/8/4x3/8/PPPP1PPP/RNBQKBNR").unwrap();
        assert_eq!(scan.get(Square::E4), Some(Sensed::Occupied));
        assert_eq!(scan.get(Square::E2), None);
        assert_eq!(
            scan.get(Square::A1),
            Some(Sensed::Piece(Piece::from_char('R').unwrap()))
        );
        for bad in [
            "8/8/8/8/8/8/8",
            "9/8/8/8/8/8/8/8",
            "8/8/8/8/8/8/8/7",
            "8/8/8/8/8/8/8/8p",
            "8/8/8/8/8/8/8/7z",
            "8/8/8/8/8/8/8/0",
        ] {
            assert!(parse_scan(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn rejects_malformed_lines() {
        for bad in [
            "lift",
            "lift e9",
            "lift e2 e4",
            "place e4 Z",
            "place e4 PP",
            "press both",
            "clock 1:00:00",
            "clock 1:00:00 x",
            "claim white draw",
            "claim white fifty e2",
            "setup not a fen",
            "setup 8/8/8/8/8/8/8/8 w - - 0 1",
            "teleport e2 e4",
            "result 2-0",
            "tag",
            "tag Wh\"ite x",
            "draw now",
        ] {
            assert!(one(bad).is_err(), "{bad}");
        }
    }

    /// Lifts and places are read on a path of their own (issue 38): the
    /// same events and the same messages as every other verb's checks.
    #[test]
    fn lift_and_place_say_what_is_wrong() {
        assert_eq!(one("lift  e2 "), Ok(BoardEvent::Lift(Square::E2)));
        assert_eq!(
            one("place e4 n"),
            Ok(BoardEvent::Place(Square::E4, Some(Color::Black.knight())))
        );
        assert_eq!(one("place\te4"), Ok(BoardEvent::Place(Square::E4, None)));
        for (bad, message) in [
            ("lift", "expected 'lift <square>'"),
            ("lift e2 e4", "expected 'lift <square>'"),
            ("lift e9", "expected a square a1..h8, found 'e9'"),
            ("place", "expected 'place <square> [<piece>]'"),
            ("place e4 P x", "expected 'place <square> [<piece>]'"),
            ("place i4 Z", "expected a square a1..h8, found 'i4'"),
            (
                "place e4 Z",
                "expected a piece letter PNBRQK (White) or pnbrqk (Black), found 'Z'",
            ),
        ] {
            assert_eq!(one(bad), Err(message.to_owned()), "{bad}");
        }
    }

    /// A `#` starts a comment only at the start of a line or after white
    /// space: inside a word it is text.
    #[test]
    fn a_hash_inside_a_word_is_no_comment() {
        let s = "tag Opening Sicilian#2 and#3 # a note\n#lift e2\nlift e7#x # a note\n";
        let lines = parse_script("t.board", s).unwrap_err();
        // `e7#x` is no square: the comment did not start inside it.
        assert_eq!(lines.line, 3);
        assert!(lines.message.contains("'e7#x'"), "{}", lines.message);
        let lines = parse_script("t.board", &s.replace("e7#x", "e7")).unwrap();
        assert_eq!(
            lines[0].event.event,
            BoardEvent::Tag("Opening".into(), "Sicilian#2 and#3".into())
        );
        assert_eq!(lines[1].event.event, BoardEvent::Lift(Square::E7));
        assert_eq!(lines.len(), 2);
    }

    #[test]
    fn timestamps_default_and_order() {
        let s = "# a comment\n\nlift e2\n@1000 place e4 # trailing comment\nlift e7\n";
        let lines = parse_script("t.board", s).unwrap();
        let times: Vec<(usize, Millis)> = lines.iter().map(|l| (l.line, l.event.at)).collect();
        assert_eq!(times, vec![(3, 0), (4, 1000), (5, 1250)]);

        let err = parse_script("t.board", "@500 lift e2\n@400 place e4\n").unwrap_err();
        assert_eq!(err.line, 2);
        assert_eq!(err.file, "t.board");
        assert!(err.to_string().starts_with("t.board:2: "), "{err}");

        let err = parse_script("x", "lift e2\n@12a lift e7\n").unwrap_err();
        assert_eq!(err.line, 2);
    }

    #[test]
    fn write_then_parse() {
        let events = vec![
            TimedEvent {
                at: 0,
                event: BoardEvent::Lift(Square::G1),
            },
            TimedEvent {
                at: 10,
                event: BoardEvent::Place(Square::F3, None),
            },
            TimedEvent {
                at: 20,
                event: BoardEvent::Board(Box::new(
                    parse_scan("rnbqkbnr/pppppppp/8/8/8/5N2/PPPPPPPP/RNBQKB1R").unwrap(),
                )),
            },
            TimedEvent {
                at: 30,
                event: BoardEvent::Clock(300, 299),
            },
            TimedEvent {
                at: 40,
                event: BoardEvent::Tag("White".into(), "A # B".into()),
            },
        ];
        let text = write_script(&events);
        let back: Vec<TimedEvent> = parse_script("w", &text)
            .unwrap()
            .into_iter()
            .map(|l| l.event)
            .collect();
        assert_eq!(back[..4], events[..4]);
        assert_eq!(back[4].event, BoardEvent::Tag("White".into(), "A B".into()));
    }
}

/// Issue 38: the script parsed in pieces, as `eboard replay` reads it.
#[cfg(test)]
mod chunk_tests {
    use super::*;

    #[test]
    fn pieces_hold_the_same_events_as_the_whole_script() {
        let text =
            "# a comment\n@10 lift e2\nplace e4\n\n@900 lift e7 # why\nplace e5\nflag white\n";
        let mut pieces = Vec::new();
        parse_script_in_chunks("t", text, (2, 2), &mut |c| pieces.push(c)).unwrap();
        assert_eq!(pieces.iter().map(Vec::len).collect::<Vec<_>>(), [2, 2, 1]);
        // Growing pieces: the reader starts on a small first one.
        let mut growing = Vec::new();
        parse_script_in_chunks("t", text, (1, 4), &mut |c| growing.push(c)).unwrap();
        assert_eq!(growing.iter().map(Vec::len).collect::<Vec<_>>(), [1, 2, 2]);
        assert_eq!(growing.concat(), pieces.concat());
        // Times carry over from piece to piece: `place e5` is 250 ms after @900.
        assert_eq!(pieces[1][1].event.at, 900 + DEFAULT_GAP_MS);
        assert_eq!(pieces.concat(), parse_script("t", text).unwrap());
    }

    #[test]
    fn a_bad_line_in_a_later_piece_is_the_error() {
        let text = "lift e2\nplace e4\nlift e7\n@5 place e5\n";
        let mut pieces = Vec::new();
        let err = parse_script_in_chunks("t", text, (1, 1), &mut |c| pieces.push(c)).unwrap_err();
        assert_eq!(err.line, 4);
        assert_eq!(err, parse_script("t", text).unwrap_err());
    }
}
