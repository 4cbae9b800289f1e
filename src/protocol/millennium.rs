//! Millennium ChessLink (Exclusive, Performance, eONE): 38400 baud 7-O-1.
//!
//! Every message in both directions is printable ASCII: a type letter,
//! some data characters, and a block check of two hex digits that is the
//! XOR of all preceding characters. The host sends upper-case letters, the
//! board answers with the same letter in lower case. The board's status
//! reply `s` carries 64 piece letters, so this board is read by full scans:
//! [`MillenniumDecoder`] turns each changed scan into `Lift`/`Place` events
//! and a `Board` snapshot.
//!
//! Ports are often opened 8N1, in which case the parity bit arrives as bit
//! 7 of each byte. The decoder always strips it and can check it
//! ([`Config::check_parity`]). Automatic reports may arrive between a
//! command and its reply, so replies are matched by letter, never by order.
//! Byte tables: `board-protocols/millennium.md`.

use shakmaty::{Piece, Square};

use super::{DecodeError, Decoded, Decoder, SkipCounter, diff_scans, square_from_a8};
use crate::event::{BoardEvent, Scan, Sensed};

/// What the decoder does beyond framing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Reject bytes whose eight bits do not have odd parity. Only right
    /// when the port was opened with 8 data bits, so that bit 7 is the
    /// parity bit; a port opened 7-O-1 hands over bytes with bit 7 clear.
    pub check_parity: bool,
    /// Report each changed scan also as `Lift`/`Place` events (the
    /// snapshot is always reported).
    pub diffs: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            check_parity: false,
            diffs: true,
        }
    }
}

/// A Millennium reply that is not a board event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Message {
    /// A status identical to the previous one: nothing moved, but the board
    /// is alive (automatic reports repeat the scan many times a second).
    SameStatus,
    /// Firmware version.
    Version {
        /// First byte.
        major: u8,
        /// Second byte.
        minor: u8,
    },
    /// The LED pattern was accepted.
    LedsAck,
    /// All LEDs were switched off.
    LedsOffAck,
    /// An E2ROM register was written.
    Written {
        /// Register.
        address: u8,
        /// Value now held.
        value: u8,
    },
    /// An E2ROM register was read.
    Read {
        /// Register.
        address: u8,
        /// Value held.
        value: u8,
    },
}

/// Why a board state cannot be written as a status reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// The square is occupied by an unidentified piece, which this protocol
    /// cannot express.
    #[error("piece on {0} is not identified")]
    Unidentified(Square),
}

/// Length of a status reply: `s`, 64 squares, two check digits.
pub const STATUS_LEN: usize = 67;

/// Length of an LED command: `L`, slot time, 81 patterns, check.
pub const LEDS_LEN: usize = 1 + 2 + 81 * 2 + 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Hex,
    Piece,
}

/// Total length and body class of a board-to-host message type.
fn reply_spec(letter: u8) -> Option<(usize, Class)> {
    Some(match letter {
        b's' => (STATUS_LEN, Class::Piece),
        b'v' | b'w' | b'r' => (7, Class::Hex),
        b'l' | b'x' => (3, Class::Hex),
        _ => return None,
    })
}

/// Total length and body class of a host-to-board command type.
fn command_spec(letter: u8) -> Option<(usize, Class)> {
    Some(match letter {
        b'S' | b'V' | b'X' | b'T' => (3, Class::Hex),
        b'W' => (7, Class::Hex),
        b'R' => (5, Class::Hex),
        b'L' => (LEDS_LEN, Class::Hex),
        _ => return None,
    })
}

fn is_hex(c: u8) -> bool {
    c.is_ascii_hexdigit()
}

fn is_piece_char(c: u8) -> bool {
    c == b'.'
        || matches!(
            c,
            b'K' | b'Q' | b'R' | b'N' | b'B' | b'P' | b'k' | b'q' | b'r' | b'n' | b'b' | b'p'
        )
}

