//! A virtual Millennium ChessLink: status reports by the report mode the
//! host chose, and answers to status, version, register and LED commands.

use super::{
    Emulator,
    plan::{Action, Squares, piece_of, rotate_squares, start_squares},
};
use crate::{
    event::{Millis, Scan, Sensed},
    protocol::millennium::{
        Command, HostParser, Message, REG_REPORT_MODE, encode_reply, encode_status,
    },
};

/// Firmware version the virtual board reports.
pub const VERSION: (u8, u8) = (0x01, 0x02);

/// The virtual ChessLink.
#[derive(Debug)]
pub struct MillenniumBoard {
    squares: Squares,
    /// E2ROM registers; they keep their values across power cycles.
    registers: [u8; 256],
    /// The host has said something since power-up: automatic reports go
    /// to someone.
    listening: bool,
    ready: bool,
    parser: HostParser,
    commands: Vec<Command>,
    errors: Vec<crate::protocol::Decoded>,
    /// The last status sent, to report changes only.
    last_sent: Option<Scan>,
}

impl MillenniumBoard {
    /// A board in the start position, reporting after every scan (the
    /// factory setting).
    pub fn new() -> MillenniumBoard {
        MillenniumBoard {
            squares: start_squares(),
            registers: [0; 256],
            listening: false,
            ready: false,
            // Lenient on parity: a host may drive the line 7-O-1 (bit 7
            // clear on a pseudo-terminal) or 8N1 with parity bits.
            parser: HostParser::new(false),
            commands: Vec::new(),
            errors: Vec::new(),
            last_sent: None,
        }
    }

    /// The same board set up turned round: White's pieces on the side it
    /// numbers a8–h8.
    pub fn turned_round() -> MillenniumBoard {
        MillenniumBoard {
            squares: rotate_squares(&start_squares()),
            ..MillenniumBoard::new()
        }
    }

    fn scan(&self) -> Scan {
        let mut scan = Scan::empty();
        for (i, c) in self.squares.iter().enumerate() {
            scan.0[i] = piece_of(*c).map(Sensed::Piece);
        }
        scan
    }

    fn status(&mut self, out: &mut Vec<u8>) {
        let scan = self.scan();
        // Every square holds an identified piece, so this cannot fail.
        if encode_status(&scan, true, out).is_ok() {
            self.last_sent = Some(scan);
        }
    }

    fn command(&mut self, c: Command, out: &mut Vec<u8>) {
        match c {
            Command::Status => {
                self.status(out);
                self.ready = true;
            }
            Command::Version => encode_reply(
                &Message::Version {
                    major: VERSION.0,
                    minor: VERSION.1,
                },
                true,
                out,
            ),
            Command::LedsOff => encode_reply(&Message::LedsOffAck, true, out),
            Command::Leds { .. } => encode_reply(&Message::LedsAck, true, out),
            Command::Write { address, value } => {
                self.registers[usize::from(address)] = value;
                encode_reply(&Message::Written { address, value }, true, out);
            }
            Command::Read { address } => {
                let value = self.registers[usize::from(address)];
                encode_reply(&Message::Read { address, value }, true, out);
            }
            // A hardware reset answers nothing and forgets the session.
            Command::Reset => self.power_up(0),
        }
    }

    fn reports(&self) -> bool {
        // Register 2: 1 means never; every other mode reports changes (the
        // plan already merged the changes of each scan period).
        self.listening && self.registers[usize::from(REG_REPORT_MODE)] != 1
    }
}

impl Default for MillenniumBoard {
    fn default() -> Self {
        MillenniumBoard::new()
    }
}

impl Emulator for MillenniumBoard {
    fn step(&mut self, _at: Millis, action: &Action, out: &mut Vec<u8>) {
        let changed = match action {
            Action::Set(sq, c) => {
                self.squares[sq.to_usize()] = *c;
                true
            }
            Action::Scan(next) => {
                self.squares = **next;
                true
            }
            _ => false,
        };
        if changed && self.reports() && self.last_sent.as_ref() != Some(&self.scan()) {
            self.status(out);
        }
    }

    fn host(&mut self, _at: Millis, bytes: &[u8], out: &mut Vec<u8>) {
        let mut commands = std::mem::take(&mut self.commands);
        self.errors.clear();
        self.parser.feed(bytes, &mut commands, &mut self.errors);
        if !commands.is_empty() {
            self.listening = true;
        }
        for c in commands.drain(..) {
            self.command(c, out);
        }
        self.commands = commands;
    }

    fn ready(&self) -> bool {
        self.ready
    }

    fn power_up(&mut self, _at: Millis) {
        self.listening = false;
        self.ready = false;
        self.last_sent = None;
        self.parser = HostParser::new(false);
    }
}

#[cfg(test)]
mod tests {
    use shakmaty::Square;

    use super::*;
    use crate::protocol::{Decoded, Decoder, millennium::MillenniumDecoder};
    use crate::virtual_board::plan::Content;

    fn answer(board: &mut MillenniumBoard, cmds: &[Command]) -> Vec<Decoded> {
        let mut host = Vec::new();
        for c in cmds {
            c.encode(true, &mut host);
        }
        let mut bytes = Vec::new();
        board.host(0, &host, &mut bytes);
        let mut out = Vec::new();
        MillenniumDecoder::default().feed(&bytes, &mut out);
        out
    }

    #[test]
    fn reports_changes_once_a_host_listens() {
        let mut board = MillenniumBoard::new();
        let mut bytes = Vec::new();
        board.step(0, &Action::Set(Square::E2, None), &mut bytes);
        assert!(bytes.is_empty(), "nobody listens yet");
        let out = answer(&mut board, &millennium_startup());
        assert!(matches!(
            out[0],
            Decoded::Millennium(Message::Written {
                address: 2,
                value: 3
            })
        ));
        assert!(matches!(
            out[1],
            Decoded::Event(crate::BoardEvent::Board(_))
        ));
        assert!(matches!(
            out[2],
            Decoded::Millennium(Message::Version { .. })
        ));
        assert!(board.ready());
        let pawn = Some(Content::Piece(shakmaty::Color::White.pawn()));
        board.step(10, &Action::Set(Square::E4, pawn), &mut bytes);
        assert_eq!(bytes.len(), crate::protocol::millennium::STATUS_LEN);
        // Nothing changed: nothing sent.
        bytes.clear();
        board.step(20, &Action::Set(Square::E4, pawn), &mut bytes);
        assert!(bytes.is_empty());
    }

    fn millennium_startup() -> Vec<Command> {
        crate::protocol::millennium::startup(crate::protocol::millennium::ReportMode::OnChange)
    }
}
