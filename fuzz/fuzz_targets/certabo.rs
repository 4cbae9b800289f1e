//! Feeds arbitrary bytes to the Certabo decoder (calibrated or not), split
//! where the first byte says, and checks what came out could have come
//! from real frames.
#![no_main]

use eboard::BoardEvent;
use eboard::protocol::certabo::{self, CertaboDecoder, MAX_LINE};
use eboard::protocol::{Decoded, Decoder};
use libfuzzer_sys::fuzz_target;
use shakmaty::{Color, Piece, Role};

fuzz_target!(|data: &[u8]| {
    let Some((&head, bytes)) = data.split_first() else {
        return;
    };
    let mut d = CertaboDecoder::new(certabo::Config {
        diffs: head & 0x40 != 0,
    });
    if head & 0x80 != 0 {
        // A few short tags, so that random digits can hit them.
        let mut cal = certabo::Calibration::new();
        for (t, role) in [Role::Pawn, Role::King].into_iter().enumerate() {
            cal.insert(
                [t as u8 + 1, 0, 0, 0, 0],
                Piece {
                    color: Color::White,
                    role,
                },
            );
        }
        d.set_calibration(cal);
    }
    if head & 0x20 != 0 {
        d.start_calibration(1);
    }
    let chunk = usize::from(head & 0x1F).max(1);
    let mut out = Vec::new();
    for c in bytes.chunks(chunk) {
        d.feed(c, &mut out);
        assert!(d.pending() <= MAX_LINE);
    }
    for item in &out {
        match item {
            Decoded::Event(BoardEvent::Board(_) | BoardEvent::Lift(_) | BoardEvent::Place(..)) => {}
            Decoded::Event(other) => panic!("Certabo cannot report {other:?}"),
            _ => {}
        }
    }
});
