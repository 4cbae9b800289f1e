//! A virtual DGT e-board with its clock: field updates in update mode,
//! BWTIME clock reports, answers to the host's commands and an EEPROM log.

use shakmaty::{Color, Square};

use super::{
    Emulator,
    plan::{Action, Content, Squares, rotate_squares, start_squares},
};
use crate::{
    event::{Millis, Seconds},
    protocol::{
        a8_index,
        dgt::{
            self, ClockAck, ClockCommand, ClockFace, ClockReport, ClockStatus, Command, HostParser,
            PieceCode, id,
        },
        square_from_a8,
    },
};

/// Firmware version the virtual board reports.
pub const VERSION: (u8, u8) = (1, 8);

/// Serial number the virtual board reports.
pub const SERIAL: &str = "90001";

/// What the board sends on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Nothing (power-up, or after a reset): it only answers requests.
    Idle,
    /// Field updates.
    Board,
    /// Field updates and clock reports.
    Full,
}

#[derive(Debug, Clone)]
struct Clock {
    white: Seconds,
    black: Seconds,
    /// White pressed last: his side is down, the right-hand one up (White
    /// sits on the clock's left).
    right_lever_high: bool,
    running: bool,
    flagged: [bool; 2],
}

/// The virtual DGT board.
#[derive(Debug)]
pub struct DgtBoard {
    squares: Squares,
    mode: Mode,
    ready: bool,
    parser: HostParser,
    commands: Vec<Command>,
    clock: Option<Clock>,
    /// The EEPROM log, oldest first.
    ee: Vec<u8>,
    last_ee: Option<Millis>,
    /// A lever press not logged yet: the board logs the time the presser's
    /// display shows, which the script gives just after the press.
    press_to_log: Option<Color>,
    /// When the clock was last pressed.
    last_press_at: Option<Millis>,
    /// The start position was marked in the log, and at most two pieces
    /// have left it since (the firmware's hysteresis).
    begin_marked: bool,
    /// The start position as the board numbers its squares: turned round
    /// when it is set up the other way.
    start: Squares,
    /// Its log mark: connector on White's left, or on his right.
    begin_mark: u8,
    /// The square of the log's last record, if that is a square change: a
    /// square that changes again overwrites it, as the firmware does.
    last_field: Option<Square>,
    /// Powered by its cable: unplugged, it is off.
    cable_powered: bool,
    /// Off: pieces move on it, it logs nothing.
    dark: bool,
}

/// The room the EEPROM log has, its end marker excluded.
const EE_CAPACITY: usize = 0x1F00 - 1;

/// Presses closer to the one before than this are not logged.
pub const FAST_PRESS_MS: Millis = 1000;

const EE_NOP: u8 = 0x7F;
const EE_POWERUP: u8 = 0x6A;
const EE_EOF: u8 = 0x6B;
const EE_DOWNLOADED: u8 = 0x6E;
const EE_BEGINPOS: u8 = 0x6F;
const EE_BEGINPOS_ROT: u8 = 0x7A;

impl DgtBoard {
    /// A board in the start position. `clock` gives the times the clock
    /// was set to, or `None` when no clock is connected; `first_press` is
    /// the player who will press first (his lever starts up).
    pub fn new(clock: Option<(Seconds, Seconds)>, first_press: Option<Color>) -> DgtBoard {
        DgtBoard::set_up(clock, first_press, false)
    }

    /// The same board set up turned round: White's pieces on the side it
    /// numbers a8–h8 (the clock keeps its sides).
    pub fn turned_round(clock: Option<(Seconds, Seconds)>, first_press: Option<Color>) -> DgtBoard {
        DgtBoard::set_up(clock, first_press, true)
    }

