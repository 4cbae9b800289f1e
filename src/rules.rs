//! Rule sets: the FIDE Laws for standard play and their rapid and blitz
//! appendices. Every difference between rule sets lives here.

use std::{fmt, str::FromStr};

/// The rule set a game is played under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum RuleSet {
    /// The Laws of Chess (from 1 January 2023).
    #[default]
    Standard,
    /// Appendix A: rapid chess.
    Rapid,
    /// Appendix B: blitz.
    Blitz,
}

impl RuleSet {
    /// The name used on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleSet::Standard => "standard",
            RuleSet::Rapid => "rapid",
            RuleSet::Blitz => "blitz",
        }
    }
}

impl fmt::Display for RuleSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for RuleSet {
    type Err = String;

    fn from_str(s: &str) -> Result<RuleSet, String> {
        match s {
            "standard" => Ok(RuleSet::Standard),
            "rapid" => Ok(RuleSet::Rapid),
            "blitz" => Ok(RuleSet::Blitz),
            other => Err(format!(
                "unknown rule set '{other}': expected standard, rapid or blitz"
            )),
        }
    }
}
