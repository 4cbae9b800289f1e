//! The record of one game: its moves, alerts and result.

use std::sync::atomic::{AtomicUsize, Ordering};

use shakmaty::{
    Chess, Color, EnPassantMode, KnownOutcome, Move, Outcome, Position,
    fen::Fen,
    san::{SanPlus, Suffix},
    uci::UciMove,
};

use crate::{
    alert::Alert,
    event::{Millis, Seconds},
    pgn::{PgnGame, PgnMove, write_pgn},
    revision::Revision,
    winnability::Verdict,
};

/// How a game ended. The snake_case names are a public contract
/// (`replay --json`): extend, never rename.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Termination {
    /// Art. 5.1.1.
    Checkmate,
    /// Art. 5.2.1.
    Stalemate,
    /// Art. 5.1.2.
    Resignation,
    /// Art. 6.9.
    TimeForfeit,
    /// Art. 5.2.3.
    Agreement,
    /// A result the arbiter recorded.
    ArbiterDecision,
    /// Ended without a result (`*`).
    Abandoned,
    /// Art. 5.2.2: neither player can checkmate by any series of legal moves.
    DeadPosition,
    /// Art. 9.6.1: the same position for the fifth time.
    FivefoldRepetition,
    /// Art. 9.6.2: 75 moves by each player without pawn move or capture.
    SeventyfiveMoves,
    /// Art. 9.2: a correct claim of threefold repetition.
    ThreefoldRepetition,
    /// Art. 9.3: a correct claim under the fifty-move rule.
    FiftyMoves,
    /// Art. 7.5.5: a second completed illegal move (a third in 2005).
    IllegalMoves,
    /// The players signalled the result with both kings on the centre squares.
    ResultSignal,
    /// A forfeit or special score the arbiter recorded.
    Special(crate::verdict::SpecialResult),
}

impl Termination {
    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Termination::Checkmate => "checkmate",
            Termination::Stalemate => "stalemate",
            Termination::Resignation => "resignation",
            Termination::TimeForfeit => "time_forfeit",
            Termination::Agreement => "agreement",
            Termination::ArbiterDecision => "arbiter_decision",
            Termination::Abandoned => "abandoned",
            Termination::DeadPosition => "dead_position",
            Termination::FivefoldRepetition => "fivefold_repetition",
            Termination::SeventyfiveMoves => "seventyfive_moves",
            Termination::ThreefoldRepetition => "threefold_repetition",
            Termination::FiftyMoves => "fifty_moves",
            Termination::IllegalMoves => "illegal_moves",
            Termination::ResultSignal => "result_signal",
            Termination::Special(s) if s.is_forfeit() => "forfeit",
            Termination::Special(_) => "special_score",
        }
    }

    /// A sentence for the PGN comment after the last move.
    pub fn describe(self) -> &'static str {
        match self {
            Termination::Checkmate => "Checkmate (Art. 5.1.1)",
            Termination::Stalemate => "Stalemate (Art. 5.2.1)",
            Termination::Resignation => "Resignation (Art. 5.1.2)",
            Termination::TimeForfeit => "Flag fall (Art. 6.9)",
            Termination::Agreement => "Draw agreed (Art. 5.2.3)",
            Termination::ArbiterDecision => "Result recorded by the arbiter",
            Termination::Abandoned => "Game abandoned without a result",
            Termination::DeadPosition => "Dead position (Art. 5.2.2)",
            Termination::FivefoldRepetition => "Fivefold repetition (Art. 9.6.1)",
            Termination::SeventyfiveMoves => "75 moves without pawn move or capture (Art. 9.6.2)",
            Termination::ThreefoldRepetition => "Threefold repetition claimed (Art. 9.2)",
            Termination::FiftyMoves => "Fifty-move rule claimed (Art. 9.3)",
            Termination::IllegalMoves => "Illegal moves (Art. 7.5.5)",
            Termination::ResultSignal => "Result signalled with the kings on the centre squares",
            Termination::Special(s) => s.describe(),
        }
    }
}

