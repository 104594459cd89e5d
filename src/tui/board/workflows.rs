//! The Workflows view of the Board pane (`W`, again or `Esc` back to the board): the board's
//! workflows on the left — the built-in `builtin:chapter` first, then the custom ones — and
//! the selected one on the right as a readable graph: each column with its traits and the
//! nodes it holds (a foreach's template indented under it), the flow (every edge with its
//! condition), the settings with their effective values and where each comes from (stored,
//! default, unset), and any orphaned stored values.
//!
//! `e` opens the settings form: one line `id = value` (a JSON value, or plain text for a
//! string; an empty value clears the stored one, orphans included). The form checks the
//! value with the same function the engine uses (`crate::board::workflow::settings::
//! check_patch`), so a bad value is refused in the form with the engine's rejection code;
//! a good one is the author's `fn_workflow_settings set` through the engine, logged in the
//! author session.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use serde_json::{Map, Value};

use crate::board::workflow::ir::{IrEdge, IrNode};
use crate::board::workflow::{settings, Resolved, Workflow};
use crate::engine::Engine;
use crate::tui::action::{Command, Effect, Ticket};
use crate::tui::app::AppState;
use crate::tui::board::jobs::{BoardJob, BoardWrite};
use crate::tui::board::overlay::BoardOverlay;
use crate::tui::chrome::put_line;
use crate::tui::files::tree::window_offset;
use crate::tui::input::{single_line, text_of, Overlay};
use crate::tui::widgets::wrap::{draw_top_down, fit_width, Cut};

/// A workflow with its resolved setting values.
pub type WorkflowEntry = (Workflow, Resolved);

#[derive(Debug, Default)]
pub struct WorkflowsView {
    pub items: Vec<WorkflowEntry>,
    pub selected: usize,
    pub offset: usize,
    pub loading: Option<Ticket>,
    pub error: Option<String>,
    pub scroll: usize,
}

impl WorkflowsView {
    pub fn selected(&self) -> Option<&WorkflowEntry> {
        self.items.get(self.selected)
    }
}

/// The view's list (on the blocking pool).
pub fn run(engine: &std::sync::Arc<Engine>) -> Result<Vec<WorkflowEntry>, String> {
    engine.read().board_workflows().map_err(|e| e.to_string())
}

/// `id = value` as a one-key patch: the value as JSON, else as a string; empty clears.
pub fn parse_line(line: &str) -> Result<Map<String, Value>, String> {
    let Some((id, value)) = line.split_once('=') else {
        return Err(
            "Type id = value, e.g. workflowStepTimeoutMs = 600000 (empty value clears)".into(),
        );
    };
    let id = id.trim();
    if id.is_empty() {
        return Err("The setting id is missing before =.".into());
    }
    let value = value.trim();
    let v = if value.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.to_string()))
    };
    let mut m = Map::new();
    m.insert(id.to_string(), v);
    Ok(m)
}

impl AppState {
    /// `W`: open the view (loading the list), or close it.
    pub(crate) fn workflows_toggle(&mut self) -> Vec<Effect> {
        if self.board.workflows.take().is_some() {
            return Vec::new();
        }
        self.board.artifacts = None;
        self.board.workflows = Some(WorkflowsView::default());
        self.workflows_load()
    }

    pub(crate) fn workflows_load(&mut self) -> Vec<Effect> {
        let ticket = self.ticket();
        let Some(v) = self.board.workflows.as_mut() else {
            return Vec::new();
        };
        v.loading = Some(ticket);
        vec![Effect::BoardJob {
            ticket,
            job: BoardJob::Workflows,
        }]
    }

