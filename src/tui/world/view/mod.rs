//! Drawing the World pane: on the left the subjects of the chosen type; on the right the
//! timeline (the cursor, a density strip of slice counts per zoom bucket, the slices around
//! the cursor) above the selected tab — the subject's state, track, A→cursor diff, or every
//! issue with its explanation (`detail`). Only visible rows are drawn; every label was
//! formatted by `update` when its instant changed.

pub mod detail;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::tui::action::Command;
use crate::tui::app::{AppState, Pane};
use crate::tui::chrome::{centered, overlay_frame, put_line, thousands};
use crate::tui::commands::key_of;
use crate::tui::files::tree::window_offset;
use crate::tui::keymap::Context;
use crate::tui::widgets::wrap::draw_top_down;
use crate::tui::world::commands::{commands, tab_of};
use crate::tui::world::overlay::WorldOverlay;
use crate::tui::world::zoom_label;

const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

pub const EMPTY_TITLE: &str = "No world timeline yet.";
pub const EMPTY_TEXT: &str = "Agents write it with execute_world; the world.engine profile records who is where, what they carry and what happened, one slice per moment of story time.";

/// Buckets in the density strip: the width it is drawn in (the detail, or the pane itself
/// when the terminal is too narrow for a detail).
pub fn strip_width(app: &AppState) -> usize {
    let r = app.regions();
    let d = r.detail_inner().width as usize;
    if d > 0 {
        d
    } else {
        crate::tui::chrome::layout::inner(r.panes[Pane::World.index()]).width as usize
    }
}

/// Width of the tab rows in the detail.
pub fn detail_width(app: &AppState) -> usize {
    strip_width(app)
}

fn key(app: &AppState, cmd: Command) -> String {
    app.keymap
        .key_for(cmd, &[Context::World, Context::Global])
        .map(|k| k.notation())
        .unwrap_or_default()
}

/// The one-line summary of the squeezed pane.
pub fn summary(app: &AppState) -> String {
    match &app.world.meta {
        Some(m) if !m.is_empty() => format!(
            "{} {} · {} {}",
            thousands(m.subject_count),
            crate::text::noun(m.subject_count as usize, "subject", "subjects"),
            thousands(m.slice_count),
            crate::text::noun(m.slice_count as usize, "slice", "slices")
        ),
        Some(_) => "No world data yet".into(),
        None => app.world.error.clone().unwrap_or_else(|| "loading…".into()),
    }
}

pub fn detail_title(app: &AppState) -> String {
    match app.world.selected_subject() {
        Some(s) if !s.name.is_empty() => format!(" World · {} ", s.name),
        Some(s) => format!(" World · {} ", s.id),
        None => " World timeline ".into(),
    }
}

/// The empty state: short in the list, with what the pane will do in the detail.
fn empty_rows(app: &AppState, full: bool) -> Vec<(Line<'static>, usize)> {
    let t = &app.theme;
    let mut rows = vec![(Line::from(Span::styled(EMPTY_TITLE, t.heading2)), 0)];
    if !full {
        rows.push((
            Line::from(Span::styled("Agents write it with execute_world.", t.dim)),
            0,
        ));
        return rows;
    }
    rows.push((Line::from(Span::styled(EMPTY_TEXT, t.dim)), 0));
    rows.push((Line::default(), 0));
    let k = |c| key(app, c);
    rows.push((
        Line::from(Span::styled(
            format!(
                "Then {}/{} move the cursor through story time, {}/{} zoom, {} jumps to a typed time, {} filters subjects by type, {} marks instant A for a diff.",
                k(Command::WorldBack),
                k(Command::WorldForward),
                k(Command::WorldZoomIn),
                k(Command::WorldZoomOut),
                k(Command::WorldJump),
                k(Command::WorldFilter),
                k(Command::WorldMark)
            ),
            t.dim,
        )),
        0,
    ));
    rows
}

