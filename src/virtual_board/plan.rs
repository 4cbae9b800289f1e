//! From a board script to what happens physically at a virtual board.
//!
//! A script says what the sensors read (`lift e2`, `place e4 P`, `board
//! ...`); a board of a given family can only say some of it, in its own
//! way. The plan resolves every event to the content of squares (a `place`
//! without a piece letter puts down the piece last lifted), keeps what the
//! wire cannot carry aside as *off-wire* events, and adds the artefacts of
//! the family's sensors:
//!
//! * DGT (field updates from a sweep of the squares): a moving piece is
//!   sometimes reported on its new square before its old square is
//!   reported empty, so that for a moment it stands on both; a capture is
//!   sometimes reported as a straight replacement, without the square ever
//!   reading empty; a piece straightened within one sweep is sometimes not
//!   reported at all. A result (`resign`, `draw`, `result 1-0`) is shown
//!   with DGT's result token, put on an empty square and taken off.
//! * Millennium (full scans about every 41 ms): every change within one
//!   scan period is reported by the one status at its end.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use shakmaty::{Board, CastlingMode, Chess, Color, Outcome, Piece, Position, Square};

use crate::{
    event::{BoardEvent, Millis, Seconds, Sensed, TimedEvent},
    protocol::dgt::MagicPiece,
    transport::Protocol,
};

/// What stands on a square.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Content {
    /// A chess piece.
    Piece(Piece),
    /// A DGT result token.
    Token(MagicPiece),
}

/// The content of every square, a1 first (shakmaty's order).
pub type Squares = [Option<Content>; 64];

/// Something that happens at the board.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// A square's content changed.
    Set(Square, Option<Content>),
    /// Several squares changed at once (a scan, a set-up): the new content
    /// of every square.
    Scan(Box<Squares>),
    /// That player pressed the clock.
    Press(Color),
    /// The clock shows these times (White, Black).
    Clock(Seconds, Seconds),
    /// That player's flag fell.
    Flag(Color),
    /// The clock is set for a new game with that player to move: his lever
    /// up, flags cleared.
    ClockReset(Color),
    /// The USB cable is pulled.
    Unplug,
    /// The USB cable is plugged in again.
    Replug,
    /// An event the family cannot report (a PGN tag, a claim, a result on a
    /// board without result tokens): it is left to the arbiter's console.
    OffWire(BoardEvent),
}

/// An action with its time in the script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Script time.
    pub at: Millis,
    /// What happens.
    pub action: Action,
}

/// How to plan.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PlanOptions {
    /// Add the family's sensor artefacts.
    pub artefacts: bool,
    /// Seed of the artefacts.
    pub seed: u64,
    /// Script times at which the cable is pulled, and put back.
    pub unplugged: Vec<(Millis, Millis)>,
    /// The board is set up turned round: White's pieces stand on the side
    /// its squares are numbered a8–h8 (what the script calls e2 is e7 to
    /// the board).
    pub rotated: bool,
    /// The board is powered by its cable (a USB board without a battery):
    /// unplugged, it is off and logs nothing in its memory.
    pub cable_powered: bool,
}

/// The Millennium scan period (20 units of 2.048 ms), rounded up.
pub const MILLENNIUM_SCAN_MS: Millis = 41;

/// How long a result token stays on the board.
const TOKEN_MS: Millis = 500;

/// The squares of the standard start position.
pub fn start_squares() -> Squares {
    squares_of(&Board::default())
}

/// The same squares as a board turned round by 180° numbers them.
pub fn rotate_squares(squares: &Squares) -> Squares {
    let mut out = [None; 64];
    for (i, c) in squares.iter().enumerate() {
        out[Square::new(i as u32).rotate_180().to_usize()] = *c;
    }
    out
}

/// A step as a board turned round sees it.
fn rotate_step(step: Step) -> Step {
    let action = match step.action {
        Action::Set(sq, c) => Action::Set(sq.rotate_180(), c),
        Action::Scan(squares) => Action::Scan(Box::new(rotate_squares(&squares))),
        other => other,
    };
    Step { action, ..step }
}

fn squares_of(board: &Board) -> Squares {
    let mut out = [None; 64];
    for (sq, p) in board.iter() {
        out[sq.to_usize()] = Some(Content::Piece(p));
    }
    out
}

