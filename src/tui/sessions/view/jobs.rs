//! The background jobs view: one row per job (kind, status icon, elapsed time, progress) and
//! the selected job's detail with its progress bar.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Gauge, Widget};

use super::draw_hint;
use crate::engine::jobs::{JobSnapshot, JobStatus};
use crate::tui::app::AppState;
use crate::tui::chrome::put_line;
use crate::tui::theme::Theme;
use crate::tui::widgets::wrap::Row;
use crate::tui::widgets::wrap::{draw_top_down, wrap_line};

pub fn kind_label(j: &JobSnapshot) -> &'static str {
    match j.kind {
        crate::engine::jobs::JobKind::Workflow => "workflow",
        crate::engine::jobs::JobKind::InvokeAgent => "agent",
        crate::engine::jobs::JobKind::Bash => "bash",
        crate::engine::jobs::JobKind::Research => "research",
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

pub(super) fn parse_time(s: &str) -> Option<time::OffsetDateTime> {
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

pub(super) fn job_detail(app: &AppState, area: Rect, buf: &mut Buffer) {
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
        // A research run's job has no owner (nothing is delivered): name who asked for it.
        None => match j.reference.get("requestedBy").and_then(|v| v.as_str()) {
            Some(o) => match app.sessions.get(o) {
                Some(s) => format!("requested by: session {o} ({})", s.profile),
                None => format!("requested by: session {o}"),
            },
            None => "owner: the author".to_string(),
        },
    };
    top.push((Line::from(Span::styled(owner, t.text)), 2));
    let what = if let Some(sid) = j.reference.get("sessionId").and_then(|v| v.as_str()) {
        Some(format!("runs: session {sid}"))
    } else if let Some(w) = j.reference.get("workflowKey").and_then(|v| v.as_str()) {
        Some(format!("runs: workflow {w}"))
    } else if let Some(r) = j.reference.get("researchRunId").and_then(|v| v.as_str()) {
        Some(format!("runs: research run {r} (fn_research_get {r})"))
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
