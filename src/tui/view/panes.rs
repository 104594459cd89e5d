//! The left column: the five panes, each a bordered list drawn row by row for the visible
//! window only. A pane squeezed to one content row shows a one-line summary instead.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use super::layout::{inner, Regions};
use super::wrap::draw_top_down;
use super::{block, put_line, thousands};
use crate::engine::SessionState;
use crate::tui::app::{AppState, Pane};
use crate::tui::approvals::{age, cut};
use crate::tui::files::tree::window_offset;

pub fn draw_panes(app: &AppState, r: &Regions, buf: &mut Buffer) {
    for pane in Pane::ALL {
        let area = r.panes[pane.index()];
        if area.height == 0 || area.width == 0 {
            continue;
        }
        let focused = app.focus == pane;
        let title = pane_title(app, pane);
        if area.height == 1 {
            let style = if focused {
                app.theme.title_focused
            } else {
                app.theme.title
            };
            put_line(
                buf,
                area,
                0,
                &Line::from(Span::styled(format!("─{title}─"), style)),
            );
            continue;
        }
        block(title, focused, &app.theme).render(area, buf);
        let inside = inner(area);
        if inside.height == 0 {
            continue;
        }
        if inside.height == 1 && !focused {
            put_line(
                buf,
                inside,
                0,
                &Line::from(Span::styled(summary(app, pane), app.theme.dim)),
            );
            continue;
        }
        match pane {
            Pane::Files => draw_files(app, inside, buf, focused),
            Pane::Story => draw_rows(inside, buf, story_rows(app), app.story.scroll),
            Pane::World => draw_rows(inside, buf, world_rows(app), app.world.scroll),
            Pane::Sessions => draw_sessions(app, inside, buf, focused),
            Pane::Approvals => draw_approvals(app, inside, buf, focused),
        }
    }
}

fn pane_title(app: &AppState, pane: Pane) -> String {
    let n = pane.index() + 1;
    match pane {
        Pane::Approvals if !app.approvals.is_empty() => {
            format!(" {n} Approvals ({}) ", app.approvals.len())
        }
        Pane::Sessions if !app.sessions.list.is_empty() => {
            format!(" {n} Sessions ({}) ", app.sessions.list.len())
        }
        Pane::Files if !app.files.changed.is_empty() => {
            format!(" {n} Files ●{} ", app.files.changed.len())
        }
        _ => format!(" {n} {} ", pane.title()),
    }
}

/// The one-line summary of a squeezed pane.
pub fn summary(app: &AppState, pane: Pane) -> String {
    match pane {
        Pane::Files => match app.files.tree.selected_node() {
            Some(n) => n.path.clone(),
            None => "project files".into(),
        },
        Pane::Story => match &app.story.data {
            Some(s) if !s.is_empty() => format!(
                "{} acts · {} chapters · {} scenes",
                s.acts.len(),
                thousands(s.chapter_count),
                thousands(s.scene_count)
            ),
            Some(_) => "No story yet".into(),
            None => "loading…".into(),
        },
        Pane::World => match &app.world.data {
            Some(w) if !w.is_empty() => format!(
                "{} subjects · {} slices",
                thousands(w.subject_count),
                thousands(w.slice_count)
            ),
            Some(_) => "No world data yet".into(),
            None => "loading…".into(),
        },
        Pane::Sessions => {
            let running = app
                .sessions
                .list
                .iter()
                .filter(|s| s.state == SessionState::Running)
                .count();
            match app.sessions.list.len() {
                0 => "No sessions yet".into(),
                n => format!("{n} sessions · {running} running"),
            }
        }
        Pane::Approvals => match app.approvals.queue.first() {
            Some(c) => format!(
                "{} pending · {} {}",
                app.approvals.len(),
                c.tool,
                c.preview.summary
            ),
            None => "Nothing waiting".into(),
        },
    }
}

fn sel_style(app: &AppState, focused: bool) -> Style {
    if focused {
        app.theme.selection
    } else {
        app.theme.selection_unfocused
    }
}

