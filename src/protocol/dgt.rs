//! DGT e-boards: serial/USB/Bluetooth-classic protocol, 9600 baud 8N1.
//!
//! Board-to-host messages are binary frames: an id byte with its top bit
//! set, a 14-bit total length split over two 7-bit bytes, then data bytes
//! whose top bit is always clear. Because only id bytes have the top bit
//! set, a decoder can always find the next message start, which is how
//! [`DgtDecoder`] recovers from noise and torn messages.
//!
//! Host-to-board commands are mostly single bytes ([`Command`]); clock
//! commands travel wrapped in a `0x2B` envelope ([`ClockCommand`]).
//!
//! Besides the decoder this module has the other three directions a test
//! rig or a virtual board needs: [`Command::encode`] (host side),
//! [`HostParser`] (board side reading the host) and the `encode_*`
//! functions (board side writing to the host). See
//! `board-protocols/dgt.md` for the byte tables.

use shakmaty::{Color, Piece, Role, Square};

use super::{DecodeError, Decoded, Decoder, SkipCounter, a8_index, square_from_a8};
use crate::event::{BoardEvent, Scan, Seconds, Sensed};

/// Message ids, board to host (`0x80 | code`).
pub mod id {
    /// 64 piece codes, a8 first.
    pub const BOARD_DUMP: u8 = 0x86;
    /// Clock times or a clock acknowledgement.
    pub const BWTIME: u8 = 0x8D;
    /// One square changed.
    pub const FIELD_UPDATE: u8 = 0x8E;
    /// The on-board EEPROM log.
    pub const EE_MOVES: u8 = 0x8F;
    /// Bus address, 14 bits.
    pub const BUSADRES: u8 = 0x90;
    /// Five ASCII digits.
    pub const SERIALNR: u8 = 0x91;
    /// ASCII text.
    pub const TRADEMARK: u8 = 0x92;
    /// Firmware major and minor.
    pub const VERSION: u8 = 0x93;
    /// Draughts dump, black squares.
    pub const BOARD_DUMP_50B: u8 = 0x94;
    /// Draughts dump, white squares.
    pub const BOARD_DUMP_50W: u8 = 0x95;
    /// Bluetooth board battery report.
    pub const BATTERY_STATUS: u8 = 0xA0;
    /// Ten ASCII digits.
    pub const LONG_SERIALNR: u8 = 0xA2;
}

/// Command bytes, host to board.
pub mod cmd {
    /// Back to idle; cancels update modes.
    pub const RESET: u8 = 0x40;
    /// Ask for one BWTIME.
    pub const SEND_CLK: u8 = 0x41;
    /// Ask for a board dump.
    pub const SEND_BRD: u8 = 0x42;
    /// Field updates plus BWTIME at least once a second.
    pub const SEND_UPDATE: u8 = 0x43;
    /// Field updates only.
    pub const SEND_UPDATE_BRD: u8 = 0x44;
    /// Ask for the short serial number.
    pub const RETURN_SERIALNR: u8 = 0x45;
    /// Ask for the bus address.
    pub const RETURN_BUSADRES: u8 = 0x46;
    /// Ask for the trademark text.
    pub const SEND_TRADEMARK: u8 = 0x47;
    /// Ask for the EEPROM log.
    pub const SEND_EE_MOVES: u8 = 0x49;
    /// Switch to bus mode.
    pub const TO_BUSMODE: u8 = 0x4A;
    /// Field updates plus BWTIME only when the clock changed.
    pub const SEND_UPDATE_NICE: u8 = 0x4B;
    /// Ask for the battery state (Bluetooth boards).
    pub const SEND_BATTERY_STATUS: u8 = 0x4C;
    /// Ask for the firmware version.
    pub const SEND_VERSION: u8 = 0x4D;
    /// Jump to the boot loader. Never sent by eboard.
    pub const START_BOOTLOADER: u8 = 0x4E;
    /// Ask for the long serial number.
    pub const RETURN_LONG_SERIALNR: u8 = 0x55;
    /// Revelation II square LEDs (sized envelope).
    pub const SET_LEDS: u8 = 0x60;
    /// Clock command envelope (sized).
    pub const CLOCK_MESSAGE: u8 = 0x2B;
}

/// The longest frame any message may announce: the EEPROM log.
pub const MAX_FRAME: usize = 0x2000 - 0x100 + 3;

/// The largest time a BWTIME report can carry: 9:59:59.
pub const MAX_CLOCK_SECS: Seconds = 9 * 3600 + 59 * 60 + 59;

/// Piece code of an empty square.
pub const EMPTY: u8 = 0x00;

/// A DGT "magic" piece: a token put on the board to record a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MagicPiece {
    /// Code 0x0D: the game was drawn.
    Draw,
    /// Code 0x0E: White won.
    WhiteWins,
    /// Code 0x0F: Black won.
    BlackWins,
}

/// What a piece code in a dump or field update stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PieceCode {
    /// Nothing on the square.
    Empty,
    /// A chess piece.
    Piece(Piece),
    /// A result token.
    Magic(MagicPiece),
}

// Roles in code order: 1..=6 White, 7..=12 Black.
const ROLES: [Role; 6] = [
    Role::Pawn,
    Role::Rook,
    Role::Knight,
    Role::Bishop,
    Role::King,
    Role::Queen,
];

/// Reads a piece code; `None` for values past 0x0F.
pub fn piece_code(code: u8) -> Option<PieceCode> {
    Some(match code {
        0 => PieceCode::Empty,
        1..=12 => {
            let i = usize::from(code - 1);
            let color = if i < 6 { Color::White } else { Color::Black };
            PieceCode::Piece(Piece {
                color,
                role: ROLES[i % 6],
            })
        }
        0x0D => PieceCode::Magic(MagicPiece::Draw),
        0x0E => PieceCode::Magic(MagicPiece::WhiteWins),
        0x0F => PieceCode::Magic(MagicPiece::BlackWins),
        _ => return None,
    })
}

/// The code of a piece code (inverse of [`piece_code`]).
pub fn code_of(pc: PieceCode) -> u8 {
    match pc {
        PieceCode::Empty => EMPTY,
        PieceCode::Piece(p) => code_of_piece(p),
        PieceCode::Magic(MagicPiece::Draw) => 0x0D,
        PieceCode::Magic(MagicPiece::WhiteWins) => 0x0E,
        PieceCode::Magic(MagicPiece::BlackWins) => 0x0F,
    }
}

/// The code of a chess piece.
pub fn code_of_piece(p: Piece) -> u8 {
    let i = ROLES.iter().position(|&r| r == p.role).unwrap_or(0) as u8;
    match p.color {
        Color::White => 1 + i,
        Color::Black => 7 + i,
    }
}

/// One side of a clock report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ClockFace {
    /// Hours, 0..=9.
    pub hours: u8,
    /// Minutes, 0..=59.
    pub minutes: u8,
    /// Seconds, 0..=59.
    pub seconds: u8,
    /// The flag fell and the clock stopped at zero.
    pub flag_fallen: bool,
    /// A per-move increment or delay (Fischer, Bronstein) is active.
    pub time_per_move: bool,
    /// The flag is shown but the clock may go on (the next period began).
    pub flag_shown: bool,
}

impl ClockFace {
    /// The face from a number of seconds (saturating at 9:59:59), flags clear.
    pub fn from_secs(secs: Seconds) -> ClockFace {
        let s = secs.min(MAX_CLOCK_SECS);
        ClockFace {
            hours: (s / 3600) as u8,
            minutes: (s / 60 % 60) as u8,
            seconds: (s % 60) as u8,
            ..ClockFace::default()
        }
    }

    /// The time shown, in seconds.
    pub fn secs(&self) -> Seconds {
        Seconds::from(self.hours) * 3600
            + Seconds::from(self.minutes) * 60
            + Seconds::from(self.seconds)
    }

    /// Either flag indicator is on.
    pub fn flagged(&self) -> bool {
        self.flag_fallen || self.flag_shown
    }
}

/// The status byte of a clock report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ClockStatus {
    /// The clock is running.
    pub running: bool,
    /// The lever is up on the right-hand side.
    pub right_lever_high: bool,
    /// The clock's battery is low.
    pub battery_low: bool,
    /// The right-hand player is to move.
    pub right_to_move: bool,
    /// The left-hand player is to move.
    pub left_to_move: bool,
    /// No clock is connected: the times mean nothing.
    pub no_clock: bool,
}

impl ClockStatus {
    fn from_byte(b: u8) -> ClockStatus {
        ClockStatus {
            running: b & 0x01 != 0,
            right_lever_high: b & 0x02 != 0,
            battery_low: b & 0x04 != 0,
            right_to_move: b & 0x08 != 0,
            left_to_move: b & 0x10 != 0,
            no_clock: b & 0x20 != 0,
        }
    }

