//! Overlays drawn over the panes: help (generated from the active keymap), the command
//! palette, the file finder, the quit dialog, the reject-reason prompt, the argument editor,
//! the full-screen approval detail and the search prompt over a preview.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use ratatui::Frame;

use crate::tui::action::Command;
use crate::tui::app::AppState;
use crate::tui::approvals::preview::{note_width, rows, Item, Where};
use crate::tui::approvals::view::{option_rows, request_items};
use crate::tui::chrome::{centered, highlighted, overlay_frame, put_line};
use crate::tui::commands::key_of;
use crate::tui::input::Overlay;
use crate::tui::keymap::Context;
use crate::tui::widgets::wrap::Row;
use crate::tui::widgets::wrap::{draw_top_down, pad_width, wrap_line};

pub fn draw_overlay(app: &AppState, area: Rect, f: &mut Frame) {
    let Some(o) = &app.overlay else { return };
    let buf = f.buffer_mut();
    let t = &app.theme;
    match o {
        Overlay::Help { scroll } => {
            let r = centered(
                area,
                area.width.saturating_sub(4).max(20),
                area.height.saturating_sub(2),
            );
            let inside = overlay_frame("Keys — Esc closes", r, buf, t);
            let rows = help_rows(app);
            let skip = (*scroll).min(rows.len().saturating_sub(inside.height as usize));
            draw_top_down(inside, buf, rows.into_iter().skip(skip));
        }
        Overlay::Palette {
            input,
            selected,
            matches,
        } => {
            let r = centered(area, 76, area.height.saturating_sub(4).min(22));
            let inside = overlay_frame("Command palette — Enter runs · Esc closes", r, buf, t);
            draw_input_row(input, inside, buf);
            for (i, (cmd, m)) in matches
                .iter()
                .enumerate()
                .skip(list_start(*selected, inside))
                .take(list_height(inside))
            {
                let y = (i - list_start(*selected, inside)) as u16 + 2;
                let key = app
                    .keymap
                    .key_for(*cmd, &[app.focus.context(), Context::Global])
                    .map(|k| k.notation())
                    .unwrap_or_default();
                let desc_len = cmd.description().chars().count() as u32;
                let idx: Vec<u32> = m
                    .indices
                    .iter()
                    .copied()
                    .filter(|i| *i < desc_len)
                    .collect();
                let mut spans = highlighted(cmd.description(), &idx, t.text, t.matched);
                spans.push(Span::styled(format!("  {} {key}", cmd.name()), t.dim));
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
            if matches.is_empty() {
                put_line(
                    buf,
                    inside,
                    2,
                    &Line::from(Span::styled("no action matches", t.dim)),
                );
            }
        }
        Overlay::Finder {
            input,
            selected,
            matches,
            ticket,
        } => {
            let r = centered(area, 90, area.height.saturating_sub(4).min(26));
            let count = match &app.files.all_paths {
                Some(p) => crate::text::count(p.len(), "file", "files"),
                None => "collecting file names…".into(),
            };
            let busy = if ticket.is_some() {
                " · matching…"
            } else {
                ""
            };
            let inside = overlay_frame(&format!("Find a file — {count}{busy}"), r, buf, t);
            draw_input_row(input, inside, buf);
            let start = list_start(*selected, inside);
            for (i, m) in matches
                .iter()
                .enumerate()
                .skip(start)
                .take(list_height(inside))
            {
                let y = (i - start) as u16 + 2;
                let mut line = Line::from(highlighted(&m.text, &m.indices, t.text, t.matched));
                if i == *selected {
                    line = line.style(t.selection);
                    buf.set_style(
                        Rect::new(inside.x, inside.y + y, inside.width, 1),
                        t.selection,
                    );
                }
                put_line(buf, inside, y, &line);
            }
            if matches.is_empty() && app.files.all_paths.is_some() {
                put_line(
                    buf,
                    inside,
                    2,
                    &Line::from(Span::styled("no file matches", t.dim)),
                );
            }
        }
        Overlay::ModelSetup(form) => crate::tui::sessions::setup::draw(app, form, area, buf),
        Overlay::ConfirmQuit { lines } => {
            let r = centered(area, 64, lines.len() as u16 + 6);
            let inside = overlay_frame("Quit nbook?", r, buf, t);
            let mut rows: Vec<Row> = lines.iter().map(|l| (Line::from(l.clone()), 0)).collect();
            rows.push((Line::from(""), 0));
            rows.push((
                Line::from(vec![
                    Span::styled(key(app, Command::Confirm, Context::Overlay), t.key_hint),
                    Span::raw(" quit   "),
                    Span::styled(key(app, Command::Cancel, Context::Overlay), t.key_hint),
                    Span::raw(" stay"),
                ]),
                0,
            ));
            draw_top_down(inside, buf, rows);
        }
        Overlay::RejectReason {
            label,
            input,
            parts,
            call_id,
        } => {
            // One row, or as many as a reason written in the editor has (up to six).
            let rows = input.lines().len().clamp(1, 6) as u16;
            let r = centered(area, 72, 6 + rows);
            let (title, ask, enter) = match parts {
                Some(sel) => {
                    let kept = app
                        .approvals
                        .get(call_id)
                        .and_then(|c| crate::engine::parts::check(&c.preview, sel).ok())
                        .map(|k| k.summary())
                        .unwrap_or_default();
                    (
                        format!("Apply only the kept parts of {label}?"),
                        format!("Keeping {kept}. Reason for the agent (optional):"),
                        " applies the kept parts   ",
                    )
                }
                None => (
                    format!("Reject {label}?"),
                    "Reason for the agent (optional):".to_string(),
                    " rejects   ",
                ),
            };
            let inside = overlay_frame(&title, r, buf, t);
            put_line(buf, inside, 0, &Line::from(Span::styled(ask, t.dim)));
            if inside.height > 1 {
                let h = rows.min(inside.height.saturating_sub(2)).max(1);
                input.render(Rect::new(inside.x, inside.y + 1, inside.width, h), buf);
            }
            let hint = Line::from(vec![
                Span::styled(key(app, Command::Accept, Context::Input), t.key_hint),
                Span::raw(enter),
                Span::styled(key(app, Command::Cancel, Context::Input), t.key_hint),
                Span::raw(" keeps the call waiting   "),
                Span::styled(
                    key(app, Command::ExternalEditor, Context::Input),
                    t.key_hint,
                ),
                Span::raw(" your editor"),
            ]);
            put_line(buf, inside, inside.height.saturating_sub(1), &hint);
        }
        Overlay::EditArgs {
            tool,
            input,
            error,
            checking,
            ..
        } => {
            let r = centered(
                area,
                area.width.saturating_sub(6).max(20),
                area.height.saturating_sub(4),
            );
            let inside = overlay_frame(&format!("Edit the arguments of {tool}"), r, buf, t);
            let mut foot: Vec<Line<'static>> = Vec::new();
            if let Some(e) = error {
                foot.extend(wrap_line(
                    &Line::from(Span::styled(e.clone(), t.input_error)),
                    inside.width as usize,
                    2,
                ));
            }
            let status = if *checking {
                Line::from(Span::styled(
                    "checking the arguments with the engine…",
                    t.status_info,
                ))
            } else {
                Line::from(vec![
                    Span::styled(key(app, Command::Submit, Context::Input), t.key_hint),
                    Span::raw(" approve with these arguments   "),
                    Span::styled(key(app, Command::Cancel, Context::Input), t.key_hint),
                    Span::raw(" cancel (the call keeps waiting)   "),
                    Span::styled(
                        key(app, Command::ExternalEditor, Context::Input),
                        t.key_hint,
                    ),
                    Span::raw(" your editor"),
                ])
            };
            foot.push(status);
            let foot_h = (foot.len() as u16).min(inside.height / 2);
            let edit = Rect::new(inside.x, inside.y, inside.width, inside.height - foot_h);
            input.render(edit, buf);
            for (i, l) in foot.iter().take(foot_h as usize).enumerate() {
                put_line(buf, inside, inside.height - foot_h + i as u16, l);
            }
        }
        Overlay::Story(o) => crate::tui::story::view::overlays::draw_overlay(app, o, area, buf),
        Overlay::Answer(form) => {
            crate::tui::widgets::forms::view::draw_answer_form(app, form, area, buf)
        }
        Overlay::NewSession(form) => {
            crate::tui::widgets::forms::view::draw_new_session(app, form, area, buf)
        }
        Overlay::World(o) => crate::tui::world::view::draw_overlay(app, o, area, buf),
        Overlay::Board(o) => crate::tui::board::view::draw_overlay(app, o, area, buf),
        Overlay::History(h) => crate::tui::history::view::draw(app, h, area, buf),
        Overlay::Trust(p) => crate::tui::chrome::trust::draw(app, p, area, buf),
        Overlay::Detail { call_id, scroll } => draw_request(app, call_id, *scroll, area, buf),
        Overlay::Messages { scroll } => crate::tui::chrome::messages::draw(app, *scroll, area, buf),
        Overlay::DiffSearch { input, back } => {
            if let Some((call_id, scroll)) = back {
                draw_request(app, call_id, *scroll, area, buf);
            }
            let r = centered(area, 72, 5);
            let inside = overlay_frame("Search the preview", r, buf, t);
            draw_input_row(input, inside, buf);
            let hint = Line::from(vec![
                Span::styled(key(app, Command::Accept, Context::Input), t.key_hint),
                Span::raw(" finds the next match   "),
                Span::styled(key(app, Command::Cancel, Context::Input), t.key_hint),
                Span::raw(" cancels"),
            ]);
            put_line(buf, inside, inside.height.saturating_sub(1), &hint);
        }
    }
}

/// The full-screen request: everything [`detail_items`] lists, from `scroll` on.
fn draw_request(app: &AppState, call_id: &str, scroll: usize, area: Rect, buf: &mut Buffer) {
    let r = request_frame(area);
    let inside = overlay_frame("Request — Esc closes", r, buf, &app.theme);
    let Some(call) = app.approvals.get(call_id) else {
        put_line(
            buf,
            inside,
            0,
            &Line::from("This call is no longer waiting."),
        );
        return;
    };
    note_width(app, Where::Detail, inside.width);
    let items = detail_items(app, call, inside.width);
    let skip = scroll.min(items.len().saturating_sub(1));
    draw_top_down(inside, buf, rows(app, &items[skip..], inside.width));
}

fn key(app: &AppState, cmd: Command, ctx: Context) -> String {
    app.keymap
        .key_for(cmd, &[ctx])
        .map(|k| k.notation())
        .unwrap_or_else(|| "—".into())
}

fn draw_input_row(input: &tui_textarea::TextArea<'static>, inside: Rect, buf: &mut Buffer) {
    if inside.height == 0 {
        return;
    }
    input.render(Rect::new(inside.x, inside.y, inside.width, 1), buf);
    if inside.height > 1 {
        let rule = "─".repeat(inside.width as usize);
        buf.set_string(
            inside.x,
            inside.y + 1,
            rule,
            ratatui::style::Style::default().add_modifier(ratatui::style::Modifier::DIM),
        );
    }
}

fn list_height(inside: Rect) -> usize {
    inside.height.saturating_sub(2) as usize
}

fn list_start(selected: usize, inside: Rect) -> usize {
    let h = list_height(inside).max(1);
    selected.saturating_sub(h - 1)
}

/// One row of help: a command, its keys in one keymap section, its description, and whether
/// the focused pane can run it now (`false` only for what the pane reports unavailable).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HelpEntry {
    pub cmd: Command,
    pub keys: Vec<String>,
    pub desc: String,
    pub available: bool,
}

