//! What the board reports of what happened on it: every lift and place
//! (the default), or full scans taken every few hundred milliseconds
//! (`scan_ms`), with the cable out for a few plies (`outages`) and the
//! board turned round (`rotated`).
//!
//! The simulator first writes what the hands did (the physical timeline,
//! with marks where each ply starts and ends), then this module turns it
//! into what a board of the chosen kind reports.

use std::{collections::BTreeSet, ops::Range};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::{Bitboard, Chess, Move, Position, Square};

use super::{
    SimOptions,
    decide::{decidable, first_move_mimicked, single_ply_decidable},
};
use crate::event::{BoardEvent, Millis, Scan, Sensed, TimedEvent};

/// One ply of the physical timeline.
#[derive(Debug, Clone)]
pub(crate) struct Mark {
    /// Its events: the player's thinking (and any blips in it), the move,
    /// the clock press.
    pub range: Range<usize>,
    /// When the hands start the move itself.
    pub move_start: Millis,
    /// When the board first shows the position after it.
    pub settled: Millis,
    /// When each lift, place or scan of the move happened.
    pub move_times: Vec<Millis>,
    /// The position before it.
    pub before: Chess,
    /// The move.
    pub mv: Move,
    /// The position after it.
    pub after: Chess,
}

/// One game of the physical timeline.
#[derive(Debug, Clone)]
pub(crate) struct GameMark {
    /// Its plies, as indices into the marks.
    pub plies: Range<usize>,
    /// Its start position.
    pub start: Chess,
    /// When its first event happened.
    pub start_time: Millis,
}

/// The cable is out from the start of ply `first` until after ply
/// `first + len - 1`; then the board dumps its position.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Outage {
    pub first: usize,
    pub len: usize,
}

struct Window {
    /// The events nobody hears.
    removed: Range<usize>,
    /// When the cable is out.
    from: Millis,
    /// When the board is back and dumps its position.
    dump_at: Millis,
    /// The position it dumps.
    shows: Chess,
    /// The clock's last report, sent with the dump.
    clock: Option<BoardEvent>,
}

/// What the simulator wrote down of the physical timeline besides its
/// events.
pub(crate) struct Timeline<'a> {
    pub marks: &'a [Mark],
    pub games: &'a [GameMark],
    pub outages: &'a [Outage],
    /// When each sensor blip was on the board.
    pub blips: &'a [Range<Millis>],
}

/// Turns the physical timeline into the board's reports.
pub(crate) fn render(
    events: Vec<TimedEvent>,
    timeline: &Timeline<'_>,
    opts: &SimOptions,
) -> Vec<TimedEvent> {
    let Timeline {
        marks,
        games,
        outages,
        blips,
    } = *timeline;
    let windows: Vec<Window> = outages
        .iter()
        .map(|o| window(&events, marks, o, opts))
        .collect();
    let mut out = match opts.hostile.scan_ms {
        Some(period) => Scanner {
            events: &events,
            marks,
            games,
            windows: &windows,
            outages,
            blips,
            identify: !opts.occupancy,
            clock: opts.clock,
            period: period.max(1),
            phase: ChaCha8Rng::seed_from_u64(opts.seed ^ 0x5ca7).random_range(0..period.max(1)),
        }
        .run(),
        None => cut(events, &windows, !opts.occupancy),
    };
    if opts.hostile.rotated {
        for ev in &mut out {
            ev.event = ev.event.rotated();
        }
    }
    out
}

fn window(events: &[TimedEvent], marks: &[Mark], o: &Outage, opts: &SimOptions) -> Window {
    let last = &marks[o.first + o.len - 1];
    let removed = marks[o.first].range.start..last.range.end;
    let end = events[removed.end - 1].at + 1;
    let dump_at = events.get(removed.end).map_or(end, |next| end.min(next.at));
    let clock = events[removed.clone()]
        .iter()
        .rev()
        .find(|e| matches!(e.event, BoardEvent::Clock(..)))
        .filter(|_| opts.clock)
        .map(|e| e.event.clone());
    Window {
        from: events[removed.start].at,
        removed,
        dump_at,
        shows: last.after.clone(),
        clock,
    }
}

