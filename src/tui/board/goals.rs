//! The author's book goals from the Board: `o` opens the goal form (a title, then a
//! description: Enter on the title moves on, Enter on the description — or Ctrl+S anywhere —
//! creates it as the author's `fn_goal_create`); `O` opens the goal list (active goals, then
//! archived ones), where Enter archives or unarchives the selected goal (`fn_goal_archive`).
//! The engine enforces the limit of five active goals: a sixth is refused with its message in
//! the status bar and nothing changes. The form takes keys from `[input]`, the list from
//! `[overlay]`.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use tui_textarea::TextArea;

use crate::engine::read::Goal;
use crate::tui::action::{Command, Effect};
use crate::tui::app::AppState;
use crate::tui::board::jobs::BoardWrite;
use crate::tui::board::overlay::BoardOverlay;
use crate::tui::chrome::{centered, overlay_frame, put_line};
use crate::tui::input::{single_line, text_of, Overlay};
use crate::tui::widgets::wrap::{draw_top_down, fit_width, Cut};

/// The goal form: its two fields and which one has the keys.
pub struct GoalForm {
    pub title: TextArea<'static>,
    pub description: TextArea<'static>,
    pub on_description: bool,
    pub error: Option<String>,
    /// Sent to the engine; the form stays open until it answers (a refusal is shown here).
    pub sending: bool,
}

impl GoalForm {
    fn new() -> GoalForm {
        GoalForm {
            title: single_line("e.g. First draft of act 2 by March"),
            description: single_line("what done means (optional)"),
            on_description: false,
            error: None,
            sending: false,
        }
    }

    pub fn field(&self) -> &TextArea<'static> {
        if self.on_description {
            &self.description
        } else {
            &self.title
        }
    }

    pub fn field_mut(&mut self) -> &mut TextArea<'static> {
        if self.on_description {
            &mut self.description
        } else {
            &mut self.title
        }
    }
}

/// The goals the list shows: active ones first, then archived ones.
pub fn listed(app: &AppState) -> Vec<&Goal> {
    match &app.board.data {
        Some(d) => d.goals.iter().chain(d.archived_goals.iter()).collect(),
        None => Vec::new(),
    }
}

/// The selected row of the goal list: the followed goal where it is now, else `selected`.
pub fn current(app: &AppState, selected: usize, follow: Option<&str>) -> usize {
    let goals = listed(app);
    follow
        .and_then(|id| goals.iter().position(|g| g.id == id))
        .unwrap_or(selected)
        .min(goals.len().saturating_sub(1))
}

impl AppState {
    /// A goal change landed: the form that sent it closes on success and shows a refusal
    /// (the list shows its refusal too). True when the open overlay took the outcome.
    pub(crate) fn goal_write_landed(&mut self, w: &BoardWrite, r: &Result<(), String>) -> bool {
        let Some(Overlay::Board(o)) = &mut self.overlay else {
            return false;
        };
        match (o.as_mut(), w, r) {
            (BoardOverlay::Goal(_), BoardWrite::GoalCreate { .. }, Ok(())) => {
                self.overlay = None;
                false
            }
            (BoardOverlay::Goal(f), BoardWrite::GoalCreate { .. }, Err(e)) => {
                f.sending = false;
                f.error = Some(format!("Not created: {e}"));
                true
            }
            (
                BoardOverlay::Goals { error, .. },
                BoardWrite::GoalArchive { archived, .. },
                Err(e),
            ) => {
                let what = if *archived { "archived" } else { "unarchived" };
                *error = Some(format!("Not {what}: {e}"));
                true
            }
            _ => false,
        }
    }

    pub(crate) fn board_open_goal_form(&mut self) {
        self.overlay = Some(Overlay::Board(Box::new(BoardOverlay::Goal(Box::new(
            GoalForm::new(),
        )))));
    }

    pub(crate) fn board_open_goals(&mut self) {
        self.overlay = Some(Overlay::Board(Box::new(BoardOverlay::Goals {
            selected: 0,
            error: None,
            follow: None,
        })));
    }

