//! Drawing the Board pane (pure functions of `AppState`): the goals line, the columns with
//! their cards (only the visible window is drawn, so scrolling a 10,000-task board costs the
//! rows on screen), the empty state that says how to start, the right-hand view (the selected
//! card, or the opened task: PROMPT.md, steps, documents with revisions, the draft's diff so far, log) and the new-task
//! prompt.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::engine::read::{
    DraftArea as Area, DraftChangeKind, DraftDiff, ScopedBook, Task, PAUSED,
};
use crate::tui::action::Command;
use crate::tui::app::AppState;
use crate::tui::board::overlay::BoardOverlay;
use crate::tui::board::{BoardRow, BoardState};
use crate::tui::chrome::{centered, overlay_frame, put_line};
use crate::tui::commands::key_of;
use crate::tui::files::tree::window_offset;
use crate::tui::keymap::Context;
use crate::tui::widgets::wrap::{draw_top_down, fit_width, Cut};

fn key(app: &AppState, cmd: Command) -> String {
    let pc = crate::tui::commands::PaneCommand::new(cmd, Context::Board, "");
    key_of(app, &pc).unwrap_or_else(|| cmd.name().to_string())
}

fn pending(app: &AppState, id: &str) -> usize {
    BoardState::pending_for(id, app.approvals.calls())
}

pub fn pane_title(app: &AppState) -> String {
    if let Some(v) = &app.board.artifacts {
        return super::artifacts::pane_title(v);
    }
    if let Some(v) = &app.board.workflows {
        return super::workflows::pane_title(v);
    }
    if let Some(v) = &app.board.inbox {
        return super::inbox::pane_title(v);
    }
    let unread = match app.board.data.as_ref().map_or(0, |d| d.unread_mail) {
        0 => String::new(),
        n => format!("· {n} unread mail "),
    };
    match &app.board.data {
        Some(d) if !d.tasks.is_empty() => format!(" 6 Board ({}) {unread}", d.tasks.len()),
        _ => format!(" 6 Board {unread}"),
    }
}

/// The one-line summary of the squeezed pane.
pub fn summary(app: &AppState) -> String {
    let b = &app.board;
    match &b.data {
        None if b.error.is_some() => "the board could not be read".into(),
        None => "production board".into(),
        Some(d) if d.tasks.is_empty() => "No tasks yet".into(),
        Some(d) => {
            let active = d
                .tasks
                .iter()
                .filter(|t| matches!(t.column.as_str(), "planning" | "drafting" | "review"))
                .count();
            format!(
                "{} · {active} active",
                crate::text::count(d.tasks.len(), "task", "tasks")
            )
        }
    }
}

fn empty_lines(app: &AppState) -> Vec<(String, Style)> {
    let t = &app.theme;
    let b = &app.board;
    if b.data.is_none() {
        return vec![match &b.error {
            Some(e) => (e.clone(), t.status_error),
            None => ("loading the board…".into(), t.dim),
        }];
    }
    vec![
        ("No tasks on the board yet.".into(), t.heading2),
        (
            format!(
                "Press {} to create one (its first line is its title), or run nbook board create \"Draft chapter 12 from its brief\".",
                key(app, Command::BoardNew)
            ),
            t.dim,
        ),
        (
            format!(
                "{} adds a book goal (at most 5 active), {} lists them to archive one.",
                key(app, Command::BoardGoalNew),
                key(app, Command::BoardGoals)
            ),
            t.dim,
        ),
    ]
}