fn hex_val(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        b'A'..=b'F' => c - b'A' + 10,
        _ => 0,
    }
}

fn hex_byte(s: &[u8]) -> u8 {
    hex_val(s[0]) << 4 | hex_val(s[1])
}

const HEX: &[u8; 16] = b"0123456789ABCDEF";

/// The block check of `chars`: their XOR.
pub fn block_check(chars: &[u8]) -> u8 {
    chars.iter().fold(0, |acc, c| acc ^ (c & 0x7F))
}

/// Sets bit 7 of `c` so that the byte has odd parity, as a 7-O-1 line
/// sends it when the port is driven as 8N1.
pub fn with_odd_parity(c: u8) -> u8 {
    let c = c & 0x7F;
    if c.count_ones().is_multiple_of(2) {
        c | 0x80
    } else {
        c
    }
}

/// What the framer found.
enum Framed<'a> {
    Frame(&'a [u8]),
    Error(DecodeError),
}

/// Splits a 7-bit ASCII stream into checked frames. After any failure it
/// drops one byte and looks again from the next one, so that a frame that
/// began inside a false start is still found.
#[derive(Debug, Clone)]
struct Framer {
    spec: fn(u8) -> Option<(usize, Class)>,
    check_parity: bool,
    buf: Vec<u8>,
    skipped: SkipCounter,
}

impl Framer {
    fn new(spec: fn(u8) -> Option<(usize, Class)>, check_parity: bool) -> Framer {
        Framer {
            spec,
            check_parity,
            buf: Vec::with_capacity(LEDS_LEN),
            skipped: SkipCounter::default(),
        }
    }

    fn feed(
        &mut self,
        bytes: &[u8],
        out: &mut Vec<Decoded>,
        f: &mut dyn FnMut(Framed<'_>, &mut Vec<Decoded>),
    ) {
        for &b in bytes {
            if self.check_parity && b.count_ones().is_multiple_of(2) {
                // A corrupt byte: whatever it belonged to is lost.
                self.skipped.add(self.buf.len());
                self.buf.clear();
                self.skipped.flush(out);
                f(Framed::Error(DecodeError::Parity { byte: b }), out);
                continue;
            }
            self.buf.push(b & 0x7F);
            // Only the new character needs checking, unless we slide.
            let mut from = self.buf.len() - 1;
            loop {
                match self.check(from) {
                    Check::NeedMore => break,
                    Check::Done => {
                        self.skipped.flush(out);
                        f(Framed::Frame(&self.buf), out);
                        self.buf.clear();
                        break;
                    }
                    Check::Bad(err) => {
                        if let Some(err) = err {
                            self.skipped.flush(out);
                            f(Framed::Error(err), out);
                        }
                        self.buf.remove(0);
                        self.skipped.add(1);
                        if self.buf.is_empty() {
                            break;
                        }
                        from = 0;
                    }
                }
            }
        }
        self.skipped.flush(out);
    }

    /// Checks the buffer from index `from` on.
    fn check(&self, from: usize) -> Check {
        let Some((len, class)) = (self.spec)(self.buf[0]) else {
            return Check::Bad(None);
        };
        let body_end = len - 2;
        for (i, &c) in self.buf.iter().enumerate().skip(from.max(1)) {
            let ok = if i < body_end {
                match class {
                    Class::Hex => is_hex(c),
                    Class::Piece => is_piece_char(c),
                }
            } else {
                is_hex(c)
            };
            if !ok {
                return Check::Bad(None);
            }
        }
        if self.buf.len() < len {
            return Check::NeedMore;
        }
        let computed = block_check(&self.buf[..body_end]);
        let found = hex_byte(&self.buf[body_end..]);
        if computed == found {
            Check::Done
        } else {
            Check::Bad(Some(DecodeError::Checksum {
                kind: self.buf[0],
                found,
                computed,
            }))
        }
    }
}

enum Check {
    NeedMore,
    Done,
    Bad(Option<DecodeError>),
}

/// Streaming decoder of board-to-host ChessLink messages.
#[derive(Debug, Clone)]
pub struct MillenniumDecoder {
    config: Config,
    framer: Framer,
    scan: Option<Scan>,
}

impl MillenniumDecoder {
    /// A decoder with this configuration.
    pub fn new(config: Config) -> MillenniumDecoder {
        MillenniumDecoder {
            config,
            framer: Framer::new(reply_spec, config.check_parity),
            scan: None,
        }
    }

