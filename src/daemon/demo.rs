//! `eboard demo`: the daemon on a bundled event of eight simulated boards.
//!
//! Each board plays one classical game of `pgn/demo-round.pgn` (compiled
//! into the binary), with a simulated human's timing and noise and a clock.
//! Two boards also carry incidents an arbiter should see: on board 3 a
//! player puts his king on a square it cannot reach and presses the clock (a
//! completed illegal move, Art. 7.5.1), then puts the king back; on board 6
//! a piece is knocked off its square for a few seconds (Art. 7.4).
//!
//! The round plays in a loop, so that the dashboard is live whenever
//! someone opens it: once every board has played its game to the end, and
//! after a pause to look at the final positions, each board starts a new
//! game (the arbiter's `new_game`, journaled as such) and plays the same
//! game again with another seed (other timing and noise).

use std::{path::PathBuf, sync::Arc, time::Duration};

use shakmaty::{Bitboard, Chess, Position, Role, Square};

use crate::{
    engine::EngineConfig,
    event::{BoardEvent, Millis, TimedEvent},
    pgn::{ImportedGame, read_games},
    simulate::simulate,
};

use super::{
    BoardSpec, Daemon, DaemonError, DaemonSpec, ServeArgs,
    action::Action,
    actor::{BoardHandle, Feed},
    board::RoundInfo,
    config::Player,
    init_tracing, serve_then, sim_options,
};

/// The bundled games, one per board.
pub const DEMO_PGN: &str = include_str!("../../pgn/demo-round.pgn");

/// `eboard demo`.
#[derive(Debug, Clone, clap::Args)]
pub struct DemoArgs {
    #[command(flatten)]
    pub serve: ServeArgs,
    #[command(flatten)]
    pub lichess: super::lichess::LichessArgs,
}

/// Something that happens at a board besides the game's moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Incident {
    /// The player to move puts his king on a square it cannot reach,
    /// presses the clock, then puts the king back.
    IllegalKingMove,
    /// A piece of the player not to move is knocked off its square and put
    /// back a few seconds later.
    KnockedOverPiece,
}

/// Inserts an incident into a simulated session of one game (with a clock),
/// after the clock report of ply `after_ply`; later events move later.
pub fn inject(
    events: &mut Vec<TimedEvent>,
    game: &ImportedGame,
    after_ply: usize,
    incident: Incident,
) {
    let Some(press) = events
        .iter()
        .enumerate()
        .filter(|(_, e)| matches!(e.event, BoardEvent::Press(_)))
        .nth(after_ply.saturating_sub(1))
        .map(|(i, _)| i)
    else {
        return;
    };
    let mut at = press + 1;
    if matches!(
        events.get(at).map(|e| &e.event),
        Some(BoardEvent::Clock(..))
    ) {
        at += 1;
    }
    let mut pos: Chess = game.start.clone();
    for &m in game.moves.iter().take(after_ply) {
        pos.play_unchecked(m);
    }
    let t0 = events[at - 1].at;
    let steps: Vec<(Millis, BoardEvent)> = match incident {
        Incident::IllegalKingMove => {
            let us = pos.turn();
            let king = pos.board().king_of(us).unwrap_or(Square::E1);
            let piece = Some(us.king());
            let reach = shakmaty::attacks::king_attacks(king);
            let target = (!pos.board().occupied() & !reach & !Bitboard::from_square(king))
                .into_iter()
                .min_by_key(|sq| king.distance(*sq).max(2));
            let Some(target) = target else { return };
            vec![
                (600, BoardEvent::Lift(king)),
                (1100, BoardEvent::Place(target, piece)),
                (1600, BoardEvent::Press(us)),
                (3600, BoardEvent::Lift(target)),
                (4000, BoardEvent::Place(king, piece)),
            ]
        }
        Incident::KnockedOverPiece => {
            let them = !pos.turn();
            let board = pos.board();
            let sq = (board.by_color(them) & board.by_role(Role::Pawn))
                .into_iter()
                .next()
                .or_else(|| board.by_color(them).into_iter().next());
            let Some(sq) = sq else { return };
            let piece = board.piece_at(sq);
            vec![
                (500, BoardEvent::Lift(sq)),
                (3500, BoardEvent::Place(sq, piece)),
            ]
        }
    };
    let shift = steps.last().map_or(0, |s| s.0) + 500;
    for e in &mut events[at..] {
        e.at += shift;
    }
    let inserted: Vec<TimedEvent> = steps
        .into_iter()
        .map(|(dt, event)| TimedEvent { at: t0 + dt, event })
        .collect();
    events.splice(at..at, inserted);
}

