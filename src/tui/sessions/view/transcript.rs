//! The transcript of the selected session: one row per message or note, tool calls on one
//! line with their outcome (expandable to the arguments and the full result), the messages on
//! their way, the task list above it; bottom-anchored, drawn for the visible rows only.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};

use super::composer::{composer_height, draw_composer};
use super::{draw_hint, header, key, usage_label};
use crate::engine::agents::InvokeMode;
use crate::tui::action::Command;
use crate::tui::app::AppState;
use crate::tui::chrome::put_line;
use crate::tui::keymap::Context;
use crate::tui::sessions::{Delivery, Entry, NoteKind, Outcome, Outgoing, TaskList, TaskStatus};
use crate::tui::theme::Theme;
use crate::tui::widgets::wrap::Row;
use crate::tui::widgets::wrap::{
    draw_bottom_up, draw_top_down, fit_width, wrap_line, Cut, NO_WRAP,
};
use unicode_width::UnicodeWidthStr;

/// Shorten to `max` display columns keeping both ends ("manuscript/…/index.md").
pub fn cut_middle(s: &str, max: usize) -> String {
    fit_width(s, max, Cut::Middle)
}

pub(super) fn outcome_parts(t: &Theme, outcome: &Outcome) -> (&'static str, String, Style) {
    match outcome {
        Outcome::Running => ("…", "running".to_string(), t.dim),
        Outcome::Waiting => ("⏸", "waiting for approval".to_string(), t.tool_wait),
        Outcome::Ok(s) => ("✔", s.clone(), t.tool_ok),
        Outcome::Failed(s) => ("✗", s.clone(), t.tool_err),
        Outcome::Rejected(Some(r)) => ("✗", format!("rejected: {r}"), t.tool_err),
        Outcome::Rejected(None) => ("✗", "rejected".to_string(), t.tool_err),
    }
}

/// The rows of one transcript entry.
/// A call's previewed change under its header, with the Approvals pane's renderers.
fn change_rows(
    app: &AppState,
    preview: &crate::engine::Preview,
    diffs: &[crate::tui::widgets::prose_diff::ProseDiff],
    width: usize,
) -> Vec<Row> {
    use crate::tui::approvals::preview::{rows, Item};
    let t = &app.theme;
    let mut out = vec![(
        Line::from(Span::styled(
            format!("    change: {}", preview.summary),
            t.meta,
        )),
        4,
    )];
    let mut items: Vec<Item> = Vec::new();
    match &preview.body {
        crate::engine::PreviewBody::Files { changes } => crate::tui::approvals::view::files_items(
            changes,
            diffs,
            false,
            None,
            &[],
            t,
            &mut items,
        ),
        body => items.extend(
            crate::tui::approvals::view::body_rows(body, &preview.summary, t)
                .into_iter()
                .map(Item::Row),
        ),
    }
    let w = width.saturating_sub(4).min(u16::MAX as usize) as u16;
    out.extend(rows(app, &items, w).map(|(l, indent)| {
        let mut spans = vec![Span::raw("    ")];
        spans.extend(l.spans);
        (Line::from(spans), indent + 4)
    }));
    out
}

