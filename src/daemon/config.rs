//! The event configuration file: one round of one event, its boards and
//! players, in TOML.
//!
//! ```toml
//! event = "City Open"
//! site = "Town Hall"
//! round = "3"
//! date = "2026.11.22"
//! rules = "rapid"
//! time_control = "900+10"
//!
//! [[board]]
//! id = 1
//! source = "pgn:games/board1.pgn"
//! white = { name = "Carlsen, Magnus", fide_id = 1503014, title = "GM", elo = 2830 }
//! black = { name = "Caruana, Fabiano" }
//! ```
//!
//! Unknown keys are errors, and every error names the file, the line and the
//! key, so that a typo in the hall is found before the round starts.

use std::{
    fmt,
    path::{Path, PathBuf},
    str::FromStr,
};

use serde::{Deserialize, Deserializer, Serialize};

use crate::{event::Millis, rules::RuleSet};

pub use super::lichess::LichessConfig;

/// An event round: what the broadcast tags say and which boards to watch.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventConfig {
    /// The `Event` tag.
    pub event: String,
    /// The `Site` tag.
    #[serde(default)]
    pub site: Option<String>,
    /// The round number; each game's `Round` tag is `<round>.<board>`.
    #[serde(default)]
    pub round: Option<String>,
    /// The `Date` tag, `YYYY.MM.DD`.
    #[serde(default, deserialize_with = "de_date")]
    pub date: Option<String>,
    /// The rule set: `standard`, `rapid` or `blitz`.
    #[serde(default, deserialize_with = "de_rules")]
    pub rules: Option<RuleSet>,
    /// The `TimeControl` tag (`5400+30`, `900+10`, ...).
    #[serde(default)]
    pub time_control: Option<String>,
    /// How long (ms) a board state must stand before it counts.
    #[serde(default)]
    pub settle_ms: Option<Millis>,
    /// The boards, in broadcast order.
    #[serde(rename = "board", default)]
    pub boards: Vec<BoardConfig>,
    /// Where a hall node publishes its journals, or where a central reads
    /// them (NATS JetStream; see [`PublishConfig`]).
    #[serde(default)]
    pub publish: Option<PublishConfig>,
    /// Pushing the round to a lichess broadcast (see [`LichessConfig`]).
    #[serde(default)]
    pub lichess: Option<LichessConfig>,
    /// The public broadcast (see [`BroadcastConfig`]).
    #[serde(default)]
    pub broadcast: Option<BroadcastConfig>,
    /// A pairing program's export (PGN of tags, or TRF-16) that gives every
    /// board's players for the round `round` (see [`crate::pairings`]).
    #[serde(default)]
    pub pairings: Option<PathBuf>,
}

/// The `[broadcast]` table: what the public sees.
///
/// ```toml
/// [broadcast]
/// delay = "15m"   # the public sees the round as it stood 15 minutes ago
/// ```
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BroadcastConfig {
    /// How long the public broadcast is held back (`90s`, `15m`, `1h`;
    /// default none); `--broadcast-delay` overrides it.
    #[serde(default, deserialize_with = "de_delay")]
    pub delay: Option<std::time::Duration>,
}

fn de_delay<'de, D: Deserializer<'de>>(d: D) -> Result<Option<std::time::Duration>, D::Error> {
    let text = String::deserialize(d)?;
    super::delay::parse_delay(&text)
        .map(Some)
        .map_err(serde::de::Error::custom)
}

/// The `[publish]` table: the NATS JetStream broker that carries the hall
/// nodes' journals to the central.
///
/// ```toml
/// [publish]
/// url = "nats://broker.example:4222"
/// credentials = "hall-a.creds"   # optional: a NATS credentials file
/// node = "hall-a"                # optional: this node's name (default: the host name)
/// stream = "EBOARD"              # optional: the stream's name
/// max_age_days = 14              # optional: how long the broker keeps lines
/// ```
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PublishConfig {
    /// The broker (`nats://HOST:PORT`); `--publish` or `--from` override it.
    #[serde(default)]
    pub url: Option<String>,
    /// A NATS credentials file (relative to the config file).
    #[serde(default)]
    pub credentials: Option<PathBuf>,
    /// This node's name, sent with every line (default: the host name).
    #[serde(default)]
    pub node: Option<String>,
    /// The JetStream stream (default `EBOARD`).
    #[serde(default)]
    pub stream: Option<String>,
    /// How many days the broker keeps a line (default 14).
    #[serde(default)]
    pub max_age_days: Option<u32>,
}

