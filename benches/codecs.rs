//! Decoding throughput of each board codec on synthesized streams that look
//! like a real session: pseudo-random legal games played on the board, with
//! the traffic each family sends while that happens.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use eboard::Scan;
use eboard::protocol::certabo::{self, CertaboDecoder, Tags};
use eboard::protocol::dgt::{self, ClockFace, ClockReport, DgtDecoder, PieceCode};
use eboard::protocol::millennium::{self, MillenniumDecoder};
use eboard::protocol::{Decoded, Decoder, a8_index};
use shakmaty::{Chess, Move, Position, Square};

/// A small deterministic generator, so every run decodes the same bytes.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

/// Positions of a few pseudo-random games, each from the start position,
/// with the squares each move lifts and places.
fn games(plies: usize) -> Vec<(Scan, Vec<Square>, Vec<Square>)> {
    let mut rng = Lcg(0x5eed);
    let mut out = Vec::new();
    let mut pos = Chess::default();
    for _ in 0..plies {
        let moves = pos.legal_moves();
        if moves.is_empty() || pos.halfmoves() > 80 {
            pos = Chess::default();
            continue;
        }
        let m = moves[rng.below(moves.len())];
        let (lifts, places) = match m {
            Move::Normal {
                from, to, capture, ..
            } => {
                let mut l = vec![from];
                if capture.is_some() {
                    l.push(to);
                }
                (l, vec![to])
            }
            Move::EnPassant { from, to } => {
                let captured = Square::from_coords(to.file(), from.rank());
                (vec![from, captured], vec![to])
            }
            Move::Castle { king, rook } => {
                let side = m.castling_side().expect("castling move");
                let color = pos.turn();
                (
                    vec![king, rook],
                    vec![side.king_to(color), side.rook_to(color)],
                )
            }
            Move::Put { to, .. } => (vec![], vec![to]),
        };
        pos.play_unchecked(m);
        out.push((Scan::from_board(pos.board(), true), lifts, places));
    }
    out
}

/// A DGT session in UPDATE_NICE mode: a dump, then per move the field
/// updates and a clock report; a fresh dump every 40 plies.
fn dgt_stream() -> Vec<u8> {
    let mut bytes = Vec::new();
    let start = Scan::from_board(&shakmaty::Board::default(), true);
    dgt::encode_dump(&dgt::scan_codes(&start).unwrap(), &mut bytes);
    let mut secs = 5400;
    for (i, (scan, lifts, places)) in games(4000).into_iter().enumerate() {
        for sq in lifts {
            dgt::encode_field_update(sq, PieceCode::Empty, &mut bytes);
        }
        for sq in places {
            let code = match scan.get(sq) {
                Some(eboard::Sensed::Piece(p)) => PieceCode::Piece(p),
                _ => PieceCode::Empty,
            };
            dgt::encode_field_update(sq, code, &mut bytes);
        }
        // The clock runs down 7 s a move and is reset when it would pass zero, so a
        // long stream never underflows.
        secs = if secs > 7 { secs - 7 } else { 5400 };
        let mut r = ClockReport {
            left: ClockFace::from_secs(secs),
            right: ClockFace::from_secs(secs + 3),
            ..ClockReport::default()
        };
        r.status.running = true;
        r.status.right_lever_high = i % 2 == 0;
        dgt::encode_clock_report(&r, &mut bytes);
        if i % 40 == 39 {
            dgt::encode_dump(&dgt::scan_codes(&scan).unwrap(), &mut bytes);
        }
    }
    bytes
}

/// A ChessLink board reporting after every scan: a dozen identical
/// statuses between moves, each move showing the lifted piece for a few
/// scans first. Parity bits set, as on a port opened 8N1.
fn millennium_stream() -> Vec<u8> {
    let mut bytes = Vec::new();
    let mut prev = Scan::from_board(&shakmaty::Board::default(), true);
    for (scan, lifts, _) in games(1000) {
        for _ in 0..12 {
            millennium::encode_status(&prev, true, &mut bytes).unwrap();
        }
        let mut lifted = prev.clone();
        for sq in lifts {
            lifted.0[sq.to_usize()] = None;
        }
        for _ in 0..3 {
            millennium::encode_status(&lifted, true, &mut bytes).unwrap();
        }
        prev = scan;
    }
    bytes
}

/// Certabo RFID frames (a few per move) and Sentio frames of the same game.
fn certabo_streams() -> (Vec<u8>, Vec<u8>, certabo::Calibration) {
    // One tag per piece kind is enough for throughput purposes.
    let mut cal = certabo::Calibration::new();
    let tag_of = |p: shakmaty::Piece| -> [u8; 5] {
        let i = p.role as u8 + if p.color.is_white() { 0 } else { 8 };
        [48, 17 + i, 203, 99, i]
    };
    let (mut rfid, mut sentio) = (Vec::new(), Vec::new());
    for (scan, _, _) in games(600) {
        let mut tags: Tags = [[0; 5]; 64];
        for (i, t) in tags.iter_mut().enumerate() {
            if let Some(eboard::Sensed::Piece(p)) = scan.get(eboard::protocol::square_from_a8(i)) {
                *t = tag_of(p);
                cal.insert(*t, p);
            }
        }
        debug_assert_eq!(a8_index(Square::A8), 0);
        for _ in 0..3 {
            certabo::encode_rfid(&tags, &mut rfid);
            certabo::encode_occupancy(&scan, &mut sentio);
        }
    }
    (rfid, sentio, cal)
}

fn run<D: Decoder>(mut make: impl FnMut() -> D, bytes: &[u8]) -> usize {
    let mut d = make();
    let mut out: Vec<Decoded> = Vec::with_capacity(1024);
    let mut n = 0;
    // Serial reads deliver small chunks; 64 bytes is a typical USB packet.
    for c in bytes.chunks(64) {
        d.feed(c, &mut out);
        n += out.len();
        out.clear();
    }
    n
}

fn codecs(c: &mut Criterion) {
    let dgt = dgt_stream();
    let mil = millennium_stream();
    let (rfid, sentio, cal) = certabo_streams();
    let mut g = c.benchmark_group("decode");
    g.warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20);
    g.throughput(Throughput::Bytes(dgt.len() as u64));
    g.bench_function("dgt", |b| {
        b.iter(|| run(DgtDecoder::default, black_box(&dgt)))
    });
    g.throughput(Throughput::Bytes(mil.len() as u64));
    g.bench_function("millennium", |b| {
        b.iter(|| run(MillenniumDecoder::default, black_box(&mil)))
    });
    g.throughput(Throughput::Bytes(rfid.len() as u64));
    g.bench_function("certabo_rfid", |b| {
        b.iter(|| {
            run(
                || {
                    let mut d = CertaboDecoder::default();
                    d.set_calibration(cal.clone());
                    d
                },
                black_box(&rfid),
            )
        })
    });
    g.throughput(Throughput::Bytes(sentio.len() as u64));
    g.bench_function("sentio", |b| {
        b.iter(|| run(CertaboDecoder::default, black_box(&sentio)))
    });
    g.finish();
}

criterion_group!(benches, codecs);
criterion_main!(benches);
