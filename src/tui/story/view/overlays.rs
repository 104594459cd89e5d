//! The Story pane's overlays: the title search (nucleo matches highlighted), the JSON edit
//! form with its error, the confirmation of an archive or delete listing what changes or
//! cascades, and the note prompt of a dropped decision. Key hints come from the keymap.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::tui::action::Command;
use crate::tui::app::AppState;
use crate::tui::chrome::{centered, highlighted, overlay_frame, put_line, thousands};
use crate::tui::keymap::Context;
use crate::tui::story::edit::StoryWrite;
use crate::tui::story::overlay::StoryOverlay;
use crate::tui::widgets::wrap::Row;
use crate::tui::widgets::wrap::{draw_top_down, wrap_line};

/// The keys bound to `cmd` in `ctx` ("<Esc>/q/n"), at most three.
fn key(app: &AppState, cmd: Command, ctx: Context) -> String {
    let keys: Vec<String> = app
        .keymap
        .bindings(ctx)
        .iter()
        .filter(|b| b.cmd == cmd)
        .take(3)
        .map(|b| b.key.notation())
        .collect();
    if keys.is_empty() {
        "—".into()
    } else {
        keys.join("/")
    }
}

fn hint(app: &AppState, parts: &[(Command, Context, &str)]) -> Line<'static> {
    let t = &app.theme;
    let mut spans = Vec::new();
    for (cmd, ctx, text) in parts {
        spans.push(Span::styled(key(app, *cmd, *ctx), t.key_hint));
        spans.push(Span::raw(format!(" {text}   ")));
    }
    Line::from(spans)
}

pub fn draw_overlay(app: &AppState, o: &StoryOverlay, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    match o {
        StoryOverlay::Search {
            input,
            selected,
            hits,
            ticket,
        } => {
            let r = centered(area, 90, area.height.saturating_sub(4).min(26));
            let items = app.story.search_index.as_ref();
            let count = match items {
                Some(i) => format!(
                    "{} {}",
                    thousands(i.len() as i64),
                    crate::text::noun(i.len(), "title", "titles")
                ),
                None => "collecting titles…".into(),
            };
            let busy = if ticket.is_some() {
                " · matching…"
            } else {
                ""
            };
            let inside = overlay_frame(&format!("Find in the story — {count}{busy}"), r, buf, t);
            if inside.height == 0 {
                return;
            }
            input.render(Rect::new(inside.x, inside.y, inside.width, 1), buf);
            if inside.height > 1 {
                let rule = "─".repeat(inside.width as usize);
                buf.set_string(inside.x, inside.y + 1, rule, t.dim);
            }
            let h = inside.height.saturating_sub(2) as usize;
            let start = selected.saturating_sub(h.max(1) - 1);
            let Some(items) = items else { return };
            for (i, hit) in hits.iter().enumerate().skip(start).take(h) {
                let Some(item) = items.get(hit.item) else {
                    continue;
                };
                let y = (i - start) as u16 + 2;
                let mut spans = vec![Span::styled(format!("{:<9}", item.kind()), t.dim)];
                spans.extend(highlighted(&item.title, &hit.indices, t.text, t.matched));
                let mut line = Line::from(spans);
                if i == *selected {
                    line = line.style(t.selection);
                    buf.set_style(
                        Rect::new(inside.x, inside.y + y, inside.width, 1),
                        t.selection,
                    );
                }
                put_line(buf, inside, y, &line);
            }
            if hits.is_empty() && ticket.is_none() {
                put_line(
                    buf,
                    inside,
                    2,
                    &Line::from(Span::styled("no title matches", t.dim)),
                );
            }
        }
        StoryOverlay::Edit {
            form,
            input,
            error,
            saving,
        } => {
            let r = centered(
                area,
                area.width.saturating_sub(6).max(20),
                area.height.saturating_sub(4),
            );
            let inside = overlay_frame(&format!("Edit {} — JSON", form.label), r, buf, t);
            let mut foot: Vec<Line<'static>> = Vec::new();
            if let Some(e) = error {
                foot.extend(wrap_line(
                    &Line::from(Span::styled(e.clone(), t.input_error)),
                    inside.width as usize,
                    2,
                ));
            }
            foot.push(if saving.is_some() {
                Line::from(Span::styled(
                    "saving through the plot services…",
                    t.status_info,
                ))
            } else {
                hint(
                    app,
                    &[
                        (Command::Submit, Context::Input, "save"),
                        (Command::Cancel, Context::Input, "cancel"),
                    ],
                )
            });
            foot.push(Line::from(Span::styled(
                "null clears a field · a deleted line keeps its value · only changed fields are saved",
                t.dim,
            )));
            let foot_h = (foot.len() as u16).min(inside.height / 2);
            let edit = Rect::new(inside.x, inside.y, inside.width, inside.height - foot_h);
            input.render(edit, buf);
            for (i, l) in foot.iter().take(foot_h as usize).enumerate() {
                put_line(buf, inside, inside.height - foot_h + i as u16, l);
            }
        }
        StoryOverlay::Confirm {
            title,
            lines,
            write,
            scroll,
            ..
        } => {
            let h = (lines.len() as u16 + 4).min(area.height.saturating_sub(2));
            let r = centered(area, 76, h.max(6));
            let inside = overlay_frame(title, r, buf, t);
            if inside.height == 0 {
                return;
            }
            let verb = match write {
                StoryWrite::Delete { .. } => "delete for good",
                StoryWrite::Archive { .. } => write.verb(),
                StoryWrite::Update { .. } => "save",
            };
            let foot = hint(
                app,
                &[
                    (Command::Confirm, Context::Overlay, verb),
                    (
                        Command::Cancel,
                        Context::Overlay,
                        "keep everything as it is",
                    ),
                ],
            );
            let body = Rect::new(
                inside.x,
                inside.y,
                inside.width,
                inside.height.saturating_sub(2),
            );
            let rows: Vec<Row> = lines
                .iter()
                .skip(*scroll)
                .enumerate()
                .map(|(i, l)| {
                    let style = if i + scroll == 0 { t.heading2 } else { t.text };
                    (Line::from(Span::styled(l.clone(), style)), 4)
                })
                .collect();
            draw_top_down(body, buf, rows);
            put_line(buf, inside, inside.height - 1, &foot);
        }
        StoryOverlay::Note { label, input, .. } => {
            let r = centered(area, 72, 7);
            let inside = overlay_frame(&format!("Drop {label}?"), r, buf, t);
            put_line(
                buf,
                inside,
                0,
                &Line::from(Span::styled(
                    "Why is it dropped? (a dropped decision needs a note)",
                    t.dim,
                )),
            );
            if inside.height > 1 {
                input.render(Rect::new(inside.x, inside.y + 1, inside.width, 1), buf);
            }
            let h = hint(
                app,
                &[
                    (
                        Command::Accept,
                        Context::Input,
                        "continue (shows what changes)",
                    ),
                    (Command::Cancel, Context::Input, "cancel"),
                ],
            );
            put_line(buf, inside, inside.height.saturating_sub(1), &h);
        }
    }
}