/// One board of the round.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoardConfig {
    /// The board number (1, 2, ...), unique in the round.
    pub id: toml::Spanned<u32>,
    /// Where its events come from (none in a central's round file: its
    /// boards come from the hall nodes).
    #[serde(default)]
    pub source: Option<Source>,
    /// For a `pgn:` source: play only this game of the file (from 1).
    #[serde(default)]
    pub game: Option<usize>,
    /// For a simulated source: the random seed of the human noise
    /// (default: the board number).
    #[serde(default)]
    pub seed: Option<u64>,
    /// The board is set up turned round (`"rotated"`): needed for boards
    /// that sense occupancy only; boards that identify pieces are
    /// recognised turned round by themselves. Default `"normal"`.
    #[serde(default)]
    pub orientation: crate::engine::Orientation,
    /// The player with the white pieces (from the pairings file when the
    /// config names one).
    #[serde(default)]
    pub white: Player,
    /// The player with the black pieces.
    #[serde(default)]
    pub black: Player,
}

impl BoardConfig {
    /// The board number.
    pub fn id(&self) -> u32 {
        *self.id.get_ref()
    }
}

/// A player, as the broadcast tags give him.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Player {
    /// "Last, First".
    pub name: String,
    /// The FIDE id (`WhiteFideId`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fide_id: Option<u64>,
    /// The title (`GM`, `IM`, `WGM`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The rating (`WhiteElo`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elo: Option<u32>,
    /// The team (`WhiteTeam`), for team events.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub team: Option<String>,
}

/// Where a board's events come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A board script played at the pace of its timestamps (`script:FILE`).
    Script(PathBuf),
    /// The games of a PGN file played by a simulated human on a simulated
    /// board with a clock (`pgn:FILE`).
    Pgn(PathBuf),
    /// A serial board whose family is detected (`serial:/dev/ttyUSB0`).
    Serial(String),
    /// A DGT board (`dgt:/dev/ttyUSB0`).
    Dgt(String),
    /// A Millennium ChessLink (`millennium:/dev/rfcomm0`).
    Millennium(String),
    /// A Certabo or Sentio board (`certabo:/dev/ttyACM0`).
    Certabo(String),
}

impl Source {
    /// Whether the source is a simulated board (not hardware).
    pub fn is_simulated(&self) -> bool {
        matches!(self, Source::Script(_) | Source::Pgn(_))
    }

    /// Resolves a relative file against the directory of the config file.
    pub fn relative_to(self, dir: &Path) -> Source {
        match self {
            Source::Script(p) if p.is_relative() => Source::Script(dir.join(p)),
            Source::Pgn(p) if p.is_relative() => Source::Pgn(dir.join(p)),
            other => other,
        }
    }
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Script(p) => write!(f, "script:{}", p.display()),
            Source::Pgn(p) => write!(f, "pgn:{}", p.display()),
            Source::Serial(p) => write!(f, "serial:{p}"),
            Source::Dgt(p) => write!(f, "dgt:{p}"),
            Source::Millennium(p) => write!(f, "millennium:{p}"),
            Source::Certabo(p) => write!(f, "certabo:{p}"),
        }
    }
}

impl FromStr for Source {
    type Err = String;

    fn from_str(s: &str) -> Result<Source, String> {
        let (kind, rest) = s.split_once(':').ok_or_else(|| {
            format!("source '{s}' has no kind: expected script:FILE, pgn:FILE, serial:PORT, dgt:PORT, millennium:PORT or certabo:PORT")
        })?;
        if rest.is_empty() {
            return Err(format!(
                "source '{s}' names no file or port after '{kind}:'"
            ));
        }
        Ok(match kind {
            "script" => Source::Script(PathBuf::from(rest)),
            "pgn" => Source::Pgn(PathBuf::from(rest)),
            "serial" => Source::Serial(rest.to_owned()),
            "dgt" => Source::Dgt(rest.to_owned()),
            "millennium" => Source::Millennium(rest.to_owned()),
            "certabo" => Source::Certabo(rest.to_owned()),
            other => {
                return Err(format!(
                    "unknown source kind '{other}': expected script, pgn, serial, dgt, millennium or certabo"
                ));
            }
        })
    }
}