    fn to_byte(self) -> u8 {
        u8::from(self.running)
            | u8::from(self.right_lever_high) << 1
            | u8::from(self.battery_low) << 2
            | u8::from(self.right_to_move) << 3
            | u8::from(self.left_to_move) << 4
            | u8::from(self.no_clock) << 5
    }
}

/// A BWTIME time report, in the clock's own left/right terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ClockReport {
    /// The right-hand display.
    pub right: ClockFace,
    /// The left-hand display.
    pub left: ClockFace,
    /// Running, lever, turn and battery bits.
    pub status: ClockStatus,
}

/// A clock acknowledgement carried in a BWTIME frame, as its four ack bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClockAck(pub [u8; 4]);

/// A button on the DGT3000 clock, as reported in an unsolicited ack.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ClockButton {
    /// The back (leftmost) button.
    Back,
    /// The plus button.
    Plus,
    /// The run/pause button.
    Run,
    /// The minus button.
    Minus,
    /// The OK button.
    Ok,
}

impl ClockAck {
    /// The clock refused the command (for example SetNRun outside mode 23).
    pub fn is_error(&self) -> bool {
        self.0[0] == 0x40
    }

    /// The clock sent this on its own rather than answering a command.
    pub fn is_unsolicited(&self) -> bool {
        self.0[1] & 0x80 != 0
    }

    /// The clock command this acknowledges, for solicited acks.
    pub fn command(&self) -> Option<u8> {
        (!self.is_unsolicited()).then_some(self.0[1])
    }

    /// The clock announced that it is ready (unsolicited 0x81).
    pub fn is_ready(&self) -> bool {
        self.0[1] == 0x81
    }

    /// The button pressed, for an unsolicited button ack.
    pub fn button(&self) -> Option<ClockButton> {
        if self.0[1] != 0x88 {
            return None;
        }
        Some(match self.0[3] {
            0x31 => ClockButton::Back,
            0x32 => ClockButton::Plus,
            0x33 => ClockButton::Run,
            0x34 => ClockButton::Minus,
            0x35 => ClockButton::Ok,
            _ => return None,
        })
    }

    /// Clock firmware (major, minor), for the ack of a version query.
    pub fn version(&self) -> Option<(u8, u8)> {
        (self.0[1] == ClockCommand::VERSION).then_some((self.0[2] >> 4, self.0[2] & 0x0F))
    }
}

/// A DGT message that is not itself a board event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// Board firmware version.
    Version {
        /// Major number.
        major: u8,
        /// Minor number.
        minor: u8,
    },
    /// The five-digit serial number.
    SerialNumber(String),
    /// The ten-digit serial number.
    LongSerialNumber(String),
    /// The board's bus address.
    BusAddress(u16),
    /// The trademark / device information text.
    Trademark(String),
    /// Raw battery report of a Bluetooth board (its layout is not settled).
    Battery(Vec<u8>),
    /// The EEPROM log, oldest first; read it with [`parse_ee_moves`].
    EeMoves(Vec<u8>),
    /// A clock time report, as received. The decoder also turns it into
    /// `Clock`, `Press` and `Flag` events when a clock is connected.
    ClockReport(ClockReport),
    /// A report with every byte zero, which Bluetooth firmware sends after
    /// a clock command; it carries no times and is otherwise ignored.
    BlankClockReport,
    /// The clock acknowledged a command or reported a button.
    ClockAck(ClockAck),
    /// A result token was put on a square.
    Magic(Square, MagicPiece),
    /// A result token was taken off a square.
    MagicRemoved(Square),
    /// A well-framed message eboard does not interpret (draughts dumps).
    Other {
        /// The id byte.
        id: u8,
        /// The data bytes.
        payload: Vec<u8>,
    },
}

/// How the clock's sides map to the players.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// White plays on the clock's left-hand side. The clock never swaps its
    /// sides when the board is turned, so this must come from the set-up.
    pub white_on_left: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            white_on_left: true,
        }
    }
}

impl Config {
    fn left(&self) -> Color {
        if self.white_on_left {
            Color::White
        } else {
            Color::Black
        }
    }
}

/// Streaming decoder of board-to-host DGT messages.
#[derive(Debug, Clone)]
pub struct DgtDecoder {
    config: Config,
    /// The message being assembled; `buf[0]` is its id.
    buf: Vec<u8>,
    /// Its total length, once the header is complete.
    need: usize,
    skipped: SkipCounter,
    /// Raw codes a8-first, including result tokens; `None` until a dump.
    codes: Option<[u8; 64]>,
    scan: Option<Scan>,
    last_clock: Option<ClockReport>,
    last_times: Option<(Seconds, Seconds)>,
    /// The latest field updates that changed the model, oldest first: what
    /// the host last heard, to find the same place in the EEPROM log.
    recent: std::collections::VecDeque<(u8, u8)>,
}

/// How many of the latest field updates a [`DgtDecoder`] keeps.
pub const RECENT_UPDATES: usize = 32;

impl DgtDecoder {
    /// A decoder with this clock mapping.
    pub fn new(config: Config) -> DgtDecoder {
        DgtDecoder {
            config,
            buf: Vec::with_capacity(80),
            need: 0,
            skipped: SkipCounter::default(),
            codes: None,
            scan: None,
            last_clock: None,
            last_times: None,
            recent: std::collections::VecDeque::new(),
        }
    }

    /// The clock mapping in use.
    pub fn config(&self) -> Config {
        self.config
    }

    /// The board as the decoder knows it: raw codes a8 first, result tokens
    /// included; `None` before the first dump.
    pub fn codes(&self) -> Option<[u8; 64]> {
        self.codes
    }

    /// The player whose press the clock's levers show last (his side is
    /// down), from the latest report of a connected clock.
    pub fn last_presser(&self) -> Option<Color> {
        let report = self.last_clock.filter(|r| !r.status.no_clock)?;
        let left = self.config.left();
        Some(if report.status.right_lever_high {
            left
        } else {
            left.other()
        })
    }

    /// The latest clock times reported (White, Black).
    pub fn last_times(&self) -> Option<(Seconds, Seconds)> {
        self.last_times
    }

