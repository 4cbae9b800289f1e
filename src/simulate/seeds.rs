//! Measuring over several seeds: per style and variant, the worst seed's
//! numbers, and the Markdown table that shows them.

use std::fmt::Write as _;

use super::{Tally, Variant};

/// One row of the many-seeds table: a style and variant, and its worst
/// seed's tally.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeedRow {
    /// `sim` or `physics`.
    pub generator: &'static str,
    /// The style's name.
    pub style: &'static str,
    /// The board variant.
    pub variant: Variant,
    /// The worst seed.
    pub seed: u64,
    /// Its numbers.
    pub tally: Tally,
}

/// How bad a tally is: wrong moves first, then false alarms, then plies
/// missing, then games not exact.
fn badness(t: &Tally) -> (usize, usize, usize, usize) {
    (
        t.wrong,
        t.false_alarms,
        t.missing,
        t.games.saturating_sub(t.exact),
    )
}

/// The worst of several seeds' tallies (the first of equals).
pub fn worst(tallies: &[(u64, Tally)]) -> Option<(u64, Tally)> {
    let mut worst: Option<(u64, Tally)> = None;
    for &(seed, t) in tallies {
        if worst.is_none_or(|(_, w)| badness(&t) > badness(&w)) {
            worst = Some((seed, t));
        }
    }
    worst
}

/// The table, as Markdown: one row per generator, style and variant, with
/// the worst seed's four numbers and the games the generator dropped.
pub fn seeds_table(rows: &[SeedRow]) -> String {
    let mut out = String::from(
        "| generator | style | board | worst seed | games exact | games with a wrong move | plies missing | games with a false alarm | games dropped |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let t = &r.tally;
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {}/{} | {} | {}/{} | {} | {} |",
            r.generator,
            r.style,
            r.variant.label(),
            r.seed,
            t.exact,
            t.games,
            t.wrong,
            t.missing,
            t.plies,
            t.false_alarms,
            t.dropped
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worst_seed_is_the_one_with_most_wrong_moves_then_alarms() {
        let t = |wrong, false_alarms, missing| Tally {
            games: 10,
            exact: 10 - wrong,
            wrong,
            plies: 100,
            missing,
            false_alarms,
            dropped: 0,
        };
        let seeds = [(1, t(0, 3, 9)), (2, t(1, 0, 0)), (3, t(1, 1, 0))];
        assert_eq!(worst(&seeds).map(|(s, _)| s), Some(3));
        assert_eq!(worst(&[]), None);
    }
}