/// Help's sections: the focused pane's keymap sections first (each row marked with the pane's
/// report, and a row for every reported command no key of the section reaches), then global
/// keys, then every other section.
pub fn help_sections(app: &AppState) -> Vec<(Context, Vec<HelpEntry>)> {
    let report = app.pane_commands();
    let pane = app.pane_contexts();
    let mut order = pane.clone();
    if !order.contains(&Context::Global) {
        order.push(Context::Global);
    }
    for c in Context::ALL {
        if !order.contains(&c) {
            order.push(c);
        }
    }
    let mut sections: Vec<(Context, Vec<HelpEntry>)> = Vec::new();
    for ctx in order {
        let mut entries: Vec<HelpEntry> = Vec::new();
        for b in app.keymap.bindings(ctx) {
            match entries.iter_mut().find(|e| e.cmd == b.cmd) {
                Some(e) => e.keys.push(b.key.notation()),
                None => entries.push(HelpEntry {
                    cmd: b.cmd,
                    keys: vec![b.key.notation()],
                    desc: b.desc.clone(),
                    available: true,
                }),
            }
        }
        if pane.contains(&ctx) {
            for e in &mut entries {
                if let Some(pc) = report.iter().find(|pc| pc.cmd == e.cmd) {
                    e.available = pc.available;
                }
            }
        }
        sections.push((ctx, entries));
    }
    // A reported command whose drawn key no shown row carries (unbound, or bound only where
    // the pane's lookup does not reach) gets its own row in the pane's first section.
    for pc in &report {
        let key = key_of(app, pc);
        let shown = sections.iter().any(|(_, es)| {
            es.iter()
                .any(|e| e.cmd == pc.cmd && key.as_ref().is_none_or(|k| e.keys.contains(k)))
        });
        if !shown {
            if let Some((_, first)) = sections.first_mut() {
                first.push(HelpEntry {
                    cmd: pc.cmd,
                    keys: vec![key.unwrap_or_else(|| "—".into())],
                    desc: pc.cmd.description().to_string(),
                    available: pc.available,
                });
            }
        }
    }
    sections
}