/// One recorded move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedMove {
    pub mv: Move,
    /// Its SAN with check or mate suffix.
    pub san: SanPlus,
    /// When it was made: the piece released with the board showing its result (Art. 4.7).
    pub made_at: Millis,
    /// When it was completed: the clock pressed, the opponent started moving,
    /// or the move ended the game (Art. 6.2.1).
    pub completed_at: Option<Millis>,
    /// The mover's remaining time after the move, when a clock reports it.
    pub clock: Option<Seconds>,
    /// An illegal move that was not corrected: play continued from the
    /// position it left on the board (Art. 7.5.1, A.5.2).
    pub illegal: bool,
}

/// A game: start position, moves, alerts, result.
#[derive(Debug, Clone)]
pub struct Game {
    /// PGN tags given for the game (`White`, `Black`, ...).
    pub tags: Vec<(String, String)>,
    /// Where each tag name is in `tags`: a tag is set in constant time,
    /// however many distinct tags came before (rebuilt when `tags` was
    /// changed directly).
    tag_index: std::collections::HashMap<String, usize>,
    setup: Option<Fen>,
    positions: Vec<Chess>,
    /// For each position, its identity under Art. 9.2.2 (same player to
    /// move, same pieces on the same squares, same castling rights, en
    /// passant only when a capture is possible).
    keys: Vec<u64>,
    /// For each position, the sequence number of the event from which the
    /// board showed it: squares touched after it may belong to the next move.
    bases: Vec<u64>,
    moves: Vec<RecordedMove>,
    /// Alerts raised during the game.
    pub alerts: Vec<Alert>,
    /// Completed illegal moves per player (Art. 7.5.5 counts them).
    pub illegal_moves: shakmaty::ByColor<u32>,
    outcome: Outcome,
    termination: Option<Termination>,
    /// Whether the current position has no legal move (mate or stalemate).
    stuck: bool,
    /// How far the full dead-position analysis has gone through the game.
    pub(crate) dead_watch: DeadWatch,
    /// A flag fall or resignation whose result waits for the full analysis.
    pub(crate) pending_mate: Option<PendingMate>,
    /// Changed by every method that takes `&mut self` (see
    /// [`Game::revision`]).
    revision: Revision,
}

/// Tags from which [`Game::set_tag`] finds them by an index rather than by
/// a scan.
const INDEXED_TAGS: usize = 32;

/// Plies a new game's lists of positions and moves have room for: none
/// unless [`make_games_with_room`] said otherwise.
static ROOM_FOR_PLIES: AtomicUsize = AtomicUsize::new(0);

/// From now on, every game is made with room for `plies` moves: for a
/// batch that records many whole games (`eboard replay`), where growing
/// and copying the lists from one ply to a game's length cost 2% of the
/// work (issue 38). A daemon's boards, thousands of games kept for hours,
/// grow theirs as they go. Changes no game, only its lists' capacity.
pub fn make_games_with_room(plies: usize) {
    ROOM_FOR_PLIES.store(plies, Ordering::Relaxed);
}

/// A flag fall or resignation waiting for the full analysis of whether the
/// opponent can still checkmate (see `engine::full_dead`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PendingMate {
    /// The moves recorded when it happened.
    pub ply: usize,
    /// The player who flagged or resigned.
    pub loser: Color,
    /// `TimeForfeit` or `Resignation`.
    pub termination: Termination,
    /// Whether the analysis was asked for.
    pub requested: bool,
}

/// The full dead-position analysis's progress through a game's positions
/// (see `engine::full_dead`).
#[derive(Debug, Clone, Default)]
pub(crate) struct DeadWatch {
    /// The last ply whose position is settled: analysed, or known to have
    /// the same future as an analysed one.
    pub settled: Option<usize>,
    /// The verdict carried by the settled position (`Verdict::No`: not
    /// dead, `Verdict::Unknown`: undecided); `None` when unknown to us.
    pub carried: Option<Verdict>,
    /// The ply whose analysis was asked for and has not come back.
    pub requested: Option<usize>,
}

