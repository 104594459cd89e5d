//! Paging a long preview in the full-screen request by source lines: PageDown brings the
//! first line not wholly shown to the top and PageUp goes back a screenful of lines, so however
//! much a novel's long paragraphs wrap, no line is ever skipped.

mod tui_support;

use nbook::engine::{ChangeKind, FileChange, Mode, PreviewBody};
use nbook::tui::app::{AppState, Pane};
use nbook::tui::input::Overlay;
use tui_support::*;

/// Forty paragraphs of a chapter, each long enough to wrap over several rows, one changed.
fn long_call() -> nbook::engine::PendingCall {
    let mut d = String::from("--- a/ch.md\n+++ b/ch.md\n@@ -1,40 +1,40 @@\n");
    for i in 1..=40 {
        let tail = "and the harbour lay quiet under the gulls while Mira counted the boats again, once for each of the men still out past the Ness. ".repeat(1 + i % 3);
        if i == 20 {
            d.push_str(&format!("-Paragraph {i:02} starts here {tail}\n"));
            d.push_str(&format!("+Paragraph {i:02} starts anew {tail}\n"));
        } else {
            d.push_str(&format!(" Paragraph {i:02} starts here {tail}\n"));
        }
    }
    let changes = vec![FileChange {
        path: "manuscript/ch.md".into(),
        kind: ChangeKind::Update,
        move_to: None,
        diff: d,
        added: 1,
        removed: 1,
    }];
    pending(
        "c1",
        "write",
        PreviewBody::Files { changes },
        "Edit 1 file",
        true,
        Mode::Normal,
    )
}

fn scroll_of(app: &AppState) -> usize {
    match &app.overlay {
        Some(Overlay::Detail { scroll, .. }) => *scroll,
        _ => panic!("the detail is not open"),
    }
}

#[test]
fn page_down_never_skips_a_line_and_page_up_goes_back() {
    let (mut app, _) = empty_app_with(80, 24, Vec::new(), vec![long_call()]);
    app.focus = Pane::Approvals;
    press(&mut app, "<Enter>");
    let mut seen = std::collections::BTreeSet::new();
    let mut screens = Vec::new();
    let mut scrolls = vec![0];
    for _ in 0..40 {
        let s = render(&mut app, 80, 24);
        for i in 1..=40 {
            if s.contains(&format!("Paragraph {i:02} starts")) {
                seen.insert(i);
            }
        }
        screens.push(s);
        press(&mut app, "<PageDown>");
        if scroll_of(&app) == *scrolls.last().unwrap() {
            break;
        }
        scrolls.push(scroll_of(&app));
    }
    let missing: Vec<i32> = (1..=40).filter(|i| !seen.contains(i)).collect();
    assert!(missing.is_empty(), "paragraphs never shown: {missing:?}");
    assert!(
        scrolls.len() > 3,
        "a long preview takes several pages: {scrolls:?}"
    );
    insta::assert_snapshot!("detail_second_page_80x24", screens[1]);
    // PageUp from the second page is the first page again.
    app.overlay = Some(Overlay::Detail {
        call_id: "c1".into(),
        scroll: scrolls[1],
    });
    press(&mut app, "<PageUp>");
    assert_eq!(scroll_of(&app), 0);
    // From the third page, PageUp shows the lines just above it: the second page's last line
    // is on screen again.
    app.overlay = Some(Overlay::Detail {
        call_id: "c1".into(),
        scroll: scrolls[2],
    });
    press(&mut app, "<PageUp>");
    let back = scroll_of(&app);
    assert!(
        back > 0 && back < scrolls[2],
        "{back} within (0, {})",
        scrolls[2]
    );
}
