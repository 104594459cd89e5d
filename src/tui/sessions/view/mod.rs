//! The Sessions pane's right-hand view: the selected session's header, its task list, the
//! transcript (bottom-anchored; tool calls on one line with their outcome, expandable to the
//! arguments and the full result; per-message usage dimmed after each assistant message;
//! messages still on their way), the composer and a hint line with the keys of whatever has
//! focus — or, in the jobs view, the selected background job with its progress bar.

pub mod list;
pub mod live;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Gauge, Widget};

use crate::engine::agents::InvokeMode;
use crate::engine::jobs::{JobSnapshot, JobStatus};
use crate::engine::{Mode, SessionInfo};
use crate::tui::action::Command;
use crate::tui::app::AppState;
use crate::tui::approvals::cut;
use crate::tui::chrome::{put_line, thousands};
use crate::tui::keymap::Context;
use crate::tui::sessions::{
    is_busy, Delivery, Entry, NoteKind, Outcome, Outgoing, SessionsView, TaskList, TaskStatus,
    Transcript, Usage,
};
use crate::tui::theme::Theme;
use crate::tui::widgets::wrap::Row;
use crate::tui::widgets::wrap::{draw_bottom_up, draw_top_down, wrap_line, NO_WRAP};

/// The key bound to `cmd`, looked up in `ctx` first.
fn key(app: &AppState, cmd: Command, ctx: Context) -> String {
    app.keymap
        .key_for(cmd, &[ctx, Context::Sessions, Context::Global])
        .map(|k| k.notation())
        .unwrap_or_else(|| "—".into())
}

/// "key label · key label" in hint styles.
fn hint_line(app: &AppState, ctx: Context, items: &[(Command, &str)]) -> Line<'static> {
    let t = &app.theme;
    let mut spans = Vec::new();
    for (i, (cmd, label)) in items.iter().enumerate() {
        if i > 0 {
            spans.push(Span::styled(" · ", t.dim));
        }
        spans.push(Span::styled(key(app, *cmd, ctx), t.key_hint));
        spans.push(Span::styled(format!(" {label}"), t.dim));
    }
    Line::from(spans)
}

pub fn mode_style(t: &Theme, mode: Mode) -> Style {
    match mode {
        Mode::Normal => t.mode_normal,
        Mode::Discuss => t.mode_discuss,
        Mode::Plan => t.mode_plan,
    }
}

/// "1,204 in · 310 out · $0.0031"
pub fn usage_label(u: &Usage) -> String {
    let est = if u.estimated { "~" } else { "" };
    format!(
        "{est}{} in · {est}{} out · ${:.4}{}",
        thousands(u.input_tokens as i64),
        thousands(u.output_tokens as i64),
        u.cost,
        if u.estimated { " (estimated)" } else { "" }
    )
}

/// The hint line for whatever has the keys in the Sessions pane.
pub fn sessions_hint(app: &AppState) -> Line<'static> {
    let s = &app.sessions;
    if s.view == SessionsView::Jobs {
        return hint_line(
            app,
            Context::Jobs,
            &[
                (Command::CancelJob, "cancel job"),
                (Command::JobSession, "its session"),
                (Command::ToggleJobs, "sessions"),
            ],
        );
    }
    if s.composing {
        return hint_line(
            app,
            Context::Composer,
            &[
                (Command::LeaveComposer, "leave (draft kept)"),
                (Command::CancelRun, "cancel run"),
                (Command::CycleMode, "mode"),
            ],
        );
    }
    if s.in_transcript {
        return hint_line(
            app,
            Context::Transcript,
            &[
                (Command::Down, "next"),
                (Command::ToggleEntry, "expand tool call"),
                (Command::LeaveTranscript, "back"),
                (Command::Compose, "write"),
            ],
        );
    }
    hint_line(
        app,
        Context::Sessions,
        &[
            (Command::Compose, "write"),
            (Command::NewSession, "new session"),
            (Command::OpenTranscript, "transcript"),
            (Command::ToggleJobs, "jobs"),
            (Command::CancelRun, "cancel run"),
            (Command::CycleMode, "mode"),
        ],
    )
}

pub fn draw_detail(app: &AppState, area: Rect, buf: &mut Buffer) {
    if app.sessions.view == SessionsView::Jobs {
        job_detail(app, area, buf);
    } else {
        transcript(app, area, buf);
    }
}

pub fn detail_title(app: &AppState) -> String {
    if app.sessions.view == SessionsView::Jobs {
        return match app.sessions.jobs.selected() {
            Some(j) => format!(" Job {} · {} ", j.job_id, kind_label(j)),
            None => " Jobs ".into(),
        };
    }
    match app.sessions.selected() {
        Some(s) => format!(" Session {} · {} ", s.id, s.profile),
        None => " Transcript ".into(),
    }
}

