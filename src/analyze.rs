//! `eboard analyze`: can each side still checkmate, and is the position
//! dead? One FEN from the command line, or one FEN per line with `--batch`.
//!
//! The CLI binary owns argument parsing and the process exit; this module
//! owns everything else, so that it can be tested without a process.

use std::{
    fs::File,
    io::{self, BufRead, BufReader, Write},
    path::PathBuf,
    time::Duration,
};

use serde::Serialize;
use shakmaty::{
    CastlingMode, Chess, Color, FromSetup, Position, PositionError, PositionErrorKinds, fen::Fen,
};

use crate::{
    event::side_name,
    winnability::{self, Analysis, Budget, UnknownCause, Verdict, WinnabilityError},
};

/// Arguments of `eboard analyze`.
#[derive(clap::Args, Clone, Debug, Default, PartialEq, Eq)]
pub struct AnalyzeArgs {
    /// Position as FEN; the move counters, castling and en passant fields may
    /// be left out (then: no rights, no en passant square). Quoting is
    /// optional: the words are joined with spaces, and words after the FEN
    /// are ignored.
    #[arg(
        value_name = "FEN",
        num_args = 1..,
        required_unless_present = "batch",
        conflicts_with = "batch"
    )]
    pub fen: Vec<String>,

    /// Print JSON: {"fen", "white_can_mate", "black_can_mate", "dead",
    /// "helpmate_white", "helpmate_black", "checkmated", "stalemate"}, with
    /// true/false/null for proven yes/proven no/undecided, helpmates as
    /// lists of UCI moves or null, "checkmated" the side to move when it is
    /// mated ("white"/"black") or null.
    #[arg(long)]
    pub json: bool,

    /// Read one FEN per line from FILE ('-' for standard input) and print
    /// one JSON object per line, in input order. Blank lines and lines
    /// starting with '#' are skipped. A line that fails gives
    /// {"line", "input", "error"} and the exit status becomes 1.
    #[arg(long, value_name = "FILE|-")]
    pub batch: Option<PathBuf>,

    /// Give up on a side after this many milliseconds and answer "unknown".
    /// Without it only the solver's fixed node limits apply, so answers are
    /// reproducible.
    #[arg(long, value_name = "MS")]
    pub time_limit_ms: Option<u64>,
}

impl AnalyzeArgs {
    /// The analysis budget these arguments ask for.
    pub fn budget(&self) -> Budget {
        match self.time_limit_ms {
            None => Budget::DETERMINISTIC,
            Some(ms) => Budget::with_time_limit(Duration::from_millis(ms)),
        }
    }
}

/// Why `eboard analyze` could not do its job. Per-line failures in batch
/// mode are not errors: they are reported in the output and in the exit
/// status.
#[derive(Debug, thiserror::Error)]
pub enum AnalyzeError {
    /// The single FEN given is not a legal position.
    #[error(transparent)]
    Fen(#[from] FenLineError),
    /// The analysis of the single FEN failed.
    #[error(transparent)]
    Analysis(#[from] WinnabilityError),
    /// The batch file could not be opened or read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file named by `--batch`.
        path: PathBuf,
        /// What went wrong.
        source: io::Error,
    },
    /// Writing the output failed.
    #[error("cannot write output: {0}")]
    Write(#[source] io::Error),
}

impl AnalyzeError {
    /// Process exit status for this error: 2 for bad input (FEN or batch
    /// file), 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            AnalyzeError::Fen(_) | AnalyzeError::Read { .. } => 2,
            AnalyzeError::Analysis(_) | AnalyzeError::Write(_) => 1,
        }
    }
}

