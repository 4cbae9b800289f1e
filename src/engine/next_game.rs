//! Tags and pieces for the next game, given before the engine read the end
//! of the current one (a mate a scanning board showed too briefly, a game
//! the players left without a result): they belong to the next game, never
//! to the one on the record.

use shakmaty::{Chess, Position};

use super::Engine;

impl Engine {
    /// A tag from the board's input: the current game's, unless it names
    /// the next game (the current game is over, tags for the next one came
    /// already, or the game under way has this tag with another value).
    pub(super) fn tag(&mut self, name: &str, value: &str) {
        let game = self.game();
        let next = game.is_over()
            || !self.pending_tags.is_empty()
            || game.ply() > 0 && game.tags.iter().any(|(n, v)| n == name && v != value);
        if next {
            self.pending_tags.push((name.to_owned(), value.to_owned()));
        } else {
            self.game_mut().set_tag(name, value);
        }
    }

    /// With tags for the next game given, the pieces set up on the start
    /// position are that game, not a takeback of the one under way: it
    /// starts, and the last game stays as recorded, unfinished. Returns
    /// whether it started.
    pub(super) fn next_game_set_up(&mut self) -> bool {
        let game = self.game();
        if self.pending_tags.is_empty()
            || game.is_over()
            || game.ply() == 0
            || !self.sensed.shows(Chess::default().board())
        {
            return false;
        }
        let at = self.settle.since();
        self.start_game(Chess::default(), at);
        true
    }
}

#[cfg(test)]
mod tests {
    use crate::{EngineConfig, replay::reported_games, replay_script};

    /// The next game's tags come while the board still shows the last one
    /// (its mate not read yet), then the pieces are set up again.
    const TWO_GAMES: &str = "\
@0 tag White A
@0 tag Black B
@1000 lift e2
@1300 place e4 P
@1500 press white
@3000 lift e7
@3300 place e5 p
@3500 press black
@5000 tag White C
@5000 tag Black D
@6000 lift e4
@6300 place e2 P
@7000 lift e5
@7300 place e7 p
@9000 lift d2
@9300 place d4 P
@9500 press white
";

    #[test]
    fn tags_and_pieces_for_the_next_game_start_it() {
        let engine = replay_script("t", TWO_GAMES, EngineConfig::default()).unwrap();
        let games = reported_games(&engine);
        assert_eq!(games.len(), 2);
        let tag = |g: usize, name: &str| {
            games[g]
                .tags
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(tag(0, "White").as_deref(), Some("A"));
        assert_eq!(tag(0, "Black").as_deref(), Some("B"));
        assert_eq!(tag(1, "White").as_deref(), Some("C"));
        assert_eq!(tag(1, "Black").as_deref(), Some("D"));
        let sans = |g: usize| -> Vec<String> {
            games[g].moves().iter().map(|m| m.san.to_string()).collect()
        };
        assert_eq!(sans(0), ["e4", "e5"]);
        assert_eq!(sans(1), ["d4"]);
    }
}
