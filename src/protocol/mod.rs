//! Byte-level codecs for the board families eboard reads.
//!
//! Everything here is pure: byte slices go in, [`Decoded`] items come out.
//! No codec opens a port, sleeps or reads a clock; the transport that owns
//! the serial line stamps the events with their time and decides what to
//! send back. That keeps the codecs testable with hand-built frames and
//! fuzzable without hardware.
//!
//! One module per family:
//!
//! * [`dgt`]: DGT e-boards (binary, 9600 8N1), with their clock.
//! * [`millennium`]: Millennium ChessLink (ASCII, 38400 7-O-1).
//! * [`certabo`]: Certabo RFID boards and the Tabutronic Sentio, which
//!   speaks the same text protocol without piece identity.
//!
//! Every decoder keeps a model of the board so that it can turn field
//! updates and full scans into the spine's [`BoardEvent`]s: `Lift`, `Place`
//! (with the piece where the board identifies it), `Board` snapshots,
//! `Clock` and `Press`.

use shakmaty::Square;

use crate::event::{BoardEvent, Scan, Sensed};

pub mod certabo;
pub mod dgt;
pub mod millennium;

/// One item a decoder produced from the byte stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decoded {
    /// Something happened at the board or its clock.
    Event(BoardEvent),
    /// A DGT message the transport may need (version, serial number, clock
    /// acknowledgement, EEPROM log, result pieces, ...).
    Dgt(dgt::Message),
    /// A Millennium ChessLink reply that is not a board event.
    Millennium(millennium::Message),
    /// A Certabo / Sentio message that is not a board event.
    Certabo(certabo::Message),
    /// Bytes were dropped. The decoder has already resynchronised; this is
    /// reported so that a transport can count line noise and, on boards that
    /// allow it, ask for a fresh full scan.
    Error(DecodeError),
}

impl Decoded {
    /// The board event, if this is one.
    pub fn event(&self) -> Option<&BoardEvent> {
        match self {
            Decoded::Event(e) => Some(e),
            _ => None,
        }
    }
}

/// Why a decoder dropped bytes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// Bytes that cannot start any message were skipped.
    #[error("skipped {bytes} byte(s) that start no message")]
    Garbage {
        /// How many bytes were skipped.
        bytes: usize,
    },
    /// A message was cut off by the start of another one.
    #[error("message {kind:#04x} cut off after {got} of {expected} bytes")]
    Torn {
        /// The message's id byte or type letter.
        kind: u8,
        /// Bytes received before the cut.
        got: usize,
        /// Bytes the message should have had (0 when unknown).
        expected: usize,
    },
    /// A header announced a length the message cannot have.
    #[error("message {kind:#04x} announces length {len}")]
    BadLength {
        /// The message's id byte.
        kind: u8,
        /// The announced total length.
        len: usize,
    },
    /// A complete message carried a value outside its range.
    #[error("message {kind:#04x} has an invalid value {value:#04x} at offset {offset}")]
    BadValue {
        /// The message's id byte or type letter.
        kind: u8,
        /// Offset of the offending byte in the message.
        offset: usize,
        /// The offending byte.
        value: u8,
    },
    /// The block check of a message did not match its content.
    #[error("message {kind:#04x}: block check {found:#04x}, computed {computed:#04x}")]
    Checksum {
        /// The message's type letter.
        kind: u8,
        /// The check the message carried.
        found: u8,
        /// The check computed over its content.
        computed: u8,
    },
    /// A byte failed the serial parity check.
    #[error("parity error on byte {byte:#04x}")]
    Parity {
        /// The byte as received.
        byte: u8,
    },
    /// A text line grew past the longest frame the protocol has.
    #[error("line longer than {max} bytes dropped")]
    LineTooLong {
        /// The limit that was exceeded.
        max: usize,
    },
    /// A text frame could not be read.
    #[error("malformed frame: {reason}")]
    Malformed {
        /// What was wrong.
        reason: &'static str,
    },
}

