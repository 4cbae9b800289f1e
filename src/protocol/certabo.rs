//! Certabo (RFID in every piece) and Tabutronic Sentio (occupancy only):
//! one text protocol, 38400 8N1.
//!
//! The board sends frames of decimal numbers: a `:`, numbers separated by
//! spaces, and a line end. A frame of 320 numbers is a Certabo scan: five
//! bytes of RFID tag per square, a8 first, zeros for an empty square. A
//! frame of 8 numbers is a Sentio scan: one byte per rank from rank 8 down,
//! the most significant bit being the a-file. Lines holding only `L` or `D`
//! tell which kind of LEDs the board has.
//!
//! A tag id says nothing by itself: which piece carries which tag is
//! learnt by [calibration](Calibration) from a known position. Until then,
//! and for tags it does not know, the decoder reports squares as occupied
//! without identity. Byte tables: `board-protocols/certabo.md`.

use std::collections::HashMap;

use shakmaty::{Board, Color, Piece, Role, Square};

use super::{DecodeError, Decoded, Decoder, SkipCounter, a8_index, diff_scans, square_from_a8};
use crate::event::{BoardEvent, Scan, Sensed};

/// The five bytes of an RFID tag; all zero means no tag.
pub type TagId = [u8; 5];

/// A Certabo scan: the tag on each square, a8 first.
pub type Tags = [TagId; 64];

/// Numbers in a Certabo (RFID) frame.
pub const RFID_NUMBERS: usize = 64 * 5;

/// Numbers in a Sentio (occupancy) frame.
pub const OCCUPANCY_NUMBERS: usize = 8;

/// Longest line accepted: 320 numbers of up to three digits, separators,
/// and generous slack for doubled spaces.
pub const MAX_LINE: usize = 2048;

// Longest non-frame line worth looking at (the LED markers are one letter).
const MAX_MARKER: usize = 16;

/// What the decoder does beyond framing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// Report each changed scan also as `Lift`/`Place` events (the
    /// snapshot is always reported).
    pub diffs: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config { diffs: true }
    }
}

/// Why a calibration failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum CalibrationError {
    /// No frame was given.
    #[error("no scan to calibrate from")]
    NoFrames,
    /// A square of the calibration position held no tag in most scans.
    #[error("no steady tag on {0}")]
    Missing(Square),
    /// The same tag was read on two squares of the calibration position.
    #[error("tag on {0} also read on {1}")]
    Duplicate(Square, Square),
}

/// A Certabo message that is not a board event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Message {
    /// A scan identical to the previous one: nothing moved, the board is
    /// alive.
    SameScan,
    /// The board announced its LED kind: `true` for RGB (`D`), `false` for
    /// plain (`L`).
    LedMarker {
        /// RGB LEDs.
        rgb: bool,
    },
    /// Calibration finished; this many tags are now known.
    Calibrated {
        /// Known tags.
        tags: usize,
    },
    /// Calibration failed; the previous calibration stays.
    CalibrationFailed(CalibrationError),
}

/// The position a calibration is read from: the start position plus a
/// spare black queen on d6 and a spare white queen on d3, so that the
/// queens used for promotion are learnt too.
pub fn calibration_board() -> Board {
    let mut b = Board::default();
    b.set_piece_at(
        Square::D6,
        Piece {
            color: Color::Black,
            role: Role::Queen,
        },
    );
    b.set_piece_at(
        Square::D3,
        Piece {
            color: Color::White,
            role: Role::Queen,
        },
    );
    b
}

/// Which piece carries which tag.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Calibration {
    pieces: HashMap<TagId, Piece>,
}

impl Calibration {
    /// An empty calibration (every tag unknown).
    pub fn new() -> Calibration {
        Calibration::default()
    }