    pub(crate) fn workflows_command(&mut self, cmd: Command, page: usize) -> Vec<Effect> {
        let Some(v) = self.board.workflows.as_mut() else {
            return Vec::new();
        };
        let n = v.items.len();
        let before = v.selected;
        match cmd {
            Command::Down => v.selected = (v.selected + 1).min(n.saturating_sub(1)),
            Command::Up => v.selected = v.selected.saturating_sub(1),
            Command::PageDown => v.selected = (v.selected + page).min(n.saturating_sub(1)),
            Command::PageUp => v.selected = v.selected.saturating_sub(page),
            Command::Top => v.selected = 0,
            Command::Bottom => v.selected = n.saturating_sub(1),
            Command::DetailDown => v.scroll += 1,
            Command::DetailUp => v.scroll = v.scroll.saturating_sub(1),
            Command::Refresh => return self.workflows_load(),
            Command::BoardWorkflowSet => {
                self.workflows_open_form();
                return Vec::new();
            }
            Command::Collapse | Command::Cancel | Command::BoardWorkflows => {
                self.board.workflows = None;
                return Vec::new();
            }
            _ => {
                self.info("The Workflows view is open: e edits a setting; W or Esc goes back to the board.");
                return Vec::new();
            }
        }
        v.offset = window_offset(v.offset, v.selected, page.max(1), n);
        if v.selected != before {
            v.scroll = 0;
        }
        Vec::new()
    }

    pub(crate) fn workflows_loaded(
        &mut self,
        ticket: Ticket,
        r: Result<Vec<WorkflowEntry>, String>,
    ) {
        let Some(v) = self.board.workflows.as_mut() else {
            return;
        };
        if v.loading != Some(ticket) {
            return;
        }
        v.loading = None;
        match r {
            Ok(items) => {
                let keep = v.selected().map(|(w, _)| w.id.clone());
                v.items = items;
                v.error = None;
                v.selected = keep
                    .and_then(|id| v.items.iter().position(|(w, _)| w.id == id))
                    .unwrap_or(0);
            }
            Err(e) => v.error = Some(e),
        }
    }

    /// `e`: the settings form for the selected workflow.
    fn workflows_open_form(&mut self) {
        let Some((w, _)) = self.board.workflows.as_ref().and_then(|v| v.selected()) else {
            self.info("No workflow selected.");
            return;
        };
        if w.ir.settings.is_empty() {
            let msg = format!("{} declares no settings.", w.id);
            self.info(msg);
            return;
        }
        let hint = format!("e.g. {} = …", w.ir.settings[0].id);
        let workflow = w.id.clone();
        self.overlay = Some(Overlay::Board(Box::new(BoardOverlay::Setting {
            workflow,
            input: single_line(&hint),
            error: None,
        })));
    }

    /// Enter in the settings form: checked like the engine checks it, then sent.
    pub(crate) fn workflow_form_submit(&mut self) -> Vec<Effect> {
        let Some(Overlay::Board(o)) = &mut self.overlay else {
            return Vec::new();
        };
        let BoardOverlay::Setting {
            workflow,
            input,
            error,
        } = o.as_mut()
        else {
            return Vec::new();
        };
        let patch = match parse_line(&text_of(input)) {
            Ok(p) => p,
            Err(e) => {
                *error = Some(e);
                return Vec::new();
            }
        };
        let decls = self
            .board
            .workflows
            .as_ref()
            .and_then(|v| v.items.iter().find(|(w, _)| &w.id == workflow))
            .map(|(w, _)| w.ir.settings.clone())
            .unwrap_or_default();
        let rejections = settings::check_patch(&decls, &patch);
        if !rejections.is_empty() {
            *error = Some(
                rejections
                    .iter()
                    .map(|r| format!("{} ({}): {}", r.setting_id, r.code, r.message))
                    .collect::<Vec<_>>()
                    .join("; "),
            );
            return Vec::new();
        }
        let workflow = workflow.clone();
        self.overlay = None;
        self.board_write(BoardWrite::WorkflowSettings {
            workflow,
            values: Value::Object(patch),
        })
    }
}

// Drawing (pure functions of the state).

pub fn pane_title(v: &WorkflowsView) -> String {
    format!(" 6 Board · Workflows ({}) ", v.items.len())
}

