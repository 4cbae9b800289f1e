//! Rule sets: the FIDE Laws for standard play and their rapid and blitz
//! appendices, current (2023) or as of 2005. Every difference between rule
//! sets lives here, so a new rule set is one more case in this file.

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

/// Which edition of the Laws of Chess applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Laws {
    /// The Laws in force from 1 January 2023.
    #[default]
    Fide2023,
    /// The Laws in force from 1 July 2005: no fivefold or 75-move draw,
    /// resignation always loses, the third illegal move loses.
    Fide2005,
}

impl FromStr for Laws {
    type Err = String;

    fn from_str(s: &str) -> Result<Laws, String> {
        match s {
            "2023" => Ok(Laws::Fide2023),
            "2005" => Ok(Laws::Fide2005),
            other => Err(format!("unknown Laws '{other}': expected 2023 or 2005")),
        }
    }
}

impl fmt::Display for Laws {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Laws::Fide2023 => "2023",
            Laws::Fide2005 => "2005",
        })
    }
}

/// The rules a game is played under: rule set and edition of the Laws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Rules {
    /// Standard, rapid or blitz.
    pub set: RuleSet,
    /// Which edition of the Laws.
    pub laws: Laws,
}

impl Rules {
    /// Whether the game ends by itself on the fifth occurrence of a position
    /// (Art. 9.6.1) and after 75 moves by each player without pawn move or
    /// capture (Art. 9.6.2). Neither existed in 2005.
    pub fn automatic_draws(self) -> bool {
        self.laws == Laws::Fide2023
    }

    /// Whether a resignation is a draw when the opponent cannot checkmate
    /// (Art. 5.1.2 since 2023).
    pub fn resignation_needs_mating_chances(self) -> bool {
        self.laws == Laws::Fide2023
    }

    /// Whether a draw may be agreed before both players have moved
    /// (Art. 5.2.3 since 2023 says no).
    pub fn early_draw_agreement(self) -> bool {
        self.laws == Laws::Fide2005
    }

    /// Seconds added to the opponent's clock for an incorrect draw claim
    /// (Art. 9.5.3; 1 minute in rapid and blitz, A.3; 3 minutes in 2005,
    /// 9.5(b)).
    pub fn wrong_claim_bonus(self) -> u32 {
        match (self.laws, self.set) {
            (Laws::Fide2005, _) => 180,
            (Laws::Fide2023, RuleSet::Standard) => 120,
            (Laws::Fide2023, RuleSet::Rapid | RuleSet::Blitz) => 60,
        }
    }

    /// The Article that sets the time added after an incorrect claim.
    pub fn wrong_claim_article(self) -> &'static str {
        match (self.laws, self.set) {
            (Laws::Fide2005, _) => "Art. 9.5(b) of the 2005 Laws",
            (Laws::Fide2023, RuleSet::Standard) => "Art. 9.5.3",
            (Laws::Fide2023, _) => "Art. 9.5.3 with A.3",
        }
    }
}

/// Formats a time bonus for a ruling: "2 minutes".
pub fn minutes(seconds: u32) -> String {
    match seconds {
        60 => "1 minute".to_owned(),
        s if s % 60 == 0 => format!("{} minutes", s / 60),
        s => format!("{s} seconds"),
    }
}

/// What the Laws prescribe after a player's `count`-th completed illegal
/// move (Art. 7.5.5; A.3 and B.3 for rapid and blitz; 7.4(b) in 2005).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IllegalMovePenalty {
    /// Time added to the opponent's clock, in seconds.
    TimeToOpponent(u32),
    /// The game is lost, unless the opponent cannot checkmate by any series
    /// of legal moves (then drawn). In 2005 there was no such exception.
    Loss {
        /// Whether a draw replaces the loss when the opponent cannot mate.
        unless_no_mate: bool,
    },
}

impl Rules {
    /// The penalty for a player's `count`-th completed illegal move.
    pub fn illegal_move_penalty(self, count: u32) -> IllegalMovePenalty {
        let bonus = match self.set {
            RuleSet::Standard => 120,
            RuleSet::Rapid | RuleSet::Blitz => 60,
        };
        match self.laws {
            Laws::Fide2023 if count >= 2 => IllegalMovePenalty::Loss {
                unless_no_mate: true,
            },
            Laws::Fide2005 if count >= 3 => IllegalMovePenalty::Loss {
                unless_no_mate: false,
            },
            _ => IllegalMovePenalty::TimeToOpponent(bonus),
        }
    }

    /// The Article behind the penalty.
    pub fn illegal_move_article(self) -> &'static str {
        match (self.laws, self.set) {
            (Laws::Fide2005, _) => "Art. 7.4(b) of the 2005 Laws",
            (Laws::Fide2023, RuleSet::Standard) => "Art. 7.5.5",
            (Laws::Fide2023, RuleSet::Rapid) => "Art. 7.5.5 with A.3",
            (Laws::Fide2023, RuleSet::Blitz) => "Art. 7.5.5 with A.3 and B.3",
        }
    }
}
