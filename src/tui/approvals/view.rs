//! The approval request as the author reads it (after codex's approval overlay): a header
//! (tool, session, profile, mode, age), a question, then the body — a coloured unified diff
//! per file with a line-number gutter, a command with its cwd and timeout, field changes, an
//! SQL statement, or text — and the key options generated from the keymap.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use serde_json::Value;

use crate::engine::{ChangeKind, FileChange, KeptParts, PendingCall, PreviewBody};
use crate::tui::app::AppState;
use crate::tui::approvals::commands::call_commands;
use crate::tui::approvals::preview::{self, side_by_side, Item, Where};
use crate::tui::approvals::{age, cut, Waiting};
use crate::tui::chrome::{put_line, sel_style, select_line};
use crate::tui::commands::key_of;
use crate::tui::files::tree::window_offset;
use crate::tui::theme::Theme;
use crate::tui::widgets::diff::{self, emphasised, DiffItem};
use crate::tui::widgets::prose_diff::{word_changes, ProseDiff};
use crate::tui::widgets::wrap::{draw_top_down, wrap_line, Row};

fn plain(text: impl Into<String>, style: Style) -> Row {
    (Line::from(Span::styled(text.into(), style)), 0)
}

pub fn question(body: &PreviewBody) -> &'static str {
    match body {
        PreviewBody::Files { .. } => "Would you like to make the following edits?",
        PreviewBody::Command { .. } => "Would you like to run the following command?",
        PreviewBody::Records { .. } => "Would you like to save these story changes?",
        PreviewBody::Statement { .. } => "Would you like to run this SQL statement?",
        PreviewBody::Text { .. } => "Would you like to allow this?",
        PreviewBody::Egress { .. } => "Would you like to send this off the machine?",
    }
}

/// The outside client (MCP) whose session made a call, as shown (escaped: it is the
/// client's own `clientInfo.name`).
fn client_name(app: &AppState, session_id: &str) -> Option<String> {
    let info = app.sessions.get(session_id)?;
    let c = info.client.as_deref()?;
    Some(crate::text::escape_for_terminal(&cut(c, 40)).into_owned())
}

/// "MCP <client> " for a call from an outside client's session, else nothing.
fn client_mark(app: &AppState, session_id: &str) -> String {
    client_name(app, session_id)
        .map(|c| format!("MCP {c} "))
        .unwrap_or_default()
}

/// "↻ " for a call that waited across a restart, "⚠ stale " when its target changed since.
fn restored_mark(app: &AppState, approval_id: &str) -> Span<'static> {
    let t = &app.theme;
    match app.approvals.restored.get(approval_id) {
        Some(r) if r.stale.is_some() => Span::styled("⚠ stale ", t.status_error),
        Some(_) => Span::styled("↻ ", t.tool_wait),
        None => Span::raw(""),
    }
}

/// What the author must know about a call that waited across a restart.
fn restored_row(app: &AppState, call: &PendingCall) -> Option<Row> {
    let t = &app.theme;
    let r = app.approvals.restored.get(&call.approval_id)?;
    let key = |cmd| {
        app.keymap
            .key_for(cmd, &[crate::tui::keymap::Context::Approvals])
            .map(|k| k.notation())
            .unwrap_or_else(|| "—".into())
    };
    use crate::tui::action::Command;
    Some(match &r.stale {
        Some(why) => plain(
            format!(
                "⚠ stale: waited across a restart, and {why}. {} previews it anew (it cannot be approved as shown), {} rejects it.",
                key(Command::Approve),
                key(Command::Reject)
            ),
            t.status_error,
        ),
        None => plain(
            "↻ waited across a restart; its target is unchanged. Deciding it continues the session's run.",
            t.tool_wait,
        ),
    })
}