/// How long the final positions of a round stay on the boards before the
/// next round starts (board time: divided by `--speed`).
const ROUND_PAUSE: Duration = Duration::from_secs(20);

/// The bundled games.
fn demo_games() -> Result<Vec<ImportedGame>, DaemonError> {
    read_games(DEMO_PGN.as_bytes()).map_err(|e| DaemonError::Source {
        board: 0,
        source_text: "pgn/demo-round.pgn (bundled)".into(),
        message: e.to_string(),
    })
}

/// What board `id` plays in round `round` (from 0): its game, simulated
/// with a seed of its own for each round, with the board's incident.
pub fn demo_events(id: u32, game: &ImportedGame, round: u64) -> Vec<TimedEvent> {
    let seed = u64::from(id) + 1000 * round;
    let mut events = simulate(std::slice::from_ref(game), &sim_options(seed));
    match id {
        3 => inject(&mut events, game, 10, Incident::IllegalKingMove),
        6 => inject(&mut events, game, 12, Incident::KnockedOverPiece),
        _ => {}
    }
    events
}

/// The demo's boards: ids 1 to 8, one bundled game each.
pub fn demo_boards() -> Result<Vec<BoardSpec>, DaemonError> {
    let games = demo_games()?;
    let mut boards = Vec::new();
    for (i, game) in games.iter().enumerate() {
        let id = i as u32 + 1;
        let events = demo_events(id, game, 0);
        let tag = |name: &str| {
            game.tags
                .iter()
                .find(|(n, _)| n == name)
                .map_or_else(|| "?".to_owned(), |(_, v)| v.clone())
        };
        boards.push(BoardSpec {
            id,
            feed: Feed::Simulated(Arc::new(events)),
            white: Player {
                name: tag("White"),
                ..Player::default()
            },
            black: Player {
                name: tag("Black"),
                ..Player::default()
            },
            orientation: Default::default(),
        });
    }
    Ok(boards)
}

/// Today's date (UTC) as a PGN date.
pub fn today() -> String {
    let days = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    // Days to a civil date (proleptic Gregorian calendar).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}.{month:02}.{day:02}")
}

/// The demo's spec; `data_dir` is where its journals go.
pub fn demo_spec(serve: &ServeArgs, data_dir: PathBuf) -> Result<DaemonSpec, DaemonError> {
    Ok(DaemonSpec {
        round: RoundInfo {
            event: "eboard demo: classical games".into(),
            site: Some("Demo hall".into()),
            date: Some(today()),
            round: "1".into(),
            time_control: Some("300".into()),
        },
        engine: EngineConfig::default(),
        boards: demo_boards()?,
        data_dir,
        listen: serve.listen,
        speed: serve.speed,
        probe: false,
        max_event_streams: serve.max_event_streams,
        fresh_boards: Vec::new(),
        broadcast_delay: serve.broadcast_delay.unwrap_or_default(),
    })
}