/// Help: notices, then [`help_sections`] as styled rows; what the focused pane cannot do
/// now is dimmed and says so.
pub fn help_rows(app: &AppState) -> Vec<Row> {
    let t = &app.theme;
    let mut rows: Vec<Row> = Vec::new();
    for n in &app.notices {
        rows.push((Line::from(Span::styled(n.clone(), t.status_error)), 2));
    }
    for (ctx, entries) in help_sections(app) {
        if entries.is_empty() {
            continue;
        }
        let label = match ctx {
            Context::Input => "input (text fields)".to_string(),
            Context::Overlay => "overlay (dialogs and this help)".to_string(),
            Context::Transcript => "transcript (Sessions, after l)".to_string(),
            Context::Jobs => "jobs (Sessions, after b)".to_string(),
            Context::Inbox => "inbox (Board, after I)".to_string(),
            Context::Composer => "composer (Sessions, after i or Enter)".to_string(),
            Context::DiffSearch => "diff_search (an approval preview, after /)".to_string(),
            Context::Form => {
                "form (answering a question, a new session; 1–9 pick an option)".to_string()
            }
            c => c.name().to_string(),
        };
        rows.push((
            Line::from(Span::styled(format!("[{label}]"), t.heading2)),
            0,
        ));
        for e in entries {
            // Padded by display columns, so a wide key (a CJK binding) keeps the column.
            let keys = format!("  {}", pad_width(&e.keys.join(", "), 22));
            let line = if e.available {
                Line::from(vec![Span::styled(keys, t.key_hint), Span::raw(e.desc)])
            } else {
                Line::from(vec![
                    Span::styled(keys, t.dim),
                    Span::styled(format!("{} (not now)", e.desc), t.dim),
                ])
            };
            rows.push((line, 24));
        }
    }
    rows
}

