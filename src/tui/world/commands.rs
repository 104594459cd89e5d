//! The World pane's commands for help, the palette and hints (see `tui::commands`): all of
//! them need a loaded, non-empty world (the tabs switch even before a subject is selected).

use crate::tui::action::Command;
use crate::tui::app::AppState;
use crate::tui::commands::PaneCommand;
use crate::tui::keymap::Context;
use crate::tui::world::WorldTab;

pub fn commands(app: &AppState) -> Vec<PaneCommand> {
    let w = &app.world;
    let loaded = w.meta.is_some() && !w.is_empty();
    let c = |cmd, label| PaneCommand::new(cmd, Context::World, label).available(loaded);
    vec![
        c(Command::WorldBack, "back"),
        c(Command::WorldForward, "forward"),
        c(Command::WorldPrevSlice, "previous slice"),
        c(Command::WorldNextSlice, "next slice"),
        c(Command::WorldFirst, "first slice"),
        c(Command::WorldLast, "last slice"),
        c(Command::WorldZoomIn, "zoom in"),
        c(Command::WorldZoomOut, "zoom out"),
        c(Command::WorldJump, "jump"),
        c(Command::WorldFind, "find"),
        c(Command::WorldFilter, "filter"),
        c(Command::WorldMark, "mark A"),
        // The tab bar: one hint per tab, labelled as the tab.
        c(Command::WorldState, WorldTab::State.label()).hint(),
        c(Command::WorldTrack, WorldTab::Track.label()).hint(),
        c(Command::WorldDiff, WorldTab::Diff.label()).hint(),
        c(Command::WorldIssues, WorldTab::Issues.label()).hint(),
    ]
}

/// The tab a command shows, for the tab bar.
pub fn tab_of(cmd: Command) -> Option<WorldTab> {
    match cmd {
        Command::WorldState => Some(WorldTab::State),
        Command::WorldTrack => Some(WorldTab::Track),
        Command::WorldDiff => Some(WorldTab::Diff),
        Command::WorldIssues => Some(WorldTab::Issues),
        _ => None,
    }
}
