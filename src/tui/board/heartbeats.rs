//! The Board's agent list (`H`): the durable agents, each with its role, its heartbeat
//! interval and its last run (status, reason, when, summary) from `nbook_agent_run`; Enter
//! wakes the selected agent now through the heartbeat scheduler (`crate::runner::heartbeat`),
//! whose run then shows in the Sessions pane like any session. The list reads the Board's
//! overview (`BoardOverview::agents`), so it follows the runs as the board reloads.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::board::agent_runs::AgentLine;
use crate::tui::action::{Command, Effect};
use crate::tui::app::AppState;
use crate::tui::board::overlay::BoardOverlay;
use crate::tui::chrome::{centered, overlay_frame, put_line};
use crate::tui::input::Overlay;
use crate::tui::widgets::wrap::{fit_width, Cut};

fn listed(app: &AppState) -> &[AgentLine] {
    match &app.board.data {
        Some(d) => &d.agents,
        None => &[],
    }
}

impl AppState {
    pub(crate) fn board_open_agents(&mut self) {
        self.overlay = Some(Overlay::Board(Box::new(BoardOverlay::Agents {
            selected: 0,
        })));
    }

    pub(crate) fn agent_list_command(&mut self, cmd: Command) -> Vec<Effect> {
        let n = listed(self).len();
        let ids: Vec<String> = listed(self).iter().map(|l| l.agent.id.clone()).collect();
        let Some(Overlay::Board(o)) = &mut self.overlay else {
            return Vec::new();
        };
        let BoardOverlay::Agents { selected } = o.as_mut() else {
            return Vec::new();
        };
        *selected = (*selected).min(n.saturating_sub(1));
        match cmd {
            Command::Down | Command::PageDown => {
                *selected = (*selected + 1).min(n.saturating_sub(1));
                Vec::new()
            }
            Command::Up | Command::PageUp => {
                *selected = selected.saturating_sub(1);
                Vec::new()
            }
            Command::Confirm | Command::Accept => match ids.get(*selected) {
                Some(id) => {
                    let agent = id.clone();
                    self.overlay = None;
                    self.info(format!("Waking {agent}…"));
                    vec![Effect::HeartbeatWake { agent }]
                }
                None => {
                    self.overlay = None;
                    self.info("No durable agents yet: an agent creates one with fn_agent_create (you approve it).");
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

/// `30 min`, `2 h`, `45 s`: a heartbeat interval as the list shows it.
fn every(ms: u64) -> String {
    let s = ms / 1000;
    if s.is_multiple_of(3600) {
        format!("{} h", s / 3600)
    } else if s.is_multiple_of(60) {
        format!("{} min", s / 60)
    } else {
        format!("{s} s")
    }
}

/// The second line of an agent's row: its last run, or that it never ran.
fn last_run(l: &AgentLine) -> String {
    match &l.last {
        None => "never ran".to_string(),
        Some(r) => {
            // `2026-03-16T02:00:00Z` → `2026-03-16 02:00`.
            let at: String = r.started_at.replace('T', " ").chars().take(16).collect();
            let mut s = format!("last run {at} · {} · {}", r.reason, r.status);
            if let Some(sum) = r.summary.as_deref().filter(|s| !s.is_empty()) {
                s.push_str(" · ");
                s.push_str(&crate::board::snippet(sum, 200));
            }
            s
        }
    }
}

pub fn draw_list(app: &AppState, selected: usize, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let agents = listed(app);
    let h = ((agents.len() as u16) * 2).clamp(1, 16) + 4;
    let r = centered(area, 90, h);
    let inside = overlay_frame(&format!("Agents · {}", agents.len()), r, buf, t);
    let w = inside.width as usize;
    if agents.is_empty() {
        put_line(
            buf,
            inside,
            0,
            &Line::from(Span::styled(
                "No durable agents yet: an agent creates one with fn_agent_create (you approve it).",
                t.dim,
            )),
        );
    }
    let rows = (inside.height.saturating_sub(2) / 2).max(1) as usize;
    let sel = selected.min(agents.len().saturating_sub(1));
    let off = crate::tui::files::tree::window_offset(0, sel, rows, agents.len());
    for (i, l) in agents.iter().enumerate().skip(off).take(rows) {
        let a = &l.agent;
        let head = format!(" {} ", a.id);
        let timer = match a.runtime_config.effective_interval_ms() {
            Some(ms) => format!(" {} · every {} ", a.role.as_str(), every(ms)),
            None => format!(" {} · no timer ", a.role.as_str()),
        };
        let name = fit_width(
            &a.name,
            w.saturating_sub(head.chars().count() + timer.chars().count())
                .max(1),
            Cut::End,
        );
        let pad =
            w.saturating_sub(head.chars().count() + name.chars().count() + timer.chars().count());
        let mut line = Line::from(vec![
            Span::styled(head, t.meta),
            Span::styled(name, t.text),
            Span::raw(" ".repeat(pad)),
            Span::styled(timer, t.dim),
        ]);
        let y = ((i - off) * 2) as u16;
        if i == sel {
            line = crate::tui::chrome::select_line(line, t.selection);
            buf.set_style(
                Rect::new(inside.x, inside.y + y, inside.width, 1),
                t.selection,
            );
        }
        put_line(buf, inside, y, &line);
        let second = fit_width(&format!("    {}", last_run(l)), w, Cut::End);
        put_line(buf, inside, y + 1, &Line::from(Span::styled(second, t.dim)));
    }
    put_line(
        buf,
        inside,
        inside.height.saturating_sub(1),
        &Line::from(Span::styled("Enter wake now · j/k move · Esc close", t.dim)),
    );
}
