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

/// The README's table: one row per generator and style, one column per
/// board variant, each cell the worst seed's four numbers (games exact of
/// games kept, games with a wrong move, plies missing, games with a false
/// alarm).
pub fn compact_table(rows: &[SeedRow]) -> String {
    let mut out = String::from("| generator | style |");
    for variant in Variant::ALL {
        let _ = write!(out, " {} |", variant.label());
    }
    out.push_str("\n|---|---|---|---|---|---|\n");
    let mut styles: Vec<(&str, &str)> = Vec::new();
    for r in rows {
        if !styles.contains(&(r.generator, r.style)) {
            styles.push((r.generator, r.style));
        }
    }
    for (generator, style) in styles {
        let _ = write!(out, "| {generator} | {style} |");
        for variant in Variant::ALL {
            let cell = rows
                .iter()
                .find(|r| (r.generator, r.style, r.variant) == (generator, style, variant));
            match cell {
                Some(SeedRow { tally: t, .. }) => {
                    let _ = write!(
                        out,
                        " {}/{} · {} · {} · {} |",
                        t.exact, t.games, t.wrong, t.missing, t.false_alarms
                    );
                }
                None => out.push_str(" – |"),
            }
        }
        out.push('\n');
    }
    out
}

/// Two seeds for the test suite that are none of `used` (the seeds
/// measured or looked at while developing), drawn from `entropy` (the
/// caller's clock: fresh each time the table is made).
pub fn fresh_seeds(entropy: u64, used: &[u64]) -> [u64; 2] {
    // SplitMix64: a well-spread sequence from any starting value.
    let mut state = entropy;
    let mut next = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce9_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        // Small enough to type on a command line.
        (z ^ (z >> 31)) % 1_000_000
    };
    let mut seeds = [0; 2];
    let mut found = 0;
    while found < 2 {
        let s = next();
        if s > 100 && !used.contains(&s) && !seeds[..found].contains(&s) {
            seeds[found] = s;
            found += 1;
        }
    }
    seeds
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

    #[test]
    fn fresh_seeds_are_two_distinct_seeds_never_used() {
        for entropy in 0..200 {
            let used = [1, 2, 3, 4, 5];
            let [a, b] = fresh_seeds(entropy, &used);
            assert_ne!(a, b);
            assert!(!used.contains(&a) && !used.contains(&b));
        }
        assert_ne!(fresh_seeds(1, &[]), fresh_seeds(2, &[]));
    }

    #[test]
    fn the_compact_table_has_a_cell_per_variant_with_four_numbers() {
        let tally = Tally {
            games: 22,
            exact: 20,
            wrong: 1,
            plies: 1151,
            missing: 7,
            false_alarms: 2,
            dropped: 0,
        };
        let rows: Vec<SeedRow> = Variant::ALL
            .into_iter()
            .take(3)
            .map(|variant| SeedRow {
                generator: "sim",
                style: "human",
                variant,
                seed: 4,
                tally,
            })
            .collect();
        let table = compact_table(&rows);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 3, "{table}");
        assert_eq!(
            lines[2],
            "| sim | human | 20/22 · 1 · 7 · 2 | 20/22 · 1 · 7 · 2 | 20/22 · 1 · 7 · 2 | – |"
        );
    }
}
