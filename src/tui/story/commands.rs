//! The Story pane's commands for help, the palette and hints (see `tui::commands`): what
//! needs a loaded story, a record, or a scene is reported unavailable without one.

use crate::plot::ledger::NodeRef;
use crate::tui::action::Command;
use crate::tui::app::AppState;
use crate::tui::commands::PaneCommand;
use crate::tui::keymap::Context;
use crate::tui::story::edit::archive_verb;
use crate::tui::story::RowNode;

pub fn commands(app: &AppState) -> Vec<PaneCommand> {
    let s = &app.story;
    let loaded = s.data.is_some();
    let row = s.selected_row().map(|r| r.node);
    let record = row.and_then(RowNode::node);
    let scene = matches!(row, Some(RowNode::Scene { .. }));
    // The same rules the writes apply: phases have no edit or delete here, and only what
    // has an archive verb (thread, scene, promise, decision) can be archived.
    let writable = record.is_some_and(|n| !matches!(n, NodeRef::Phase(_)));
    let archivable = record.is_some_and(|n| archive_verb(n).is_some());
    let c = |cmd, label| PaneCommand::new(cmd, Context::Story, label);
    vec![
        c(Command::Expand, "open").available(row.is_some()),
        c(Command::Collapse, "close").available(row.is_some()),
        c(Command::StoryToggleTree, "tree").available(loaded),
        c(Command::StoryPromises, "promises").available(loaded),
        c(Command::StoryDecisions, "decisions").available(loaded),
        c(Command::StoryBrief, "brief").available(loaded),
        c(Command::StoryJumpChapter, "to chapter").available(scene),
        c(Command::StoryJumpThread, "to thread").available(scene),
        c(Command::StoryFilter, "filter").available(loaded),
        c(Command::StorySearch, "search").available(loaded),
        c(Command::StoryEdit, "edit").available(writable),
        c(Command::StoryArchive, "archive").available(archivable),
        c(Command::StoryDelete, "delete").available(writable),
    ]
}
