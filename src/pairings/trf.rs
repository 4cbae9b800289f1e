//! TRF-16, FIDE's tournament report file, as a source of pairings.
//!
//! A player line starts with `001`; its fields sit at fixed character
//! positions (1-based, counting characters): start rank 5–8, title 11–13,
//! name 15–47, rating 49–52, federation 54–56, FIDE id 58–68, points
//! 81–84. Round `r` follows at column 92 + 10(r−1): the opponent's start
//! rank (4 characters; `0000` or blanks: not paired), a space, the colour
//! (`w`, `b`, `-`), a space, the result. Other lines are not needed here.
//!
//! The boards of round `r` are numbered in FIDE's order for a Swiss round
//! (C.04.2, as bbpPairings and JaVaFo apply it): pairs sorted by the score
//! of the pair's higher player, then by the lower player's score, then by
//! the higher player's start rank; the "higher" player of a pair is the
//! one with more points, or with the smaller start rank at equal points.
//! Scores count the rounds before `r` (1 for `1 + W F U`, ½ for `= D H`).

use std::{collections::HashMap, path::Path};

use crate::daemon::config::Player;

use super::{Pairing, PairingsError, check_players_once};

/// One round of a player's line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoundEntry {
    /// The opponent's start rank (`None`: not paired, a bye).
    pub opponent: Option<u32>,
    /// `w`, `b` or `-` (lowercase).
    pub colour: char,
    /// The result code as written (blank: ' ').
    pub result: char,
}

/// A player line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayerLine {
    /// The line in the file (1-based).
    pub line: usize,
    /// The start rank (pairing number).
    pub rank: u32,
    /// The player.
    pub player: Player,
    /// The rounds, from round 1.
    pub rounds: Vec<RoundEntry>,
}

/// Characters `from..=to` (1-based) of a line, trimmed; empty past its end.
pub fn field(chars: &[char], from: usize, to: usize) -> String {
    let start = from.saturating_sub(1).min(chars.len());
    let end = to.min(chars.len()).max(start);
    chars[start..end]
        .iter()
        .collect::<String>()
        .trim()
        .to_owned()
}

/// Where round `r`'s block starts (1-based column).
pub fn round_column(r: usize) -> usize {
    92 + 10 * (r - 1)
}

const TITLES: [&str; 8] = ["GM", "IM", "WGM", "FM", "WIM", "CM", "WFM", "WCM"];

/// Reads a `001` line.
pub fn player_line(path: &Path, n: usize, text: &str) -> Result<PlayerLine, PairingsError> {
    let bad = |message: String| PairingsError::Line {
        path: path.to_owned(),
        line: n,
        message,
    };
    let chars: Vec<char> = text.trim_end_matches('\r').chars().collect();
    let rank_text = field(&chars, 5, 8);
    let rank: u32 = rank_text.parse().ok().filter(|&r| r > 0).ok_or_else(|| {
        bad(format!(
            "start rank '{rank_text}' (columns 5-8) is not 1-9999"
        ))
    })?;
    let number = |from, to, what: &str| -> Result<Option<u64>, PairingsError> {
        let t = field(&chars, from, to);
        if t.is_empty() {
            return Ok(None);
        }
        t.parse::<u64>().map(|v| (v > 0).then_some(v)).map_err(|_| {
            bad(format!(
                "{what} '{t}' (columns {from}-{to}) is not a number"
            ))
        })
    };
    let elo = number(49, 52, "rating")?.and_then(|e| u32::try_from(e).ok());
    let fide_id = number(58, 68, "FIDE id")?;
    let title = field(&chars, 11, 13).to_uppercase();
    let name = field(&chars, 15, 47);
    if name.is_empty() {
        return Err(bad("no name in columns 15-47".into()));
    }
    // Checked as the event file's names and the `players` action's are.
    crate::daemon::values::check_name("the name (columns 15-47)", &name).map_err(bad)?;
    let mut rounds = Vec::new();
    let mut r = 1;
    while round_column(r) <= chars.len() {
        let c = round_column(r);
        let opp_text = field(&chars, c, c + 3);
        let opponent = if opp_text.is_empty() {
            None
        } else {
            let o: u32 = opp_text.parse().map_err(|_| {
                bad(format!(
                    "round {r}: opponent '{opp_text}' (columns {c}-{}) is not a start rank",
                    c + 3
                ))
            })?;
            (o > 0).then_some(o)
        };
        let colour = chars.get(c + 4).map_or('-', |ch| ch.to_ascii_lowercase());
        let colour = if colour == ' ' { '-' } else { colour };
        if !matches!(colour, 'w' | 'b' | '-') {
            return Err(bad(format!(
                "round {r}: colour '{colour}' (column {}) is not w, b or -",
                c + 5
            )));
        }
        let result = chars.get(c + 6).copied().unwrap_or(' ');
        rounds.push(RoundEntry {
            opponent,
            colour,
            result,
        });
        r += 1;
    }
    Ok(PlayerLine {
        line: n,
        rank,
        player: Player {
            name,
            fide_id,
            title: TITLES.contains(&title.as_str()).then_some(title),
            elo,
            team: None,
        },
        rounds,
    })
}

