//! Pairings in: the players of a round's boards, read from what a pairing
//! program exports.
//!
//! Two formats, told apart by their content:
//! - [`pgn`]: a PGN file of tags only, one game per pairing, `Round "R.B"`
//!   (or a `Board` tag) giving the round and the board;
//! - [`trf`]: FIDE's tournament report file (TRF-16): a `001` line per
//!   player with, per round, the opponent, the colour and the result; the
//!   boards are numbered in FIDE's pairing order (see [`trf::board_order`]).
//!
//! Every error names the file and, where there is one, the line.

pub mod pgn;
pub mod trf;

use std::path::{Path, PathBuf};

use crate::daemon::config::Player;

/// One board of a round: its number and its players.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pairing {
    /// The board number, from 1.
    pub board: u32,
    /// The player with the white pieces.
    pub white: Player,
    /// The player with the black pieces.
    pub black: Player,
    /// The line of the file the pairing comes from (1-based).
    pub line: usize,
}

/// A pairings file that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PairingsError {
    /// The file cannot be read.
    #[error("{}: {message}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the system said.
        message: String,
    },
    /// A line that does not read.
    #[error("{}:{line}: {message}", path.display())]
    Line {
        /// The file.
        path: PathBuf,
        /// The 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The file holds no pairing of the round.
    #[error("{}: no pairing of round {round} in the file ({found})", path.display())]
    NoRound {
        /// The file.
        path: PathBuf,
        /// The round asked for.
        round: u32,
        /// What the file has instead.
        found: String,
    },
    /// A board of the round that the file does not pair.
    #[error("{}: board {board} is not paired in round {round} (the file pairs boards {paired})", path.display())]
    Unpaired {
        /// The file.
        path: PathBuf,
        /// The board.
        board: u32,
        /// The round.
        round: u32,
        /// The boards it pairs.
        paired: String,
    },
    /// A player (or a board) the round names twice.
    #[error("{}:{line}: {what} (first at line {first})", path.display())]
    Twice {
        /// The file.
        path: PathBuf,
        /// The second line.
        line: usize,
        /// The first line.
        first: usize,
        /// Who or what is named twice.
        what: String,
    },
    /// Not a pairings file.
    #[error("{}: neither a PGN pairings file (tags in [brackets]) nor a TRF file (player lines 001)", path.display())]
    Unknown {
        /// The file.
        path: PathBuf,
    },
}

/// The formats a pairings file can have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Tags-only PGN.
    Pgn,
    /// TRF-16.
    Trf,
}

/// Tells the format from the content: the first line that is not blank
/// opens a PGN tag (`[`) or carries a TRF line code (three digits and a
/// space, or `XX`/`BB` extension lines).
pub fn detect(text: &str) -> Option<Format> {
    let first = text
        .lines()
        .map(|l| l.trim_start_matches('\u{feff}'))
        .find(|l| !l.trim().is_empty())?;
    let t = first.trim_start();
    if t.starts_with('[') {
        return Some(Format::Pgn);
    }
    let code: Vec<char> = first.chars().take(4).collect();
    let digits = code.len() >= 3 && code[..3].iter().all(char::is_ascii_digit);
    let ext = first.starts_with("XX") || first.starts_with("BB") || first.starts_with("###");
    if (digits && code.get(3).is_none_or(|c| *c == ' ')) || ext {
        return Some(Format::Trf);
    }
    None
}

/// Reads the pairings of `round` from the text of `path`.
pub fn parse(path: &Path, text: &str, round: u32) -> Result<Vec<Pairing>, PairingsError> {
    match detect(text) {
        Some(Format::Pgn) => pgn::parse(path, text, round),
        Some(Format::Trf) => trf::parse(path, text, round),
        None => Err(PairingsError::Unknown {
            path: path.to_owned(),
        }),
    }
}

