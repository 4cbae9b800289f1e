//! How well the engine follows each kind of board: the simulator's styles,
//! and the three numbers per style (games exact, games with a wrong move,
//! plies missing) that the tests ratchet and the README reports.

use std::fmt::Write as _;

use super::{Hostile, Noise, SimOptions, simulate};
use shakmaty::{CastlingMode, Move, Position, san::SanPlus};

use crate::{
    Alert, AlertKind, EngineConfig, Game, Orientation, pgn::ImportedGame, replay::reported_games,
    replay_script, script::write_script,
};

/// A kind of board and of players, as the simulator makes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// Its name in the table.
    pub name: &'static str,
    /// What it simulates, for the table.
    pub what: &'static str,
    /// The noise of hands and sensors.
    pub noise: Noise,
    /// The hostile board.
    pub hostile: Hostile,
}

const BASE: Style = Style {
    name: "",
    what: "",
    noise: Noise::Human,
    hostile: Hostile {
        scan_ms: None,
        blips: false,
        slow_hands: false,
        outages: false,
        rotated: false,
    },
};
const CALM: Hostile = BASE.hostile;

/// Every style, gentlest first.
pub const STYLES: &[Style] = &[
    Style {
        name: "clean",
        what: "one clean event sequence per move",
        noise: Noise::None,
        ..BASE
    },
    Style {
        name: "human",
        what: "capture orders, castling and promotion styles, slides, wobbles",
        ..BASE
    },
    Style {
        name: "rough",
        what: "human, with flicker on unrelated squares and scans that skip a ply",
        noise: Noise::Rough,
        ..BASE
    },
    Style {
        name: "scan-250",
        what: "a board that only reports full scans, every 250 ms",
        hostile: Hostile {
            scan_ms: Some(250),
            ..CALM
        },
        ..BASE
    },
    Style {
        name: "scan-1000",
        what: "full scans every second: skipped positions, vacate-and-refill",
        hostile: Hostile {
            scan_ms: Some(1000),
            ..CALM
        },
        ..BASE
    },
    Style {
        name: "blips",
        what: "sensor blips of 5–60 ms on any square",
        hostile: Hostile {
            blips: true,
            ..CALM
        },
        ..BASE
    },
    Style {
        name: "slow-hands",
        what: "rook put down up to 5 s after the king, pieces held up to 20 s",
        hostile: Hostile {
            slow_hands: true,
            ..CALM
        },
        ..BASE
    },
    Style {
        name: "outages",
        what: "the cable out for 1–10 plies, then the board's dump",
        hostile: Hostile {
            outages: true,
            ..CALM
        },
        ..BASE
    },
    Style {
        name: "rotated",
        what: "the board turned round",
        hostile: Hostile {
            rotated: true,
            ..CALM
        },
        ..BASE
    },
    Style {
        name: "hostile",
        what: "all of it at once, on a board scanning every 700 ms",
        noise: Noise::Rough,
        hostile: Hostile {
            scan_ms: Some(700),
            blips: true,
            slow_hands: true,
            outages: true,
            rotated: true,
        },
    },
];

impl Style {
    /// The simulator's options for this style.
    pub fn options(&self, variant: Variant, seed: u64) -> SimOptions {
        SimOptions {
            seed,
            occupancy: !variant.identity,
            clock: variant.clock,
            noise: self.noise,
            hostile: self.hostile,
        }
    }
}

impl Style {
    /// How the board is read: an occupancy board turned round looks the
    /// same at the start, so the organiser configures it; one that
    /// identifies pieces is recognised.
    pub fn engine(&self, variant: Variant) -> EngineConfig {
        reading_config(self.hostile.rotated, variant)
    }
}

/// How a board of `variant`, turned round or not, is read: an occupancy
/// board turned round looks the same at the start, so the organiser
/// configures it; one that identifies pieces is recognised.
pub(crate) fn reading_config(rotated: bool, variant: Variant) -> EngineConfig {
    EngineConfig {
        orientation: if rotated && !variant.identity {
            Orientation::Rotated
        } else {
            Orientation::Normal
        },
        ..EngineConfig::default()
    }
}

/// Whether the board identifies pieces and whether a clock is connected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variant {
    /// The board identifies pieces (DGT, Certabo); otherwise occupancy only.
    pub identity: bool,
    /// A clock is pressed after each move.
    pub clock: bool,
}

impl Variant {
    /// The four variants.
    pub const ALL: [Variant; 4] = [
        Variant {
            identity: true,
            clock: true,
        },
        Variant {
            identity: true,
            clock: false,
        },
        Variant {
            identity: false,
            clock: true,
        },
        Variant {
            identity: false,
            clock: false,
        },
    ];

    /// `identity`/`occupancy`, `clock`/`no clock`.
    pub fn label(&self) -> String {
        format!(
            "{}, {}",
            if self.identity {
                "identity"
            } else {
                "occupancy"
            },
            if self.clock { "clock" } else { "no clock" }
        )
    }
}

