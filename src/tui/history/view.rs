//! The History view as the author reads it: the list (grants, then changes newest first) with
//! the selected row's facts and applied change beside it; an applied change full-screen; the
//! reverse preview (or the refusal and its plan) with the question under it. Changes render
//! with the Approvals pane's own renderers (prose diffs for files, field diffs for records).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::{HistoryOverlay, Row, Shown};
use crate::engine::history::Entry;
use crate::engine::{Preview, PreviewBody};
use crate::tui::action::Command;
use crate::tui::app::AppState;
use crate::tui::approvals::preview::{self as pv, Item};
use crate::tui::approvals::view::{body_rows, files_items};
use crate::tui::chrome::{centered, overlay_frame, put_line, sel_style, select_line};
use crate::tui::files::tree::window_offset;
use crate::tui::keymap::Context;
use crate::tui::widgets::wrap::{draw_top_down, Row as TextRow};

fn plain(text: impl Into<String>, style: Style) -> TextRow {
    (Line::from(Span::styled(text.into(), style)), 0)
}

/// "2026-12-02 07:21:03" from an RFC 3339 time.
fn when(at: &str) -> String {
    at.chars().take(19).collect::<String>().replace('T', " ")
}

fn key(app: &AppState, cmd: Command) -> String {
    app.keymap
        .key_for(cmd, &[Context::Overlay])
        .map(|k| k.notation())
        .unwrap_or_else(|| "—".into())
}

/// "agent writer", "author": who made a change.
fn who(e: &Entry) -> String {
    if e.new.actor == "author" {
        "author".into()
    } else {
        format!("agent {}", e.new.profile)
    }
}

/// A short mark before the tool, so it survives a narrow list: `↩#5 ` reverted by #5,
/// `✗ ` not revertible.
fn status(e: &Entry, t: &crate::tui::theme::Theme) -> Span<'static> {
    match (&e.new.not_revertible, e.reverted_by) {
        (Some(_), _) => Span::styled("✗ ", t.dim),
        (None, Some(r)) => Span::styled(format!("↩#{r} "), t.dim),
        (None, None) => Span::raw(""),
    }
}

fn list_line(app: &AppState, row: &Row<'_>) -> Line<'static> {
    let t = &app.theme;
    match row {
        Row::Grant(g) => Line::from(vec![
            Span::styled("grant ", t.tool_wait),
            Span::styled(g.tool.clone(), t.tool),
            Span::raw(format!(" {} ", g.target)),
            Span::styled(
                format!("session {}", crate::tui::sessions::short_id(&g.session_id)),
                t.dim,
            ),
        ]),
        Row::Entry(e) => Line::from(vec![
            Span::styled(format!("#{:<4}", e.id), t.dim),
            Span::styled(
                format!("{} ", when(&e.at).get(11..).unwrap_or_default()),
                t.dim,
            ),
            status(e, t),
            Span::styled(e.new.tool.clone(), t.tool),
            Span::raw(format!(
                " {}",
                crate::tui::approvals::cut(&e.new.summary, 120)
            )),
        ]),
    }
}

/// The rows of a preview (file diffs from the view's parsed diffs).
fn preview_items<'a>(
    app: &'a AppState,
    h: &'a HistoryOverlay,
    p: &'a Preview,
    out: &mut Vec<Item<'a>>,
) {
    let t = &app.theme;
    match &p.body {
        PreviewBody::Files { changes } => files_items(changes, &h.diffs, false, None, &[], t, out),
        body => out.extend(body_rows(body, &p.summary, t).into_iter().map(Item::Row)),
    }
}

