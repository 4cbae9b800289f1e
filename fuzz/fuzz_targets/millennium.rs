//! Feeds arbitrary bytes to the Millennium decoder, split where the first
//! byte says, and checks what came out could have come from real frames.
#![no_main]

use eboard::protocol::millennium::{self, MillenniumDecoder, STATUS_LEN};
use eboard::protocol::{Decoded, Decoder};
use eboard::{BoardEvent, Sensed};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&head, bytes)) = data.split_first() else {
        return;
    };
    let config = millennium::Config {
        check_parity: head & 0x80 != 0,
        diffs: head & 0x40 != 0,
    };
    let mut d = MillenniumDecoder::new(config);
    let chunk = usize::from(head & 0x3F).max(1);
    let mut out = Vec::new();
    for c in bytes.chunks(chunk) {
        d.feed(c, &mut out);
        assert!(d.pending() < STATUS_LEN);
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
                // A status that decodes must encode back to a status that
                // decodes the same.
                let mut bytes = Vec::new();
                millennium::encode_status(scan, false, &mut bytes).unwrap();
                let mut again = Vec::new();
                MillenniumDecoder::default().feed(&bytes, &mut again);
                assert_eq!(again, vec![item.clone()]);
            }
            Decoded::Event(BoardEvent::Place(_, p)) => assert!(p.is_some()),
            Decoded::Event(BoardEvent::Lift(_)) => {}
            Decoded::Event(other) => panic!("Millennium cannot report {other:?}"),
            _ => {}
        }
    }
    let mut p = millennium::HostParser::new(config.check_parity);
    let (mut cmds, mut errs) = (Vec::new(), Vec::new());
    p.feed(bytes, &mut cmds, &mut errs);
});