/// A board that reports every lift and place: during an outage nothing
/// arrives, then the board's dump and the clock's report.
fn cut(events: Vec<TimedEvent>, windows: &[Window], identify: bool) -> Vec<TimedEvent> {
    let mut out = Vec::with_capacity(events.len());
    let mut next = windows.iter().peekable();
    let mut i = 0;
    while i < events.len() {
        if let Some(w) = next.next_if(|w| w.removed.start == i) {
            out.push(TimedEvent {
                at: w.dump_at,
                event: BoardEvent::Reconnected,
            });
            out.push(TimedEvent {
                at: w.dump_at,
                event: BoardEvent::Board(Box::new(Scan::from_board(w.shows.board(), identify))),
            });
            if let Some(clock) = &w.clock {
                out.push(TimedEvent {
                    at: w.dump_at,
                    event: clock.clone(),
                });
            }
            i = w.removed.end;
            continue;
        }
        out.push(events[i].clone());
        i += 1;
    }
    out
}

pub(super) fn is_physical(event: &BoardEvent) -> bool {
    matches!(
        event,
        BoardEvent::Lift(_) | BoardEvent::Place(..) | BoardEvent::Board(_)
    )
}

/// A board that only reports full scans, one every `period` ms.
struct Scanner<'a> {
    events: &'a [TimedEvent],
    marks: &'a [Mark],
    games: &'a [GameMark],
    windows: &'a [Window],
    outages: &'a [Outage],
    blips: &'a [Range<Millis>],
    identify: bool,
    /// The players press a clock after each move.
    clock: bool,
    period: Millis,
    phase: Millis,
}