/// A FEN line that does not describe a legal position.
#[derive(Debug, thiserror::Error)]
pub enum FenLineError {
    /// Nothing on the line.
    #[error("empty line, expected a FEN")]
    Empty,
    /// The placement is not followed by `w` or `b`.
    #[error("FEN lacks the side to move ('w' or 'b'): {input}")]
    MissingTurn {
        /// The line as given.
        input: String,
    },
    /// shakmaty cannot parse the FEN text.
    #[error("invalid FEN ({source}): {fen}")]
    Syntax {
        /// The FEN fields taken from the line.
        fen: String,
        /// The parser's complaint.
        source: shakmaty::fen::ParseFenError,
    },
    /// The FEN parses but is not a legal chess position.
    #[error("illegal position ({reason}): {fen}")]
    Illegal {
        /// The FEN fields taken from the line.
        fen: String,
        /// shakmaty's list of violated rules.
        reason: String,
    },
}

/// A position read from a FEN line.
#[derive(Clone, Debug)]
pub struct FenLine {
    /// The FEN fields found on the line, joined by single spaces.
    pub fen: String,
    /// The position they describe.
    pub position: Chess,
}

/// Reads a FEN from the start of `line`.
///
/// The piece placement and the side to move are required. Castling, en
/// passant and the two move counters are taken while the next words look
/// like those fields, in that order; the first word that does not ends the
/// FEN and it and everything after it are ignored (labels, game ids,
/// comments). Chess960 castling rights (Shredder or X-FEN letters) are
/// accepted, and so are positions no game can reach because of too much
/// material or an impossible check.
///
/// # Errors
///
/// [`FenLineError`] when the FEN is missing, malformed or illegal.
pub fn parse_fen_line(line: &str) -> Result<FenLine, FenLineError> {
    let mut words = line.split_whitespace().peekable();
    let placement = words.next().ok_or(FenLineError::Empty)?;
    let turn = words
        .next()
        .filter(|w| matches!(*w, "w" | "b"))
        .ok_or_else(|| FenLineError::MissingTurn {
            input: line.trim().to_owned(),
        })?;
    let mut fields = vec![placement, turn];
    let optional_fields: [fn(&str) -> bool; 4] =
        [is_castling_field, is_ep_field, is_number, is_number];
    for looks_right in optional_fields {
        match words.peek() {
            Some(word) if looks_right(word) => fields.push(words.next().unwrap_or_default()),
            _ => break,
        }
    }
    let fen_text = fields.join(" ");

    let fen: Fen = fen_text.parse().map_err(|source| FenLineError::Syntax {
        fen: fen_text.clone(),
        source,
    })?;
    let setup = fen.into_setup();
    let mode = CastlingMode::detect(&setup);
    // Composed positions (test suites, problem collections) may hold more
    // material than a game can produce, or checks no last move could give;
    // the move rules still apply to them, so they are analysed all the same.
    let position = Chess::from_setup(setup, mode)
        .or_else(PositionError::ignore_too_much_material)
        .or_else(PositionError::ignore_impossible_check)
        .map_err(|err| FenLineError::Illegal {
            fen: fen_text.clone(),
            reason: describe_impossible(err.kinds()),
        })?;
    Ok(FenLine {
        fen: fen_text,
        position,
    })
}

/// shakmaty's objections to a position, in words a user can act on.
fn describe_impossible(kinds: PositionErrorKinds) -> String {
    const REASONS: [(PositionErrorKinds, &str); 10] = [
        (PositionErrorKinds::EMPTY_BOARD, "the board is empty"),
        (PositionErrorKinds::MISSING_KING, "a side has no king"),
        (
            PositionErrorKinds::TOO_MANY_KINGS,
            "a side has more than one king",
        ),
        (
            PositionErrorKinds::PAWNS_ON_BACKRANK,
            "a pawn stands on the first or eighth rank",
        ),
        (
            PositionErrorKinds::INVALID_CASTLING_RIGHTS,
            "a castling right has no king or rook in place for it",
        ),
        (
            PositionErrorKinds::INVALID_EP_SQUARE,
            "the en passant square does not follow a pawn's double step",
        ),
        (
            PositionErrorKinds::OPPOSITE_CHECK,
            "the side not to move is in check",
        ),
        (
            PositionErrorKinds::IMPOSSIBLE_CHECK,
            "no last move can have given this check",
        ),
        (
            PositionErrorKinds::TOO_MUCH_MATERIAL,
            "more material than a game can have",
        ),
        (PositionErrorKinds::VARIANT, "not a standard chess position"),
    ];
    let reasons: Vec<&str> = REASONS
        .iter()
        .filter(|(kind, _)| kinds.contains(*kind))
        .map(|(_, reason)| *reason)
        .collect();
    if reasons.is_empty() {
        "not a legal chess position".to_owned()
    } else {
        reasons.join("; ")
    }
}

