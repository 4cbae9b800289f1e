//! The checks every value the daemon takes goes through, the same way from
//! the config file, the command line and the arbiters' actions: PGN dates,
//! time controls, names, the settle time and the half-move clock.

/// The longest name (player, event, site, round), in bytes.
pub const MAX_NAME: usize = 200;

/// The longest settle time (ms): a board state standing this long counts.
pub const MAX_SETTLE_MS: u64 = 60_000;

/// The largest half-move clock: at 150 half-moves without a capture or a
/// pawn move the game is drawn (FIDE Laws, Art. 9.6.2).
pub const MAX_HALFMOVES: u32 = 150;

/// Checks a PGN date, `YYYY.MM.DD` with `?` for unknown digits (a month
/// 01 to 12, a day 01 to 31).
pub fn check_date(text: &str) -> Result<String, String> {
    let bad = || {
        let hint = if text.contains('-') {
            format!(" (write {})", text.replace('-', "."))
        } else {
            String::new()
        };
        format!("date '{text}' is not YYYY.MM.DD{hint}")
    };
    let parts: Vec<&str> = text.split('.').collect();
    let shaped = parts.len() == 3
        && [4, 2, 2]
            .iter()
            .zip(&parts)
            .all(|(&n, p)| p.len() == n && p.bytes().all(|b| b.is_ascii_digit() || b == b'?'));
    if !shaped {
        return Err(bad());
    }
    let within = |p: &str, max: u32| {
        p.contains('?') || p.parse::<u32>().is_ok_and(|v| (1..=max).contains(&v))
    };
    if !within(parts[1], 12) || !within(parts[2], 31) {
        return Err(format!(
            "date '{text}': no month {} day {}",
            parts[1], parts[2]
        ));
    }
    Ok(text.to_owned())
}

/// Checks a `TimeControl` tag value as the PGN standard (section 9.6.1)
/// writes it: `?`, `-`, or fields joined by `:`, each `moves/seconds`,
/// `seconds`, `seconds+increment` or `*seconds` (sandclock).
pub fn check_time_control(text: &str) -> Result<(), String> {
    if text == "?" || text == "-" {
        return Ok(());
    }
    let number = |s: &str| !s.is_empty() && s.len() <= 9 && s.bytes().all(|b| b.is_ascii_digit());
    let positive = |s: &str| number(s) && s.bytes().any(|b| b != b'0');
    let field = |f: &str| {
        if let Some(s) = f.strip_prefix('*') {
            positive(s)
        } else if let Some((moves, secs)) = f.split_once('/') {
            positive(moves) && positive(secs)
        } else if let Some((secs, inc)) = f.split_once('+') {
            positive(secs) && number(inc)
        } else {
            positive(f)
        }
    };
    if text.split(':').all(field) {
        Ok(())
    } else {
        Err(format!(
            "time control '{text}' is not a PGN TimeControl: seconds, seconds+increment, moves/seconds or *seconds, fields joined by ':' (e.g. 40/5400+30:1800+30), or ? or -"
        ))
    }
}

/// Checks a name (a player's, the event's, ...): 1 to [`MAX_NAME`] bytes,
/// not only blanks, no control characters.
pub fn check_name(what: &str, text: &str) -> Result<(), String> {
    if text.trim().is_empty() || text.len() > MAX_NAME {
        return Err(format!(
            "{what} must have 1 to {MAX_NAME} bytes, not {}",
            text.len()
        ));
    }
    if let Some(c) = text.chars().find(|c| c.is_control()) {
        return Err(format!(
            "{what} has a control character ({:?}): names are printed in PGN tags",
            c
        ));
    }
    Ok(())
}

/// Checks a settle time (ms): 1 to [`MAX_SETTLE_MS`].
pub fn check_settle_ms(ms: u64) -> Result<(), String> {
    if (1..=MAX_SETTLE_MS).contains(&ms) {
        Ok(())
    } else {
        Err(format!(
            "settle_ms {ms} is not between 1 and {MAX_SETTLE_MS}"
        ))
    }
}

/// Checks a FEN's half-move clock: at most [`MAX_HALFMOVES`].
pub fn check_halfmove_clock(fen: &str) -> Result<(), String> {
    let Some(clock) = fen.split_whitespace().nth(4) else {
        return Ok(());
    };
    match clock.parse::<u64>() {
        Ok(n) if n <= u64::from(MAX_HALFMOVES) => Ok(()),
        _ => Err(format!(
            "half-move clock {clock} is beyond {MAX_HALFMOVES} (the 75-move rule, Art. 9.6.2, ends the game there)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert!(check_date("2026.11.22").is_ok());
        assert!(check_date("2026.??.??").is_ok());
        assert!(check_date("????.??.??").is_ok());
        assert!(check_date("9999.99.99").is_err());
        assert!(check_date("2026.13.01").is_err());
        assert!(check_date("2026.00.10").is_err());
        assert!(check_date("2026.11.32").is_err());
        let e = check_date("2026-11-22").unwrap_err();
        assert!(e.contains("write 2026.11.22"), "{e}");
    }

    /// Examples from the PGN standard, section 9.6.1.
    #[test]
    fn time_controls() {
        for good in [
            "?",
            "-",
            "40/9000",
            "300",
            "4500+60",
            "*180",
            "40/7200:3600",
            "5400+30",
        ] {
            assert!(check_time_control(good).is_ok(), "{good}");
        }
        for bad in [
            "garbage", "", "90+", "+30", "40/", "0", "1:", "90 + 30", "-5",
        ] {
            assert!(check_time_control(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn names() {
        assert!(check_name("event", "Olympiad 2026").is_ok());
        assert!(check_name("event", "").is_err());
        assert!(check_name("event", "  ").is_err());
        assert!(check_name("event", &"x".repeat(20_000)).is_err());
        assert!(check_name("event", &"x".repeat(200)).is_ok());
        assert!(check_name("event", "a\0b").is_err());
    }

    #[test]
    fn settle_and_halfmoves() {
        assert!(check_settle_ms(u64::MAX).is_err());
        assert!(check_settle_ms(0).is_err());
        assert!(check_settle_ms(500).is_ok());
        assert!(check_halfmove_clock("8/8/8/8/8/8/8/K1k5 w - - 150 1").is_ok());
        assert!(check_halfmove_clock("8/8/8/8/8/8/8/K1k5 w - - 151 1").is_err());
        assert!(check_halfmove_clock("8/8/8/8/8/8/8/K1k5 w - - 99999999999 1").is_err());
    }
}