impl Scanner<'_> {
    fn run(&self) -> Vec<TimedEvent> {
        let mut forced = BTreeSet::new();
        // Every game's start position, and the position before each outage,
        // are seen: the outage was chosen to be decidable from there.
        for game in self.games {
            forced.insert(game.start_time);
        }
        for o in self.outages {
            let at = match self.games.iter().find(|g| g.plies.start == o.first) {
                Some(game) => game.start_time,
                None => self.marks[o.first - 1].settled,
            };
            forced.insert(at);
        }
        let mut shown_fully = vec![false; self.marks.len()];
        let mut skipped = BTreeSet::new();
        loop {
            let (out, samples) = self.sample(&forced, &skipped);
            let before = (forced.len(), skipped.len());
            if !self.identify {
                self.skip_misleading(&samples, &forced, &shown_fully, &mut skipped);
            }
            for game in self.games {
                self.force_where_undecidable(game, &samples, &mut forced, &mut shown_fully);
            }
            if (forced.len(), skipped.len()) == before {
                return out;
            }
        }
    }

    /// On an occupancy board a piece in the hand reads like a capture by
    /// that piece whose refilled square the scan missed: a scan catching
    /// such a moment is left out (the board happened to scan a moment
    /// later), so that every state in between reads as a move in progress.
    fn skip_misleading(
        &self,
        samples: &[(Millis, Scan)],
        forced: &BTreeSet<Millis>,
        shown_fully: &[bool],
        skipped: &mut BTreeSet<Millis>,
    ) {
        for (t, scan) in samples {
            if forced.contains(t) {
                continue;
            }
            let p = self.marks.partition_point(|m| m.settled <= *t);
            let Some(mark) = self.marks.get(p) else {
                continue;
            };
            if self.blips.iter().any(|b| b.contains(t)) && self.blip_misleads(p, scan) {
                skipped.insert(*t);
                continue;
            }
            if shown_fully[p] || *t <= mark.move_start {
                continue;
            }
            let reads_as_a_move = mark.before.legal_moves().iter().any(|&m| {
                if m == mark.mv {
                    return false;
                }
                let mut after = mark.before.clone();
                after.play_unchecked(m);
                self.same(scan, &self.reading(&after))
            });
            if reads_as_a_move {
                skipped.insert(*t);
            }
        }
    }

    /// Whether a scan that caught a blip, taken before mark `p` settled,
    /// shows what another story would (20.Ne4 with 20...Qxd2 being made,
    /// the d2 pawn off, where 20.Nxe2 Qe4 was played and d2 blipped; or
    /// 24.Bg1 Kd7, g1 blipping after 24.Bxa7 Kd7): a position up to two
    /// plies from a position two plies back, or a capture in progress from
    /// one, off the moves played.
    fn blip_misleads(&self, p: usize, scan: &Scan) -> bool {
        let Some(game) = self
            .games
            .iter()
            .find(|g| g.plies.contains(&p) || g.plies.end == p)
        else {
            return false;
        };
        let shown = scan_occupancy(scan);
        (p.saturating_sub(2).max(game.plies.start)..p.min(game.plies.end)).any(|q| {
            let played: Vec<Move> = self.marks[q..game.plies.end].iter().map(|m| m.mv).collect();
            misread(&self.marks[q].before, &played, 2, shown)
        })
    }

    fn reading(&self, pos: &Chess) -> Scan {
        Scan::from_board(pos.board(), self.identify)
    }

    /// Whether a scan shows `want`: on an occupancy board a named
    /// (underpromoted) piece reads as occupied.
    fn same(&self, scan: &Scan, want: &Scan) -> bool {
        if self.identify {
            return scan == want;
        }
        Square::ALL
            .into_iter()
            .all(|sq| scan.get(sq).is_some() == want.get(sq).is_some())
    }

    /// Adds scans where the stretch between two positions the board showed
    /// cannot be read back without guessing.
    fn force_where_undecidable(
        &self,
        game: &GameMark,
        samples: &[(Millis, Scan)],
        forced: &mut BTreeSet<Millis>,
        shown_fully: &mut [bool],
    ) {
        let plies = game.plies.clone();
        let n = plies.len();
        let pos_at = |k: usize| {
            if k == 0 {
                &game.start
            } else {
                &self.marks[plies.start + k - 1].after
            }
        };
        let interval = |k: usize| self.standing(game, k);
        let seen: Vec<usize> = (0..=n)
            .filter(|&k| {
                let want = self.reading(pos_at(k));
                let span = interval(k);
                let first = samples.partition_point(|(t, _)| *t < span.start);
                samples[first..]
                    .iter()
                    .take_while(|(t, _)| span.contains(t))
                    .any(|(_, scan)| self.same(scan, &want))
            })
            .collect();
        let moves_between = |from: usize, to: usize| -> Vec<Move> {
            self.marks[plies.start + from..plies.start + to]
                .iter()
                .map(|m| m.mv)
                .collect()
        };
        for (w, pair) in seen.windows(2).enumerate() {
            let (i, j) = (pair[0], pair[1]);
            let moves = moves_between(i, j);
            // On occupancy a capture shows only its emptied square, which a
            // piece still in the hand shows too: the next move, the clock
            // or the players ending the game tell them apart; after a
            // checkmate or stalemate with no clock nothing does.
            let last_capture = j == n
                && (pos_at(n).is_checkmate() || pos_at(n).is_stalemate())
                && !self.identify
                && !self.clock
                && moves.last().is_some_and(|m| m.is_capture());
            // On occupancy the scan that shows a capture made (12.Qxa7: only
            // e3 emptied) also shows another line in progress: 12.Qd4 with
            // the opponent's queen about to take it on d4 and White's queen
            // already off. If the board up to the next position it shows
            // reads both ways, the capture is scanned being made (the
            // captured piece off its square). An outage's dump is chosen
            // with its own check.
            let last = j - 1;
            let mimicked = !self.identify
                && !shown_fully[plies.start + last]
                && (j == i + 1 || !self.in_outage(plies.start + i))
                && moves.last().is_some_and(|m| m.is_capture())
                && seen.get(w + 2).is_some_and(|&k| {
                    first_move_mimicked(pos_at(last), &moves_between(last, k), false)
                });
            if mimicked {
                shown_fully[plies.start + last] = true;
                forced.extend(self.marks[plies.start + last].move_times.iter().copied());
            }
            if j == i + 1 {
                let index = plies.start + i;
                if !shown_fully[index]
                    && (last_capture || !single_ply_decidable(pos_at(i), moves[0], self.identify))
                {
                    // Scan every state the move goes through.
                    shown_fully[index] = true;
                    forced.extend(self.marks[index].move_times.iter().copied());
                }
                continue;
            }
            let earlier: Vec<Chess> = (0..i).map(|k| pos_at(k).clone()).collect();
            if !last_capture
                && (self.in_outage(plies.start + i)
                    || decidable(&earlier, pos_at(i), &moves, self.identify))
            {
                continue;
            }
            for k in i + 1..j {
                forced.insert(interval(k).start);
            }
        }
    }

    /// When the position after the game's `k`th ply stands on the board:
    /// from when that ply settled to when the next move starts (or the next
    /// game does).
    fn standing(&self, game: &GameMark, k: usize) -> std::ops::Range<Millis> {
        let plies = &game.plies;
        let from = if k == 0 {
            game.start_time
        } else {
            self.marks[plies.start + k - 1].settled
        };
        let to = if k < plies.len() {
            self.marks[plies.start + k].move_start
        } else {
            self.games
                .iter()
                .find(|g| g.start_time > from)
                .map_or(Millis::MAX, |g| g.start_time)
        };
        from..to
    }

    /// Whether the ply after mark index `first` starts an outage.
    fn in_outage(&self, first: usize) -> bool {
        self.outages.iter().any(|o| o.first == first)
    }

    /// Samples the physical board at every scan time; returns the reports
    /// and what each scan read.
    fn sample(
        &self,
        forced: &BTreeSet<Millis>,
        skipped: &BTreeSet<Millis>,
    ) -> (Vec<TimedEvent>, Vec<(Millis, Scan)>) {
        let end = self.events.last().map_or(0, |e| e.at) + self.period;
        let mut times: BTreeSet<Millis> = forced.clone();
        let mut t = self.phase;
        while t <= end {
            times.insert(t);
            t += self.period;
        }
        times.retain(|&t| {
            !skipped.contains(&t)
                && !self
                    .windows
                    .iter()
                    .any(|w| (w.from..w.dump_at).contains(&t))
        });
        times.extend(self.windows.iter().map(|w| w.dump_at));

        let mut phys = Scan::from_board(&shakmaty::Board::default(), self.identify);
        // The first scan is always reported: the board says what stands on
        // it when the host connects.
        let mut last = Scan::empty();
        let mut out = Vec::new();
        let mut samples = Vec::with_capacity(times.len());
        let mut i = 0;
        let silent = |i: usize| self.windows.iter().any(|w| w.removed.contains(&i));
        for s in times {
            while i < self.events.len() && self.events[i].at <= s {
                let ev = &self.events[i];
                if is_physical(&ev.event) {
                    apply(&mut phys, &ev.event, self.identify);
                } else {
                    if let BoardEvent::Setup(fen) = &ev.event {
                        phys = Scan::from_board(&fen.as_setup().board, self.identify);
                        last = phys.clone();
                    }
                    if !silent(i) {
                        out.push(ev.clone());
                    }
                }
                i += 1;
            }
            let dump = self.windows.iter().find(|w| w.dump_at == s);
            if dump.is_some() {
                // The host saw the link come back.
                out.push(TimedEvent {
                    at: s,
                    event: BoardEvent::Reconnected,
                });
            }
            if phys != last {
                out.push(TimedEvent {
                    at: s,
                    event: BoardEvent::Board(Box::new(phys.clone())),
                });
                last = phys.clone();
            }
            if let Some(w) = dump
                && let Some(clock) = &w.clock
            {
                out.push(TimedEvent {
                    at: s,
                    event: clock.clone(),
                });
            }
            samples.push((s, phys.clone()));
        }
        for (k, ev) in self.events.iter().enumerate().skip(i) {
            if !is_physical(&ev.event) && !silent(k) {
                out.push(ev.clone());
            }
        }
        (out, samples)
    }
}