    /// The configuration in use.
    pub fn config(&self) -> Config {
        self.config
    }
}

impl Default for MillenniumDecoder {
    fn default() -> Self {
        MillenniumDecoder::new(Config::default())
    }
}

/// Reads the 64 square letters of a status reply (a8 first).
pub fn parse_status(chars: &[u8]) -> Option<Scan> {
    if chars.len() != 64 {
        return None;
    }
    let mut scan = Scan::empty();
    for (i, &c) in chars.iter().enumerate() {
        if c == b'.' {
            continue;
        }
        let p = Piece::from_char(char::from(c))?;
        scan.0[square_from_a8(i).to_usize()] = Some(Sensed::Piece(p));
    }
    Some(scan)
}

impl Decoder for MillenniumDecoder {
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<Decoded>) {
        let diffs = self.config.diffs;
        let scan = &mut self.scan;
        self.framer.feed(bytes, out, &mut |framed, out| {
            let frame = match framed {
                Framed::Error(e) => return out.push(Decoded::Error(e)),
                Framed::Frame(frame) => frame,
            };
            let body = &frame[1..frame.len() - 2];
            let msg = match frame[0] {
                b's' => {
                    // The framer let only piece letters through.
                    let Some(new) = parse_status(body) else {
                        return;
                    };
                    match scan {
                        Some(old) if *old == new => Message::SameStatus,
                        _ => {
                            if let (true, Some(old)) = (diffs, scan.as_ref()) {
                                diff_scans(old, &new, out);
                            }
                            out.push(Decoded::Event(BoardEvent::Board(Box::new(new.clone()))));
                            *scan = Some(new);
                            return;
                        }
                    }
                }
                b'v' => Message::Version {
                    major: hex_byte(&body[0..2]),
                    minor: hex_byte(&body[2..4]),
                },
                b'l' => Message::LedsAck,
                b'x' => Message::LedsOffAck,
                b'w' => Message::Written {
                    address: hex_byte(&body[0..2]),
                    value: hex_byte(&body[2..4]),
                },
                _ => Message::Read {
                    address: hex_byte(&body[0..2]),
                    value: hex_byte(&body[2..4]),
                },
            };
            out.push(Decoded::Millennium(msg));
        });
    }

    fn reset(&mut self) {
        *self = MillenniumDecoder::new(self.config);
    }

    fn pending(&self) -> usize {
        self.framer.buf.len()
    }

    fn board(&self) -> Option<&Scan> {
        self.scan.as_ref()
    }
}

/// Appends `letter`, `body` and the block check, each with odd parity in
/// bit 7 if `parity` is set.
fn encode_message(letter: u8, body: &[u8], parity: bool, out: &mut Vec<u8>) {
    let start = out.len();
    out.push(letter);
    out.extend_from_slice(body);
    let chk = block_check(&out[start..]);
    out.push(HEX[usize::from(chk >> 4)]);
    out.push(HEX[usize::from(chk & 0x0F)]);
    if parity {
        for b in &mut out[start..] {
            *b = with_odd_parity(*b);
        }
    }
}

fn hex2(v: u8) -> [u8; 2] {
    [HEX[usize::from(v >> 4)], HEX[usize::from(v & 0x0F)]]
}

// ---------------------------------------------------------------------------
// Host side.

/// When the board sends its status without being asked (E2ROM register 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReportMode {
    /// After every scan (the factory setting).
    EveryScan,
    /// Never; the host polls with `S`.
    Off,
    /// At the interval held in register 3.
    Timed,
    /// When any square changed.
    OnChange,
    /// When a change held for this many scans (2..=5; clamped).
    Debounced(u8),
}