fn draw_files(app: &AppState, area: Rect, buf: &mut Buffer, focused: bool) {
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
            Span::styled(n.name.clone(), style),
        ];
        if n.loading.is_some() && n.expanded {
            spans.push(Span::styled(" …", t.dim));
        }
        let marked = if n.is_dir {
            app.files.dir_has_changes(&n.path)
        } else {
            app.files.changed.contains(&n.path)
        };
        if marked {
            spans.push(Span::styled(if n.is_dir { " •" } else { " ●" }, t.changed));
        }
        let mut line = Line::from(spans);
        if off + i == tree.selected {
            line = line.style(sel_style(app, focused));
            buf.set_style(
                Rect::new(area.x, area.y + i as u16, area.width, 1),
                sel_style(app, focused),
            );
        }
        put_line(buf, area, i as u16, &line);
    }
}

/// Draw precomputed rows from `scroll` (clamped).
fn draw_rows(area: Rect, buf: &mut Buffer, rows: Vec<Line<'static>>, scroll: usize) {
    let h = area.height as usize;
    let start = scroll.min(rows.len().saturating_sub(h));
    draw_top_down(area, buf, rows.into_iter().skip(start).map(|l| (l, 2)));
}

/// Acts → chapters with scene counts (bounded by the query limits).
pub fn story_rows(app: &AppState) -> Vec<Line<'static>> {
    let t = &app.theme;
    let Some(s) = &app.story.data else {
        return vec![Line::from(Span::styled(
            app.story.error.clone().unwrap_or_else(|| "loading…".into()),
            t.dim,
        ))];
    };
    if s.is_empty() {
        return vec![
            Line::from(Span::styled("No story yet.", t.heading2)),
            Line::from(Span::styled(
                "Agents build it with the plot tools; acts, chapters and threads appear here.",
                t.dim,
            )),
        ];
    }
    let chapter = |c: &crate::store::overview::ChapterRow, indent: &str| {
        Line::from(vec![
            Span::raw(format!("{indent}{} ", c.title)),
            Span::styled(format!("· {} scenes", thousands(c.scene_count)), t.dim),
        ])
    };
    let mut rows = Vec::new();
    for act in &s.acts {
        let n = s
            .chapters
            .iter()
            .filter(|c| c.act_id == Some(act.id))
            .count();
        rows.push(Line::from(vec![
            Span::styled(format!("▾ {}", act.title), t.heading2),
            Span::styled(format!(" ({n} ch)"), t.dim),
        ]));
        for c in s.chapters.iter().filter(|c| c.act_id == Some(act.id)) {
            rows.push(chapter(c, "  "));
        }
    }
    let loose: Vec<_> = s
        .chapters
        .iter()
        .filter(|c| !c.act_id.is_some_and(|a| s.acts.iter().any(|x| x.id == a)))
        .collect();
    if !loose.is_empty() {
        rows.push(Line::from(Span::styled(
            "▾ chapters without an act",
            t.heading2,
        )));
        for c in loose {
            rows.push(chapter(c, "  "));
        }
    }
    if (s.chapters.len() as i64) < s.chapter_count {
        rows.push(Line::from(Span::styled(
            format!(
                "… {} more chapters",
                s.chapter_count - s.chapters.len() as i64
            ),
            t.dim,
        )));
    }
    rows
}

/// Subject types → subjects with patch counts.
pub fn world_rows(app: &AppState) -> Vec<Line<'static>> {
    let t = &app.theme;
    let Some(w) = &app.world.data else {
        return vec![Line::from(Span::styled(
            app.world.error.clone().unwrap_or_else(|| "loading…".into()),
            t.dim,
        ))];
    };
    if w.is_empty() {
        return vec![
            Line::from(Span::styled("No world data yet.", t.heading2)),
            Line::from(Span::styled(
                "Agents record characters, places and events on the timeline with execute_world.",
                t.dim,
            )),
        ];
    }
    let mut rows = Vec::new();
    for ty in &w.types {
        rows.push(Line::from(vec![
            Span::styled(format!("▾ {}", ty.kind), t.heading2),
            Span::styled(format!(" ({})", thousands(ty.count)), t.dim),
        ]));
        for s in &ty.subjects {
            let name = if s.name.is_empty() {
                String::new()
            } else {
                format!(" {}", s.name)
            };
            rows.push(Line::from(vec![
                Span::raw(format!("  {}{name} ", s.id)),
                Span::styled(format!("· {} patches", thousands(s.patch_count)), t.dim),
            ]));
        }
        if (ty.subjects.len() as i64) < ty.count {
            rows.push(Line::from(Span::styled(
                format!(
                    "  … {} more",
                    thousands(ty.count - ty.subjects.len() as i64)
                ),
                t.dim,
            )));
        }
    }
    rows
}