impl Game {
    /// A game starting from `start`; `basis` is the sequence number of the
    /// event from which the board showed it.
    pub fn new(start: Chess, basis: u64) -> Game {
        let setup =
            (start != Chess::default()).then(|| Fen::from_position(&start, EnPassantMode::Legal));
        let stuck = !has_legal_move(&start);
        // A dead position ends the game when a move produces it (Art.
        // 5.2.2): the start is settled; the standard one is alive, a set-up
        // one unknown to us.
        let dead_watch = DeadWatch {
            settled: Some(0),
            carried: (start == Chess::default()).then_some(Verdict::No),
            requested: None,
        };
        let plies = ROOM_FOR_PLIES.load(Ordering::Relaxed);
        let mut keys = Vec::with_capacity(plies + 1);
        keys.push(position_key(&start));
        let mut bases = Vec::with_capacity(plies + 1);
        bases.push(basis);
        let mut positions = Vec::with_capacity(plies + 1);
        positions.push(start);
        Game {
            tags: Vec::new(),
            tag_index: Default::default(),
            setup,
            keys,
            positions,
            bases,
            moves: Vec::with_capacity(plies),
            alerts: Vec::new(),
            illegal_moves: shakmaty::ByColor::default(),
            outcome: Outcome::Unknown,
            termination: None,
            stuck,
            dead_watch,
            pending_mate: None,
            revision: Revision::new(),
        }
    }

    /// Which state of its record the game is in: two equal looks are the
    /// same positions, moves (each move's fields included) and ending,
    /// since every method that may change them (every one that takes
    /// `&mut self`) changes the revision. The public fields (tags, alerts,
    /// illegal-move counts) are not covered.
    pub(crate) fn revision(&self) -> crate::revision::Seen {
        self.revision.seen()
    }

    /// The position after the recorded moves.
    pub fn position(&self) -> &Chess {
        self.positions.last().expect("a game has a start position")
    }

    /// The position after the first `ply` moves.
    pub fn position_at(&self, ply: usize) -> Option<&Chess> {
        self.positions.get(ply)
    }

    /// The start position.
    pub fn start(&self) -> &Chess {
        &self.positions[0]
    }

    /// Whether the side to move has no legal move (checkmate or stalemate).
    pub fn no_legal_moves(&self) -> bool {
        self.stuck
    }

    /// The recorded moves.
    pub fn moves(&self) -> &[RecordedMove] {
        &self.moves
    }

    /// Number of half-moves recorded.
    pub fn ply(&self) -> usize {
        self.moves.len()
    }

    /// The sequence number from which the board showed the position after `ply` moves.
    pub fn basis(&self, ply: usize) -> u64 {
        self.bases[ply]
    }

    /// How many times the current position has occurred in the game (Art.
    /// 9.2.2; the occurrences need not be consecutive).
    pub fn repetitions(&self) -> usize {
        self.repetitions_at(self.ply())
    }

    /// How many times the position after `ply` moves had occurred by then.
    pub fn repetitions_at(&self, ply: usize) -> usize {
        let Some(pos) = self.positions.get(ply) else {
            return 0;
        };
        let since = (ply + 1).saturating_sub(pos.halfmoves() as usize + 1);
        self.keys[since..=ply]
            .iter()
            .filter(|&&k| k == self.keys[ply])
            .count()
    }

    /// How many times the position `pos` (with identity `key`), reached
    /// now or next, has occurred in the game. Positions before the last
    /// pawn move or capture cannot be the same, so only those after it are
    /// compared.
    pub fn occurrences(&self, pos: &Chess, key: u64) -> usize {
        let since = self.keys.len().saturating_sub(pos.halfmoves() as usize + 1);
        self.keys[since..].iter().filter(|&&k| k == key).count()
    }

    /// The result (`*` while the game goes on).
    pub fn outcome(&self) -> Outcome {
        self.outcome
    }

    /// The result, with a forfeit or special score told apart.
    pub fn verdict(&self) -> crate::verdict::Verdict {
        match self.termination {
            Some(Termination::Special(s)) => crate::verdict::Verdict::Special(s),
            _ => crate::verdict::Verdict::Outcome(self.outcome),
        }
    }

    /// How the game ended, once it has.
    pub fn termination(&self) -> Option<Termination> {
        self.termination
    }

    /// Whether the game is over.
    pub fn is_over(&self) -> bool {
        self.termination.is_some()
    }