/// What a replay of simulated games gave back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Tally {
    /// Games played.
    pub games: usize,
    /// Games recorded exactly.
    pub exact: usize,
    /// Games whose record has a move that was not played (or a game that
    /// was not played at all), or had one for a while: the simulated
    /// players never take a move back or change one, so a move the record
    /// withdrew (`takeback`, `move_changed`) was shown wrongly, or a right
    /// one was withdrawn.
    pub wrong: usize,
    /// Plies played.
    pub plies: usize,
    /// Plies played that are not in the record (after its last right move).
    pub missing: usize,
    /// Games with an alert against a player who did nothing wrong
    /// (`displaced_pieces`, `touch_move`, `illegal_move` and the like: the
    /// games are real and legal).
    pub false_alarms: usize,
    /// Games the generator left out as undecidable (the physics generator
    /// only; not counted in `games`).
    pub dropped: usize,
}

/// Simulates each of `games` on a board of `style` and `variant` (one
/// session per game, as in a round, so that one lost game does not shift
/// the others) and counts what the engine gave back.
pub fn measure(games: &[ImportedGame], style: &Style, variant: Variant, seed: u64) -> Tally {
    measure_every(games, 1, style, variant, seed)
}

/// As [`measure`], on every `step`-th game only (the first, then one in
/// `step`), each simulated as it is in the whole sample (its session is
/// numbered by its place in `games`), so a game's stream is the same
/// whichever games are measured with it.
pub fn measure_every(
    games: &[ImportedGame],
    step: usize,
    style: &Style,
    variant: Variant,
    seed: u64,
) -> Tally {
    let mut tally = Tally::default();
    for (i, game) in games.iter().enumerate().step_by(step.max(1)) {
        let script = session(game, style, variant, seed, i);
        let replayed = replay_script("simulated", &script, style.engine(variant));
        let replayed = replayed.as_ref().map(reported_games).unwrap_or_default();
        tally.add(game, replayed);
    }
    tally
}

/// The board script of game number `index` of a measured sample.
pub fn session(
    game: &ImportedGame,
    style: &Style,
    variant: Variant,
    seed: u64,
    index: usize,
) -> String {
    let opts = style.options(
        variant,
        seed.wrapping_mul(100_003).wrapping_add(index as u64),
    );
    write_script(&simulate(std::slice::from_ref(game), &opts))
}

/// For each game the engine did not record exactly, where its record first
/// differs: the material for finding out why.
pub fn differences(
    games: &[ImportedGame],
    style: &Style,
    variant: Variant,
    seed: u64,
) -> Vec<String> {
    let mut out = Vec::new();
    for (i, game) in games.iter().enumerate() {
        let script = session(game, style, variant, seed, i);
        let Ok(engine) = replay_script("simulated", &script, style.engine(variant)) else {
            out.push(format!("game {i}: the script does not replay"));
            continue;
        };
        let replayed = reported_games(&engine);
        let mut pos = game.start.clone();
        let want: Vec<String> = game
            .moves
            .iter()
            .map(|&m| SanPlus::from_move_and_play_unchecked(&mut pos, m).to_string())
            .collect();
        let got: Vec<String> = replayed
            .first()
            .map(|g| g.moves().iter().map(|m| m.san.to_string()).collect())
            .unwrap_or_default();
        if got == want && !withdrew(replayed) {
            continue;
        }
        let at = got.iter().zip(&want).take_while(|(a, b)| a == b).count();
        let alerts: Vec<String> = replayed
            .iter()
            .flat_map(|g| &g.alerts)
            .map(|a| format!("{}@{}", a.kind.as_str(), a.ply))
            .collect();
        if got == want {
            out.push(format!(
                "game {i}: recorded exactly, with moves withdrawn on the way; alerts {}",
                alerts.join(" ")
            ));
            continue;
        }
        out.push(format!(
            "game {i}: ply {}: recorded {:?}, played {:?}; alerts {}",
            at + 1,
            got.get(at),
            want.get(at),
            alerts.join(" ")
        ));
    }
    out
}

impl Tally {
    /// Counts one game against what the engine recorded of its session.
    pub(crate) fn add(&mut self, original: &ImportedGame, replayed: &[Game]) {
        self.add_excusing(original, replayed, &[]);
    }