/// The scheduler's line at the top of the pane: on or stopped, the running task sessions
/// against the limit, and why a runnable task gets no session (none where no scheduler runs).
fn scheduler_line(app: &AppState) -> Option<Line<'static>> {
    let s = app.board.scheduler.as_ref()?;
    let th = &app.theme;
    let (state, style) = if s.enabled {
        ("Scheduler on", th.heading2)
    } else {
        ("Scheduler off", th.tool_wait)
    };
    let mut spans = vec![
        Span::styled(state.to_string(), style),
        Span::styled(format!(" · {}/{} running", s.running, s.limit), th.text),
    ];
    let waiting = s.sessions.iter().filter(|x| x.waiting).count();
    if waiting > 0 {
        spans.push(Span::styled(format!(" · ⧗{waiting} waiting"), th.tool_wait));
    }
    if !s.problems.is_empty() {
        spans.push(Span::styled(
            format!(
                " · {} without a session",
                crate::text::count(s.problems.len(), "task", "tasks")
            ),
            th.status_error,
        ));
    }
    if !s.enabled {
        spans.push(Span::styled(
            format!(" · {} starts it", key(app, Command::BoardScheduler)),
            th.dim,
        ));
    }
    Some(Line::from(spans))
}

/// The line that says a task's plan waits for the author, and the keys that decide it.
fn plan_waits(app: &AppState, t: &Task) -> Option<String> {
    (t.status == crate::board::plan_approval::AWAITING).then(|| {
        format!(
            "The plan waits for your approval (requirePlanApproval): {} approves it, {} sends it back to planning with a reason.",
            key(app, Command::BoardPlanApprove),
            key(app, Command::BoardPlanReject)
        )
    })
}

/// What the scheduler says about task `id`: the session working on it, or why it gets none.
fn scheduler_facts(app: &AppState, id: &str) -> Vec<(String, bool)> {
    let Some(s) = app.board.scheduler.as_ref() else {
        return Vec::new();
    };
    let mut out: Vec<(String, bool)> = s
        .sessions
        .iter()
        .filter(|x| x.task == id)
        .map(|x| {
            (
                format!(
                    "Worked on by {} session #{}{}",
                    x.role,
                    x.session_id,
                    if x.waiting { ", waiting for you" } else { "" }
                ),
                false,
            )
        })
        .collect();
    out.extend(
        s.problems
            .iter()
            .filter(|p| p.task == id)
            .map(|p| (format!("No session: {}", p.message), true)),
    );
    out
}

/// The session working on task `id`, as its card shows it after the id (`▶ executor #4 `).
fn session_of(app: &AppState, id: &str) -> Option<String> {
    let s = app.board.scheduler.as_ref()?;
    let mine: Vec<String> = s
        .sessions
        .iter()
        .filter(|x| x.task == id)
        .map(|x| {
            format!(
                "{} #{}{}",
                x.role,
                x.session_id,
                if x.waiting { " ⧗" } else { "" }
            )
        })
        .collect();
    (!mine.is_empty()).then(|| format!("▶ {} ", mine.join(", ")))
}

/// The goals line at the top of the pane (none when there are no active goals).
fn goals_line(app: &AppState) -> Option<Line<'static>> {
    let d = app.board.data.as_ref()?;
    if d.goals.is_empty() {
        return None;
    }
    let names: Vec<String> = d
        .goals
        .iter()
        .map(|g| format!("{} {}", g.id, g.title))
        .collect();
    Some(Line::from(vec![
        Span::styled("Goals: ", app.theme.heading2),
        Span::styled(names.join(" · "), app.theme.text),
    ]))
}

/// A card's line: id, title, then status, progress, assignee and pending approvals.
pub fn card_line(app: &AppState, t: &Task, width: usize) -> Line<'static> {
    let th = &app.theme;
    let (done, total) = t.progress();
    let mut tail = format!(" {done}/{total}");
    if t.status == crate::board::plan_approval::AWAITING {
        tail.push_str(&format!(" {}", crate::board::plan_approval::CARD_LABEL));
    } else if !t.status.is_empty() {
        tail.push_str(&format!(" {}", t.status));
    }
    if let Some(a) = t.custom_fields.get("assignee").and_then(|v| v.as_str()) {
        tail.push_str(&format!(" @{a}"));
    }
    let waiting = pending(app, &t.id);
    let badge = (waiting > 0).then(|| format!(" ⧗{waiting}"));
    let working = session_of(app, &t.id);
    let fixed = 2
        + t.id.len()
        + 1
        + tail.len()
        + badge.as_ref().map_or(0, |b| b.len())
        + working.as_ref().map_or(0, |w| w.chars().count());
    let title = fit_width(&t.title, width.saturating_sub(fixed).max(1), Cut::End);
    let status_style = match t.status.as_str() {
        "failed" => th.status_error,
        PAUSED | crate::board::plan_approval::AWAITING => th.tool_wait,
        _ => th.dim,
    };
    let mut spans = vec![
        Span::styled(format!("  {} ", t.id), th.meta),
        // The session at work comes before the title, so a narrow pane cuts the title first.
        Span::styled(working.unwrap_or_default(), th.tool_wait),
        Span::styled(title, th.text),
        Span::styled(tail, status_style),
    ];
    if let Some(b) = badge {
        spans.push(Span::styled(b, th.badge));
    }
    Line::from(spans)
}