/// The points a result code gives, in half points.
fn half_points(result: char) -> u32 {
    match result.to_ascii_uppercase() {
        '1' | '+' | 'W' | 'F' | 'U' => 2,
        '=' | 'D' | 'H' => 1,
        _ => 0,
    }
}

/// A player's score (half points) before round `r`.
fn score_before(p: &PlayerLine, r: usize) -> u32 {
    p.rounds
        .iter()
        .take(r - 1)
        .map(|e| half_points(e.result))
        .sum()
}

/// Every `001` line of the file.
pub fn players(path: &Path, text: &str) -> Result<Vec<PlayerLine>, PairingsError> {
    let mut out: Vec<PlayerLine> = Vec::new();
    let mut by_rank: HashMap<u32, usize> = HashMap::new();
    for (n, line) in numbered_lines(text) {
        if !line.starts_with("001") {
            continue;
        }
        let p = player_line(path, n, line)?;
        if let Some(&first) = by_rank.get(&p.rank) {
            return Err(PairingsError::Twice {
                path: path.to_owned(),
                line: n,
                first,
                what: format!("start rank {} has two player lines", p.rank),
            });
        }
        by_rank.insert(p.rank, n);
        out.push(p);
    }
    Ok(out)
}

/// The file's lines with their numbers: TRF-16 ends lines with CR, most
/// files with LF or CR LF; each counts as one line end.
fn numbered_lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.split("\r\n")
        .flat_map(|chunk| chunk.split(['\r', '\n']))
        .enumerate()
        .map(|(i, l)| (i + 1, l))
}

/// The sort key of a pair in FIDE's board order: the higher player's
/// score (descending), the lower player's score (descending), the higher
/// player's start rank.
pub fn board_order(
    a: (u32, u32),
    b: (u32, u32),
) -> (std::cmp::Reverse<u32>, std::cmp::Reverse<u32>, u32) {
    // (score in half points, start rank) of each player.
    let higher_first = |x: (u32, u32), y: (u32, u32)| x.0 > y.0 || (x.0 == y.0 && x.1 < y.1);
    let (hi, lo) = if higher_first(a, b) { (a, b) } else { (b, a) };
    (std::cmp::Reverse(hi.0), std::cmp::Reverse(lo.0), hi.1)
}

/// The pairings of `round` in a TRF file, boards in FIDE's order.
pub fn parse(path: &Path, text: &str, round: u32) -> Result<Vec<Pairing>, PairingsError> {
    let players = players(path, text)?;
    let r = usize::try_from(round).unwrap_or(0);
    let index: HashMap<u32, &PlayerLine> = players.iter().map(|p| (p.rank, p)).collect();
    let line_error = |line, message| PairingsError::Line {
        path: path.to_owned(),
        line,
        message,
    };
    let mut pairs: Vec<(&PlayerLine, &PlayerLine)> = Vec::new();
    for p in &players {
        let Some(entry) = r.checked_sub(1).and_then(|i| p.rounds.get(i)) else {
            continue;
        };
        let Some(o) = entry.opponent else { continue };
        let Some(opp) = index.get(&o) else {
            return Err(line_error(
                p.line,
                format!("round {round}: opponent {o} has no player line"),
            ));
        };
        let back = opp.rounds.get(r - 1);
        if back.and_then(|e| e.opponent) != Some(p.rank) {
            return Err(line_error(
                p.line,
                format!(
                    "round {round}: {} (rank {}) is paired with {} (rank {o}), whose line (line {}) does not pair them back",
                    p.player.name, p.rank, opp.player.name, opp.line
                ),
            ));
        }
        let theirs = back.map_or('-', |e| e.colour);
        match (entry.colour, theirs) {
            ('w', 'b') => pairs.push((p, opp)),
            ('b', 'w') => {}
            (mine, theirs) => {
                return Err(line_error(
                    p.line,
                    format!(
                        "round {round}: {} has colour '{mine}' and opponent {o} colour '{theirs}': a pairing needs w against b",
                        p.player.name
                    ),
                ));
            }
        }
    }
    if pairs.is_empty() {
        let most = players.iter().map(|p| p.rounds.len()).max().unwrap_or(0);
        return Err(PairingsError::NoRound {
            path: path.to_owned(),
            round,
            found: format!(
                "{} player line(s), with {most} round(s) at most",
                players.len()
            ),
        });
    }
    pairs.sort_by_key(|(w, b)| {
        board_order((score_before(w, r), w.rank), (score_before(b, r), b.rank))
    });
    let out: Vec<Pairing> = pairs
        .into_iter()
        .enumerate()
        .map(|(i, (w, b))| Pairing {
            board: u32::try_from(i + 1).unwrap_or(u32::MAX),
            white: w.player.clone(),
            black: b.player.clone(),
            line: w.line,
        })
        .collect();
    check_players_once(path, &out)?;
    Ok(out)
}
