//! Questions for the author: the read-only preview in the Approvals pane's right-hand view,
//! the answer form, and the new-session form.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::engine::inputs::{InputRequest, InputSource};
use crate::tui::action::Command;
use crate::tui::app::AppState;
use crate::tui::approvals::age;
use crate::tui::chrome::{centered, overlay_frame, put_line};
use crate::tui::keymap::Context;
use crate::tui::widgets::forms::{AgentsList, AnswerForm, NewField, NewSessionForm};
use crate::tui::widgets::wrap::Row;
use crate::tui::widgets::wrap::{draw_top_down, wrap_line};

fn key(app: &AppState, cmd: Command, ctx: Context) -> String {
    app.keymap
        .key_for(cmd, &[ctx])
        .map(|k| k.notation())
        .unwrap_or_else(|| "—".into())
}

fn source_label(q: &InputRequest) -> &'static str {
    match q.source {
        InputSource::Agent => "the agent asks (request_user_input)",
        InputSource::Workflow => "a workflow asks (wf.ask)",
    }
}

/// A waiting question as the Approvals pane previews it.
pub fn question_rows(app: &AppState, q: &InputRequest) -> Vec<Row> {
    let t = &app.theme;
    let mut rows: Vec<Row> = vec![
        (
            Line::from(vec![
                Span::styled("question", t.tool.patch(t.diff_header)),
                Span::styled(
                    format!(
                        " · session {} · {} · waiting {}",
                        q.session_id,
                        source_label(q),
                        age(&q.requested_at, app.wall_now)
                    ),
                    t.dim,
                ),
            ]),
            2,
        ),
        (Line::from(Span::styled(q.title.clone(), t.diff_header)), 0),
        (Line::from(""), 0),
    ];
    for (i, question) in q.questions.iter().enumerate() {
        let head = question
            .header
            .as_ref()
            .map(|h| format!("{h} · "))
            .unwrap_or_default();
        rows.push((
            Line::from(Span::styled(
                format!("{}. {head}{}", i + 1, question.question),
                t.heading2,
            )),
            3,
        ));
        if question.options.is_empty() {
            rows.push((Line::from(Span::styled("   free-text answer", t.dim)), 3));
        }
        for (n, o) in question.options.iter().enumerate() {
            let mut spans = vec![
                Span::styled(format!("   {} ", n + 1), t.key_hint),
                Span::styled(o.label.clone(), t.text),
            ];
            if let Some(d) = &o.description {
                spans.push(Span::styled(format!(" — {d}"), t.dim));
            }
            rows.push((Line::from(spans), 5));
        }
        if question.multi {
            rows.push((
                Line::from(Span::styled("   (several may be chosen)", t.dim)),
                3,
            ));
        }
        rows.push((Line::from(""), 0));
    }
    rows.push((
        Line::from(vec![
            Span::styled("› ", t.key_hint),
            Span::styled(key(app, Command::Detail, Context::Approvals), t.key_hint),
            Span::styled(" answer", t.text),
        ]),
        2,
    ));
    rows
}