    /// The latest field updates that changed the board (a8 index, code),
    /// oldest first, at most [`RECENT_UPDATES`].
    pub fn recent_updates(&self) -> impl Iterator<Item = (u8, u8)> + '_ {
        self.recent.iter().copied()
    }

    fn emit(&mut self, d: Decoded, out: &mut Vec<Decoded>) {
        self.skipped.flush(out);
        out.push(d);
    }

    fn push_byte(&mut self, b: u8, out: &mut Vec<Decoded>) {
        if b & 0x80 != 0 {
            // Only an id byte has the top bit set: whatever was in progress
            // is cut off, and this byte may start the next message.
            if !self.buf.is_empty() {
                let torn = DecodeError::Torn {
                    kind: self.buf[0],
                    got: self.buf.len(),
                    expected: self.need,
                };
                self.buf.clear();
                self.emit(Decoded::Error(torn), out);
            }
            if length_range(b).is_some() {
                self.buf.push(b);
                self.need = 0;
            } else {
                self.skipped.add(1);
            }
            return;
        }
        if self.buf.is_empty() {
            self.skipped.add(1);
            return;
        }
        self.buf.push(b);
        if self.buf.len() == 3 {
            let len = usize::from(self.buf[1]) << 7 | usize::from(self.buf[2]);
            let (lo, hi) = length_range(self.buf[0]).unwrap_or((3, 3));
            if len < lo || len > hi {
                let kind = self.buf[0];
                self.buf.clear();
                self.emit(Decoded::Error(DecodeError::BadLength { kind, len }), out);
                return;
            }
            self.need = len;
        }
        if self.buf.len() >= 3 && self.buf.len() == self.need {
            let frame = std::mem::take(&mut self.buf);
            self.message(&frame, out);
            self.buf = frame;
            self.buf.clear();
        }
    }

    fn message(&mut self, frame: &[u8], out: &mut Vec<Decoded>) {
        let kind = frame[0];
        let data = &frame[3..];
        let bad = |offset: usize| {
            Decoded::Error(DecodeError::BadValue {
                kind,
                offset,
                value: frame[offset],
            })
        };
        match kind {
            id::BOARD_DUMP => {
                if let Some(i) = data.iter().position(|&c| c > 0x0F) {
                    return self.emit(bad(3 + i), out);
                }
                let mut codes = [0u8; 64];
                codes.copy_from_slice(data);
                self.skipped.flush(out);
                let mut scan = Scan::empty();
                for (i, &c) in codes.iter().enumerate() {
                    let sq = square_from_a8(i);
                    match piece_code(c) {
                        Some(PieceCode::Piece(p)) => scan.0[sq.to_usize()] = Some(Sensed::Piece(p)),
                        Some(PieceCode::Magic(m)) => out.push(Decoded::Dgt(Message::Magic(sq, m))),
                        _ => {}
                    }
                }
                out.push(Decoded::Event(BoardEvent::Board(Box::new(scan.clone()))));
                self.codes = Some(codes);
                self.scan = Some(scan);
            }
            id::FIELD_UPDATE => {
                if data[0] > 63 {
                    return self.emit(bad(3), out);
                }
                let Some(new) = piece_code(data[1]) else {
                    return self.emit(bad(4), out);
                };
                self.skipped.flush(out);
                self.field_update(usize::from(data[0]), new, out);
            }
            id::BWTIME => self.bwtime(frame, out),
            id::VERSION => self.emit(
                Decoded::Dgt(Message::Version {
                    major: data[0],
                    minor: data[1],
                }),
                out,
            ),
            id::SERIALNR => self.emit(Decoded::Dgt(Message::SerialNumber(ascii(data))), out),
            id::LONG_SERIALNR => {
                self.emit(Decoded::Dgt(Message::LongSerialNumber(ascii(data))), out)
            }
            id::TRADEMARK => self.emit(Decoded::Dgt(Message::Trademark(ascii(data))), out),
            id::BUSADRES => self.emit(
                Decoded::Dgt(Message::BusAddress(
                    u16::from(data[0]) << 7 | u16::from(data[1]),
                )),
                out,
            ),
            id::BATTERY_STATUS => self.emit(Decoded::Dgt(Message::Battery(data.to_vec())), out),
            id::EE_MOVES => self.emit(Decoded::Dgt(Message::EeMoves(data.to_vec())), out),
            _ => self.emit(
                Decoded::Dgt(Message::Other {
                    id: kind,
                    payload: data.to_vec(),
                }),
                out,
            ),
        }
    }

    fn field_update(&mut self, field: usize, new: PieceCode, out: &mut Vec<Decoded>) {
        let sq = square_from_a8(field);
        // `None` until a dump tells what stood there.
        let old = self
            .codes
            .map(|codes| piece_code(codes[field]).unwrap_or(PieceCode::Empty));
        if old == Some(new) {
            // The board reports changes only; a repeat carries nothing new.
            return;
        }
        match old {
            Some(PieceCode::Piece(_)) => out.push(Decoded::Event(BoardEvent::Lift(sq))),
            Some(PieceCode::Magic(_)) => out.push(Decoded::Dgt(Message::MagicRemoved(sq))),
            Some(PieceCode::Empty) => {}
            // Unknown model: an emptied square must have held something.
            None if new == PieceCode::Empty => out.push(Decoded::Event(BoardEvent::Lift(sq))),
            None => {}
        }
        match new {
            PieceCode::Piece(p) => out.push(Decoded::Event(BoardEvent::Place(sq, Some(p)))),
            PieceCode::Magic(m) => out.push(Decoded::Dgt(Message::Magic(sq, m))),
            PieceCode::Empty => {}
        }
        if self.recent.len() == RECENT_UPDATES {
            self.recent.pop_front();
        }
        self.recent.push_back((field as u8, code_of(new)));
        if let (Some(codes), Some(scan)) = (&mut self.codes, &mut self.scan) {
            codes[field] = code_of(new);
            scan.0[sq.to_usize()] = match new {
                PieceCode::Piece(p) => Some(Sensed::Piece(p)),
                _ => None,
            };
        }
    }

    fn bwtime(&mut self, f: &[u8], out: &mut Vec<Decoded>) {
        if f[3] & 0x0F == 0x0A || f[6] & 0x0F == 0x0A {
            let ack = ClockAck([
                (f[4] & 0x7F) | ((f[6] << 3) & 0x80),
                (f[5] & 0x7F) | ((f[6] << 2) & 0x80),
                (f[7] & 0x7F) | ((f[3] << 3) & 0x80),
                (f[8] & 0x7F) | ((f[3] << 2) & 0x80),
            ]);
            return self.emit(Decoded::Dgt(Message::ClockAck(ack)), out);
        }
        if f[3..].iter().all(|&b| b == 0) {
            return self.emit(Decoded::Dgt(Message::BlankClockReport), out);
        }
        let face = |o: usize| -> Result<ClockFace, usize> {
            let h = f[o];
            if h & 0x0F > 9 {
                return Err(o);
            }
            Ok(ClockFace {
                hours: h & 0x0F,
                minutes: from_bcd(f[o + 1]).ok_or(o + 1)?,
                seconds: from_bcd(f[o + 2]).ok_or(o + 2)?,
                flag_fallen: h & 0x10 != 0,
                time_per_move: h & 0x20 != 0,
                flag_shown: h & 0x40 != 0,
            })
        };
        let report = match (face(3), face(6)) {
            (Ok(right), Ok(left)) => ClockReport {
                right,
                left,
                status: ClockStatus::from_byte(f[9]),
            },
            (Err(o), _) | (_, Err(o)) => {
                return self.emit(
                    Decoded::Error(DecodeError::BadValue {
                        kind: f[0],
                        offset: o,
                        value: f[o],
                    }),
                    out,
                );
            }
        };
        self.emit(Decoded::Dgt(Message::ClockReport(report)), out);
        if report.status.no_clock {
            return;
        }
        let left = self.config.left();
        let (white, black) = if left == Color::White {
            (report.left, report.right)
        } else {
            (report.right, report.left)
        };
        if let Some(prev) = self.last_clock {
            if prev.status.right_lever_high != report.status.right_lever_high {
                // Pressing a side pushes it down and lifts the other one.
                let presser = if report.status.right_lever_high {
                    left
                } else {
                    left.other()
                };
                out.push(Decoded::Event(BoardEvent::Press(presser)));
            }
            let (pw, pb) = if left == Color::White {
                (prev.left, prev.right)
            } else {
                (prev.right, prev.left)
            };
            if white.flagged() && !pw.flagged() {
                out.push(Decoded::Event(BoardEvent::Flag(Color::White)));
            }
            if black.flagged() && !pb.flagged() {
                out.push(Decoded::Event(BoardEvent::Flag(Color::Black)));
            }
        }
        let times = (white.secs(), black.secs());
        if self.last_times != Some(times) {
            out.push(Decoded::Event(BoardEvent::Clock(times.0, times.1)));
            self.last_times = Some(times);
        }
        self.last_clock = Some(report);
    }
}

impl Default for DgtDecoder {
    fn default() -> Self {
        DgtDecoder::new(Config::default())
    }
}

impl Decoder for DgtDecoder {
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<Decoded>) {
        for &b in bytes {
            self.push_byte(b, out);
        }
        self.skipped.flush(out);
    }

    fn reset(&mut self) {
        *self = DgtDecoder::new(self.config);
    }

    fn pending(&self) -> usize {
        self.buf.len()
    }

    fn board(&self) -> Option<&Scan> {
        self.scan.as_ref()
    }
}

/// Allowed total lengths of a message id; `None` for ids that start no
/// message, so that stray high bytes are skipped rather than waited on.
fn length_range(id: u8) -> Option<(usize, usize)> {
    Some(match id {
        id::BOARD_DUMP => (67, 67),
        id::BWTIME => (10, 10),
        id::FIELD_UPDATE => (5, 5),
        id::EE_MOVES => (3, MAX_FRAME),
        id::BUSADRES => (5, 5),
        id::SERIALNR => (8, 8),
        id::TRADEMARK => (3, 1024),
        id::VERSION => (5, 5),
        id::BOARD_DUMP_50B | id::BOARD_DUMP_50W => (53, 53),
        // The published layout is inconsistent (7 bytes, or data up to
        // offset 11): accept a small range.
        id::BATTERY_STATUS => (4, 32),
        id::LONG_SERIALNR => (13, 13),
        _ => return None,
    })
}

fn ascii(data: &[u8]) -> String {
    // Data bytes are below 0x80, so this never replaces anything.
    String::from_utf8_lossy(data).into_owned()
}

fn from_bcd(b: u8) -> Option<u8> {
    let (tens, units) = (b >> 4, b & 0x0F);
    (tens < 6 && units < 10).then_some(tens * 10 + units)
}

fn to_bcd(v: u8) -> u8 {
    (v / 10) << 4 | (v % 10)
}

// ---------------------------------------------------------------------------
// Board side: what a (virtual) board writes to the host.

/// Writes a frame with this id and data, adding the length header.
///
/// Data bytes must be below 0x80 and the frame at most 16383 bytes long;
/// both are masked rather than checked, because every caller in this module
/// builds its data from in-range values.
pub fn encode_frame(id: u8, data: &[u8], out: &mut Vec<u8>) {
    let len = data.len() + 3;
    out.push(id);
    out.push((len >> 7) as u8 & 0x7F);
    out.push(len as u8 & 0x7F);
    out.extend(data.iter().map(|b| b & 0x7F));
}