    fn set_up(
        clock: Option<(Seconds, Seconds)>,
        first_press: Option<Color>,
        turned: bool,
    ) -> DgtBoard {
        let start = if turned {
            rotate_squares(&start_squares())
        } else {
            start_squares()
        };
        let mut board = DgtBoard {
            squares: start,
            mode: Mode::Idle,
            ready: false,
            parser: HostParser::new(),
            commands: Vec::new(),
            clock: clock.map(|(white, black)| Clock {
                white,
                black,
                right_lever_high: first_press == Some(Color::Black),
                running: false,
                flagged: [false; 2],
            }),
            ee: Vec::new(),
            last_ee: None,
            press_to_log: None,
            last_press_at: None,
            begin_marked: false,
            start,
            begin_mark: if turned { EE_BEGINPOS_ROT } else { EE_BEGINPOS },
            last_field: None,
            cable_powered: false,
            dark: false,
        };
        board.power_up(0);
        board
    }

    /// The same board powered by its cable, if `yes` (a USB board without
    /// a battery): unplugged, it is off, and its log has a gap.
    pub fn cable_powered(mut self, yes: bool) -> DgtBoard {
        self.cable_powered = yes;
        self
    }

    fn code(&self, sq: Square) -> u8 {
        match self.squares[sq.to_usize()] {
            None => dgt::EMPTY,
            Some(Content::Piece(p)) => dgt::code_of_piece(p),
            Some(Content::Token(t)) => dgt::code_of(PieceCode::Magic(t)),
        }
    }

    fn codes(&self) -> [u8; 64] {
        let mut codes = [0u8; 64];
        for (i, c) in codes.iter_mut().enumerate() {
            *c = self.code(square_from_a8(i));
        }
        codes
    }

    fn ee_push(&mut self, record: &[u8]) {
        if self.dark {
            return;
        }
        self.last_field = None;
        self.ee.extend_from_slice(record);
        if self.ee.len() > EE_CAPACITY {
            // A ring buffer: the newest records overwrite the oldest.
            let excess = self.ee.len() - EE_CAPACITY;
            self.ee.drain(..excess);
        }
    }

    /// Marks the start position in the log when it is set up, once until
    /// more than two pieces have left it.
    fn mark_begin(&mut self) {
        let away = self
            .squares
            .iter()
            .zip(&self.start)
            .filter(|(now, want)| want.is_some() && now != want)
            .count();
        if away > 2 {
            self.begin_marked = false;
        } else if away == 0 && self.squares == self.start && !self.begin_marked {
            self.begin_marked = true;
            self.ee_push(&[self.begin_mark]);
        }
    }

    /// Logs the press waiting to be logged, with the presser's time now.
    fn log_press(&mut self) {
        let (Some(color), Some(c)) = (self.press_to_log.take(), &self.clock) else {
            return;
        };
        let (left, secs) = match color {
            Color::White => (true, c.white),
            Color::Black => (false, c.black),
        };
        let f = ClockFace::from_secs(secs);
        let record = [
            0x60 | u8::from(left) << 4 | f.hours,
            ((f.minutes / 10) << 4) | (f.minutes % 10),
            ((f.seconds / 10) << 4) | (f.seconds % 10),
        ];
        self.ee_push(&record);
    }

    fn ee_field(&mut self, at: Millis, sq: Square) {
        if self.dark {
            return;
        }
        let quick = self.last_ee.is_some_and(|t| at.saturating_sub(t) < 250);
        self.last_ee = Some(at);
        let code = self.code(sq) & 0x0F;
        let tag = 0x40 | u8::from(quick) << 4 | code;
        let len = self.ee.len();
        // Not for result tokens: whether the firmware folds a token put
        // down and taken off again is not known, and folded, the result
        // would be gone from the log.
        let token = |c: u8| c & 0x0F >= 0x0D;
        if self.last_field == Some(sq) && len >= 2 && !token(code) && !token(self.ee[len - 2]) {
            self.ee[len - 2] = tag;
        } else {
            self.ee_push(&[tag, a8_index(sq) as u8]);
            self.last_field = Some(sq);
        }
    }

    fn set(&mut self, at: Millis, sq: Square, content: Option<Content>, out: &mut Vec<u8>) {
        if self.squares[sq.to_usize()] == content {
            return;
        }
        self.squares[sq.to_usize()] = content;
        self.ee_field(at, sq);
        self.mark_begin();
        if self.mode != Mode::Idle {
            let code = dgt::piece_code(self.code(sq)).unwrap_or(PieceCode::Empty);
            dgt::encode_field_update(sq, code, out);
        }
    }

