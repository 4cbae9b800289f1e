//! PGN: writing the recorded games, reading games to simulate.
//!
//! The writer follows the PGN export format (Seven Tag Roster first, lines of
//! at most 80 columns, a blank line after each game) so that its output can be
//! appended game after game to one file that every PGN tool reads. The reader
//! is built on `pgn-reader` and turns each game into legal [`Move`]s.

use std::{fmt::Write as _, io, ops::ControlFlow};

use pgn_reader::{RawComment, RawTag, Reader, Visitor};
use shakmaty::{
    CastlingMode, Chess, Color, EnPassantMode, Move, Outcome, Position,
    fen::Fen,
    san::{San, SanPlus},
};

use crate::event::{Seconds, format_clock, parse_clock};

/// One move as the PGN writer prints it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgnMove {
    /// The move in SAN with its check or mate suffix.
    pub san: SanPlus,
    /// The mover's remaining time after the move (`{[%clk h:mm:ss]}`).
    pub clock: Option<Seconds>,
    /// A comment printed after the move.
    pub comment: Option<String>,
}

/// A game to write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PgnGame {
    /// Tags in the order to print them. The Seven Tag Roster is always printed
    /// first in its standard order, with `?` defaults for missing ones.
    pub tags: Vec<(String, String)>,
    /// The start position when it is not the standard one (`[SetUp "1"]`, `[FEN]`).
    pub setup: Option<Fen>,
    /// The moves played.
    pub moves: Vec<PgnMove>,
    pub result: Outcome,
    /// A forfeit or special score, which sets the `Result` value and the
    /// termination marker instead of `result`.
    pub special: Option<crate::verdict::SpecialResult>,
    /// A comment after the last move (how the game ended).
    pub final_comment: Option<String>,
}

impl PgnGame {
    /// The `Result` value and termination marker.
    pub fn result_text(&self) -> &'static str {
        self.special
            .map_or_else(|| self.result.as_str(), |s| s.pgn_result())
    }
}

/// The longest line the writer produces (the PGN export format's limit).
const MAX_LINE: usize = 80;

/// The Seven Tag Roster in its standard order, with the default value of
/// each tag (`Result` is always taken from [`PgnGame::result`]).
const SEVEN_TAG_ROSTER: [(&str, &str); 7] = [
    ("Event", "?"),
    ("Site", "?"),
    ("Date", "????.??.??"),
    ("Round", "?"),
    ("White", "?"),
    ("Black", "?"),
    ("Result", "*"),
];

/// Writes one game as PGN, lines at most 80 columns, ending with a blank line.
///
/// The limit applies to the movetext; a tag line is as long as its value
/// (a tag cannot be split over lines).
pub fn write_pgn(game: &PgnGame) -> String {
    let mut out = String::new();

    for (name, default) in SEVEN_TAG_ROSTER {
        let value = if name == "Result" {
            game.result_text()
        } else {
            game.tags
                .iter()
                .find(|(n, _)| n == name)
                .map_or(default, |(_, v)| v.as_str())
        };
        push_tag(&mut out, name, value);
    }
    if let Some(fen) = &game.setup {
        push_tag(&mut out, "SetUp", "1");
        push_tag(&mut out, "FEN", &fen.to_string());
    }
    let mut written: Vec<&str> = Vec::new();
    for (name, value) in &game.tags {
        let reserved =
            SEVEN_TAG_ROSTER.iter().any(|(n, _)| n == name) || name == "SetUp" || name == "FEN";
        // A tag printed twice would be ambiguous: the first one wins, as it
        // does for the roster above.
        if reserved || written.contains(&name.as_str()) || !is_symbol(name) {
            continue;
        }
        written.push(name);
        push_tag(&mut out, name, value);
    }
    out.push('\n');

    let mut lines = Lines { out, column: 0 };
    movetext(game, &mut lines);
    let mut out = lines.out;
    // The movetext's last line, then the blank line after the game.
    out.push_str("\n\n");
    out
}

