//! `nbook board list | show ID | create DESCRIPTION | run`: the book's production board,
//! headless. `list` and `show` read the board; `create` is the author's own `fn_task_create`
//! call through the engine (logged in the author session, like the author's edits in the TUI),
//! so its duplicate detection and checks are the tool's. `--json` prints the records.
//! `run` is the scheduler of `crate::runner` without the TUI (see `board_run`).

use std::path::Path;

use serde_json::json;

use super::{exit, open_engine, out, Failure};
use crate::board::{tasks, Board, Task};
use crate::config::Dirs;
use crate::engine::CallStatus;
use crate::text::escape_for_terminal as esc;

#[derive(clap::Subcommand, Debug)]
pub enum BoardCommand {
    /// Every task by workflow column: id, title, status, step progress
    List {
        /// The project (default: the one containing the current folder)
        #[arg(long)]
        project: Option<std::path::PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// One task in full: its record, PROMPT.md, steps, latest log entries and documents
    Show {
        id: String,
        #[arg(long)]
        project: Option<std::path::PathBuf>,
        #[arg(long)]
        json: bool,
    },
    /// Create a task (its first line is the title); a duplicate of an open task is linked
    Create {
        description: String,
        #[arg(long)]
        project: Option<std::path::PathBuf>,
        /// low | normal | high | urgent
        #[arg(long)]
        priority: Option<String>,
        /// A task this one waits for (repeatable)
        #[arg(long = "depends-on")]
        depends_on: Vec<String>,
        #[arg(long)]
        json: bool,
    },
    /// Run the board's scheduler headless: role sessions take tasks through their stages
    /// with the models in config.toml. Calls that need the author (the merge) wait; with
    /// --once the command stops when nothing more can happen without the author and
    /// reports what waits (exit 3), else it runs until Ctrl+C
    Run {
        #[arg(long)]
        project: Option<std::path::PathBuf>,
        /// Stop once nothing more can happen without the author
        #[arg(long)]
        once: bool,
        /// One JSON object per line (the scheduler's events, then `run_finished`)
        #[arg(long)]
        json: bool,
    },
}

fn json_out(v: &serde_json::Value) -> Result<(), Failure> {
    out(crate::text::escape_json(
        &serde_json::to_string_pretty(v).map_err(Failure::tool)?,
    ))
}

fn board_of(project: &Path) -> Result<Board, Failure> {
    let ws = crate::workspace::Workspace::open(project).map_err(Failure::usage)?;
    Ok(Board::new(ws.root(), ws.name()))
}

pub async fn board(cmd: BoardCommand, dirs: Dirs) -> Result<u8, Failure> {
    match cmd {
        BoardCommand::List { project, json } => list(&super::project_path(project), json),
        BoardCommand::Show { id, project, json } => show(&super::project_path(project), &id, json),
        BoardCommand::Create {
            description,
            project,
            priority,
            depends_on,
            json,
        } => {
            create(
                &super::project_path(project),
                &description,
                priority,
                depends_on,
                json,
                &dirs,
            )
            .await
        }
        BoardCommand::Run {
            project,
            once,
            json,
        } => super::board_run::run(&super::project_path(project), once, json, &dirs).await,
    }
}

fn list(project: &Path, json: bool) -> Result<u8, Failure> {
    let (all, columns): (Vec<Task>, _) = board_of(project)?
        .read(|c| {
            Ok((
                tasks::all(c, None)?,
                crate::board::workflow::board_columns(c)?,
            ))
        })
        .map_err(Failure::tool)?;
    let wf = crate::board::workflow::builtin_chapter();
    if json {
        let columns: Vec<serde_json::Value> = columns
            .iter()
            .map(|col| {
                let here: Vec<_> = all
                    .iter()
                    .filter(|t| t.column == col.id)
                    .map(Task::summary_line)
                    .collect();
                json!({"id": col.id, "name": col.name, "tasks": here})
            })
            .collect();
        json_out(&json!({"workflow": wf.id, "columns": columns}))?;
        return Ok(exit::OK);
    }
    if all.is_empty() {
        out(format!(
            "The board has no tasks yet. Create one with `nbook board create --project {} \"Draft chapter 12 from its brief\"`.",
            crate::text::escape_os(project.as_os_str())
        ))?;
        return Ok(exit::OK);
    }
    for col in &columns {
        let here: Vec<&Task> = all.iter().filter(|t| t.column == col.id).collect();
        out(format!("{} ({})", col.name, here.len()))?;
        for t in here {
            let (d, n) = t.progress();
            let status = if t.status.is_empty() {
                String::new()
            } else {
                format!(" [{}]", esc(&t.status))
            };
            out(format!(
                "  {:<8} {:>5}  {:<7} {}{status}",
                esc(&t.id),
                format!("{d}/{n}"),
                esc(&t.priority),
                esc(&t.title)
            ))?;
        }
    }
    Ok(exit::OK)
}

fn show(project: &Path, id: &str, json: bool) -> Result<u8, Failure> {
    let (text, value) = board_of(project)?
        .read(|c| crate::tools::fusion::tasks::show_value(c, id.trim()))
        .map_err(Failure::tool)?;
    if json {
        json_out(&value)?;
    } else {
        for line in text.lines() {
            out(esc(line))?;
        }
    }
    Ok(exit::OK)
}

async fn create(
    project: &Path,
    description: &str,
    priority: Option<String>,
    depends_on: Vec<String>,
    json: bool,
    dirs: &Dirs,
) -> Result<u8, Failure> {
    if let Some(p) = &priority {
        if crate::board::Priority::parse(p).is_none() {
            return Err(Failure::usage(format!(
                "unknown priority '{p}'; use low, normal, high or urgent"
            )));
        }
    }
    let engine = std::sync::Arc::new(open_engine(project, dirs)?);
    let mut args = json!({"description": description});
    if let Some(p) = priority {
        args["priority"] = json!(p);
    }
    if !depends_on.is_empty() {
        args["dependencies"] = json!(depends_on);
    }
    let r = engine.author_call("fn_task_create", args, None).await;
    if json {
        json_out(&serde_json::to_value(&r).map_err(Failure::tool)?)?;
    } else if r.ok {
        out(esc(&r.content))?;
    }
    match r.status {
        CallStatus::Ok => Ok(exit::OK),
        CallStatus::InvalidArgs => {
            if json {
                Ok(exit::USAGE)
            } else {
                Err(Failure::usage(r.content))
            }
        }
        _ if json => Ok(exit::TOOL_ERROR),
        _ => Err(Failure::tool(r.content)),
    }
}