    /// Learns the tags from scans of [`calibration_board`]. Each square
    /// takes the tag read there in most scans, so a few bad reads do not
    /// spoil the result; a square whose commonest reading is empty, or
    /// that is not the reading of more than half the scans, fails.
    pub fn from_scans(scans: &[Tags]) -> Result<Calibration, CalibrationError> {
        if scans.is_empty() {
            return Err(CalibrationError::NoFrames);
        }
        let mut cal = Calibration::new();
        let mut seen: HashMap<TagId, Square> = HashMap::new();
        for (sq, piece) in calibration_board().iter() {
            let i = a8_index(sq);
            let mut counts: HashMap<TagId, usize> = HashMap::new();
            for s in scans {
                *counts.entry(s[i]).or_default() += 1;
            }
            // Ties broken by tag value so the result does not depend on
            // hash order.
            let (tag, n) = counts
                .into_iter()
                .max_by_key(|&(t, n)| (n, t))
                .unwrap_or(([0; 5], 0));
            if tag == [0; 5] || 2 * n <= scans.len() {
                return Err(CalibrationError::Missing(sq));
            }
            if let Some(&other) = seen.get(&tag) {
                return Err(CalibrationError::Duplicate(sq, other));
            }
            seen.insert(tag, sq);
            cal.pieces.insert(tag, piece);
        }
        Ok(cal)
    }

    /// Records that `tag` is on `piece`.
    pub fn insert(&mut self, tag: TagId, piece: Piece) {
        if tag != [0; 5] {
            self.pieces.insert(tag, piece);
        }
    }

    /// The piece that carries `tag`, if known.
    pub fn piece(&self, tag: &TagId) -> Option<Piece> {
        self.pieces.get(tag).copied()
    }

    /// Number of known tags.
    pub fn len(&self) -> usize {
        self.pieces.len()
    }

    /// No tag is known.
    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    /// The scan these tags give: known tags as pieces, unknown ones as
    /// occupied squares.
    pub fn scan(&self, tags: &Tags) -> Scan {
        let mut scan = Scan::empty();
        for (i, tag) in tags.iter().enumerate() {
            if *tag != [0; 5] {
                scan.0[square_from_a8(i).to_usize()] = Some(match self.piece(tag) {
                    Some(p) => Sensed::Piece(p),
                    None => Sensed::Occupied,
                });
            }
        }
        scan
    }
}

/// Where the line reader is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Outside a frame, collecting a possible marker line.
    Idle,
    /// Inside a `:` frame.
    Frame,
    /// Dropping an over-long or broken line up to its end.
    Discard,
}

/// Streaming decoder of Certabo and Sentio frames.
#[derive(Debug, Clone)]
pub struct CertaboDecoder {
    config: Config,
    state: State,
    /// Numbers of the frame so far (at most 320).
    numbers: Vec<u8>,
    /// The number being read, if a digit was seen.
    cur: Option<u16>,
    /// Why the frame is already known to be bad.
    broken: Option<DecodeError>,
    /// Bytes of the current line, for the length bound.
    line_len: usize,
    /// A non-frame line, for the LED markers.
    marker: Vec<u8>,
    skipped: SkipCounter,
    calibration: Calibration,
    /// Scans still to collect for a running calibration, and those so far.
    calibrating: Option<(usize, Vec<Tags>)>,
    tags: Option<Box<Tags>>,
    scan: Option<Scan>,
}

impl CertaboDecoder {
    /// A decoder with no calibration.
    pub fn new(config: Config) -> CertaboDecoder {
        CertaboDecoder {
            config,
            state: State::Idle,
            numbers: Vec::with_capacity(RFID_NUMBERS),
            cur: None,
            broken: None,
            line_len: 0,
            marker: Vec::new(),
            skipped: SkipCounter::default(),
            calibration: Calibration::new(),
            calibrating: None,
            tags: None,
            scan: None,
        }
    }

    /// Uses this calibration from the next scan on.
    pub fn set_calibration(&mut self, calibration: Calibration) {
        self.calibration = calibration;
    }

    /// The calibration in use.
    pub fn calibration(&self) -> &Calibration {
        &self.calibration
    }