    fn report(&self) -> ClockReport {
        match &self.clock {
            None => ClockReport {
                status: ClockStatus {
                    no_clock: true,
                    ..ClockStatus::default()
                },
                ..ClockReport::default()
            },
            Some(c) => {
                let face = |secs, flagged| ClockFace {
                    flag_fallen: flagged,
                    ..ClockFace::from_secs(secs)
                };
                ClockReport {
                    left: face(c.white, c.flagged[0]),
                    right: face(c.black, c.flagged[1]),
                    // The turn bits are always set, as on a clock whose
                    // lever shows who is to move; they also keep a report of
                    // two zero times from being all zero, which the codec
                    // rightly drops as a blank report.
                    status: ClockStatus {
                        running: c.running,
                        right_lever_high: c.right_lever_high,
                        right_to_move: c.right_lever_high,
                        left_to_move: !c.right_lever_high,
                        ..ClockStatus::default()
                    },
                }
            }
        }
    }

    fn send_clock(&self, out: &mut Vec<u8>) {
        if self.mode == Mode::Full && self.clock.is_some() {
            dgt::encode_clock_report(&self.report(), out);
        }
    }

    fn command(&mut self, at: Millis, c: Command, out: &mut Vec<u8>) {
        match c {
            Command::Reset => self.mode = Mode::Idle,
            Command::SendClock => dgt::encode_clock_report(&self.report(), out),
            Command::SendBoard => {
                dgt::encode_dump(&self.codes(), out);
                self.ready = true;
            }
            Command::Update | Command::UpdateNice => self.mode = Mode::Full,
            Command::UpdateBoard => self.mode = Mode::Board,
            Command::SerialNumber => dgt::encode_serial(SERIAL, out),
            Command::LongSerialNumber => {
                dgt::encode_frame(id::LONG_SERIALNR, format!("00000{SERIAL}").as_bytes(), out);
            }
            Command::BusAddress => dgt::encode_frame(id::BUSADRES, &[0x00, 0x01], out),
            Command::Trademark => {
                dgt::encode_frame(id::TRADEMARK, b"eboard virtual DGT board", out);
            }
            Command::Version => dgt::encode_version(VERSION.0, VERSION.1, out),
            Command::EeMoves => {
                self.log_press();
                let mut data = self.ee.clone();
                data.push(EE_EOF);
                dgt::encode_frame(id::EE_MOVES, &data, out);
                self.ee_push(&[EE_DOWNLOADED]);
                self.last_ee = Some(at);
            }
            // A clock answers only in update mode, and only if present.
            Command::Clock(cmd) if self.mode == Mode::Full && self.clock.is_some() => {
                let (code, detail) = match cmd {
                    ClockCommand::End => (ClockCommand::END, 0),
                    ClockCommand::Button => (ClockCommand::BUTTON, 0),
                    ClockCommand::Version => (ClockCommand::VERSION, 0x21),
                    ClockCommand::Beep { .. } => (ClockCommand::BEEP, 0),
                    ClockCommand::SetAndRun { .. } => (ClockCommand::SETNRUN, 0),
                    ClockCommand::Ascii { .. } => (ClockCommand::ASCII, 0),
                    ClockCommand::Other { cmd, .. } => (cmd & 0x7F, 0),
                };
                dgt::encode_clock_ack(&ClockAck([0x10, code, detail, 0]), out);
            }
            // Bus mode, LEDs, battery (a USB board has none), unknown bytes.
            _ => {}
        }
    }
}

