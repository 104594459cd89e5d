//! The Board pane's half of `AppState::update`: moving the selection, opening a task, the
//! author's writes and what their jobs return. A write reloads the board (and the opened
//! task) when it lands; a failure says why and that nothing changed.

use crate::tui::action::{Command, Effect, Ticket};
use crate::tui::app::{AppState, MsgKind};
use crate::tui::board::jobs::{BoardJob, BoardJobResult, BoardWrite};

impl AppState {
    pub fn load_board(&mut self) -> Vec<Effect> {
        let ticket = self.ticket();
        self.board.loading = Some(ticket);
        self.board.stale = false;
        let mut fx = vec![Effect::BoardJob {
            ticket,
            job: BoardJob::Load,
        }];
        // An open Inbox follows the board's reloads (new mail, a reply sent).
        fx.extend(self.inbox_load());
        fx
    }

    pub(crate) fn board_focused(&mut self) -> Vec<Effect> {
        if (self.board.data.is_none() || self.board.stale) && self.board.loading.is_none() {
            return self.load_board();
        }
        Vec::new()
    }

    pub(crate) fn board_tick(&mut self) -> Vec<Effect> {
        if self.focus == crate::tui::app::Pane::Board
            && self.board.stale
            && self.board.loading.is_none()
        {
            return self.load_board();
        }
        Vec::new()
    }

    pub(crate) fn board_command(&mut self, cmd: Command, page: usize) -> Vec<Effect> {
        if self.board.artifacts.is_some() {
            return self.artifacts_command(cmd, page);
        }
        if self.board.workflows.is_some() {
            return self.workflows_command(cmd, page);
        }
        if self.board.inbox.is_some() {
            return self.inbox_command(cmd, page);
        }
        let before = self.board.selected;
        match cmd {
            Command::Down => self.board.step(1, true),
            Command::Up => self.board.step(1, false),
            Command::PageDown => self.board.step(page, true),
            Command::PageUp => self.board.step(page, false),
            Command::Top => self.board.to_end(false),
            Command::Bottom => self.board.to_end(true),
            Command::DetailDown => {
                self.board.detail_scroll += 1;
                return Vec::new();
            }
            Command::DetailUp => {
                self.board.detail_scroll = self.board.detail_scroll.saturating_sub(1);
                return Vec::new();
            }
            Command::Refresh => return self.load_board(),
            Command::Expand => return self.board_open(),
            Command::Collapse => {
                self.board.detail = None;
                self.board.detail_ticket = None;
                self.board.detail_scroll = 0;
                return Vec::new();
            }
            Command::BoardNew => {
                self.board_open_new();
                return Vec::new();
            }
            Command::BoardMove => return self.board_move(true),
            Command::BoardMoveBack => return self.board_move(false),
            Command::BoardPause => return self.board_pause(),
            Command::BoardArchive => return self.board_archive(),
            Command::BoardGoalNew => {
                self.board_open_goal_form();
                return Vec::new();
            }
            Command::BoardGoals => {
                self.board_open_goals();
                return Vec::new();
            }
            Command::BoardAgents => {
                self.board_open_agents();
                return Vec::new();
            }
            Command::BoardSteer => {
                self.board_open_steer();
                return Vec::new();
            }
            Command::BoardRate => {
                self.rate_open_task();
                return Vec::new();
            }
            Command::BoardPlanApprove => return self.board_plan_approve(),
            Command::BoardPlanReject => {
                self.board_open_plan_reject();
                return Vec::new();
            }
            Command::BoardScheduler => return self.board_toggle_scheduler(),
            Command::BoardArtifacts => return self.artifacts_toggle(),
            Command::BoardWorkflows => return self.workflows_toggle(),
            Command::BoardWorkflowSet => {
                self.info("Settings are edited in the Workflows view: W opens it, then e.");
                return Vec::new();
            }
            Command::BoardInbox => return self.inbox_toggle(),
            _ => return Vec::new(),
        }
        // Keep the window where it was unless the selection left it (the goals line, when
        // there is one, takes a row of the pane).
        let goals = self
            .board
            .data
            .as_ref()
            .is_some_and(|d| !d.goals.is_empty());
        let scheduler = self.board.scheduler.is_some();
        let h = page
            .saturating_sub(usize::from(goals) + usize::from(scheduler))
            .max(1);
        self.board.offset = crate::tui::files::tree::window_offset(
            self.board.offset,
            self.board.selected,
            h,
            self.board.rows.len(),
        );
        if self.board.selected != before {
            // The right-hand view follows the selection: the opened task closes.
            self.board.detail = None;
            self.board.detail_ticket = None;
            self.board.detail_scroll = 0;
        }
        Vec::new()
    }

    fn board_selected_id(&mut self, what: &str) -> Option<(String, String)> {
        let t = self
            .board
            .selected_task()
            .map(|t| (t.id.clone(), t.column.clone()));
        if t.is_none() {
            self.info(format!(
                "No task selected to {what}: n creates one (nbook board create does too)."
            ));
        }
        t
    }

    fn board_open(&mut self) -> Vec<Effect> {
        let Some((id, _)) = self.board_selected_id("open") else {
            return Vec::new();
        };
        let ticket = self.ticket();
        self.board.detail_ticket = Some(ticket);
        self.board.detail_scroll = 0;
        vec![Effect::BoardJob {
            ticket,
            job: BoardJob::Detail(id),
        }]
    }