pub fn entry_rows(app: &AppState, e: &Entry, width: usize, expanded: bool) -> Vec<Row> {
    let t = &app.theme;
    match e {
        Entry::User(text) => text
            .lines()
            .enumerate()
            .map(|(i, l)| {
                let p = if i == 0 { "› " } else { "  " };
                (Line::from(Span::styled(format!("{p}{l}"), t.user)), 2)
            })
            .collect(),
        Entry::Assistant { text, usage } => {
            let mut rows: Vec<Row> = text
                .lines()
                .map(|l| (Line::from(Span::styled(l.to_string(), t.assistant)), 0))
                .collect();
            if let (Some(u), Some(last)) = (usage, rows.last_mut()) {
                last.0
                    .spans
                    .push(Span::styled(format!("  · {}", usage_label(u)), t.dim));
            }
            rows
        }
        Entry::Tool {
            tool,
            summary,
            outcome,
            args,
            result,
            usage,
            change,
            ..
        } => {
            let (mark, text, style) = outcome_parts(t, outcome);
            // One row per call: the summary gives way so the outcome stays visible.
            let head = format!("{} {tool} ", if expanded { "▾" } else { "▸" });
            let tail = format!("  {mark} {text}");
            let room = width.saturating_sub(head.width() + tail.width()).max(12);
            let mut rows = vec![(
                Line::from(vec![
                    Span::styled(head, t.tool),
                    Span::raw(cut_middle(summary, room)),
                    Span::styled(tail, style),
                ]),
                NO_WRAP,
            )];
            if !expanded {
                return rows;
            }
            match change {
                // The change as the author saw it (a prose diff, field changes), not the JSON.
                Some(c) => rows.extend(change_rows(app, &c.preview, &c.diffs, width)),
                None => {
                    rows.push((Line::from(Span::styled("    arguments", t.meta)), 0));
                    let pretty = serde_json::to_string_pretty(args).unwrap_or_default();
                    rows.extend(
                        pretty
                            .lines()
                            .map(|l| (Line::from(Span::styled(format!("      {l}"), t.code)), 6)),
                    );
                }
            }
            match result {
                Some(r) => {
                    rows.push((Line::from(Span::styled("    result", t.meta)), 0));
                    let rs = if matches!(outcome, Outcome::Ok(_)) {
                        t.text
                    } else {
                        t.tool_err
                    };
                    rows.extend(
                        r.lines()
                            .map(|l| (Line::from(Span::styled(format!("      {l}"), rs)), 6)),
                    );
                }
                None => rows.push((Line::from(Span::styled("    no result yet", t.dim)), 0)),
            }
            if let Some(u) = usage {
                rows.push((
                    Line::from(Span::styled(
                        format!("    message usage: {}", usage_label(u)),
                        t.dim,
                    )),
                    0,
                ));
            }
            rows
        }
        Entry::Note(kind, text) => {
            let style = match kind {
                NoteKind::Approval => t.tool_wait,
                NoteKind::Mode | NoteKind::Lifecycle => t.meta,
            };
            vec![(Line::from(Span::styled(format!("  · {text}"), style)), 4)]
        }
    }
}

/// `shown`: the error is already in the transcript (the run logged it) — say less.
pub(super) fn outgoing_rows(app: &AppState, o: &Outgoing, shown: bool) -> Vec<Row> {
    let t = &app.theme;
    let mut rows: Vec<Row> = o
        .text
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let p = if i == 0 { "› " } else { "  " };
            (Line::from(Span::styled(format!("{p}{l}"), t.user)), 2)
        })
        .collect();
    let (text, style) = match (&o.delivery, o.mode) {
        (Delivery::Sending, _) => ("  → sending…".to_string(), t.dim),
        (Delivery::Queued, InvokeMode::Steer) => (
            "  ⏸ steer: the agent reads it at its next turn".to_string(),
            t.tool_wait,
        ),
        (Delivery::Queued, _) => (
            "  ⏸ follow-up: runs when the current run ends".to_string(),
            t.tool_wait,
        ),
        (Delivery::Failed(_), _) if shown => (
            "  ✗ not delivered: the run failed before the model saw it (the error is above)"
                .to_string(),
            t.tool_err,
        ),
        (Delivery::Failed(e), _) => (format!("  ✗ not delivered: {e}"), t.tool_err),
    };
    rows.push((Line::from(Span::styled(text, style)), 4));
    rows
}