/// Reads the pairings of `round` from the file at `path`.
pub fn read(path: &Path, round: u32) -> Result<Vec<Pairing>, PairingsError> {
    let bytes = std::fs::read(path).map_err(|e| PairingsError::Io {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    // Pairing programs write UTF-8 or, older ones, Latin-1: a byte that is
    // not UTF-8 is read as Latin-1 rather than refused.
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => e.into_bytes().iter().map(|&b| char::from(b)).collect(),
    };
    parse(path, &text, round)
}

/// The players of `boards` from the pairings; a board the pairings lack is
/// an error.
pub fn players_for(
    path: &Path,
    round: u32,
    pairings: &[Pairing],
    boards: &[u32],
) -> Result<Vec<(u32, Player, Player)>, PairingsError> {
    boards
        .iter()
        .map(|&b| {
            pairings
                .iter()
                .find(|p| p.board == b)
                .map(|p| (b, p.white.clone(), p.black.clone()))
                .ok_or_else(|| PairingsError::Unpaired {
                    path: path.to_owned(),
                    board: b,
                    round,
                    paired: board_list(pairings),
                })
        })
        .collect()
}

/// `1-4, 6` for the boards of some pairings.
fn board_list(pairings: &[Pairing]) -> String {
    let mut ids: Vec<u32> = pairings.iter().map(|p| p.board).collect();
    ids.sort_unstable();
    ids.dedup();
    if ids.is_empty() {
        return "none".into();
    }
    let mut parts = Vec::new();
    let mut start = ids[0];
    let mut prev = ids[0];
    for &id in &ids[1..] {
        if id != prev + 1 {
            parts.push(range_text(start, prev));
            start = id;
        }
        prev = id;
    }
    parts.push(range_text(start, prev));
    parts.join(", ")
}

fn range_text(a: u32, b: u32) -> String {
    if a == b {
        a.to_string()
    } else {
        format!("{a}-{b}")
    }
}

/// Checks that no player plays twice in the round: by FIDE id when the
/// player has one, else by name.
fn check_players_once(path: &Path, pairings: &[Pairing]) -> Result<(), PairingsError> {
    let mut seen: std::collections::HashMap<String, usize> = Default::default();
    for p in pairings {
        for player in [&p.white, &p.black] {
            let key = match player.fide_id {
                Some(id) => format!("FIDE id {id}"),
                None => player.name.trim().to_lowercase(),
            };
            if key.is_empty() {
                continue;
            }
            if let Some(&first) = seen.get(&key) {
                return Err(PairingsError::Twice {
                    path: path.to_owned(),
                    line: p.line,
                    first,
                    what: format!("{} is paired twice in the round", player.name),
                });
            }
            seen.insert(key, p.line);
        }
    }
    Ok(())
}

/// The pairings as the `[[board]]` entries of an event file.
pub fn to_toml(pairings: &[Pairing]) -> String {
    let mut out = String::new();
    for p in pairings {
        out.push_str(&format!("[[board]]\nid = {}\n", p.board));
        for (side, player) in [("white", &p.white), ("black", &p.black)] {
            out.push_str(&format!("{side} = {}\n", player_toml(player)));
        }
        out.push('\n');
    }
    out
}

fn player_toml(p: &Player) -> String {
    let mut fields = vec![format!("name = {}", toml_string(&p.name))];
    if let Some(id) = p.fide_id {
        fields.push(format!("fide_id = {id}"));
    }
    if let Some(t) = &p.title {
        fields.push(format!("title = {}", toml_string(t)));
    }
    if let Some(e) = p.elo {
        fields.push(format!("elo = {e}"));
    }
    if let Some(t) = &p.team {
        fields.push(format!("team = {}", toml_string(t)));
    }
    format!("{{ {} }}", fields.join(", "))
}

/// A TOML basic string.
fn toml_string(s: &str) -> String {
    toml::Value::String(s.to_owned()).to_string()
}

/// `eboard pairings FILE --round N`.
#[derive(Debug, Clone, clap::Args)]
pub struct PairingsArgs {
    /// The pairings file: PGN (tags only) or TRF-16.
    pub file: PathBuf,
    /// The round.
    #[arg(long)]
    pub round: u32,
}

/// `eboard pairings`: prints the round's boards as `[[board]]` entries.
pub fn run(args: &PairingsArgs) -> Result<String, PairingsError> {
    let pairings = read(&args.file, args.round)?;
    Ok(to_toml(&pairings))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_told_by_content() {
        assert_eq!(detect("\n[Event \"x\"]\n"), Some(Format::Pgn));
        assert_eq!(detect("012 City Open\n001    1"), Some(Format::Trf));
        assert_eq!(detect("001    1 m"), Some(Format::Trf));
        assert_eq!(detect("XXR 9\n"), Some(Format::Trf));
        assert_eq!(detect("hello"), None);
        assert_eq!(detect(""), None);
    }

    proptest::proptest! {
        /// No input makes the readers panic: any text, and text shaped like
        /// each format (player lines with arbitrary columns, tag lines with
        /// arbitrary values).
        #[test]
        fn no_input_panics(
            text in "\\PC{0,300}",
            cols in proptest::collection::vec("[ 0-9wb=+\\-A-Za-z,.\u{e9}]{0,130}", 0..6),
            tags in proptest::collection::vec(("[A-Za-z]{0,12}", "[ -~\u{e9}]{0,20}"), 0..8),
            round in 0u32..5,
        ) {
            let path = Path::new("x");
            let _ = parse(path, &text, round);
            let trf: String = cols.iter().map(|c| format!("001 {c}\n")).collect();
            let _ = parse(path, &trf, round);
            let pgn: String = tags.iter().map(|(k, v)| format!("[{k} \"{v}\"]\n")).collect();
            let _ = parse(path, &pgn, round);
        }
    }

    #[test]
    fn board_lists_are_ranges() {
        let p = |board| Pairing {
            board,
            white: Player::default(),
            black: Player::default(),
            line: 1,
        };
        let ps: Vec<Pairing> = [1, 2, 3, 5, 7, 8].into_iter().map(p).collect();
        assert_eq!(board_list(&ps), "1-3, 5, 7-8");
    }
}