/// The squares a scan shows occupied.
fn scan_occupancy(scan: &Scan) -> Bitboard {
    Square::ALL
        .into_iter()
        .filter(|&sq| scan.get(sq).is_some())
        .collect()
}

/// Whether `shown` is `pos` (played earlier: a takeback), or a position up
/// to `depth` plies from it, or a capture in progress from one (the
/// captured piece off, the capturing one lifted or not), on a line that is
/// not the start of `played`.
fn misread(pos: &Chess, played: &[Move], depth: usize, shown: Bitboard) -> bool {
    pos.board().occupied() == shown || misread_from(pos, played, true, depth, shown)
}

fn misread_from(
    pos: &Chess,
    played: &[Move],
    on_line: bool,
    depth: usize,
    shown: Bitboard,
) -> bool {
    let board = pos.board().occupied();
    for m in pos.legal_moves() {
        let on = on_line && played.first() == Some(&m);
        let mut next = pos.clone();
        next.play_unchecked(m);
        if !on {
            // A piece merely lifted reads as a hand at work, which the
            // board goes on from; a captured piece off reads as a capture.
            let mut states = vec![next.board().occupied()];
            if let Move::Normal {
                from,
                capture: Some(_),
                to,
                ..
            } = m
            {
                states.push(board.without(to));
                states.push(board.without(to).without(from));
            }
            if states.contains(&shown) {
                return true;
            }
        }
        let rest = if on { &played[1..] } else { &[][..] };
        if depth > 1 && misread_from(&next, rest, on, depth - 1, shown) {
            return true;
        }
    }
    false
}