/// The full-screen request's frame in a screen of `area`.
fn request_frame(area: Rect) -> Rect {
    centered(
        area,
        area.width.saturating_sub(2),
        area.height.saturating_sub(1),
    )
}

/// The rows inside the full-screen request's frame in a screen of `area`.
pub fn request_inside(area: Rect) -> Rect {
    ratatui::widgets::Block::bordered().inner(request_frame(area))
}

/// The first of `items` on the last screenful `height` rows tall at `width`: scrolling
/// further would leave rows under the end blank (`G` went there and showed one line).
pub fn last_page_start(app: &AppState, items: &[Item], width: u16, height: usize) -> usize {
    let mut used = 0;
    for i in (0..items.len()).rev() {
        used += item_height(app, items, i, width);
        if used > height {
            return (i + 1).min(items.len().saturating_sub(1));
        }
    }
    0
}

/// The screen rows item `i` takes at `width`.
fn item_height(app: &AppState, items: &[Item], i: usize, width: u16) -> usize {
    rows(app, &items[i..=i], width)
        .map(|(l, indent)| wrap_line(&l, width as usize, indent).len())
        .sum()
}

/// Where a page down from `from` starts: the first item not wholly shown on the screenful
/// `height` rows tall that starts at `from` (at least one item on), so paging by source
/// lines never skips a line however long the wrapped ones are.
pub fn page_down_from(
    app: &AppState,
    items: &[Item],
    width: u16,
    height: usize,
    from: usize,
) -> usize {
    let mut used = 0;
    let mut i = from;
    while i < items.len() {
        used += item_height(app, items, i, width);
        if used > height {
            break;
        }
        i += 1;
    }
    i.max(from + 1).min(items.len().saturating_sub(1))
}

/// Where a page up from `from` starts: the earliest item such that it and the items down to
/// `from` (excluded) fit in `height` rows (at least one item back).
pub fn page_up_from(
    app: &AppState,
    items: &[Item],
    width: u16,
    height: usize,
    from: usize,
) -> usize {
    let from = from.min(items.len());
    let mut used = 0;
    let mut i = from;
    while i > 0 {
        used += item_height(app, items, i - 1, width);
        if used > height {
            break;
        }
        i -= 1;
    }
    if i == from {
        from.saturating_sub(1)
    } else {
        i
    }
}

/// Everything the full-screen detail shows: the request, the arguments, the options.
pub fn detail_items<'a>(
    app: &'a AppState,
    call: &'a crate::engine::PendingCall,
    width: u16,
) -> Vec<Item<'a>> {
    let t = &app.theme;
    let mut items = request_items(app, call, width);
    let mut rows: Vec<Row> = vec![
        (Line::from(""), 0),
        (Line::from(Span::styled("Arguments", t.heading2)), 0),
    ];
    let pretty = serde_json::to_string_pretty(&call.args).unwrap_or_default();
    rows.extend(
        pretty
            .lines()
            .map(|l| (Line::from(Span::styled(l.to_string(), t.code)), 2)),
    );
    rows.push((Line::from(""), 0));
    items.extend(rows.into_iter().map(Item::Row));
    items.extend(option_rows(app, call).into_iter().map(Item::Plain));
    items
}
