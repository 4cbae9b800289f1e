//! The host side of one board connection, without any I/O.
//!
//! A [`Link`] owns the protocol decoder of one board and knows what the
//! host must say to it: the start-up sequence after the port opens, the
//! full-board request once the board answered, a fresh dump after line
//! noise. The serial reader thread and `eboard replay --format` both push
//! the board's bytes through the same `Link`, so a capture replays exactly
//! as the live path read it.

use std::time::Duration;

use shakmaty::Color;

use super::{
    Protocol,
    recover::{self, LastSeen},
};
use crate::{
    event::{BoardEvent, Millis, TimedEvent},
    game::{draw, win},
    protocol::{
        Decoded, Decoder,
        certabo::{self, CertaboDecoder},
        dgt::{self, DgtDecoder, MagicPiece},
        millennium::{self, MillenniumDecoder, ReportMode},
    },
};

/// How long to wait for the board's first answer before sending the
/// start-up sequence again.
pub const HANDSHAKE_RETRY: Duration = Duration::from_secs(2);

/// Start-up attempts before the host stops waiting for an answer and asks
/// for the board anyway.
pub const HANDSHAKE_TRIES: u32 = 3;

/// Line noise makes the host ask for a fresh full board, at most this often
/// (in event time), so that a noisy line is not flooded with requests.
pub const RESYNC_INTERVAL_MS: Millis = 1000;

/// What the board's bytes gave.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LinkOutput {
    /// Board events, in order. They carry the time of the bytes, except
    /// what a DGT board's log gives back after an outage: the times between
    /// the last bytes heard and the reconnection (see [`recover`]).
    pub events: Vec<TimedEvent>,
    /// Things worth a line in the log (versions, EEPROM log, line noise).
    pub notes: Vec<String>,
    /// Bytes to send to the board.
    pub send: Vec<u8>,
}

impl LinkOutput {
    /// Empties the output for reuse.
    pub fn clear(&mut self) {
        self.events.clear();
        self.notes.clear();
        self.send.clear();
    }
}

#[derive(Debug, Clone)]
enum Codec {
    Dgt(DgtDecoder),
    Millennium(MillenniumDecoder),
    Certabo(CertaboDecoder),
}

/// Where the start-up conversation stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Start-up sent, no answer yet.
    Handshake,
    /// The board answered; its full state was asked for.
    Running,
}

/// Options of a [`Link`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LinkOptions {
    /// DGT: which side of the clock White sits on.
    pub dgt: dgt::Config,
}

/// The host side of one board: decoder, start-up and resynchronisation.
#[derive(Debug, Clone)]
pub struct Link {
    codec: Codec,
    stage: Stage,
    /// Connections so far, this one included.
    connections: u32,
    tries: u32,
    since_start: Duration,
    last_resync: Option<Millis>,
    errors: u64,
    decoded: Vec<Decoded>,
    /// When the board was last heard.
    last_at: Millis,
    /// DGT, after a reconnection: the board as last seen, until its log
    /// comes (or its dump without the log).
    awaiting_log: Option<LastSeen>,
    /// Events held while the log is awaited, so that what the log gives
    /// back comes first.
    held: Vec<TimedEvent>,
    /// The port was opened again: the board's next bytes are announced
    /// as a reconnection.
    announce: bool,
}

impl Link {
    /// A link for a board of this family.
    pub fn new(protocol: Protocol, options: LinkOptions) -> Link {
        let codec = match protocol {
            Protocol::Dgt => Codec::Dgt(DgtDecoder::new(options.dgt)),
            // The port is driven 8N1 (see `Protocol::settings`), so bit 7
            // of every byte is the 7-O-1 parity bit and can be checked.
            Protocol::Millennium => Codec::Millennium(MillenniumDecoder::new(millennium::Config {
                check_parity: true,
                diffs: true,
            })),
            Protocol::Certabo => Codec::Certabo(CertaboDecoder::new(certabo::Config::default())),
        };
        Link {
            codec,
            stage: Stage::Handshake,
            connections: 0,
            tries: 0,
            since_start: Duration::ZERO,
            last_resync: None,
            errors: 0,
            decoded: Vec::new(),
            last_at: 0,
            awaiting_log: None,
            held: Vec::new(),
            announce: false,
        }
    }

