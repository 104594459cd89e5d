//! East Asian text on screen: Chinese and Japanese prose in the file preview wraps between
//! ideographs (never starting a row with 。、」), and a project title in wide characters is
//! cut by display columns in the status bar, not by characters (which would overflow it).

mod tui_support;

use nbook::tui::action::{Action, Command, Effect};
use nbook::tui::files::tree::DirEntry;
use nbook::tui::widgets::markdown::PreviewDoc;
use tui_support::*;
use unicode_width::UnicodeWidthStr;

const PROSE: &str = "# 第一章　灯塔\n\n灯塔守护者每天晚上都要爬上一百二十级台阶，点亮那盏老灯。海风很大，他大声说：「今晚会有暴风雨。」然后他关上了门。\n\n吾輩は猫である。名前はまだ無い。どこで生れたかとんと見当がつかぬ。何でも薄暗いじめじめした所でニャーニャー泣いていた事だけは記憶している。\n\nMixed: 他用 cargo build 编译了 nbook，然后继续写作。\n";

fn preview_app(w: u16, h: u16) -> nbook::tui::app::AppState {
    let (mut app, _) = empty_app(w, h);
    let fx = app.start();
    let root = fx
        .iter()
        .find_map(|f| match f {
            Effect::LoadDir { ticket, dir } if dir.shown().is_empty() => Some(*ticket),
            _ => None,
        })
        .expect("the root listing is asked for");
    let mut fx = app.update(Action::DirLoaded {
        ticket: root,
        dir: "".into(),
        result: Ok(vec![DirEntry {
            name: "第一章.md".into(),
            is_dir: false,
        }]),
    });
    assert!(app.files.tree.select_path("第一章.md"));
    fx.extend(app.update(Action::Cmd(Command::Expand)));
    let ticket = fx
        .iter()
        .find_map(|f| match f {
            Effect::LoadPreview { ticket, .. } => Some(*ticket),
            _ => None,
        })
        .expect("the preview is asked for");
    app.update(Action::PreviewLoaded {
        ticket,
        path: "第一章.md".into(),
        result: Ok(PreviewDoc::from_bytes(
            PROSE.as_bytes(),
            PROSE.len() as u64,
            true,
        )),
    });
    app
}

#[test]
fn chinese_and_japanese_prose_wraps_between_ideographs() {
    let mut app = preview_app(80, 24);
    let screen = render(&mut app, 80, 24);
    // Rows are full (no early break at the only spaces) and no row of the preview starts with
    // a closing mark.
    for line in screen.lines() {
        let inner = line.split('│').nth(2).unwrap_or("").trim_start();
        for mark in ['。', '、', '，', '」'] {
            assert!(!inner.starts_with(mark), "row starts with {mark}: {line:?}");
        }
    }
    insta::assert_snapshot!("cjk_prose_preview_80x24", screen);
}

#[test]
fn a_wide_title_is_cut_by_display_columns() {
    let (mut app, _) = empty_app(80, 24);
    app.title = "灯塔守护者的日记：暴风雨之夜与第二个故事".into();
    let screen = render(&mut app, 80, 24);
    let status = screen
        .lines()
        .rev()
        .find(|l| l.contains("? help"))
        .expect("a status row");
    // The title is cut to 24 columns: eleven wide characters and "…" (23), not 23 characters
    // (46 columns) as counting characters did.
    let title = "灯塔守护者的日记：暴风…";
    assert!(status.contains(title), "{status:?}");
    assert_eq!(title.width(), 23);
    assert!(!status.contains("暴风雨"), "{status:?}");
    insta::assert_snapshot!("cjk_title_status_80x24", screen);
}