pub fn draw_list(app: &AppState, area: Rect, buf: &mut Buffer, focused: bool) {
    if let Some(v) = &app.board.artifacts {
        return super::artifacts::draw_list(app, v, area, buf, focused);
    }
    if let Some(v) = &app.board.workflows {
        return super::workflows::draw_list(app, v, area, buf, focused);
    }
    if let Some(v) = &app.board.inbox {
        return super::inbox::draw_list(app, v, area, buf, focused);
    }
    let b = &app.board;
    let t = &app.theme;
    let mut area = area;
    if let Some(l) = scheduler_line(app) {
        put_line(buf, area, 0, &l);
        area = Rect::new(
            area.x,
            area.y + 1,
            area.width,
            area.height.saturating_sub(1),
        );
    }
    if b.is_empty() {
        // Goals come before tasks: the empty board shows them too.
        if let Some(g) = goals_line(app) {
            put_line(buf, area, 0, &g);
            area = Rect::new(
                area.x,
                area.y + 1,
                area.width,
                area.height.saturating_sub(1),
            );
        }
        let rows = empty_lines(app)
            .into_iter()
            .map(|(text, style)| (Line::from(Span::styled(text, style)), 2));
        draw_top_down(area, buf, rows);
        return;
    }
    if let Some(g) = goals_line(app) {
        put_line(buf, area, 0, &g);
        area = Rect::new(
            area.x,
            area.y + 1,
            area.width,
            area.height.saturating_sub(1),
        );
    }
    let h = area.height as usize;
    let w = area.width as usize;
    let off = window_offset(b.offset, b.selected, h, b.rows.len());
    let sel = crate::tui::chrome::sel_style(app, focused);
    let Some(d) = &b.data else { return };
    for (i, row) in b.rows.iter().skip(off).take(h).enumerate() {
        let line = match *row {
            BoardRow::Column(c, n) => {
                let name = b.column(c).map(|(_, name)| name).unwrap_or("?");
                Line::from(Span::styled(format!("{name} ({n})"), t.heading))
            }
            BoardRow::Card(ti) => match d.tasks.get(ti) {
                Some(task) => card_line(app, task, w),
                None => Line::default(),
            },
        };
        if off + i == b.selected {
            let line = crate::tui::chrome::select_line(line, sel);
            buf.set_style(Rect::new(area.x, area.y + i as u16, area.width, 1), sel);
            put_line(buf, area, i as u16, &line);
        } else {
            put_line(buf, area, i as u16, &line);
        }
    }
}

pub fn detail_title(app: &AppState) -> String {
    if let Some(v) = &app.board.artifacts {
        return super::artifacts::detail_title(v);
    }
    if let Some(v) = &app.board.workflows {
        return super::workflows::detail_title(v);
    }
    if let Some(v) = &app.board.inbox {
        return super::inbox::detail_title(v);
    }
    match (&app.board.detail, app.board.selected_task()) {
        (Some((id, _)), _) => format!(" Task {id} "),
        (None, Some(t)) => format!(" {} · {} ", t.id, column_name(app, &t.column)),
        _ => " Board ".into(),
    }
}

fn column_name(app: &AppState, id: &str) -> String {
    app.board
        .columns
        .iter()
        .find(|(c, _)| c == id)
        .map(|(_, n)| n.clone())
        .unwrap_or_else(|| id.to_string())
}