impl<'de> Deserialize<'de> for Source {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Source, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

fn de_rules<'de, D: Deserializer<'de>>(d: D) -> Result<Option<RuleSet>, D::Error> {
    let text = String::deserialize(d)?;
    text.parse().map(Some).map_err(serde::de::Error::custom)
}

fn de_date<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    let text = String::deserialize(d)?;
    normalize_date(&text)
        .map(Some)
        .map_err(serde::de::Error::custom)
}

/// Checks a PGN date (`YYYY.MM.DD`, `?` for unknown digits): see
/// [`super::values::check_date`].
pub fn normalize_date(text: &str) -> Result<String, String> {
    super::values::check_date(text)
}

/// A config file that cannot be used: where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read (`message` names it in full).
    #[error("{message}")]
    Read { file: String, message: String },
    /// A syntax error, an unknown key or a bad value.
    #[error("{file}:{line}:{column}: {}{message}", key.as_ref().map(|k| format!("key '{k}': ")).unwrap_or_default())]
    Invalid {
        file: String,
        /// The 1-based line.
        line: usize,
        /// The 1-based column.
        column: usize,
        /// The key on that line, when there is one.
        key: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// The pairings file cannot be used.
    #[error(transparent)]
    Pairings(#[from] crate::pairings::PairingsError),
    /// A pairings file needs the round's number.
    #[error(
        "{file}: pairings = {pairings:?} needs round = N (a number) to know which round to read"
    )]
    PairingsRound {
        /// The config file.
        file: String,
        /// The pairings file.
        pairings: PathBuf,
    },
}

impl EventConfig {
    /// Reads and checks a config file. Relative `script:` and `pgn:` files
    /// are taken relative to the config file's directory.
    pub fn load(path: &Path) -> Result<EventConfig, ConfigError> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Read {
            file: file.clone(),
            message: crate::files::unreadable("event file", path, &e),
        })?;
        let mut config = EventConfig::parse(&file, &text)?;
        let dir = path.parent().unwrap_or(Path::new("."));
        for board in &mut config.boards {
            board.source = board.source.take().map(|s| s.relative_to(dir));
        }
        if let Some(p) = &mut config.publish
            && let Some(c) = &mut p.credentials
            && c.is_relative()
        {
            *c = dir.join(&*c);
        }
        if let Some(l) = &mut config.lichess
            && let Some(t) = &mut l.token_file
            && t.is_relative()
        {
            *t = dir.join(&*t);
        }
        if let Some(pairings) = &config.pairings {
            let pairings = dir.join(pairings);
            config.fill_players(&file, &pairings)?;
        }
        Ok(config)
    }

    /// Gives every board its players from the pairings file, for the
    /// config's round.
    fn fill_players(&mut self, file: &str, pairings: &Path) -> Result<(), ConfigError> {
        let round = self
            .round
            .as_deref()
            .and_then(|r| r.trim().parse().ok())
            .ok_or_else(|| ConfigError::PairingsRound {
                file: file.to_owned(),
                pairings: pairings.to_owned(),
            })?;
        let read = crate::pairings::read(pairings, round)?;
        let ids: Vec<u32> = self.boards.iter().map(BoardConfig::id).collect();
        let players = crate::pairings::players_for(pairings, round, &read, &ids)?;
        for (board, (_, white, black)) in self.boards.iter_mut().zip(players) {
            board.white = white;
            board.black = black;
        }
        Ok(())
    }

    /// Parses and checks config text; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<EventConfig, ConfigError> {
        let config: EventConfig = toml::from_str(text).map_err(|e| {
            let span = e.span().unwrap_or(0..0);
            invalid(file, text, span.start, e.message().trim().to_owned())
        })?;
        config.check_values(file, text)?;
        if config.boards.is_empty() {
            return Err(invalid(
                file,
                text,
                text.len(),
                "the config has no board: add a [[board]] table with id, source, white and black"
                    .to_owned(),
            ));
        }
        let mut seen: Vec<u32> = Vec::new();
        for board in &config.boards {
            let id = board.id();
            let at = board.id.span().start;
            if id == 0 {
                return Err(invalid(file, text, at, "board ids count from 1".to_owned()));
            }
            if seen.contains(&id) {
                return Err(invalid(
                    file,
                    text,
                    at,
                    format!("board {id} is given twice"),
                ));
            }
            seen.push(id);
            for (side, p) in [("white", &board.white), ("black", &board.black)] {
                // A player may be left to the pairings file, or named by
                // FIDE id alone; a name given is checked as everywhere.
                let left = config.pairings.is_some() || p.fide_id.is_some();
                if left && p.name.trim().is_empty() {
                    continue;
                }
                super::values::check_name(&format!("board {id}: {side}'s name"), &p.name)
                    .map_err(|m| match p.name.trim().is_empty() {
                        true => format!(
                            "{m}: give {side} = {{ name = \"...\" }}, or pairings = \"FILE\""
                        ),
                        false => m,
                    })
                    .map_err(|m| invalid(file, text, at, m))?;
            }
            if board.game == Some(0) {
                return Err(invalid(
                    file,
                    text,
                    at,
                    format!("board {id}: games of a PGN file count from 1"),
                ));
            }
        }
        Ok(config)
    }
}

