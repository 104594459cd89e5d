//! The Sessions pane's commands for help, the palette and its hint row (see
//! `tui::commands`), per state: the jobs view, the composer, the transcript cursor, the list.
//! The entries marked `hint` are the hint row, in order.

use crate::tui::action::Command;
use crate::tui::app::AppState;
use crate::tui::commands::PaneCommand;
use crate::tui::keymap::Context;
use crate::tui::sessions::{is_busy, SessionsView};

pub fn commands(app: &AppState) -> Vec<PaneCommand> {
    let s = &app.sessions;
    let session = s.selected();
    let selected = session.is_some();
    let busy = session.is_some_and(|i| is_busy(i.state));
    let rateable = session.is_some_and(|i| i.profile != crate::engine::author::AUTHOR_PROFILE);
    if s.view == SessionsView::Jobs {
        let job = s.jobs.selected().is_some();
        let c = |cmd, label| PaneCommand::new(cmd, Context::Jobs, label);
        return vec![
            c(Command::CancelJob, "cancel job").available(job).hint(),
            c(Command::JobSession, "its session").available(job).hint(),
            c(Command::ToggleJobs, "sessions").hint(),
        ];
    }
    if s.composing {
        let c = |cmd, label| PaneCommand::new(cmd, Context::Composer, label);
        return vec![
            c(Command::Send, "send"),
            c(Command::SendFollowup, "follow-up"),
            c(Command::Newline, "new line"),
            c(Command::ExternalEditor, "write it in your editor"),
            c(Command::LeaveComposer, "leave (draft kept)").hint(),
            c(Command::CancelRun, "cancel run").available(busy).hint(),
            c(Command::CycleMode, "mode").available(selected).hint(),
        ];
    }
    if s.in_transcript {
        let c = |cmd, label| PaneCommand::new(cmd, Context::Transcript, label);
        return vec![
            c(Command::Down, "next").hint(),
            c(Command::ToggleEntry, "expand tool call").hint(),
            c(Command::LeaveTranscript, "back").hint(),
            c(Command::Compose, "write").available(selected).hint(),
        ];
    }
    let c = |cmd, label| PaneCommand::new(cmd, Context::Sessions, label);
    vec![
        c(Command::Compose, "write").available(selected).hint(),
        c(Command::NewSession, "new session").hint(),
        c(Command::OpenTranscript, "transcript")
            .available(selected)
            .hint(),
        c(Command::ToggleJobs, "jobs").hint(),
        c(Command::CancelRun, "cancel run").available(busy).hint(),
        c(Command::CycleMode, "mode").available(selected).hint(),
        c(Command::Follow, "follow").available(selected),
        c(Command::RateRun, "rate").available(rateable).hint(),
    ]
}