    /// A Millennium link that does not check parity: for captures of a port
    /// opened 7-O-1, whose bytes arrive with bit 7 clear.
    pub fn without_parity_check(mut self) -> Link {
        if let Codec::Millennium(_) = self.codec {
            self.codec = Codec::Millennium(MillenniumDecoder::new(millennium::Config {
                check_parity: false,
                diffs: true,
            }));
        }
        self
    }

    /// The family.
    pub fn protocol(&self) -> Protocol {
        match self.codec {
            Codec::Dgt(_) => Protocol::Dgt,
            Codec::Millennium(_) => Protocol::Millennium,
            Codec::Certabo(_) => Protocol::Certabo,
        }
    }

    /// Decode errors since the link was made.
    pub fn errors(&self) -> u64 {
        self.errors
    }

    /// The port was (re)opened: forgets the partial message and the board
    /// model (the board may have changed while it was away) and returns the
    /// start-up bytes to send. After a reconnection, what the board sends
    /// next comes after a [`BoardEvent::Reconnected`].
    pub fn connected(&mut self) -> Vec<u8> {
        match &mut self.codec {
            Codec::Dgt(d) => {
                // What the board's log is read against after this
                // reconnection. A board never dumped gives nothing to align
                // (nor does the decoder after a reconnection whose dump did
                // not come: the older view is kept then).
                if let Some(codes) = d.codes() {
                    self.awaiting_log = Some(LastSeen {
                        codes,
                        recent: d.recent_updates().collect(),
                        times: d.last_times(),
                        last_press: d.last_presser(),
                        at: self.last_at,
                    });
                }
                d.reset();
            }
            Codec::Millennium(d) => d.reset(),
            Codec::Certabo(d) => d.reset(),
        }
        self.stage = Stage::Handshake;
        self.tries = 1;
        self.since_start = Duration::ZERO;
        self.connections += 1;
        self.announce = self.connections > 1;
        self.startup()
    }

    fn startup(&self) -> Vec<u8> {
        match self.codec {
            Codec::Dgt(_) => dgt::Command::encode_all(&dgt::STARTUP),
            Codec::Millennium(_) => {
                let mut out = Vec::new();
                for c in millennium::startup(ReportMode::OnChange) {
                    c.encode(true, &mut out);
                }
                out
            }
            // Certabo boards stream their scans without being asked.
            Codec::Certabo(_) => Vec::new(),
        }
    }

    /// Time passed without the board answering: returns what to send (the
    /// start-up again, or at last the full-board request).
    pub fn tick(&mut self, elapsed: Duration) -> Vec<u8> {
        if self.stage != Stage::Handshake || matches!(self.codec, Codec::Certabo(_)) {
            return Vec::new();
        }
        self.since_start += elapsed;
        if self.since_start < HANDSHAKE_RETRY {
            return Vec::new();
        }
        self.since_start = Duration::ZERO;
        if self.tries < HANDSHAKE_TRIES {
            self.tries += 1;
            return self.startup();
        }
        // A board that never answers the version query may still send its
        // position: ask for it and go on.
        let mut out = Vec::new();
        self.running(&mut out);
        out
    }

    fn running(&mut self, send: &mut Vec<u8>) {
        self.stage = Stage::Running;
        if let Codec::Dgt(_) = self.codec {
            // After a reconnection the board's log first: it holds what
            // happened while the board was away, move by move. Then the
            // dump, which catches up on anything the log could not give,
            // before the clock report: that gives the lever position, from
            // which the next press is recognised.
            let mut cmds = Vec::new();
            if self.connections > 1 {
                cmds.push(dgt::Command::EeMoves);
            }
            cmds.extend([dgt::Command::SendBoard, dgt::Command::SendClock]);
            send.extend(dgt::Command::encode_all(&cmds));
        }
    }

    /// Decodes bytes the board sent at `at`, appending to `out`.
    pub fn feed(&mut self, bytes: &[u8], at: Millis, out: &mut LinkOutput) {
        let start = out.events.len();
        self.last_at = self.last_at.max(at);
        let mut decoded = std::mem::take(&mut self.decoded);
        decoded.clear();
        match &mut self.codec {
            Codec::Dgt(d) => d.feed(bytes, &mut decoded),
            Codec::Millennium(d) => d.feed(bytes, &mut decoded),
            Codec::Certabo(d) => d.feed(bytes, &mut decoded),
        }
        for (i, item) in decoded.iter().enumerate() {
            self.item(item, &decoded[i + 1..], at, out);
        }
        self.decoded = decoded;
        if self.announce && out.events.len() > start {
            // Before the first event after a reconnection (what the log
            // gives back of the time away first, with its own date). A
            // board that only scans has its next scan read like a dump.
            self.announce = false;
            let at = out.events[start].at;
            out.events.insert(
                start,
                TimedEvent {
                    at,
                    event: BoardEvent::Reconnected,
                },
            );
        }
    }

