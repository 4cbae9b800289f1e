//! PGN pairings: a PGN file of tags only, one game per pairing.
//!
//! The round is the leading digits of `Round`; the board is the `Board`
//! tag, else the digits after the `.` of `Round` (`Round "3.12"`: round 3,
//! board 12), as lichess's relay reads them. The players come from
//! `White`/`Black` and `WhiteTitle`, `WhiteElo`, `WhiteFideId`,
//! `WhiteTeam` (and Black's). Movetext, if any, is skipped.

use std::path::Path;

use crate::daemon::config::Player;

use super::{Pairing, PairingsError, check_players_once};

/// The tags of one game and the line its first tag is on.
#[derive(Debug, Default)]
struct Tags {
    line: usize,
    tags: Vec<(String, String, usize)>,
}

impl Tags {
    fn get(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(k, _, _)| k == name)
            .map(|(_, v, _)| v.as_str())
    }

    fn line_of(&self, name: &str) -> usize {
        self.tags
            .iter()
            .find(|(k, _, _)| k == name)
            .map_or(self.line, |(_, _, l)| *l)
    }
}

/// One tag line, `[Name "value"]`, with `\"` and `\\` escapes.
fn tag_line(line: &str) -> Result<(String, String), String> {
    let t = line.trim();
    let inner = t
        .strip_prefix('[')
        .and_then(|r| r.strip_suffix(']'))
        .ok_or("a tag is [Name \"value\"]")?;
    let (name, rest) = inner
        .trim_start()
        .split_once(|c: char| c.is_whitespace())
        .ok_or("a tag is [Name \"value\"]")?;
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return Err(format!("'{name}' is not a tag name"));
    }
    let rest = rest.trim();
    let body = rest
        .strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .ok_or_else(|| format!("tag {name}: the value must be in double quotes"))?;
    let mut value = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(e @ ('"' | '\\')) => value.push(e),
                Some(e) => {
                    value.push('\\');
                    value.push(e);
                }
                None => value.push('\\'),
            }
        } else {
            value.push(c);
        }
    }
    Ok((name.to_owned(), value))
}

/// Splits the file into the tag sections of its games.
fn games(path: &Path, text: &str) -> Result<Vec<Tags>, PairingsError> {
    let mut out: Vec<Tags> = Vec::new();
    let mut current: Option<Tags> = None;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim_start_matches('\u{feff}').trim();
        if line.starts_with('[') {
            let (k, v) = tag_line(line).map_err(|message| PairingsError::Line {
                path: path.to_owned(),
                line: n,
                message,
            })?;
            let tags = current.get_or_insert_with(|| Tags {
                line: n,
                tags: Vec::new(),
            });
            tags.tags.push((k, v, n));
        } else if let Some(t) = current.take() {
            // A blank line or movetext ends the game's tags.
            out.push(t);
        }
    }
    out.extend(current);
    Ok(out)
}

/// The leading digits of a `Round` value, and the digits after its `.`.
fn round_board(round: &str) -> (Option<u32>, Option<u32>) {
    let (r, b) = match round.split_once('.') {
        Some((r, b)) => (r, Some(b)),
        None => (round, None),
    };
    (r.trim().parse().ok(), b.and_then(|b| b.trim().parse().ok()))
}

fn player(tags: &Tags, color: &str, path: &Path) -> Result<Player, PairingsError> {
    let bad = |tag: &str, what: &str| PairingsError::Line {
        path: path.to_owned(),
        line: tags.line_of(tag),
        message: format!("{tag}: {what}"),
    };
    let name = tags.get(color).unwrap_or("").trim().to_owned();
    let number = |tag: String| -> Result<Option<u64>, PairingsError> {
        match tags.get(&tag).map(str::trim) {
            None | Some("" | "-" | "?" | "0") => Ok(None),
            Some(v) => v
                .parse()
                .map(Some)
                .map_err(|_| bad(&tag, &format!("'{v}' is not a number"))),
        }
    };
    let fide_id = number(format!("{color}FideId"))?;
    let elo = number(format!("{color}Elo"))?
        .map(|e| u32::try_from(e).map_err(|_| bad(&format!("{color}Elo"), "too large")))
        .transpose()?;
    let text = |tag: String| {
        tags.get(&tag)
            .map(str::trim)
            .filter(|v| !v.is_empty() && *v != "-" && *v != "?")
            .map(str::to_owned)
    };
    if name.is_empty() && fide_id.is_none() {
        return Err(bad(color, "the player has neither a name nor a FIDE id"));
    }
    // Checked as the event file's names and the `players` action's are
    // (a player named by FIDE id alone may have no name, as there).
    if !name.is_empty() {
        crate::daemon::values::check_name(&format!("{color}'s name"), &name)
            .map_err(|m| bad(color, &m))?;
    }
    Ok(Player {
        name,
        fide_id,
        title: text(format!("{color}Title")),
        elo,
        team: text(format!("{color}Team")),
    })
}

/// The pairings of `round` in a PGN pairings file.
pub fn parse(path: &Path, text: &str, round: u32) -> Result<Vec<Pairing>, PairingsError> {
    let mut out: Vec<Pairing> = Vec::new();
    let mut rounds = std::collections::BTreeSet::new();
    for game in games(path, text)? {
        let tag_round = game.get("Round").unwrap_or("");
        let (r, b) = round_board(tag_round);
        let Some(r) = r else {
            return Err(PairingsError::Line {
                path: path.to_owned(),
                line: game.line_of("Round"),
                message: format!("Round \"{tag_round}\": expected \"R.B\" (round and board)"),
            });
        };
        rounds.insert(r);
        if r != round {
            continue;
        }
        let board = match game.get("Board") {
            Some(v) => v.trim().parse().ok(),
            None => b,
        };
        let Some(board) = board.filter(|&b| b > 0) else {
            return Err(PairingsError::Line {
                path: path.to_owned(),
                line: game.line_of("Round"),
                message: format!(
                    "Round \"{tag_round}\" gives no board: expected \"R.B\", or a Board tag"
                ),
            });
        };
        if let Some(first) = out.iter().find(|p| p.board == board) {
            return Err(PairingsError::Twice {
                path: path.to_owned(),
                line: game.line,
                first: first.line,
                what: format!("board {board} of round {round} is paired twice"),
            });
        }
        out.push(Pairing {
            board,
            white: player(&game, "White", path)?,
            black: player(&game, "Black", path)?,
            line: game.line,
        });
    }
    if out.is_empty() {
        let found = if rounds.is_empty() {
            "it has no game with a Round tag".to_owned()
        } else {
            let list: Vec<String> = rounds.iter().map(u32::to_string).collect();
            format!("it has round(s) {}", list.join(", "))
        };
        return Err(PairingsError::NoRound {
            path: path.to_owned(),
            round,
            found,
        });
    }
    check_players_once(path, &out)?;
    out.sort_by_key(|p| p.board);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_unescape() {
        assert_eq!(
            tag_line(r#"[White "O\"Kelly, A\\B"]"#),
            Ok(("White".into(), "O\"Kelly, A\\B".into()))
        );
        assert!(tag_line("[White Carlsen]").is_err());
        assert!(tag_line("[\"x\"]").is_err());
    }

    #[test]
    fn rounds_and_boards() {
        assert_eq!(round_board("3.12"), (Some(3), Some(12)));
        assert_eq!(round_board("3"), (Some(3), None));
        assert_eq!(round_board("?"), (None, None));
    }
}