/// What a lift, place or scan does to the squares.
fn apply(phys: &mut Scan, event: &BoardEvent, identify: bool) {
    match event {
        BoardEvent::Lift(sq) => phys.0[sq.to_usize()] = None,
        BoardEvent::Place(sq, piece) => {
            // An occupancy board knows a piece only when the player named it.
            phys.0[sq.to_usize()] = Some(match piece {
                Some(p) => Sensed::Piece(*p),
                None => Sensed::Occupied,
            });
        }
        BoardEvent::Board(scan) => {
            *phys = (**scan).clone();
            if !identify {
                for sq in phys.0.iter_mut().flatten() {
                    *sq = Sensed::Occupied;
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulate::tests::{START, line};

    /// The start position after `before`, and the moves `then` from there.
    fn game(before: &[&str], then: &[&str]) -> (Chess, Vec<Move>) {
        let (start, mut moves) = line(START, &[before, then].concat());
        let rest = moves.split_off(before.len());
        (after(&start, &moves), rest)
    }

    fn after(pos: &Chess, moves: &[Move]) -> Chess {
        let mut p = pos.clone();
        for &m in moves {
            p.play_unchecked(m);
        }
        p
    }

    fn occupied_after(pos: &Chess, moves: &[Move]) -> Bitboard {
        after(pos, moves).board().occupied()
    }

    #[test]
    fn a_blip_that_shows_other_moves_made_misleads() {
        let (pos, played) = game(&[], &["e4", "e5"]);
        let (_, other) = game(&[], &["e4", "e6"]);
        assert!(misread(&pos, &played, 2, occupied_after(&pos, &other)));
        // The start position again reads as a takeback.
        assert!(misread(&pos, &played, 2, pos.board().occupied()));
    }

    #[test]
    fn a_blip_no_moves_explain_does_not_mislead() {
        let (pos, played) = game(&[], &["e4", "e5"]);
        let shown = occupied_after(&pos, &played).with(Square::H3);
        assert!(!misread(&pos, &played, 2, shown));
    }

    #[test]
    fn a_blip_that_shows_a_capture_being_made_misleads_unless_it_was_played() {
        // After 1.e4 d5, d5 and e4 empty is 2.exd5 being made.
        let (pos, played) = game(&["e4", "d5"], &["Nc3", "Nf6"]);
        let shown = pos
            .board()
            .occupied()
            .without(Square::D5)
            .without(Square::E4);
        assert!(misread(&pos, &played, 2, shown));
        let (pos, played) = game(&["e4", "d5"], &["exd5", "Qxd5"]);
        assert!(!misread(&pos, &played, 2, shown));
    }
}