/// Appends `[Name "value"]` and a line break.
fn push_tag(out: &mut String, name: &str, value: &str) {
    out.push('[');
    out.push_str(name);
    out.push_str(" \"");
    for c in value.chars() {
        match c {
            '\\' | '"' => {
                out.push('\\');
                out.push(c);
            }
            // A line break would split the tag over two lines, which no
            // reader accepts; other control characters are not allowed in
            // PGN either.
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out.push_str("\"]\n");
}

/// Whether `name` is a PGN symbol usable as a tag name (restricted to
/// letters, digits and `_`, the characters tag names use in practice).
fn is_symbol(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The movetext, token by token (a token is never split by a line break):
/// a move number stays with its move, and a clock comment is kept whole.
fn movetext(game: &PgnGame, lines: &mut Lines) {
    let (mut turn, mut number) = match &game.setup {
        Some(fen) => (fen.as_setup().turn, fen.as_setup().fullmoves.get()),
        None => (Color::White, 1),
    };
    // Each token is written into this buffer, then into the lines.
    let mut token = String::with_capacity(16);
    // Black's move needs its number (`N...`) when nothing before it in the
    // movetext says which move it belongs to: at the start and after a comment.
    let mut need_number = true;
    for m in &game.moves {
        token.clear();
        match turn {
            Color::White => {
                let _ = write!(token, "{number}. ");
            }
            Color::Black if need_number => {
                let _ = write!(token, "{number}... ");
            }
            Color::Black => {}
        }
        // The SAN straight into the token, not through `Display`.
        m.san.append_to_string(&mut token);
        lines.token(&token);
        need_number = false;
        if let Some(clock) = m.clock {
            token.clear();
            let _ = write!(token, "{{[%clk {}]}}", format_clock(clock));
            lines.token(&token);
            need_number = true;
        }
        if let Some(comment) = &m.comment {
            need_number |= push_comment(lines, comment);
        }
        if turn == Color::Black {
            number = number.saturating_add(1);
        }
        turn = !turn;
    }
    if let Some(comment) = &game.final_comment {
        push_comment(lines, comment);
    }
    lines.token(game.result_text());
}

/// Writes a `{comment}` word by word, so that it can be wrapped. Returns
/// whether a comment was written (an empty one is left out).
fn push_comment(lines: &mut Lines, comment: &str) -> bool {
    // A `}` would end the comment early and turn the rest into movetext;
    // line breaks and other control characters become plain spaces so that
    // wrapping alone decides where lines end.
    let clean: String = comment
        .chars()
        .map(|c| match c {
            '}' => ')',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect();
    let words: Vec<&str> = clean.split_whitespace().collect();
    let Some(last) = words.len().checked_sub(1) else {
        return false;
    };
    let mut token = String::new();
    for (i, word) in words.iter().enumerate() {
        token.clear();
        if i == 0 {
            token.push('{');
        }
        token.push_str(word);
        if i == last {
            token.push('}');
        }
        lines.token(&token);
    }
    true
}

/// Tokens joined with spaces into lines of at most [`MAX_LINE`] columns (a
/// token longer than that gets a line of its own), written as they come
/// (issue 38: a string per token, collected and then joined, was most of
/// writing a game's PGN).
struct Lines {
    out: String,
    /// Columns used on the current line.
    column: usize,
}

impl Lines {
    fn token(&mut self, token: &str) {
        let width = token.chars().count();
        if self.column > 0 {
            if self.column + 1 + width > MAX_LINE {
                self.out.push('\n');
                self.column = 0;
            } else {
                self.out.push(' ');
                self.column += 1;
            }
        }
        self.out.push_str(token);
        self.column += width;
    }
}

/// A game read from a PGN file.
#[derive(Debug, Clone)]
pub struct ImportedGame {
    /// Tags in file order.
    pub tags: Vec<(String, String)>,
    /// The start position.
    pub start: Chess,
    /// The `[FEN]` tag's position when the game does not start from the standard position.
    pub setup: Option<Fen>,
    /// The moves, legal in sequence from `start`.
    pub moves: Vec<Move>,
    /// The `%clk` time after each move, where the file gives one.
    pub clocks: Vec<Option<Seconds>>,
    /// The result from the movetext's termination marker (or the Result tag).
    pub result: Outcome,
}

/// Why a PGN file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PgnError {
    /// Reading failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The file is not well-formed PGN (an unterminated tag or comment).
    #[error("game {game} of the PGN file: {reason}")]
    Syntax {
        /// The game, counted from 1 in file order.
        game: usize,
        /// What is wrong.
        reason: String,
    },
    /// The `[FEN]` tag does not give a legal standard chess position.
    #[error("game {game} of the PGN file: the FEN tag \"{fen}\" is not usable: {reason}")]
    BadFen {
        /// The game, counted from 1 in file order.
        game: usize,
        /// The tag's value.
        fen: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A move of the movetext is not legal (or is ambiguous) where it is played.
    #[error(
        "game {game} of the PGN file, ply {ply} ({}{san}): the move is not legal in the position {fen}",
        move_number(.fen)
    )]
    IllegalMove {
        /// The game, counted from 1 in file order.
        game: usize,
        /// The half-move, counted from 1 at the game's start.
        ply: usize,
        /// The move as written in the file.
        san: String,
        /// The position before the move.
        fen: String,
    },
}

/// The move number a move played from `fen` is printed with (`12. ` or
/// `12... `), so that an error message points at the move as a reader of the
/// file sees it.
fn move_number(fen: &str) -> String {
    let fields: Vec<&str> = fen.split_whitespace().collect();
    match (fields.get(1), fields.get(5)) {
        (Some(&"w"), Some(number)) => format!("{number}. "),
        (Some(&"b"), Some(number)) => format!("{number}... "),
        _ => String::new(),
    }
}

/// Reads every game of a PGN file.
///
/// Variations are skipped; comments are only searched for `[%clk]`. A null
/// move (`--`, `Z0`) ends a game's moves: the moves after it are left out,
/// the result is still read. The first game that cannot be read stops the
/// reading with an error naming it.
pub fn read_games(reader: impl std::io::Read) -> Result<Vec<ImportedGame>, PgnError> {
    // Larger than the standard's 255 bytes: real files have long tags (URLs,
    // opening names), and the reader fails on a tag line it cannot buffer.
    let mut reader = Reader::build(reader)
        .set_supported_tag_line_length(4096)
        .set_supported_comment_length(4096)
        .finish();
    let mut importer = Importer { game: 0 };
    let mut games = Vec::new();
    loop {
        match reader.read_game(&mut importer) {
            Ok(None) => return Ok(games),
            Ok(Some(Ok(Some(game)))) => games.push(game),
            Ok(Some(Ok(None))) => {}
            Ok(Some(Err(e))) => return Err(e),
            Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                return Err(PgnError::Syntax {
                    game: importer.game.max(1),
                    reason: e.to_string(),
                });
            }
            Err(e) => return Err(PgnError::Io(e)),
        }
    }
}

/// The `pgn-reader` visitor that builds [`ImportedGame`]s.
struct Importer {
    /// The number of the game being read, from 1.
    game: usize,
}

/// A game being read.
struct GameState {
    tags: Vec<(String, String)>,
    start: Chess,
    setup: Option<Fen>,
    position: Chess,
    moves: Vec<Move>,
    clocks: Vec<Option<Seconds>>,
    outcome: Option<Outcome>,
    /// A comment read so far (the reader gives a long one in pieces).
    comment: Vec<u8>,
    /// A null move was read: the moves after it are not taken.
    after_null: bool,
}

impl Visitor for Importer {
    type Tags = Vec<(String, String)>;
    type Movetext = GameState;
    /// `None` for a "game" with neither tags nor movetext (stray text).
    type Output = Result<Option<ImportedGame>, PgnError>;

    fn begin_tags(&mut self) -> ControlFlow<Self::Output, Self::Tags> {
        self.game += 1;
        ControlFlow::Continue(Vec::new())
    }

    fn tag(
        &mut self,
        tags: &mut Self::Tags,
        name: &[u8],
        value: RawTag<'_>,
    ) -> ControlFlow<Self::Output> {
        let name = String::from_utf8_lossy(name).trim().to_owned();
        tags.push((name, unescape_tag(value.as_bytes())));
        ControlFlow::Continue(())
    }

    fn begin_movetext(&mut self, tags: Self::Tags) -> ControlFlow<Self::Output, Self::Movetext> {
        // The FEN tag alone is enough: many files omit `[SetUp "1"]`.
        let (start, setup) = match tags.iter().find(|(n, _)| n.eq_ignore_ascii_case("FEN")) {
            None => (Chess::default(), None),
            Some((_, text)) => match parse_start(text) {
                Ok(found) => found,
                Err(reason) => {
                    return ControlFlow::Break(Err(PgnError::BadFen {
                        game: self.game,
                        fen: text.clone(),
                        reason,
                    }));
                }
            },
        };
        ControlFlow::Continue(GameState {
            tags,
            position: start.clone(),
            start,
            setup,
            moves: Vec::new(),
            clocks: Vec::new(),
            outcome: None,
            comment: Vec::new(),
            after_null: false,
        })
    }

    fn san(&mut self, game: &mut Self::Movetext, san_plus: SanPlus) -> ControlFlow<Self::Output> {
        // A null move (`--`, `Z0`: a side passes, or a move nobody recorded)
        // cannot be played on a board, so the game's moves end there; what
        // follows would not be legal in sequence with them.
        if game.after_null || san_plus.san == San::Null {
            game.after_null = true;
            return ControlFlow::Continue(());
        }
        match san_plus.san.to_move(&game.position) {
            Ok(m) => {
                game.position.play_unchecked(m);
                game.moves.push(m);
                game.clocks.push(None);
                ControlFlow::Continue(())
            }
            Err(_) => ControlFlow::Break(Err(PgnError::IllegalMove {
                game: self.game,
                ply: game.moves.len() + 1,
                san: san_plus.to_string(),
                fen: Fen::from_position(&game.position, EnPassantMode::Legal).to_string(),
            })),
        }
    }

    fn partial_comment(
        &mut self,
        game: &mut Self::Movetext,
        comment: RawComment<'_>,
    ) -> ControlFlow<Self::Output> {
        game.comment.extend_from_slice(comment.as_bytes());
        ControlFlow::Continue(())
    }

    fn comment(
        &mut self,
        game: &mut Self::Movetext,
        comment: RawComment<'_>,
    ) -> ControlFlow<Self::Output> {
        game.comment.extend_from_slice(comment.as_bytes());
        // A clock in a comment before the first move belongs to no move, and
        // one after a null move to a move that is not taken.
        if !game.after_null
            && let (Some(clock), Some(last)) = (find_clock(&game.comment), game.clocks.last_mut())
        {
            *last = Some(clock);
        }
        game.comment.clear();
        ControlFlow::Continue(())
    }

    fn outcome(
        &mut self,
        game: &mut Self::Movetext,
        outcome: Outcome,
    ) -> ControlFlow<Self::Output> {
        game.outcome.get_or_insert(outcome);
        ControlFlow::Continue(())
    }

    fn end_game(&mut self, game: Self::Movetext) -> Self::Output {
        if game.tags.is_empty() && game.moves.is_empty() && game.outcome.is_none() {
            return Ok(None);
        }
        let result = game.outcome.unwrap_or_else(|| {
            game.tags
                .iter()
                .find(|(n, _)| n == "Result")
                .and_then(|(_, v)| v.trim().parse().ok())
                .unwrap_or(Outcome::Unknown)
        });
        Ok(Some(ImportedGame {
            tags: game.tags,
            start: game.start,
            setup: game.setup,
            moves: game.moves,
            clocks: game.clocks,
            result,
        }))
    }
}

/// Decodes a tag value's `\\` and `\"` escapes, reading left to right so that
/// an escaped backslash before an escaped quote (`\\\"`) decodes to `\"`.
/// Invalid UTF-8 is replaced rather than rejected: a name with a stray
/// Latin-1 byte should not stop a whole file from loading.
fn unescape_tag(raw: &[u8]) -> String {
    let mut bytes = Vec::with_capacity(raw.len());
    let mut iter = raw.iter().copied().peekable();
    while let Some(b) = iter.next() {
        if b == b'\\'
            && let Some(&next) = iter.peek()
            && (next == b'\\' || next == b'"')
        {
            bytes.push(next);
            iter.next();
        } else {
            bytes.push(b);
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The start position of a `[FEN]` tag, and the setup to record (none when
/// the tag just gives the standard start position).
fn parse_start(text: &str) -> Result<(Chess, Option<Fen>), String> {
    let fen = Fen::from_ascii(text.trim().as_bytes()).map_err(|e| e.to_string())?;
    let start: Chess = fen
        .clone()
        .into_position(CastlingMode::Standard)
        .map_err(|e| e.to_string())?;
    let standard = Fen::from_position(&start, EnPassantMode::Legal) == Fen::default();
    Ok((start, (!standard).then_some(fen)))
}

/// The time of the first `[%clk h:mm:ss]` command of a comment.
fn find_clock(comment: &[u8]) -> Option<Seconds> {
    const COMMAND: &[u8] = b"[%clk";
    let at = comment.windows(COMMAND.len()).position(|w| w == COMMAND)?;
    let rest = &comment[at + COMMAND.len()..];
    let start = rest.iter().position(|b| !b.is_ascii_whitespace())?;
    let rest = &rest[start..];
    let end = rest
        .iter()
        .position(|&b| b == b']' || b.is_ascii_whitespace())?;
    parse_clock(std::str::from_utf8(&rest[..end]).ok()?)
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use proptest::prelude::*;
    use shakmaty::{CastlingSide, KnownOutcome, Role};

    use super::*;

    /// A move as the writer takes it, parsed from text written by hand.
    fn mv(san: &str) -> PgnMove {
        PgnMove {
            san: san.parse().expect("hand-written SAN"),
            clock: None,
            comment: None,
        }
    }

    fn clocked(san: &str, clock: Seconds) -> PgnMove {
        PgnMove {
            clock: Some(clock),
            ..mv(san)
        }
    }

    fn tags(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    fn fen(text: &str) -> Fen {
        text.parse().expect("hand-written FEN")
    }

    fn white_wins() -> Outcome {
        Outcome::Known(KnownOutcome::Decisive {
            winner: Color::White,
        })
    }

    fn black_wins() -> Outcome {
        Outcome::Known(KnownOutcome::Decisive {
            winner: Color::Black,
        })
    }

    fn read_str(text: &str) -> Result<Vec<ImportedGame>, PgnError> {
        read_games(text.as_bytes())
    }

    /// The game as the writer would get it: SAN computed by shakmaty from
    /// the imported moves, clocks copied.
    fn to_pgn_game(game: &ImportedGame) -> PgnGame {
        let mut position = game.start.clone();
        let moves = game
            .moves
            .iter()
            .zip(&game.clocks)
            .map(|(&m, &clock)| PgnMove {
                san: SanPlus::from_move_and_play_unchecked(&mut position, m),
                clock,
                comment: None,
            })
            .collect();
        PgnGame {
            tags: game.tags.clone(),
            setup: game.setup.clone(),
            moves,
            result: game.result,
            special: None,
            final_comment: None,
        }
    }

    /// Movetext lines fit in 80 columns (tag lines cannot be wrapped).
    fn assert_lines_fit(text: &str) {
        for line in text.lines().filter(|l| !l.starts_with('[')) {
            assert!(line.chars().count() <= 80, "line too long: {line:?}");
        }
    }

    fn final_position(game: &ImportedGame) -> Chess {
        let mut position = game.start.clone();
        for &m in &game.moves {
            position.play_unchecked(m);
        }
        position
    }

    fn repo_file(relative: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
    }

    #[test]
    fn writes_standard_start_game() {
        let mut moves: Vec<PgnMove> = ["e4", "e5", "Qh5", "Nc6", "Bc4", "Nf6", "Qxf7#"]
            .into_iter()
            .map(mv)
            .collect();
        moves[1].comment = Some("  ".to_owned()); // empty: left out
        let game = PgnGame {
            tags: tags(&[
                ("Event", "Club"),
                ("White", "A"),
                ("Black", "B"),
                ("Date", "2025.05.01"),
                ("ECO", "C20"),
            ]),
            setup: None,
            moves,
            result: white_wins(),
            special: None,
            final_comment: Some("Checkmate".to_owned()),
        };
        let expected = "\
[Event \"Club\"]
[Site \"?\"]
[Date \"2025.05.01\"]
[Round \"?\"]
[White \"A\"]
[Black \"B\"]
[Result \"1-0\"]
[ECO \"C20\"]

1. e4 e5 2. Qh5 Nc6 3. Bc4 Nf6 4. Qxf7# {Checkmate} 1-0

";
        assert_eq!(write_pgn(&game), expected);
    }

    #[test]
    fn writes_setup_with_black_to_move() {
        let mut moves: Vec<PgnMove> = ["Rd8", "Ra7", "Rd1#"].into_iter().map(mv).collect();
        moves[1].comment = Some("a blunder".to_owned());
        let game = PgnGame {
            // Result, SetUp and FEN in the tags are ignored: the game's own
            // result and setup are authoritative.
            tags: tags(&[
                ("Result", "1-0"),
                ("SetUp", "0"),
                ("FEN", "8/8/8/8/8/8/8/8 w - - 0 1"),
                ("Round", "3.1"),
            ]),
            setup: Some(fen("4r1k1/5ppp/8/8/8/8/5PPP/R5K1 b - - 0 17")),
            moves,
            result: black_wins(),
            special: None,
            final_comment: None,
        };
        let expected = "\
[Event \"?\"]
[Site \"?\"]
[Date \"????.??.??\"]
[Round \"3.1\"]
[White \"?\"]
[Black \"?\"]
[Result \"0-1\"]
[SetUp \"1\"]
[FEN \"4r1k1/5ppp/8/8/8/8/5PPP/R5K1 b - - 0 17\"]

17... Rd8 18. Ra7 {a blunder} 18... Rd1# 0-1

";
        let text = write_pgn(&game);
        assert_eq!(text, expected);
        let read = read_str(&text).unwrap();
        assert_eq!(read.len(), 1);
        assert!(final_position(&read[0]).is_checkmate());
        assert_eq!(read[0].result, black_wins());
    }

    #[test]
    fn escapes_tags_and_drops_bad_names() {
        let game = PgnGame {
            tags: tags(&[
                ("White", "Doe, \"Jo\" \\ Jr."),
                ("Black", "line\nbreak\ttab"),
                ("Bad Name", "x"),
                ("9Round", "x"),
                ("_x", "x"),
                ("Été", "x"),
                ("", "x"),
                ("White", "second White"),
                ("Annotator", "me"),
                ("Annotator", "again"),
            ]),
            setup: None,
            moves: Vec::new(),
            result: Outcome::Unknown,
            special: None,
            final_comment: None,
        };
        let expected = "\
[Event \"?\"]
[Site \"?\"]
[Date \"????.??.??\"]
[Round \"?\"]
[White \"Doe, \\\"Jo\\\" \\\\ Jr.\"]
[Black \"line break tab\"]
[Result \"*\"]
[9Round \"x\"]
[Annotator \"me\"]

*

";
        let text = write_pgn(&game);
        assert_eq!(text, expected);
        let read = read_str(&text).unwrap();
        assert_eq!(read.len(), 1);
        assert_eq!(
            read[0].tags[4],
            ("White".into(), "Doe, \"Jo\" \\ Jr.".into())
        );
        assert_eq!(read[0].tags[5], ("Black".into(), "line break tab".into()));
        assert!(read[0].moves.is_empty());
    }

    #[test]
    fn writes_clocks_and_sanitized_comments() {
        let mut moves = vec![
            clocked("e4", 300),
            clocked("e5", 299),
            mv("Nf3"),
            clocked("Nc6", 3723),
        ];
        moves[1].comment = Some("fine } really\nok".to_owned());
        let game = PgnGame {
            tags: Vec::new(),
            setup: None,
            moves,
            result: Outcome::Unknown,
            special: None,
            final_comment: Some("stopped {here}".to_owned()),
        };
        // The first movetext line is 77 columns: the clock of Nc6 does not fit.
        let expected = "\
[Event \"?\"]
[Site \"?\"]
[Date \"????.??.??\"]
[Round \"?\"]
[White \"?\"]
[Black \"?\"]
[Result \"*\"]

1. e4 {[%clk 0:05:00]} 1... e5 {[%clk 0:04:59]} {fine ) really ok} 2. Nf3 Nc6
{[%clk 1:02:03]} {stopped {here)} *

";
        let text = write_pgn(&game);
        assert_eq!(text, expected);
        let read = read_str(&text).unwrap();
        assert_eq!(read[0].clocks, vec![Some(300), Some(299), None, Some(3723)]);
    }

    #[test]
    fn wraps_a_long_game_at_80_columns() {
        // Knights out and back, 40 times: 160 plies, each with a clock.
        let sans = ["Nf3", "Nf6", "Ng1", "Ng8"];
        let moves: Vec<PgnMove> = (0..160)
            .map(|i| clocked(sans[i % 4], 7200 - i as Seconds))
            .collect();
        let game = PgnGame {
            tags: tags(&[("Event", "A very long game")]),
            setup: None,
            moves,
            result: Outcome::Known(KnownOutcome::Draw),
            special: None,
            final_comment: Some(format!("{} end", "x".repeat(100))),
        };
        let text = write_pgn(&game);
        assert_lines_fit(&text.replace(&"x".repeat(100), "x"));
        // The over-long word ends its line, the rest of its comment goes on.
        assert!(text.ends_with("\nend} 1/2-1/2\n\n"));
        let movetext = text.split("\n\n").nth(1).unwrap();
        let lines: Vec<&str> = movetext.lines().collect();
        assert!(lines.len() > 40);
        for line in &lines {
            assert_eq!(line.trim(), *line, "stray space in {line:?}");
        }
        // The over-long word stands alone on its line.
        assert!(lines.contains(&format!("{{{}", "x".repeat(100)).as_str()));
        // Greedy filling: no line could have taken the next line's first token.
        for pair in lines.windows(2) {
            // A move number stays with its move, a clock comment is whole.
            let pieces = if pair[1].starts_with(|c: char| c.is_ascii_digit())
                || pair[1].starts_with("{[%clk")
            {
                2
            } else {
                1
            };
            let next_unit = pair[1]
                .split(' ')
                .take(pieces)
                .collect::<Vec<_>>()
                .join(" ")
                .chars()
                .count();
            assert!(pair[0].chars().count() + 1 + next_unit > 80, "{pair:?}");
        }
        // Independently built flat text: the same tokens on one line.
        let mut flat = String::new();
        for i in 0..160usize {
            let number = i / 2 + 1;
            let clock = format_clock(7200 - i as Seconds);
            if i % 2 == 0 {
                flat += &format!("{number}. {} {{[%clk {clock}]}} ", sans[i % 4]);
            } else {
                flat += &format!("{number}... {} {{[%clk {clock}]}} ", sans[i % 4]);
            }
        }
        flat += &format!("{{{} end}} 1/2-1/2", "x".repeat(100));
        assert_eq!(lines.join(" "), flat);
        let read = read_str(&text).unwrap();
        assert_eq!(read[0].moves.len(), 160);
        assert_eq!(read[0].clocks[159], Some(7200 - 159));
    }

    #[test]
    fn reads_the_edge_case_file() {
        let path = repo_file("pgn/edge-cases.pgn");
        let games = read_games(std::fs::File::open(path).unwrap()).unwrap();
        assert_eq!(games.len(), 4);

        // En passant and both castlings.
        let g = &games[0];
        assert_eq!(g.moves.len(), 12);
        assert!(g.setup.is_none());
        assert!(g.moves[4].is_en_passant());
        assert_eq!(g.moves[10].castling_side(), Some(CastlingSide::KingSide));
        assert_eq!(g.moves[11].castling_side(), Some(CastlingSide::QueenSide));
        assert_eq!(g.result, Outcome::Unknown);

        // Promotion to each piece, with and without capture.
        let g = &games[1];
        let setup = g.setup.as_ref().unwrap().as_setup();
        assert_eq!((setup.turn, setup.fullmoves.get()), (Color::White, 40));
        let mut promotions: Vec<(Role, bool)> = g
            .moves
            .iter()
            .filter_map(|m| Some((m.promotion()?, m.is_capture())))
            .collect();
        promotions.sort();
        let mut all: Vec<(Role, bool)> = [Role::Knight, Role::Bishop, Role::Rook, Role::Queen]
            .into_iter()
            .flat_map(|r| [(r, false), (r, true)])
            .collect();
        all.sort();
        assert_eq!(promotions, all);

        // From a setup with Black to move, to checkmate.
        let g = &games[2];
        assert_eq!(g.start.turn(), Color::Black);
        assert_eq!(g.start.fullmoves().get(), 17);
        assert!(final_position(g).is_checkmate());
        assert_eq!(g.result, black_wins());

        // Stalemate.
        let g = &games[3];
        assert_eq!(g.moves.len(), 19);
        assert!(final_position(g).is_stalemate());
        assert_eq!(g.result, Outcome::Known(KnownOutcome::Draw));

        // Each game survives being written and read again.
        for g in &games {
            let text = write_pgn(&to_pgn_game(g));
            let again = read_str(&text).unwrap();
            assert_eq!(again.len(), 1);
            assert_eq!(again[0].moves, g.moves);
            assert_eq!(again[0].setup, g.setup);
            assert_eq!(again[0].result, g.result);
        }
    }

    #[test]
    fn reads_the_reader_edge_case_file() {
        let path = repo_file("pgn/reader-edge-cases.pgn");
        let games = read_games(std::fs::File::open(path).unwrap()).unwrap();
        assert_eq!(games.len(), 4);

        let g = &games[0];
        assert_eq!(
            g.tags,
            tags(&[
                ("Event", "Reader edge cases: \"quotes\" and \\ backslash"),
                ("Site", "?"),
                ("Date", "2025.??.??"),
                ("Round", "1"),
                ("White", "Doe, \"Jo\" \\"),
                ("Black", "Ødegaard, Åse"),
                ("Result", "1-0"),
                ("Annotator", "\\\"q\\\""),
            ])
        );
        let sans: Vec<String> = {
            let mut position = g.start.clone();
            g.moves
                .iter()
                .map(|&m| SanPlus::from_move_and_play_unchecked(&mut position, m).to_string())
                .collect()
        };
        assert_eq!(sans, ["e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "O-O"]);
        assert_eq!(
            g.clocks,
            [
                Some(300),
                Some(299),
                None,
                None,
                None,
                Some(3723),
                Some(270)
            ]
        );
        // No termination marker: the Result tag decides.
        assert_eq!(g.result, white_wins());

        // A FEN tag without SetUp; the movetext's marker wins over the tag.
        let g = &games[1];
        assert_eq!(
            g.setup.as_ref().map(|f| f.to_string()).as_deref(),
            Some("8/8/8/8/8/2k5/8/K1q5 w - - 12 61")
        );
        assert_eq!(g.moves.len(), 6);
        assert_eq!(g.result, Outcome::Unknown);

        // A game without tags, its moves ending at a null move.
        let g = &games[2];
        assert!(g.tags.is_empty());
        assert_eq!(g.moves.len(), 3);
        assert_eq!(g.clocks, [None, None, Some(600)]);
        assert_eq!(g.result, Outcome::Known(KnownOutcome::Draw));

        // A FEN tag giving the standard start is no setup.
        let g = &games[3];
        assert!(g.setup.is_none());
        assert!(final_position(g).is_checkmate());
    }

    #[test]
    fn errors_name_the_game_the_move_and_the_position() {
        let text = "[Event \"one\"]\n\n1. e4 e5 *\n\n[Event \"two\"]\n\n1. e4 e5 2. Ke3 *\n";
        match read_str(text) {
            Err(PgnError::IllegalMove {
                game,
                ply,
                san,
                fen,
            }) => {
                assert_eq!((game, ply, san.as_str()), (2, 3, "Ke3"));
                assert_eq!(
                    fen,
                    "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"
                );
            }
            other => panic!("{other:?}"),
        }
        let err = read_str(text).unwrap_err().to_string();
        assert_eq!(
            err,
            "game 2 of the PGN file, ply 3 (2. Ke3): the move is not legal in the position \
             rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"
        );

        let no_kings = "[FEN \"8/8/8/8/8/8/8/8 w - - 0 1\"]\n\n*\n";
        assert!(matches!(
            read_str(no_kings),
            Err(PgnError::BadFen { game: 1, .. })
        ));
        let garbage = "[Event \"a\"]\n\n*\n\n[FEN \"garbage\"]\n\n1. e4 *\n";
        match read_str(garbage) {
            Err(e @ PgnError::BadFen { game: 2, .. }) => {
                assert!(e.to_string().contains("garbage"), "{e}");
            }
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            read_str("[Event \"a\"]\n\n1. e4 {unterminated"),
            Err(PgnError::Syntax { game: 1, .. })
        ));
    }

    #[test]
    fn reads_long_comments_and_tags() {
        let long = "y".repeat(10_000);
        let text = format!(
            "[Opening \"{}\"]\n\n1. e4 {{{long} [%clk 0:01:02]}} 1... e5 {{[%clk 0:00:09]}} *\n",
            "o".repeat(1000)
        );
        let games = read_str(&text).unwrap();
        assert_eq!(games[0].tags[0].1.len(), 1000);
        assert_eq!(games[0].clocks, [Some(62), Some(9)]);
    }

    #[test]
    fn every_corpus_file_reads() {
        let Some(dir) = crate::test_support::shared("corpus") else {
            return;
        };
        let entries = std::fs::read_dir(&dir).unwrap();
        let mut count = 0;
        for entry in entries {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "pgn") {
                let file = std::fs::File::open(&path).unwrap();
                let games = read_games(file).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                assert!(!games.is_empty(), "{}", path.display());
                if path.ends_with("anastasian-lewis.pgn") {
                    // 41... Z0, a null move, ends the moves; 1-0 still counts.
                    assert_eq!(games[0].moves.len(), 81);
                    assert_eq!(games[0].result, white_wins());
                }
                for g in &games {
                    assert_eq!(g.moves.len(), g.clocks.len());
                    // A BOM must not leak into the first tag's name.
                    assert!(g.tags.iter().all(|(n, _)| is_symbol(n)), "{:?}", g.tags);
                }
                count += 1;
            }
        }
        assert!(count >= 7, "only {count} corpus files");
    }

    #[test]
    fn lichess_sample_round_trips() {
        let Some(path) = crate::test_support::shared("corpus/lichess-sample.pgn") else {
            return;
        };
        let file = std::fs::File::open(&path).unwrap();
        let games = read_games(file).unwrap();
        assert_eq!(games.len(), 438);
        assert!(games[0].clocks.iter().all(Option::is_some));
        // The first game, checked by hand against the file.
        assert_eq!(games[0].moves.len(), 42);
        assert_eq!(games[0].clocks[0], Some(300));
        assert_eq!(games[0].clocks[41], Some(52));
        assert_eq!(games[0].result, black_wins());
        for (i, game) in games.iter().enumerate() {
            let text = write_pgn(&to_pgn_game(game));
            assert_lines_fit(&text);
            let again = read_str(&text).unwrap_or_else(|e| panic!("game {}: {e}", i + 1));
            assert_eq!(again.len(), 1);
            let again = &again[0];
            assert_eq!(again.moves, game.moves, "game {}", i + 1);
            assert_eq!(again.clocks, game.clocks, "game {}", i + 1);
            assert_eq!(again.result, game.result, "game {}", i + 1);
            for tag in &game.tags {
                if tag.0 != "Result" {
                    assert!(again.tags.contains(tag), "game {}: {tag:?}", i + 1);
                }
            }
        }
        // Concatenated, the written games form one multi-game file.
        let all: String = games.iter().map(|g| write_pgn(&to_pgn_game(g))).collect();
        assert_eq!(read_str(&all).unwrap().len(), 438);
    }

    /// Start positions for the random games: the standard one, and setups
    /// with Black to move and a late move number.
    const STARTS: [Option<&str>; 3] = [
        None,
        Some("r3k2r/pppq1ppp/2npbn2/4p3/4P3/2NPBN2/PPPQ1PPP/R3K2R b KQkq - 4 17"),
        Some("8/2P5/8/8/3k4/8/4Kp2/8 w - - 0 99"),
    ];

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn random_games_survive_write_and_read(
            start in 0..STARTS.len(),
            picks in prop::collection::vec(any::<prop::sample::Index>(), 0..120),
            clocks in prop::collection::vec(prop::option::of(0u32..360_000), 120),
            comments in prop::collection::vec(prop::option::of("[^\\[]{0,30}"), 120),
            white in "\\PC{0,20}",
        ) {
            let setup = STARTS[start].map(fen);
            let mut position: Chess = match &setup {
                Some(f) => f.clone().into_position(CastlingMode::Standard).unwrap(),
                None => Chess::default(),
            };
            let mut legal = Vec::new();
            let mut moves = Vec::new();
            for (i, pick) in picks.iter().enumerate() {
                let choices = position.legal_moves();
                if choices.is_empty() {
                    break;
                }
                let m = choices[pick.index(choices.len())];
                legal.push(m);
                moves.push(PgnMove {
                    san: SanPlus::from_move_and_play_unchecked(&mut position, m),
                    clock: clocks[i],
                    comment: comments[i].clone(),
                });
            }
            let game = PgnGame {
                tags: tags(&[("White", &white)]),
                setup: setup.clone(),
                moves,
                result: Outcome::Unknown,
                special: None,
                final_comment: None,
            };
            let text = write_pgn(&game);
            assert_lines_fit(&text);
            let read = read_str(&text).unwrap();
            prop_assert_eq!(read.len(), 1);
            prop_assert_eq!(&read[0].moves, &legal);
            prop_assert_eq!(&read[0].clocks[..], &clocks[..legal.len()]);
            prop_assert_eq!(&read[0].setup, &setup);
            prop_assert_eq!(&read[0].tags[4].1, &white);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..2000)) {
            let _ = read_games(&bytes[..]);
        }

        #[test]
        fn pgn_like_soup_never_panics(
            tokens in prop::collection::vec(
                prop::sample::select(vec![
                    "[", "]", "\"", "\\", "{", "}", "(", ")", "\n", "\n\n", " ", "\r\n",
                    "1.", "1...", "e4", "e5", "Nf3", "O-O", "0-0-0", "exd6", "a8=Q", "--",
                    "1-0", "0-1", "1/2-1/2", "*", "$1", "!?", "%", ";", "[%clk 0:00:01]",
                    "[Event \"x\"]\n", "[FEN \"", "8/8/8/8/8/8/8/8 w - - 0 1",
                    "4k3/8/8/8/8/8/8/4K3 b - - 0 1", "\"]\n", "\u{feff}", "\u{0}", "\u{ff}",
                ]),
                0..200,
            )
        ) {
            let _ = read_str(&tokens.concat());
        }
    }
}