/// `eboard demo`: journals go to a temporary directory (removed on exit)
/// unless `--data-dir` is given.
pub fn run(args: &DemoArgs) -> Result<(), DaemonError> {
    init_tracing();
    let (data_dir, _temp) = match &args.serve.data_dir {
        Some(d) => (d.clone(), None),
        None => {
            let temp = tempfile::Builder::new()
                .prefix("eboard-demo-")
                .tempdir()
                .map_err(|source| DaemonError::Io {
                    path: std::env::temp_dir(),
                    source,
                })?;
            (temp.path().to_owned(), Some(temp))
        }
    };
    let spec = demo_spec(&args.serve, data_dir)?;
    let ids: Vec<u32> = spec.boards.iter().map(|b| b.id).collect();
    let push = super::lichess::LichessSettings::resolve(None, &args.lichess, &ids)?;
    let speed = spec.speed;
    let games = demo_games()?;
    serve_then(spec, push, |daemon: &Daemon| {
        tokio::spawn(play_rounds(Arc::clone(&daemon.boards), games, speed));
    })
}

/// Whether every board has played all its events.
fn round_over(boards: &[BoardHandle]) -> bool {
    boards
        .iter()
        .all(|b| b.snapshot().summary["connection"] == "ended")
}

/// Starts a new round each time every board has played its game to the
/// end, until the daemon stops.
async fn play_rounds(boards: Arc<Vec<BoardHandle>>, games: Vec<ImportedGame>, speed: f64) {
    let pause = ROUND_PAUSE.div_f64(speed);
    for round in 1.. {
        while !round_over(&boards) {
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
        tokio::time::sleep(pause).await;
        tracing::info!(round = round + 1, "the demo starts its round again");
        for (b, game) in boards.iter().zip(&games) {
            // A board that takes no action (its journal failed) sits out.
            // The demo is its own arbiter: it confirms what it asks.
            if b.act(Action::NewGame, true).await.is_ok() {
                b.play(demo_events(b.id, game, round)).await;
            }
        }
        // The boards report the new round once they start playing it.
        while round_over(&boards) {
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{engine::Engine, replay::reported_games};

    #[test]
    fn demo_boards_replay_to_their_games() {
        let games = read_games(DEMO_PGN.as_bytes()).unwrap();
        assert_eq!(games.len(), 8);
        let boards = demo_boards().unwrap();
        for (b, game) in boards.iter().zip(&games) {
            let Feed::Simulated(events) = &b.feed else {
                panic!("demo boards are simulated");
            };
            assert!(
                events.windows(2).all(|w| w[0].at <= w[1].at),
                "board {}",
                b.id
            );
            let mut engine = Engine::new(EngineConfig::default());
            for e in events.iter() {
                engine.push(e).unwrap();
            }
            engine.finish();
            let played = reported_games(&engine);
            let sans: Vec<String> = played[0]
                .moves()
                .iter()
                .map(|m| m.san.to_string())
                .collect();
            let mut pos = game.start.clone();
            let expected: Vec<String> = game
                .moves
                .iter()
                .map(|&m| {
                    let san = shakmaty::san::SanPlus::from_move_and_play_unchecked(&mut pos, m);
                    san.to_string()
                })
                .collect();
            assert_eq!(sans, expected, "board {}", b.id);
            assert_eq!(played[0].outcome(), game.result, "board {}", b.id);
            // Boards 3 and 6 show the arbiter their incidents; the others
            // raise no irregularity.
            let kinds: Vec<&str> = played[0]
                .alerts
                .iter()
                .filter(|a| a.kind.is_irregularity() && a.kind.as_str() != "moves_inferred")
                .map(|a| a.kind.as_str())
                .collect();
            match b.id {
                // The king must then move if it can (7.5.1 with 4.3), so a
                // move by another piece also shows as touch-move.
                3 => assert!(kinds.starts_with(&["illegal_move"]), "board 3: {kinds:?}"),
                6 => assert_eq!(kinds, ["displaced_pieces"], "board 6"),
                _ => assert!(kinds.is_empty(), "board {}: {kinds:?}", b.id),
            }
        }
    }

    #[test]
    fn today_is_a_pgn_date() {
        let d = today();
        assert!(super::super::config::normalize_date(&d).is_ok(), "{d}");
        assert!(d.as_str() > "2024.01.01");
    }
}