impl ReportMode {
    /// The register value.
    pub fn value(self) -> u8 {
        match self {
            ReportMode::EveryScan => 0,
            ReportMode::Off => 1,
            ReportMode::Timed => 2,
            ReportMode::OnChange => 3,
            ReportMode::Debounced(n) => 4 + (n.clamp(2, 5) - 2),
        }
    }
}

/// E2ROM register that selects automatic reports.
pub const REG_REPORT_MODE: u8 = 0x02;
/// E2ROM register holding the scan time, in 2.048 ms units.
pub const REG_SCAN_TIME: u8 = 0x01;

/// A host-to-board command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `S`: send the status.
    Status,
    /// `V`: send the version.
    Version,
    /// `X`: all LEDs off.
    LedsOff,
    /// `T`: hardware reset (about 3 s, no reply).
    Reset,
    /// `L`: LED patterns, one 8-slot on/off byte per LED (9 × 9 LEDs at the
    /// square corners).
    Leds {
        /// Slot time in 4.096 ms units.
        slot_time: u8,
        /// Patterns, LED 1 (a8 corner) first.
        patterns: Box<[u8; 81]>,
    },
    /// `W`: write an E2ROM register.
    Write {
        /// Register.
        address: u8,
        /// Value.
        value: u8,
    },
    /// `R`: read an E2ROM register.
    Read {
        /// Register.
        address: u8,
    },
}

impl Command {
    /// The command that selects an automatic report mode.
    pub fn report_mode(mode: ReportMode) -> Command {
        Command::Write {
            address: REG_REPORT_MODE,
            value: mode.value(),
        }
    }

    /// Appends the command, with odd parity in bit 7 if `parity` is set
    /// (for a port driven as 8N1).
    pub fn encode(&self, parity: bool, out: &mut Vec<u8>) {
        match self {
            Command::Status => encode_message(b'S', &[], parity, out),
            Command::Version => encode_message(b'V', &[], parity, out),
            Command::LedsOff => encode_message(b'X', &[], parity, out),
            Command::Reset => encode_message(b'T', &[], parity, out),
            Command::Leds {
                slot_time,
                patterns,
            } => {
                let mut body = Vec::with_capacity(LEDS_LEN - 3);
                body.extend(hex2(*slot_time));
                for p in patterns.iter() {
                    body.extend(hex2(*p));
                }
                encode_message(b'L', &body, parity, out);
            }
            Command::Write { address, value } => {
                let [a, b] = hex2(*address);
                let [c, d] = hex2(*value);
                encode_message(b'W', &[a, b, c, d], parity, out);
            }
            Command::Read { address } => encode_message(b'R', &hex2(*address), parity, out),
        }
    }
}

/// The commands a host sends to start a session: reports on every change
/// (the board then pushes a status whenever a square changes), then one
/// status request so that the first snapshot does not wait for a move,
/// and a version query.
pub fn startup(mode: ReportMode) -> Vec<Command> {
    vec![
        Command::report_mode(mode),
        Command::Status,
        Command::Version,
    ]
}

/// Board-side reader of host commands, for a virtual board.
#[derive(Debug, Clone)]
pub struct HostParser {
    framer: Framer,
}

impl HostParser {
    /// A parser; `check_parity` as in [`Config::check_parity`].
    pub fn new(check_parity: bool) -> HostParser {
        HostParser {
            framer: Framer::new(command_spec, check_parity),
        }
    }