pub fn draw_detail(app: &AppState, area: Rect, buf: &mut Buffer) {
    // The Artifacts view replaces the board while it is open.
    if let Some(v) = &app.board.artifacts {
        return super::artifacts::draw_detail(app, v, area, buf);
    }
    if let Some(v) = &app.board.workflows {
        return super::workflows::draw_detail(app, v, area, buf);
    }
    if let Some(v) = &app.board.inbox {
        return super::inbox::draw_detail(app, v, area, buf);
    }
    // Wide enough and no task opened: the columns side by side above the selected card.
    if crate::tui::board::columns::fits(app, area) {
        return crate::tui::board::columns::draw(app, area, buf);
    }
    let lines = detail_lines(app);
    let skip = app.board.detail_scroll.min(lines.len().saturating_sub(1));
    draw_top_down(area, buf, lines.into_iter().skip(skip));
}

/// The right-hand view as logical lines (wrapped when drawn).
pub fn detail_lines(app: &AppState) -> Vec<(Line<'static>, usize)> {
    let th = &app.theme;
    let b = &app.board;
    let text = |s: String, st: Style| (Line::from(Span::styled(s, st)), 0);
    let mut out = Vec::new();
    let Some(task) = b.selected_task() else {
        if b.is_empty() && b.data.is_some() {
            out.push(text("The production board".into(), th.heading));
            out.push(text(
                "Tasks such as \"draft chapter 12 from its brief\" move through the workflow's columns: Planning → Drafting → Review → Done → Archived.".into(),
                th.dim,
            ));
            out.push(text(
                format!("{} creates a task.", key(app, Command::BoardNew)),
                th.dim,
            ));
        }
        return out;
    };
    match &b.detail {
        Some((id, Ok(d))) if *id == task.id => {
            let t = &d.task;
            out.push(text(format!("{} — {}", t.id, t.title), th.heading));
            out.push(text(facts(app, t), th.dim));
            for (line, bad) in scheduler_facts(app, &t.id) {
                out.push(text(line, if bad { th.status_error } else { th.tool_wait }));
            }
            if let Some(line) = plan_waits(app, t) {
                out.push(text(line, th.tool_wait));
            }
            out.push(text(String::new(), th.text));
            out.push(text("Steps".into(), th.heading2));
            if t.steps.is_empty() {
                out.push(text("  no plan yet (PROMPT.md not written)".into(), th.dim));
            }
            for (i, s) in t.steps.iter().enumerate() {
                let mark = if s.status.finished() { "✓" } else { "·" };
                out.push(text(
                    format!("  {mark} {i}. {} ({})", s.name, s.status.as_str()),
                    th.text,
                ));
            }
            out.push(text(String::new(), th.text));
            out.push(text("Documents".into(), th.heading2));
            if d.documents.is_empty() {
                out.push(text("  none".into(), th.dim));
            }
            for (doc, revs) in &d.documents {
                let list: Vec<String> = revs.iter().map(|r| r.to_string()).collect();
                let earlier = if list.is_empty() {
                    String::new()
                } else {
                    format!(" · earlier revisions {}", list.join(", "))
                };
                out.push(text(
                    format!(
                        "  {} rev {} · {} bytes · by {}{earlier}",
                        doc.key, doc.revision, doc.size, doc.author
                    ),
                    th.text,
                ));
            }
            if !d.repository_scope.is_empty() || !d.declared_not_acquired.is_empty() {
                out.push(text(String::new(), th.text));
                scope_lines(app, &d.repository_scope, &d.declared_not_acquired, &mut out);
            }
            if let Some(files) = &d.draft {
                out.push(text(String::new(), th.text));
                draft_lines(app, files, d.draft_area.as_ref(), &mut out);
            } else if let Some(Area::Retired { branch }) = &d.draft_area {
                out.push(text(String::new(), th.text));
                out.push(text("Draft".into(), th.heading2));
                out.push(text(
                    format!("  the git worktree was removed when the task was archived; its last state is on branch {branch}"),
                    th.dim,
                ));
            }
            out.push(text(String::new(), th.text));
            out.push(text("PROMPT.md".into(), th.heading2));
            match &t.prompt {
                Some(p) => {
                    for (kind, l) in crate::tui::widgets::markdown::classify(p, true) {
                        let line = crate::tui::widgets::markdown::styled_line(kind, &l, th);
                        out.push((own(line), 0));
                    }
                }
                None => out.push(text("  not written yet".into(), th.dim)),
            }
            out.push(text(String::new(), th.text));
            out.push(text("Log".into(), th.heading2));
            if d.log.is_empty() {
                out.push(text("  empty".into(), th.dim));
            }
            for e in &d.log {
                let who = e.actor.as_deref().unwrap_or("");
                let outcome = e
                    .outcome
                    .as_deref()
                    .map(|o| format!(" — {o}"))
                    .unwrap_or_default();
                // To the minute: the log reads as a timeline, not as stored instants.
                let at: String = e.timestamp.chars().take(16).collect();
                let line = Line::from(vec![
                    Span::styled(format!("  {} ", at.replace('T', " ")), th.dim),
                    Span::styled(format!("{}{outcome}", e.action), th.text),
                    Span::styled(format!(" {who}"), th.dim),
                ]);
                out.push((line, 4));
            }
        }
        Some((id, Err(e))) if *id == task.id => {
            out.push(text(format!("Cannot open {id}: {e}"), th.status_error));
        }
        _ => {
            out.push(text(format!("{} — {}", task.id, task.title), th.heading));
            out.push(text(facts(app, task), th.dim));
            for (line, bad) in scheduler_facts(app, &task.id) {
                out.push(text(line, if bad { th.status_error } else { th.tool_wait }));
            }
            if let Some(line) = plan_waits(app, task) {
                out.push(text(line, th.tool_wait));
            }
            out.push(text(String::new(), th.text));
            out.push(text(task.description.clone(), th.text));
            out.push(text(String::new(), th.text));
            let loading = b.detail_ticket.is_some();
            out.push(text(
                if loading {
                    "Opening the task…".into()
                } else {
                    format!(
                        "{} opens the task: PROMPT.md, steps, documents, log.",
                        key(app, Command::Expand)
                    )
                },
                th.dim,
            ));
        }
    }
    out
}