    /// Whether anything happened in the game yet.
    pub fn is_untouched(&self) -> bool {
        self.moves.is_empty() && self.alerts.is_empty() && !self.is_over()
    }

    /// Sets a PGN tag, replacing an earlier value.
    pub fn set_tag(&mut self, name: &str, value: &str) {
        self.revision.changed();
        // A game's few tags are found by a scan: cheaper than hashing each
        // name, and the index is only for the many (issue 38: tags linear).
        // The last of equal names, as the index built from `tags` finds.
        if self.tags.len() < INDEXED_TAGS {
            match self.tags.iter().rposition(|(n, _)| n == name) {
                Some(i) => self.tags[i].1 = value.to_owned(),
                None => self.tags.push((name.to_owned(), value.to_owned())),
            }
            return;
        }
        let stale = self.tag_index.len() != self.tags.len()
            || self
                .tag_index
                .get(name)
                .is_some_and(|&i| self.tags.get(i).is_none_or(|(n, _)| n != name));
        if stale {
            self.tag_index = self
                .tags
                .iter()
                .enumerate()
                .map(|(i, (n, _))| (n.clone(), i))
                .collect();
        }
        match self.tag_index.get(name) {
            Some(&i) => self.tags[i].1 = value.to_owned(),
            None => {
                self.tag_index.insert(name.to_owned(), self.tags.len());
                self.tags.push((name.to_owned(), value.to_owned()));
            }
        }
    }

    /// Appends a move (legal in the current position) made at `made_at`,
    /// with `basis` as the event from which the board showed its result.
    /// Public for the benchmarks, which record games move by move.
    pub fn push_move(&mut self, mv: Move, made_at: Millis, basis: u64) {
        self.push(mv, made_at, basis, false);
    }

    /// Appends an illegal move that play continued from: the position is
    /// the one it left on the board.
    pub(crate) fn push_illegal(&mut self, mv: Move, made_at: Millis, basis: u64) {
        self.push(mv, made_at, basis, true);
    }

    /// Appends a move, its SAN and the position after it. The check or
    /// mate suffix and whether the side to move is stuck come from one
    /// look at the new position: a full legal-move generation only when in
    /// check (`Suffix::from_position` would generate every legal move after
    /// every move, for the outcome).
    fn push(&mut self, mv: Move, made_at: Millis, basis: u64, illegal: bool) {
        self.revision.changed();
        let mut pos = self.position().clone();
        // Disambiguated among the position's legal moves, which reading the
        // board generated already (shakmaty's `from_move` generates the
        // candidates again): the same SAN, as only moves of the same piece
        // kind to the same square count.
        let san = shakmaty::san::San::disambiguate(mv, &crate::legal::legal_moves(&pos));
        pos.play_unchecked(mv);
        let check = pos.is_check();
        // The new position's legal moves: reading the next events needs
        // them too, so generating them here is no extra work.
        self.stuck = crate::legal::legal_moves(&pos).is_empty();
        let suffix = match (check, self.stuck) {
            (true, true) => Some(Suffix::Checkmate),
            (true, false) => Some(Suffix::Check),
            (false, _) => None,
        };
        let san = SanPlus { san, suffix };
        self.keys.push(position_key(&pos));
        self.positions.push(pos);
        self.bases.push(basis);
        self.moves.push(RecordedMove {
            mv,
            san,
            made_at,
            // An illegal move play went on from was completed before.
            completed_at: illegal.then_some(made_at),
            clock: None,
            illegal,
        });
    }

    /// The board showed the current position again from event `basis` (a
    /// takeback): what it showed before that is no evidence for the next
    /// move.
    pub(crate) fn rebase(&mut self, basis: u64) {
        self.revision.changed();
        if let Some(last) = self.bases.last_mut() {
            *last = (*last).max(basis);
        }
    }

    /// Removes the last `n` moves.
    pub(crate) fn truncate(&mut self, ply: usize) {
        self.revision.changed();
        self.moves.truncate(ply);
        self.positions.truncate(ply + 1);
        self.keys.truncate(ply + 1);
        self.bases.truncate(ply + 1);
        self.stuck = !has_legal_move(self.position());
        let watch = &mut self.dead_watch;
        if watch.settled.is_some_and(|settled| settled > ply) {
            watch.settled = Some(ply);
            watch.carried = None;
        }
        if watch.requested.is_some_and(|requested| requested > ply) {
            watch.requested = None;
        }
    }