/// Plans a script for a board of this family.
pub fn plan(events: &[TimedEvent], protocol: Protocol, options: &PlanOptions) -> Vec<Step> {
    let mut resolver = Resolver {
        squares: start_squares(),
        in_hand: Vec::new(),
        phantom: [false; 64],
        protocol,
        steps: Vec::new(),
        last_press: None,
        boundary: None,
    };
    for e in events {
        resolver.event(e);
    }
    let mut steps = resolver.steps;
    let mut rng = ChaCha8Rng::seed_from_u64(options.seed);
    match protocol {
        Protocol::Dgt => {
            if options.artefacts {
                steps = dgt_artefacts(steps, &mut rng);
            }
            steps = remove_tokens(steps);
        }
        Protocol::Millennium => steps = scan_periods(steps, MILLENNIUM_SCAN_MS),
        Protocol::Certabo => {}
    }
    if options.rotated {
        steps = steps.into_iter().map(rotate_step).collect();
    }
    add_plugging(&mut steps, &options.unplugged);
    steps
}

struct Resolver {
    squares: Squares,
    /// Pieces lifted and not yet put down, last lifted last.
    in_hand: Vec<Piece>,
    /// Squares read occupied by something that is not a piece (flicker).
    phantom: [bool; 64],
    protocol: Protocol,
    steps: Vec<Step>,
    /// The player who pressed the clock last.
    last_press: Option<Color>,
    /// Where the next game begins (its first tag, set-up or scan) since
    /// that press, if it began.
    boundary: Option<usize>,
}

impl Resolver {
    fn push(&mut self, at: Millis, action: Action) {
        self.steps.push(Step { at, action });
    }

    fn off_wire(&mut self, at: Millis, e: &BoardEvent) {
        self.push(at, Action::OffWire(e.clone()));
    }

    fn set(&mut self, at: Millis, sq: Square, content: Option<Content>) {
        self.squares[sq.to_usize()] = content;
        self.push(at, Action::Set(sq, content));
    }

    fn take_from_hand(&mut self, piece: Option<Piece>) -> Option<Piece> {
        match piece {
            Some(p) => {
                if let Some(i) = self.in_hand.iter().rposition(|&h| h == p) {
                    self.in_hand.remove(i);
                }
                Some(p)
            }
            None => self.in_hand.pop(),
        }
    }

    /// The same player presses twice in a row only when a new game began
    /// in between: the arbiter set the clock for it, which a clock reports
    /// as its levers moving. That is put where the new game began, when the
    /// last one is over, so that the engine ignores it.
    fn press(&mut self, at: Millis, c: Color) {
        if self.last_press == Some(c) {
            let idx = self.boundary.unwrap_or(self.steps.len());
            let reset_at = self.steps.get(idx).map_or(at, |s| s.at);
            self.steps.insert(
                idx,
                Step {
                    at: reset_at,
                    action: Action::ClockReset(c),
                },
            );
        }
        self.last_press = Some(c);
        self.boundary = None;
        self.push(at, Action::Press(c));
    }