impl Emulator for DgtBoard {
    fn step(&mut self, at: Millis, action: &Action, out: &mut Vec<u8>) {
        if !matches!(action, Action::Clock(..)) {
            self.log_press();
        }
        match action {
            Action::Set(sq, c) => self.set(at, *sq, *c, out),
            Action::Scan(next) => {
                // Several squares changed at once (a script's `board` line,
                // a set-up): reported emptied squares first, as the codecs
                // report a scan, each group in the board's a8-first order.
                // A real sweep is at most a few changes of one move; the
                // artefacts of one move's sweep are made by the plan.
                for emptied in [true, false] {
                    for i in 0..64 {
                        let sq = square_from_a8(i);
                        let new = next[sq.to_usize()];
                        if (new.is_none()) == emptied {
                            self.set(at, sq, new, out);
                        }
                    }
                }
            }
            Action::Press(color) => {
                let Some(c) = &mut self.clock else { return };
                let high = *color == Color::White;
                c.running = true;
                if c.right_lever_high == high {
                    return;
                }
                c.right_lever_high = high;
                // A press hard on the heels of the last one is not logged:
                // the firmware skips clock records when moves are fast.
                let fast = self
                    .last_press_at
                    .is_some_and(|t| at.saturating_sub(t) < FAST_PRESS_MS);
                self.last_press_at = Some(at);
                if !fast {
                    self.press_to_log = Some(*color);
                }
                self.send_clock(out);
            }
            Action::Clock(w, b) => {
                let Some(c) = &mut self.clock else { return };
                if (c.white, c.black) == (*w, *b) {
                    return;
                }
                (c.white, c.black) = (*w, *b);
                self.log_press();
                self.send_clock(out);
            }
            Action::Flag(color) => {
                let Some(c) = &mut self.clock else { return };
                c.flagged[color.fold_wb(0, 1)] = true;
                c.running = false;
                self.send_clock(out);
            }
            Action::ClockReset(color) => {
                let Some(c) = &mut self.clock else { return };
                c.right_lever_high = *color == Color::Black;
                c.running = false;
                c.flagged = [false; 2];
                self.send_clock(out);
            }
            Action::Unplug | Action::Replug | Action::OffWire(_) => {}
        }
    }

    fn host(&mut self, at: Millis, bytes: &[u8], out: &mut Vec<u8>) {
        let mut commands = std::mem::take(&mut self.commands);
        self.parser.feed(bytes, &mut commands);
        for c in commands.drain(..) {
            self.command(at, c, out);
        }
        self.commands = commands;
    }

    fn ready(&self) -> bool {
        self.ready
    }

    fn unplugged(&mut self) {
        self.log_press();
        self.dark = self.cable_powered;
    }