pub(super) fn task_rows(app: &AppState, tasks: &TaskList, max: usize) -> Vec<Line<'static>> {
    let t = &app.theme;
    if tasks.steps.is_empty() || max == 0 {
        return Vec::new();
    }
    let mut out = vec![Line::from(vec![
        Span::styled(
            format!("Tasks {}/{}", tasks.done(), tasks.steps.len()),
            t.heading2,
        ),
        Span::styled(
            tasks
                .title
                .as_ref()
                .map(|x| format!(" · {x}"))
                .unwrap_or_default(),
            t.dim,
        ),
    ])];
    let room = max.saturating_sub(1);
    if room == 0 {
        return out;
    }
    let focus = tasks
        .steps
        .iter()
        .position(|s| s.status == TaskStatus::InProgress)
        .or_else(|| {
            tasks
                .steps
                .iter()
                .position(|s| s.status == TaskStatus::Pending)
        })
        .unwrap_or(tasks.steps.len() - 1);
    let start = focus
        .saturating_sub(room / 2)
        .min(tasks.steps.len().saturating_sub(room));
    for st in tasks.steps.iter().skip(start).take(room) {
        let (icon, style) = match st.status {
            TaskStatus::Completed => ("✔", t.tool_ok),
            TaskStatus::InProgress => ("▶", t.tool_wait),
            TaskStatus::Pending => ("○", t.dim),
        };
        let mut spans = vec![
            Span::styled(format!(" {icon} "), style),
            Span::styled(
                st.text.clone(),
                if st.status == TaskStatus::Completed {
                    t.dim
                } else {
                    t.text
                },
            ),
        ];
        if let Some(n) = &st.note {
            spans.push(Span::styled(format!(" — {n}"), t.dim));
        }
        out.push(Line::from(spans));
    }
    out
}