    /// Parses `bytes`, appending commands to `cmds` and dropped-byte
    /// reports to `errors`.
    pub fn feed(&mut self, bytes: &[u8], cmds: &mut Vec<Command>, errors: &mut Vec<Decoded>) {
        self.framer.feed(bytes, errors, &mut |framed, errors| {
            let frame = match framed {
                Framed::Error(e) => return errors.push(Decoded::Error(e)),
                Framed::Frame(frame) => frame,
            };
            let body = &frame[1..frame.len() - 2];
            cmds.push(match frame[0] {
                b'S' => Command::Status,
                b'V' => Command::Version,
                b'X' => Command::LedsOff,
                b'T' => Command::Reset,
                b'W' => Command::Write {
                    address: hex_byte(&body[0..2]),
                    value: hex_byte(&body[2..4]),
                },
                b'R' => Command::Read {
                    address: hex_byte(&body[0..2]),
                },
                _ => {
                    let mut patterns = Box::new([0u8; 81]);
                    for (i, p) in patterns.iter_mut().enumerate() {
                        *p = hex_byte(&body[2 + 2 * i..4 + 2 * i]);
                    }
                    Command::Leds {
                        slot_time: hex_byte(&body[0..2]),
                        patterns,
                    }
                }
            });
        });
    }
}

// ---------------------------------------------------------------------------
// Board side: what a (virtual) board writes.

/// Appends a status reply for `scan`.
pub fn encode_status(scan: &Scan, parity: bool, out: &mut Vec<u8>) -> Result<(), EncodeError> {
    let mut body = [b'.'; 64];
    for (i, c) in body.iter_mut().enumerate() {
        let sq = square_from_a8(i);
        match scan.get(sq) {
            None => {}
            Some(Sensed::Piece(p)) => *c = p.char() as u8,
            Some(Sensed::Occupied) => return Err(EncodeError::Unidentified(sq)),
        }
    }
    encode_message(b's', &body, parity, out);
    Ok(())
}