/// The left-hand list: the subjects of the chosen type.
pub fn draw_list(app: &AppState, area: Rect, buf: &mut Buffer, focused: bool) {
    let t = &app.theme;
    let w = &app.world;
    let Some(meta) = &w.meta else {
        let text = w.error.clone().unwrap_or_else(|| "loading…".into());
        let style = if w.error.is_some() {
            t.status_error
        } else {
            t.dim
        };
        draw_top_down(area, buf, [(Line::from(Span::styled(text, style)), 0)]);
        return;
    };
    if meta.is_empty() {
        draw_top_down(area, buf, empty_rows(app, false));
        return;
    }
    let total = match &w.filter {
        Some(f) => meta
            .types
            .iter()
            .find(|x| &x.0 == f)
            .map(|x| x.1)
            .unwrap_or(0),
        None => meta.subject_count,
    };
    let label = w.filter.clone().unwrap_or_else(|| "all types".into());
    let head = Line::from(vec![
        Span::styled(format!("{label} ({})", thousands(total)), t.heading2),
        Span::styled(
            format!(
                " · {} {}",
                thousands(meta.slice_count),
                crate::text::noun(meta.slice_count as usize, "slice", "slices")
            ),
            t.dim,
        ),
    ]);
    put_line(buf, area, 0, &head);
    let list_area = Rect::new(
        area.x,
        area.y + 1,
        area.width,
        area.height.saturating_sub(1),
    );
    let Some(list) = w.subject_list() else {
        let text = match (&w.subjects.error, &w.subjects.in_flight) {
            (Some(e), _) => e.clone(),
            (None, Some(_)) => "loading…".into(),
            (None, None) => format!("{} opens the timeline", key(app, Command::FocusWorld)),
        };
        put_line(buf, list_area, 0, &Line::from(Span::styled(text, t.dim)));
        return;
    };
    if list.is_empty() {
        put_line(
            buf,
            list_area,
            0,
            &Line::from(Span::styled("No subjects of this type.", t.dim)),
        );
        return;
    }
    let h = list_area.height as usize;
    let off = window_offset(w.offset, w.selected, h, list.len());
    let sel = if focused {
        t.selection
    } else {
        t.selection_unfocused
    };
    for (i, s) in list.iter().enumerate().skip(off).take(h) {
        let mut spans = vec![Span::raw(s.id.clone())];
        if !s.name.is_empty() && s.name != s.id {
            spans.push(Span::styled(format!("  {}", s.name), t.text));
        }
        if w.filter.is_none() {
            spans.push(Span::styled(format!("  {}", s.kind), t.dim));
        }
        let mut line = Line::from(spans);
        let y = (i - off) as u16;
        if i == w.selected {
            line = line.style(sel);
            buf.set_style(
                Rect::new(list_area.x, list_area.y + y, list_area.width, 1),
                sel,
            );
        }
        put_line(buf, list_area, y, &line);
    }
}

/// Rows left for the tab under the timeline.
pub fn tab_height(app: &AppState) -> usize {
    let h = app.regions().detail_inner().height;
    (h as usize).saturating_sub(4 + slice_rows(h))
}

/// Slice rows shown under the strip for a detail `h` rows high.
pub fn slice_rows(h: u16) -> usize {
    ((h.saturating_sub(5) / 3) as usize).clamp(2, 10)
}

/// The right-hand view: the timeline, then the tab.
pub fn draw_detail(app: &AppState, area: Rect, buf: &mut Buffer) {
    let w = &app.world;
    let t = &app.theme;
    match &w.meta {
        None => {
            let text = w.error.clone().unwrap_or_else(|| "loading…".into());
            draw_top_down(area, buf, [(Line::from(Span::styled(text, t.dim)), 0)]);
            return;
        }
        Some(m) if m.is_empty() => {
            draw_top_down(area, buf, empty_rows(app, true));
            return;
        }
        Some(_) => {}
    }
    let s = slice_rows(area.height);
    let used = draw_timeline(app, area, buf, s);
    if used >= area.height {
        return;
    }
    let tabs_y = used;
    put_line(buf, area, tabs_y, &tab_bar(app));
    let rest = Rect::new(
        area.x,
        area.y + tabs_y + 1,
        area.width,
        area.height.saturating_sub(tabs_y + 1),
    );
    let rows = crate::tui::world::view::detail::tab_rows(app, area.width as usize);
    let skip = w.detail_scroll.min(rows.len().saturating_sub(1));
    draw_top_down(rest, buf, rows.into_iter().skip(skip));
}