    fn power_up(&mut self, at: Millis) {
        // A press made while it was off is not in its log.
        self.log_press();
        self.dark = false;
        self.mode = Mode::Idle;
        self.ready = false;
        self.parser = HostParser::new();
        // What the firmware logs at power-on: a pause, the power-up mark,
        // one record per piece found, and the start-position mark.
        self.ee_push(&[EE_NOP, EE_NOP, EE_NOP, EE_POWERUP]);
        for i in 0..64 {
            let sq = square_from_a8(i);
            if self.squares[sq.to_usize()].is_some() {
                self.ee_field(at, sq);
            }
        }
        // The listing is one unit: the first change after it is a new record.
        self.last_field = None;
        self.begin_marked = false;
        self.mark_begin();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{
        Decoded, Decoder,
        dgt::{DgtDecoder, EeRecord, Message},
    };

    fn answer(board: &mut DgtBoard, cmds: &[Command]) -> Vec<Decoded> {
        let mut bytes = Vec::new();
        board.host(0, &Command::encode_all(cmds), &mut bytes);
        let mut out = Vec::new();
        DgtDecoder::default().feed(&bytes, &mut out);
        out
    }

    #[test]
    fn a_board_turned_round_numbers_the_start_position_the_other_way() {
        let mut board = DgtBoard::turned_round(None, None);
        let out = answer(&mut board, &[Command::SendBoard, Command::EeMoves]);
        let [
            Decoded::Event(crate::BoardEvent::Board(scan)),
            Decoded::Dgt(Message::EeMoves(log)),
        ] = &out[..]
        else {
            panic!("{out:?}");
        };
        // The dump is the start position once turned back, not as it comes.
        let start = crate::event::Scan::from_board(&shakmaty::Board::default(), true);
        assert_eq!(scan.rotated(), start);
        assert_ne!(**scan, start);
        let records = dgt::parse_ee_moves(log);
        assert!(records.contains(&EeRecord::BeginPosRot), "{records:?}");
        assert!(!records.contains(&EeRecord::BeginPos), "{records:?}");
    }

    #[test]
    fn a_square_that_changes_again_overwrites_its_record() {
        let mut board = DgtBoard::new(None, None);
        let log = |board: &mut DgtBoard| {
            let out = answer(board, &[Command::EeMoves]);
            let [Decoded::Dgt(Message::EeMoves(log))] = &out[..] else {
                panic!("{out:?}");
            };
            dgt::parse_ee_moves(log)
        };
        let before = log(&mut board).len();
        let mut bytes = Vec::new();
        let knight = Some(Content::Piece(Color::White.knight()));
        board.step(1000, &Action::Set(Square::G1, None), &mut bytes);
        board.step(1400, &Action::Set(Square::G1, knight), &mut bytes);
        board.step(2000, &Action::Set(Square::G1, None), &mut bytes);
        board.step(2400, &Action::Set(Square::F3, knight), &mut bytes);
        let records = log(&mut board);
        // After what the first read-out gave (its end marker is now the
        // read-out mark): one record for g1, emptied at last, one for f3.
        assert_eq!(
            &records[before..],
            &[
                EeRecord::Field {
                    square: Square::G1,
                    code: PieceCode::Empty,
                    quick: false
                },
                EeRecord::Field {
                    square: Square::F3,
                    code: PieceCode::Piece(Color::White.knight()),
                    quick: false
                },
                EeRecord::Eof,
            ][..],
            "{records:?}"
        );
    }

    #[test]
    fn answers_the_host() {
        let mut board = DgtBoard::new(Some((300, 300)), Some(Color::White));
        let out = answer(&mut board, &[Command::Version, Command::SerialNumber]);
        assert_eq!(
            out,
            vec![
                Decoded::Dgt(Message::Version { major: 1, minor: 8 }),
                Decoded::Dgt(Message::SerialNumber(SERIAL.to_owned())),
            ]
        );
        assert!(!board.ready());
        let out = answer(&mut board, &[Command::SendBoard]);
        assert!(matches!(
            out[..],
            [Decoded::Event(crate::BoardEvent::Board(_))]
        ));
        assert!(board.ready());
        // Idle: moves are not reported; in update mode they are.
        let mut bytes = Vec::new();
        board.step(1000, &Action::Set(Square::E2, None), &mut bytes);
        assert!(bytes.is_empty());
        answer(&mut board, &[Command::UpdateNice]);
        let pawn = Some(Content::Piece(Color::White.pawn()));
        board.step(1020, &Action::Set(Square::E4, pawn), &mut bytes);
        board.step(1300, &Action::Press(Color::White), &mut bytes);
        assert!(!bytes.is_empty());
        // A clock command is acknowledged in update mode.
        let out = answer(
            &mut board,
            &[Command::Clock(ClockCommand::Beep { units: 2 })],
        );
        assert!(
            matches!(&out[..], [Decoded::Dgt(Message::ClockAck(a))] if a.command() == Some(ClockCommand::BEEP)),
            "{out:?}"
        );
        // The log holds the power-up, the start position and the move.
        let out = answer(&mut board, &[Command::EeMoves]);
        let [Decoded::Dgt(Message::EeMoves(log))] = &out[..] else {
            panic!("{out:?}");
        };
        let records = dgt::parse_ee_moves(log);
        assert!(records.contains(&EeRecord::PowerUp));
        assert!(records.contains(&EeRecord::BeginPos));
        assert!(records.contains(&EeRecord::Field {
            square: Square::E2,
            code: PieceCode::Empty,
            quick: false
        }));
        assert!(records.contains(&EeRecord::Clock {
            left: true,
            secs: 300
        }));
        assert_eq!(records.last(), Some(&EeRecord::Eof));
    }
}
