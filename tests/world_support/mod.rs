//! Shared fixture for the world engine tests: a real project (template schema and calendar),
//! a real engine, and the real `execute_world` tool.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;

use nbook::config::{Config, Dirs, Preset};
use nbook::engine::tool::{Staged, Tool, ToolCtx, ToolError, ToolOutput};
use nbook::engine::{Engine, Mode};
use nbook::tools::world::ExecuteWorld;
use serde_json::{json, Value};

pub struct Fx {
    pub tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub dirs: Dirs,
    pub engine: Arc<Engine>,
}

pub fn fixture() -> Fx {
    fixture_with(Config::default())
}

pub fn fixture_with(mut config: Config) -> Fx {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("Book")).unwrap();
    let dirs = Dirs {
        config: tmp.path().join("home"),
        data: tmp.path().join("home/data"),
        logs: tmp.path().join("home/logs"),
    };
    config.approval.preset = Preset::Supervised;
    let ws = nbook::workspace::Workspace::open(&root).unwrap();
    let engine =
        Arc::new(Engine::open(ws, config, &dirs, nbook::tools::registry().unwrap()).unwrap());
    Fx {
        tmp,
        root,
        dirs,
        engine,
    }
}

impl Fx {
    pub fn db(&self) -> PathBuf {
        self.root.join(".nbook/project.sqlite")
    }

    pub fn conn(&self) -> rusqlite::Connection {
        nbook::store::open(&self.db()).unwrap()
    }

    pub fn ctx(&self, profile: &str) -> ToolCtx {
        ToolCtx {
            workspace: self.engine.workspace().clone(),
            config: self.engine.config().clone(),
            profile: self.engine.profiles().get(profile).unwrap(),
            session_id: "test".into(),
            mode: Mode::Normal,
            session_state: Arc::default(),
            call_id: String::new(),
            services: None,
            cancel: Default::default(),
        }
    }

    /// Stage a script as `profile`; a held change is rolled back unless `commit`.
    pub fn stage(
        &self,
        profile: &str,
        code: &str,
        commit: bool,
    ) -> Result<(ToolOutput, bool), ToolError> {
        match ExecuteWorld
            .stage(&self.ctx(profile), &json!({"code": code}).into())
            .unwrap()?
        {
            Staged::Done(out) => Ok((out, false)),
            Staged::Held(h) if commit => Ok((h.commit()?, true)),
            Staged::Held(h) => {
                let out = ToolOutput {
                    content: h.preview.summary.clone(),
                    details: serde_json::to_value(&h.preview).ok(),
                    ..Default::default()
                };
                h.rollback();
                Ok((out, true))
            }
        }
    }

    /// Run as the world keeper and commit; the script's `data`.
    pub fn run(&self, code: &str) -> Value {
        let (out, _) = self
            .stage("world.engine", code, true)
            .unwrap_or_else(|e| panic!("script failed: {e}\n{code}"));
        out.details.unwrap()["data"].clone()
    }

    /// The error message of a failing script (as the world keeper).
    pub fn fail(&self, code: &str) -> String {
        match self.stage("world.engine", code, true) {
            Err(e) => e.to_string(),
            Ok((out, _)) => panic!("expected a failure, got {}", out.content),
        }
    }

    pub fn counts(&self) -> (i64, i64, i64) {
        let c = self.conn();
        let n = |t: &str| {
            c.query_row(&format!("SELECT count(*) FROM \"{t}\""), [], |r| r.get(0))
                .unwrap()
        };
        (n("WorldSubject"), n("WorldSlice"), n("WorldPatch"))
    }
}

/// A small timeline: a harbour, Ada and Tom, three slices in April 2020.
pub const SEED: &str = r#"
await world.slice.write({time: world.time.parse("2020-04-01"), title: "Arrival", kind: "init", patches: [
  {subjectId: "l-harbour", type: "location", name: "Harbour", path: "/name", op: "replace", value: "Harbour"},
  {subjectId: "c-ada", type: "character", name: "Ada", path: "/location", op: "replace", value: "subject://l-harbour"},
  {subjectId: "c-ada", path: "/gold", op: "replace", value: 10},
  {subjectId: "c-tom", type: "character", name: "Tom", path: "/location", op: "replace", value: "subject://l-harbour"},
]});
await world.slice.write({time: world.time.parse("2020-04-05 12:00"), title: "The storm", patches: [
  {subjectId: "c-ada", path: "/hp", op: "increment", value: -30, summary: "hurt in the storm"},
  {subjectId: "c-ada", path: "/inventory", op: "append", value: "lamp"},
]});
await world.slice.write({time: world.time.parse("2020-04-09"), title: "Payday", patches: [
  {subjectId: "c-ada", path: "/gold", op: "increment", value: 5},
]});
return "seeded";
"#;
