//! The model setup form (`m` in the Sessions pane, offered by its empty state when no model is
//! configured): look for a local OpenAI-compatible server on the usual ports, or take a base
//! URL and the name of the variable holding its API key; pick one of the models it serves;
//! read exactly the lines that will go into config.toml (and the file's path); confirm to
//! write them. Every probe and the write run off the UI task as ticketed jobs
//! (`Effect::Setup`), so an answer to an abandoned step is dropped. After the write the engine
//! reloads the config and the new model is at once the default for new sessions.

use std::path::PathBuf;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use tui_textarea::TextArea;

use crate::config::setup::{Found, Plan};
use crate::tui::action::{Command, Effect, Ticket};
use crate::tui::app::{AppState, MsgKind};
use crate::tui::chrome::{centered, overlay_frame};
use crate::tui::input::{single_line, text_of, Overlay};
use crate::tui::keymap::Context;
use crate::tui::widgets::wrap::{draw_top_down, Row};

/// A job of the setup form, run by the executor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SetupJob {
    /// Ask each `(label, base_url)` for its models.
    Detect(Vec<(String, String)>),
    /// Ask the server the author named.
    Probe {
        base_url: String,
        api_key_env: Option<String>,
    },
    /// Compute the edit of `file` that makes `model` of `server` the default.
    Plan {
        file: PathBuf,
        server: Found,
        model: String,
    },
    /// Write the plan, then reload the config.
    Write(Box<Plan>),
}

/// What a setup job found.
#[derive(Clone, Debug)]
pub enum SetupResult {
    Detected(Vec<Found>),
    Probed(Result<Found, String>),
    Planned(Result<Box<Plan>, String>),
    /// The model key now the default, or why nothing was written.
    Written(Result<String, String>),
}

// One form is open at a time: boxing the text fields would buy nothing.
#[allow(clippy::large_enum_variant)]
pub enum Step {
    /// Asking the usual ports.
    Detecting,
    /// One row per (server, model), then "another server".
    Choose { found: Vec<Found>, selected: usize },
    /// A base URL and an API key variable; `field` 0 or 1.
    Manual {
        url: TextArea<'static>,
        key_env: TextArea<'static>,
        field: usize,
        probing: bool,
    },
    /// The lines that will be written.
    Review { plan: Box<Plan>, writing: bool },
}

pub struct SetupForm {
    pub step: Step,
    /// The job in flight, if any (answers for another ticket are stale).
    pub ticket: Option<Ticket>,
    /// The last problem (a failed probe, a refused write), shown under the step.
    pub error: Option<String>,
    pub file: PathBuf,
    /// What was asked, for the progress line.
    pub asking: Vec<String>,
}

impl SetupForm {
    pub fn text(&self) -> Option<&TextArea<'static>> {
        match &self.step {
            Step::Manual {
                url,
                key_env,
                field,
                ..
            } => Some(if *field == 0 { url } else { key_env }),
            _ => None,
        }
    }

    pub fn text_mut(&mut self) -> Option<&mut TextArea<'static>> {
        match &mut self.step {
            Step::Manual {
                url,
                key_env,
                field,
                ..
            } => Some(if *field == 0 { url } else { key_env }),
            _ => None,
        }
    }

    /// The rows of the Choose step: (server index, model) for each model, `None` last.
    fn choices(found: &[Found]) -> Vec<Option<(usize, String)>> {
        found
            .iter()
            .enumerate()
            .flat_map(|(i, f)| f.models.iter().map(move |m| Some((i, m.clone()))))
            .chain(std::iter::once(None))
            .collect()
    }
}

fn manual_step() -> Step {
    Step::Manual {
        url: single_line("http://127.0.0.1:8080/v1"),
        key_env: single_line("empty for a local server, e.g. OPENAI_API_KEY"),
        field: 0,
        probing: false,
    }
}

impl AppState {
    /// Open the setup form and start looking for local servers.
    pub(crate) fn open_model_setup(&mut self) -> Vec<Effect> {
        let ticket = self.ticket();
        let asking = self.setup_servers.iter().map(|(_, u)| u.clone()).collect();
        self.overlay = Some(Overlay::ModelSetup(Box::new(SetupForm {
            step: Step::Detecting,
            ticket: Some(ticket),
            error: None,
            file: self.config_file.clone(),
            asking,
        })));
        vec![Effect::Setup {
            ticket,
            job: SetupJob::Detect(self.setup_servers.clone()),
        }]
    }

