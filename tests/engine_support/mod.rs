//! The fixture the engine-level tool tests share: a new project (`nbook init`'s template) in a
//! temp folder, opened by the real engine with the real tool registry and a config home of its
//! own beside it, under the supervised preset unless a test gives its own config. Each test
//! file adds the helpers it needs in its own `impl Fx` block (sessions with a board task or an
//! agent, `ok`/`err` wrappers with that file's result shape).

use std::path::PathBuf;
use std::sync::Arc;

use nbook::config::{Config, Dirs, Preset};
use nbook::engine::{Approval, Decision, Engine, ToolCall};
use serde_json::Value;

pub struct Fx {
    /// Keeps the project and the config home alive for the test's length.
    pub tmp: tempfile::TempDir,
    /// The project's root folder.
    pub root: PathBuf,
    pub engine: Arc<Engine>,
}

/// The config home inside the fixture's temp folder (never the user's).
pub fn dirs(tmp: &tempfile::TempDir) -> Dirs {
    Dirs {
        config: tmp.path().join("home"),
        data: tmp.path().join("home/data"),
        logs: tmp.path().join("home/logs"),
    }
}

/// A new project under the supervised preset: every mutating call asks.
pub fn fx() -> Fx {
    let mut config = Config::default();
    config.approval.preset = Preset::Supervised;
    fx_with(config)
}

/// A new project opened with `config`.
pub fn fx_with(config: Config) -> Fx {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).unwrap();
    let ws = nbook::workspace::Workspace::open(&root).unwrap();
    let engine =
        Arc::new(Engine::open(ws, config, &dirs(&tmp), nbook::tools::registry().unwrap()).unwrap());
    Fx { tmp, root, engine }
}

/// What a test's author answers when a call asks: approve.
pub const APPROVE: Approval = Approval::Auto {
    decision: Decision::Approve,
    by: "test",
};

/// A tool call as a model would send it (the engine gives it its id).
pub fn call(name: &str, args: Value) -> ToolCall {
    ToolCall {
        id: String::new(),
        name: name.into(),
        arguments: args,
    }
}