/// The tabs, from the pane's reported commands marked `hint` (one per tab).
fn tab_bar(app: &AppState) -> Line<'static> {
    let t = &app.theme;
    let mut spans = Vec::new();
    for pc in commands(app).iter().filter(|pc| pc.hint) {
        let style = if tab_of(pc.cmd) == Some(app.world.tab) {
            t.title_focused
        } else {
            t.dim
        };
        let key_style = if pc.available { t.key_hint } else { t.dim };
        spans.push(Span::styled(key_of(app, pc).unwrap_or_default(), key_style));
        spans.push(Span::styled(format!(" {}", pc.label), style));
        spans.push(Span::raw("  "));
    }
    Line::from(spans)
}

/// Header, strip, axis and the slices around the cursor; returns the rows used.
fn draw_timeline(app: &AppState, area: Rect, buf: &mut Buffer, s: usize) -> u16 {
    let w = &app.world;
    let t = &app.theme;
    let mut head = vec![
        Span::styled("⌖ ", t.key_hint),
        Span::styled(w.cursor_label.clone(), t.heading2),
        Span::styled(format!(" · {}", zoom_label(w.zoom)), t.dim),
    ];
    if let Some(c) = w.counts() {
        let n: i64 = c.iter().map(|x| x.1).sum();
        let noun = if n == 1 { "slice" } else { "slices" };
        head.push(Span::styled(
            format!(" · {} {noun} in view", thousands(n)),
            t.dim,
        ));
    }
    if let Some((_, label)) = &w.mark {
        head.push(Span::styled("  A", t.badge));
        head.push(Span::raw(format!(" {label}")));
    }
    put_line(buf, area, 0, &Line::from(head));
    put_line(buf, area, 1, &strip(app, area.width as usize));
    put_line(buf, area, 2, &axis(app, area.width as usize));
    let rows = slice_lines(app, s);
    let n = rows.len() as u16;
    for (i, line) in rows.into_iter().enumerate() {
        put_line(buf, area, 3 + i as u16, &line);
    }
    3 + n.max(s as u16)
}

/// Under the strip: ▲ at the cursor's bucket, A at the mark's, and the window's first and last
/// bucket where they leave the markers free.
fn axis(app: &AppState, width: usize) -> Line<'static> {
    let w = &app.world;
    let t = &app.theme;
    let mut cells: Vec<(char, Style)> = vec![(' ', t.dim); width];
    let cur = w.window.bucket_of(w.cursor).filter(|c| *c < width);
    let mark = w
        .mark
        .as_ref()
        .and_then(|m| w.window.bucket_of(m.0))
        .filter(|c| *c < width);
    let free = |from: usize, len: usize| {
        [cur, mark]
            .iter()
            .flatten()
            .all(|c| *c + 1 < from || *c > from + len)
    };
    let first: Vec<char> = w.window.first_label.chars().collect();
    let last: Vec<char> = w.window.last_label.chars().collect();
    if first.len() < width && free(0, first.len()) {
        for (i, c) in first.iter().enumerate() {
            cells[i] = (*c, t.dim);
        }
    }
    if first.len() + last.len() + 3 <= width && free(width - last.len(), last.len()) {
        for (i, c) in last.iter().enumerate() {
            cells[width - last.len() + i] = (*c, t.dim);
        }
    }
    if let Some(m) = mark {
        cells[m] = ('A', t.badge);
    }
    if let Some(c) = cur {
        cells[c] = ('▲', t.key_hint);
    }
    Line::from(
        cells
            .into_iter()
            .map(|(c, s)| Span::styled(c.to_string(), s))
            .collect::<Vec<_>>(),
    )
}

