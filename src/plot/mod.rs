//! The story: NeuroBook's plot model on `project.sqlite`.
//!
//! Two trees and two ledgers: the carrier tree (story → acts → chapters, with the chapter
//! brief), the causal tree (story → phases → threads → scenes, with world anchors and refs),
//! the promise ledger (promises with beats; derived stage and beat statistics) and the
//! decision ledger. [`Plot`] holds the services — one module per entity — and enforces the
//! lifecycle rules for every caller alike: the agent tools (`tools::plot_read`,
//! `tools::plot_write`) and the TUI's Story pane. [`PlotDb`] runs them as a read, a dry run
//! (the preview of a write: real service code in a rolled-back transaction) or a commit.
//!
//! The database is NeuroBook's and must read back unchanged by it: same columns, JSON text in
//! the same shapes, DateTime written as `2026-01-02T03:04:05.678+00:00`, `updatedAt` set on
//! every write. The Story row is created lazily, from project.yaml, by the first write.
//!
//! Entry points for the TUI: [`ledger`] (tree overview, chapter list with brief status,
//! promise and decision ledgers, node detail), the `Plot` write methods through
//! [`PlotDb::commit`], and [`delete`] (hard delete with a cascade summary).

pub mod act;
pub mod args;
pub mod beat;
pub mod brief;
mod brief_md;
pub mod chapter;
mod ctx;
pub mod decision;
pub mod delete;
pub mod derive;
pub mod error;
pub mod input;
pub mod ledger;
pub mod model;
pub mod project;
pub mod promise;
pub mod refs;
pub mod rows;
pub mod scene;
pub mod selection;
pub mod story;
pub mod template;
pub mod thread;
pub mod time;
pub mod track;
pub mod txn;
pub mod wire;
pub mod world_anchor;

pub use ctx::Plot;
pub use error::{ErrorKind, PlotError, PlotResult};
pub use input::Field;
pub use project::{resolve_target, PlotTarget, ProjectMeta};
pub use txn::{Outcome, PlotDb};