impl EventConfig {
    /// Checks the round's values as the command line and the actions are
    /// checked (see [`super::values`]); an error points at the key's line.
    fn check_values(&self, file: &str, text: &str) -> Result<(), ConfigError> {
        use super::values::{check_name, check_settle_ms, check_time_control};
        let at = |key: &str| {
            text.match_indices(key)
                .find(|(i, _)| *i == 0 || text.as_bytes()[i - 1] == b'\n')
                .map_or(0, |(i, _)| i)
        };
        let fail = |key: &str, m: String| invalid(file, text, at(key), m);
        check_name("the event's name", &self.event).map_err(|m| fail("event", m))?;
        if let Some(site) = &self.site {
            check_name("the site", site).map_err(|m| fail("site", m))?;
        }
        if let Some(round) = &self.round {
            check_name("the round", round).map_err(|m| fail("round", m))?;
        }
        if let Some(tc) = &self.time_control {
            check_time_control(tc).map_err(|m| fail("time_control", m))?;
        }
        if let Some(ms) = self.settle_ms {
            check_settle_ms(ms).map_err(|m| fail("settle_ms", m))?;
        }
        Ok(())
    }
}

fn invalid(file: &str, text: &str, offset: usize, message: String) -> ConfigError {
    let offset = offset.min(text.len());
    let before = &text[..offset];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before[line_start..].chars().count() + 1;
    let line_text = text[line_start..].lines().next().unwrap_or("");
    let key = line_text
        .split_once('=')
        .map(|(k, _)| k.trim().trim_matches('"').to_owned())
        .filter(|k| !k.is_empty() && !k.starts_with('['));
    ConfigError::Invalid {
        file: file.to_owned(),
        line,
        column,
        key,
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
event = "Test Open"
site = "Hall"
round = "2"
date = "2026.11.22"
rules = "blitz"
time_control = "180+2"

[[board]]
id = 1
source = "pgn:games.pgn"
game = 2
white = { name = "White, A", fide_id = 123, title = "GM", elo = 2500 }
black = { name = "Black, B" }

[[board]]
id = 2
source = "dgt:/dev/ttyUSB0"
white = { name = "C" }
black = { name = "D" }
"#;

    #[test]
    fn parses_a_good_config() {
        let c = EventConfig::parse("e.toml", GOOD).unwrap();
        assert_eq!(c.event, "Test Open");
        assert_eq!(c.date.as_deref(), Some("2026.11.22"));
        assert_eq!(c.rules, Some(RuleSet::Blitz));
        assert_eq!(c.boards.len(), 2);
        assert_eq!(c.boards[0].source, Some(Source::Pgn("games.pgn".into())));
        assert_eq!(c.boards[0].white.fide_id, Some(123));
        assert_eq!(c.boards[1].source, Some(Source::Dgt("/dev/ttyUSB0".into())));
        assert_eq!(c.boards[1].id(), 2);
    }

    #[test]
    fn the_example_file_is_valid() {
        let text = include_str!("../../pgn/event.example.toml");
        let c = EventConfig::parse("event.example.toml", text).unwrap();
        assert_eq!(c.boards.len(), 3);
        assert_eq!(c.boards[2].white.fide_id, Some(1000002));
        let (head, tail) = text.split_once("# [[board]]").unwrap();
        let serial = format!("{head}[[board]]{}", tail.replace("\n# ", "\n"));
        let c = EventConfig::parse("event.example.toml", &serial).unwrap();
        assert_eq!(c.boards[3].source, Some(Source::Dgt("/dev/ttyUSB0".into())));
    }

    #[test]
    fn a_board_may_be_turned_round() {
        use crate::engine::Orientation;
        let c = EventConfig::parse("e.toml", GOOD).unwrap();
        assert_eq!(c.boards[0].orientation, Orientation::Normal);
        let turned = GOOD.replace("game = 2\n", "game = 2\norientation = \"rotated\"\n");
        let c = EventConfig::parse("e.toml", &turned).unwrap();
        assert_eq!(c.boards[0].orientation, Orientation::Rotated);
        let bad = GOOD.replace("game = 2\n", "game = 2\norientation = \"sideways\"\n");
        let e = EventConfig::parse("e.toml", &bad).unwrap_err().to_string();
        assert!(e.contains("e.toml:") && e.contains("sideways"), "{e}");
    }

    fn error(text: &str) -> ConfigError {
        EventConfig::parse("e.toml", text).unwrap_err()
    }

    #[test]
    fn errors_name_file_line_and_key() {
        let bad = GOOD.replace("rules = \"blitz\"", "rules = \"bullet\"");
        let e = error(&bad);
        let ConfigError::Invalid { line, key, .. } = &e else {
            panic!("{e}")
        };
        assert_eq!(*line, 6);
        assert_eq!(key.as_deref(), Some("rules"));
        assert!(e.to_string().starts_with("e.toml:6:"), "{e}");
        assert!(e.to_string().contains("bullet"), "{e}");

        let bad = GOOD.replace("game = 2", "gmae = 2");
        let e = error(&bad);
        assert!(matches!(&e, ConfigError::Invalid { line: 12, .. }), "{e}");
        assert!(e.to_string().contains("gmae"), "{e}");

        let bad = GOOD.replace("dgt:/dev", "usb:/dev");
        let e = error(&bad);
        assert!(
            matches!(&e, ConfigError::Invalid { line: 18, key: Some(k), .. } if k == "source"),
            "{e}"
        );

        let bad = GOOD.replace("id = 2", "id = 1");
        let e = error(&bad);
        assert!(matches!(&e, ConfigError::Invalid { line: 17, .. }), "{e}");
        assert!(e.to_string().contains("twice"), "{e}");

        let e = error("event = \"x\"\n");
        assert!(e.to_string().contains("no board"), "{e}");
        let e = error("event = \n");
        assert!(matches!(&e, ConfigError::Invalid { line: 1, .. }), "{e}");
        let e = error(&GOOD.replace("date = \"2026.11.22\"", "date = \"22.11.2026\""));
        assert!(matches!(&e, ConfigError::Invalid { line: 5, .. }), "{e}");
    }

    /// Issue 38, fault 8: nonsense in the config is refused, with the line.
    #[test]
    fn nonsense_values_are_refused_with_their_line() {
        let cases = [
            ("date = \"2026.11.22\"", "date = \"9999.99.99\"", 5),
            ("date = \"2026.11.22\"", "date = \"2026-11-22\"", 5),
            ("time_control = \"180+2\"", "time_control = \"garbage\"", 7),
            ("event = \"Test Open\"", "event = \"\"", 2),
            ("event = \"Test Open\"", "event = \"a\\u0000b\"", 2),
            (
                "time_control = \"180+2\"",
                "settle_ms = 18446744073709551615",
                7,
            ),
        ];
        for (from, to, line) in cases {
            let e = error(&GOOD.replace(from, to));
            assert!(
                matches!(&e, ConfigError::Invalid { line: l, .. } if *l == line),
                "{to}: {e}"
            );
        }
        let long = format!("name = \"{}\"", "x".repeat(20_000));
        let e = error(&GOOD.replace("name = \"C\"", &long));
        assert!(e.to_string().contains("1 to 200 bytes"), "{e}");
        let e = error(&GOOD.replace("name = \"C\"", "name = \"\""));
        assert!(e.to_string().contains("1 to 200 bytes"), "{e}");
    }
}