/// The facts of an entry: who, where, when, the decision and its rule, targets, state.
fn facts(app: &AppState, e: &Entry) -> Vec<TextRow> {
    let t = &app.theme;
    let mut rows = vec![
        (
            Line::from(vec![
                Span::styled(format!("#{} ", e.id), t.diff_header),
                Span::styled(e.new.tool.clone(), t.tool.patch(t.diff_header)),
                Span::styled(format!(" — {}", e.new.summary), t.diff_header),
            ]),
            2,
        ),
        plain(
            format!(
                "by {} · session {} · {}",
                who(e),
                e.new.session_id,
                when(&e.at)
            ),
            t.text,
        ),
        plain(
            format!("decision: {} · rule: {}", e.new.decision, e.new.rule),
            t.text,
        ),
        plain(format!("targets: {}", e.new.targets.join(", ")), t.dim),
    ];
    let state = match (&e.new.not_revertible, e.reverted_by, e.new.reverts) {
        (Some(why), _, _) => format!("not revertible: {why}"),
        (None, Some(r), _) => format!(
            "reverted by #{r} ({} on #{r} brings it back)",
            key(app, Command::HistoryUndo)
        ),
        (None, None, Some(x)) => format!("applied — it reverted #{x}"),
        (None, None, None) => "applied".to_string(),
    };
    rows.push(plain(state, t.dim));
    rows.push(plain("", t.text));
    rows
}

fn draw_items(app: &AppState, items: &[Item<'_>], scroll: usize, area: Rect, buf: &mut Buffer) {
    let skip = scroll.min(items.len().saturating_sub(1));
    draw_top_down(area, buf, pv::rows(app, &items[skip..], area.width));
}

fn footer(app: &AppState, h: &HistoryOverlay) -> Line<'static> {
    let t = &app.theme;
    let k = |c| Span::styled(key(app, c), t.key_hint);
    let busy = h.ticket.is_some();
    let mut spans = match &h.shown {
        Shown::List => vec![
            k(Command::Confirm),
            Span::raw(" the change full-screen   "),
            k(Command::HistoryUndo),
            Span::raw(" revert it / revoke the grant   "),
            k(Command::Cancel),
            Span::raw(" close"),
        ],
        Shown::Applied => vec![k(Command::Cancel), Span::raw(" back to the list")],
        Shown::Reverse { result: Ok(_), .. } => vec![
            k(Command::Confirm),
            Span::raw(" revert exactly this   "),
            k(Command::Cancel),
            Span::raw(" keep it"),
        ],
        Shown::Reverse { result: Err(r), .. } if !r.plan.is_empty() => vec![
            k(Command::Confirm),
            Span::raw(format!(" revert all {}, newest first   ", r.plan.len())),
            k(Command::Cancel),
            Span::raw(" keep them"),
        ],
        Shown::Reverse { .. } => vec![k(Command::Cancel), Span::raw(" back to the list")],
        Shown::Revoke(_) => vec![
            k(Command::Confirm),
            Span::raw(" revoke the grant   "),
            k(Command::Cancel),
            Span::raw(" keep it"),
        ],
    };
    if busy {
        spans.push(Span::styled("   working…", t.dim));
    }
    Line::from(spans)
}