/// A board dump of these codes (a8 first).
pub fn encode_dump(codes: &[u8; 64], out: &mut Vec<u8>) {
    encode_frame(id::BOARD_DUMP, codes, out);
}

/// The codes of a scan, a8 first, or `None` if a square's piece is unknown
/// (a DGT board always identifies pieces).
pub fn scan_codes(scan: &Scan) -> Option<[u8; 64]> {
    let mut out = [0u8; 64];
    for (i, o) in out.iter_mut().enumerate() {
        *o = match scan.get(square_from_a8(i)) {
            None => EMPTY,
            Some(Sensed::Piece(p)) => code_of_piece(p),
            Some(Sensed::Occupied) => return None,
        };
    }
    Some(out)
}

/// A field update: `sq` now holds `code`.
pub fn encode_field_update(sq: Square, code: PieceCode, out: &mut Vec<u8>) {
    encode_frame(id::FIELD_UPDATE, &[a8_index(sq) as u8, code_of(code)], out);
}

/// A BWTIME time report.
pub fn encode_clock_report(r: &ClockReport, out: &mut Vec<u8>) {
    let face = |f: &ClockFace| {
        [
            f.hours.min(9)
                | u8::from(f.flag_fallen) << 4
                | u8::from(f.time_per_move) << 5
                | u8::from(f.flag_shown) << 6,
            to_bcd(f.minutes.min(59)),
            to_bcd(f.seconds.min(59)),
        ]
    };
    let (r3, l3) = (face(&r.right), face(&r.left));
    let mut data = [0u8; 7];
    data[..3].copy_from_slice(&r3);
    data[3..6].copy_from_slice(&l3);
    data[6] = r.status.to_byte();
    encode_frame(id::BWTIME, &data, out);
}

/// A BWTIME frame carrying a clock acknowledgement.
pub fn encode_clock_ack(ack: &ClockAck, out: &mut Vec<u8>) {
    let [a0, a1, a2, a3] = ack.0;
    // The top bits of the ack bytes ride in bits 4 and 5 of the two bytes
    // whose low nibble 0x0A marks the frame as an ack.
    let b3 = 0x0A | (a2 >> 7) << 4 | (a3 >> 7) << 5;
    let b6 = 0x0A | (a0 >> 7) << 4 | (a1 >> 7) << 5;
    encode_frame(
        id::BWTIME,
        &[b3, a0 & 0x7F, a1 & 0x7F, b6, a2 & 0x7F, a3 & 0x7F, 0],
        out,
    );
}

/// A version reply.
pub fn encode_version(major: u8, minor: u8, out: &mut Vec<u8>) {
    encode_frame(id::VERSION, &[major, minor], out);
}

/// A serial number reply (five digits; longer input is cut, shorter padded
/// with `0`).
pub fn encode_serial(serial: &str, out: &mut Vec<u8>) {
    let mut digits = [b'0'; 5];
    for (d, c) in digits.iter_mut().zip(serial.bytes()) {
        *d = c & 0x7F;
    }
    encode_frame(id::SERIALNR, &digits, out);
}

// ---------------------------------------------------------------------------
// Host side: commands.

/// A clock command, sent through the board inside a `0x2B` envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClockCommand {
    /// Back to the normal time display.
    End,
    /// Ask which button is pressed.
    Button,
    /// Ask for the clock's version.
    Version,
    /// Beep for `units` × 64 ms.
    Beep {
        /// Duration in 64 ms units.
        units: u8,
    },
    /// Set both times and run (clock mode 23 only). Values are binary.
    SetAndRun {
        /// Left side (hours, minutes, seconds).
        left: (u8, u8, u8),
        /// Right side (hours, minutes, seconds).
        right: (u8, u8, u8),
        /// 0x01 left counts down, 0x02 right counts down, 0x04 pause,
        /// 0x08 the lever toggles the clock.
        flags: u8,
    },
    /// Show eight ASCII characters (DGT3000), with a beep of 0..=15.
    Ascii {
        text: [u8; 8],
        /// Beep length.
        beep: u8,
    },
    /// A clock command this crate does not model, with its data bytes.
    Other {
        /// The command byte.
        cmd: u8,
        /// The data between command and end byte.
        data: Vec<u8>,
    },
}

impl ClockCommand {
    /// Command byte of [`ClockCommand::End`].
    pub const END: u8 = 0x03;
    /// Command byte of [`ClockCommand::Button`].
    pub const BUTTON: u8 = 0x08;
    /// Command byte of [`ClockCommand::Version`].
    pub const VERSION: u8 = 0x09;
    /// Command byte of [`ClockCommand::SetAndRun`].
    pub const SETNRUN: u8 = 0x0A;
    /// Command byte of [`ClockCommand::Beep`].
    pub const BEEP: u8 = 0x0B;
    /// Command byte of [`ClockCommand::Ascii`].
    pub const ASCII: u8 = 0x0C;

    fn parts(&self) -> (u8, Vec<u8>) {
        match self {
            ClockCommand::End => (Self::END, vec![]),
            ClockCommand::Button => (Self::BUTTON, vec![]),
            ClockCommand::Version => (Self::VERSION, vec![]),
            ClockCommand::Beep { units } => (Self::BEEP, vec![*units]),
            ClockCommand::SetAndRun { left, right, flags } => (
                Self::SETNRUN,
                vec![left.0, left.1, left.2, right.0, right.1, right.2, *flags],
            ),
            ClockCommand::Ascii { text, beep } => {
                let mut d = text.to_vec();
                d.push(*beep);
                (Self::ASCII, d)
            }
            ClockCommand::Other { cmd, data } => (*cmd, data.clone()),
        }
    }

    fn from_parts(cmd: u8, data: &[u8]) -> ClockCommand {
        match (cmd, data) {
            (Self::END, []) => ClockCommand::End,
            (Self::BUTTON, []) => ClockCommand::Button,
            (Self::VERSION, []) => ClockCommand::Version,
            (Self::BEEP, [u]) => ClockCommand::Beep { units: *u },
            (Self::SETNRUN, [lh, lm, ls, rh, rm, rs, f]) => ClockCommand::SetAndRun {
                left: (*lh, *lm, *ls),
                right: (*rh, *rm, *rs),
                flags: *f,
            },
            (Self::ASCII, [t @ .., beep]) if t.len() == 8 => {
                let mut text = [0u8; 8];
                text.copy_from_slice(t);
                ClockCommand::Ascii { text, beep: *beep }
            }
            _ => ClockCommand::Other {
                cmd,
                data: data.to_vec(),
            },
        }
    }
}

/// A host-to-board command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `0x40`: idle, cancel update modes.
    Reset,
    /// `0x41`: send one clock report.
    SendClock,
    /// `0x42`: send a board dump.
    SendBoard,
    /// `0x43`: field updates and a clock report every second.
    Update,
    /// `0x44`: field updates only.
    UpdateBoard,
    /// `0x45`: send the serial number.
    SerialNumber,
    /// `0x46`: send the bus address.
    BusAddress,
    /// `0x47`: send the trademark text.
    Trademark,
    /// `0x49`: send the EEPROM log.
    EeMoves,
    /// `0x4A`: switch to bus mode.
    BusMode,
    /// `0x4B`: field updates and clock reports when the clock changed.
    UpdateNice,
    /// `0x4C`: send the battery state.
    BatteryStatus,
    /// `0x4D`: send the firmware version.
    Version,
    /// `0x55`: send the long serial number.
    LongSerialNumber,
    /// `0x60`: Revelation II LEDs on or off from one square to another.
    SetLeds {
        /// Switch on (true) or off.
        on: bool,
        /// First square.
        from: Square,
        /// Last square.
        to: Square,
    },
    /// `0x2B`: a clock command.
    Clock(ClockCommand),
    /// Any other byte (single-byte commands eboard does not use, or noise).
    Unknown(u8),
}

/// What the host sends to start a session: update mode that reports the
/// clock only when it changes, then a version query. When the version
/// reply arrives, send [`Command::SendBoard`] for the first full dump.
pub const STARTUP: [Command; 2] = [Command::UpdateNice, Command::Version];

