//! The World pane's tabs under the timeline, as rows for `draw_top_down` (a line and the
//! indent of its wrapped continuation): the selected subject's state at the cursor (with the
//! issues that hold there), its track (every slice that touched it, with the patches; one row
//! each so the cursor's slice can be scrolled to), the diff from instant A to the cursor (the
//! changed words of each attribute emphasised as in file previews), and
//! every subject's issues at the cursor with their explanations.

use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use crate::tui::action::Command;
use crate::tui::app::AppState;
use crate::tui::keymap::Context;
use crate::tui::widgets::diff::emphasised;
use crate::tui::widgets::prose_diff::word_changes;
use crate::tui::widgets::wrap::Row;
use crate::tui::widgets::wrap::NO_WRAP;
use crate::tui::world::{show_value, WorldState, WorldTab, ISSUE_LIMIT, TRACK_LIMIT};
use crate::world::issues::Severity;

fn key(app: &AppState, cmd: Command) -> String {
    app.keymap
        .key_for(cmd, &[Context::World, Context::Global])
        .map(|k| k.notation())
        .unwrap_or_default()
}

fn note(app: &AppState, text: impl Into<String>) -> Vec<Row> {
    vec![(Line::from(Span::styled(text.into(), app.theme.dim)), 0)]
}

fn error(app: &AppState, text: impl Into<String>) -> Vec<Row> {
    vec![(
        Line::from(Span::styled(text.into(), app.theme.status_error)),
        0,
    )]
}

/// The rows of the current tab for a detail `width` cells wide.
pub fn tab_rows(app: &AppState, width: usize) -> Vec<Row> {
    match app.world.tab {
        WorldTab::State => state_rows(app, width),
        WorldTab::Track => track_rows(app),
        WorldTab::Diff => diff_rows(app, width),
        WorldTab::Issues => issue_rows(app),
    }
}

fn subject_label(app: &AppState) -> Option<String> {
    app.world.selected_subject().map(|s| {
        if s.name.is_empty() {
            s.id.clone()
        } else {
            s.name.clone()
        }
    })
}

/// Width of the name column: the longest name, within reason.
fn name_width(names: impl Iterator<Item = usize>, width: usize) -> usize {
    names.max().unwrap_or(0).min(18).min(width / 3)
}

fn state_rows(app: &AppState, width: usize) -> Vec<Row> {
    let t = &app.theme;
    let w = &app.world;
    let Some(s) = w.selected_subject() else {
        return note(
            app,
            "Select a subject on the left to see its state at the cursor.",
        );
    };
    // Until the state job for this subject and cursor is back: a loading note, never the
    // state at another instant.
    let Some(c) = w
        .state
        .as_ref()
        .filter(|c| c.key.0 == s.id && c.key.1 == w.cursor)
    else {
        return note(app, "…");
    };
    let st = match &c.value {
        Err(e) => return error(app, format!("Cannot read the state: {e}")),
        Ok(None) => return error(app, format!("There is no subject {} any more.", s.id)),
        Ok(Some(st)) => st,
    };
    let mut rows: Vec<Row> = vec![(
        Line::from(vec![
            Span::styled(subject_label(app).unwrap_or_default(), t.heading2),
            Span::styled(format!(" · {} · {}", s.kind, s.id), t.dim),
        ]),
        2,
    )];
    if st.attrs.is_empty() {
        rows.push((
            Line::from(Span::styled(
                "Nothing is recorded for it by this time.",
                t.dim,
            )),
            0,
        ));
    }
    let kw = name_width(st.attrs.keys().map(|k| k.width()), width);
    let mut attrs: Vec<_> = st.attrs.iter().collect();
    attrs.sort_by(|a, b| a.0.cmp(b.0));
    for (k, v) in attrs {
        rows.push((
            Line::from(vec![
                Span::styled(format!("{k:<kw$}  "), t.meta),
                Span::styled(show_value(v), t.text),
            ]),
            kw + 2,
        ));
    }
    if !st.issues.is_empty() {
        rows.push((Line::default(), 0));
        rows.push((
            Line::from(vec![
                Span::styled(
                    format!("⚠ {} issue(s) at this time", st.issues.len()),
                    t.status_error,
                ),
                Span::styled(
                    format!(
                        " — {} lists every issue with its explanation",
                        key(app, Command::WorldIssues)
                    ),
                    t.dim,
                ),
            ]),
            2,
        ));
        for i in &st.issues {
            rows.push((
                Line::from(vec![
                    Span::styled(format!("  {} ", i.code), t.tool_err),
                    Span::styled(format!("{} {}: ", i.attr, i.label), t.dim),
                    Span::raw(i.message.clone()),
                ]),
                4,
            ));
        }
    }
    rows
}

