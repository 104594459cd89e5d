//! What each pane reports it can do now: [`PaneCommand`] lists (gitui's `CommandInfo`), one
//! per pane and state, built by each pane's `commands` module. The hint rows, the `?` help and
//! the command palette are all drawn from these reports, and every key comes from the active
//! keymap, so a key cannot be drawn in one place and be missing in another.

use crate::tui::action::Command;
use crate::tui::app::{AppState, Pane};
use crate::tui::keymap::Context;

/// One command a pane offers: which command, the keymap section its key is looked up in
/// first, the short label of its hint, whether it does anything in the current state, and
/// whether the pane's hint row shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PaneCommand {
    pub cmd: Command,
    pub ctx: Context,
    pub label: &'static str,
    pub available: bool,
    pub hint: bool,
}

impl PaneCommand {
    /// An available command that is not in the hint row.
    pub fn new(cmd: Command, ctx: Context, label: &'static str) -> PaneCommand {
        PaneCommand {
            cmd,
            ctx,
            label,
            available: true,
            hint: false,
        }
    }

    pub fn available(mut self, yes: bool) -> PaneCommand {
        self.available = yes;
        self
    }

    /// Shown in the pane's hint row.
    pub fn hint(mut self) -> PaneCommand {
        self.hint = true;
        self
    }
}

/// The key drawn for `pc`: the first binding of its command in its own section, then in the
/// focused pane's sections, then anywhere (`None` when the command is not bound at all).
pub fn key_of(app: &AppState, pc: &PaneCommand) -> Option<String> {
    let mut prefer = vec![pc.ctx];
    prefer.extend(app.pane_contexts());
    prefer.push(Context::Global);
    app.keymap.key_for(pc.cmd, &prefer).map(|k| k.notation())
}

/// Every key notation bound to `cmd` in `ctx`, in keymap order.
pub fn keys_in(app: &AppState, cmd: Command, ctx: Context) -> Vec<String> {
    app.keymap
        .bindings(ctx)
        .iter()
        .filter(|b| b.cmd == cmd)
        .map(|b| b.key.notation())
        .collect()
}

impl AppState {
    /// What the focused pane offers in its current state.
    pub fn pane_commands(&self) -> Vec<PaneCommand> {
        match self.focus {
            Pane::Files => crate::tui::files::commands::commands(self),
            Pane::Story => crate::tui::story::commands::commands(self),
            Pane::World => crate::tui::world::commands::commands(self),
            Pane::Sessions => crate::tui::sessions::commands::commands(self),
            Pane::Approvals => crate::tui::approvals::commands::commands(self),
            Pane::Board => crate::tui::board::commands::commands(self),
        }
    }
}