    /// Learns the tags from the next `scans` RFID scans, which must show
    /// [`calibration_board`]. The outcome is reported as
    /// [`Message::Calibrated`] or [`Message::CalibrationFailed`]; the scans
    /// are reported as usual meanwhile.
    pub fn start_calibration(&mut self, scans: usize) {
        self.calibrating = Some((scans.max(1), Vec::new()));
    }

    /// The tags of the last RFID scan.
    pub fn last_tags(&self) -> Option<&Tags> {
        self.tags.as_deref()
    }

    fn start_frame(&mut self, out: &mut Vec<Decoded>) {
        if self.state == State::Frame {
            self.skipped.flush(out);
            out.push(Decoded::Error(DecodeError::Torn {
                kind: b':',
                got: self.line_len,
                expected: 0,
            }));
        } else {
            self.skipped.add(self.marker.len());
        }
        self.marker.clear();
        self.numbers.clear();
        self.cur = None;
        self.broken = None;
        self.line_len = 1;
        self.state = State::Frame;
    }

    fn end_number(&mut self) {
        if let Some(v) = self.cur.take() {
            if self.numbers.len() == RFID_NUMBERS {
                self.broken.get_or_insert(DecodeError::Malformed {
                    reason: "more than 320 numbers",
                });
            } else {
                self.numbers.push(v as u8);
            }
        }
    }

    fn push_byte(&mut self, b: u8, out: &mut Vec<Decoded>) {
        if b == b':' {
            return self.start_frame(out);
        }
        match self.state {
            State::Idle => {
                if b == b'\n' {
                    self.end_marker(out);
                } else if self.marker.len() < MAX_MARKER {
                    self.marker.push(b);
                } else {
                    self.skipped.add(1);
                }
            }
            State::Discard => {
                self.skipped.add(1);
                if b == b'\n' {
                    self.state = State::Idle;
                }
            }
            State::Frame => {
                self.line_len += 1;
                match b {
                    b'0'..=b'9' => {
                        let v = self.cur.unwrap_or(0) * 10 + u16::from(b - b'0');
                        if v > 255 {
                            self.broken.get_or_insert(DecodeError::Malformed {
                                reason: "number above 255",
                            });
                        }
                        self.cur = Some(v.min(999));
                    }
                    b' ' | b'\t' | b'\r' => self.end_number(),
                    b'\n' => {
                        self.end_number();
                        self.state = State::Idle;
                        self.frame(out);
                    }
                    _ => {
                        self.broken.get_or_insert(DecodeError::Malformed {
                            reason: "character other than digit or space",
                        });
                    }
                }
                if self.state == State::Frame && self.line_len > MAX_LINE {
                    self.skipped.flush(out);
                    out.push(Decoded::Error(DecodeError::LineTooLong { max: MAX_LINE }));
                    self.state = State::Discard;
                }
            }
        }
    }

    fn end_marker(&mut self, out: &mut Vec<Decoded>) {
        let line = std::mem::take(&mut self.marker);
        let trimmed = line.trim_ascii();
        let rgb = match trimmed {
            b"L" => false,
            b"D" => true,
            _ => {
                // Count the line end too: it belonged to the junk.
                self.skipped.add(line.len() + 1);
                self.marker = line;
                self.marker.clear();
                return;
            }
        };
        self.skipped.flush(out);
        out.push(Decoded::Certabo(Message::LedMarker { rgb }));
        self.marker = line;
        self.marker.clear();
    }