/// One cell per bucket: a bar scaled to the busiest bucket; the cursor's bucket reversed,
/// A's marked.
fn strip(app: &AppState, width: usize) -> Line<'static> {
    let w = &app.world;
    let t = &app.theme;
    let n = w.window.key.map(|k| k.buckets).unwrap_or(0).min(width);
    let counts = w.counts();
    let max = counts
        .map(|c| c.iter().map(|x| x.1).max().unwrap_or(0))
        .unwrap_or(0)
        .max(1);
    let cur = w.window.bucket_of(w.cursor);
    let mark = w.mark.as_ref().and_then(|m| w.window.bucket_of(m.0));
    let mut spans = Vec::with_capacity(n);
    for i in 0..n {
        let (ch, mut style): (char, Style) = match counts.map(|c| c.get(i).map(|x| x.1)) {
            None => ('-', t.dim),
            Some(None) | Some(Some(0)) => ('·', t.dim),
            Some(Some(c)) => {
                let level = ((c * 8 + max - 1) / max).clamp(1, 8) as usize;
                (BARS[level - 1], t.text)
            }
        };
        if mark == Some(i) {
            style = t.badge;
        }
        if cur == Some(i) {
            style = t.selection;
        }
        spans.push(Span::styled(ch.to_string(), style));
    }
    Line::from(spans)
}

/// Up to `s` slices around the cursor; the slice at or before it marked ▶, later ones dim.
fn slice_lines(app: &AppState, s: usize) -> Vec<Line<'static>> {
    let w = &app.world;
    let t = &app.theme;
    let Some(c) = w.chunk() else {
        let text = w.slices.error.clone().unwrap_or_else(|| "loading…".into());
        return vec![Line::from(Span::styled(text, t.dim))];
    };
    if c.entries.is_empty() {
        return vec![Line::from(Span::styled("No slices.", t.dim))];
    }
    // Only the slices in the strip's window.
    let (lo, hi) = match (w.window.starts.first(), w.window.starts.last()) {
        (Some(a), Some(b)) => (
            c.entries.partition_point(|e| e.instant < *a),
            c.entries.partition_point(|e| e.instant < *b),
        ),
        _ => (0, c.entries.len()),
    };
    if lo >= hi {
        return vec![Line::from(Span::styled(
            format!(
                "No slice in view; {} and {} move to the previous and next one.",
                key(app, Command::WorldPrevSlice),
                key(app, Command::WorldNextSlice)
            ),
            t.dim,
        ))];
    }
    let i = c.split(w.cursor);
    let at = i.clamp(lo, hi);
    let after = hi - at;
    let before = (at - lo).min((s / 2).max(s.saturating_sub(after)));
    let start = at - before;
    c.entries
        .iter()
        .enumerate()
        .take(hi)
        .skip(start)
        .take(s)
        .map(|(j, e)| {
            let current = j + 1 == i;
            let (mark, style) = if current {
                ("▶ ", t.heading2)
            } else if j >= i {
                ("  ", t.dim)
            } else {
                ("  ", t.text)
            };
            let mut spans = vec![
                Span::styled(mark, t.key_hint),
                Span::styled(format!("{}  ", e.time), if j >= i { t.dim } else { t.meta }),
                Span::styled(e.title.clone(), style),
            ];
            let kind = if e.kind == "event" {
                String::new()
            } else {
                format!("{} · ", e.kind)
            };
            spans.push(Span::styled(format!("  ({kind}{})", e.patch_count), t.dim));
            Line::from(spans)
        })
        .collect()
}

/// The pane: the list, with the timeline above it when there is no detail (narrow terminals).
pub fn draw_pane(app: &AppState, area: Rect, buf: &mut Buffer, focused: bool) {
    if focused && app.regions().detail.width == 0 {
        draw_narrow(app, area, buf, focused);
    } else {
        draw_list(app, area, buf, focused);
    }
}

fn draw_narrow(app: &AppState, area: Rect, buf: &mut Buffer, focused: bool) {
    if app.world.meta.as_ref().is_some_and(|m| !m.is_empty()) && area.height > 6 {
        let used = draw_timeline(app, area, buf, 2);
        let rest = Rect::new(
            area.x,
            area.y + used,
            area.width,
            area.height.saturating_sub(used),
        );
        draw_list(app, rest, buf, focused);
    } else {
        draw_list(app, area, buf, focused);
    }
}