/// The repository scope: the other books of the series the task acquired a draft area in,
/// each with the area's path, why, and its changed files (merged with the task's own).
fn scope_lines(
    app: &AppState,
    books: &[ScopedBook],
    declared: &[crate::board::repository_scope::Declared],
    out: &mut Vec<(Line<'static>, usize)>,
) {
    let th = &app.theme;
    out.push((
        Line::from(vec![
            Span::styled("Repository scope", th.heading2),
            Span::styled(
                " · this book and the books below; the merge writes them together",
                th.dim,
            ),
        ]),
        0,
    ));
    for b in books {
        let a = &b.acquired;
        out.push((
            Line::from(vec![
                Span::styled(format!("  {}", a.book), th.text),
                Span::styled(
                    format!(
                        " · draft area {}",
                        crate::text::escape_for_terminal(&b.shown_path)
                    ),
                    th.dim,
                ),
            ]),
            4,
        ));
        if let Some(r) = &a.reason {
            out.push((
                Line::from(Span::styled(
                    format!("    why: {}", crate::text::escape_for_terminal(r)),
                    th.dim,
                )),
                4,
            ));
        }
        match &b.changes {
            Ok(files) if files.is_empty() => {
                out.push((Line::from(Span::styled("    no changes yet", th.dim)), 4))
            }
            Ok(files) => {
                for (kind, path) in files {
                    let mark = match kind {
                        DraftChangeKind::Add => "A",
                        DraftChangeKind::Update => "M",
                        DraftChangeKind::Delete => "D",
                    };
                    out.push((
                        Line::from(Span::styled(
                            format!("    {mark} {}", crate::text::escape_for_terminal(path)),
                            th.text,
                        )),
                        6,
                    ));
                }
            }
            Err(e) => out.push((
                Line::from(Span::styled(
                    format!(
                        "    cannot read its draft: {}",
                        crate::text::escape_for_terminal(e)
                    ),
                    th.status_error,
                )),
                4,
            )),
        }
    }
    // Declared up front (fn_task_create, the plan's `## Repository Scope`) but no area yet:
    // the executor acquires it with fn_acquire_repo_worktree when it starts there.
    for d in declared {
        out.push((
            Line::from(vec![
                Span::styled(
                    format!("  {}", crate::text::escape_for_terminal(&d.book)),
                    th.text,
                ),
                Span::styled(" · declared, not acquired yet", th.dim),
            ]),
            4,
        ));
    }
}

/// The draft's diff so far: one line per changed file (what the merge does with it), then its
/// diff.
fn draft_lines(
    app: &AppState,
    files: &[DraftDiff],
    area: Option<&Area>,
    out: &mut Vec<(Line<'static>, usize)>,
) {
    let th = &app.theme;
    let mut heading = vec![Span::styled("Draft (changes so far)", th.heading2)];
    if let Some(Area::Worktree { branch, .. }) = area {
        heading.push(Span::styled(
            format!(" · git worktree on branch {branch}"),
            th.dim,
        ));
    }
    out.push((Line::from(heading), 0));
    if files.is_empty() {
        out.push((Line::from(Span::styled("  no changes yet", th.dim)), 0));
    }
    for f in files {
        let mark = match f.kind {
            DraftChangeKind::Add => "A",
            DraftChangeKind::Update => "M",
            DraftChangeKind::Delete => "D",
        };
        let mut note = Vec::new();
        if !f.in_scope {
            note.push("held back at merge: outside ## File Scope");
        }
        if f.stale {
            note.push("the manuscript changed since");
        }
        let note = if note.is_empty() {
            String::new()
        } else {
            format!(" · {}", note.join(" · "))
        };
        out.push((
            Line::from(vec![
                Span::styled(format!("  {mark} {}", f.path), th.text),
                Span::styled(format!(" +{} -{}{note}", f.added, f.removed), th.dim),
            ]),
            4,
        ));
        // Headers only before the first hunk: inside one, `----` is a removed `---`.
        let mut in_hunk = false;
        for l in &f.diff {
            in_hunk |= l.starts_with("@@");
            let style = if l.starts_with("@@") {
                th.diff_hunk
            } else if !in_hunk && (l.starts_with("+++") || l.starts_with("---")) {
                th.diff_header
            } else if l.starts_with('+') {
                th.diff_add
            } else if l.starts_with('-') {
                th.diff_del
            } else {
                th.text
            };
            out.push((
                Line::from(Span::styled(
                    format!("    {}", crate::text::escape_for_terminal(l)),
                    style,
                )),
                4,
            ));
        }
    }
}

/// Column, status, progress, priority, dependencies and waiting approvals in one line.
fn facts(app: &AppState, t: &Task) -> String {
    let (done, total) = t.progress();
    let mut parts = vec![
        column_name(app, &t.column),
        format!("steps {done}/{total}"),
        format!("priority {}", t.priority),
    ];
    if !t.status.is_empty() {
        parts.insert(1, t.status.clone());
    }
    if let Some(a) = t.custom_fields.get("assignee").and_then(|v| v.as_str()) {
        parts.push(format!("assignee {a}"));
    }
    if !t.dependencies.is_empty() {
        parts.push(format!("depends on {}", t.dependencies.join(", ")));
    }
    if let Some(r) = &t.blocked_reason {
        parts.push(format!("blocked: {r}"));
    }
    match pending(app, &t.id) {
        0 => {}
        n => parts.push(format!("{n} waiting for approval")),
    }
    parts.join(" · ")
}

fn own(line: Line<'_>) -> Line<'static> {
    Line::from(
        line.spans
            .into_iter()
            .map(|s| Span::styled(s.content.into_owned(), s.style))
            .collect::<Vec<_>>(),
    )
    .style(line.style)
}

pub fn draw_overlay(app: &AppState, o: &BoardOverlay, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let (title, ask, input, error) = match o {
        BoardOverlay::New { input, error } => (
            "New task".to_string(),
            "What is the task for? (its first line becomes the title)".to_string(),
            input,
            error,
        ),
        BoardOverlay::RejectPlan { task, input, error } => (
            format!("Send back the plan of {task}"),
            "What must the plan change? The task goes back to planning and its next triage session reads this.".to_string(),
            input,
            error,
        ),
        BoardOverlay::Steer { task, input, error } => (
            format!("Steer {task}"),
            "A comment for the task's agent: its live session gets it at its next turn, else its next session does.".to_string(),
            input,
            error,
        ),
        BoardOverlay::Setting {
            workflow,
            input,
            error,
        } => (
            format!("Setting of {workflow}"),
            crate::tui::board::workflows::form_ask(app, workflow),
            input,
            error,
        ),
        BoardOverlay::Reply {
            mail,
            to,
            input,
            error,
        } => {
            use crate::engine::read::ResponseMode;
            let mode = app
                .board
                .inbox
                .as_ref()
                .and_then(|v| v.data.as_ref())
                .map(|i| i.response_mode(to))
                .unwrap_or(ResponseMode::Immediate);
            let how = match mode {
                ResponseMode::Immediate if to.starts_with(crate::engine::read::SESSION_AGENT) => {
                    "it gets it at once (as its next message when it is busy)"
                }
                ResponseMode::Immediate if crate::board::agents::is_durable_id(to) => {
                    "a live session of that agent gets it at once, else its next session reads it"
                }
                ResponseMode::Immediate => "it waits in that agent's inbox for its next session",
                ResponseMode::OnHeartbeat => "it reads it at its next heartbeat",
            };
            (
                format!("Reply to {mail}"),
                format!("Your answer to {to}: {how}. Enter sends · Esc cancels"),
                input,
                error,
            )
        }
        BoardOverlay::Goal(f) => return crate::tui::board::goals::draw_form(app, f, area, buf),
        BoardOverlay::Rate(f) => return crate::tui::board::rating::draw_form(app, f, area, buf),
        BoardOverlay::Mail(f) => return crate::tui::board::compose::draw_form(app, f, area, buf),
        BoardOverlay::Room(f) => return crate::tui::board::rooms::draw_form(app, f, area, buf),
        BoardOverlay::Agents { selected } => {
            return crate::tui::board::heartbeats::draw_list(app, *selected, area, buf);
        }
        BoardOverlay::Goals {
            selected,
            error,
            follow,
        } => {
            let at = crate::tui::board::goals::current(app, *selected, follow.as_deref());
            return crate::tui::board::goals::draw_list(app, at, error.as_deref(), area, buf);
        }
    };
    // The question wraps (a settings list or a steer's explanation is longer than one row);
    // the frame grows by the rows it takes, the input stays right under it.
    const WIDTH: u16 = 72;
    let inner_width = area.width.min(WIDTH).saturating_sub(2) as usize;
    let ask =
        crate::tui::widgets::wrap::wrap_line(&Line::from(Span::styled(ask, t.dim)), inner_width, 0);
    let ask_rows = ask.len().max(1) as u16;
    let r = centered(area, WIDTH, ask_rows + if error.is_some() { 7 } else { 5 });
    let inside = overlay_frame(&title, r, buf, t);
    for (y, row) in ask.iter().enumerate() {
        put_line(buf, inside, y as u16, row);
    }
    if inside.height > ask_rows {
        input.render(
            Rect::new(inside.x, inside.y + ask_rows, inside.width, 1),
            buf,
        );
    }
    if let Some(e) = error {
        let a = Rect::new(
            inside.x,
            inside.y + ask_rows + 1,
            inside.width,
            inside.height.saturating_sub(ask_rows + 1),
        );
        draw_top_down(
            a,
            buf,
            [(Line::from(Span::styled(e.clone(), t.input_error)), 0)],
        );
    }
}