/// Header, question and body of a pending call, as items for a view `width` columns wide.
pub fn request_items<'a>(app: &'a AppState, call: &'a PendingCall, width: u16) -> Vec<Item<'a>> {
    let t = &app.theme;
    let mut items: Vec<Item> = [
        (
            Line::from(vec![
                Span::styled(call.tool.clone(), t.tool.patch(t.diff_header)),
                Span::styled(
                    format!(
                        " · session {}{} ({}) · {} mode · waiting {}",
                        call.session_id,
                        match client_name(app, &call.session_id) {
                            Some(c) => format!(" · MCP client {c}"),
                            None => String::new(),
                        },
                        call.profile,
                        call.mode,
                        age(&call.requested_at, app.wall_now)
                    ),
                    t.dim,
                ),
            ]),
            2,
        ),
        plain(question(&call.preview.body), t.diff_header),
        plain("", t.text),
    ]
    .into_iter()
    .map(Item::Row)
    .collect();
    if let Some(row) = restored_row(app, call) {
        items.insert(1, Item::Row(row));
    }
    match &call.preview.body {
        PreviewBody::Files { changes } => {
            let diffs = app
                .approvals
                .diffs
                .get(&call.approval_id)
                .map(|d| d.as_slice())
                .unwrap_or_default();
            let side = side_by_side(app, width).0;
            let kept = app.approvals.kept(call);
            if let Some(k) = &kept {
                items.push(Item::Row(parts_row(app, k)));
            }
            let starts = app
                .approvals
                .parts
                .get(&call.approval_id)
                .map(|p| p.starts.as_slice())
                .unwrap_or_default();
            files_items(changes, diffs, side, kept.as_ref(), starts, t, &mut items);
        }
        body => items.extend(
            body_rows(body, &call.preview.summary, t)
                .into_iter()
                .map(Item::Row),
        ),
    }
    items
}

/// The key options: the call's reported commands marked `hint`, keys from the active keymap.
pub fn option_rows(app: &AppState, call: &PendingCall) -> Vec<Row> {
    let t = &app.theme;
    let opt = |k: String, label: &str, available: bool| {
        let style = if available { t.key_hint } else { t.dim };
        vec![
            Span::styled(k, style),
            Span::styled(format!(" {label}  "), t.text),
        ]
    };
    let mut first = vec![Span::styled("› ", t.key_hint)];
    // A stale restored call cannot be approved as shown: approving previews it anew.
    let stale = app.approvals.stale_reason(&call.approval_id).is_some();
    for pc in call_commands(call).iter().filter(|pc| pc.hint) {
        use crate::tui::action::Command;
        let k = key_of(app, pc).unwrap_or_else(|| "—".into());
        match pc.cmd {
            Command::Approve if stale => first.extend(opt(k, "preview anew", true)),
            Command::ApproveSession if stale => {}
            _ => first.extend(opt(k, pc.label, pc.available)),
        }
    }
    if let Some(last) = first.last_mut() {
        last.content = last.content.trim_end().to_string().into();
    }
    let mut rows = vec![(Line::from(first), 2)];
    if let Some(q) = &app.approvals.search {
        // The search's keys shadow the decisions they share (n): say so under the options.
        let k = |cmd| {
            app.keymap
                .key_for(cmd, &[crate::tui::keymap::Context::DiffSearch])
                .map(|k| k.notation())
                .unwrap_or_else(|| "—".into())
        };
        use crate::tui::action::Command;
        rows.push((
            Line::from(vec![
                Span::styled(format!("  search \"{q}\": "), t.matched),
                Span::styled(k(Command::DiffNextMatch), t.key_hint),
                Span::raw(" next match · "),
                Span::styled(k(Command::DiffPrevMatch), t.key_hint),
                Span::raw(" previous · "),
                Span::styled(k(Command::DiffEndSearch), t.key_hint),
                Span::raw(" ends the search (its keys decide again after)"),
            ]),
            4,
        ));
    }
    if !call.session_grant_allowed {
        let why = if call.mode.is_read_only() {
            format!(
                "  no session grant: in {} mode an approval covers this call only",
                call.mode
            )
        } else {
            "  no session grant: the approval policy does not offer one for this call".to_string()
        };
        rows.push((Line::from(Span::styled(why, t.dim)), 4));
    }
    rows
}

