//! Results besides 1-0, 0-1, 1/2-1/2 and `*`: forfeits (`+/-`, `-/+`, `-/-`)
//! and special scores (`0-0`, `1/2-0`, `0-1/2`), as the arbiter records them
//! and as pairing programs (TRF-16) and lichess's relay read them.

use shakmaty::{Color, Outcome};

use crate::game::win;

/// A forfeit or a special score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpecialResult {
    /// `+/-`: White wins by forfeit; the game was not played.
    WhiteByForfeit,
    /// `-/+`: Black wins by forfeit; the game was not played.
    BlackByForfeit,
    /// `-/-`: both players forfeit; the game was not played.
    DoubleForfeit,
    /// `0-0`: both players lose the game.
    ZeroZero,
    /// `1/2-0`: White scores a half point, Black nothing.
    HalfZero,
    /// `0-1/2`: White scores nothing, Black a half point.
    ZeroHalf,
}

impl SpecialResult {
    /// Reads `+/-`, `-/+`, `-/-`, `0-0`, `1/2-0` (or `½-0`), `0-1/2` (or `0-½`).
    pub fn parse(text: &str) -> Option<SpecialResult> {
        Some(match text {
            "+/-" => SpecialResult::WhiteByForfeit,
            "-/+" => SpecialResult::BlackByForfeit,
            "-/-" => SpecialResult::DoubleForfeit,
            "0-0" => SpecialResult::ZeroZero,
            "1/2-0" | "½-0" => SpecialResult::HalfZero,
            "0-1/2" | "0-½" => SpecialResult::ZeroHalf,
            _ => return None,
        })
    }

    /// The written form (journal, scripts, CSV), ASCII only.
    pub fn as_str(self) -> &'static str {
        match self {
            SpecialResult::WhiteByForfeit => "+/-",
            SpecialResult::BlackByForfeit => "-/+",
            SpecialResult::DoubleForfeit => "-/-",
            SpecialResult::ZeroZero => "0-0",
            SpecialResult::HalfZero => "1/2-0",
            SpecialResult::ZeroHalf => "0-1/2",
        }
    }

    /// The nearest standard result: the winner of a single forfeit, `*`
    /// for the rest (which name no winner and no draw).
    pub fn outcome(self) -> Outcome {
        match self {
            SpecialResult::WhiteByForfeit => win(Color::White),
            SpecialResult::BlackByForfeit => win(Color::Black),
            _ => Outcome::Unknown,
        }
    }

    /// The PGN `Result` value, in the form lichess's relay stores: it has
    /// no forfeit flag, so a forfeit is the win (`1-0`, `0-1`) and a double
    /// forfeit scores nothing (`0-0`); it keeps `0-0`, `1/2-0`, `0-1/2`.
    pub fn pgn_result(self) -> &'static str {
        match self {
            SpecialResult::WhiteByForfeit => "1-0",
            SpecialResult::BlackByForfeit => "0-1",
            SpecialResult::DoubleForfeit | SpecialResult::ZeroZero => "0-0",
            SpecialResult::HalfZero => "1/2-0",
            SpecialResult::ZeroHalf => "0-1/2",
        }
    }

    /// The TRF-16 result code of `side`: `+`/`-` for a forfeit win/loss,
    /// `=` for a half point, `0` for nothing in a played game.
    pub fn trf_code(self, side: Color) -> char {
        let (white, black) = match self {
            SpecialResult::WhiteByForfeit => ('+', '-'),
            SpecialResult::BlackByForfeit => ('-', '+'),
            SpecialResult::DoubleForfeit => ('-', '-'),
            SpecialResult::ZeroZero => ('0', '0'),
            SpecialResult::HalfZero => ('=', '0'),
            SpecialResult::ZeroHalf => ('0', '='),
        };
        side.fold_wb(white, black)
    }

    /// In plain words, for the PGN's last comment and the dashboard.
    pub fn describe(self) -> &'static str {
        match self {
            SpecialResult::WhiteByForfeit => "White wins by forfeit; the game was not played",
            SpecialResult::BlackByForfeit => "Black wins by forfeit; the game was not played",
            SpecialResult::DoubleForfeit => "Both players forfeit; the game was not played",
            SpecialResult::ZeroZero => "The arbiter scored the game 0-0",
            SpecialResult::HalfZero => "The arbiter scored the game 1/2-0",
            SpecialResult::ZeroHalf => "The arbiter scored the game 0-1/2",
        }
    }

    /// Whether the game was not played (a forfeit).
    pub fn is_forfeit(self) -> bool {
        matches!(
            self,
            SpecialResult::WhiteByForfeit
                | SpecialResult::BlackByForfeit
                | SpecialResult::DoubleForfeit
        )
    }
}

