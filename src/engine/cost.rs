//! The cost table of docs/design/reconstruction.md (section 3), written
//! once. Each figure is what one assumption about the board adds to a
//! hypothesis; the cheapest hypothesis explains, and those within
//! [`MARGIN`] of it survive. The figures the code weighs by number are
//! here; the design document gives the whole table and why each one is
//! what it is, and a change to a figure here is a change to that table.

/// How far above the cheapest a hypothesis may cost and still survive:
/// one inferred ply, or a slide and a little more, but never a blip.
pub(super) const MARGIN: usize = 2;

/// A ply no observation showed: scans and outages skip states, but each
/// skipped ply is a guess.
pub(super) const INFERRED_PLY: usize = 2;

/// A piece a scan caught on an empty square of its own path: pieces are
/// dragged about half the time, and one scan catching one is common.
pub(super) const SLIDE: usize = 1;

/// A scan that caught a move in progress with its pieces lifted: a scan
/// catches a hand only for the moment a move takes, but a position for as
/// long as the board stands, so a story reading scan after scan as a hand at
/// work, where another reads them as positions shown, is the dearer one.
pub(super) const HAND: usize = 1;

/// The opponent's hand at work (or his move made) before the mover's
/// press, a clock in use: a player may move before his opponent has
/// pressed (Art. 6.2.2), but mostly waits for the press.
pub(super) const EARLY_HAND: usize = 1;

/// Something in the air (a piece lifted, a victim off) once its move is
/// completed: after a press the pieces are down (Art. 6.2.1), though a
/// player may press a moment before his piece is.
pub(super) const AIR_COMPLETED: usize = 3;

/// A ply no scan saw any trace of, on top of [`INFERRED_PLY`]: every
/// square it changed reads, at the next position a scan showed, as it did
/// before the ply (a capture whose square it left was refilled by the
/// reply before the next scan). It exists only to make a later move legal,
/// and needs its changes undone unseen, as rare as a flicker.
pub(super) const TRACELESS_PLY: usize = BLIP;

/// One square read wrong for one report: sensors flicker, but less often
/// than pieces move.
pub(super) const BLIP: usize = 3;

/// A completed move with no press on a board with a clock: a player
/// presses having moved (Art. 6.2.1); forgetting is as rare as a blip.
pub(super) const MISSING_PRESS: usize = 3;

/// How many presses a line of `len` moves from the record's position
/// needs beyond the `presses` the clock got: every move but the last is
/// completed by the next (Art. 6.2.1.2), and a player presses having made
/// his move (Art. 6.2.1), so each completed move with no press is a
/// player who forgot to press, as rare as a blip. The last move may not
/// be completed yet.
pub(super) fn presses_missing(len: usize, presses: usize) -> usize {
    len.saturating_sub(1).saturating_sub(presses)
}

/// The hypotheses of `items` that survive: those costing at most
/// [`MARGIN`] above the cheapest, in their order.
pub(super) fn within_margin<T>(items: Vec<T>, cost: impl Fn(&T) -> usize) -> Vec<T> {
    let Some(cheapest) = items.iter().map(&cost).min() else {
        return items;
    };
    items
        .into_iter()
        .filter(|item| cost(item) <= cheapest + MARGIN)
        .collect()
}

// The orderings the decision policy relies on, checked when the crate is
// built, so no figure can be changed against the design's reasons.
// A slide is cheaper than a ply no scan showed, and both survive against a
// line that needs neither.
const _: () = assert!(SLIDE < INFERRED_PLY && INFERRED_PLY <= MARGIN);
// A blip never survives beside a story that needs no fault.
const _: () = assert!(BLIP > MARGIN);
// A ply no scan saw a trace of is dearer than the blip it stands for.
const _: () = assert!(INFERRED_PLY + TRACELESS_PLY > BLIP);
// A press ahead of its move (the piece still in the air) survives beside
// the longer story that reads the piece moved and then taken, a ply no scan
// showed: a tie is no certainty.
const _: () = assert!(AIR_COMPLETED <= INFERRED_PLY + MARGIN);
// A forgotten press is no likelier than a blip.
const _: () = assert!(MISSING_PRESS >= BLIP);