    /// As [`Tally::add`], where the player really castled rook first at the
    /// plies `rook_first` (from 1): a `touch_move` on such a ply is the
    /// Art. 4.4.2 advisory for a real breach, not a false alarm.
    pub(crate) fn add_excusing(
        &mut self,
        original: &ImportedGame,
        replayed: &[Game],
        rook_first: &[usize],
    ) {
        let uci = |m: &Move| m.to_uci(CastlingMode::Standard).to_string();
        let want: Vec<String> = original.moves.iter().map(uci).collect();
        let got: Vec<String> = replayed
            .first()
            .map(|g| g.moves().iter().map(|m| uci(&m.mv)).collect())
            .unwrap_or_default();
        let common = got.iter().zip(&want).take_while(|(a, b)| a == b).count();
        self.games += 1;
        self.plies += want.len();
        self.missing += want.len() - common;
        // A second game the board never played is as wrong as a wrong move.
        let extra = replayed.iter().skip(1).any(|g| !g.moves().is_empty());
        let withdrew = withdrew(replayed);
        if got == want && !extra && !withdrew {
            self.exact += 1;
        } else if common < got.len() || extra || withdrew {
            self.wrong += 1;
        }
        let alarms = replayed
            .iter()
            .flat_map(|g| &g.alerts)
            .filter(|a| !castled_rook_first(original, rook_first, a))
            .any(|a| is_false_alarm(a.kind));
        if alarms {
            self.false_alarms += 1;
        }
    }
}

/// Whether `alert` is the touch-move advisory on a castling the player
/// began with the rook (Art. 4.4.2): raised by the castling side while the
/// castling is under way (the record one ply short) or once it is recorded.
fn castled_rook_first(original: &ImportedGame, rook_first: &[usize], alert: &Alert) -> bool {
    let first_mover = original.start.turn();
    alert.kind == AlertKind::TouchMove
        && rook_first.iter().any(|&ply| {
            let mover = if ply % 2 == 1 {
                first_mover
            } else {
                !first_mover
            };
            alert.side == Some(mover) && (alert.ply == ply || alert.ply + 1 == ply)
        })
}

/// Whether the record withdrew a move it had shown: simulated players
/// never take one back or change one.
fn withdrew(replayed: &[Game]) -> bool {
    replayed
        .iter()
        .flat_map(|g| &g.alerts)
        .any(|a| matches!(a.kind, AlertKind::Takeback | AlertKind::MoveChanged))
}

/// Alerts that accuse a player; the corpus games are legal, so these are
/// false.
fn is_false_alarm(kind: AlertKind) -> bool {
    matches!(
        kind,
        AlertKind::DisplacedPieces
            | AlertKind::TouchMove
            | AlertKind::IllegalMove
            | AlertKind::IllegalMoveStands
            | AlertKind::ClockWithoutMove
            | AlertKind::PawnNotPromoted
    )
}

/// The table, as Markdown: one row per style and variant.
pub fn table(rows: &[(Style, Variant, Tally)]) -> String {
    let mut out = String::from(
        "| style | board | games exact | games with a wrong move | plies missing | games with a false alarm |\n\
         |---|---|---|---|---|---|\n",
    );
    for (style, variant, t) in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {}/{} | {} | {}/{} | {} |",
            style.name,
            variant.label(),
            t.exact,
            t.games,
            t.wrong,
            t.missing,
            t.plies,
            t.false_alarms
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pgn::read_games;

    /// 1.e4 e5 2.Nf3 Nc6 3.Bc4 Bc5 4.O-O, castled rook first on an event
    /// board with a clock: Art. 4.4.2 forbids castling after touching the
    /// rook first, so the engine's advisory is a true alarm on ply 7 and
    /// the measure must not count it as false; any other ply is no excuse.
    #[test]
    fn a_rook_first_castling_is_no_false_alarm_when_the_player_did_it() {
        let pgn = "[White \"A\"]\n[Black \"B\"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bc4 Bc5 4. O-O *\n";
        let game = &read_games(pgn.as_bytes()).unwrap()[0];
        let script = "@1000 lift e2\n@1300 place e4 P\n@1500 press white\n\
                      @2500 lift e7\n@2800 place e5 p\n@3000 press black\n\
                      @4000 lift g1\n@4300 place f3 N\n@4500 press white\n\
                      @5500 lift b8\n@5800 place c6 n\n@6000 press black\n\
                      @7000 lift f1\n@7300 place c4 B\n@7500 press white\n\
                      @8500 lift f8\n@8800 place c5 b\n@9000 press black\n\
                      @10000 lift h1\n@10300 place f1 R\n@11000 lift e1\n\
                      @11300 place g1 K\n@11500 press white\n";
        let engine = replay_script("castling", script, EngineConfig::default()).unwrap();
        let replayed = reported_games(&engine);
        assert!(
            replayed[0]
                .alerts
                .iter()
                .any(|a| a.kind == AlertKind::TouchMove),
            "the engine gives the Art. 4.4.2 advisory"
        );
        let mut excused = Tally::default();
        excused.add_excusing(game, replayed, &[7]);
        assert_eq!((excused.exact, excused.false_alarms), (1, 0));
        let mut counted = Tally::default();
        counted.add_excusing(game, replayed, &[5]);
        assert_eq!(counted.false_alarms, 1);
    }
}