fn is_castling_field(word: &str) -> bool {
    word == "-"
        || (word.len() <= 4
            && word
                .bytes()
                .all(|b| matches!(b, b'K' | b'Q' | b'k' | b'q' | b'A'..=b'H' | b'a'..=b'h')))
}

fn is_ep_field(word: &str) -> bool {
    word == "-" || matches!(word.as_bytes(), [b'a'..=b'h', b'1'..=b'8'])
}

fn is_number(word: &str) -> bool {
    !word.is_empty() && word.bytes().all(|b| b.is_ascii_digit())
}

/// Both sides' analyses of one position.
#[derive(Clone, Debug)]
pub struct Report {
    /// The FEN as read.
    pub fen: String,
    pub position: Chess,
    /// Can White still checkmate?
    pub white: Analysis,
    /// Can Black still checkmate?
    pub black: Analysis,
}

impl Report {
    /// The side that is checkmated, when the side to move is (Art. 5.1.1).
    pub fn checkmated(&self) -> Option<Color> {
        self.position.is_checkmate().then(|| self.position.turn())
    }

    /// Whether the side to move is stalemated (Art. 5.2.1).
    pub fn stalemate(&self) -> bool {
        self.position.is_stalemate()
    }

    /// Whether the position is dead (FIDE 5.2.2): neither side can mate.
    /// A stalemate is dead (no move at all is left); a checkmate is not
    /// (one side has mated).
    pub fn dead(&self) -> Verdict {
        match (self.white.verdict, self.black.verdict) {
            (Verdict::No, Verdict::No) => Verdict::Yes,
            (Verdict::Yes, _) | (_, Verdict::Yes) => Verdict::No,
            _ => Verdict::Unknown,
        }
    }

    /// The report in the JSON shape of `--json` and `--batch`.
    pub fn to_json(&self) -> JsonReport<'_> {
        let line = |a: &'_ Analysis| a.helpmate.as_ref().map(|h| h.uci.clone());
        JsonReport {
            fen: &self.fen,
            white_can_mate: self.white.verdict.as_option(),
            black_can_mate: self.black.verdict.as_option(),
            dead: self.dead().as_option(),
            helpmate_white: line(&self.white),
            helpmate_black: line(&self.black),
            checkmated: self.checkmated().map(side_name),
            stalemate: self.stalemate(),
        }
    }

    /// Writes the human-readable report.
    ///
    /// # Errors
    ///
    /// Those of `out`.
    pub fn write_human(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "Position: {}", self.fen)?;
        if let Some(mated) = self.checkmated() {
            writeln!(
                out,
                "Checkmate: {} has mated, {} is checkmated and the game is over (Art. 5.1.1)",
                capitalized(mated.other()),
                capitalized(mated)
            )?;
        } else if self.stalemate() {
            writeln!(
                out,
                "Stalemate: {} has no legal move and is not in check, the game is drawn (Art. 5.2.1)",
                capitalized(self.position.turn())
            )?;
        }
        for (name, analysis) in [("White", &self.white), ("Black", &self.black)] {
            write!(out, "{name} can checkmate: ")?;
            match (analysis.verdict, &analysis.helpmate) {
                (Verdict::Yes, Some(helpmate)) if helpmate.san.is_empty() => {
                    writeln!(out, "yes, {name} has mated")?
                }
                (Verdict::Yes, Some(helpmate)) => writeln!(
                    out,
                    "yes, for example {}",
                    numbered_line(&self.position, &helpmate.san)
                )?,
                (Verdict::Yes, None) => writeln!(out, "yes")?,
                (Verdict::No, _) => writeln!(out, "no")?,
                (Verdict::Unknown, _) => writeln!(
                    out,
                    "unknown ({})",
                    describe_unknown(analysis.unknown_cause)
                )?,
            }
        }
        let dead = match self.dead() {
            Verdict::Yes if self.stalemate() => "yes: stalemate, neither side can checkmate",
            Verdict::Yes => "yes: neither side can checkmate, the game is drawn",
            Verdict::No if self.checkmated().is_some() => "no: the game ended in checkmate",
            Verdict::No => "no",
            Verdict::Unknown => "unknown",
        };
        writeln!(out, "Dead position (FIDE 5.2.2): {dead}")
    }
}