pub fn draw_overlay(app: &AppState, o: &WorldOverlay, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    match o {
        WorldOverlay::Jump { input, error } => {
            let r = centered(area, 72, if error.is_some() { 10 } else { 6 });
            let inside = overlay_frame("Jump to a time", r, buf, t);
            put_line(
                buf,
                inside,
                0,
                &Line::from(Span::styled(
                    if app.world.jump_parse.is_some() {
                        // A script calendar reads the text in a job.
                        "Reading the time with the project's calendar script…"
                    } else {
                        "Move the cursor to (project calendar):"
                    },
                    t.dim,
                )),
            );
            if inside.height > 1 {
                input.render(Rect::new(inside.x, inside.y + 1, inside.width, 1), buf);
            }
            if let Some(e) = error {
                let area = Rect::new(
                    inside.x,
                    inside.y + 2,
                    inside.width,
                    inside.height.saturating_sub(3),
                );
                let mut rows = vec![(Line::from(Span::styled(e.clone(), t.input_error)), 0)];
                if !app.world.cursor_label.is_empty() {
                    rows.push((
                        Line::from(Span::styled(
                            format!("For example: {}", app.world.cursor_label),
                            t.dim,
                        )),
                        0,
                    ));
                }
                draw_top_down(area, buf, rows);
            }
            let hint = Line::from(vec![
                Span::styled(
                    app.keymap
                        .key_for(Command::Accept, &[Context::Input])
                        .map(|k| k.notation())
                        .unwrap_or_default(),
                    t.key_hint,
                ),
                Span::raw(" jump   "),
                Span::styled(
                    app.keymap
                        .key_for(Command::Cancel, &[Context::Input])
                        .map(|k| k.notation())
                        .unwrap_or_default(),
                    t.key_hint,
                ),
                Span::raw(" cancel"),
            ]);
            put_line(buf, inside, inside.height.saturating_sub(1), &hint);
        }
        WorldOverlay::Find {
            input,
            hits,
            selected,
        } => draw_find(app, input, hits, *selected, area, buf),
    }
}

/// The subject finder: the typed name, a rule, then the matches (kind, name with the matched
/// characters highlighted, id), the selected one highlighted, scrolled to keep it in view.
fn draw_find(
    app: &AppState,
    input: &tui_textarea::TextArea<'static>,
    hits: &[(usize, crate::tui::files::finder::FinderMatch)],
    selected: usize,
    area: Rect,
    buf: &mut Buffer,
) {
    let t = &app.theme;
    let Some(list) = app.world.subject_list() else {
        return;
    };
    let r = centered(area, 80, area.height.saturating_sub(4).min(22));
    let title = format!(
        "Find a subject — {} {}{}",
        thousands(list.len() as i64),
        crate::text::noun(list.len(), "subject", "subjects"),
        app.world
            .filter
            .as_ref()
            .map(|f| format!(" of type {f}"))
            .unwrap_or_default()
    );
    let inside = overlay_frame(&title, r, buf, t);
    if inside.height == 0 {
        return;
    }
    input.render(Rect::new(inside.x, inside.y, inside.width, 1), buf);
    if inside.height > 1 {
        buf.set_string(
            inside.x,
            inside.y + 1,
            "─".repeat(inside.width as usize),
            t.dim,
        );
    }
    let h = inside.height.saturating_sub(2) as usize;
    if hits.is_empty() {
        put_line(
            buf,
            inside,
            2,
            &Line::from(Span::styled(
                "No subject's name matches: type fewer letters, or Esc.",
                t.dim,
            )),
        );
        return;
    }
    let start = selected.saturating_sub(h.max(1) - 1);
    for (row, (i, (idx, m))) in hits.iter().enumerate().skip(start).take(h).enumerate() {
        let Some(s) = list.get(*idx) else { continue };
        let y = row as u16 + 2;
        let mut spans = vec![Span::styled(format!("{:<10} ", s.kind), t.dim)];
        spans.extend(crate::tui::chrome::highlighted(
            &s.name, &m.indices, t.text, t.matched,
        ));
        spans.push(Span::styled(format!("  {}", s.id), t.dim));
        let mut line = Line::from(spans);
        if i == selected {
            line = line.style(t.selection);
            buf.set_style(
                Rect::new(inside.x, inside.y + y, inside.width, 1),
                t.selection,
            );
        }
        put_line(buf, inside, y, &line);
    }
}