    fn item(&mut self, item: &Decoded, rest: &[Decoded], at: Millis, out: &mut LinkOutput) {
        match item {
            Decoded::Event(e) => {
                if self.stage == Stage::Handshake && !matches!(self.codec, Codec::Dgt(_)) {
                    self.stage = Stage::Running;
                }
                if matches!(e, BoardEvent::Board(_)) && self.awaiting_log.take().is_some() {
                    out.notes.push(
                        "no EEPROM log came before the board's position: what happened while \
                         it was away is read from the position alone"
                            .to_owned(),
                    );
                    self.release(out);
                }
                self.emit(e.clone(), at, out);
            }
            Decoded::Dgt(m) => self.dgt_message(m, rest, at, out),
            Decoded::Millennium(m) => {
                self.stage = Stage::Running;
                if let millennium::Message::Version { major, minor } = m {
                    out.notes.push(format!(
                        "Millennium board, firmware {major:02X}.{minor:02X}"
                    ));
                }
            }
            Decoded::Certabo(m) => match m {
                certabo::Message::LedMarker { rgb } if self.stage == Stage::Handshake => {
                    self.stage = Stage::Running;
                    let kind = if *rgb { "RGB" } else { "plain" };
                    out.notes.push(format!("Certabo board with {kind} LEDs"));
                }
                certabo::Message::Calibrated { tags } => {
                    out.notes
                        .push(format!("Certabo calibrated: {tags} tags known"));
                }
                certabo::Message::CalibrationFailed(e) => {
                    out.notes.push(format!("Certabo calibration failed: {e}"));
                }
                _ => {}
            },
            Decoded::Error(e) => {
                self.errors += 1;
                // One note per run of trouble rather than one per byte.
                if self.errors == 1 || self.errors.is_power_of_two() {
                    out.notes.push(format!(
                        "line noise: {e} ({} decode error(s) so far)",
                        self.errors
                    ));
                }
                self.resync(at, &mut out.send);
            }
        }
    }

    /// Asks for the full board after bytes were lost, where the protocol
    /// allows it.
    fn resync(&mut self, at: Millis, send: &mut Vec<u8>) {
        if self.stage != Stage::Running
            || self
                .last_resync
                .is_some_and(|t| at.saturating_sub(t) < RESYNC_INTERVAL_MS)
        {
            return;
        }
        match self.codec {
            Codec::Dgt(_) => dgt::Command::SendBoard.encode(send),
            Codec::Millennium(_) => millennium::Command::Status.encode(true, send),
            Codec::Certabo(_) => return,
        }
        self.last_resync = Some(at);
    }

    /// Passes an event on, or holds it while the board's log is awaited.
    fn emit(&mut self, event: BoardEvent, at: Millis, out: &mut LinkOutput) {
        let e = TimedEvent { at, event };
        if self.awaiting_log.is_some() {
            self.held.push(e);
        } else {
            out.events.push(e);
        }
    }

    /// Passes on the events held, never dated before what went out last.
    fn release(&mut self, out: &mut LinkOutput) {
        let mut last = out.events.last().map_or(0, |e| e.at);
        for mut e in self.held.drain(..) {
            e.at = e.at.max(last);
            last = e.at;
            out.events.push(e);
        }
    }