fn capitalized(color: Color) -> &'static str {
    match color {
        Color::White => "White",
        Color::Black => "Black",
    }
}

fn describe_unknown(cause: Option<UnknownCause>) -> &'static str {
    match cause {
        Some(UnknownCause::NodeLimit) | None => "the solver's node limit was reached",
        Some(UnknownCause::TimeLimit) => "the time limit was reached",
        Some(UnknownCause::CastlingNotRepresentable) => {
            "no mate without castling, but Chess960 castling is not analysed"
        }
    }
}

/// SAN moves with move numbers, starting from `start`'s move number and
/// side to move: "12... Kg7 13. Qh6#".
fn numbered_line(start: &Chess, san: &[String]) -> String {
    let mut number = start.fullmoves().get();
    let mut turn = start.turn();
    let mut text = String::new();
    for (i, mv) in san.iter().enumerate() {
        if !text.is_empty() {
            text.push(' ');
        }
        match turn {
            Color::White => text.push_str(&format!("{number}. ")),
            Color::Black if i == 0 => text.push_str(&format!("{number}... ")),
            Color::Black => {}
        }
        text.push_str(mv);
        if turn == Color::Black {
            number += 1;
        }
        turn = turn.other();
    }
    text
}

/// `--json` and `--batch` output for one position. Field order is the
/// documented one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct JsonReport<'a> {
    /// The FEN as read.
    pub fen: &'a str,
    /// true: proven; false: proven impossible; null: undecided.
    pub white_can_mate: Option<bool>,
    /// As `white_can_mate`, for Black.
    pub black_can_mate: Option<bool>,
    /// true: dead position; false: some side can mate; null: undecided.
    pub dead: Option<bool>,
    /// White's helpmate in UCI, when `white_can_mate` is true.
    pub helpmate_white: Option<Vec<String>>,
    /// Black's helpmate in UCI, when `black_can_mate` is true.
    pub helpmate_black: Option<Vec<String>>,
    /// "white" or "black" when the side to move is checkmated, else null.
    pub checkmated: Option<&'static str>,
    /// Whether the side to move is stalemated.
    pub stalemate: bool,
}

/// `--batch` output for a line that could not be analysed.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct JsonLineError<'a> {
    /// 1-based line number in the input.
    pub line: usize,
    /// The line, trimmed.
    pub input: &'a str,
    /// What went wrong.
    pub error: String,
}