    fn frame(&mut self, out: &mut Vec<Decoded>) {
        self.skipped.flush(out);
        if let Some(err) = self.broken.take() {
            return out.push(Decoded::Error(err));
        }
        let scan = match self.numbers.len() {
            RFID_NUMBERS => {
                let mut tags = Box::new([[0u8; 5]; 64]);
                for (tag, chunk) in tags.iter_mut().zip(self.numbers.chunks_exact(5)) {
                    tag.copy_from_slice(chunk);
                }
                if let Some((want, scans)) = &mut self.calibrating {
                    scans.push(*tags);
                    if scans.len() >= *want {
                        let result = Calibration::from_scans(scans);
                        self.calibrating = None;
                        out.push(Decoded::Certabo(match result {
                            Ok(cal) => {
                                let n = cal.len();
                                self.calibration = cal;
                                Message::Calibrated { tags: n }
                            }
                            Err(e) => Message::CalibrationFailed(e),
                        }));
                    }
                }
                let scan = self.calibration.scan(&tags);
                self.tags = Some(tags);
                scan
            }
            OCCUPANCY_NUMBERS => occupancy_scan(&self.numbers),
            _ => {
                return out.push(Decoded::Error(DecodeError::Malformed {
                    reason: "frame is neither 320 nor 8 numbers",
                }));
            }
        };
        match &self.scan {
            Some(old) if *old == scan => out.push(Decoded::Certabo(Message::SameScan)),
            old => {
                if let (true, Some(old)) = (self.config.diffs, old) {
                    diff_scans(old, &scan, out);
                }
                out.push(Decoded::Event(BoardEvent::Board(Box::new(scan.clone()))));
                self.scan = Some(scan);
            }
        }
    }
}

/// The scan of a Sentio frame: one byte per rank, rank 8 first, bit 7 the
/// a-file.
pub fn occupancy_scan(ranks: &[u8]) -> Scan {
    let mut scan = Scan::empty();
    for (r, &bits) in ranks.iter().take(8).enumerate() {
        for file in 0..8 {
            if bits & (0x80 >> file) != 0 {
                scan.0[square_from_a8(r * 8 + file).to_usize()] = Some(Sensed::Occupied);
            }
        }
    }
    scan
}

impl Default for CertaboDecoder {
    fn default() -> Self {
        CertaboDecoder::new(Config::default())
    }
}

impl Decoder for CertaboDecoder {
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<Decoded>) {
        for &b in bytes {
            self.push_byte(b, out);
        }
        self.skipped.flush(out);
    }

    /// Forgets partial frames and the board, but keeps the calibration,
    /// which belongs to the pieces rather than to the connection.
    fn reset(&mut self) {
        let calibration = std::mem::take(&mut self.calibration);
        *self = CertaboDecoder::new(self.config);
        self.calibration = calibration;
    }

    fn pending(&self) -> usize {
        match self.state {
            State::Frame => self.line_len,
            _ => self.marker.len(),
        }
    }

    fn board(&self) -> Option<&Scan> {
        self.scan.as_ref()
    }
}

// ---------------------------------------------------------------------------
// Board side, for tests and virtual boards.

fn encode_numbers(numbers: impl Iterator<Item = u8>, out: &mut Vec<u8>) {
    out.push(b':');
    for (i, n) in numbers.enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        out.extend_from_slice(n.to_string().as_bytes());
    }
    out.extend_from_slice(b"\r\n");
}

/// Appends a Certabo frame carrying these tags.
pub fn encode_rfid(tags: &Tags, out: &mut Vec<u8>) {
    encode_numbers(tags.iter().flatten().copied(), out);
}