pub fn draw(app: &AppState, h: &HistoryOverlay, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let r = centered(
        area,
        area.width.saturating_sub(2),
        area.height.saturating_sub(1),
    );
    let title = match &h.shown {
        Shown::List | Shown::Applied => "History — every applied change, newest first".to_string(),
        Shown::Reverse { id, .. } => format!("Revert #{id}? — what reverting it changes"),
        Shown::Revoke(_) => "Revoke the grant?".to_string(),
    };
    let inside = overlay_frame(&title, r, buf, t);
    if inside.height < 3 {
        return;
    }
    let body = Rect::new(inside.x, inside.y, inside.width, inside.height - 2);
    put_line(buf, inside, inside.height - 1, &footer(app, h));
    if let Some(e) = &h.error {
        put_line(
            buf,
            body,
            0,
            &Line::from(Span::styled(
                format!("The history cannot be read: {e}"),
                t.status_error,
            )),
        );
        return;
    }
    match &h.shown {
        Shown::List => draw_list(app, h, body, buf),
        Shown::Applied => {
            if let Some(e) = h.selected_entry() {
                let mut items: Vec<Item> = facts(app, e).into_iter().map(Item::Row).collect();
                applied_items(app, h, e, &mut items);
                draw_items(app, &items, h.scroll, body, buf);
            }
        }
        Shown::Reverse { id, result } => {
            let mut items: Vec<Item> = Vec::new();
            match result {
                Ok(p) => {
                    items.push(Item::Row(plain(
                        format!("Reverting #{id} makes exactly this change (as the author, logged, undoable):"),
                        t.diff_header,
                    )));
                    items.push(Item::Row(plain("", t.text)));
                    preview_items(app, h, p, &mut items);
                }
                Err(refusal) => {
                    items.push(Item::Row(plain(refusal.message.clone(), t.status_error)));
                    items.push(Item::Row(plain("", t.text)));
                    if !refusal.plan.is_empty() {
                        let plan = refusal
                            .plan
                            .iter()
                            .map(|i| format!("#{i}"))
                            .collect::<Vec<_>>()
                            .join(" → ");
                        items.push(Item::Row(plain(
                            format!("Revert all of them, newest first: {plan}"),
                            t.text,
                        )));
                    }
                }
            }
            draw_items(app, &items, h.scroll, body, buf);
        }
        Shown::Revoke(g) => {
            let rows = [
                plain(
                    format!(
                        "Revoke the grant for {} on {} in session {}?",
                        g.tool, g.target, g.session_id
                    ),
                    t.diff_header,
                ),
                plain("", t.text),
                plain(
                    "The session's next such call waits for your approval again.",
                    t.text,
                ),
            ];
            draw_top_down(body, buf, rows);
        }
    }
}

/// An entry's applied change: its preview as recorded, or a note when it kept none.
fn applied_items<'a>(
    app: &'a AppState,
    h: &'a HistoryOverlay,
    e: &'a Entry,
    out: &mut Vec<Item<'a>>,
) {
    match &e.new.preview {
        Some(p) => preview_items(app, h, p, out),
        None => out.push(Item::Row(plain(
            "(no preview was recorded for this change)",
            app.theme.dim,
        ))),
    }
}

fn draw_list(app: &AppState, h: &HistoryOverlay, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    if h.is_empty() {
        let text = if h.ticket.is_some() {
            "Loading the history…"
        } else {
            "No change has been applied to this project yet. Approved changes (files, story records, world slices, SQL writes) show here, newest first."
        };
        draw_top_down(area, buf, [plain(text, t.dim)]);
        return;
    }
    let left_w = (area.width * 45 / 100).max(20).min(area.width);
    let list = Rect::new(area.x, area.y, left_w, area.height);
    let right = Rect::new(
        area.x + left_w + 1,
        area.y,
        area.width.saturating_sub(left_w + 1),
        area.height,
    );
    let rows = list.height as usize;
    let off = window_offset(h.offset, h.selected, rows, h.len());
    for i in 0..rows.min(h.len().saturating_sub(off)) {
        let Some(row) = h.row(off + i) else { break };
        let mut line = list_line(app, &row);
        if off + i == h.selected {
            line = select_line(line, sel_style(app, true));
            buf.set_style(
                Rect::new(list.x, list.y + i as u16, list.width, 1),
                sel_style(app, true),
            );
        }
        put_line(buf, list, i as u16, &line);
    }
    match h.row(h.selected) {
        Some(Row::Entry(e)) => {
            let mut items: Vec<Item> = facts(app, e).into_iter().map(Item::Row).collect();
            applied_items(app, h, e, &mut items);
            draw_items(app, &items, h.scroll, right, buf);
        }
        Some(Row::Grant(g)) => {
            let rows = [
                plain(format!("Grant: {} on {}", g.tool, g.target), t.diff_header),
                plain(format!("session {}", g.session_id), t.text),
                plain("", t.text),
                plain(
                    format!(
                        "You approved this for the rest of the session: such calls run without asking. {} revokes it.",
                        key(app, Command::HistoryUndo)
                    ),
                    t.dim,
                ),
            ];
            draw_top_down(right, buf, rows);
        }
        None => {}
    }
}