/// Index of the row of the cursor's slice in the track (0 when none).
pub fn track_anchor(w: &WorldState) -> usize {
    let Some(id) = &w.selected_id else { return 0 };
    let Some(entries) = w.track.get(id) else {
        return 0;
    };
    let mut row = 1;
    let mut anchor = 0;
    for e in entries {
        if e.instant > w.cursor {
            break;
        }
        anchor = row;
        row += 1 + e.patches.len();
    }
    anchor
}

fn track_rows(app: &AppState) -> Vec<Row> {
    let t = &app.theme;
    let w = &app.world;
    let Some(id) = &w.selected_id else {
        return note(app, "Select a subject on the left to see its track.");
    };
    let Some(entries) = w.track.get(id) else {
        return match &w.track.error {
            Some(e) if w.track.key.as_ref() == Some(id) => error(app, e.clone()),
            _ => note(app, "loading…"),
        };
    };
    if entries.is_empty() {
        return note(app, "No slice touched it yet.");
    }
    let current = entries.partition_point(|e| e.instant <= w.cursor);
    let mut rows: Vec<Row> = vec![(
        Line::from(Span::styled(
            format!(
                "{} touched {} · ▶ the last one by the cursor",
                crate::text::count(entries.len(), "slice", "slices"),
                subject_label(app).unwrap_or_default()
            ),
            t.dim,
        )),
        NO_WRAP,
    )];
    for (j, e) in entries.iter().enumerate() {
        let future = j >= current;
        let mark = if j + 1 == current { "▶ " } else { "  " };
        let kind = if e.kind == "event" {
            String::new()
        } else {
            format!("  ({})", e.kind)
        };
        rows.push((
            Line::from(vec![
                Span::styled(mark, t.key_hint),
                Span::styled(format!("{}  ", e.time), if future { t.dim } else { t.meta }),
                Span::styled(
                    e.title.clone(),
                    if future {
                        t.dim
                    } else if j + 1 == current {
                        t.heading2
                    } else {
                        t.text
                    },
                ),
                Span::styled(kind, t.dim),
            ]),
            NO_WRAP,
        ));
        for p in &e.patches {
            let mut text = format!("      {} {}", p.op, p.path);
            if let Some(v) = &p.value {
                text.push(' ');
                text.push_str(&v.to_string());
            }
            if let Some(s) = &p.summary {
                text.push_str(" — ");
                text.push_str(s);
            }
            let style = if future { t.dim } else { t.text };
            rows.push((Line::from(Span::styled(text, style)), NO_WRAP));
        }
    }
    if entries.len() >= TRACK_LIMIT {
        rows.push((
            Line::from(Span::styled(
                format!("… only the first {TRACK_LIMIT} slices are listed"),
                t.dim,
            )),
            NO_WRAP,
        ));
    }
    rows
}