/// A result the arbiter records: a standard one or a special one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// `1-0`, `0-1`, `1/2-1/2` or `*`.
    Outcome(Outcome),
    /// A forfeit or special score.
    Special(SpecialResult),
}

impl Verdict {
    /// Reads a standard result, else a special one.
    pub fn parse(text: &str) -> Option<Verdict> {
        Outcome::from_ascii(text.as_bytes())
            .ok()
            .map(Verdict::Outcome)
            .or_else(|| SpecialResult::parse(text).map(Verdict::Special))
    }

    /// The written form.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Outcome(o) => o.as_str(),
            Verdict::Special(s) => s.as_str(),
        }
    }

    /// Whether the game has no result yet (`*`).
    pub fn is_unknown(self) -> bool {
        self == Verdict::Outcome(Outcome::Unknown)
    }
}

/// The results a script or action accepts, for error messages.
pub const EXPECTED: &str = "1-0, 0-1, 1/2-1/2, *, +/-, -/+, -/-, 0-0, 1/2-0 or 0-1/2";

/// A [`Verdict`] as JSON writes it (for `#[serde(with = "...")]`).
pub mod verdict_text {
    use serde::{Deserialize, Deserializer, Serializer, de::Error as _};

    use super::{EXPECTED, Verdict};

    /// Writes the result.
    pub fn serialize<S: Serializer>(v: &Verdict, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(v.as_str())
    }

    /// Reads a result, or says what is expected.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Verdict, D::Error> {
        let text = String::deserialize(d)?;
        Verdict::parse(&text).ok_or_else(|| {
            D::Error::custom(format!("'{text}' is not a result: expected {EXPECTED}"))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// TRF-16: `+`/`-` forfeit win/loss, `=` draw (a half point), `0` loss.
    #[test]
    fn trf_codes_follow_trf16() {
        let codes = |s: SpecialResult| (s.trf_code(Color::White), s.trf_code(Color::Black));
        assert_eq!(codes(SpecialResult::WhiteByForfeit), ('+', '-'));
        assert_eq!(codes(SpecialResult::BlackByForfeit), ('-', '+'));
        assert_eq!(codes(SpecialResult::DoubleForfeit), ('-', '-'));
        assert_eq!(codes(SpecialResult::ZeroZero), ('0', '0'));
        assert_eq!(codes(SpecialResult::HalfZero), ('=', '0'));
        assert_eq!(codes(SpecialResult::ZeroHalf), ('0', '='));
    }

    /// lichess's relay stores `+--` as 1-0, `-:+` as 0-1, and keeps 0-0,
    /// 1/2-0, 0-1/2; it has no forfeit flag.
    #[test]
    fn pgn_results_are_those_lichess_stores() {
        assert_eq!(SpecialResult::WhiteByForfeit.pgn_result(), "1-0");
        assert_eq!(SpecialResult::BlackByForfeit.pgn_result(), "0-1");
        assert_eq!(SpecialResult::DoubleForfeit.pgn_result(), "0-0");
        assert_eq!(SpecialResult::ZeroZero.pgn_result(), "0-0");
        assert_eq!(SpecialResult::HalfZero.pgn_result(), "1/2-0");
        assert_eq!(SpecialResult::ZeroHalf.pgn_result(), "0-1/2");
    }

    #[test]
    fn half_points_are_read_either_way() {
        assert_eq!(SpecialResult::parse("½-0"), Some(SpecialResult::HalfZero));
        assert_eq!(SpecialResult::parse("1/2-0"), Some(SpecialResult::HalfZero));
        assert_eq!(SpecialResult::parse("0-½"), Some(SpecialResult::ZeroHalf));
        assert_eq!(SpecialResult::parse("0-1/2"), Some(SpecialResult::ZeroHalf));
        assert_eq!(
            Verdict::parse("1-0"),
            Some(Verdict::Outcome(win(Color::White)))
        );
        assert_eq!(Verdict::parse("2-0"), None);
    }
}