/// A streaming decoder of one board protocol.
///
/// Feed it bytes as they arrive, in chunks of any size; a message split
/// across two calls is decoded when its last byte arrives. Decoders never
/// panic on any input, hold at most a bounded number of bytes, and resume
/// decoding at the next plausible message start after garbage.
pub trait Decoder {
    /// Decodes `bytes`, appending what they complete to `out`.
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<Decoded>);

    /// Forgets any partial message and the board model, as after a
    /// reconnect. Configuration is kept.
    fn reset(&mut self);

    /// Bytes held back as the start of an incomplete message.
    fn pending(&self) -> usize;

    /// The decoder's current model of the board, once it has one.
    fn board(&self) -> Option<&Scan>;
}

/// The square at `index` when squares are numbered a8, b8, ..., h8, a7,
/// ..., h1: the order every family here uses on the wire.
pub fn square_from_a8(index: usize) -> Square {
    // a8-first order is a1-first order with the ranks mirrored.
    Square::new((index as u32 & 63) ^ 56)
}

/// The a8-first wire index of `sq` (inverse of [`square_from_a8`]).
pub fn a8_index(sq: Square) -> usize {
    sq.to_usize() ^ 56
}

/// Appends the events that take the board from `old` to `new`: a `Lift` for
/// every square that lost its piece or changed it, then a `Place` for every
/// square that gained or changed one. Lifts come first because that is the
/// physical order of a capture or a move.
pub fn diff_scans(old: &Scan, new: &Scan, out: &mut Vec<Decoded>) {
    for i in 0..64 {
        let (a, b) = (old.0[i], new.0[i]);
        if a.is_some() && a != b {
            out.push(Decoded::Event(BoardEvent::Lift(Square::new(i as u32))));
        }
    }
    for i in 0..64 {
        let (a, b) = (old.0[i], new.0[i]);
        if let Some(s) = b
            && a != b
        {
            let piece = match s {
                Sensed::Piece(p) => Some(p),
                Sensed::Occupied => None,
            };
            out.push(Decoded::Event(BoardEvent::Place(
                Square::new(i as u32),
                piece,
            )));
        }
    }
}

/// Counts skipped bytes so that a run of garbage is reported once, not
/// byte by byte.
#[derive(Debug, Default, Clone)]
pub(crate) struct SkipCounter(usize);

impl SkipCounter {
    pub(crate) fn add(&mut self, n: usize) {
        self.0 += n;
    }

    /// Reports the skipped run, if any, and starts a new one.
    pub(crate) fn flush(&mut self, out: &mut Vec<Decoded>) {
        if self.0 > 0 {
            out.push(Decoded::Error(DecodeError::Garbage { bytes: self.0 }));
            self.0 = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a8_order() {
        assert_eq!(square_from_a8(0), Square::A8);
        assert_eq!(square_from_a8(7), Square::H8);
        assert_eq!(square_from_a8(8), Square::A7);
        assert_eq!(square_from_a8(63), Square::H1);
        for i in 0..64 {
            assert_eq!(a8_index(square_from_a8(i)), i);
        }
    }

    #[test]
    fn diff_lifts_before_places() {
        use shakmaty::{Color, Piece, Role};
        let wq = Piece {
            color: Color::White,
            role: Role::Queen,
        };
        let bp = Piece {
            color: Color::Black,
            role: Role::Pawn,
        };
        let mut old = Scan::empty();
        old.0[Square::C1.to_usize()] = Some(Sensed::Piece(wq));
        old.0[Square::C4.to_usize()] = Some(Sensed::Piece(bp));
        let mut new = Scan::empty();
        new.0[Square::C4.to_usize()] = Some(Sensed::Piece(wq));
        let mut out = Vec::new();
        diff_scans(&old, &new, &mut out);
        assert_eq!(
            out,
            vec![
                Decoded::Event(BoardEvent::Lift(Square::C1)),
                Decoded::Event(BoardEvent::Lift(Square::C4)),
                Decoded::Event(BoardEvent::Place(Square::C4, Some(wq))),
            ]
        );
    }
}
