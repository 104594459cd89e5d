//! The Board pane's commands for help, the palette and hints (see `tui::commands`): what
//! needs a selected task is reported unavailable without one; `n` works on an empty board.

use crate::tui::action::Command;
use crate::tui::app::AppState;
use crate::tui::commands::PaneCommand;
use crate::tui::keymap::Context;

pub fn commands(app: &AppState) -> Vec<PaneCommand> {
    let b = &app.board;
    if b.artifacts.is_some() {
        return vec![
            PaneCommand::new(Command::BoardArtifacts, Context::Board, "back to the board").hint(),
            PaneCommand::new(Command::Refresh, Context::Board, "reload"),
        ];
    }
    if b.workflows.is_some() {
        return vec![
            PaneCommand::new(Command::BoardWorkflowSet, Context::Board, "set a setting")
                .available(
                    b.workflows
                        .as_ref()
                        .and_then(|v| v.selected())
                        .is_some_and(|(w, _)| !w.ir.settings.is_empty()),
                )
                .hint(),
            PaneCommand::new(Command::BoardWorkflows, Context::Board, "back to the board").hint(),
            PaneCommand::new(Command::Refresh, Context::Board, "reload"),
        ];
    }
    if let Some(v) = &b.inbox {
        let mail = v.selected();
        let approval =
            mail.is_some_and(|m| m.mail_kind() == crate::engine::read::MailKind::Approval);
        return vec![
            PaneCommand::new(Command::Expand, Context::Board, "open")
                .available(mail.is_some())
                .hint(),
            PaneCommand::new(Command::InboxReply, Context::Inbox, "reply")
                .available(mail.is_some() && !approval)
                .hint(),
            PaneCommand::new(Command::InboxApprovals, Context::Inbox, "to approvals")
                .available(approval)
                .hint(),
            PaneCommand::new(Command::InboxCompose, Context::Inbox, "new message").hint(),
            PaneCommand::new(Command::InboxRoomPost, Context::Inbox, "post in a room")
                .available(v.data.as_ref().is_some_and(|d| !d.rooms.is_empty())),
            PaneCommand::new(Command::InboxRoomNew, Context::Inbox, "new room"),
            PaneCommand::new(Command::InboxRoomAdd, Context::Inbox, "add room members")
                .available(v.data.as_ref().is_some_and(|d| !d.rooms.is_empty())),
            PaneCommand::new(Command::BoardInbox, Context::Board, "back to the board").hint(),
            PaneCommand::new(Command::Refresh, Context::Board, "reload"),
        ];
    }
    let task = b.selected_task();
    let card = task.is_some();
    let live = task.is_some_and(|t| !matches!(t.column.as_str(), "done" | "archived"));
    let archivable = task.is_some_and(|t| t.column != "archived");
    let plan = task.is_some_and(|t| t.status == crate::board::plan_approval::AWAITING);
    let c = |cmd, label| PaneCommand::new(cmd, Context::Board, label);
    vec![
        c(Command::BoardPlanApprove, "approve plan")
            .available(plan)
            .hint(),
        c(Command::BoardPlanReject, "send plan back")
            .available(plan)
            .hint(),
        c(Command::Expand, "open").available(card).hint(),
        c(Command::Collapse, "close").available(b.detail.is_some()),
        c(Command::BoardNew, "new task").hint(),
        c(Command::BoardMove, "move →").available(card).hint(),
        c(Command::BoardMoveBack, "move ←").available(card),
        c(Command::BoardPause, "pause").available(live).hint(),
        c(Command::BoardArchive, "archive")
            .available(archivable)
            .hint(),
        c(Command::BoardGoalNew, "new goal"),
        c(Command::BoardGoals, "goals"),
        c(Command::BoardSteer, "steer").available(live),
        c(Command::BoardScheduler, scheduler_label(app)).available(app.board.scheduler.is_some()),
        c(Command::BoardArtifacts, "artifacts").hint(),
        c(Command::BoardWorkflows, "workflows"),
        c(Command::BoardInbox, "inbox").hint(),
        c(Command::BoardAgents, "agents"),
        c(Command::BoardRate, "rate").available(card).hint(),
    ]
}

/// `S`'s label: what pressing it does now.
fn scheduler_label(app: &AppState) -> &'static str {
    match &app.board.scheduler {
        Some(s) if s.enabled => "stop scheduler",
        Some(_) => "start scheduler",
        None => "scheduler",
    }
}
