//! Session modes: `normal`, and the read-only `discuss` and `plan`.

use serde::{Deserialize, Serialize};

/// Session mode. `discuss` and `plan` are read-only: mutating calls are held for approval.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    #[default]
    Normal,
    Discuss,
    Plan,
}

impl Mode {
    pub const ALL: [Mode; 3] = [Mode::Normal, Mode::Discuss, Mode::Plan];

    /// The Shift+Tab cycle: normal → discuss → plan → normal.
    pub fn next(self) -> Mode {
        match self {
            Mode::Normal => Mode::Discuss,
            Mode::Discuss => Mode::Plan,
            Mode::Plan => Mode::Normal,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Normal => "normal",
            Mode::Discuss => "discuss",
            Mode::Plan => "plan",
        }
    }

    pub fn is_read_only(self) -> bool {
        !matches!(self, Mode::Normal)
    }

    pub fn parse(s: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.as_str() == s)
    }
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