    pub(crate) fn setup_command(&mut self, cmd: Command) -> Vec<Effect> {
        let ticket = self.ticket();
        let Some(Overlay::ModelSetup(form)) = &mut self.overlay else {
            return Vec::new();
        };
        let file = form.file.clone();
        match &mut form.step {
            Step::Detecting => {
                if cmd == Command::Cancel {
                    self.overlay = None;
                }
                Vec::new()
            }
            Step::Choose { found, selected } => {
                let rows = SetupForm::choices(found);
                match cmd {
                    Command::Down | Command::NextItem => {
                        *selected = (*selected + 1).min(rows.len() - 1)
                    }
                    Command::Up | Command::PrevItem => *selected = selected.saturating_sub(1),
                    Command::Top => *selected = 0,
                    Command::Bottom => *selected = rows.len() - 1,
                    Command::Confirm | Command::Accept => {
                        form.error = None;
                        match rows.get(*selected).cloned().flatten() {
                            Some((i, model)) => {
                                let server = found[i].clone();
                                form.ticket = Some(ticket);
                                return vec![Effect::Setup {
                                    ticket,
                                    job: SetupJob::Plan {
                                        file,
                                        server,
                                        model,
                                    },
                                }];
                            }
                            None => form.step = manual_step(),
                        }
                    }
                    Command::Cancel => self.overlay = None,
                    _ => {}
                }
                Vec::new()
            }
            Step::Manual {
                url,
                key_env,
                field,
                probing,
            } => match cmd {
                Command::NextItem | Command::PrevItem => {
                    *field = 1 - *field;
                    Vec::new()
                }
                Command::Accept | Command::Submit if *field == 0 && cmd == Command::Accept => {
                    *field = 1;
                    Vec::new()
                }
                Command::Accept | Command::Submit => {
                    let base_url = text_of(url).trim().to_string();
                    let var = text_of(key_env).trim().to_string();
                    *probing = true;
                    form.error = None;
                    form.ticket = Some(ticket);
                    form.asking = vec![base_url.clone()];
                    vec![Effect::Setup {
                        ticket,
                        job: SetupJob::Probe {
                            base_url,
                            api_key_env: (!var.is_empty()).then_some(var),
                        },
                    }]
                }
                Command::Cancel => {
                    self.overlay = None;
                    Vec::new()
                }
                _ => Vec::new(),
            },
            Step::Review { plan, writing } => match cmd {
                Command::Confirm if !*writing => {
                    *writing = true;
                    form.error = None;
                    form.ticket = Some(ticket);
                    vec![Effect::Setup {
                        ticket,
                        job: SetupJob::Write(plan.clone()),
                    }]
                }
                Command::Cancel => {
                    self.overlay = None;
                    Vec::new()
                }
                _ => Vec::new(),
            },
        }
    }

    pub(crate) fn setup_done(&mut self, ticket: Ticket, result: SetupResult) -> Vec<Effect> {
        let Some(Overlay::ModelSetup(form)) = &mut self.overlay else {
            return Vec::new();
        };
        if form.ticket != Some(ticket) {
            return Vec::new();
        }
        form.ticket = None;
        match result {
            SetupResult::Detected(found) => {
                if found.is_empty() {
                    form.error = Some(format!(
                        "No local server answered on {}. Start one (llama.cpp's llama-server, Ollama, vLLM, LM Studio), or give a server's base URL:",
                        form.asking.join(", ")
                    ));
                    form.step = manual_step();
                } else {
                    form.step = Step::Choose { found, selected: 0 };
                }
            }
            SetupResult::Probed(Ok(found)) => {
                form.step = Step::Choose {
                    found: vec![found],
                    selected: 0,
                };
            }
            SetupResult::Probed(Err(e)) => {
                form.error = Some(e);
                if let Step::Manual { probing, .. } = &mut form.step {
                    *probing = false;
                }
            }
            SetupResult::Planned(Ok(plan)) => {
                form.step = Step::Review {
                    plan,
                    writing: false,
                };
            }
            SetupResult::Planned(Err(e)) => form.error = Some(e),
            SetupResult::Written(Ok(model)) => {
                let file = form.file.display().to_string();
                self.overlay = None;
                let new = self
                    .keymap
                    .key_for(Command::NewSession, &[Context::Sessions])
                    .map(|k| k.notation())
                    .unwrap_or_else(|| "new_session".into());
                self.message(
                    format!(
                        "Wrote {file}: model '{model}' is the default now. {new} starts a session."
                    ),
                    MsgKind::Ok,
                );
            }
            SetupResult::Written(Err(e)) => {
                form.error = Some(e);
                if let Step::Review { writing, .. } = &mut form.step {
                    *writing = false;
                }
            }
        }
        Vec::new()
    }
}

fn key(app: &AppState, cmd: Command, ctx: Context) -> String {
    app.keymap
        .key_for(cmd, &[ctx])
        .map(|k| k.notation())
        .unwrap_or_else(|| cmd.name().into())
}