impl Command {
    /// Appends the command's bytes.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let single = match self {
            Command::Reset => cmd::RESET,
            Command::SendClock => cmd::SEND_CLK,
            Command::SendBoard => cmd::SEND_BRD,
            Command::Update => cmd::SEND_UPDATE,
            Command::UpdateBoard => cmd::SEND_UPDATE_BRD,
            Command::SerialNumber => cmd::RETURN_SERIALNR,
            Command::BusAddress => cmd::RETURN_BUSADRES,
            Command::Trademark => cmd::SEND_TRADEMARK,
            Command::EeMoves => cmd::SEND_EE_MOVES,
            Command::BusMode => cmd::TO_BUSMODE,
            Command::UpdateNice => cmd::SEND_UPDATE_NICE,
            Command::BatteryStatus => cmd::SEND_BATTERY_STATUS,
            Command::Version => cmd::SEND_VERSION,
            Command::LongSerialNumber => cmd::RETURN_LONG_SERIALNR,
            Command::Unknown(b) => *b,
            Command::SetLeds { on, from, to } => {
                out.extend([
                    cmd::SET_LEDS,
                    4,
                    u8::from(*on),
                    a8_index(*from) as u8,
                    a8_index(*to) as u8,
                    0,
                ]);
                return;
            }
            Command::Clock(c) => {
                let (code, data) = c.parts();
                // The size byte counts what follows it: start, command,
                // data, end.
                out.extend([cmd::CLOCK_MESSAGE, (data.len() + 3) as u8, 0x03, code]);
                out.extend(data);
                out.push(0x00);
                return;
            }
        };
        out.push(single);
    }

    /// The bytes of a list of commands.
    pub fn encode_all(cmds: &[Command]) -> Vec<u8> {
        let mut out = Vec::new();
        for c in cmds {
            c.encode(&mut out);
        }
        out
    }
}

/// Board-side reader of host commands, for a virtual board.
#[derive(Debug, Clone, Default)]
pub struct HostParser {
    buf: Vec<u8>,
}

impl HostParser {
    /// A parser with nothing pending.
    pub fn new() -> HostParser {
        HostParser::default()
    }

    /// Parses `bytes`, appending complete commands to `out`.
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<Command>) {
        for &b in bytes {
            if self.buf.is_empty() {
                match b {
                    cmd::CLOCK_MESSAGE | cmd::SET_LEDS => self.buf.push(b),
                    _ => out.push(single_command(b)),
                }
                continue;
            }
            self.buf.push(b);
            let size = usize::from(self.buf[1]);
            if self.buf.len() < 2 + size {
                continue;
            }
            let env = std::mem::take(&mut self.buf);
            out.push(envelope(&env));
        }
    }

    /// Bytes of an unfinished envelope.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }
}

fn single_command(b: u8) -> Command {
    match b {
        cmd::RESET => Command::Reset,
        cmd::SEND_CLK => Command::SendClock,
        cmd::SEND_BRD => Command::SendBoard,
        cmd::SEND_UPDATE => Command::Update,
        cmd::SEND_UPDATE_BRD => Command::UpdateBoard,
        cmd::RETURN_SERIALNR => Command::SerialNumber,
        cmd::RETURN_BUSADRES => Command::BusAddress,
        cmd::SEND_TRADEMARK => Command::Trademark,
        cmd::SEND_EE_MOVES => Command::EeMoves,
        cmd::TO_BUSMODE => Command::BusMode,
        cmd::SEND_UPDATE_NICE => Command::UpdateNice,
        cmd::SEND_BATTERY_STATUS => Command::BatteryStatus,
        cmd::SEND_VERSION => Command::Version,
        cmd::RETURN_LONG_SERIALNR => Command::LongSerialNumber,
        other => Command::Unknown(other),
    }
}

/// Reads a sized envelope: `id size body...` with `size` body bytes.
fn envelope(env: &[u8]) -> Command {
    let body = &env[2..];
    match (env[0], body) {
        (cmd::SET_LEDS, [on, from, to, 0]) if *from < 64 && *to < 64 && *on < 2 => {
            Command::SetLeds {
                on: *on == 1,
                from: square_from_a8(usize::from(*from)),
                to: square_from_a8(usize::from(*to)),
            }
        }
        (cmd::CLOCK_MESSAGE, [0x03, code, data @ .., 0x00]) => {
            Command::Clock(ClockCommand::from_parts(*code, data))
        }
        (cmd::CLOCK_MESSAGE, _) => Command::Clock(ClockCommand::Other {
            cmd: 0,
            data: body.to_vec(),
        }),
        (other, _) => Command::Unknown(other),
    }
}

// ---------------------------------------------------------------------------
// EEPROM log.

/// One record of the on-board EEPROM log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EeRecord {
    /// A square changed.
    Field {
        square: Square,
        /// Its new content.
        code: PieceCode,
        /// Less than about 250 ms since the previous record.
        quick: bool,
    },
    /// Clock time at a lever press.
    Clock {
        /// The left-hand display (else the right-hand one).
        left: bool,
        /// The time shown, in seconds.
        secs: Seconds,
    },
    /// The board powered up.
    PowerUp,
    /// End of the log.
    Eof,
    /// Sixteen pieces on the four home ranks, not in the start position.
    FourRows,
    /// The board was emptied.
    EmptyBoard,
    /// The log was read out.
    Downloaded,
    /// The start position, connector on White's left.
    BeginPos,
    /// The start position, connector on White's right.
    BeginPosRot,
    /// A start-of-game tag (bus mode).
    StartTag,
    /// The watchdog fired.
    Watchdog,
    /// Filler.
    Nop,
    /// A byte that starts no record, or a record cut off by the end.
    Unknown(u8),
}