/// What a form row shows: a styled line, or a question's text field.
enum FormRow {
    Line(Line<'static>),
    Field(usize),
}

pub fn draw_answer_form(app: &AppState, f: &AnswerForm, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let r = centered(
        area,
        area.width.saturating_sub(6).clamp(20, 100),
        area.height.saturating_sub(2),
    );
    let title = format!(
        "Answer session {}: {}",
        f.request.session_id,
        crate::tui::approvals::cut(&f.request.title, 60)
    );
    let inside = overlay_frame(&title, r, buf, t);
    if inside.height < 4 || inside.width < 10 {
        return;
    }
    let width = inside.width as usize;
    let mut rows: Vec<FormRow> = Vec::new();
    let mut cursor_at = 0usize;
    for (qi, q) in f.request.questions.iter().enumerate() {
        let d = &f.answers[qi];
        let current = qi == f.question;
        let head = q
            .header
            .as_ref()
            .map(|h| format!(" · {h}"))
            .unwrap_or_default();
        let skipped = if d.skipped { " · skipped" } else { "" };
        rows.push(FormRow::Line(Line::from(Span::styled(
            format!(
                "Question {}/{}{head}{skipped}",
                qi + 1,
                f.request.questions.len()
            ),
            if current { t.heading2 } else { t.dim },
        ))));
        for l in wrap_line(
            &Line::from(Span::styled(
                q.question.clone(),
                if current { t.text } else { t.dim },
            )),
            width,
            0,
        ) {
            rows.push(FormRow::Line(l));
        }
        for (oi, o) in q.options.iter().enumerate() {
            let on = current && f.row == oi;
            if on {
                cursor_at = rows.len();
            }
            let chosen = d.chosen.contains(&oi);
            let mark = match (q.multi, chosen) {
                (true, true) => "[x]",
                (true, false) => "[ ]",
                (false, true) => "(•)",
                (false, false) => "( )",
            };
            let mut spans = vec![
                Span::styled(if on { " › " } else { "   " }, t.key_hint),
                Span::styled(format!("{mark} "), if chosen { t.tool_ok } else { t.dim }),
                Span::styled(format!("{} ", oi + 1), t.key_hint),
                Span::styled(o.label.clone(), if chosen { t.tool_ok } else { t.text }),
            ];
            if let Some(desc) = &o.description {
                spans.push(Span::styled(format!(" — {desc}"), t.dim));
            }
            let mut line = Line::from(spans);
            if on {
                line = line.style(t.selection);
            }
            rows.push(FormRow::Line(line));
        }
        let on_text = current && f.row == q.options.len();
        if on_text {
            cursor_at = rows.len();
        }
        rows.push(FormRow::Field(qi));
        rows.push(FormRow::Line(Line::from("")));
    }
    let mut foot: Vec<Line<'static>> = Vec::new();
    if let Some(e) = &f.error {
        foot.extend(wrap_line(
            &Line::from(Span::styled(e.clone(), t.input_error)),
            width,
            2,
        ));
    }
    let keys = if f.sending {
        Line::from(Span::styled(
            "sending the answers to the engine…",
            t.status_info,
        ))
    } else {
        let k = |c| key(app, c, Context::Form);
        let mut spans = vec![
            Span::styled("1–9", t.key_hint),
            Span::styled(" pick · ", t.dim),
        ];
        for (c, label) in [
            (Command::ToggleOption, " toggle · "),
            (Command::NextField, " next question · "),
            (Command::SkipQuestion, " skip · "),
            (Command::Submit, " send · "),
            (Command::Cancel, " close (it keeps waiting)"),
        ] {
            spans.push(Span::styled(k(c), t.key_hint));
            spans.push(Span::styled(label, t.dim));
        }
        Line::from(spans)
    };
    foot.extend(wrap_line(&keys, width, 2));
    let foot_h = (foot.len() as u16).min(inside.height / 2);
    let body_h = (inside.height - foot_h) as usize;
    // Keep the cursor's row in view, with its question's heading when it fits.
    let start = cursor_at.saturating_sub(body_h.saturating_sub(2));
    for (i, row) in rows.iter().skip(start).take(body_h).enumerate() {
        let y = inside.y + i as u16;
        match row {
            FormRow::Line(l) => put_line(buf, inside, i as u16, l),
            FormRow::Field(qi) => {
                let d = &f.answers[*qi];
                let on = *qi == f.question && f.row == f.request.questions[*qi].options.len();
                let marker = if on { " › ✎ " } else { "   ✎ " };
                buf.set_string(inside.x, y, marker, t.key_hint);
                let w = inside.width.saturating_sub(5);
                if w > 0 {
                    let rect = Rect::new(inside.x + 5, y, w, 1);
                    if on && !f.sending {
                        d.text.render(rect, buf);
                    } else {
                        let text = crate::tui::input::text_of(&d.text);
                        let (shown, style) = if text.is_empty() {
                            let ph = if f.request.questions[*qi].options.is_empty() {
                                "type your answer"
                            } else {
                                "or type an answer of your own"
                            };
                            (ph.to_string(), t.dim)
                        } else {
                            (text, t.text)
                        };
                        put_line(buf, rect, 0, &Line::from(Span::styled(shown, style)));
                    }
                }
            }
        }
    }
    for (i, l) in foot.iter().take(foot_h as usize).enumerate() {
        put_line(buf, inside, inside.height - foot_h + i as u16, l);
    }
}

pub fn draw_new_session(app: &AppState, f: &NewSessionForm, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let r = centered(area, area.width.saturating_sub(6).clamp(20, 90), 22);
    let inside = overlay_frame("New session", r, buf, t);
    if inside.height < 6 || inside.width < 10 {
        return;
    }
    let label = |text: &str, field: NewField| {
        let on = f.field == field;
        Line::from(vec![
            Span::styled(if on { "› " } else { "  " }, t.key_hint),
            Span::styled(text.to_string(), if on { t.heading2 } else { t.dim }),
        ])
    };
    let mut y = 0u16;
    let mut line = |buf: &mut Buffer, l: &Line<'_>| {
        put_line(buf, inside, y, l);
        y += 1;
    };
    line(buf, &label("Profile or durable agent", NewField::Profile));
    // One list: the profiles, then the durable agents (a session as one runs with its role's
    // profile and the agent's identity, mail and ratings).
    let agents = f.agent_rows();
    let rows = f.profiles.len() + agents.len();
    let list_h = (inside.height as usize).saturating_sub(13).clamp(1, 6);
    let start = f
        .profile
        .saturating_sub(list_h.saturating_sub(1))
        .min(rows.saturating_sub(list_h));
    for i in (start..rows).take(list_h) {
        let sel = i == f.profile;
        let (key, rest) = match f.profiles.get(i) {
            Some(p) => (p.key.clone(), format!(" · {} — {}", p.name, p.description)),
            None => {
                let a = &agents[i - f.profiles.len()];
                (
                    a.id.clone(),
                    format!(
                        " · {} — durable {} agent, runs as profile {}",
                        a.name, a.role, a.profile
                    ),
                )
            }
        };
        let mut l = Line::from(vec![
            Span::styled(if sel { "  (•) " } else { "  ( ) " }, t.key_hint),
            Span::styled(key, t.text),
            Span::styled(rest, t.dim),
        ]);
        if sel && f.field == NewField::Profile {
            l = l.style(t.selection);
        }
        line(buf, &l);
    }
    let note = match &f.agents {
        AgentsList::Loading => Some(("  reading the durable agents…".to_string(), t.dim)),
        AgentsList::Loaded(a) if a.is_empty() => Some((
            "  no durable agents yet (fn_agent_create makes one)".to_string(),
            t.dim,
        )),
        AgentsList::Loaded(_) => None,
        AgentsList::Failed(e) => Some((
            format!("  the durable agents could not be read: {e}"),
            t.input_error,
        )),
    };
    if let Some((text, style)) = note {
        line(buf, &Line::from(Span::styled(text, style)));
    }
    line(buf, &Line::from(""));
    line(buf, &label("Model", NewField::Model));
    let models: Vec<String> = std::iter::once("profile default".to_string())
        .chain(f.models.iter().cloned())
        .collect();
    let mh = 3usize;
    let mstart = f
        .model
        .saturating_sub(mh - 1)
        .min(models.len().saturating_sub(mh));
    for (i, m) in models.iter().enumerate().skip(mstart).take(mh) {
        let sel = i == f.model;
        let note = if i == 0 {
            " — the model config.toml sets for the profile"
        } else {
            ""
        };
        let mut l = Line::from(vec![
            Span::styled(if sel { "  (•) " } else { "  ( ) " }, t.key_hint),
            Span::styled(m.clone(), t.text),
            Span::styled(note, t.dim),
        ]);
        if sel && f.field == NewField::Model {
            l = l.style(t.selection);
        }
        line(buf, &l);
    }
    if f.models.is_empty() {
        let setup = key(app, Command::ModelSetup, Context::Sessions);
        line(
            buf,
            &Line::from(Span::styled(
                format!(
                    "  no model in {} yet: Esc, then {setup}, sets one up",
                    app.config_file.display()
                ),
                t.dim,
            )),
        );
    }
    line(buf, &Line::from(""));
    line(buf, &label("Title", NewField::Title));
    if y < inside.height {
        let rect = Rect::new(
            inside.x + 2,
            inside.y + y,
            inside.width.saturating_sub(2),
            1,
        );
        if f.field == NewField::Title {
            f.title.render(rect, buf);
        } else {
            let text = f.title_or_default();
            put_line(buf, rect, 0, &Line::from(Span::styled(text, t.dim)));
        }
        y += 1;
    }
    let mut foot: Vec<Row> = Vec::new();
    if let Some(e) = &f.error {
        foot.push((Line::from(Span::styled(e.clone(), t.input_error)), 2));
    }
    if f.creating {
        foot.push((
            Line::from(Span::styled("creating the session…", t.status_info)),
            0,
        ));
    } else {
        let k = |c| key(app, c, Context::Form);
        let mut spans = Vec::new();
        for (c, l) in [
            (Command::NextField, " next field · "),
            (Command::NextItem, "/"),
        ] {
            spans.push(Span::styled(k(c), t.key_hint));
            spans.push(Span::styled(l, t.dim));
        }
        spans.push(Span::styled(k(Command::PrevItem), t.key_hint));
        spans.push(Span::styled(" choose · type to jump · ", t.dim));
        spans.push(Span::styled(k(Command::Submit), t.key_hint));
        spans.push(Span::styled(" create · ", t.dim));
        spans.push(Span::styled(k(Command::Cancel), t.key_hint));
        spans.push(Span::styled(" close", t.dim));
        foot.push((Line::from(spans), 2));
    }
    let foot_rows: Vec<Line<'static>> = foot
        .iter()
        .flat_map(|(l, i)| wrap_line(l, inside.width as usize, *i))
        .collect();
    let fh = foot_rows.len() as u16;
    if inside.height > y + fh {
        draw_top_down(
            Rect::new(inside.x, inside.y + inside.height - fh, inside.width, fh),
            buf,
            foot_rows.into_iter().map(|l| (l, 0)),
        );
    }
}
