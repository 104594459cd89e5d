//! The Approvals pane's commands for help, the palette and the option row under a call (see
//! `tui::commands`). The session grant is offered only when the call allows one; the preview's
//! keys (changes, side by side, search) are listed after the decisions.

use crate::engine::PendingCall;
use crate::tui::action::Command;
use crate::tui::app::AppState;
use crate::tui::commands::PaneCommand;
use crate::tui::keymap::Context;

pub fn commands(app: &AppState) -> Vec<PaneCommand> {
    let mut list = match app.approvals.selected_call() {
        Some(call) => call_commands(call),
        None => {
            let any = app.approvals.selected_item().is_some();
            let mut list: Vec<PaneCommand> = call_commands_with(false)
                .into_iter()
                .map(|pc| pc.available(false))
                .collect();
            if let Some(detail) = list.iter_mut().find(|pc| pc.cmd == Command::Detail) {
                detail.available = any;
            }
            list
        }
    };
    list.extend(preview_commands(app));
    // The history is there whether or not something waits.
    list.push(PaneCommand::new(
        Command::History,
        Context::Approvals,
        "history",
    ));
    list
}

/// Moving through the selected call's preview: changes, side by side, search; the match keys
/// only while a search is active.
pub fn preview_commands(app: &AppState) -> Vec<PaneCommand> {
    let call = app.approvals.selected_call().is_some();
    let parts = app
        .approvals
        .selected_call()
        .is_some_and(|c| app.approvals.kept(c).is_some());
    let searching = app.approvals.search.is_some();
    let p = |cmd, label| PaneCommand::new(cmd, Context::Approvals, label).available(call);
    let s = |cmd, label| PaneCommand::new(cmd, Context::DiffSearch, label);
    let mut list = vec![
        p(Command::DiffNextChange, "next change"),
        p(Command::DiffPrevChange, "previous change"),
        p(Command::DiffSideBySide, "side by side"),
        p(Command::DiffSearch, "search"),
        p(Command::DiffToggleHunk, "keep/drop hunk").available(parts),
        p(Command::DiffToggleFile, "keep/drop file").available(parts),
    ];
    // Reported only while their section is looked up (it shadows `n` reject then).
    if searching {
        list.extend([
            s(Command::DiffNextMatch, "next match"),
            s(Command::DiffPrevMatch, "previous match"),
            s(Command::DiffEndSearch, "end search"),
        ]);
    }
    list
}

/// The options for one waiting call; the `hint` ones are its option row, in order.
pub fn call_commands(call: &PendingCall) -> Vec<PaneCommand> {
    call_commands_with(call.session_grant_allowed)
}

fn call_commands_with(session_grant: bool) -> Vec<PaneCommand> {
    let c = |cmd, label| PaneCommand::new(cmd, Context::Approvals, label).hint();
    let mut grant = c(Command::ApproveSession, "approve for session").available(session_grant);
    // An option the call does not allow is not offered in its row (help marks it).
    grant.hint = session_grant;
    vec![
        c(Command::Approve, "approve"),
        grant,
        c(Command::Reject, "reject"),
        c(Command::EditArgs, "edit"),
        PaneCommand::new(Command::EditArgsJson, Context::Approvals, "edit as JSON"),
        c(Command::Detail, "detail"),
    ]
}