    /// The board's log after a reconnection: what it did while away.
    fn ee_log(&mut self, data: &[u8], at: Millis, out: &mut LinkOutput) {
        let Some(seen) = self.awaiting_log.take() else {
            return;
        };
        let Codec::Dgt(d) = &self.codec else { return };
        match recover::recover(data, &seen, at, d.config()) {
            Ok(r) => {
                out.notes.push(format!(
                    "DGT EEPROM log: {} square change(s) and {} clock press(es) made while the board was away, read back in order",
                    r.changes, r.presses
                ));
                if let Some(cut) = &r.cut {
                    out.notes.push(format!(
                        "DGT EEPROM log followed only in part ({cut}): the board's position tells the rest"
                    ));
                }
                out.events.extend(r.events);
                // What the board reported before its log was logged before
                // it was read out: the log has given it already. Clock
                // times and flags are not in the log.
                self.held.retain(|e| {
                    !matches!(
                        e.event,
                        BoardEvent::Lift(_)
                            | BoardEvent::Place(..)
                            | BoardEvent::Press(_)
                            | BoardEvent::Result(_)
                    )
                });
            }
            Err(e) => out.notes.push(format!(
                "DGT EEPROM log not used ({e}): what happened while the board was away is read from its position alone"
            )),
        }
        self.release(out);
    }

    fn dgt_message(
        &mut self,
        m: &dgt::Message,
        rest: &[Decoded],
        at: Millis,
        out: &mut LinkOutput,
    ) {
        use dgt::Message;
        match m {
            Message::Version { major, minor } => {
                out.notes
                    .push(format!("DGT board, firmware version {major}.{minor}"));
                if self.stage == Stage::Handshake {
                    self.running(&mut out.send);
                }
            }
            Message::Magic(sq, token) => {
                // A dump lists its result tokens just before its scan: a
                // token still standing when the host reconnects was already
                // counted and must not end the next game.
                let from_dump = rest
                    .iter()
                    .find(|d| !matches!(d, Decoded::Dgt(Message::Magic(..))))
                    .is_some_and(|d| matches!(d, Decoded::Event(BoardEvent::Board(_))));
                if !from_dump {
                    let outcome = match token {
                        MagicPiece::Draw => draw(),
                        MagicPiece::WhiteWins => win(Color::White),
                        MagicPiece::BlackWins => win(Color::Black),
                    };
                    out.notes
                        .push(format!("result token {} put on {sq}", outcome.as_str()));
                    self.emit(BoardEvent::Result(outcome), at, out);
                }
            }
            Message::EeMoves(data) => {
                out.notes.push(describe_ee_moves(data));
                self.ee_log(data, at, out);
            }
            Message::SerialNumber(s) | Message::LongSerialNumber(s) => {
                out.notes.push(format!("DGT board serial number {s}"));
            }
            Message::Trademark(s) => out.notes.push(format!("DGT board: {}", s.trim())),
            Message::ClockAck(ack) if ack.is_error() => {
                out.notes
                    .push(format!("the DGT clock refused a command ({:02x?})", ack.0));
            }
            _ => {}
        }
    }
}