pub fn draw(app: &AppState, form: &SetupForm, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let r = centered(
        area,
        area.width.saturating_sub(4).clamp(20, 96),
        area.height.saturating_sub(2).min(28),
    );
    let inside = overlay_frame("Model setup", r, buf, t);
    let mut rows: Vec<Row> = Vec::new();
    let text = |rows: &mut Vec<Row>, s: String, style| {
        rows.push((Line::from(Span::styled(s, style)), 2));
    };
    let cancel = key(app, Command::Cancel, Context::Overlay);
    match &form.step {
        Step::Detecting => {
            text(
                &mut rows,
                "⋯ Looking for a local OpenAI-compatible server (asking /v1/models):".into(),
                t.text,
            );
            for a in &form.asking {
                text(&mut rows, format!("    {a}"), t.dim);
            }
            rows.push((Line::from(""), 0));
            text(&mut rows, format!("{cancel} closes"), t.dim);
        }
        Step::Choose { found, selected } => {
            text(&mut rows, "Pick the model new sessions use:".into(), t.text);
            rows.push((Line::from(""), 0));
            for (i, row) in SetupForm::choices(found).iter().enumerate() {
                let label = match row {
                    Some((s, m)) => {
                        format!("  {m}  ({} at {})", found[*s].label, found[*s].base_url)
                    }
                    None => "  Another server: a base URL and an API key variable…".into(),
                };
                let mut l = Line::from(Span::styled(label, t.text));
                if i == *selected {
                    l = l.style(t.selection);
                }
                rows.push((l, 2));
            }
            rows.push((Line::from(""), 0));
            text(
                &mut rows,
                format!(
                    "{} shows the lines it will write · {cancel} closes",
                    key(app, Command::Confirm, Context::Overlay)
                ),
                t.dim,
            );
        }
        Step::Manual {
            url,
            key_env,
            field,
            probing,
        } => {
            text(
                &mut rows,
                "An OpenAI-compatible server: its base URL (the part before /chat/completions) and, if it needs a key, the environment variable that holds it (nbook stores the variable's name, never the key):".into(),
                t.text,
            );
            rows.push((Line::from(""), 0));
            for (i, (name, input)) in [("Base URL", url), ("API key variable", key_env)]
                .into_iter()
                .enumerate()
            {
                let focused = i == *field;
                let style = if focused { t.key_hint } else { t.dim };
                rows.push((Line::from(Span::styled(format!("{name}:"), style)), 0));
                let v = text_of(input);
                // The field's text with a bar for the cursor (typing goes to its end).
                let shown = match (v.is_empty(), focused) {
                    (true, true) => Line::from(vec![
                        Span::styled("  ▏", t.text),
                        Span::styled(input.placeholder_text().to_string(), t.dim),
                    ]),
                    (true, false) => Line::from(Span::styled("  —", t.dim)),
                    (false, true) => Line::from(Span::styled(format!("  {v}▏"), t.text)),
                    (false, false) => Line::from(Span::styled(format!("  {v}"), t.text)),
                };
                rows.push((shown, 4));
            }
            rows.push((Line::from(""), 0));
            if *probing {
                text(
                    &mut rows,
                    format!("⋯ asking {}/models…", form.asking.join(", ")),
                    t.text,
                );
            } else {
                text(
                    &mut rows,
                    format!(
                        "{} next field / ask the server · {}/{} switch fields · {cancel} closes",
                        key(app, Command::Accept, Context::Input),
                        key(app, Command::PrevItem, Context::Input),
                        key(app, Command::NextItem, Context::Input),
                    ),
                    t.dim,
                );
            }
        }
        Step::Review { plan, writing } => {
            text(
                &mut rows,
                format!("These lines go into {}:", plan.file.display()),
                t.text,
            );
            rows.push((Line::from(""), 0));
            for c in &plan.changes {
                let style = if c.starts_with('-') {
                    t.diff_del
                } else {
                    t.diff_add
                };
                text(&mut rows, c.clone(), style);
            }
            rows.push((Line::from(""), 0));
            text(
                &mut rows,
                "The rest of the file stays as it is. The config is reloaded at once; new sessions use this model unless you pick another.".into(),
                t.dim,
            );
            if *writing {
                text(&mut rows, "⋯ writing…".into(), t.text);
            } else {
                text(
                    &mut rows,
                    format!(
                        "{} writes them · {cancel} closes without writing",
                        key(app, Command::Confirm, Context::Overlay)
                    ),
                    t.dim,
                );
            }
        }
    }
    if let Some(e) = &form.error {
        rows.push((Line::from(""), 0));
        text(&mut rows, e.clone(), t.input_error);
    }
    draw_top_down(inside, buf, rows);
}

impl AppState {
    /// Take in a reloaded config: the model list of new sessions, the notification settings
    /// and the theme follow it; warnings go to the status bar.
    pub(crate) fn config_reloaded(&mut self, r: crate::tui::action::ConfigReload) -> Vec<Effect> {
        match r.result {
            Ok((models, notify)) => {
                self.models = models;
                self.notify = notify;
                if let Some(theme) = r.theme {
                    self.theme = *theme;
                }
                match r.notes.first() {
                    Some(first) => {
                        let more = match r.notes.len() {
                            1 => String::new(),
                            n => format!(" (and {} more)", n - 1),
                        };
                        self.message(format!("config reloaded; {first}{more}"), MsgKind::Error);
                    }
                    None => self.message(
                        format!("config reloaded from {}", self.config_file.display()),
                        MsgKind::Ok,
                    ),
                }
            }
            Err(e) => self.message(
                format!("config not reloaded: {e} (the previous settings stay in force)"),
                MsgKind::Error,
            ),
        }
        Vec::new()
    }
}