    pub(crate) fn moves_mut(&mut self) -> &mut [RecordedMove] {
        self.revision.changed();
        &mut self.moves
    }

    /// Takes back the end of a game that its last move ended, to correct
    /// that move.
    pub(crate) fn reopen(&mut self) {
        self.revision.changed();
        self.outcome = Outcome::Unknown;
        self.termination = None;
    }

    /// Ends the game.
    pub(crate) fn finish(&mut self, outcome: Outcome, termination: Termination) {
        self.revision.changed();
        self.outcome = outcome;
        self.termination = Some(termination);
    }

    /// The side that made move number `ply` (1-based).
    pub fn mover(&self, ply: usize) -> Color {
        self.positions[ply - 1].turn()
    }

    /// The final position as FEN.
    pub fn fen(&self) -> String {
        Fen::from_position(self.position(), EnPassantMode::Legal).to_string()
    }

    /// The moves in UCI notation.
    pub fn uci_moves(&self) -> Vec<String> {
        self.moves
            .iter()
            .map(|m| {
                // Straight into a string of its size, not through `Display`.
                let mut text = String::with_capacity(5);
                UciMove::from_standard(m.mv).append_to_string(&mut text);
                text
            })
            .collect()
    }

    /// The game as PGN (every recorded move, completed or not).
    pub fn to_pgn(&self) -> String {
        self.to_pgn_upto(self.moves.len())
    }

    /// The game as PGN with only its first `ply` moves (for broadcasts, which
    /// publish completed moves only).
    ///
    /// A game in which play continued after an illegal move is written as
    /// several PGN games, so that every one of them replays with a strict
    /// parser: the first ends before the illegal move with a comment naming
    /// it, the next starts (`[SetUp]`/`[FEN]`) from the position the illegal
    /// move left on the board, with the same tags.
    pub fn to_pgn_upto(&self, ply: usize) -> String {
        let ply = ply.min(self.moves.len());
        let complete = ply == self.moves.len();
        let mut out = String::new();
        let mut start = 0;
        loop {
            let illegal = self.moves[start..ply].iter().position(|m| m.illegal);
            let end = illegal.map_or(ply, |i| start + i);
            let last = illegal.is_none();
            let setup = if start == 0 {
                self.setup.clone()
            } else {
                Some(Fen::from_position(
                    &self.positions[start],
                    EnPassantMode::Legal,
                ))
            };
            let final_comment = match illegal {
                Some(_) => Some(format!(
                    "Illegal move {} (Art. 7.5.1) was not corrected: play continued from the position on the board, in the next game",
                    self.moves[end].san
                )),
                None => self
                    .termination
                    .filter(|_| complete)
                    .map(|t| t.describe().to_owned()),
            };
            let game = PgnGame {
                tags: self.tags.clone(),
                setup,
                moves: self.moves[start..end]
                    .iter()
                    .map(|m| PgnMove {
                        san: m.san,
                        clock: m.clock,
                        comment: None,
                    })
                    .collect(),
                result: if last && complete {
                    self.outcome
                } else {
                    Outcome::Unknown
                },
                special: match self.termination {
                    Some(Termination::Special(s)) if last && complete => Some(s),
                    _ => None,
                },
                final_comment,
            };
            out.push_str(&write_pgn(&game));
            if last {
                return out;
            }
            start = end + 1;
        }
    }
}

/// A move's SAN as text (the same text as its `Display`), written straight
/// into a string of its size: through `Display` it went character by
/// character into a string that grew twice, for every move recorded and
/// every move reported.
pub fn san_text(san: shakmaty::san::SanPlus) -> String {
    let mut text = String::with_capacity(8);
    san.append_to_string(&mut text);
    text
}

/// The outcome of a win for `winner`.
pub fn win(winner: Color) -> Outcome {
    Outcome::Known(KnownOutcome::Decisive { winner })
}

/// A draw.
pub fn draw() -> Outcome {
    Outcome::Known(KnownOutcome::Draw)
}