fn header(app: &AppState, info: &SessionInfo, tr: Option<&Transcript>) -> Line<'static> {
    let t = &app.theme;
    let model = tr
        .and_then(|tr| tr.model.as_ref())
        .map(|m| format!(" · model {m}"))
        .unwrap_or_default();
    let mut spans = vec![
        Span::styled(format!("{} ", info.mode), mode_style(t, info.mode)),
        Span::styled(format!("· {}", info.state.label()), t.dim),
    ];
    // Shown first after the state: near a full window the next turn compacts or fails.
    if let Some(pct) = (info.context_tokens * 100).checked_div(info.context_window) {
        let style = if pct >= 90 { t.tool_wait } else { t.dim };
        spans.push(Span::styled(
            format!(
                " · context ~{}/{} ({pct}%)",
                thousands(info.context_tokens as i64),
                thousands(info.context_window as i64)
            ),
            style,
        ));
    }
    spans.push(Span::styled(
        format!(
            " · {} in / {} out tokens · ${:.4}{}{}",
            thousands(info.input_tokens as i64),
            thousands(info.output_tokens as i64),
            info.cost,
            info.parent
                .as_ref()
                .map(|p| format!(" · parent {p}"))
                .unwrap_or_default(),
            model,
        ),
        t.dim,
    ));
    spans.push(Span::styled(
        format!(" · {}", crate::text::escape_for_terminal(&info.title)),
        t.dim,
    ));
    Line::from(spans)
}

/// Shorten to `max` characters keeping both ends ("manuscript/…/index.md").
pub fn cut_middle(s: &str, max: usize) -> String {
    let n = s.chars().count();
    if n <= max {
        return s.to_string();
    }
    let keep = max.saturating_sub(1);
    let head = keep / 2;
    let tail = keep - head;
    let mut out: String = s.chars().take(head).collect();
    out.push('…');
    out.extend(s.chars().skip(n - tail));
    out
}