    fn event(&mut self, e: &TimedEvent) {
        let at = e.at;
        let clock = self.protocol == Protocol::Dgt;
        if self.last_press.is_some()
            && self.boundary.is_none()
            && matches!(
                e.event,
                BoardEvent::Tag(..) | BoardEvent::Setup(_) | BoardEvent::Board(_)
            )
        {
            self.boundary = Some(self.steps.len());
        }
        match &e.event {
            BoardEvent::Lift(sq) => {
                let i = sq.to_usize();
                if std::mem::take(&mut self.phantom[i]) {
                    self.set(at, *sq, None);
                } else if let Some(Content::Piece(p)) = self.squares[i] {
                    self.in_hand.push(p);
                    self.set(at, *sq, None);
                }
            }
            BoardEvent::Place(sq, piece) => {
                let i = sq.to_usize();
                let p = match self.take_from_hand(*piece) {
                    Some(p) => p,
                    None => {
                        // Nothing in hand: a sensor read a square occupied
                        // that is not. The wire needs a piece; any will do.
                        self.phantom[i] = true;
                        Color::White.pawn()
                    }
                };
                if let Some(Content::Piece(old)) = self.squares[i] {
                    self.in_hand.push(old);
                }
                self.set(at, *sq, Some(Content::Piece(p)));
            }
            BoardEvent::Board(scan) => {
                let mut next = self.squares;
                let mut appeared = Vec::new();
                for (i, n) in next.iter_mut().enumerate() {
                    let old = self.squares[i];
                    match scan.0[i] {
                        None => {
                            if let Some(Content::Piece(p)) = old
                                && !self.phantom[i]
                            {
                                self.in_hand.push(p);
                            }
                            self.phantom[i] = false;
                            *n = None;
                        }
                        Some(Sensed::Piece(p)) => {
                            if old != Some(Content::Piece(p)) {
                                appeared.push(p);
                            }
                            *n = Some(Content::Piece(p));
                        }
                        Some(Sensed::Occupied) => {
                            if old.is_none() {
                                let p = self.in_hand.pop().unwrap_or(Color::White.pawn());
                                *n = Some(Content::Piece(p));
                            }
                        }
                    }
                }
                for p in appeared {
                    self.take_from_hand(Some(p));
                }
                self.squares = next;
                self.push(at, Action::Scan(Box::new(next)));
            }
            BoardEvent::Setup(fen) => {
                // The arbiter's console knows the position (side to move,
                // castling rights); the board only shows the pieces.
                self.off_wire(at, &e.event);
                if let Ok(pos) = fen.clone().into_position::<Chess>(CastlingMode::Standard) {
                    self.in_hand.clear();
                    self.phantom = [false; 64];
                    self.squares = squares_of(pos.board());
                    self.push(at, Action::Scan(Box::new(self.squares)));
                }
            }
            BoardEvent::Press(c) if clock => self.press(at, *c),
            BoardEvent::Clock(w, b) if clock => self.push(at, Action::Clock(*w, *b)),
            BoardEvent::Flag(c) if clock => self.push(at, Action::Flag(*c)),
            BoardEvent::Resign(c) if clock => self.token(at, win_token(!*c), &e.event),
            BoardEvent::Draw if clock => self.token(at, MagicPiece::Draw, &e.event),
            BoardEvent::Result(Outcome::Known(k)) if clock => {
                let token = match k.winner() {
                    Some(Color::White) => MagicPiece::WhiteWins,
                    Some(Color::Black) => MagicPiece::BlackWins,
                    None => MagicPiece::Draw,
                };
                self.token(at, token, &e.event);
            }
            _ => self.off_wire(at, &e.event),
        }
    }

    /// Puts a result token on a free square, near the centre where the
    /// arbiter would put it.
    fn token(&mut self, at: Millis, token: MagicPiece, e: &BoardEvent) {
        let centre = [Square::E4, Square::D4, Square::E5, Square::D5];
        let free = centre
            .into_iter()
            .chain(Square::ALL)
            .find(|sq| self.squares[sq.to_usize()].is_none());
        match free {
            Some(sq) => self.set(at, sq, Some(Content::Token(token))),
            None => self.off_wire(at, e),
        }
    }
}

fn win_token(winner: Color) -> MagicPiece {
    match winner {
        Color::White => MagicPiece::WhiteWins,
        Color::Black => MagicPiece::BlackWins,
    }
}

/// Takes each result token off again shortly after it was put down (before
/// anything else happens).
fn remove_tokens(steps: Vec<Step>) -> Vec<Step> {
    let mut out = Vec::with_capacity(steps.len());
    let mut pending: Option<(Millis, Square)> = None;
    for step in steps {
        if let Some((at, sq)) = pending.take() {
            out.push(Step {
                at: at.min(step.at),
                action: Action::Set(sq, None),
            });
        }
        if let Action::Set(sq, Some(Content::Token(_))) = step.action {
            pending = Some((step.at + TOKEN_MS, sq));
        }
        out.push(step);
    }
    if let Some((at, sq)) = pending {
        out.push(Step {
            at,
            action: Action::Set(sq, None),
        });
    }
    out
}