fn state_icon(s: SessionState) -> &'static str {
    match s {
        SessionState::Running => "▶",
        SessionState::WaitingApproval => "⏸",
        SessionState::WaitingInput => "?",
        SessionState::Idle => "·",
        SessionState::Failed => "✗",
    }
}

fn draw_sessions(app: &AppState, area: Rect, buf: &mut Buffer, focused: bool) {
    let t = &app.theme;
    let s = &app.sessions;
    if s.list.is_empty() {
        put_line(
            buf,
            area,
            0,
            &Line::from(Span::styled("No sessions yet.", t.dim)),
        );
        put_line(
            buf,
            area,
            1,
            &Line::from(Span::styled(
                "`nbook run` or `nbook demo` starts one.",
                t.dim,
            )),
        );
        return;
    }
    let h = area.height as usize;
    let off = window_offset(s.offset, s.selected, h, s.list.len());
    for (i, info) in s.list.iter().skip(off).take(h).enumerate() {
        let mode_style = match info.mode {
            crate::engine::Mode::Normal => t.mode_normal,
            crate::engine::Mode::Discuss => t.mode_discuss,
            crate::engine::Mode::Plan => t.mode_plan,
        };
        let tokens = info.input_tokens + info.output_tokens;
        let mut spans = vec![
            Span::raw(format!("{} {} ", state_icon(info.state), info.id)),
            Span::styled(info.profile.clone(), t.text),
            Span::raw(" "),
            Span::styled(info.mode.as_str(), mode_style),
            Span::styled(format!(" {} ", info.state.label()), t.dim),
            Span::styled(
                format!("{}tok ${:.4}", thousands(tokens as i64), info.cost),
                t.dim,
            ),
        ];
        if let Some(p) = &info.parent {
            spans.push(Span::styled(format!(" ↑{p}"), t.dim));
        }
        spans.push(Span::raw(format!(" {}", info.title)));
        let mut line = Line::from(spans);
        if off + i == s.selected {
            line = line.style(sel_style(app, focused));
            buf.set_style(
                Rect::new(area.x, area.y + i as u16, area.width, 1),
                sel_style(app, focused),
            );
        }
        put_line(buf, area, i as u16, &line);
    }
}

fn draw_approvals(app: &AppState, area: Rect, buf: &mut Buffer, focused: bool) {
    let t = &app.theme;
    let a = &app.approvals;
    if a.is_empty() {
        put_line(
            buf,
            area,
            0,
            &Line::from(Span::styled("Nothing waiting for approval.", t.dim)),
        );
        return;
    }
    let h = area.height as usize;
    let off = window_offset(a.offset, a.selected, h, a.len());
    for (i, c) in a.queue.iter().skip(off).take(h).enumerate() {
        let mut line = Line::from(vec![
            Span::styled(format!("{:>3} ", age(&c.requested_at, app.wall_now)), t.dim),
            Span::styled(c.tool.clone(), t.tool),
            Span::styled(format!(" s{} ", c.session_id), t.dim),
            Span::raw(cut(&c.preview.summary, 200)),
        ]);
        if off + i == a.selected {
            line = line.style(sel_style(app, focused));
            buf.set_style(
                Rect::new(area.x, area.y + i as u16, area.width, 1),
                sel_style(app, focused),
            );
        }
        put_line(buf, area, i as u16, &line);
    }
}