/// Whether the side to move has a legal move. Tried first on a few quiet
/// piece moves (one is nearly always legal), which is much cheaper than
/// generating them all after every move.
fn has_legal_move(pos: &Chess) -> bool {
    use crate::quick_dead::{quiet_move_is_legal, quiet_piece_moves};
    quiet_piece_moves(pos)
        .take(4)
        .any(|m| quiet_move_is_legal(pos.board(), pos.turn(), m))
        || !crate::legal::legal_moves(pos).is_empty()
}

/// The identity of a position under Art. 9.2.2, as a Zobrist hash (en passant
/// counted only when a capture is legal).
pub fn position_key(pos: &Chess) -> u64 {
    pos.zobrist_hash::<shakmaty::zobrist::Zobrist64>(EnPassantMode::Legal)
        .0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::position;

    /// Issue 38, fault 7: tags set through the index keep their order and
    /// replace earlier values, also after `tags` was changed directly.
    #[test]
    fn tags_replace_in_place_and_keep_their_order() {
        let mut game = Game::new(Chess::default(), 0);
        for i in 0..1000 {
            game.set_tag(&format!("T{i}"), "a");
        }
        game.set_tag("T500", "b");
        game.set_tag("White", "W");
        assert_eq!(game.tags.len(), 1001);
        assert_eq!(game.tags[500], ("T500".into(), "b".into()));
        assert_eq!(game.tags[1000], ("White".into(), "W".into()));
        game.tags.remove(0);
        game.set_tag("T1", "c");
        game.set_tag("T0", "d");
        assert_eq!(game.tags[0], ("T1".into(), "c".into()));
        assert_eq!(game.tags.last(), Some(&("T0".into(), "d".into())));
        assert_eq!(game.tags.len(), 1001);
    }

    /// A game's few tags, found by a scan, replace in place too, and the
    /// index built once there are many finds them.
    #[test]
    fn few_tags_replace_in_place_and_the_index_finds_them_later() {
        let mut game = Game::new(Chess::default(), 0);
        game.set_tag("White", "A");
        game.set_tag("Black", "B");
        game.set_tag("White", "C");
        let tag = |n: &str, v: &str| (n.to_owned(), v.to_owned());
        assert_eq!(game.tags, [tag("White", "C"), tag("Black", "B")]);
        for i in 0..INDEXED_TAGS {
            game.set_tag(&format!("T{i}"), "a");
        }
        game.set_tag("Black", "D");
        game.set_tag("T3", "b");
        assert_eq!(game.tags.len(), INDEXED_TAGS + 2);
        assert_eq!(game.tags[1], tag("Black", "D"));
        assert_eq!(game.tags[5], tag("T3", "b"));
    }

    /// The move `uci` in `fen`, recorded: its SAN with suffix, and whether
    /// the side to move is then without a legal move.
    fn record(fen: &str, uci: &str) -> (String, bool) {
        let start = position(fen);
        let mv = uci.parse::<UciMove>().unwrap().to_move(&start).unwrap();
        let mut game = Game::new(start, 0);
        game.push_move(mv, 0, 0);
        (game.moves()[0].san.to_string(), game.no_legal_moves())
    }

    /// Art. 5.1.1, 5.2.1 and the PGN suffixes: mate `#`, check `+`,
    /// stalemate and a quiet move none; only mate and stalemate leave the
    /// side to move without a move.
    #[test]
    fn suffix_and_no_legal_move_follow_the_position() {
        // Back-rank mate.
        assert_eq!(
            record("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1", "a1a8"),
            ("Ra8#".into(), true)
        );
        // Check the king can step out of.
        assert_eq!(
            record("6k1/6pp/8/8/8/8/8/R5K1 w - - 0 1", "a1a8"),
            ("Ra8+".into(), false)
        );
        // Stalemate: no suffix, no move.
        assert_eq!(
            record("k7/8/1K6/8/8/8/8/2Q5 w - - 0 1", "c1c7"),
            ("Qc7".into(), true)
        );
        // Black, boxed in, still has a pawn move.
        assert_eq!(
            record("k7/7p/1K6/8/8/8/8/2Q5 w - - 0 1", "c1c7"),
            ("Qc7".into(), false)
        );
    }
}
