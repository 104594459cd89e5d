//! The Files pane's commands for help, the palette and hints (see `tui::commands`).

use crate::tui::action::Command;
use crate::tui::app::AppState;
use crate::tui::commands::PaneCommand;
use crate::tui::keymap::Context;

pub fn commands(app: &AppState) -> Vec<PaneCommand> {
    let row = app.files.tree.selected_node().is_some();
    let file = app.files.tree.selected_node().is_some_and(|n| !n.is_dir);
    let c = |cmd, label| PaneCommand::new(cmd, Context::Files, label);
    vec![
        c(Command::Expand, "open").available(row),
        c(Command::Collapse, "close").available(row),
        c(Command::Find, "find"),
        c(Command::EditFile, "edit").available(file),
    ]
}
