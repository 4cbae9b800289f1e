//! Results out: a round's results from the boards' records, written into
//! the tournament's TRF-16 file (or as CSV) for the pairing program.
//!
//! The boards are matched to the TRF's pairs of the round by the board
//! order eboard gives a TRF's pairings (see [`crate::pairings::trf`]): the
//! event read its players from the same file. Each board's journal in the
//! data directory is replayed; the game the broadcast shows gives the
//! result: `1`, `0` or `=` in the round's column of both players, and the
//! points column brought up to date.

use crate::verdict::Verdict;
use std::{
    fmt::Write as _,
    path::{Path, PathBuf},
    sync::Arc,
};

use shakmaty::{Color, Outcome};

use crate::{
    daemon::{
        board::{BoardState, RoundInfo},
        config::Player,
        journal::Journal,
    },
    engine::EngineConfig,
    pairings::{
        PairingsError,
        trf::{self, field, round_column},
    },
};

/// Why the results cannot be written.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    /// The TRF file.
    #[error(transparent)]
    Pairings(#[from] PairingsError),
    /// A journal that cannot be read.
    #[error("{0}")]
    Journal(String),
    /// Games without a result (the round is not over).
    #[error(
        "round {round}: board(s) {boards} have no result yet; finish them (or write what there is with --partial)"
    )]
    Unfinished {
        /// The round.
        round: u32,
        /// The boards, `3, 7`.
        boards: String,
    },
}

/// `eboard results`.
#[derive(Debug, Clone, clap::Args)]
pub struct ResultsArgs {
    /// The daemon's data directory (its `boards/` journals).
    #[arg(long)]
    pub data_dir: PathBuf,
    /// The tournament's TRF-16 file, with the round paired.
    #[arg(long)]
    pub trf: PathBuf,
    /// The round.
    #[arg(long)]
    pub round: u32,
    /// Print `board,white,black,result` lines instead of the TRF.
    #[arg(long)]
    pub csv: bool,
    /// Write the results there are, leaving unfinished games blank.
    #[arg(long)]
    pub partial: bool,
}

/// One board's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoardResult {
    /// The board.
    pub board: u32,
    /// White's and Black's start ranks.
    pub ranks: (u32, u32),
    /// The players.
    pub white: Player,
    /// The players.
    pub black: Player,
    /// The result (`Unknown`: not finished, or no record).
    pub outcome: Verdict,
}

/// The result of the game the broadcast shows on `board`, from its
/// journal (`Unknown` without a journal).
pub fn board_outcome(data_dir: &Path, board: u32) -> Result<Verdict, ResultsError> {
    let path = data_dir.join("boards").join(format!("{board}.jsonl"));
    if !path.exists() {
        return Ok(Verdict::Outcome(Outcome::Unknown));
    }
    let opened = Journal::open(&path).map_err(|e| ResultsError::Journal(e.to_string()))?;
    let round = Arc::new(RoundInfo {
        event: String::new(),
        site: None,
        date: None,
        round: String::new(),
        time_control: None,
    });
    let mut state = BoardState::new(
        board,
        round,
        EngineConfig::default(),
        Player::default(),
        Player::default(),
    );
    for line in &opened.lines {
        let _ = state.apply(line);
    }
    Ok(state.round_game().verdict())
}

/// The round's results, board by board.
pub fn collect(
    data_dir: &Path,
    trf_path: &Path,
    text: &str,
    round: u32,
) -> Result<Vec<BoardResult>, ResultsError> {
    let pairings = trf::parse(trf_path, text, round)?;
    let players = trf::players(trf_path, text)?;
    let rank_of = |p: &Player| {
        players
            .iter()
            .find(|l| l.player == *p)
            .map_or(0, |l| l.rank)
    };
    pairings
        .into_iter()
        .map(|p| {
            Ok(BoardResult {
                board: p.board,
                ranks: (rank_of(&p.white), rank_of(&p.black)),
                outcome: board_outcome(data_dir, p.board)?,
                white: p.white,
                black: p.black,
            })
        })
        .collect()
}

/// The TRF result code of `side` in a game that ended in `verdict`
/// (TRF-16: `+`/`-` for a forfeit, `=` for a half point).
pub fn code(verdict: Verdict, side: Color) -> char {
    let outcome = match verdict {
        Verdict::Special(special) => return special.trf_code(side),
        Verdict::Outcome(outcome) => outcome,
    };
    match outcome {
        Outcome::Known(shakmaty::KnownOutcome::Decisive { winner }) if winner == side => '1',
        Outcome::Known(shakmaty::KnownOutcome::Decisive { .. }) => '0',
        Outcome::Known(shakmaty::KnownOutcome::Draw) => '=',
        Outcome::Unknown => ' ',
    }
}

/// Writes one player's round: opponent, colour, result, at the round's
/// columns (the line padded with spaces to reach them).
fn put_round(line: &str, round: u32, opponent: u32, colour: char, result: char) -> String {
    let mut chars: Vec<char> = line.chars().collect();
    let c = round_column(usize::try_from(round).unwrap_or(1).max(1));
    // Columns c..=c+7: the opponent (4), a space, the colour, a space, the
    // result.
    if chars.len() < c + 7 {
        chars.resize(c + 7, ' ');
    }
    let block: Vec<char> = format!("{opponent:>4} {colour} {result}").chars().collect();
    chars.splice(c - 1..c + 7, block);
    let mut out: String = chars.into_iter().collect();
    out = recount_points(&out);
    out.trim_end().to_owned()
}

