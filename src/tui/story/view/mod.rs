//! The Story pane's list: the carrier or causal tree (with a writer-brief badge on every
//! chapter and a status mark on every thread and scene) or a ledger, drawn for the visible
//! window only from the flat row list.

pub mod detail;
mod fields;
pub mod overlays;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use crate::plot::brief::BriefStatus;
use crate::tui::app::AppState;
use crate::tui::chrome::{put_line, thousands};
use crate::tui::files::tree::window_offset;
use crate::tui::story::data::{brief_badge, status_mark, Parent};
use crate::tui::story::{RowNode, StoryView};
use crate::tui::theme::Theme;

/// The pane's border title: when focused, the view, the filter, and whether it is loading.
pub fn pane_title(app: &AppState) -> String {
    let st = &app.story;
    if app.focus != crate::tui::app::Pane::Story {
        return " 2 Story ".into();
    }
    let mut t = format!(" 2 Story · {}", st.view.label());
    if let Some(f) = st.filter() {
        t.push_str(&format!(" · {f}"));
    }
    if st.loading.is_some() && st.data.is_some() {
        t.push_str(" · loading…");
    }
    t.push(' ');
    t
}

/// The one-line summary when the pane is squeezed.
pub fn summary(app: &AppState) -> String {
    match &app.story.data {
        Some(d) if !d.is_empty() => format!(
            "{} · {} {} · {} {}",
            crate::text::count(d.overview.acts.len(), "act", "acts"),
            thousands(d.chapter_count() as i64),
            crate::text::noun(d.chapter_count(), "chapter", "chapters"),
            thousands(d.overview.scene_count as i64),
            crate::text::noun(d.overview.scene_count, "scene", "scenes"),
        ),
        Some(_) => "No story yet".into(),
        None => match &app.story.error {
            Some(e) => e.clone(),
            None => "loading…".into(),
        },
    }
}

pub fn brief_style(t: &Theme, s: BriefStatus) -> Style {
    match s {
        BriefStatus::Ready => t.tool_ok,
        BriefStatus::NeedsPlot => t.tool_err,
        _ => t.tool_wait,
    }
}

pub fn status_style(t: &Theme, status: &str) -> Style {
    match status {
        "archived" | "abandoned" | "dropped" | "superseded" => t.dim,
        "written" | "revised" | "done" | "fulfilled" | "decided" => t.tool_ok,
        "active" | "open" => t.status_info,
        _ => t.text,
    }
}

/// Cut `s` to `max` display cells, ending with "…" when cut.
pub fn fit(s: &str, max: usize) -> String {
    if s.width() <= max {
        return s.to_string();
    }
    let mut out = String::new();
    let mut w = 0;
    for c in s.chars() {
        let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if w + cw + 1 > max {
            break;
        }
        out.push(c);
        w += cw;
    }
    if max > 0 {
        out.push('…');
    }
    out
}

/// A row: `lead` spans, then the title cut to fit, then `tail` (dim) and a right-aligned
/// `badge`.
fn row_line(
    width: usize,
    lead: Vec<Span<'static>>,
    title: &str,
    title_style: Style,
    tail: String,
    badge: Option<(String, Style)>,
    dim: Style,
) -> Line<'static> {
    // Record titles are data: controls and bidi overrides in them are shown, not obeyed.
    let title = &*crate::text::escape_for_terminal(title);
    let lead_w: usize = lead.iter().map(|s| s.content.width()).sum();
    let badge_w = badge.as_ref().map(|(b, _)| b.width() + 1).unwrap_or(0);
    let mut tail = tail;
    let mut room = width.saturating_sub(lead_w + badge_w + tail.width());
    // The tail (a count) gives way first when the title would be cut short.
    if room < title.width().min(16) && !tail.is_empty() {
        tail.clear();
        room = width.saturating_sub(lead_w + badge_w);
    }
    let title = fit(title, room);
    let mut spans = lead;
    let used = lead_w + title.width() + tail.width();
    spans.push(Span::styled(title, title_style));
    spans.push(Span::styled(tail, dim));
    if let Some((b, style)) = badge {
        let pad = width.saturating_sub(used + b.width());
        spans.push(Span::raw(" ".repeat(pad)));
        spans.push(Span::styled(b, style));
    }
    Line::from(spans)
}