pub fn detail_title(v: &WorkflowsView) -> String {
    match v.selected() {
        Some((w, _)) => format!(" {} · {} ", w.id, w.name),
        None => " Workflows ".into(),
    }
}

pub fn draw_list(app: &AppState, v: &WorkflowsView, area: Rect, buf: &mut Buffer, focused: bool) {
    let t = &app.theme;
    if v.items.is_empty() {
        let (text, style): (String, Style) = match &v.error {
            Some(e) => (e.clone(), t.status_error),
            None => ("loading the workflows…".into(), t.dim),
        };
        draw_top_down(area, buf, [(Line::from(Span::styled(text, style)), 2)]);
        return;
    }
    let h = area.height as usize;
    let off = window_offset(v.offset, v.selected, h, v.items.len());
    let sel = crate::tui::chrome::sel_style(app, focused);
    for (i, (w, _)) in v.items.iter().enumerate().skip(off).take(h) {
        let tag = if w.builtin { " built-in" } else { "" };
        let text = format!("{} {}  {} columns{tag}", w.id, w.name, w.ir.columns.len());
        let line = Line::from(fit_width(&text, area.width as usize, Cut::End));
        let y = (i - off) as u16;
        if i == v.selected {
            buf.set_style(Rect::new(area.x, area.y + y, area.width, 1), sel);
            put_line(buf, area, y, &crate::tui::chrome::select_line(line, sel));
        } else {
            put_line(buf, area, y, &line);
        }
    }
}

fn node_label(n: &IrNode) -> String {
    let mut parts = vec![n.kind.clone()];
    if let Some(s) = n.seam() {
        parts.push(s.to_string());
    }
    let c = &n.config;
    match n.kind.as_str() {
        "parse-steps" => {
            if let Some(a) = c.get("artifact").and_then(Value::as_str) {
                parts.push(a.to_string());
            }
        }
        "foreach" => {
            let mode = c
                .get("mode")
                .and_then(Value::as_str)
                .unwrap_or("sequential");
            parts.push(mode.to_string());
            if let Some(i) = c.get("isolation").and_then(Value::as_str) {
                parts.push(i.to_string());
            }
            if let Some(k) = c.get("concurrency").and_then(Value::as_u64) {
                parts.push(format!("×{k}"));
            }
            let r = c
                .get("maxReworkCycles")
                .and_then(Value::as_u64)
                .unwrap_or(3);
            parts.push(format!("≤{r} rework"));
        }
        "step-review" => {
            if let Some(t) = c.get("type").and_then(Value::as_str) {
                parts.push(t.to_string());
            }
        }
        "code" => {
            let ms = c.get("timeoutMs").and_then(Value::as_u64).unwrap_or(30_000);
            parts.push(format!("{ms} ms"));
        }
        _ => {}
    }
    format!("{} ({})", n.id, parts.join(" · "))
}

fn edge_line(e: &IrEdge) -> String {
    let mut s = format!("{} → {}", e.from, e.to);
    if let Some(c) = &e.condition {
        s.push_str(&format!("  [{c}]"));
    }
    if e.is_rework() {
        s.push_str("  ↺ rework");
    }
    s
}

