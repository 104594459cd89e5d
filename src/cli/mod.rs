//! The command line (DESIGN.md "CLI contract"): argument parsing with clap, logging set-up,
//! and one function per subcommand. Exit codes: 0 ok · 1 tool error · 2 usage or bad
//! arguments · 3 needs approval and none given · 4 tool not allowed for the profile.

mod call;
mod demo;
mod open;
mod run;
mod sessions;
mod tools;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::config::{Config, Dirs};
use crate::engine::{Engine, Mode};
use crate::workspace::Workspace;

#[derive(Parser, Debug)]
#[command(
    name = "nbook",
    version,
    about = "A terminal workbench for writing long novels with AI agents"
)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Cli {
    /// Project folder to open in the TUI (default: the current folder)
    pub path: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Create a project
    Init {
        path: PathBuf,
        #[arg(long)]
        title: Option<String>,
    },
    /// Copy the bundled sample novel, start its replayed agent session, open the TUI
    Demo {
        #[arg(long)]
        dir: Option<PathBuf>,
    },
    /// List tools: name, group, mutates, profiles
    Tools {
        #[arg(long)]
        profile: Option<String>,
        #[arg(long)]
        json: bool,
        /// Also load the profiles of this project
        #[arg(long)]
        project: Option<PathBuf>,
    },
    /// One tool call, headless; the result JSON goes to stdout
    Call {
        tool: String,
        #[arg(long)]
        project: PathBuf,
        #[arg(long, default_value = "leader.default")]
        profile: String,
        #[arg(long, default_value = "normal", value_parser = parse_mode)]
        mode: Mode,
        #[arg(long, conflicts_with = "reject")]
        approve: bool,
        #[arg(long)]
        reject: bool,
        /// Arguments as JSON (read from stdin when omitted and stdin is not a terminal)
        #[arg(long)]
        args: Option<String>,
    },
    /// One agent run, headless; events are printed as JSON lines
    Run {
        #[arg(long)]
        project: PathBuf,
        #[arg(long, default_value = "leader.default")]
        profile: String,
        #[arg(long)]
        message: String,
        #[arg(long, conflicts_with_all = ["provider", "script"])]
        model: Option<String>,
        #[arg(long)]
        provider: Option<String>,
        #[arg(long)]
        script: Option<PathBuf>,
        #[arg(long, default_value = "normal", value_parser = parse_mode)]
        mode: Mode,
        #[arg(long, conflicts_with = "reject_all")]
        approve_all: bool,
        #[arg(long)]
        reject_all: bool,
    },
    /// List sessions
    Sessions {
        #[arg(long)]
        project: PathBuf,
        #[arg(long)]
        json: bool,
    },
}

fn parse_mode(s: &str) -> Result<Mode, String> {
    Mode::parse(s).ok_or_else(|| format!("unknown mode '{s}'; use normal, discuss or plan"))
}

/// Exit codes of the CLI contract.
pub mod exit {
    pub const OK: u8 = 0;
    pub const TOOL_ERROR: u8 = 1;
    pub const USAGE: u8 = 2;
    pub const NEEDS_APPROVAL: u8 = 3;
    pub const NOT_ALLOWED: u8 = 4;
}

/// A failure before any tool ran: print it and exit with `code`.
pub struct Failure {
    pub code: u8,
    pub message: String,
}

impl Failure {
    pub fn usage(message: impl std::fmt::Display) -> Failure {
        Failure {
            code: exit::USAGE,
            message: message.to_string(),
        }
    }
    pub fn tool(message: impl std::fmt::Display) -> Failure {
        Failure {
            code: exit::TOOL_ERROR,
            message: message.to_string(),
        }
    }
}

pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() {
                exit::USAGE
            } else {
                exit::OK
            });
        }
    };
    let dirs = Dirs::resolve();
    let _log_guard = init_logging(&dirs);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("nbook: cannot start the async runtime: {e}");
            return ExitCode::from(exit::TOOL_ERROR);
        }
    };
    let result = runtime.block_on(dispatch(cli, dirs));
    // Agent tasks may still be parked on approvals; do not wait for them on exit.
    runtime.shutdown_background();
    match result {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            eprintln!("nbook: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}

async fn dispatch(cli: Cli, dirs: Dirs) -> Result<u8, Failure> {
    match cli.command {
        None => open::open(cli.path.unwrap_or_else(|| PathBuf::from(".")), dirs).await,
        Some(Command::Init { path, title }) => {
            let ws =
                crate::workspace::init::init(&path, title.as_deref()).map_err(Failure::usage)?;
            crate::store::open(&ws.db_path()).map_err(Failure::tool)?;
            println!(
                "Created project '{}' at {}",
                ws.title(),
                ws.root().display()
            );
            println!("Open it with: nbook {}", path.display());
            Ok(exit::OK)
        }
        Some(Command::Demo { dir }) => demo::demo(dir, dirs).await,
        Some(Command::Tools {
            profile,
            json,
            project,
        }) => tools::tools(profile, json, project, &dirs),
        Some(Command::Call {
            tool,
            project,
            profile,
            mode,
            approve,
            reject,
            args,
        }) => {
            call::call(
                call::CallArgs {
                    tool,
                    project,
                    profile,
                    mode,
                    approve,
                    reject,
                    args,
                },
                dirs,
            )
            .await
        }
        Some(Command::Run {
            project,
            profile,
            message,
            model,
            provider,
            script,
            mode,
            approve_all,
            reject_all,
        }) => {
            run::run(
                run::RunArgs {
                    project,
                    profile,
                    message,
                    model,
                    provider,
                    script,
                    mode,
                    approve_all,
                    reject_all,
                },
                dirs,
            )
            .await
        }
        Some(Command::Sessions { project, json }) => sessions::sessions(&project, json, dirs),
    }
}

/// Open the engine on a project folder, with config loaded (global + project).
pub fn open_engine(path: &std::path::Path, dirs: &Dirs) -> Result<Engine, Failure> {
    let ws = Workspace::open(path).map_err(Failure::usage)?;
    for note in ws.recovery() {
        eprintln!("nbook: repaired: {note}");
    }
    let config = Config::load(dirs, Some(ws.root())).map_err(Failure::usage)?;
    let engine = Engine::open(ws, config, dirs).map_err(Failure::tool)?;
    for e in engine.profile_errors() {
        eprintln!("nbook: warning: {e}");
    }
    Ok(engine)
}

/// Logs go to `<logs>/nbook.log` (filter from `NBOOK_LOG`), never to the terminal.
fn init_logging(dirs: &Dirs) -> Option<tracing_appender::non_blocking::WorkerGuard> {
    std::fs::create_dir_all(&dirs.logs).ok()?;
    let appender = tracing_appender::rolling::never(&dirs.logs, "nbook.log");
    let (writer, guard) = tracing_appender::non_blocking(appender);
    let filter = tracing_subscriber::EnvFilter::try_from_env("NBOOK_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer)
        .with_ansi(false)
        .try_init()
        .ok()?;
    Some(guard)
}