fn fold_icon(app: &AppState, node: RowNode) -> &'static str {
    if app.story.is_open(node) {
        "▾ "
    } else {
        "▸ "
    }
}

fn line_for(app: &AppState, node: RowNode, depth: u8, width: usize) -> Line<'static> {
    let t = &app.theme;
    let st = &app.story;
    let Some(d) = st.data.as_ref() else {
        return Line::default();
    };
    let indent = Span::raw("  ".repeat(depth as usize));
    let plain = |text: String, style: Style| {
        Line::from(vec![indent.clone(), Span::styled(fit(&text, width), style)])
    };
    // An act or phase (or the group of what has none): its fold icon, title and count.
    let heading = |title: &str, tail: String| {
        let lead = vec![indent.clone(), Span::styled(fold_icon(app, node), t.dim)];
        row_line(width, lead, title, t.heading2, tail, None, t.dim)
    };
    match node {
        RowNode::Act(id) => {
            let n = d
                .overview
                .acts
                .iter()
                .find(|(x, _)| x.id == id)
                .map_or(0, |(_, c)| c.len());
            let title = d
                .act(id)
                .map_or_else(|| format!("act #{id}"), |a| a.title.clone());
            heading(&title, format!(" ({n} ch)"))
        }
        RowNode::NoAct => heading("Chapters without an act", String::new()),
        RowNode::NoPhase => heading("Threads without a phase", String::new()),
        RowNode::Chapter(id) => {
            let Some(c) = d.chapter(id) else {
                return plain(format!("chapter #{id}"), t.dim);
            };
            let lead = vec![indent, Span::styled(fold_icon(app, node), t.dim)];
            row_line(
                width,
                lead,
                &c.chapter.title,
                t.text,
                format!(" · {}", thousands(c.scene_count as i64)),
                Some((brief_badge(c.status).to_string(), brief_style(t, c.status))),
                t.dim,
            )
        }
        RowNode::Phase(id) => {
            let n = d
                .overview
                .phases
                .iter()
                .find(|(x, _)| x.id == id)
                .map_or(0, |(_, th)| th.len());
            let title = d
                .phase(id)
                .map_or_else(|| format!("phase #{id}"), |p| p.title.clone());
            heading(
                &title,
                format!(" ({n} thread{})", if n == 1 { "" } else { "s" }),
            )
        }
        RowNode::Thread(id) => {
            let Some(th) = d.thread(id) else {
                return plain(format!("thread #{id}"), t.dim);
            };
            let s = &th.thread.status;
            let lead = vec![
                indent,
                Span::styled(fold_icon(app, node), t.dim),
                Span::styled(format!("{} ", status_mark(s)), status_style(t, s)),
                Span::styled(if th.thread.is_main_thread { "★ " } else { "" }, t.changed),
            ];
            let title_style = if s == "archived" { t.dim } else { t.text };
            row_line(
                width,
                lead,
                &th.thread.title,
                title_style,
                format!(" · {}", thousands(th.scene_count as i64)),
                None,
                t.dim,
            )
        }
        RowNode::Scene { parent, index, .. } => {
            let Some(s) = st.scene(parent, index) else {
                return Line::default();
            };
            let lead = vec![
                indent,
                Span::styled(
                    format!("{} ", status_mark(&s.status)),
                    status_style(t, &s.status),
                ),
            ];
            let style = if s.status == "archived" {
                t.dim
            } else {
                t.text
            };
            row_line(width, lead, &s.title, style, String::new(), None, t.dim)
        }
        RowNode::ScenesLoading(_) => plain("loading scenes…".into(), t.dim),
        RowNode::ScenesError(p) => {
            let e = st
                .scenes
                .get(&p)
                .and_then(|l| l.error.clone())
                .unwrap_or_default();
            plain(format!("cannot load the scenes: {e}"), t.status_error)
        }
        RowNode::NoScenes(p) => plain(
            match p {
                Parent::Chapter(_) => "(no scenes placed in this chapter)".into(),
                Parent::Thread(_) => "(no scenes in this thread)".into(),
            },
            t.dim,
        ),
        RowNode::Promise(id) => {
            let Some(p) = d.promise(id) else {
                return Line::default();
            };
            let imp = match p.importance.as_str() {
                "high" => ("H ", t.changed),
                "low" => ("L ", t.dim),
                _ => ("M ", t.text),
            };
            let lead = vec![
                Span::styled(
                    format!("{} ", status_mark(&p.status)),
                    status_style(t, &p.status),
                ),
                Span::styled(imp.0, imp.1),
                Span::styled(format!("{:<9}", p.derived_stage), t.meta),
            ];
            let style = if p.status == "open" { t.text } else { t.dim };
            let n = p.beat_stats.total;
            let tail = format!(" · {n} beat{}", if n == 1 { "" } else { "s" });
            row_line(width, lead, &p.title, style, tail, None, t.dim)
        }
        RowNode::Decision(id) => {
            let Some(x) = d.decision(id) else {
                return Line::default();
            };
            let mut lead = vec![Span::styled(
                format!("{} ", status_mark(&x.status)),
                status_style(t, &x.status),
            )];
            if width >= 36 {
                lead.push(Span::styled(
                    format!("{:<11}", x.status),
                    status_style(t, &x.status),
                ));
            }
            let style = if x.status == "open" || x.status == "decided" {
                t.text
            } else {
                t.dim
            };
            row_line(width, lead, &x.title, style, String::new(), None, t.dim)
        }
    }
}