fn outcome_parts(t: &Theme, outcome: &Outcome) -> (&'static str, String, Style) {
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
            ..
        } => {
            let (mark, text, style) = outcome_parts(t, outcome);
            // One row per call: the summary gives way so the outcome stays visible.
            let head = format!("{} {tool} ", if expanded { "▾" } else { "▸" });
            let tail = format!("  {mark} {text}");
            let room = width
                .saturating_sub(head.chars().count() + tail.chars().count())
                .max(12);
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
            rows.push((Line::from(Span::styled("    arguments", t.meta)), 0));
            let pretty = serde_json::to_string_pretty(args).unwrap_or_default();
            rows.extend(
                pretty
                    .lines()
                    .map(|l| (Line::from(Span::styled(format!("      {l}"), t.code)), 6)),
            );
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
fn outgoing_rows(app: &AppState, o: &Outgoing, shown: bool) -> Vec<Row> {
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

fn task_rows(app: &AppState, tasks: &TaskList, max: usize) -> Vec<Line<'static>> {
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

/// The composer box (or its resting state) for the selected session.
pub fn draw_composer(app: &AppState, info: &SessionInfo, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let s = &app.sessions;
    let busy = is_busy(info.state);
    let title = if s.composing {
        let send = key(app, Command::Send, Context::Composer);
        if busy {
            let follow = key(app, Command::SendFollowup, Context::Composer);
            format!(" ✎ s{} · {send} steer · {follow} follow-up ", info.id)
        } else {
            let nl = key(app, Command::Newline, Context::Composer);
            format!(" ✎ s{} · {send} prompt · {nl} new line ", info.id)
        }
    } else {
        format!(" Message to session {} ", info.id)
    };
    let block = Block::bordered()
        .border_type(if s.composing {
            BorderType::Thick
        } else {
            BorderType::Plain
        })
        .border_style(if s.composing {
            t.border_focused
        } else {
            t.border
        })
        .title(Line::from(title).style(if s.composing {
            t.title_focused
        } else {
            t.title
        }));
    let inside = block.inner(area);
    block.render(area, buf);
    if inside.height == 0 {
        return;
    }
    let draft = s.drafts.get(&info.id);
    if s.composing {
        if let Some(d) = draft {
            d.render(inside, buf);
        }
        return;
    }
    let text = match draft.map(crate::tui::input::text_of) {
        Some(d) if !d.trim().is_empty() => {
            format!(
                "{} (draft — {} continues)",
                cut(&d, 200),
                key(app, Command::Compose, Context::Sessions)
            )
        }
        _ if busy => format!(
            "{} to steer the run (or queue a follow-up)",
            key(app, Command::Compose, Context::Sessions)
        ),
        _ => format!(
            "{} to write a prompt",
            key(app, Command::Compose, Context::Sessions)
        ),
    };
    put_line(buf, inside, 0, &Line::from(Span::styled(text, t.dim)));
}

/// Rows the composer takes for the selected session.
pub fn composer_height(app: &AppState) -> u16 {
    let lines = app
        .sessions
        .draft()
        .filter(|_| app.sessions.composing)
        .map_or(1, |d| d.lines().len());
    lines.clamp(1, 6) as u16 + 2
}

/// The key hint on the last (up to two) rows of `area`; returns the area above it.
fn draw_hint(app: &AppState, area: Rect, buf: &mut Buffer) -> Rect {
    let hint = sessions_hint(app);
    let hint_rows: Vec<Line<'static>> = wrap_line(&hint, area.width as usize, 2)
        .into_iter()
        .take(2)
        .collect();
    let hint_h = hint_rows.len() as u16;
    for (i, row) in hint_rows.iter().enumerate() {
        put_line(
            buf,
            area,
            area.height.saturating_sub(hint_h) + i as u16,
            row,
        );
    }
    Rect::new(
        area.x,
        area.y,
        area.width,
        area.height.saturating_sub(hint_h),
    )
}

fn transcript(app: &AppState, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let above_hint = draw_hint(app, area, buf);
    let Some(info) = app.sessions.selected() else {
        let new = key(app, Command::NewSession, Context::Sessions);
        draw_top_down(
            above_hint,
            buf,
            [
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
            ],
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
    let entries = tr.entries[..(anchor + 1).min(tr.entries.len())]
        .iter()
        .enumerate()
        .rev()
        .flat_map(|(i, e)| {
            let expanded = e.call_id().is_some_and(|id| tr.expanded.contains(id));
            let mut rows = entry_rows(app, e, width, expanded);
            if cursor == Some(i) {
                for (l, _) in rows.iter_mut() {
                    l.style = sel;
                }
            }
            rows.into_iter().rev()
        });
    draw_bottom_up(body, buf, pending.chain(live).chain(entries));
    if !following {
        let more = Line::from(Span::styled(
            format!(
                " ↓ {} more — {} follows the end ",
                last - anchor,
                key(app, Command::Follow, Context::Sessions)
            ),
            t.badge,
        ));
        put_line(buf, body, body.height.saturating_sub(1), &more);
    }
}

pub fn kind_label(j: &JobSnapshot) -> &'static str {
    match j.kind {
        crate::engine::jobs::JobKind::Workflow => "workflow",
        crate::engine::jobs::JobKind::InvokeAgent => "agent",
        crate::engine::jobs::JobKind::Bash => "bash",
    }
}

pub fn job_icon(t: &Theme, s: JobStatus) -> (&'static str, Style) {
    match s {
        JobStatus::Running => ("▶", t.tool_wait),
        JobStatus::Waiting => ("⏸", t.tool_wait),
        JobStatus::Completed => ("✔", t.tool_ok),
        JobStatus::Failed => ("✗", t.tool_err),
        JobStatus::Cancelled => ("⊘", t.dim),
        JobStatus::Interrupted => ("!", t.tool_err),
    }
}

fn parse_time(s: &str) -> Option<time::OffsetDateTime> {
    time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).ok()
}

/// How long a job ran (or has been running): "42s", "3m 05s", "1h 02m".
pub fn elapsed(j: &JobSnapshot, now: time::OffsetDateTime) -> String {
    let Some(start) = parse_time(&j.created_at) else {
        return "?".into();
    };
    let end = j.ended_at.as_deref().and_then(parse_time).unwrap_or(now);
    let secs = (end - start).whole_seconds().max(0);
    match secs {
        0..=59 => format!("{secs}s"),
        60..=3599 => format!("{}m {:02}s", secs / 60, secs % 60),
        _ => format!("{}h {:02}m", secs / 3600, (secs % 3600) / 60),
    }
}

/// `Some((ratio, "phase 3/7"))` when the job reports progress.
pub fn progress(j: &JobSnapshot) -> Option<(f64, String)> {
    let p = j.progress.as_ref()?;
    let ratio = if p.total == 0 {
        0.0
    } else {
        (p.done as f64 / p.total as f64).clamp(0.0, 1.0)
    };
    let label = match &p.phase {
        Some(ph) => format!("{ph} {}/{}", p.done, p.total),
        None => format!("{}/{}", p.done, p.total),
    };
    Some((ratio, label))
}

/// One row of the jobs list: status, id, kind, elapsed, owner, title, and a small bar when
/// the job reports progress (the detail on the right draws a full-width `Gauge`).
pub fn draw_job_row(app: &AppState, j: &JobSnapshot, row: Rect, buf: &mut Buffer, style: Style) {
    let t = &app.theme;
    let (icon, icon_style) = job_icon(t, j.status);
    let owner = j
        .owner_session_id
        .as_ref()
        .map(|o| format!(" s{o}"))
        .unwrap_or_default();
    let line = Line::from(vec![
        Span::styled(format!("{icon} "), icon_style),
        Span::raw(format!("{} ", j.job_id)),
        Span::styled(
            format!("{} {}{owner} ", kind_label(j), elapsed(j, app.wall_now)),
            t.dim,
        ),
        Span::raw(j.title.clone()),
    ])
    .style(style);
    buf.set_style(row, style);
    let bar = match (progress(j), &j.progress) {
        (Some((ratio, _)), Some(p)) if row.width >= 28 => {
            let cells = (row.width as usize / 4).clamp(4, 12);
            let filled = ((ratio * cells as f64).round() as usize).min(cells);
            Some(Line::from(vec![
                Span::styled("█".repeat(filled), t.tool_ok),
                Span::styled("░".repeat(cells - filled), t.dim),
                Span::styled(format!(" {}/{}", p.done, p.total), t.dim),
            ]))
        }
        _ => None,
    };
    let bar_w = bar.as_ref().map_or(0, |b| b.width() as u16 + 1);
    let text = Rect::new(row.x, row.y, row.width.saturating_sub(bar_w), 1);
    put_line(buf, text, 0, &line);
    if let Some(b) = bar {
        let r = Rect::new(row.x + row.width - bar_w + 1, row.y, bar_w - 1, 1);
        put_line(buf, r, 0, &b.style(style));
    }
}

fn job_detail(app: &AppState, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let body = draw_hint(app, area, buf);
    let Some(j) = app.sessions.jobs.selected() else {
        draw_top_down(
            body,
            buf,
            [
                (Line::from(Span::styled("No background jobs yet.", t.dim)), 0),
                (Line::from(""), 0),
                (
                    Line::from(Span::styled(
                        "Workflows (run_workflow), agents started in the background (invoke_agent) and background bash commands run as jobs; they show here with their progress.",
                        t.dim,
                    )),
                    0,
                ),
            ],
        );
        return;
    };
    let (icon, icon_style) = job_icon(t, j.status);
    let mut top: Vec<Row> = vec![
        (
            Line::from(vec![
                Span::styled(format!("{icon} {}", j.status.as_str()), icon_style),
                Span::styled(
                    format!(
                        " · {} · {} · started {}",
                        kind_label(j),
                        elapsed(j, app.wall_now),
                        j.created_at
                    ),
                    t.dim,
                ),
            ]),
            2,
        ),
        (Line::from(Span::styled(j.title.clone(), t.diff_header)), 0),
    ];
    let owner = match &j.owner_session_id {
        Some(o) => match app.sessions.get(o) {
            Some(s) => format!("owner: session {o} ({})", s.profile),
            None => format!("owner: session {o}"),
        },
        None => "owner: the author".to_string(),
    };
    top.push((Line::from(Span::styled(owner, t.text)), 2));
    let what = if let Some(sid) = j.reference.get("sessionId").and_then(|v| v.as_str()) {
        Some(format!("runs: session {sid}"))
    } else if let Some(w) = j.reference.get("workflowKey").and_then(|v| v.as_str()) {
        Some(format!("runs: workflow {w}"))
    } else {
        j.reference
            .get("command")
            .and_then(|v| v.as_str())
            .map(|c| format!("runs: $ {c}"))
    };
    if let Some(w) = what {
        top.push((Line::from(Span::styled(w, t.text)), 2));
    }
    let mut y = 0u16;
    for (line, indent) in &top {
        for row in wrap_line(line, body.width as usize, *indent) {
            put_line(buf, body, y, &row);
            y += 1;
        }
    }
    if let Some((ratio, label)) = progress(j) {
        if y + 1 < body.height {
            y += 1;
            Gauge::default()
                .ratio(ratio)
                .label(format!("{label} ({:.0}%)", ratio * 100.0))
                .gauge_style(t.tool_ok)
                .use_unicode(true)
                .render(Rect::new(body.x, body.y + y, body.width, 1), buf);
            y += 1;
        }
    } else if !j.status.is_final() {
        put_line(
            buf,
            body,
            y,
            &Line::from(Span::styled("no progress reported yet", t.dim)),
        );
        y += 1;
    }
    let mut rest: Vec<Row> = vec![(Line::from(""), 0)];
    if let Some(p) = &j.preview {
        rest.push((Line::from(Span::styled("preview", t.meta)), 0));
        rest.extend(
            p.lines()
                .map(|l| (Line::from(Span::styled(format!("  {l}"), t.text)), 2)),
        );
    }
    if let Some(e) = &j.error {
        rest.push((
            Line::from(Span::styled(format!("error: {e}"), t.status_error)),
            2,
        ));
    }
    if y < body.height {
        draw_top_down(
            Rect::new(body.x, body.y + y, body.width, body.height - y),
            buf,
            rest,
        );
    }
}