pub fn body_rows(body: &PreviewBody, summary: &str, t: &Theme) -> Vec<Row> {
    match body {
        // Drawn from the call's parsed diffs (`request_items`).
        PreviewBody::Files { .. } => Vec::new(),
        PreviewBody::Command {
            command,
            cwd,
            timeout_secs,
        } => {
            let mut rows: Vec<Row> = command
                .lines()
                .enumerate()
                .map(|(i, l)| {
                    let prefix = if i == 0 { "$ " } else { "  " };
                    (Line::from(Span::styled(format!("{prefix}{l}"), t.code)), 2)
                })
                .collect();
            let mut meta = format!("  in {cwd}");
            if let Some(s) = timeout_secs {
                meta.push_str(&format!(" · timeout {s}s"));
            }
            rows.push(plain(meta, t.dim));
            rows
        }
        PreviewBody::Records { changes } => {
            let mut rows = Vec::new();
            for rc in changes {
                // World writes list the error issues they create first: warnings, not edits.
                if rc.action == crate::world::sandbox::preview::ISSUES_ACTION {
                    rows.push(plain(format!("⚠ {}", rc.record), t.status_error));
                    for c in &rc.fields {
                        rows.push((
                            Line::from(vec![
                                Span::styled(format!("  {}", c.field), t.status_error),
                                Span::raw(" — "),
                                Span::raw(match &c.after {
                                    Value::String(s) => s.clone(),
                                    other => compact(other),
                                }),
                            ]),
                            4,
                        ));
                    }
                    continue;
                }
                rows.push(plain(
                    format!("• {} {}", rc.action, rc.record),
                    t.diff_header,
                ));
                for c in &rc.fields {
                    let mut spans = vec![Span::raw(format!("  {}: ", c.field))];
                    spans.extend(field_change(&c.before, &c.after, t));
                    rows.push((Line::from(spans), 4));
                }
            }
            rows
        }
        PreviewBody::Statement { sql, rows: sample } => {
            let mut rows: Vec<Row> = sql
                .lines()
                .map(|l| (Line::from(Span::styled(l.to_string(), t.code)), 2))
                .collect();
            if !sample.is_empty() {
                rows.push(plain(format!("  {} row(s):", sample.len()), t.dim));
                for r in sample.iter().take(20) {
                    rows.push(plain(format!("  {}", compact(r)), t.dim));
                }
            }
            rows
        }
        PreviewBody::Text { text } => {
            let mut rows = vec![plain(
                crate::text::escape_for_terminal(summary).into_owned(),
                t.diff_header,
            )];
            rows.extend(text.lines().map(|l| (Line::from(l.to_string()), 0)));
            rows
        }
        PreviewBody::Egress {
            requests,
            session,
            earlier,
        } => egress_rows(requests, session, earlier, t),
    }
}

/// Each request (host, then method and URL, then body fields), who asked and what that
/// session did before: the author judges what could leave with the request.
fn egress_rows(
    requests: &[crate::engine::EgressShown],
    session: &str,
    earlier: &[String],
    t: &Theme,
) -> Vec<Row> {
    let mut rows = Vec::new();
    for r in requests {
        rows.push(plain(format!("• to {}", r.host), t.diff_header));
        rows.push((
            Line::from(Span::styled(format!("  {} {}", r.method, r.url), t.code)),
            4,
        ));
        for b in &r.body {
            rows.push((Line::from(Span::styled(format!("  body: {b}"), t.code)), 4));
        }
    }
    rows.push(plain("", t.text));
    rows.push(plain(
        format!("Asked by session {session}. Before this it:"),
        t.diff_header,
    ));
    for e in earlier {
        rows.push((Line::from(Span::styled(format!("  {e}"), t.dim)), 4));
    }
    rows
}

/// `before → after` of one record field; when both are text, the words that changed are
/// emphasised as in file diffs.
fn field_change(before: &Value, after: &Value, t: &Theme) -> Vec<Span<'static>> {
    let (Value::String(b), Value::String(a)) = (before, after) else {
        return vec![
            Span::styled(compact(before), t.diff_del),
            Span::raw(" → "),
            Span::styled(compact(after), t.diff_add),
        ];
    };
    // Shown on one row: escaped, line breaks as ⏎, then diffed as shown.
    let shown = |s: &str| crate::text::escape_for_terminal(&s.replace('\n', " ⏎ ")).into_owned();
    let (b, a) = (shown(b), shown(a));
    let (del, ins, _) = word_changes(&b, &a);
    let mut spans = vec![Span::styled("\"", t.diff_del)];
    spans.extend(emphasised(
        &b,
        t.diff_del,
        &del,
        t.diff_del_word,
        None,
        t.matched,
    ));
    spans.push(Span::styled("\"", t.diff_del));
    spans.push(Span::raw(" → "));
    spans.push(Span::styled("\"", t.diff_add));
    spans.extend(emphasised(
        &a,
        t.diff_add,
        &ins,
        t.diff_add_word,
        None,
        t.matched,
    ));
    spans.push(Span::styled("\"", t.diff_add));
    spans
}

fn compact(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        Value::Null => "(none)".into(),
        other => other.to_string(),
    }
}