/// Why one line of a batch could not be analysed.
#[derive(Debug, thiserror::Error)]
pub enum LineError {
    /// Not a legal position.
    #[error(transparent)]
    Fen(#[from] FenLineError),
    /// The analysis failed.
    #[error(transparent)]
    Analysis(#[from] WinnabilityError),
}

/// Full analysis of both sides of `position`.
///
/// # Errors
///
/// See [`winnability::can_checkmate`].
pub fn analyze_position(
    fen: String,
    position: Chess,
    budget: Budget,
) -> Result<Report, WinnabilityError> {
    let white = winnability::can_checkmate(&position, Color::White, budget)?;
    let black = winnability::can_checkmate(&position, Color::Black, budget)?;
    Ok(Report {
        fen,
        position,
        white,
        black,
    })
}

/// Reads a FEN line (see [`parse_fen_line`]) and analyses it: what
/// `--batch` does with each line.
///
/// # Errors
///
/// [`LineError`] for a bad FEN or a failed analysis.
pub fn analyze_line(line: &str, budget: Budget) -> Result<Report, LineError> {
    let FenLine { fen, position } = parse_fen_line(line)?;
    Ok(analyze_position(fen, position, budget)?)
}

/// Runs `eboard analyze`, writing results to `out`.
///
/// Returns the exit status on completion: 0, or 1 when some batch line
/// failed. On `Err` the caller prints the error on one line to standard
/// error and exits with [`AnalyzeError::exit_code`].
///
/// # Errors
///
/// [`AnalyzeError`]: bad single FEN, failed analysis, unreadable batch
/// file, or failed output.
pub fn run(args: &AnalyzeArgs, out: &mut dyn Write) -> Result<i32, AnalyzeError> {
    let budget = args.budget();
    if let Some(path) = &args.batch {
        let read_error = |source| AnalyzeError::Read {
            path: path.clone(),
            source,
        };
        let result = if path.as_os_str() == "-" {
            let bar = crate::progress::bytes(None, "analysing positions");
            let result = run_batch(&mut BufReader::new(bar.wrap_read(io::stdin())), budget, out);
            bar.finish_and_clear();
            result
        } else {
            let file = File::open(path).map_err(read_error)?;
            let len = file.metadata().ok().map(|m| m.len());
            let bar = crate::progress::bytes(len, "analysing positions");
            let result = run_batch(&mut BufReader::new(bar.wrap_read(file)), budget, out);
            bar.finish_and_clear();
            result
        };
        return result.map_err(|err| match err {
            BatchError::Read(source) => read_error(source),
            BatchError::Write(source) => AnalyzeError::Write(source),
        });
    }

    let FenLine { fen, position } = parse_fen_line(&args.fen.join(" "))?;
    let report = analyze_position(fen, position, budget)?;
    if args.json {
        write_json_line(out, &report.to_json())
    } else {
        report.write_human(out)
    }
    .map_err(AnalyzeError::Write)?;
    Ok(0)
}

/// I/O failure in [`run_batch`]: reading the input or writing the output.
#[derive(Debug, thiserror::Error)]
pub enum BatchError {
    /// Reading the input failed.
    #[error("cannot read input: {0}")]
    Read(#[source] io::Error),
    /// Writing the output failed.
    #[error("cannot write output: {0}")]
    Write(#[source] io::Error),
}

/// The `--batch` loop: one JSON object per FEN line of `input`, in order.
/// Returns the exit status: 1 if any line failed, else 0.
///
/// # Errors
///
/// [`BatchError`] when reading or writing fails; bad lines are reported in
/// the output instead.
pub fn run_batch(
    input: &mut dyn BufRead,
    budget: Budget,
    out: &mut dyn Write,
) -> Result<i32, BatchError> {
    let mut status = 0;
    let mut raw = Vec::new();
    let mut number = 0;
    loop {
        raw.clear();
        if input
            .read_until(b'\n', &mut raw)
            .map_err(BatchError::Read)?
            == 0
        {
            break;
        }
        number += 1;
        // A line that is not UTF-8 cannot be a FEN; lossy decoding makes it
        // fail as one instead of ending the batch.
        let text = String::from_utf8_lossy(&raw);
        let line = text.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let written = match analyze_line(line, budget) {
            Ok(report) => write_json_line(out, &report.to_json()),
            Err(err) => {
                status = 1;
                let error = JsonLineError {
                    line: number,
                    input: line,
                    error: err.to_string(),
                };
                write_json_line(out, &error)
            }
        };
        // Flush per line: a batch can be slow, and readers of a pipe should
        // see each answer when it is ready.
        written
            .and_then(|()| out.flush())
            .map_err(BatchError::Write)?;
    }
    Ok(status)
}

fn write_json_line(out: &mut dyn Write, value: &impl Serialize) -> io::Result<()> {
    serde_json::to_writer(&mut *out, value)?;
    writeln!(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(clap::Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        analyze: AnalyzeArgs,
    }

    fn cli(args: &[&str]) -> Result<AnalyzeArgs, clap::Error> {
        use clap::Parser;
        Cli::try_parse_from(std::iter::once("analyze").chain(args.iter().copied()))
            .map(|cli| cli.analyze)
    }

    #[test]
    fn arguments() {
        use clap::CommandFactory;
        Cli::command().debug_assert();

        // Unquoted FEN: the words are collected.
        let args = cli(&["8/8/8/8/8/2k5/8/K6N", "b", "-", "-", "--json"]).unwrap();
        assert_eq!(args.fen.join(" "), "8/8/8/8/8/2k5/8/K6N b - -");
        assert!(args.json);
        assert_eq!(args.budget(), Budget::DETERMINISTIC);

        let args = cli(&["--batch", "-", "--time-limit-ms", "250"]).unwrap();
        assert_eq!(args.batch, Some(PathBuf::from("-")));
        assert_eq!(
            args.budget(),
            Budget::with_time_limit(Duration::from_millis(250))
        );

        assert!(cli(&[]).is_err(), "a FEN or --batch is required");
        assert!(cli(&["--batch", "x", "8/8/8/8/8/2k5/8/K6N w"]).is_err());
    }

    #[test]
    fn counters_may_be_missing() {
        let line = parse_fen_line("8/8/8/8/8/2k5/8/K6N b - -").unwrap();
        assert_eq!(line.fen, "8/8/8/8/8/2k5/8/K6N b - -");
        assert_eq!(line.position.turn(), Color::Black);
        assert_eq!(line.position.fullmoves().get(), 1);
    }

    #[test]
    fn castling_and_en_passant_may_be_missing() {
        let line = parse_fen_line("4k3/8/8/8/8/8/8/4K2R w").unwrap();
        assert_eq!(line.fen, "4k3/8/8/8/8/8/8/4K2R w");
        assert!(line.position.castles().is_empty());
    }

    #[test]
    fn words_after_the_fen_are_ignored() {
        let line = parse_fen_line("8/8/8/8/8/2k5/8/K6N b - - 0 57 lichess abcd1234").unwrap();
        assert_eq!(line.fen, "8/8/8/8/8/2k5/8/K6N b - - 0 57");
        assert_eq!(line.position.fullmoves().get(), 57);

        let line = parse_fen_line("8/8/8/8/8/2k5/8/K6N b - - only with a knight").unwrap();
        assert_eq!(line.fen, "8/8/8/8/8/2k5/8/K6N b - -");

        let line =
            parse_fen_line("  rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 game  ")
                .unwrap();
        assert_eq!(
            line.fen,
            "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3"
        );
        assert_eq!(line.position.castles().castling_rights().count(), 4);
    }

    #[test]
    fn bad_lines_are_rejected() {
        assert!(matches!(parse_fen_line("   "), Err(FenLineError::Empty)));
        assert!(matches!(
            parse_fen_line("8/8/8/8/8/2k5/8/K6N"),
            Err(FenLineError::MissingTurn { .. })
        ));
        assert!(matches!(
            parse_fen_line("8/8/8/8/8/2k5/8/K6X w - -"),
            Err(FenLineError::Syntax { .. })
        ));
        // Two white kings.
        assert!(matches!(
            parse_fen_line("8/8/8/8/8/2k5/8/K6K w - -"),
            Err(FenLineError::Illegal { .. })
        ));
    }

    #[test]
    fn numbering_starts_from_the_position() {
        let black_to_move = parse_fen_line("8/8/8/8/8/2k5/8/K6N b - - 0 12").unwrap();
        let san = ["Kb3".to_owned(), "Nf2".to_owned(), "Kc2".to_owned()];
        assert_eq!(
            numbered_line(&black_to_move.position, &san),
            "12... Kb3 13. Nf2 Kc2"
        );
        let white_to_move = parse_fen_line("8/8/8/8/8/2k5/8/K6N w - - 0 12").unwrap();
        assert_eq!(
            numbered_line(&white_to_move.position, &san),
            "12. Kb3 Nf2 13. Kc2"
        );
    }

    fn report(fen: &str) -> Report {
        analyze_line(fen, Budget::DETERMINISTIC).unwrap()
    }

    fn human(report: &Report) -> String {
        let mut out = Vec::new();
        report.write_human(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    // Issue 14: double checks by two bishops of one colour are mate on the
    // board even though two same-coloured bishops are "insufficient
    // material" for a mate from scratch. White to move in each: the king on
    // e1 is attacked by both bishops and every flight square is covered or
    // occupied by its own rooks.
    #[test]
    fn issue_14_double_check_mates_are_checkmate_not_dead() {
        for fen in [
            "8/8/8/8/8/2b1k1b1/8/3RKR2 w - -",
            "8/8/8/8/8/2b1k1b1/8/3QKQ2 w - -",
            "8/8/8/8/8/2b1k1b1/8/3BKB2 w - -",
        ] {
            let report = report(fen);
            assert_eq!(report.checkmated(), Some(Color::White), "{fen}");
            assert!(!report.stalemate(), "{fen}");
            assert_eq!(report.black.verdict, Verdict::Yes, "{fen}");
            assert_eq!(report.white.verdict, Verdict::No, "{fen}");
            assert_eq!(report.dead(), Verdict::No, "{fen}");
            let json = report.to_json();
            assert_eq!(json.checkmated, Some("white"));
            assert_eq!(json.dead, Some(false));
            assert_eq!(json.helpmate_black, Some(Vec::new()));
            let text = human(&report);
            assert!(
                text.contains("Black has mated, White is checkmated"),
                "{text}"
            );
            assert!(!text.contains("neither side can checkmate"), "{text}");
        }
    }

    #[test]
    fn issue_14_stalemate_is_dead() {
        // Black king a8, white queen b6, white king c8... Black to move has
        // no move and is not in check (Art. 5.2.1): no mate can follow.
        let report = report("k7/8/1Q6/8/8/8/8/2K5 b - -");
        assert!(report.stalemate());
        assert_eq!(report.checkmated(), None);
        assert_eq!(report.dead(), Verdict::Yes);
        assert!(report.to_json().stalemate);
        assert!(human(&report).contains("Stalemate: Black has no legal move"));
    }

    #[test]
    fn issue_14_impossible_positions_are_refused_in_words() {
        // Two white kings, a pawn on the first rank, the side not to move
        // in check: each named, none as a debug dump.
        let cases = [
            ("8/8/8/8/8/2k5/8/K6K w - -", "more than one king"),
            ("4k3/8/8/8/8/8/8/P3K3 w - -", "first or eighth rank"),
            ("4k3/8/8/8/8/8/8/4K2r b - -", "side not to move is in check"),
        ];
        for (fen, words) in cases {
            let err = parse_fen_line(fen).unwrap_err();
            let text = err.to_string();
            assert!(text.contains(words), "{fen}: {text}");
            assert!(!text.contains("PositionErrorKinds"), "{text}");
        }
    }
}
