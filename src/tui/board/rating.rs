//! The author's rating of an agent's run: `R` on the selected session in the Sessions pane,
//! or on the selected task in the Board (its last role session), opens this form — a score
//! 1–5, then an optional comment (Enter on the score moves on, Enter on the comment — or
//! Ctrl+S anywhere — sends it as the author's `fn_agent_rate`). A score that is not a whole
//! number 1–5 or an over-long comment is refused in the form with what to type, and nothing
//! is sent; a refusal from the engine (no session worked on the task yet) shows in the form.
//! The form takes keys from `[input]`; it is a Board overlay so both panes share it.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use tui_textarea::TextArea;

use crate::board::evaluations::COMMENT_MAX;
use crate::engine::author::AUTHOR_PROFILE;
use crate::tui::action::{Command, Effect};
use crate::tui::app::AppState;
use crate::tui::board::jobs::BoardWrite;
use crate::tui::board::overlay::BoardOverlay;
use crate::tui::chrome::{centered, overlay_frame, put_line};
use crate::tui::input::{single_line, text_of, Overlay};
use crate::tui::widgets::wrap::{draw_top_down, fit_width, Cut};

/// What is rated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RateTarget {
    /// A session's run (the Sessions pane).
    Session { id: String, title: String },
    /// The last role session of a board task (the Board).
    Task { id: String, title: String },
}

impl RateTarget {
    fn describe(&self) -> String {
        match self {
            RateTarget::Session { id, title } => format!("session {id} · {title}"),
            RateTarget::Task { id, title } => format!("the last run on {id} · {title}"),
        }
    }
}

pub struct RateForm {
    pub target: RateTarget,
    pub score: TextArea<'static>,
    pub comment: TextArea<'static>,
    pub on_comment: bool,
    pub error: Option<String>,
    /// Sent to the engine; the form stays open until it answers (a refusal is shown here).
    pub sending: bool,
}

impl RateForm {
    fn new(target: RateTarget) -> RateForm {
        RateForm {
            target,
            score: single_line("1 (poor) to 5 (excellent)"),
            comment: single_line("what was good or wrong (optional)"),
            on_comment: false,
            error: None,
            sending: false,
        }
    }

    pub fn field(&self) -> &TextArea<'static> {
        if self.on_comment {
            &self.comment
        } else {
            &self.score
        }
    }

    pub fn field_mut(&mut self) -> &mut TextArea<'static> {
        if self.on_comment {
            &mut self.comment
        } else {
            &mut self.score
        }
    }
}

/// The score typed, or what to type instead.
pub fn parse_score(text: &str) -> Result<i64, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("Type a score from 1 (poor) to 5 (excellent), e.g. 4.".into());
    }
    match t.parse::<i64>() {
        Ok(n) if (1..=5).contains(&n) => Ok(n),
        Ok(n) => Err(format!(
            "{n} is outside 1–5: type a whole number from 1 (poor) to 5 (excellent)."
        )),
        Err(_) => Err(format!(
            "\"{t}\" is not a score: type a whole number from 1 (poor) to 5 (excellent)."
        )),
    }
}

impl AppState {
    fn open_rate_form(&mut self, target: RateTarget) {
        self.overlay = Some(Overlay::Board(Box::new(BoardOverlay::Rate(Box::new(
            RateForm::new(target),
        )))));
    }

    /// `R` in the Sessions pane: rate the selected session's run.
    pub(crate) fn rate_open_session(&mut self) {
        let Some(s) = self.sessions.selected() else {
            self.info("No session selected to rate: n starts one.");
            return;
        };
        if s.profile == AUTHOR_PROFILE {
            self.info("That session holds your own edits; rate an agent's session.");
            return;
        }
        let target = RateTarget::Session {
            id: s.id.clone(),
            title: s.title.clone(),
        };
        self.open_rate_form(target);
    }

    /// `R` in the Board: rate the selected task's last role session.
    pub(crate) fn rate_open_task(&mut self) {
        let Some(t) = self.board.selected_task() else {
            self.info("No task selected to rate: select the task whose last run you rate.");
            return;
        };
        let target = RateTarget::Task {
            id: t.id.clone(),
            title: t.title.clone(),
        };
        self.open_rate_form(target);
    }

