//! Feeds arbitrary bytes to the DGT decoder, split where the first byte
//! says, and checks what came out could have come from real frames.
#![no_main]

use eboard::protocol::dgt::{self, DgtDecoder, MAX_CLOCK_SECS, MAX_FRAME};
use eboard::protocol::{Decoded, Decoder};
use eboard::{BoardEvent, Sensed};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&head, bytes)) = data.split_first() else {
        return;
    };
    let mut d = DgtDecoder::new(dgt::Config {
        white_on_left: head & 0x80 != 0,
    });
    let chunk = usize::from(head & 0x7F).max(1);
    let mut out = Vec::new();
    for c in bytes.chunks(chunk) {
        d.feed(c, &mut out);
        assert!(d.pending() <= MAX_FRAME);
    }
    for item in &out {
        match item {
            Decoded::Event(BoardEvent::Board(scan)) => {
                assert!(
                    scan.0
                        .iter()
                        .flatten()
                        .all(|s| matches!(s, Sensed::Piece(_)))
                );
            }
            Decoded::Event(BoardEvent::Place(_, p)) => assert!(p.is_some()),
            Decoded::Event(BoardEvent::Clock(w, b)) => {
                assert!(*w <= MAX_CLOCK_SECS && *b <= MAX_CLOCK_SECS);
            }
            Decoded::Event(BoardEvent::Lift(_) | BoardEvent::Press(_) | BoardEvent::Flag(_)) => {}
            Decoded::Event(other) => panic!("DGT cannot report {other:?}"),
            _ => {}
        }
    }
    // The board-side command parser sees the same bytes.
    let mut p = dgt::HostParser::new();
    let mut cmds = Vec::new();
    p.feed(bytes, &mut cmds);
    assert!(p.pending() <= 257);
    let _ = dgt::parse_ee_moves(bytes);
});