fn diff_rows(app: &AppState, width: usize) -> Vec<Row> {
    let t = &app.theme;
    let w = &app.world;
    let Some((_, a)) = &w.mark else {
        return note(
            app,
            format!(
                "Press {} to mark instant A at the cursor, then move the cursor: what changed from A to the cursor shows here.",
                key(app, Command::WorldMark)
            ),
        );
    };
    if w.selected_subject().is_none() {
        return note(app, "Select a subject on the left to compare its states.");
    }
    let mut rows: Vec<Row> = vec![(
        Line::from(vec![
            Span::styled("A", t.badge),
            Span::raw(format!(" {a} → ⌖ {}", w.cursor_label)),
        ]),
        2,
    )];
    let Some(d) = &w.diff else {
        rows.extend(note(app, "…"));
        return rows;
    };
    let diffs = match &d.value {
        Err(e) => {
            rows.extend(error(app, e.clone()));
            return rows;
        }
        Ok(v) => v,
    };
    if diffs.is_empty() {
        rows.extend(note(app, "No attribute differs."));
        return rows;
    }
    rows.push((
        Line::from(Span::styled(
            format!("{} attribute(s) differ", diffs.len()),
            t.dim,
        )),
        0,
    ));
    let kw = name_width(diffs.iter().map(|d| d.attr.width()), width);
    let show = |v: &Option<serde_json::Value>| match v {
        Some(v) => show_value(v),
        None => "(absent)".to_string(),
    };
    for d in diffs {
        let (before, after) = (show(&d.before), show(&d.after));
        // Both sides present: the words (CJK: characters) that changed stand out, as in
        // file previews; an attribute that appeared or went is shown whole.
        let (del, ins) = match (&d.before, &d.after) {
            (Some(_), Some(_)) => {
                let (del, ins, _) = word_changes(&before, &after);
                (del, ins)
            }
            _ => (Vec::new(), Vec::new()),
        };
        let mut spans = vec![Span::styled(format!("{:<kw$}  ", d.attr), t.meta)];
        spans.extend(emphasised(
            &before,
            t.diff_del,
            &del,
            t.diff_del_word,
            None,
            t.matched,
        ));
        spans.push(Span::styled(" → ", t.dim));
        spans.extend(emphasised(
            &after,
            t.diff_add,
            &ins,
            t.diff_add_word,
            None,
            t.matched,
        ));
        rows.push((Line::from(spans), kw + 2));
    }
    rows
}

fn issue_rows(app: &AppState) -> Vec<Row> {
    let t = &app.theme;
    let w = &app.world;
    let Some(list) = &w.issues.data else {
        return match &w.issues.error {
            Some(e) => error(app, e.clone()),
            None => note(
                app,
                format!("Checking every subject at {}…", w.cursor_label),
            ),
        };
    };
    let updating = if w.issues.key != Some(w.cursor) {
        " (updating…)"
    } else {
        ""
    };
    let mut rows: Vec<Row> = Vec::new();
    if let Some(e) = &w.issues.error {
        rows.extend(error(app, e.clone()));
    }
    if list.is_empty() {
        rows.push((
            Line::from(Span::styled(
                format!("No issues: every patch applies cleanly at the cursor.{updating}"),
                t.dim,
            )),
            0,
        ));
        return rows;
    }
    rows.push((
        Line::from(Span::styled(
            format!(
                "{} issue(s) at the cursor, every subject{updating}",
                list.len()
            ),
            t.dim,
        )),
        0,
    ));
    for r in list {
        let i = &r.issue;
        let severity = match i.severity {
            Severity::Error => "error",
            Severity::Advisory => "advisory",
        };
        let mut place = format!("{} {}", i.subject_id, i.path.as_deref().unwrap_or(&i.attr));
        if let Some(time) = &r.time {
            place.push_str(" · ");
            place.push_str(time);
        }
        rows.push((Line::default(), 0));
        rows.push((
            Line::from(vec![
                Span::styled(format!("{} {}", i.code, i.label), t.tool_err),
                Span::styled(format!(" · {severity} · "), t.dim),
                Span::styled(place, t.meta),
            ]),
            2,
        ));
        rows.push((
            Line::from(Span::styled(format!("  {}", i.title), t.heading2)),
            4,
        ));
        rows.push((Line::from(Span::raw(format!("  {}", i.message))), 4));
        let e = &i.explanation;
        for (label, text) in [
            ("What happened", &e.what_happened),
            ("Why it matters", &e.why_it_matters),
            ("Suggested action", &e.suggested_action),
        ] {
            rows.push((
                Line::from(vec![
                    Span::styled(format!("  {label}: "), t.dim),
                    Span::raw(text.clone()),
                ]),
                4,
            ));
        }
    }
    if list.len() >= ISSUE_LIMIT {
        rows.push((
            Line::from(Span::styled(
                format!("… only the first {ISSUE_LIMIT} issues are listed"),
                t.dim,
            )),
            0,
        ));
    }
    rows
}