    /// A rating landed: the form closes on success and shows a refusal. True when the open
    /// form took the outcome.
    pub(crate) fn rate_write_landed(&mut self, w: &BoardWrite, r: &Result<(), String>) -> bool {
        let Some(Overlay::Board(o)) = &mut self.overlay else {
            return false;
        };
        match (o.as_mut(), w, r) {
            (BoardOverlay::Rate(_), BoardWrite::Rate { .. }, Ok(())) => {
                self.overlay = None;
                false
            }
            (BoardOverlay::Rate(f), BoardWrite::Rate { .. }, Err(e)) => {
                f.sending = false;
                f.error = Some(format!("Not rated: {e}"));
                true
            }
            _ => false,
        }
    }

    pub(crate) fn rate_form_command(&mut self, cmd: Command) -> Vec<Effect> {
        let Some(Overlay::Board(o)) = &mut self.overlay else {
            return Vec::new();
        };
        let BoardOverlay::Rate(f) = o.as_mut() else {
            return Vec::new();
        };
        match cmd {
            Command::Accept | Command::Submit if f.sending => Vec::new(),
            Command::Accept | Command::Submit => {
                let score = match parse_score(&text_of(&f.score)) {
                    Ok(s) => s,
                    Err(e) => {
                        f.on_comment = false;
                        f.error = Some(e);
                        return Vec::new();
                    }
                };
                if cmd == Command::Accept && !f.on_comment {
                    f.on_comment = true;
                    f.error = None;
                    return Vec::new();
                }
                let comment = text_of(&f.comment).trim().to_string();
                let len = comment.chars().count();
                if len > COMMENT_MAX {
                    f.error = Some(format!(
                        "The comment is {len} characters; shorten it to at most {COMMENT_MAX}."
                    ));
                    return Vec::new();
                }
                f.sending = true;
                f.error = None;
                let target = f.target.clone();
                let fx = self.board_write(BoardWrite::Rate {
                    target,
                    score,
                    comment,
                });
                if fx.is_empty() {
                    // Another board change is in flight (board_write said so): try again.
                    if let Some(Overlay::Board(o)) = &mut self.overlay {
                        if let BoardOverlay::Rate(f) = o.as_mut() {
                            f.sending = false;
                        }
                    }
                }
                fx
            }
            Command::NextItem | Command::PrevItem => {
                f.on_comment = !f.on_comment;
                Vec::new()
            }
            Command::Cancel => {
                self.overlay = None;
                self.info("Rating cancelled: nothing was saved.");
                Vec::new()
            }
            _ => Vec::new(),
        }
    }
}

pub fn draw_form(app: &AppState, f: &RateForm, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let r = centered(area, 72, if f.error.is_some() { 11 } else { 9 });
    let inside = overlay_frame("Rate the run", r, buf, t);
    let w = inside.width as usize;
    put_line(
        buf,
        inside,
        0,
        &Line::from(Span::styled(
            fit_width(&f.target.describe(), w.max(1), Cut::End),
            t.text,
        )),
    );
    let label = |text: &str, on: bool| {
        Line::from(Span::styled(
            text.to_string(),
            if on { t.heading2 } else { t.dim },
        ))
    };
    put_line(buf, inside, 1, &label("Score (1–5)", !f.on_comment));
    if inside.height > 2 {
        f.score
            .render(Rect::new(inside.x, inside.y + 2, inside.width, 1), buf);
    }
    put_line(buf, inside, 3, &label("Comment", f.on_comment));
    if inside.height > 4 {
        f.comment
            .render(Rect::new(inside.x, inside.y + 4, inside.width, 1), buf);
    }
    put_line(
        buf,
        inside,
        5,
        &Line::from(Span::styled(
            "Enter: next field, then rate · Ctrl+S rate · Esc cancel",
            t.dim,
        )),
    );
    if let Some(e) = &f.error {
        let a = Rect::new(
            inside.x,
            inside.y + 6,
            inside.width,
            inside.height.saturating_sub(6),
        );
        draw_top_down(
            a,
            buf,
            [(Line::from(Span::styled(e.clone(), t.input_error)), 0)],
        );
    }
}

#[cfg(test)]
mod tests {
    use super::parse_score;

    #[test]
    fn only_whole_scores_one_to_five_pass() {
        for ok in ["1", " 5 ", "3"] {
            assert!(parse_score(ok).is_ok(), "{ok}");
        }
        for bad in ["", "0", "6", "2.5", "four", "-1"] {
            assert!(parse_score(bad).is_err(), "{bad}");
        }
    }
}