    pub(crate) fn goal_form_command(&mut self, cmd: Command) -> Vec<Effect> {
        let Some(Overlay::Board(o)) = &mut self.overlay else {
            return Vec::new();
        };
        let BoardOverlay::Goal(f) = o.as_mut() else {
            return Vec::new();
        };
        match cmd {
            Command::Accept | Command::Submit if f.sending => Vec::new(),
            Command::Accept | Command::Submit => {
                let title = text_of(&f.title).trim().to_string();
                if title.is_empty() {
                    f.on_description = false;
                    f.error = Some(
                        "Type the goal's title, e.g. \"First draft of act 2 by March\".".into(),
                    );
                    return Vec::new();
                }
                if cmd == Command::Accept && !f.on_description {
                    f.on_description = true;
                    return Vec::new();
                }
                let description = text_of(&f.description).trim().to_string();
                f.sending = true;
                f.error = None;
                let fx = self.board_write(BoardWrite::GoalCreate { title, description });
                if fx.is_empty() {
                    // Another board change is in flight (board_write said so): try again.
                    if let Some(Overlay::Board(o)) = &mut self.overlay {
                        if let BoardOverlay::Goal(f) = o.as_mut() {
                            f.sending = false;
                        }
                    }
                }
                fx
            }
            Command::NextItem | Command::PrevItem => {
                f.on_description = !f.on_description;
                Vec::new()
            }
            Command::Cancel => {
                self.overlay = None;
                self.info("New goal cancelled: nothing was created.");
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    pub(crate) fn goal_list_command(&mut self, cmd: Command) -> Vec<Effect> {
        let goals: Vec<(String, bool)> = listed(self)
            .iter()
            .map(|g| (g.id.clone(), g.status == "archived"))
            .collect();
        let at = match &self.overlay {
            Some(Overlay::Board(o)) => match o.as_ref() {
                BoardOverlay::Goals {
                    selected, follow, ..
                } => current(self, *selected, follow.as_deref()),
                _ => return Vec::new(),
            },
            _ => return Vec::new(),
        };
        let Some(Overlay::Board(o)) = &mut self.overlay else {
            return Vec::new();
        };
        let BoardOverlay::Goals {
            selected,
            error,
            follow,
        } = o.as_mut()
        else {
            return Vec::new();
        };
        *selected = at;
        if matches!(
            cmd,
            Command::Down | Command::PageDown | Command::Up | Command::PageUp
        ) {
            *follow = None;
        }
        match cmd {
            Command::Down | Command::PageDown => {
                *selected = (*selected + 1).min(goals.len().saturating_sub(1));
                Vec::new()
            }
            Command::Up | Command::PageUp => {
                *selected = selected.saturating_sub(1);
                Vec::new()
            }
            Command::Confirm => match goals.get(*selected) {
                Some((goal, archived)) => {
                    *error = None;
                    *follow = Some(goal.clone());
                    let (goal, archived) = (goal.clone(), !archived);
                    self.board_write(BoardWrite::GoalArchive { goal, archived })
                }
                None => {
                    self.overlay = None;
                    self.info("No goals yet: o creates one.");
                    Vec::new()
                }
            },
            Command::Cancel => {
                self.overlay = None;
                Vec::new()
            }
            _ => Vec::new(),
        }
    }
}

pub fn draw_form(app: &AppState, f: &GoalForm, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let r = centered(area, 72, if f.error.is_some() { 10 } else { 8 });
    let inside = overlay_frame("New goal", r, buf, t);
    let label = |text: &str, on: bool| {
        Line::from(Span::styled(
            text.to_string(),
            if on { t.heading2 } else { t.dim },
        ))
    };
    put_line(buf, inside, 0, &label("Title", !f.on_description));
    if inside.height > 1 {
        f.title
            .render(Rect::new(inside.x, inside.y + 1, inside.width, 1), buf);
    }
    put_line(buf, inside, 2, &label("Description", f.on_description));
    if inside.height > 3 {
        f.description
            .render(Rect::new(inside.x, inside.y + 3, inside.width, 1), buf);
    }
    put_line(
        buf,
        inside,
        4,
        &Line::from(Span::styled(
            "Enter: next field, then create · Ctrl+S create · Esc cancel",
            t.dim,
        )),
    );
    if let Some(e) = &f.error {
        let a = Rect::new(
            inside.x,
            inside.y + 5,
            inside.width,
            inside.height.saturating_sub(5),
        );
        draw_top_down(
            a,
            buf,
            [(Line::from(Span::styled(e.clone(), t.input_error)), 0)],
        );
    }
}

pub fn draw_list(
    app: &AppState,
    selected: usize,
    error: Option<&str>,
    area: Rect,
    buf: &mut Buffer,
) {
    let t = &app.theme;
    let goals = listed(app);
    let active = goals.iter().filter(|g| g.status == "active").count();
    let extra = if error.is_some() { 3 } else { 0 };
    let h = (goals.len() as u16).clamp(1, 12) + 4 + extra;
    let r = centered(area, 76, h);
    let inside = overlay_frame(
        &format!(
            "Goals · {active} of {} active",
            crate::board::goals::ACTIVE_GOAL_LIMIT
        ),
        r,
        buf,
        t,
    );
    let w = inside.width as usize;
    let rows = inside.height.saturating_sub(2 + extra) as usize;
    if goals.is_empty() {
        put_line(
            buf,
            inside,
            0,
            &Line::from(Span::styled(
                "No goals yet: o in the Board creates one.",
                t.dim,
            )),
        );
    }
    let sel = selected.min(goals.len().saturating_sub(1));
    let off = crate::tui::files::tree::window_offset(0, sel, rows.max(1), goals.len());
    for (i, g) in goals.iter().enumerate().skip(off).take(rows) {
        let status = if g.status == "archived" {
            " archived"
        } else {
            " active"
        };
        let head = format!(" {} ", g.id);
        let title = fit_width(
            &g.title,
            w.saturating_sub(head.len() + status.len()).max(1),
            Cut::End,
        );
        let pad = w.saturating_sub(head.chars().count() + title.chars().count() + status.len());
        let mut line = Line::from(vec![
            Span::styled(head, t.meta),
            Span::styled(
                title,
                if g.status == "archived" {
                    t.dim
                } else {
                    t.text
                },
            ),
            Span::raw(" ".repeat(pad)),
            Span::styled(status, t.dim),
        ]);
        let y = (i - off) as u16;
        if i == sel {
            line = crate::tui::chrome::select_line(line, t.selection);
            buf.set_style(
                Rect::new(inside.x, inside.y + y, inside.width, 1),
                t.selection,
            );
        }
        put_line(buf, inside, y, &line);
    }
    if let Some(e) = error {
        let y = inside.height.saturating_sub(1 + extra);
        let a = Rect::new(inside.x, inside.y + y, inside.width, extra);
        draw_top_down(
            a,
            buf,
            [(Line::from(Span::styled(e.to_string(), t.input_error)), 0)],
        );
    }
    put_line(
        buf,
        inside,
        inside.height.saturating_sub(1),
        &Line::from(Span::styled(
            "Enter archive ⇄ unarchive · j/k move · Esc close",
            t.dim,
        )),
    );
}