/// Appends a Sentio frame for the occupied squares of `scan`.
pub fn encode_occupancy(scan: &Scan, out: &mut Vec<u8>) {
    let mut ranks = [0u8; 8];
    for (i, r) in ranks.iter_mut().enumerate() {
        for file in 0..8 {
            if scan.get(square_from_a8(i * 8 + file)).is_some() {
                *r |= 0x80 >> file;
            }
        }
    }
    encode_numbers(ranks.into_iter(), out);
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn decode(d: &mut CertaboDecoder, bytes: &[u8]) -> Vec<Decoded> {
        let mut out = Vec::new();
        d.feed(bytes, &mut out);
        out
    }

    fn occupied(squares: impl IntoIterator<Item = Square>) -> Scan {
        let mut scan = Scan::empty();
        for sq in squares {
            scan.0[sq.to_usize()] = Some(Sensed::Occupied);
        }
        scan
    }

    fn start_occupancy() -> Scan {
        Scan::from_board(&Board::default(), false)
    }

    fn board(scan: Scan) -> Decoded {
        Decoded::Event(BoardEvent::Board(Box::new(scan)))
    }

    #[test]
    fn sentio_frame_with_marker() {
        // Ranks 8 and 7 full, 2 full, rank 1 all but h1 (bit 0 = h-file).
        let mut d = CertaboDecoder::default();
        let out = decode(&mut d, b":255 255 0 0 0 0 255 254\nL\r\n");
        let mut want = start_occupancy();
        want.0[Square::H1.to_usize()] = None;
        assert_eq!(
            out,
            vec![
                board(want.clone()),
                Decoded::Certabo(Message::LedMarker { rgb: false })
            ]
        );
        // h1 filled, then a8 emptied (bit 7 of the first byte = a-file).
        let out = decode(
            &mut d,
            b":255 255 0 0 0 0 255 255\r\n:127 255 0 0 0 0 255 255\r\n",
        );
        let mut no_a8 = start_occupancy();
        no_a8.0[Square::A8.to_usize()] = None;
        assert_eq!(
            out,
            vec![
                Decoded::Event(BoardEvent::Place(Square::H1, None)),
                board(start_occupancy()),
                Decoded::Event(BoardEvent::Lift(Square::A8)),
                board(no_a8),
            ]
        );
        let out = decode(&mut d, b":127 255 0 0 0 0 255 255\r\nD\r\n");
        assert_eq!(
            out,
            vec![
                Decoded::Certabo(Message::SameScan),
                Decoded::Certabo(Message::LedMarker { rgb: true })
            ]
        );
    }

    #[test]
    fn split_frames_junk_and_torn_frames() {
        let mut d = CertaboDecoder::default();
        assert_eq!(
            decode(&mut d, b"xyz:0 0 0 0 0 0 0"),
            vec![Decoded::Error(DecodeError::Garbage { bytes: 3 })]
        );
        assert_eq!(d.board(), None);
        assert_eq!(
            decode(&mut d, b" 1\r\n"),
            vec![board(occupied([Square::H1]))]
        );
        // A frame cut off by the next one.
        let out = decode(&mut d, b":255 12:0 0 0 0 0 0 0 0\r\n");
        assert_eq!(
            out,
            vec![
                Decoded::Error(DecodeError::Torn {
                    kind: b':',
                    got: 7,
                    expected: 0
                }),
                Decoded::Event(BoardEvent::Lift(Square::H1)),
                board(Scan::empty()),
            ]
        );
    }

    #[test]
    fn malformed_frames() {
        let mut d = CertaboDecoder::default();
        let out = decode(
            &mut d,
            b":256 0 0 0 0 0 0 0\r\n:1 2 3\r\n:1 x 0 0 0 0 0 0\r\n",
        );
        assert_eq!(out.len(), 3);
        assert!(
            out.iter()
                .all(|o| matches!(o, Decoded::Error(DecodeError::Malformed { .. })))
        );
        assert_eq!(d.board(), None);
        // An endless line is cut, and the next frame still read.
        let mut bytes = b":".to_vec();
        bytes.extend(std::iter::repeat_n(b"1 ".as_slice(), 1500).flatten());
        bytes.extend(b"\r\n:0 0 0 0 0 0 0 0\r\n");
        let out = decode(&mut d, &bytes);
        assert_eq!(
            out[0],
            Decoded::Error(DecodeError::LineTooLong { max: MAX_LINE })
        );
        assert_eq!(out.last(), Some(&board(Scan::empty())));
        assert!(d.pending() <= MAX_LINE);
    }

    /// Gives every piece of the calibration position its own tag: the
    /// square's a8-first index in the last byte, 0x42 in the first.
    fn calibration_tags() -> Tags {
        let mut tags = [[0u8; 5]; 64];
        for (sq, _) in calibration_board().iter() {
            let i = a8_index(sq);
            tags[i] = [0x42, 0, 0, 0, i as u8];
        }
        tags
    }

    /// Writes a Certabo frame by hand (not through the encoder).
    fn rfid_text(tags: &Tags) -> Vec<u8> {
        let nums: Vec<String> = tags.iter().flatten().map(|n| n.to_string()).collect();
        format!(":{}\r\n", nums.join(" ")).into_bytes()
    }

    #[test]
    fn calibration_then_identified_moves() {
        let mut d = CertaboDecoder::default();
        let tags = calibration_tags();
        // Uncalibrated: occupancy only.
        let out = decode(&mut d, &rfid_text(&tags));
        assert_eq!(
            out,
            vec![board(Scan::from_board(&calibration_board(), false))]
        );
        d.start_calibration(3);
        // One scan misreads e1 as empty; the majority still has it.
        let mut bad = tags;
        bad[60] = [0; 5];
        let mut bytes = rfid_text(&tags);
        bytes.extend(rfid_text(&bad));
        bytes.extend(rfid_text(&tags));
        let out = decode(&mut d, &bytes);
        assert!(out.contains(&Decoded::Certabo(Message::Calibrated { tags: 34 })));
        let identified = Scan::from_board(&calibration_board(), true);
        assert_eq!(out.last(), Some(&board(identified.clone())));
        // 1.e4: the e2 pawn's tag (index 52) now read on e4 (index 36).
        let mut moved = tags;
        moved[36] = moved[52];
        moved[52] = [0; 5];
        let out = decode(&mut d, &rfid_text(&moved));
        let wp = Piece {
            color: Color::White,
            role: Role::Pawn,
        };
        let mut after = identified;
        after.0[Square::E2.to_usize()] = None;
        after.0[Square::E4.to_usize()] = Some(Sensed::Piece(wp));
        assert_eq!(
            out,
            vec![
                Decoded::Event(BoardEvent::Lift(Square::E2)),
                Decoded::Event(BoardEvent::Place(Square::E4, Some(wp))),
                board(after),
            ]
        );
        // A stranger's tag on a5 (index 24) is occupied, not identified.
        moved[24] = [9, 9, 9, 9, 9];
        let out = decode(&mut d, &rfid_text(&moved));
        assert_eq!(out[0], Decoded::Event(BoardEvent::Place(Square::A5, None)));
        // The calibration outlives a reset.
        d.reset();
        assert_eq!(d.calibration().len(), 34);
        assert_eq!(d.board(), None);
    }

    #[test]
    fn calibration_failures() {
        let tags = calibration_tags();
        assert_eq!(
            Calibration::from_scans(&[]),
            Err(CalibrationError::NoFrames)
        );
        let mut missing = tags;
        missing[a8_index(Square::D3)] = [0; 5];
        assert_eq!(
            Calibration::from_scans(&[missing]),
            Err(CalibrationError::Missing(Square::D3))
        );
        let mut dup = tags;
        dup[a8_index(Square::A1)] = dup[a8_index(Square::B1)];
        assert!(matches!(
            Calibration::from_scans(&[dup]),
            Err(CalibrationError::Duplicate(_, _))
        ));
        let mut d = CertaboDecoder::default();
        d.start_calibration(1);
        let out = decode(&mut d, &rfid_text(&missing));
        assert_eq!(
            out[0],
            Decoded::Certabo(Message::CalibrationFailed(CalibrationError::Missing(
                Square::D3
            )))
        );
        assert!(d.calibration().is_empty());
    }

    #[test]
    fn encoders_match_hand_written_frames() {
        let tags = calibration_tags();
        let mut out = Vec::new();
        encode_rfid(&tags, &mut out);
        assert_eq!(out, rfid_text(&tags));
        out.clear();
        let mut scan = start_occupancy();
        scan.0[Square::H1.to_usize()] = None;
        encode_occupancy(&scan, &mut out);
        assert_eq!(out, b":255 255 0 0 0 0 255 254\r\n");
    }

    fn arb_tags() -> impl Strategy<Value = Tags> {
        // A small pool so that tags repeat and some are known.
        proptest::collection::vec(
            prop_oneof![
                Just([0u8; 5]),
                (0u8..4).prop_map(|t| [1, 2, 3, 4, t]),
                any::<[u8; 5]>()
            ],
            64,
        )
        .prop_map(|v| {
            let mut tags = [[0u8; 5]; 64];
            tags.copy_from_slice(&v);
            tags
        })
    }

    fn assert_producible(event: &BoardEvent, cal: &Calibration) {
        match event {
            BoardEvent::Board(scan) => {
                // Identified squares come only from known tags.
                let mut tags = [[0u8; 5]; 64];
                let known: HashMap<Piece, TagId> =
                    cal.pieces.iter().map(|(t, p)| (*p, *t)).collect();
                for (i, tag) in tags.iter_mut().enumerate() {
                    *tag = match scan.get(square_from_a8(i)) {
                        None => [0; 5],
                        Some(Sensed::Occupied) => [0xEE; 5],
                        Some(Sensed::Piece(p)) => *known.get(&p).expect("piece from a known tag"),
                    };
                }
                let mut bytes = Vec::new();
                encode_rfid(&tags, &mut bytes);
                let mut d = CertaboDecoder::default();
                d.set_calibration(cal.clone());
                assert_eq!(decode(&mut d, &bytes), vec![Decoded::Event(event.clone())]);
            }
            BoardEvent::Lift(_) => {}
            BoardEvent::Place(_, p) => {
                if let Some(p) = p {
                    assert!(cal.pieces.values().any(|q| q == p));
                }
            }
            other => panic!("a Certabo board cannot report {other:?}"),
        }
    }

    const ALPHABET: &[u8] = b":0123456789  \r\nLD";

    proptest! {
        #[test]
        fn random_bytes_never_panic_and_invent_nothing(bytes in proptest::collection::vec(any::<u8>(), 0..600)) {
            let mut d = CertaboDecoder::default();
            let out = decode(&mut d, &bytes);
            prop_assert!(d.pending() <= MAX_LINE);
            for item in &out {
                if let Decoded::Event(e) = item {
                    assert_producible(e, &Calibration::new());
                }
            }
        }

        #[test]
        fn random_text_never_panics(idx in proptest::collection::vec(0usize..ALPHABET.len(), 0..3000)) {
            let bytes: Vec<u8> = idx.into_iter().map(|i| ALPHABET[i]).collect();
            let mut d = CertaboDecoder::default();
            d.set_calibration(Calibration::from_scans(&[calibration_tags()]).unwrap());
            let out = decode(&mut d, &bytes);
            prop_assert!(d.pending() <= MAX_LINE);
            for item in &out {
                if let Decoded::Event(e) = item {
                    assert_producible(e, d.calibration());
                }
            }
        }

        #[test]
        fn rfid_round_trip(frames in proptest::collection::vec(arb_tags(), 1..5), chunk in 1usize..200) {
            let mut cal = Calibration::new();
            for (t, role) in [Role::Pawn, Role::Knight, Role::Queen, Role::King].into_iter().enumerate() {
                cal.insert([1, 2, 3, 4, t as u8], Piece { color: Color::Black, role });
            }
            let mut d = CertaboDecoder::default();
            d.set_calibration(cal.clone());
            let mut bytes = Vec::new();
            for tags in &frames {
                encode_rfid(tags, &mut bytes);
            }
            let mut out = Vec::new();
            for c in bytes.chunks(chunk) {
                d.feed(c, &mut out);
            }
            for item in &out {
                if let Decoded::Event(e) = item {
                    assert_producible(e, &cal);
                }
            }
            prop_assert_eq!(d.board(), Some(&cal.scan(frames.last().unwrap())));
            prop_assert_eq!(d.last_tags(), frames.last());
        }

        #[test]
        fn occupancy_round_trip(bits in any::<u64>(), garbage in proptest::collection::vec(any::<u8>(), 0..50)) {
            let mut scan = Scan::empty();
            for i in 0..64 {
                if bits >> i & 1 == 1 {
                    scan.0[i] = Some(Sensed::Occupied);
                }
            }
            let mut bytes = garbage;
            encode_occupancy(&scan, &mut bytes);
            let mut d = CertaboDecoder::default();
            decode(&mut d, &bytes);
            prop_assert_eq!(d.board(), Some(&scan));
        }
    }
}