/// Sets the points column (81–84) to the sum of the line's results.
fn recount_points(line: &str) -> String {
    let mut chars: Vec<char> = line.chars().collect();
    let mut half = 0u32;
    let mut r = 1;
    // The result of round r is at column round_column(r) + 7.
    while round_column(r) + 7 <= chars.len() {
        half += match chars[round_column(r) + 6].to_ascii_uppercase() {
            '1' | '+' | 'W' | 'F' | 'U' => 2,
            '=' | 'D' | 'H' => 1,
            _ => 0,
        };
        r += 1;
    }
    if chars.len() < 84 {
        chars.resize(84, ' ');
    }
    let points: Vec<char> = format!("{:>4}", format!("{}.{}", half / 2, (half % 2) * 5))
        .chars()
        .collect();
    chars.splice(80..84, points);
    chars.into_iter().collect()
}

/// The TRF with the round's results written in.
pub fn fill_trf(text: &str, round: u32, results: &[BoardResult]) -> String {
    let end = if text.contains("\r\n") {
        "\r\n"
    } else if text.contains('\n') {
        "\n"
    } else {
        "\r"
    };
    let mut out = Vec::new();
    for line in text.split(end) {
        let chars: Vec<char> = line.chars().collect();
        let rank: Option<u32> = line
            .starts_with("001")
            .then(|| field(&chars, 5, 8).parse().ok())
            .flatten();
        let found = rank.and_then(|r| {
            results.iter().find_map(|b| {
                if b.ranks.0 == r {
                    Some((b.ranks.1, 'w', code(b.outcome, Color::White)))
                } else if b.ranks.1 == r {
                    Some((b.ranks.0, 'b', code(b.outcome, Color::Black)))
                } else {
                    None
                }
            })
        });
        match found {
            Some((opp, colour, result)) => out.push(put_round(line, round, opp, colour, result)),
            None => out.push(line.to_owned()),
        }
    }
    out.join(end)
}

/// `board,white,black,result` lines.
pub fn to_csv(results: &[BoardResult]) -> String {
    let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
    let mut out = String::from("board,white,black,result\n");
    for b in results {
        let result = b.outcome.as_str();
        let _ = writeln!(
            out,
            "{},{},{},{result}",
            b.board,
            quote(&b.white.name),
            quote(&b.black.name)
        );
    }
    out
}

/// `eboard results`: the TRF (or CSV) text to print.
pub fn run(args: &ResultsArgs) -> Result<String, ResultsError> {
    let bytes = std::fs::read(&args.trf).map_err(|e| {
        ResultsError::Pairings(PairingsError::Io {
            path: args.trf.clone(),
            message: e.to_string(),
        })
    })?;
    let text = String::from_utf8(bytes)
        .unwrap_or_else(|e| e.into_bytes().iter().map(|&b| char::from(b)).collect());
    let results = collect(&args.data_dir, &args.trf, &text, args.round)?;
    let open: Vec<String> = results
        .iter()
        .filter(|b| b.outcome.is_unknown())
        .map(|b| b.board.to_string())
        .collect();
    if !open.is_empty() && !args.partial {
        return Err(ResultsError::Unfinished {
            round: args.round,
            boards: open.join(", "),
        });
    }
    Ok(if args.csv {
        to_csv(&results)
    } else {
        fill_trf(&text, args.round, &results)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_are_recounted_from_the_rounds() {
        let line = format!(
            "001    1 mGM  {:<33} 2700 NOR {:>11} {:<10} {:>4} {:>4}  {:>4} w 1  {:>4} b =",
            "A, B", 1, "", "0.0", 1, 2, 3
        );
        let out = recount_points(&line);
        assert_eq!(&out[80..84], " 1.5");
        let out = put_round(&line, 3, 4, 'w', '1');
        assert_eq!(&out[80..84], " 2.5");
        assert_eq!(&out[111..119], "   4 w 1");
    }

    /// TRF-16: `+`/`-` forfeit win/loss count 1/0; `=` a half point.
    #[test]
    fn special_results_get_the_trf16_codes_and_points() {
        use crate::verdict::SpecialResult;
        let line = format!(
            "001    1 mGM  {:<33} 2700 NOR {:>11} {:<10} {:>4}",
            "A, B", 1, "", "0.0"
        );
        let forfeit = Verdict::Special(SpecialResult::WhiteByForfeit);
        let out = put_round(&line, 1, 2, 'w', code(forfeit, Color::White));
        assert_eq!(&out[91..99], "   2 w +");
        assert_eq!(&out[80..84], " 1.0");
        let out = put_round(&line, 1, 2, 'b', code(forfeit, Color::Black));
        assert_eq!(&out[91..99], "   2 b -");
        assert_eq!(&out[80..84], " 0.0");
        let half = Verdict::Special(SpecialResult::HalfZero);
        let out = put_round(&line, 1, 2, 'w', code(half, Color::White));
        assert_eq!(&out[91..99], "   2 w =");
        assert_eq!(&out[80..84], " 0.5");
        assert_eq!(code(half, Color::Black), '0');
        let double = Verdict::Special(SpecialResult::DoubleForfeit);
        assert_eq!(
            (code(double, Color::White), code(double, Color::Black)),
            ('-', '-')
        );
    }
}