fn file_label(c: &FileChange) -> String {
    let base = match &c.move_to {
        Some(to) => format!(
            "{} → {}",
            crate::text::escape_for_terminal(&c.path),
            crate::text::escape_for_terminal(to)
        ),
        None => crate::text::escape_for_terminal(&c.path).into_owned(),
    };
    match c.kind {
        ChangeKind::Add => format!("{base} (new) (+{})", c.added),
        ChangeKind::Delete => format!("{base} (deleted) (-{})", c.removed),
        ChangeKind::Update => format!("{base} (+{} -{})", c.added, c.removed),
    }
}

/// "Keeping 2 of 3 files, 4 of 6 hunks" and the keys that change it, above a call's diffs
/// when it can be approved in parts.
fn parts_row(app: &AppState, kept: &KeptParts) -> Row {
    let t = &app.theme;
    let k = |cmd| {
        app.keymap
            .key_for(cmd, &[crate::tui::keymap::Context::Approvals])
            .map(|k| k.notation())
            .unwrap_or_else(|| "—".into())
    };
    use crate::tui::action::Command;
    let verb = if kept.is_all() {
        "all kept"
    } else if kept.is_none() {
        "all dropped"
    } else {
        "kept"
    };
    (
        Line::from(vec![
            Span::styled(
                format!("Parts: {} {verb} · ", kept.summary()),
                t.diff_header,
            ),
            Span::styled(k(Command::DiffToggleHunk), t.key_hint),
            Span::raw(" keeps ⇄ drops the hunk at the top · "),
            Span::styled(k(Command::DiffToggleFile), t.key_hint),
            Span::raw(" the file · "),
            Span::styled(k(Command::Approve), t.key_hint),
            Span::raw(" applies the kept parts"),
        ]),
        2,
    )
}

/// ✓ kept, ✗ dropped, ◐ some hunks kept; nothing when the call is not decided in parts.
fn file_mark(kept: Option<&KeptParts>, i: usize) -> &'static str {
    match kept {
        None => "",
        Some(k) if k.file_whole(i) => "✓ ",
        Some(k) if !k.file_kept(i) => "✗ ",
        Some(_) => "◐ ",
    }
}

pub(crate) fn files_items<'a>(
    changes: &[FileChange],
    diffs: &'a [ProseDiff],
    side: bool,
    kept: Option<&KeptParts>,
    starts: &[Vec<usize>],
    t: &Theme,
    out: &mut Vec<Item<'a>>,
) {
    let added: usize = changes.iter().map(|c| c.added).sum();
    let removed: usize = changes.iter().map(|c| c.removed).sum();
    let diff_of = |i: usize, indent: &'static str, out: &mut Vec<Item<'a>>| {
        let Some(pd) = diffs.get(i) else { return };
        let marks = kept.and_then(|k| k.files.get(i));
        // A file split into hunks shows a mark row at the start of each (instead of `⋮`).
        let split = marks.filter(|m| m.len() > 1);
        let starts = starts.get(i).map(Vec::as_slice).unwrap_or_default();
        let mut current = None;
        for item in diff::items(pd, side) {
            let h = preview::hunk_of(pd, item);
            let is_gap = |l: usize| {
                pd.lines
                    .get(l)
                    .is_some_and(|l| l.kind == crate::tui::widgets::prose_diff::LineKind::Gap)
            };
            if let Some(m) = split {
                if item != DiffItem::Summary && current != Some(h) {
                    current = Some(h);
                    let keep = m.get(h).copied().unwrap_or(true);
                    let from = starts.get(h).copied().unwrap_or(0);
                    let (mark, style, end) = if keep {
                        ("✓", t.diff_hunk, "")
                    } else {
                        ("✗", t.dim, " — dropped")
                    };
                    out.push(Item::Row((
                        Line::from(Span::styled(
                            format!(
                                "{indent}{mark} hunk {} of {} · from line {from}{end}",
                                h + 1,
                                m.len()
                            ),
                            style,
                        )),
                        indent.len() + 2,
                    )));
                }
                let gap = match item {
                    DiffItem::Line(l) => is_gap(l),
                    DiffItem::Pair(l, _) => l.is_some_and(is_gap),
                    DiffItem::Summary => false,
                };
                if gap {
                    continue;
                }
            }
            let dropped = marks.is_some_and(|m| {
                !m.get(h.min(m.len().saturating_sub(1)))
                    .copied()
                    .unwrap_or(true)
            });
            out.push(Item::Diff {
                pd,
                item,
                indent,
                file: i,
                dropped,
            });
        }
    };
    match changes {
        [] => out.push(Item::Row(plain("• No file changes", t.diff_header))),
        [one] => {
            let verb = match one.kind {
                ChangeKind::Add => "Added",
                ChangeKind::Delete => "Deleted",
                ChangeKind::Update => "Edited",
            };
            out.push(Item::Row(plain(
                format!("• {}{verb} {}", file_mark(kept, 0), file_label(one)),
                t.diff_header,
            )));
            diff_of(0, "  ", out);
        }
        many => {
            out.push(Item::Row(plain(
                format!("• Edited {} files (+{added} -{removed})", many.len()),
                t.diff_header,
            )));
            for (i, c) in many.iter().enumerate() {
                let dropped = kept.is_some_and(|k| !k.file_kept(i));
                out.push(Item::Row((
                    Line::from(Span::styled(
                        format!(
                            "  └ {}{}{}",
                            file_mark(kept, i),
                            file_label(c),
                            if dropped { " — dropped" } else { "" }
                        ),
                        if dropped { t.dim } else { t.diff_header },
                    )),
                    4,
                )));
                diff_of(i, "    ", out);
            }
        }
    }
}

