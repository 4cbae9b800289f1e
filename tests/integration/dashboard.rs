//! The dashboard per game (issue 36), in headless Chromium: a board card
//! shows the current game's alerts in plain words; the alerts of earlier
//! games leave the card (counted there, listed by game in the detail).

use crate::daemon::{
    Daemon, SseReader, chromium, dump_dom, http, read_events, run_args, script_board,
};

const ILLEGAL_KING_MOVE: &str = "\
setup 4k3/8/8/8/8/8/8/4K2R w K - 0 1
@1000 lift e1
@1300 place e3
@1500 press white
@3000 lift e3
@3300 place e1
";

/// The text of board 1's alert lines on the page.
fn card_alerts(dom: &str) -> String {
    let marker = "id=\"al-1\">";
    let start = dom
        .find(marker)
        .unwrap_or_else(|| panic!("no board 1 on the page:\n{dom}"))
        + marker.len();
    let end = start + dom[start..].find("</div></div>").unwrap_or(0);
    dom[start..end].to_owned()
}

#[test]
fn issue_36_a_card_shows_its_current_games_alerts_in_plain_words() {
    let Some(browser) = chromium() else {
        eprintln!("notice: chromium is not installed; the dashboard browser test is skipped");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (config, data) = script_board(dir.path(), "Games Cup", ILLEGAL_KING_MOVE);
    let d = Daemon::start(&run_args(&config, &data, "1"));
    d.wait_boards(30, |b| {
        b["open_alerts"]
            .as_array()
            .is_some_and(|a| a.iter().any(|a| a["kind"] == "illegal_move"))
    });
    let dom = dump_dom(&browser, dir.path(), &d.addr);
    let card = card_alerts(&dom);
    assert!(card.contains("Illegal move: "), "{card}");
    assert!(!card.contains("illegal_move"), "{card}");

    let token = std::fs::read_to_string(data.join("token")).unwrap();
    let bearer = format!("Bearer {}", token.trim());
    let r = http(
        &d.addr,
        "POST",
        "/boards/1/actions",
        &[("Authorization", bearer.as_str())],
        Some(r#"{"action":"new_game"}"#),
    );
    assert_eq!(r.status, 200, "{}", r.body);
    d.wait_boards(30, |b| b["game"] == 1);
    let dom = dump_dom(&browser, dir.path(), &d.addr);
    let card = card_alerts(&dom);
    assert!(!card.contains("Illegal move"), "{card}");
    assert!(card.contains("open from earlier games"), "{card}");
}

/// The values of the dashboard's result control, read from the page as
/// served (its `RESULTS` list: value, then label).
fn result_choices(page: &str) -> Vec<String> {
    let start = page.find("const RESULTS = [").expect("a RESULTS list");
    let list = &page[start..start + page[start..].find("];").expect("its end")];
    list.split("[\"")
        .skip(1)
        .map(|pair| pair[..pair.find('"').unwrap()].to_owned())
        .collect()
}

/// Issue 36: the result control offers the forfeits and special scores
/// as well as the played results, and the `result` action records each
/// value it posts in the form pairing programs and lichess read (the
/// recorded form on `/boards`).
#[test]
fn issue_36_the_result_control_offers_the_special_results_the_action_records() {
    let dir = tempfile::tempdir().unwrap();
    let (config, data) = script_board(dir.path(), "Forfeit Cup", "@1000 lift e2\n@1300 place e4\n");
    let d = Daemon::start(&run_args(&config, &data, "10"));
    d.wait_boards(30, |b| b["connection"] == "ended");
    let page = d.get("/");
    assert_eq!(page.status, 200);
    // The played results, abandoned, then the forfeits and special scores
    // of the FIDE rating regulations and TRF-16 (+/-, -/+, -/-, 0-0,
    // 1/2-0, 0-1/2).
    let want = [
        "1-0", "0-1", "1/2-1/2", "*", "+/-", "-/+", "-/-", "0-0", "1/2-0", "0-1/2",
    ];
    assert_eq!(result_choices(&page.body), want);

    let token = std::fs::read_to_string(data.join("token")).unwrap();
    let bearer = format!("Bearer {}", token.trim());
    let post = |body: &str| {
        let r = http(
            &d.addr,
            "POST",
            "/boards/1/actions",
            &[("Authorization", bearer.as_str())],
            Some(body),
        );
        assert_eq!(r.status, 200, "{body}: {}", r.body);
    };
    let mut sse = SseReader::open(&d.addr, None);
    for (i, result) in want[4..].iter().enumerate() {
        if i > 0 {
            post(r#"{"action":"new_game"}"#);
        }
        post(&format!(
            r#"{{"action":"result","result":"{result}","note":"test"}}"#
        ));
    }
    let results = |events: &[crate::daemon::Sse]| -> Vec<String> {
        events
            .iter()
            .filter(|e| e.kind == "result")
            .map(|e| e.data["result"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    let events = read_events(&mut sse, 30, |events| results(events).len() >= 6);
    assert_eq!(results(&events), want[4..]);
}