/// The artefacts of a DGT board's square-by-square sweep (see the module
/// documentation). Each rewrites two consecutive square changes and keeps
/// their times within the original interval, so the order of everything
/// else is untouched.
fn dgt_artefacts(steps: Vec<Step>, rng: &mut ChaCha8Rng) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::with_capacity(steps.len());
    let mut board = start_squares();
    let mut i = 0;
    while i < steps.len() {
        let step = &steps[i];
        let next = steps.get(i + 1);
        if let (
            Action::Set(a, None),
            Some(Step {
                at: t2,
                action: Action::Set(b, Some(arrived)),
            }),
        ) = (&step.action, next)
        {
            let t1 = step.at;
            let left = board[a.to_usize()];
            if a != b && left == Some(*arrived) && board[b.to_usize()].is_none() {
                // The piece's new square comes earlier in the sweep than
                // its old one: it reads on both for a moment.
                if rng.random_bool(0.35) {
                    let d = rng.random_range(5..=40).min(t2.saturating_sub(t1));
                    out.push(Step {
                        at: t1,
                        action: Action::Set(*b, Some(*arrived)),
                    });
                    out.push(Step {
                        at: t1 + d,
                        action: Action::Set(*a, None),
                    });
                    board[b.to_usize()] = Some(*arrived);
                    board[a.to_usize()] = None;
                    i += 2;
                    continue;
                }
            } else if a == b && t2.saturating_sub(t1) <= 250 {
                if left != Some(*arrived) && rng.random_bool(0.5) {
                    // A capture: the captured piece's removal and the
                    // capturing piece's arrival fall in one sweep.
                    out.push(steps[i + 1].clone());
                    board[b.to_usize()] = Some(*arrived);
                    i += 2;
                    continue;
                }
                if left == Some(*arrived) && t2.saturating_sub(t1) < 60 && rng.random_bool(0.5) {
                    // A piece straightened between two sweeps: never seen.
                    i += 2;
                    continue;
                }
            }
        }
        match &step.action {
            Action::Set(sq, c) => board[sq.to_usize()] = *c,
            Action::Scan(s) => board = **s,
            _ => {}
        }
        out.push(step.clone());
        i += 1;
    }
    out
}

/// Merges the square changes of each scan period into one scan at its end.
fn scan_periods(steps: Vec<Step>, period: Millis) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::with_capacity(steps.len());
    let mut board = start_squares();
    // The scan being gathered: its time and its index in `out`.
    let mut open: Option<(Millis, usize)> = None;
    for step in steps {
        let change = match &step.action {
            Action::Set(sq, c) => {
                board[sq.to_usize()] = *c;
                true
            }
            Action::Scan(s) => {
                board = **s;
                true
            }
            _ => false,
        };
        if !change {
            out.push(step);
            continue;
        }
        let end = step.at.div_ceil(period) * period;
        match open {
            Some((t, idx)) if t == end => out[idx].action = Action::Scan(Box::new(board)),
            _ => {
                open = Some((end, out.len()));
                out.push(Step {
                    at: end,
                    action: Action::Scan(Box::new(board)),
                });
            }
        }
    }
    // A scan ends up to one period after its changes: keep time order.
    out.sort_by_key(|s| s.at);
    out
}

/// Inserts the cable pulls, each before the steps of its time.
fn add_plugging(steps: &mut Vec<Step>, unplugged: &[(Millis, Millis)]) {
    for &(from, to) in unplugged {
        if to <= from {
            continue;
        }
        for (at, action) in [(from, Action::Unplug), (to, Action::Replug)] {
            let pos = steps.partition_point(|s| s.at < at);
            steps.insert(pos, Step { at, action });
        }
    }
}