/// One line about the board's EEPROM log: what it holds, so that an
/// operator sees the log is there and how much happened since power-up.
pub fn describe_ee_moves(data: &[u8]) -> String {
    let records = dgt::parse_ee_moves(data);
    let mut fields = 0;
    let mut clocks = 0;
    let mut powerups = 0;
    for r in &records {
        match r {
            dgt::EeRecord::Field { .. } => fields += 1,
            dgt::EeRecord::Clock { .. } => clocks += 1,
            dgt::EeRecord::PowerUp => powerups += 1,
            _ => {}
        }
    }
    format!(
        "DGT EEPROM log: {} bytes, {fields} square changes, {clocks} clock records, {powerups} power-up(s)",
        data.len()
    )
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use shakmaty::Square;

    use super::*;
    use crate::{
        event::Scan,
        virtual_board::{Action, Emulator, dgt::DgtBoard, plan::Content},
    };

    fn start_dump() -> Vec<u8> {
        let mut out = Vec::new();
        let scan = Scan::from_board(&shakmaty::Board::default(), true);
        dgt::encode_dump(&dgt::scan_codes(&scan).unwrap(), &mut out);
        out
    }

    fn events(out: &LinkOutput) -> Vec<BoardEvent> {
        out.events.iter().map(|e| e.event.clone()).collect()
    }

    fn assert_noted(out: &LinkOutput, text: &str) {
        assert!(
            out.notes.iter().any(|n| n.contains(text)),
            "no note with '{text}': {:?}",
            out.notes
        );
    }

    fn feed(link: &mut Link, bytes: &[u8]) -> LinkOutput {
        let mut out = LinkOutput::default();
        link.feed(bytes, 0, &mut out);
        out
    }

    #[test]
    fn dgt_start_up_then_board_and_clock_after_a_reconnect_the_log_first() {
        let mut link = Link::new(Protocol::Dgt, LinkOptions::default());
        assert_eq!(
            link.connected(),
            vec![dgt::cmd::SEND_UPDATE_NICE, dgt::cmd::SEND_VERSION]
        );
        let mut version = Vec::new();
        dgt::encode_version(1, 8, &mut version);
        let out = feed(&mut link, &version);
        assert_eq!(out.send, vec![dgt::cmd::SEND_BRD, dgt::cmd::SEND_CLK]);
        assert_eq!(
            out.notes,
            vec!["DGT board, firmware version 1.8".to_owned()]
        );
        // A second version reply asks for nothing more.
        assert!(feed(&mut link, &version).send.is_empty());
        link.connected();
        let out = feed(&mut link, &version);
        assert_eq!(
            out.send,
            vec![
                dgt::cmd::SEND_EE_MOVES,
                dgt::cmd::SEND_BRD,
                dgt::cmd::SEND_CLK
            ]
        );
    }

    /// Passes bytes both ways between a virtual DGT board and the link at
    /// `at` until both are quiet; returns the link's output.
    fn converse(
        board: &mut DgtBoard,
        link: &mut Link,
        mut to_board: Vec<u8>,
        at: Millis,
    ) -> LinkOutput {
        let mut all = LinkOutput::default();
        let mut to_host = Vec::new();
        while !to_board.is_empty() || !to_host.is_empty() {
            board.host(at, &std::mem::take(&mut to_board), &mut to_host);
            let mut out = LinkOutput::default();
            link.feed(&std::mem::take(&mut to_host), at, &mut out);
            to_board = std::mem::take(&mut out.send);
            all.events.append(&mut out.events);
            all.notes.append(&mut out.notes);
        }
        all
    }

    fn play(
        board: &mut DgtBoard,
        at: Millis,
        sq: Square,
        piece: Option<shakmaty::Piece>,
    ) -> Vec<u8> {
        let mut bytes = Vec::new();
        board.step(at, &Action::Set(sq, piece.map(Content::Piece)), &mut bytes);
        bytes
    }

    /// 1.e4 seen, the cable out, 1...e5 played, the cable back: the link
    /// reads the log before the dump and gives the move back as played,
    /// dated within the outage.
    fn reconnect_after_e5(board: &mut DgtBoard, link: &mut Link) -> LinkOutput {
        let startup = link.connected();
        converse(board, link, startup, 0);
        for (at, sq, piece) in [
            (1000, Square::E2, None),
            (1300, Square::E4, Some(Color::White.pawn())),
        ] {
            let bytes = play(board, at, sq, piece);
            feed(link, &bytes);
            link.feed(&[], at, &mut LinkOutput::default());
        }
        play(board, 5000, Square::E7, None);
        play(board, 5400, Square::E5, Some(Color::Black.pawn()));
        board.power_up(10_000);
        let startup = link.connected();
        converse(board, link, startup, 10_000)
    }

    #[test]
    fn dgt_moves_made_while_away_come_back_from_the_log_before_the_dump() {
        let mut board = DgtBoard::new(None, None);
        let mut link = Link::new(Protocol::Dgt, LinkOptions::default());
        let out = reconnect_after_e5(&mut board, &mut link);
        assert_eq!(
            &events(&out)[..3],
            &[
                BoardEvent::Reconnected,
                BoardEvent::Lift(Square::E7),
                BoardEvent::Place(Square::E5, Some(Color::Black.pawn()))
            ]
        );
        assert!(
            matches!(&events(&out)[3..], [BoardEvent::Board(_)]),
            "{out:?}"
        );
        let times: Vec<Millis> = out.events.iter().map(|e| e.at).collect();
        assert!(
            times[1] > 1300 && times[1] < times[2] && times[2] < 10_000,
            "{times:?}"
        );
        assert_eq!(times[0], times[1], "announced when the log resumes");
        assert_eq!(times[3], 10_000);
        assert_noted(&out, "2 square change(s) and 0 clock press(es)");
    }

    #[test]
    fn dgt_changes_reported_before_the_log_come_once_from_the_log() {
        let mut board = DgtBoard::new(None, None);
        let mut link = Link::new(Protocol::Dgt, LinkOptions::default());
        reconnect_after_e5(&mut board, &mut link);
        // Away again for 2.Nf3; back, the board in update mode reports
        // 2...Nc6 before the host's requests reach it.
        play(&mut board, 20_000, Square::G1, None);
        play(&mut board, 20_300, Square::F3, Some(Color::White.knight()));
        board.power_up(30_000);
        let startup = link.connected();
        let mut to_host = Vec::new();
        board.host(30_000, &[dgt::cmd::SEND_UPDATE_NICE], &mut to_host);
        to_host.extend(play(&mut board, 30_100, Square::B8, None));
        to_host.extend(play(
            &mut board,
            30_200,
            Square::C6,
            Some(Color::Black.knight()),
        ));
        let mut out = LinkOutput::default();
        link.feed(&to_host, 30_200, &mut out);
        assert!(out.events.is_empty(), "held until the log is in: {out:?}");
        let out = converse(&mut board, &mut link, startup, 30_300);
        let got = events(&out);
        assert_eq!(
            &got[..5],
            &[
                BoardEvent::Reconnected,
                BoardEvent::Lift(Square::G1),
                BoardEvent::Place(Square::F3, Some(Color::White.knight())),
                BoardEvent::Lift(Square::B8),
                BoardEvent::Place(Square::C6, Some(Color::Black.knight())),
            ]
        );
        assert!(matches!(&got[5..], [BoardEvent::Board(_)]), "{got:?}");
    }

    #[test]
    fn dgt_position_alone_when_the_log_does_not_come_first_or_does_not_fit() {
        let mut link = Link::new(Protocol::Dgt, LinkOptions::default());
        link.connected();
        feed(&mut link, &start_dump());
        link.connected();
        // A board that does not answer the log request: its dump is used.
        let out = feed(&mut link, &start_dump());
        assert!(
            matches!(
                &events(&out)[..],
                [BoardEvent::Reconnected, BoardEvent::Board(_)]
            ),
            "{out:?}"
        );
        assert_noted(&out, "no EEPROM log came before");
        // A log that cannot be aligned (no mark to count from): noted, and
        // the events held meanwhile go on as they came.
        link.connected();
        let mut bytes = Vec::new();
        dgt::encode_field_update(Square::E2, dgt::PieceCode::Empty, &mut bytes);
        dgt::encode_frame(dgt::id::EE_MOVES, &[0x40, 0x34, 0x6B], &mut bytes);
        let out = feed(&mut link, &bytes);
        assert_eq!(
            events(&out),
            vec![BoardEvent::Reconnected, BoardEvent::Lift(Square::E2)]
        );
        assert_noted(&out, "DGT EEPROM log not used");
    }

    #[test]
    fn dgt_board_asked_for_when_the_version_never_comes() {
        let mut link = Link::new(Protocol::Dgt, LinkOptions::default());
        let startup = link.connected();
        assert!(link.tick(Duration::from_millis(500)).is_empty());
        assert_eq!(link.tick(HANDSHAKE_RETRY), startup);
        assert_eq!(link.tick(HANDSHAKE_RETRY), startup);
        assert_eq!(
            link.tick(HANDSHAKE_RETRY),
            vec![dgt::cmd::SEND_BRD, dgt::cmd::SEND_CLK]
        );
        assert!(link.tick(HANDSHAKE_RETRY).is_empty());
    }

    #[test]
    fn dgt_result_token_is_a_result_unless_it_stands_in_a_dump() {
        let mut link = Link::new(Protocol::Dgt, LinkOptions::default());
        link.connected();
        feed(&mut link, &start_dump());
        let mut token = Vec::new();
        dgt::encode_field_update(
            Square::E4,
            dgt::PieceCode::Magic(MagicPiece::BlackWins),
            &mut token,
        );
        let out = feed(&mut link, &token);
        assert_eq!(events(&out), vec![BoardEvent::Result(win(Color::Black))]);
        // The same token seen again in a dump after a reconnection.
        let mut dump = start_dump();
        dump[3 + crate::protocol::a8_index(Square::E4)] = 0x0F;
        link.connected();
        let out = feed(&mut link, &dump);
        assert!(
            matches!(
                &events(&out)[..],
                [BoardEvent::Reconnected, BoardEvent::Board(_)]
            ),
            "{out:?}"
        );
    }

    #[test]
    fn line_noise_asks_for_the_board_at_most_once_a_second() {
        let mut link = Link::new(Protocol::Dgt, LinkOptions::default());
        link.connected();
        let mut version = Vec::new();
        dgt::encode_version(1, 8, &mut version);
        feed(&mut link, &version);
        let mut out = LinkOutput::default();
        link.feed(&[0x86, 0x00, 0x43, 0x01, 0x8E], 1000, &mut out);
        assert_eq!(out.send, vec![dgt::cmd::SEND_BRD]);
        assert_eq!(link.errors(), 1);
        out.clear();
        link.feed(&[0x86, 0x01], 1500, &mut out);
        assert!(out.send.is_empty());
        out.clear();
        link.feed(&[0x86, 0x01], 2000, &mut out);
        assert_eq!(out.send, vec![dgt::cmd::SEND_BRD]);
    }

    #[test]
    fn millennium_start_up_has_parity_bits() {
        let mut link = Link::new(Protocol::Millennium, LinkOptions::default());
        let bytes = link.connected();
        assert!(
            bytes.iter().all(|b| b.count_ones() % 2 == 1),
            "{bytes:02x?}"
        );
        let mut cmds = Vec::new();
        let mut errors = Vec::new();
        millennium::HostParser::new(true).feed(&bytes, &mut cmds, &mut errors);
        assert_eq!(cmds, millennium::startup(ReportMode::OnChange));
        assert!(errors.is_empty());
    }

    /// Issue 10: a board that reports by scans has no dump of its own; the
    /// host says when the link came back, before the first scan after it.
    #[test]
    fn millennium_scan_after_a_reconnection_is_announced() {
        let mut link = Link::new(Protocol::Millennium, LinkOptions::default());
        let start = Scan::from_board(&shakmaty::Board::default(), true);
        let mut status = Vec::new();
        millennium::encode_status(&start, true, &mut status).unwrap();
        link.connected();
        let out = feed(&mut link, &status);
        assert!(
            matches!(&events(&out)[..], [BoardEvent::Board(_)]),
            "{out:?}"
        );
        link.connected();
        let mut out = LinkOutput::default();
        link.feed(&status, 9_000, &mut out);
        assert_eq!(
            out.events.first(),
            Some(&TimedEvent {
                at: 9_000,
                event: BoardEvent::Reconnected
            })
        );
        assert!(
            matches!(&events(&out)[1..], [BoardEvent::Board(_)]),
            "{out:?}"
        );
        // Only once.
        let out = feed(&mut link, &status);
        assert!(!events(&out).contains(&BoardEvent::Reconnected), "{out:?}");
    }

    proptest! {
        #[test]
        fn any_log_after_a_reconnection_is_read_without_panic(
            log in proptest::collection::vec(0u8..0x80, 0..300),
            before in proptest::collection::vec((0usize..64, 0u8..16), 0..10),
        ) {
            let mut link = Link::new(Protocol::Dgt, LinkOptions::default());
            link.connected();
            let mut bytes = start_dump();
            for (field, code) in before {
                dgt::encode_frame(dgt::id::FIELD_UPDATE, &[field as u8, code], &mut bytes);
            }
            let mut out = LinkOutput::default();
            link.feed(&bytes, 1000, &mut out);
            link.connected();
            let mut bytes = Vec::new();
            dgt::encode_frame(dgt::id::EE_MOVES, &log, &mut bytes);
            bytes.extend(start_dump());
            out.clear();
            link.feed(&bytes, 5000, &mut out);
            prop_assert!(out.events.windows(2).all(|w| w[0].at <= w[1].at));
            prop_assert!(matches!(out.events.last().map(|e| &e.event), Some(BoardEvent::Board(_))));
        }

        #[test]
        fn random_bytes_never_panic(
            bytes in proptest::collection::vec(any::<u8>(), 0..400),
            family in 0usize..3,
            ticks in 0u64..10_000,
        ) {
            let protocol = [Protocol::Dgt, Protocol::Millennium, Protocol::Certabo][family];
            let mut link = Link::new(protocol, LinkOptions::default());
            link.connected();
            let mut out = LinkOutput::default();
            for (i, chunk) in bytes.chunks(7).enumerate() {
                link.feed(chunk, i as Millis * 10, &mut out);
                link.tick(Duration::from_millis(ticks));
            }
        }
    }
}