    fn board_move(&mut self, forward: bool) -> Vec<Effect> {
        let Some((id, column)) = self.board_selected_id("move") else {
            return Vec::new();
        };
        let cols: Vec<String> = self.board.columns.iter().map(|(c, _)| c.clone()).collect();
        let Some(at) = cols.iter().position(|c| c == &column) else {
            return Vec::new();
        };
        let to = if forward {
            cols.get(at + 1)
        } else {
            at.checked_sub(1).and_then(|i| cols.get(i))
        };
        match to {
            Some(to) => self.board_write(BoardWrite::Move {
                task: id,
                column: to.clone(),
            }),
            None => {
                let end = if forward { "last" } else { "first" };
                self.info(format!("{id} is already in the {end} column."));
                Vec::new()
            }
        }
    }

    fn board_pause(&mut self) -> Vec<Effect> {
        let Some(t) = self.board.selected_task() else {
            self.info("No task selected to pause: n creates one.");
            return Vec::new();
        };
        let paused = t.status != crate::engine::read::PAUSED;
        let task = t.id.clone();
        self.board_write(BoardWrite::Pause { task, paused })
    }

    /// `a`: approve the selected task's plan (it waits at `plan?`).
    fn board_plan_approve(&mut self) -> Vec<Effect> {
        let Some(t) = self.board.selected_task() else {
            self.info("No task selected: a approves a plan that waits for you (plan?).");
            return Vec::new();
        };
        if t.status != crate::board::plan_approval::AWAITING {
            let msg = format!(
                "{}'s plan does not wait for your approval (only a card at plan? does).",
                t.id
            );
            self.info(msg);
            return Vec::new();
        }
        let task = t.id.clone();
        self.board_write(BoardWrite::ApprovePlan { task })
    }

    fn board_toggle_scheduler(&mut self) -> Vec<Effect> {
        match &self.board.scheduler {
            Some(s) => {
                let on = !s.enabled;
                self.info(if on {
                    "Scheduler started: tasks get role sessions again."
                } else {
                    "Scheduler stopped: no new role sessions start; running ones finish. S starts it again (a restarted nbook starts it too)."
                });
                vec![Effect::BoardScheduler { on }]
            }
            None => {
                self.info("No scheduler runs in this view.");
                Vec::new()
            }
        }
    }

    fn board_archive(&mut self) -> Vec<Effect> {
        let Some((id, column)) = self.board_selected_id("archive") else {
            return Vec::new();
        };
        if column == "archived" {
            self.info(format!("{id} is archived already; m/M move it back."));
            return Vec::new();
        }
        self.board_write(BoardWrite::Move {
            task: id,
            column: "archived".into(),
        })
    }

    pub(crate) fn board_write(&mut self, w: BoardWrite) -> Vec<Effect> {
        if self.board.writing.is_some() {
            self.info("A board change is still being made; try again in a moment.");
            return Vec::new();
        }
        let ticket = self.ticket();
        self.board.writing = Some(ticket);
        vec![Effect::BoardJob {
            ticket,
            job: BoardJob::Write(w),
        }]
    }

    pub(crate) fn board_job_done(&mut self, ticket: Ticket, result: BoardJobResult) -> Vec<Effect> {
        match result {
            BoardJobResult::Artifacts(r) => self.artifacts_job_done(ticket, r),
            BoardJobResult::Workflows(r) => {
                self.workflows_loaded(ticket, r);
                Vec::new()
            }
            BoardJobResult::Inbox(r) => self.inbox_job_done(ticket, r),
            BoardJobResult::Loaded(r) => {
                if self.board.loading != Some(ticket) {
                    return Vec::new();
                }
                self.board.loading = None;
                match r {
                    Ok(data) => self.board.set_data(data),
                    Err(e) => self.board.error = Some(e),
                }
                Vec::new()
            }
            BoardJobResult::Detail(id, r) => {
                if self.board.detail_ticket != Some(ticket) {
                    return Vec::new();
                }
                self.board.detail_ticket = None;
                self.board.detail = Some((id, r.map(|d| *d)));
                Vec::new()
            }
            BoardJobResult::Written(w, r) => {
                if self.board.writing != Some(ticket) {
                    return Vec::new();
                }
                self.board.writing = None;
                if self.mail_write_landed(&w, &r) {
                    return Vec::new();
                }
                if let Some(fx) = self.room_write_landed(&w, &r) {
                    return fx;
                }
                let landed = r.as_ref().map(|_| ()).map_err(Clone::clone);
                if self.goal_write_landed(&w, &landed) || self.rate_write_landed(&w, &landed) {
                    return Vec::new();
                }
                match r {
                    Ok((text, task)) => {
                        // The task the change names stays (or, when new, becomes) selected.
                        self.board.select_after = task;
                        self.message(
                            format!("{text} (logged in the author session)"),
                            MsgKind::Ok,
                        )
                    }
                    Err(e) => {
                        self.error(e);
                        return Vec::new();
                    }
                }
                let mut fx = self.load_board();
                fx.extend(self.workflows_load());
                if let Some((id, _)) = &self.board.detail {
                    let id = id.clone();
                    let t = self.ticket();
                    self.board.detail_ticket = Some(t);
                    fx.push(Effect::BoardJob {
                        ticket: t,
                        job: BoardJob::Detail(id),
                    });
                }
                fx
            }
        }
    }
}