/// The piece of a content, if it is one.
pub fn piece_of(c: Option<Content>) -> Option<Piece> {
    match c {
        Some(Content::Piece(p)) => Some(p),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::script::parse_script;

    fn events(text: &str) -> Vec<TimedEvent> {
        parse_script("t", text)
            .unwrap()
            .into_iter()
            .map(|l| l.event)
            .collect()
    }

    #[test]
    fn places_without_letter_take_the_lifted_piece() {
        let steps = plan(
            &events("lift e2\nplace e4\n"),
            Protocol::Dgt,
            &PlanOptions::default(),
        );
        let wp = Content::Piece(Color::White.pawn());
        assert_eq!(
            steps,
            vec![
                Step {
                    at: 0,
                    action: Action::Set(Square::E2, None)
                },
                Step {
                    at: 250,
                    action: Action::Set(Square::E4, Some(wp))
                },
            ]
        );
    }

    #[test]
    fn dgt_results_are_tokens_millennium_results_are_off_wire() {
        let evs = events("lift e2\nplace e4 P\n@2000 resign black\n@5000 tag White Carlsen\n");
        let steps = plan(&evs, Protocol::Dgt, &PlanOptions::default());
        assert!(steps.contains(&Step {
            at: 2000,
            action: Action::Set(Square::D4, Some(Content::Token(MagicPiece::WhiteWins)))
        }));
        assert!(steps.contains(&Step {
            at: 2000 + TOKEN_MS,
            action: Action::Set(Square::D4, None)
        }));
        assert!(matches!(
            steps.last().unwrap().action,
            Action::OffWire(BoardEvent::Tag(..))
        ));
        let steps = plan(&evs, Protocol::Millennium, &PlanOptions::default());
        assert!(steps.contains(&Step {
            at: 2000,
            action: Action::OffWire(BoardEvent::Resign(Color::Black))
        }));
        // One scan per scan period: e2 and e4 are 250 ms apart.
        let scans: Vec<Millis> = steps
            .iter()
            .filter(|s| matches!(s.action, Action::Scan(_)))
            .map(|s| s.at)
            .collect();
        assert_eq!(scans, vec![0, 287]);
    }

    #[test]
    fn artefacts_keep_the_end_state_and_the_time_order() {
        let text = "lift e2\n@260 place e4 P\n@1000 lift d7\n@1250 place d5 p\n\
                    @2000 lift e4\n@2250 lift d5\n@2400 place d5 P\n";
        let evs = events(text);
        let clean = plan(&evs, Protocol::Dgt, &PlanOptions::default());
        for seed in 0..40 {
            let opts = PlanOptions {
                artefacts: true,
                seed,
                unplugged: vec![],
                rotated: false,
                cable_powered: false,
            };
            let noisy = plan(&evs, Protocol::Dgt, &opts);
            assert!(noisy.windows(2).all(|w| w[0].at <= w[1].at), "{noisy:?}");
            let end = |steps: &[Step]| {
                let mut b = start_squares();
                for s in steps {
                    if let Action::Set(sq, c) = s.action {
                        b[sq.to_usize()] = c;
                    }
                }
                b
            };
            assert_eq!(end(&clean), end(&noisy));
        }
    }

    fn arb_event() -> impl Strategy<Value = BoardEvent> {
        let sq = (0u32..64).prop_map(Square::new);
        let piece = proptest::option::of((0usize..12).prop_map(|i| {
            let color = if i < 6 { Color::White } else { Color::Black };
            Piece {
                color,
                role: shakmaty::Role::ALL[i % 6],
            }
        }));
        let color = any::<bool>().prop_map(|w| if w { Color::White } else { Color::Black });
        prop_oneof![
            sq.clone().prop_map(BoardEvent::Lift),
            (sq, piece).prop_map(|(s, p)| BoardEvent::Place(s, p)),
            color.clone().prop_map(BoardEvent::Press),
            (0u32..40_000, 0u32..40_000).prop_map(|(w, b)| BoardEvent::Clock(w, b)),
            color.clone().prop_map(BoardEvent::Flag),
            color.prop_map(BoardEvent::Resign),
            Just(BoardEvent::Draw),
            Just(BoardEvent::Result(Outcome::Unknown)),
            Just(BoardEvent::Board(Box::new(crate::event::Scan::empty()))),
        ]
    }

    proptest! {
        #[test]
        fn any_script_is_played_without_panic(
            events in proptest::collection::vec((0u64..500, arb_event()), 0..80),
            seed in any::<u64>(),
            family in 0usize..2,
            rotated in any::<bool>(),
        ) {
            let protocol = [Protocol::Dgt, Protocol::Millennium][family];
            let mut t = 0;
            let events: Vec<TimedEvent> = events
                .into_iter()
                .map(|(dt, event)| {
                    t += dt;
                    TimedEvent { at: t, event }
                })
                .collect();
            let options = PlanOptions {
                artefacts: true,
                seed,
                unplugged: vec![(t / 3, t / 2 + 1)],
                rotated,
                cable_powered: !rotated,
            };
            let steps = plan(&events, protocol, &options);
            prop_assert!(steps.windows(2).all(|w| w[0].at <= w[1].at));
            crate::virtual_board::play_in_process(&events, protocol, &options).unwrap();
        }
    }
}