/// The Approvals pane's list: calls and questions in the order they arrived.
pub fn draw_approvals(app: &AppState, area: Rect, buf: &mut Buffer, focused: bool) {
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
    for (i, w) in a.items.iter().skip(off).take(h).enumerate() {
        let mut line = match w {
            Waiting::Call(c) => Line::from(vec![
                Span::styled(format!("{:>3} ", age(&c.requested_at, app.wall_now)), t.dim),
                Span::styled(c.tool.clone(), t.tool),
                Span::styled(
                    format!(" {} ", crate::tui::sessions::short_id(&c.session_id)),
                    t.dim,
                ),
                Span::styled(client_mark(app, &c.session_id), t.tool_wait),
                restored_mark(app, &c.approval_id),
                Span::raw(cut(&c.preview.summary, 200)),
            ]),
            Waiting::Question(q) => Line::from(vec![
                Span::styled(format!("{:>3} ", age(&q.requested_at, app.wall_now)), t.dim),
                Span::styled("? question", t.tool_wait),
                Span::styled(
                    format!(" {} ", crate::tui::sessions::short_id(&q.session_id)),
                    t.dim,
                ),
                Span::raw(cut(&q.title, 200)),
            ]),
        };
        if off + i == a.selected {
            line = select_line(line, sel_style(app, focused));
            buf.set_style(
                Rect::new(area.x, area.y + i as u16, area.width, 1),
                sel_style(app, focused),
            );
        }
        put_line(buf, area, i as u16, &line);
    }
}

/// The right-hand view: the selected request with its options pinned below, or a question.
pub fn draw_detail(app: &AppState, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    if let Some(q) = app.approvals.selected_question() {
        let rows = crate::tui::widgets::forms::view::question_rows(app, q);
        let skip = app
            .approvals
            .preview_scroll
            .min(rows.len().saturating_sub(1));
        draw_top_down(area, buf, rows.into_iter().skip(skip));
        return;
    }
    let Some(call) = app.approvals.selected_call() else {
        draw_top_down(
            area,
            buf,
            [
                (Line::from(Span::styled("Nothing is waiting for your approval.", t.dim)), 0),
                (Line::from(""), 0),
                (
                    Line::from(Span::styled(
                        "When an agent asks to change the project, the request and its preview show here: y approves, n rejects. Questions from agents and workflows wait here too: Enter answers them.",
                        t.dim,
                    )),
                    0,
                ),
            ],
        );
        return;
    };
    let options = option_rows(app, call);
    let opt_rows: Vec<Line<'static>> = options
        .iter()
        .flat_map(|(l, i)| wrap_line(l, area.width as usize, *i))
        .collect();
    let opt_h = (opt_rows.len() as u16 + 1).min(area.height / 2);
    let body = Rect::new(area.x, area.y, area.width, area.height - opt_h);
    preview::note_width(app, Where::Pane, body.width);
    let items = request_items(app, call, body.width);
    let skip = app
        .approvals
        .preview_scroll
        .min(items.len().saturating_sub(1));
    draw_top_down(body, buf, preview::rows(app, &items[skip..], body.width));
    let opt_area = Rect::new(area.x, area.y + area.height - opt_h, area.width, opt_h);
    for (i, row) in opt_rows
        .iter()
        .enumerate()
        .take(opt_h.saturating_sub(1) as usize)
    {
        put_line(buf, opt_area, i as u16 + 1, row);
    }
}
