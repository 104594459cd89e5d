//! Drawing the Files pane: the tree on the left (visible rows only, folders and the files
//! agents changed marked) and the preview of the selected file on the right.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::tui::app::AppState;
use crate::tui::chrome::{put_line, sel_style, select_line, thousands};
use crate::tui::files::tree::window_offset;
use crate::tui::widgets::markdown::styled_line;
use crate::tui::widgets::wrap::draw_top_down;

pub fn draw_files(app: &AppState, area: Rect, buf: &mut Buffer, focused: bool) {
    let tree = &app.files.tree;
    let t = &app.theme;
    if tree.rows().is_empty() {
        let msg = if tree.root_loaded() {
            "(empty project folder)"
        } else {
            "loading…"
        };
        put_line(buf, area, 0, &Line::from(Span::styled(msg, t.dim)));
        return;
    }
    let h = area.height as usize;
    let off = window_offset(tree.offset, tree.selected, h, tree.rows().len());
    for (i, &id) in tree.rows().iter().skip(off).take(h).enumerate() {
        let Some(n) = tree.node(id) else { continue };
        let indent = "  ".repeat(n.depth.saturating_sub(1) as usize);
        let icon = match (n.is_dir, n.expanded) {
            (true, true) => "▾ ",
            (true, false) => "▸ ",
            _ => "  ",
        };
        let style = if n.hidden {
            t.hidden
        } else if n.is_dir {
            t.folder
        } else {
            t.text
        };
        let mut spans = vec![
            Span::raw(indent),
            Span::styled(icon, t.dim),
            Span::styled(crate::text::escape_os(&n.name).into_owned(), style),
        ];
        if n.loading.is_some() && n.expanded {
            spans.push(Span::styled(" …", t.dim));
        }
        let marked = if n.is_dir {
            app.files.dir_has_changes(&n.path)
        } else {
            app.files.is_changed(&n.path)
        };
        if marked {
            spans.push(Span::styled(if n.is_dir { " •" } else { " ●" }, t.changed));
        }
        let mut line = Line::from(spans);
        if off + i == tree.selected {
            line = select_line(line, sel_style(app, focused));
            buf.set_style(
                Rect::new(area.x, area.y + i as u16, area.width, 1),
                sel_style(app, focused),
            );
        }
        put_line(buf, area, i as u16, &line);
    }
}

pub fn file_preview(app: &AppState, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let note = |buf: &mut Buffer, text: String| {
        draw_top_down(area, buf, [(Line::from(Span::styled(text, t.dim)), 0)]);
    };
    let Some(p) = &app.files.preview else {
        match app.files.tree.selected_node() {
            Some(n) if n.is_dir => {
                let count = n.children.as_ref().map(|c| c.len());
                let text = match count {
                    Some(c) => format!(
                        "Folder {} — {}. l or Enter opens it; / finds a file.",
                        n.path.shown(),
                        crate::text::count(c, "entry", "entries")
                    ),
                    None => format!(
                        "Folder {} — l or Enter opens it; / finds a file.",
                        n.path.shown()
                    ),
                };
                note(buf, text);
            }
            _ => note(
                buf,
                "Select a file to preview it. / finds a file by name.".into(),
            ),
        }
        return;
    };
    if let Some(e) = &p.error {
        draw_top_down(
            area,
            buf,
            [(
                Line::from(Span::styled(
                    format!("Cannot read {}: {e}", p.path.shown()),
                    t.status_error,
                )),
                0,
            )],
        );
        return;
    }
    let Some(doc) = &p.doc else {
        note(buf, "loading…".into());
        return;
    };
    if doc.binary {
        note(
            buf,
            format!(
                "Binary file ({} bytes): no preview.",
                thousands(doc.bytes as i64)
            ),
        );
        return;
    }
    if doc.lines.is_empty() {
        note(buf, "(empty file)".into());
        return;
    }
    let start = p.scroll.min(doc.lines.len().saturating_sub(1));
    let lines = doc
        .lines
        .iter()
        .skip(start)
        .map(|(k, text)| (styled_line(*k, text, t), 0));
    let tail = doc.truncated.then(|| {
        (
            Line::from(Span::styled(
                "… (preview stops here; the file is longer)",
                t.dim,
            )),
            0,
        )
    });
    draw_top_down(area, buf, lines.chain(tail));
}