pub(super) fn transcript(app: &AppState, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let above_hint = draw_hint(app, area, buf);
    let Some(info) = app.sessions.selected() else {
        let new = key(app, Command::NewSession, Context::Sessions);
        let setup = key(app, Command::ModelSetup, Context::Sessions);
        // No model yet: the first thing to do is give nbook one, so say how first.
        let no_model: Vec<(Line, usize)> = if app.models.is_empty() {
            vec![
                (
                    Line::from(Span::styled(
                        format!(
                            "No model is configured yet. {setup} sets one up: it looks for a local server (llama.cpp, Ollama, vLLM, LM Studio) or takes a base URL and an API key variable, and shows the lines it writes to {}.",
                            app.config_file.display()
                        ),
                        t.text,
                    )),
                    0,
                ),
                (Line::from(""), 0),
            ]
        } else {
            Vec::new()
        };
        draw_top_down(
            above_hint,
            buf,
            no_model.into_iter().chain([
                (Line::from(Span::styled("No session yet.", t.dim)), 0),
                (Line::from(""), 0),
                (
                    Line::from(Span::styled(
                        format!(
                            "{new} starts one: pick a profile (the lead author, a writer, a researcher…), a model and a title, then write its first message."
                        ),
                        t.dim,
                    )),
                    0,
                ),
            ]),
        );
        return;
    };
    let tr = app
        .sessions
        .transcript
        .as_ref()
        .filter(|tr| tr.session_id == info.id);
    put_line(buf, above_hint, 0, &header(app, info, tr));
    let comp_h = composer_height(app);
    if above_hint.height < comp_h + 3 {
        return;
    }
    let comp = Rect::new(
        area.x,
        above_hint.y + above_hint.height - comp_h,
        area.width,
        comp_h,
    );
    draw_composer(app, info, comp, buf);
    let mut body = Rect::new(
        area.x,
        area.y + 1,
        area.width,
        above_hint.height - 1 - comp_h,
    );
    let Some(tr) = tr else {
        draw_top_down(
            body,
            buf,
            [(Line::from(Span::styled("loading…", t.dim)), 0)],
        );
        return;
    };
    if let Some(tasks) = &tr.tasks {
        let max = (body.height as usize / 3).clamp(2, 8);
        let rows = task_rows(app, tasks, max);
        for (i, row) in rows.iter().enumerate() {
            put_line(buf, body, i as u16, row);
        }
        let used = rows.len() as u16;
        body = Rect::new(
            body.x,
            body.y + used,
            body.width,
            body.height.saturating_sub(used),
        );
    }
    if let Some(e) = &tr.error {
        draw_top_down(
            body,
            buf,
            [(
                Line::from(Span::styled(
                    format!("Cannot read the log: {e}. r reads it again."),
                    t.status_error,
                )),
                0,
            )],
        );
        return;
    }
    let outbox: &[Outgoing] = app.sessions.outbox.get(&info.id).map_or(&[], Vec::as_slice);
    if tr.entries.is_empty() && outbox.is_empty() {
        let text = if tr.loading.is_some() {
            "loading…".to_string()
        } else {
            format!(
                "Nothing in this session yet: {} writes its first message.",
                key(app, Command::Compose, Context::Sessions)
            )
        };
        draw_top_down(body, buf, [(Line::from(Span::styled(text, t.dim)), 0)]);
        return;
    }
    let width = body.width as usize;
    let last = tr.entries.len().saturating_sub(1);
    let anchor = app.sessions.scroll.unwrap_or(last).min(last);
    let following = app.sessions.scroll.is_none() || anchor == last;
    let cursor = app.sessions.in_transcript.then_some(app.sessions.cursor);
    let sel = app.theme.selection;
    let logged = |e: &str| {
        tr.entries.iter().rev().take(8).any(|x| {
            matches!(x, Entry::Note(NoteKind::Lifecycle, text) if !e.is_empty() && text.contains(e))
        })
    };
    let pending = following
        .then(|| {
            outbox.iter().rev().flat_map(move |o| {
                let shown = matches!(&o.delivery, Delivery::Failed(e) if logged(e));
                outgoing_rows(app, o, shown).into_iter().rev()
            })
        })
        .into_iter()
        .flatten();
    let now = app.now();
    let live = following
        .then(|| app.sessions.live.get(&info.id))
        .flatten()
        .map(|r| crate::tui::sessions::view::live::live_rows(t, r, now))
        .unwrap_or_default()
        .into_iter()
        .rev();
    let rows_of = |i: usize| {
        let e = &tr.entries[i];
        let expanded = e.call_id().is_some_and(|id| tr.expanded.contains(id));
        let mut rows = entry_rows(app, e, width, expanded);
        if cursor == Some(i) {
            for (l, _) in rows.iter_mut() {
                l.style = sel;
            }
        }
        rows
    };
    if following {
        let entries = (0..tr.entries.len())
            .rev()
            .flat_map(|i| rows_of(i).into_iter().rev());
        draw_bottom_up(body, buf, pending.chain(live).chain(entries));
        return;
    }
    // Scrolled up: the banner has a row of its own under the entries, so it never covers the
    // anchored (selected) entry.
    let list = Rect::new(body.x, body.y, body.width, body.height.saturating_sub(1));
    let height = list.height as usize;
    // When the entries up to the anchor do not fill the screen, the transcript's top is
    // shown from its first row instead of one entry under a blank screen.
    let mut above = 0;
    let mut fills = false;
    for i in (0..=anchor).rev() {
        above += rows_height(&rows_of(i), width);
        if above >= height {
            fills = true;
            break;
        }
    }
    let shown_last = if fills {
        draw_bottom_up(
            list,
            buf,
            (0..=anchor)
                .rev()
                .flat_map(|i| rows_of(i).into_iter().rev()),
        );
        anchor
    } else {
        let mut used = 0;
        let mut last_whole = anchor;
        for i in 0..tr.entries.len() {
            let h = rows_height(&rows_of(i), width);
            if used + h > height {
                break;
            }
            used += h;
            last_whole = i;
        }
        draw_top_down(list, buf, (0..tr.entries.len()).flat_map(rows_of));
        last_whole.max(anchor)
    };
    if shown_last >= last {
        return;
    }
    let more = Line::from(Span::styled(
        format!(
            " ↓ {} more — {} follows the end ",
            last - shown_last,
            key(app, Command::Follow, Context::Sessions)
        ),
        t.badge,
    ));
    put_line(buf, body, body.height.saturating_sub(1), &more);
}

/// Screen rows `rows` take at `width` once wrapped.
fn rows_height(rows: &[Row], width: usize) -> usize {
    rows.iter()
        .map(|(l, indent)| wrap_line(l, width, *indent).len())
        .sum()
}