fn empty_lines(app: &AppState) -> Vec<(String, Style)> {
    let t = &app.theme;
    let st = &app.story;
    let Some(d) = &st.data else {
        return vec![match &st.error {
            Some(e) => (e.clone(), t.status_error),
            None => ("loading the story…".into(), t.dim),
        }];
    };
    if let Some(f) = st.filter() {
        return vec![
            (format!("Nothing is {f} here."), t.dim),
            ("f shows the next status (then all).".into(), t.dim),
        ];
    }
    match st.view {
        StoryView::Carrier | StoryView::Causal if d.is_empty() => vec![
            ("No story yet.".into(), t.heading2),
            (
                "Agents build it with the plot tools; acts, chapters, threads and scenes appear here.".into(),
                t.dim,
            ),
        ],
        StoryView::Carrier => vec![("No acts or chapters yet — t shows the causal tree.".into(), t.dim)],
        StoryView::Causal => vec![("No phases or threads yet — t shows the carrier tree.".into(), t.dim)],
        StoryView::Promises => vec![("No promises yet.".into(), t.dim)],
        StoryView::Decisions => vec![("No decisions yet.".into(), t.dim)],
    }
}

pub fn draw_list(app: &AppState, area: Rect, buf: &mut Buffer, focused: bool) {
    let st = &app.story;
    let t = &app.theme;
    if st.rows.is_empty() {
        let rows = empty_lines(app)
            .into_iter()
            .map(|(text, style)| (Line::from(Span::styled(text, style)), 2));
        crate::tui::widgets::wrap::draw_top_down(area, buf, rows);
        return;
    }
    let h = area.height as usize;
    let w = area.width as usize;
    let off = window_offset(st.offset, st.selected, h, st.rows.len());
    let sel = if focused {
        t.selection
    } else {
        t.selection_unfocused
    };
    for (i, row) in st.rows.iter().skip(off).take(h).enumerate() {
        let mut line = line_for(app, row.node, row.depth, w);
        if off + i == st.selected {
            line = line.style(sel);
            buf.set_style(Rect::new(area.x, area.y + i as u16, area.width, 1), sel);
        }
        put_line(buf, area, i as u16, &line);
    }
}