/// Appends the reply a board gives for `msg` (`SameStatus` has no reply
/// of its own and writes nothing).
pub fn encode_reply(msg: &Message, parity: bool, out: &mut Vec<u8>) {
    match *msg {
        Message::SameStatus => {}
        Message::Version { major, minor } => {
            let [a, b] = hex2(major);
            let [c, d] = hex2(minor);
            encode_message(b'v', &[a, b, c, d], parity, out);
        }
        Message::LedsAck => encode_message(b'l', &[], parity, out),
        Message::LedsOffAck => encode_message(b'x', &[], parity, out),
        Message::Written { address, value } | Message::Read { address, value } => {
            let letter = if matches!(msg, Message::Written { .. }) {
                b'w'
            } else {
                b'r'
            };
            let [a, b] = hex2(address);
            let [c, d] = hex2(value);
            encode_message(letter, &[a, b, c, d], parity, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use shakmaty::{Color, Role};

    use super::*;

    fn decode(d: &mut MillenniumDecoder, bytes: &[u8]) -> Vec<Decoded> {
        let mut out = Vec::new();
        d.feed(bytes, &mut out);
        out
    }

    fn start_scan() -> Scan {
        Scan::from_board(&shakmaty::Board::default(), true)
    }

    /// The start position's status reply, written by hand. Its check is
    /// 0x73: the two back ranks cancel except for q^k^Q^K, which is zero
    /// too, and pawns and the 32 dots cancel in pairs, leaving 's'.
    fn start_status() -> Vec<u8> {
        let mut s = b"s".to_vec();
        s.extend(b"rnbqkbnr");
        s.extend(b"pppppppp");
        s.extend([b'.'; 32]);
        s.extend(b"PPPPPPPP");
        s.extend(b"RNBQKBNR");
        s.extend(b"73");
        s
    }

    /// After 1.e4: a pawn and a dot swap places, so the check is unchanged.
    fn e4_status() -> Vec<u8> {
        let mut s = start_status();
        s[1 + 32 + 4] = b'P'; // e4: rank 4 starts at index 32
        s[1 + 48 + 4] = b'.'; // e2
        s
    }

    #[test]
    fn status_and_changes() {
        let mut d = MillenniumDecoder::default();
        let out = decode(&mut d, &start_status());
        assert_eq!(
            out,
            vec![Decoded::Event(BoardEvent::Board(Box::new(start_scan())))]
        );
        let out = decode(&mut d, &start_status());
        assert_eq!(out, vec![Decoded::Millennium(Message::SameStatus)]);
        let wp = Piece {
            color: Color::White,
            role: Role::Pawn,
        };
        let mut after = start_scan();
        after.0[Square::E2.to_usize()] = None;
        after.0[Square::E4.to_usize()] = Some(Sensed::Piece(wp));
        let out = decode(&mut d, &e4_status());
        assert_eq!(
            out,
            vec![
                Decoded::Event(BoardEvent::Lift(Square::E2)),
                Decoded::Event(BoardEvent::Place(Square::E4, Some(wp))),
                Decoded::Event(BoardEvent::Board(Box::new(after.clone()))),
            ]
        );
        assert_eq!(d.board(), Some(&after));
    }

    #[test]
    fn snapshots_only_when_diffs_are_off() {
        let mut d = MillenniumDecoder::new(Config {
            diffs: false,
            ..Config::default()
        });
        decode(&mut d, &start_status());
        let out = decode(&mut d, &e4_status());
        assert_eq!(out.len(), 1);
        assert!(matches!(out[0], Decoded::Event(BoardEvent::Board(_))));
    }

    #[test]
    fn replies() {
        // v: 'v'^'0'^'1'^'0'^'2' = 0x75. x: 0x78. l: 0x6C.
        // w 02 03: 'w'^'0'^'2'^'0'^'3' = 0x76. r 02 03: 0x73.
        let mut d = MillenniumDecoder::default();
        let out = decode(&mut d, b"v010275x78l6Cw020376r020373");
        assert_eq!(
            out,
            vec![
                Decoded::Millennium(Message::Version { major: 1, minor: 2 }),
                Decoded::Millennium(Message::LedsOffAck),
                Decoded::Millennium(Message::LedsAck),
                Decoded::Millennium(Message::Written {
                    address: 2,
                    value: 3
                }),
                Decoded::Millennium(Message::Read {
                    address: 2,
                    value: 3
                }),
            ]
        );
    }

    #[test]
    fn parity_bit_is_stripped_and_optionally_checked() {
        // "x78" with odd parity: 'x' (four ones) gets bit 7, '7' and '8'
        // (five and three ones) do not.
        let sent = [0xF8, 0x37, 0x38];
        let ack = vec![Decoded::Millennium(Message::LedsOffAck)];
        assert_eq!(decode(&mut MillenniumDecoder::default(), &sent), ack);
        let mut checking = MillenniumDecoder::new(Config {
            check_parity: true,
            ..Config::default()
        });
        assert_eq!(decode(&mut checking, &sent), ack);
        // The same characters without their parity bit fail the check.
        let out = decode(&mut checking, b"x78");
        assert_eq!(out[0], Decoded::Error(DecodeError::Parity { byte: b'x' }));
        assert!(!out.contains(&ack[0]));
        let mut enc = Vec::new();
        encode_reply(&Message::LedsOffAck, true, &mut enc);
        assert_eq!(enc, sent);
    }

    #[test]
    fn bad_check_garbage_and_torn() {
        let mut d = MillenniumDecoder::default();
        let out = decode(&mut d, b"x79");
        assert_eq!(
            out[0],
            Decoded::Error(DecodeError::Checksum {
                kind: b'x',
                found: 0x79,
                computed: 0x78
            })
        );
        let out = decode(&mut d, b"zz\r\nx78");
        assert_eq!(
            out,
            vec![
                Decoded::Error(DecodeError::Garbage { bytes: 4 }),
                Decoded::Millennium(Message::LedsOffAck)
            ]
        );
        // A status cut off after 21 characters by a version reply.
        let mut bytes = start_status()[..21].to_vec();
        bytes.extend(b"v010275");
        let out = decode(&mut d, &bytes);
        assert_eq!(
            out,
            vec![
                Decoded::Error(DecodeError::Garbage { bytes: 21 }),
                Decoded::Millennium(Message::Version { major: 1, minor: 2 })
            ]
        );
        assert_eq!(d.board(), None);
    }

    #[test]
    fn report_between_command_and_reply() {
        // Replies are matched by letter: a status may come first.
        let mut bytes = start_status();
        bytes.extend(b"w020376");
        let out = decode(&mut MillenniumDecoder::default(), &bytes);
        assert!(matches!(out[0], Decoded::Event(BoardEvent::Board(_))));
        assert_eq!(
            out[1],
            Decoded::Millennium(Message::Written {
                address: 2,
                value: 3
            })
        );
    }

    #[test]
    fn host_commands() {
        let mut out = Vec::new();
        Command::Status.encode(false, &mut out);
        assert_eq!(out, b"S53");
        out.clear();
        // 'W'^'0'^'2'^'0'^'3' = 0x56.
        Command::report_mode(ReportMode::OnChange).encode(false, &mut out);
        assert_eq!(out, b"W020356");
        assert_eq!(ReportMode::EveryScan.value(), 0);
        assert_eq!(ReportMode::Off.value(), 1);
        assert_eq!(ReportMode::Debounced(2).value(), 4);
        assert_eq!(ReportMode::Debounced(5).value(), 7);
        assert_eq!(ReportMode::Debounced(9).value(), 7);
        out.clear();
        Command::Status.encode(true, &mut out);
        // 'S' (0x53), '5' (0x35) and '3' (0x33) have four ones each.
        assert_eq!(out, [0xD3, 0xB5, 0xB3]);
    }

    #[test]
    fn host_parser_round_trip() {
        let mut patterns = Box::new([0u8; 81]);
        for (i, p) in patterns.iter_mut().enumerate() {
            *p = (i * 37) as u8;
        }
        let cmds = vec![
            Command::report_mode(ReportMode::Debounced(3)),
            Command::Status,
            Command::Version,
            Command::Leds {
                slot_time: 0x20,
                patterns,
            },
            Command::LedsOff,
            Command::Read { address: 6 },
            Command::Reset,
        ];
        for parity in [false, true] {
            let mut bytes = Vec::new();
            for c in &cmds {
                c.encode(parity, &mut bytes);
            }
            let mut p = HostParser::new(parity);
            let (mut got, mut errors) = (Vec::new(), Vec::new());
            for chunk in bytes.chunks(5) {
                p.feed(chunk, &mut got, &mut errors);
            }
            assert_eq!(got, cmds);
            assert_eq!(errors, vec![]);
        }
        let mut startup_bytes = Vec::new();
        for c in startup(ReportMode::OnChange) {
            c.encode(false, &mut startup_bytes);
        }
        assert_eq!(startup_bytes, b"W020356S53V56");
    }

    #[test]
    fn occupied_squares_cannot_be_encoded() {
        let mut scan = Scan::empty();
        scan.0[Square::C3.to_usize()] = Some(Sensed::Occupied);
        assert_eq!(
            encode_status(&scan, false, &mut Vec::new()),
            Err(EncodeError::Unidentified(Square::C3))
        );
    }

    fn arb_scan() -> impl Strategy<Value = Scan> {
        proptest::collection::vec(proptest::option::of((any::<bool>(), 0usize..6)), 64).prop_map(
            |squares| {
                let roles = [
                    Role::Pawn,
                    Role::Knight,
                    Role::Bishop,
                    Role::Rook,
                    Role::Queen,
                    Role::King,
                ];
                let mut scan = Scan::empty();
                for (i, s) in squares.into_iter().enumerate() {
                    scan.0[i] = s.map(|(white, r)| {
                        Sensed::Piece(Piece {
                            color: Color::from_white(white),
                            role: roles[r],
                        })
                    });
                }
                scan
            },
        )
    }

    fn arb_reply() -> impl Strategy<Value = Message> {
        prop_oneof![
            (any::<u8>(), any::<u8>()).prop_map(|(major, minor)| Message::Version { major, minor }),
            Just(Message::LedsAck),
            Just(Message::LedsOffAck),
            (any::<u8>(), any::<u8>())
                .prop_map(|(address, value)| Message::Written { address, value }),
            (any::<u8>(), any::<u8>())
                .prop_map(|(address, value)| Message::Read { address, value }),
        ]
    }

    /// A well-formed status (or pair of them) yields `event`.
    fn assert_producible(event: &BoardEvent) {
        match event {
            BoardEvent::Board(scan) => {
                let mut bytes = Vec::new();
                encode_status(scan, false, &mut bytes).expect("statuses identify pieces");
                let out = decode(&mut MillenniumDecoder::default(), &bytes);
                assert_eq!(out, vec![Decoded::Event(event.clone())]);
            }
            BoardEvent::Lift(_) => {}
            BoardEvent::Place(_, p) => assert!(p.is_some(), "statuses identify pieces"),
            other => panic!("a Millennium board cannot report {other:?}"),
        }
    }

    // The characters a ChessLink stream is made of, to make random input
    // hit real frame starts often.
    const ALPHABET: &[u8] = b"svlxwr0123456789ABCDEF.KQRNBPkqrnbp";

    proptest! {
        #[test]
        fn random_bytes_never_panic_and_invent_nothing(
            bytes in proptest::collection::vec(any::<u8>(), 0..600),
            check_parity in any::<bool>(),
        ) {
            let mut d = MillenniumDecoder::new(Config { check_parity, diffs: true });
            let out = decode(&mut d, &bytes);
            prop_assert!(d.pending() < STATUS_LEN);
            for item in &out {
                if let Decoded::Event(e) = item {
                    assert_producible(e);
                }
            }
        }

        #[test]
        fn random_alphabet_never_panics(
            idx in proptest::collection::vec(0usize..ALPHABET.len(), 0..2000),
        ) {
            let bytes: Vec<u8> = idx.into_iter().map(|i| ALPHABET[i]).collect();
            let mut d = MillenniumDecoder::default();
            let out = decode(&mut d, &bytes);
            prop_assert!(d.pending() < STATUS_LEN);
            for item in &out {
                if let Decoded::Event(e) = item {
                    assert_producible(e);
                }
            }
        }

        #[test]
        fn status_round_trip(scan in arb_scan(), parity in any::<bool>()) {
            let mut bytes = Vec::new();
            encode_status(&scan, parity, &mut bytes).unwrap();
            let mut d = MillenniumDecoder::new(Config { check_parity: parity, diffs: true });
            let out = decode(&mut d, &bytes);
            prop_assert_eq!(out, vec![Decoded::Event(BoardEvent::Board(Box::new(scan.clone())))]);
        }

        #[test]
        fn frames_survive_garbage_and_chunking(
            frames in proptest::collection::vec(
                (proptest::collection::vec(any::<u8>(), 0..20), arb_reply()),
                1..8,
            ),
            chunk in 1usize..40,
        ) {
            let mut bytes = Vec::new();
            for (garbage, msg) in &frames {
                bytes.extend(garbage);
                // A line end closes any false start inside the garbage, as
                // no frame may contain one.
                bytes.push(b'\n');
                encode_reply(msg, false, &mut bytes);
            }
            let mut d = MillenniumDecoder::default();
            let mut out = Vec::new();
            for c in bytes.chunks(chunk) {
                d.feed(c, &mut out);
            }
            let got: Vec<Message> = out
                .into_iter()
                .filter_map(|d| match d {
                    Decoded::Millennium(m) => Some(m),
                    _ => None,
                })
                .collect();
            let mut it = got.iter();
            for (_, msg) in &frames {
                prop_assert!(it.any(|m| m == msg), "{:?} missing from {:?}", msg, got);
            }
        }

        #[test]
        fn host_parser_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
            let mut p = HostParser::new(false);
            let (mut cmds, mut errors) = (Vec::new(), Vec::new());
            p.feed(&bytes, &mut cmds, &mut errors);
        }
    }
}