/// Reads an EEPROM log (the data of an `EE_MOVES` message).
pub fn parse_ee_moves(data: &[u8]) -> Vec<EeRecord> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < data.len() {
        let b = data[i];
        let rec = match b {
            0x40..=0x5F => match data.get(i + 1) {
                Some(&f) if f < 64 => {
                    i += 1;
                    match piece_code(b & 0x0F) {
                        Some(code) => EeRecord::Field {
                            square: square_from_a8(usize::from(f)),
                            code,
                            quick: b & 0x10 != 0,
                        },
                        None => EeRecord::Unknown(b),
                    }
                }
                _ => EeRecord::Unknown(b),
            },
            0x60..=0x69 | 0x70..=0x79 => match (data.get(i + 1), data.get(i + 2)) {
                (Some(&m), Some(&s)) => match (from_bcd(m), from_bcd(s)) {
                    (Some(m), Some(s)) => {
                        i += 2;
                        EeRecord::Clock {
                            left: b & 0x10 != 0,
                            secs: Seconds::from(b & 0x0F) * 3600
                                + Seconds::from(m) * 60
                                + Seconds::from(s),
                        }
                    }
                    _ => EeRecord::Unknown(b),
                },
                _ => EeRecord::Unknown(b),
            },
            0x6A => EeRecord::PowerUp,
            0x6B => EeRecord::Eof,
            0x6C => EeRecord::FourRows,
            0x6D => EeRecord::EmptyBoard,
            0x6E => EeRecord::Downloaded,
            0x6F => EeRecord::BeginPos,
            0x7A => EeRecord::BeginPosRot,
            0x7B => EeRecord::StartTag,
            0x7C => EeRecord::Watchdog,
            0x7F | 0x00 => EeRecord::Nop,
            _ => EeRecord::Unknown(b),
        };
        out.push(rec);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    const WP: Piece = Piece {
        color: Color::White,
        role: Role::Pawn,
    };
    const WQ: Piece = Piece {
        color: Color::White,
        role: Role::Queen,
    };
    const BP: Piece = Piece {
        color: Color::Black,
        role: Role::Pawn,
    };

    fn decode(dec: &mut DgtDecoder, bytes: &[u8]) -> Vec<Decoded> {
        let mut out = Vec::new();
        dec.feed(bytes, &mut out);
        out
    }

    fn ev(e: BoardEvent) -> Decoded {
        Decoded::Event(e)
    }

    /// The start position as a DGT board dumps it, written out from the
    /// code table: a8..h8 first, h1 last.
    fn start_dump() -> Vec<u8> {
        let mut f = vec![0x86, 0x00, 0x43];
        f.extend([0x08, 0x09, 0x0A, 0x0C, 0x0B, 0x0A, 0x09, 0x08]);
        f.extend([0x07; 8]);
        f.extend([0x00; 32]);
        f.extend([0x01; 8]);
        f.extend([0x02, 0x03, 0x04, 0x06, 0x05, 0x04, 0x03, 0x02]);
        f
    }

    fn start_scan() -> Scan {
        Scan::from_board(&shakmaty::Board::default(), true)
    }

    #[test]
    fn dump_of_start_position() {
        let mut d = DgtDecoder::default();
        let out = decode(&mut d, &start_dump());
        assert_eq!(out, vec![ev(BoardEvent::Board(Box::new(start_scan())))]);
        assert_eq!(d.board(), Some(&start_scan()));
        assert_eq!(d.pending(), 0);
    }

    #[test]
    fn field_updates_become_lift_and_place() {
        let mut d = DgtDecoder::default();
        decode(&mut d, &start_dump());
        // e2 is field 52 (0x34), e4 field 36 (0x24).
        let out = decode(
            &mut d,
            &[0x8E, 0x00, 0x05, 0x34, 0x00, 0x8E, 0x00, 0x05, 0x24, 0x01],
        );
        assert_eq!(
            out,
            vec![
                ev(BoardEvent::Lift(Square::E2)),
                ev(BoardEvent::Place(Square::E4, Some(WP)))
            ]
        );
        assert_eq!(d.board().unwrap().get(Square::E4), Some(Sensed::Piece(WP)));
        assert_eq!(d.board().unwrap().get(Square::E2), None);
        // A repeated update changes nothing and says nothing.
        assert_eq!(decode(&mut d, &[0x8E, 0x00, 0x05, 0x24, 0x01]), vec![]);
    }

    #[test]
    fn capture_seen_without_empty_square() {
        // Black pawn on e7 (field 12) replaced straight by a white queen.
        let mut d = DgtDecoder::default();
        decode(&mut d, &start_dump());
        let out = decode(&mut d, &[0x8E, 0x00, 0x05, 0x0C, 0x06]);
        assert_eq!(
            out,
            vec![
                ev(BoardEvent::Lift(Square::E7)),
                ev(BoardEvent::Place(Square::E7, Some(WQ)))
            ]
        );
    }

    #[test]
    fn field_updates_without_a_dump() {
        let mut d = DgtDecoder::default();
        let out = decode(
            &mut d,
            &[0x8E, 0x00, 0x05, 0x34, 0x00, 0x8E, 0x00, 0x05, 0x0C, 0x07],
        );
        assert_eq!(
            out,
            vec![
                ev(BoardEvent::Lift(Square::E2)),
                ev(BoardEvent::Place(Square::E7, Some(BP)))
            ]
        );
        assert_eq!(d.board(), None);
    }

    #[test]
    fn magic_pieces_are_messages_not_pieces() {
        let mut d = DgtDecoder::default();
        let mut dump = start_dump();
        dump[3 + 35] = 0x0D; // d4 = field 35: draw token
        let out = decode(&mut d, &dump);
        assert_eq!(
            out,
            vec![
                Decoded::Dgt(Message::Magic(Square::D4, MagicPiece::Draw)),
                ev(BoardEvent::Board(Box::new(start_scan()))),
            ]
        );
        // White-wins token on e4 (field 36), then taken away.
        let out = decode(
            &mut d,
            &[0x8E, 0x00, 0x05, 0x24, 0x0E, 0x8E, 0x00, 0x05, 0x24, 0x00],
        );
        assert_eq!(
            out,
            vec![
                Decoded::Dgt(Message::Magic(Square::E4, MagicPiece::WhiteWins)),
                Decoded::Dgt(Message::MagicRemoved(Square::E4)),
            ]
        );
        assert_eq!(d.board(), Some(&start_scan()));
    }

    #[test]
    fn clock_report_and_lever() {
        let mut d = DgtDecoder::default(); // White on the left
        // Right 1:30:05, left 0:59:59, running, right lever up.
        let r1 = [0x8D, 0x00, 0x0A, 0x01, 0x30, 0x05, 0x00, 0x59, 0x59, 0x03];
        let out = decode(&mut d, &r1);
        assert_eq!(out.len(), 2);
        let Decoded::Dgt(Message::ClockReport(rep)) = &out[0] else {
            panic!("{out:?}")
        };
        assert_eq!(rep.right.secs(), 5405);
        assert_eq!(rep.left.secs(), 3599);
        assert!(rep.status.running && rep.status.right_lever_high);
        assert_eq!(out[1], ev(BoardEvent::Clock(3599, 5405)));
        // Right lever goes down: the right-hand player (Black) pressed.
        let r2 = [0x8D, 0x00, 0x0A, 0x01, 0x30, 0x04, 0x00, 0x59, 0x59, 0x01];
        let out = decode(&mut d, &r2);
        assert_eq!(
            &out[1..],
            &[
                ev(BoardEvent::Press(Color::Black)),
                ev(BoardEvent::Clock(3599, 5404))
            ]
        );
        // Same report again: no new clock event.
        assert_eq!(decode(&mut d, &r2).len(), 1);
        // Right lever up again: the left-hand player (White) pressed.
        let r3 = [0x8D, 0x00, 0x0A, 0x01, 0x30, 0x04, 0x00, 0x59, 0x58, 0x03];
        let out = decode(&mut d, &r3);
        assert_eq!(
            &out[1..],
            &[
                ev(BoardEvent::Press(Color::White)),
                ev(BoardEvent::Clock(3598, 5404))
            ]
        );
    }

    #[test]
    fn clock_sides_follow_the_config() {
        let mut d = DgtDecoder::new(Config {
            white_on_left: false,
        });
        let r1 = [0x8D, 0x00, 0x0A, 0x01, 0x30, 0x05, 0x00, 0x59, 0x59, 0x03];
        assert_eq!(decode(&mut d, &r1)[1], ev(BoardEvent::Clock(5405, 3599)));
        let r2 = [0x8D, 0x00, 0x0A, 0x01, 0x30, 0x05, 0x00, 0x59, 0x59, 0x01];
        assert_eq!(decode(&mut d, &r2)[1], ev(BoardEvent::Press(Color::White)));
    }

    #[test]
    fn flag_and_no_clock() {
        let mut d = DgtDecoder::default();
        decode(
            &mut d,
            &[0x8D, 0x00, 0x0A, 0x00, 0x00, 0x10, 0x00, 0x00, 0x01, 0x01],
        );
        // Left (White) flag falls: hour byte 0x10, clock blocked at zero.
        let out = decode(
            &mut d,
            &[0x8D, 0x00, 0x0A, 0x00, 0x00, 0x10, 0x10, 0x00, 0x00, 0x00],
        );
        assert_eq!(
            &out[1..],
            &[
                ev(BoardEvent::Flag(Color::White)),
                ev(BoardEvent::Clock(0, 10))
            ]
        );
        // Status bit 5: no clock, no events.
        let out = decode(
            &mut d,
            &[0x8D, 0x00, 0x0A, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x20],
        );
        assert_eq!(out.len(), 1);
        assert!(matches!(out[0], Decoded::Dgt(Message::ClockReport(r)) if r.status.no_clock));
        // All zero: ignored.
        let out = decode(&mut d, &[0x8D, 0x00, 0x0A, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(out, vec![Decoded::Dgt(Message::BlankClockReport)]);
    }

    #[test]
    fn clock_acks_are_told_apart() {
        let mut d = DgtDecoder::default();
        // Ack of a beep (0x0B): ack0 0x10 normal.
        let out = decode(
            &mut d,
            &[0x8D, 0x00, 0x0A, 0x0A, 0x10, 0x0B, 0x0A, 0x00, 0x00, 0x00],
        );
        let want = ClockAck([0x10, 0x0B, 0x00, 0x00]);
        assert_eq!(out, vec![Decoded::Dgt(Message::ClockAck(want))]);
        assert_eq!(want.command(), Some(0x0B));
        assert!(!want.is_error());
        // Unsolicited button ack: ack1 0x88 (its top bit in bit 5 of byte
        // 6), ack3 0x33 = Run.
        let out = decode(
            &mut d,
            &[0x8D, 0x00, 0x0A, 0x0A, 0x10, 0x08, 0x2A, 0x00, 0x33, 0x00],
        );
        let Decoded::Dgt(Message::ClockAck(ack)) = out[0] else {
            panic!("{out:?}")
        };
        assert_eq!(ack.0, [0x10, 0x88, 0x00, 0x33]);
        assert!(ack.is_unsolicited());
        assert_eq!(ack.button(), Some(ClockButton::Run));
        // Version ack: ack2 = 0x21 → 2.1.
        let out = decode(
            &mut d,
            &[0x8D, 0x00, 0x0A, 0x0A, 0x10, 0x09, 0x0A, 0x21, 0x00, 0x00],
        );
        let Decoded::Dgt(Message::ClockAck(ack)) = out[0] else {
            panic!("{out:?}")
        };
        assert_eq!(ack.version(), Some((2, 1)));
        // No time events from acks.
        assert!(out.iter().all(|d| d.event().is_none()));
    }

    #[test]
    fn bad_clock_digits_are_errors() {
        let mut d = DgtDecoder::default();
        // Minutes 0x6A is not BCD.
        let out = decode(
            &mut d,
            &[0x8D, 0x00, 0x0A, 0x01, 0x6A, 0x05, 0x00, 0x59, 0x59, 0x03],
        );
        assert!(matches!(
            out[..],
            [Decoded::Error(DecodeError::BadValue { offset: 4, .. })]
        ));
    }

    #[test]
    fn info_messages() {
        let mut d = DgtDecoder::default();
        let mut bytes = vec![0x93, 0x00, 0x05, 0x01, 0x02];
        bytes.extend([0x91, 0x00, 0x08, b'1', b'2', b'3', b'4', b'5']);
        bytes.extend([0x90, 0x00, 0x05, 0x01, 0x05]);
        bytes.extend([0xA2, 0x00, 0x0D]);
        bytes.extend(b"0123456789");
        bytes.extend([0x8F, 0x00, 0x06, 0x6A, 0x46, 0x34]);
        bytes.extend([0x92, 0x00, 0x06, b'D', b'G', b'T']);
        let out = decode(&mut d, &bytes);
        assert_eq!(
            out,
            vec![
                Decoded::Dgt(Message::Version { major: 1, minor: 2 }),
                Decoded::Dgt(Message::SerialNumber("12345".into())),
                Decoded::Dgt(Message::BusAddress(133)),
                Decoded::Dgt(Message::LongSerialNumber("0123456789".into())),
                Decoded::Dgt(Message::EeMoves(vec![0x6A, 0x46, 0x34])),
                Decoded::Dgt(Message::Trademark("DGT".into())),
            ]
        );
    }

    #[test]
    fn garbage_then_message() {
        let mut d = DgtDecoder::default();
        let out = decode(
            &mut d,
            &[0x00, 0x7F, 0xFF, 0x12, 0x93, 0x00, 0x05, 0x01, 0x02],
        );
        assert_eq!(
            out,
            vec![
                Decoded::Error(DecodeError::Garbage { bytes: 4 }),
                Decoded::Dgt(Message::Version { major: 1, minor: 2 }),
            ]
        );
    }

    #[test]
    fn torn_dump_then_message() {
        let mut d = DgtDecoder::default();
        let mut bytes = start_dump()[..13].to_vec();
        bytes.extend([0x93, 0x00, 0x05, 0x01, 0x02]);
        let out = decode(&mut d, &bytes);
        assert_eq!(
            out,
            vec![
                Decoded::Error(DecodeError::Torn {
                    kind: 0x86,
                    got: 13,
                    expected: 67
                }),
                Decoded::Dgt(Message::Version { major: 1, minor: 2 }),
            ]
        );
        assert_eq!(d.board(), None);
    }

    #[test]
    fn wrong_length_is_rejected() {
        let mut d = DgtDecoder::default();
        let out = decode(&mut d, &[0x8E, 0x00, 0x06, 0x34, 0x00, 0x00]);
        assert_eq!(
            out,
            vec![
                Decoded::Error(DecodeError::BadLength { kind: 0x8E, len: 6 }),
                Decoded::Error(DecodeError::Garbage { bytes: 3 }),
            ]
        );
        // Field 64 does not exist; code 0x10 neither.
        let out = decode(
            &mut d,
            &[0x8E, 0x00, 0x05, 0x40, 0x00, 0x8E, 0x00, 0x05, 0x00, 0x10],
        );
        assert!(matches!(
            out[..],
            [
                Decoded::Error(DecodeError::BadValue { offset: 3, .. }),
                Decoded::Error(DecodeError::BadValue { offset: 4, .. })
            ]
        ));
    }

    #[test]
    fn byte_by_byte_equals_whole() {
        let mut bytes = start_dump();
        bytes.extend([0x8E, 0x00, 0x05, 0x34, 0x00, 0x55, 0x8D, 0x00, 0x0A]);
        bytes.extend([0x01, 0x30, 0x05, 0x00, 0x59, 0x59, 0x03]);
        let whole = decode(&mut DgtDecoder::default(), &bytes);
        let mut d = DgtDecoder::default();
        let mut split = Vec::new();
        for b in &bytes {
            d.feed(std::slice::from_ref(b), &mut split);
        }
        assert_eq!(whole, split);
    }

    #[test]
    fn reset_forgets_partial_and_board() {
        let mut d = DgtDecoder::default();
        decode(&mut d, &start_dump());
        decode(&mut d, &[0x86, 0x00]);
        assert_eq!(d.pending(), 2);
        d.reset();
        assert_eq!((d.pending(), d.board()), (0, None));
    }

    #[test]
    fn host_commands() {
        assert_eq!(Command::encode_all(&STARTUP), vec![0x4B, 0x4D]);
        let mut out = Vec::new();
        Command::Clock(ClockCommand::Beep { units: 5 }).encode(&mut out);
        assert_eq!(out, [0x2B, 0x04, 0x03, 0x0B, 0x05, 0x00]);
        out.clear();
        Command::Clock(ClockCommand::End).encode(&mut out);
        assert_eq!(out, [0x2B, 0x03, 0x03, 0x03, 0x00]);
        out.clear();
        Command::Clock(ClockCommand::Ascii {
            text: *b"EBOARD  ",
            beep: 0,
        })
        .encode(&mut out);
        assert_eq!(out[..4], [0x2B, 0x0C, 0x03, 0x0C]);
        assert_eq!(out.len(), 14);
        out.clear();
        Command::SetLeds {
            on: true,
            from: Square::A8,
            to: Square::H1,
        }
        .encode(&mut out);
        assert_eq!(out, [0x60, 0x04, 0x01, 0x00, 0x3F, 0x00]);
    }

    #[test]
    fn host_parser_round_trip() {
        let cmds = vec![
            Command::UpdateNice,
            Command::Version,
            Command::SendBoard,
            Command::SendClock,
            Command::Clock(ClockCommand::SetAndRun {
                left: (1, 30, 0),
                right: (1, 29, 59),
                flags: 0x09,
            }),
            Command::Clock(ClockCommand::Ascii {
                text: *b"Hello!  ",
                beep: 3,
            }),
            Command::Clock(ClockCommand::Beep { units: 2 }),
            Command::Clock(ClockCommand::Version),
            Command::SetLeds {
                on: false,
                from: Square::E2,
                to: Square::E4,
            },
            Command::EeMoves,
            Command::Reset,
            Command::Unknown(0x77),
        ];
        let bytes = Command::encode_all(&cmds);
        let mut p = HostParser::new();
        let mut got = Vec::new();
        // Split at an awkward place: inside a clock envelope.
        p.feed(&bytes[..7], &mut got);
        p.feed(&bytes[7..], &mut got);
        assert_eq!(got, cmds);
        assert_eq!(p.pending(), 0);
    }

    #[test]
    fn encoder_matches_hand_built_frames() {
        let mut out = Vec::new();
        encode_dump(&scan_codes(&start_scan()).unwrap(), &mut out);
        assert_eq!(out, start_dump());
        out.clear();
        encode_field_update(Square::E4, PieceCode::Piece(WP), &mut out);
        assert_eq!(out, [0x8E, 0x00, 0x05, 0x24, 0x01]);
        out.clear();
        let mut rep = ClockReport {
            right: ClockFace::from_secs(5405),
            left: ClockFace::from_secs(3599),
            ..ClockReport::default()
        };
        rep.status.running = true;
        rep.status.right_lever_high = true;
        encode_clock_report(&rep, &mut out);
        assert_eq!(
            out,
            [0x8D, 0x00, 0x0A, 0x01, 0x30, 0x05, 0x00, 0x59, 0x59, 0x03]
        );
        out.clear();
        encode_version(3, 25, &mut out);
        encode_serial("24587", &mut out);
        assert_eq!(out[..5], [0x93, 0x00, 0x05, 3, 25]);
        assert_eq!(&out[8..], b"24587");
    }

    #[test]
    fn ee_log() {
        let recs = parse_ee_moves(&[
            0x6A, 0x46, 0x34, 0x51, 0x24, 0x71, 0x29, 0x58, 0x6F, 0x6B, 0x30,
        ]);
        assert_eq!(
            recs,
            vec![
                EeRecord::PowerUp,
                // 0x46: code 6 (white queen), not quick; field 0x34 = e2.
                EeRecord::Field {
                    square: Square::E2,
                    code: PieceCode::Piece(WQ),
                    quick: false
                },
                // 0x51: quick, white pawn, e4.
                EeRecord::Field {
                    square: Square::E4,
                    code: PieceCode::Piece(WP),
                    quick: true
                },
                // Left display 1:29:58.
                EeRecord::Clock {
                    left: true,
                    secs: 5398
                },
                EeRecord::BeginPos,
                EeRecord::Eof,
                EeRecord::Unknown(0x30),
            ]
        );
    }

    #[test]
    fn piece_codes_round_trip() {
        for code in 0..=0x0F {
            assert_eq!(code_of(piece_code(code).unwrap()), code);
        }
        assert_eq!(piece_code(0x10), None);
        assert_eq!(
            piece_code(0x0C),
            Some(PieceCode::Piece(Piece {
                color: Color::Black,
                role: Role::Queen
            }))
        );
    }

    fn arb_scan() -> impl Strategy<Value = Scan> {
        proptest::collection::vec(0u8..=12, 64).prop_map(|codes| {
            let mut scan = Scan::empty();
            for (i, c) in codes.into_iter().enumerate() {
                if let Some(PieceCode::Piece(p)) = piece_code(c) {
                    scan.0[i] = Some(Sensed::Piece(p));
                }
            }
            scan
        })
    }

    fn arb_face() -> impl Strategy<Value = ClockFace> {
        (
            0u8..=9,
            0u8..60,
            0u8..60,
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(
                |(hours, minutes, seconds, flag_fallen, time_per_move, flag_shown)| ClockFace {
                    hours,
                    minutes,
                    seconds,
                    flag_fallen,
                    time_per_move,
                    flag_shown,
                },
            )
    }

    fn arb_report() -> impl Strategy<Value = ClockReport> {
        (arb_face(), arb_face(), 0u8..0x40).prop_map(|(right, left, s)| ClockReport {
            right,
            left,
            status: ClockStatus::from_byte(s),
        })
    }

    /// Checks that a well-formed frame yields `event` on a decoder in a
    /// suitable state: the decoder invented nothing.
    fn assert_producible(event: &BoardEvent, config: Config) {
        let mut d = DgtDecoder::new(config);
        let mut frame = Vec::new();
        match event {
            BoardEvent::Board(scan) => {
                let codes = scan_codes(scan).expect("DGT scans identify every piece");
                encode_dump(&codes, &mut frame);
            }
            BoardEvent::Lift(sq) => encode_field_update(*sq, PieceCode::Empty, &mut frame),
            BoardEvent::Place(sq, p) => {
                let p = p.expect("DGT places carry the piece");
                encode_field_update(*sq, PieceCode::Piece(p), &mut frame);
            }
            BoardEvent::Clock(w, b) => {
                assert!(*w <= MAX_CLOCK_SECS && *b <= MAX_CLOCK_SECS);
                let (left, right) = if config.white_on_left {
                    (*w, *b)
                } else {
                    (*b, *w)
                };
                let r = ClockReport {
                    left: ClockFace::from_secs(left),
                    right: ClockFace::from_secs(right),
                    status: ClockStatus {
                        running: true,
                        ..ClockStatus::default()
                    },
                };
                encode_clock_report(&r, &mut frame);
            }
            // Need two reports; any colour can press or flag.
            BoardEvent::Press(_) | BoardEvent::Flag(_) => return,
            other => panic!("a DGT board cannot report {other:?}"),
        }
        let out = decode(&mut d, &frame);
        assert!(
            out.contains(&Decoded::Event(event.clone())),
            "{event:?} from {out:?}"
        );
    }

    proptest! {
        #[test]
        fn random_bytes_never_panic_and_invent_nothing(
            bytes in proptest::collection::vec(any::<u8>(), 0..600),
            white_on_left in any::<bool>(),
        ) {
            let config = Config { white_on_left };
            let mut d = DgtDecoder::new(config);
            let out = decode(&mut d, &bytes);
            prop_assert!(d.pending() <= MAX_FRAME);
            for item in &out {
                if let Decoded::Event(e) = item {
                    assert_producible(e, config);
                }
            }
        }

        #[test]
        fn biased_bytes_never_panic(
            // Mostly ids and small values, so that frames actually start.
            bytes in proptest::collection::vec(
                prop_oneof![
                    Just(0x86u8), Just(0x8E), Just(0x8D), Just(0x00), Just(0x05),
                    Just(0x0A), Just(0x43), 0u8..16, any::<u8>()
                ],
                0..800,
            ),
        ) {
            let mut d = DgtDecoder::default();
            let out = decode(&mut d, &bytes);
            for item in &out {
                if let Decoded::Event(e) = item {
                    assert_producible(e, Config::default());
                }
            }
        }

        #[test]
        fn chunking_does_not_matter(
            bytes in proptest::collection::vec(any::<u8>(), 0..300),
            cut in any::<prop::sample::Index>(),
        ) {
            let whole = decode(&mut DgtDecoder::default(), &bytes);
            let cut = cut.index(bytes.len() + 1);
            let mut d = DgtDecoder::default();
            let mut split = decode(&mut d, &bytes[..cut]);
            split.extend(decode(&mut d, &bytes[cut..]));
            // Garbage runs may be counted in two parts; compare the rest.
            let strip = |v: Vec<Decoded>| -> Vec<Decoded> {
                v.into_iter().filter(|d| !matches!(d, Decoded::Error(DecodeError::Garbage { .. }))).collect()
            };
            prop_assert_eq!(strip(whole), strip(split));
        }

        #[test]
        fn dump_round_trip(scan in arb_scan(), garbage in proptest::collection::vec(any::<u8>(), 0..40)) {
            let mut bytes = garbage;
            encode_dump(&scan_codes(&scan).unwrap(), &mut bytes);
            let mut d = DgtDecoder::default();
            let out = decode(&mut d, &bytes);
            prop_assert_eq!(out.last(), Some(&Decoded::Event(BoardEvent::Board(Box::new(scan.clone())))));
            prop_assert_eq!(d.board(), Some(&scan));
        }

        #[test]
        fn field_updates_track_the_board(
            scan in arb_scan(),
            updates in proptest::collection::vec((0usize..64, 0u8..=12), 0..40),
        ) {
            let mut bytes = Vec::new();
            encode_dump(&scan_codes(&scan).unwrap(), &mut bytes);
            let mut want = scan.clone();
            for (field, code) in &updates {
                let sq = square_from_a8(*field);
                let pc = piece_code(*code).unwrap();
                encode_field_update(sq, pc, &mut bytes);
                want.0[sq.to_usize()] = match pc {
                    PieceCode::Piece(p) => Some(Sensed::Piece(p)),
                    _ => None,
                };
            }
            let mut d = DgtDecoder::default();
            let out = decode(&mut d, &bytes);
            prop_assert_eq!(d.board(), Some(&want));
            // Replaying the events on the dump gives the same board.
            let mut replay = Scan::empty();
            for item in out {
                match item {
                    Decoded::Event(BoardEvent::Board(s)) => replay = *s,
                    Decoded::Event(BoardEvent::Lift(sq)) => {
                        prop_assert!(replay.0[sq.to_usize()].is_some());
                        replay.0[sq.to_usize()] = None;
                    }
                    Decoded::Event(BoardEvent::Place(sq, p)) => {
                        prop_assert!(replay.0[sq.to_usize()].is_none());
                        replay.0[sq.to_usize()] = p.map(Sensed::Piece);
                    }
                    other => prop_assert!(false, "unexpected {:?}", other),
                }
            }
            prop_assert_eq!(replay, want);
        }

        #[test]
        fn dumps_survive_garbage_between_them(
            frames in proptest::collection::vec(
                (proptest::collection::vec(any::<u8>(), 0..30), arb_scan()),
                1..6,
            ),
        ) {
            let mut bytes = Vec::new();
            for (garbage, scan) in &frames {
                bytes.extend(garbage);
                encode_dump(&scan_codes(scan).unwrap(), &mut bytes);
            }
            let out = decode(&mut DgtDecoder::default(), &bytes);
            let boards: Vec<Scan> = out
                .into_iter()
                .filter_map(|d| match d {
                    Decoded::Event(BoardEvent::Board(s)) => Some(*s),
                    _ => None,
                })
                .collect();
            // Every dump comes out, in order (garbage could add a dump of
            // its own only by containing a whole well-formed one).
            let mut it = boards.iter();
            for (_, scan) in &frames {
                prop_assert!(it.any(|b| b == scan));
            }
        }

        #[test]
        fn clock_round_trip(report in arb_report()) {
            let mut bytes = Vec::new();
            encode_clock_report(&report, &mut bytes);
            let out = decode(&mut DgtDecoder::default(), &bytes);
            let all_zero = bytes[3..].iter().all(|&b| b == 0);
            if all_zero {
                prop_assert_eq!(&out[..], &[Decoded::Dgt(Message::BlankClockReport)]);
            } else {
                prop_assert_eq!(&out[0], &Decoded::Dgt(Message::ClockReport(report)));
                if !report.status.no_clock {
                    prop_assert_eq!(
                        out.last(),
                        Some(&Decoded::Event(BoardEvent::Clock(report.left.secs(), report.right.secs())))
                    );
                }
            }
        }

        #[test]
        fn ack_round_trip(ack in any::<[u8; 4]>()) {
            let mut bytes = Vec::new();
            encode_clock_ack(&ClockAck(ack), &mut bytes);
            let out = decode(&mut DgtDecoder::default(), &bytes);
            prop_assert_eq!(&out[..], &[Decoded::Dgt(Message::ClockAck(ClockAck(ack)))]);
        }

        #[test]
        fn host_parser_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
            let mut p = HostParser::new();
            let mut out = Vec::new();
            p.feed(&bytes, &mut out);
            prop_assert!(p.pending() <= 2 + 255);
        }

        #[test]
        fn ee_parser_never_panics(bytes in proptest::collection::vec(0u8..0x80, 0..300)) {
            let recs = parse_ee_moves(&bytes);
            prop_assert!(recs.len() <= bytes.len());
        }
    }
}