/// The workflow as text lines with a style: the graph the right-hand view draws.
pub fn graph_lines(w: &Workflow, r: &Resolved) -> Vec<(String, u8)> {
    // Style codes: 0 text, 1 heading, 2 dim, 3 error.
    let mut out: Vec<(String, u8)> = Vec::new();
    let kind = if w.builtin {
        "built in: declarations read-only, values writable"
    } else {
        "custom"
    };
    out.push((format!("{} ({}) · {kind}", w.name, w.id), 1));
    if !w.description.is_empty() {
        out.push((w.description.clone(), 2));
    }
    out.push((String::new(), 0));
    out.push(("Columns and their nodes".into(), 1));
    let template = |n: &IrNode| -> Vec<IrNode> {
        n.config
            .get("template")
            .and_then(|t| t.get("nodes"))
            .and_then(|v| serde_json::from_value::<Vec<IrNode>>(v.clone()).ok())
            .unwrap_or_default()
    };
    let push_node = |out: &mut Vec<(String, u8)>, n: &IrNode| {
        out.push((format!("    {}", node_label(n)), 0));
        for t in template(n) {
            out.push((format!("      └ {}", node_label(&t)), 2));
        }
    };
    for c in &w.ir.columns {
        let traits: Vec<&str> = c.traits.iter().map(|t| t.name.as_str()).collect();
        let traits = if traits.is_empty() {
            String::new()
        } else {
            format!("  [{}]", traits.join(", "))
        };
        out.push((format!("  ▸ {}{traits}", c.name), 0));
        for n in
            w.ir.nodes
                .iter()
                .filter(|n| n.column.as_deref() == Some(c.id.as_str()))
        {
            push_node(&mut out, n);
        }
    }
    let loose: Vec<&IrNode> = w.ir.nodes.iter().filter(|n| n.column.is_none()).collect();
    if !loose.is_empty() {
        out.push(("  ▸ (no column)".into(), 2));
        for n in loose {
            push_node(&mut out, n);
        }
    }
    if w.ir.nodes.is_empty() {
        out.push(("  (no nodes: the columns are worked by hand)".into(), 2));
    }
    if !w.ir.edges.is_empty() {
        out.push((String::new(), 0));
        out.push(("Flow".into(), 1));
        for e in &w.ir.edges {
            out.push((format!("  {}", edge_line(e)), 0));
        }
    }
    out.push((String::new(), 0));
    out.push(("Settings (e edits a value)".into(), 1));
    if w.ir.settings.is_empty() {
        out.push(("  none declared".into(), 2));
    }
    for d in &w.ir.settings {
        let (value, from) = match (r.effective.get(&d.id), r.stored.contains_key(&d.id)) {
            (Some(v), true) if r.orphaned.iter().all(|o| o.setting_id != d.id) => {
                (v.to_string(), "stored")
            }
            (Some(v), _) => (v.to_string(), "default"),
            (None, _) => ("—".to_string(), "unset"),
        };
        out.push((
            format!("  {} = {value}  ({from}; {})", d.id, d.kind.as_str()),
            0,
        ));
    }
    if !r.orphaned.is_empty() {
        out.push((
            "Orphaned values (not used; e with an empty value clears)".into(),
            3,
        ));
        for o in &r.orphaned {
            out.push((
                format!("  {} = {}  ({})", o.setting_id, o.value, o.reason),
                3,
            ));
        }
    }
    out
}

pub fn draw_detail(app: &AppState, v: &WorkflowsView, area: Rect, buf: &mut Buffer) {
    let th = &app.theme;
    let Some((w, r)) = v.selected() else {
        return;
    };
    let lines: Vec<(Line<'static>, usize)> = graph_lines(w, r)
        .into_iter()
        .map(|(s, k)| {
            let st = match k {
                1 => th.heading,
                2 => th.dim,
                3 => th.status_error,
                _ => th.text,
            };
            (Line::from(Span::styled(s, st)), 4)
        })
        .collect();
    let skip = v.scroll.min(lines.len().saturating_sub(1));
    draw_top_down(area, buf, lines.into_iter().skip(skip));
}

/// The settings form overlay's lines: what to type and the declared ids.
pub fn form_ask(app: &AppState, workflow: &str) -> String {
    let ids: Vec<String> = app
        .board
        .workflows
        .as_ref()
        .and_then(|v| v.items.iter().find(|(w, _)| w.id == workflow))
        .map(|(w, _)| w.ir.settings.iter().map(|s| s.id.clone()).collect())
        .unwrap_or_default();
    format!("id = value (empty clears). Settings: {}", ids.join(", "))
}
