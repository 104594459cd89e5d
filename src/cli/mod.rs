//! The command line (DESIGN.md "CLI contract"): argument parsing with clap, logging set-up,
//! and one function per subcommand. Exit codes: 0 ok · 1 tool error · 2 usage or bad
//! arguments · 3 needs approval and none given · 4 tool not allowed for the profile ·
//! 141 stdout was closed by its reader (`nbook call read … | head -2`).
//!
//! Everything a subcommand prints goes through [`out`] (stdout) and [`note`] (stderr), never
//! `println!`: a closed pipe must end the command quietly, not panic.

mod agent;
mod board;
mod board_run;
mod call;
mod demo;
mod mcp;
mod open;
mod run;
mod sessions;
mod tools;
mod trust;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::config::{Config, Dirs, LoadReport};
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
        /// The project (default: the one containing the current folder)
        #[arg(long)]
        project: Option<PathBuf>,
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
        /// Call as a session working on this board task (e.g. NB-001): an executor's file
        /// tools then work in the task's draft area
        #[arg(long)]
        task: Option<String>,
    },
    /// One agent run, headless; events are printed as JSON lines
    Run {
        /// The project (default: the one containing the current folder)
        #[arg(long)]
        project: Option<PathBuf>,
        /// The profile the session runs with (default leader.default)
        #[arg(long)]
        profile: Option<String>,
        /// Run as this durable agent (agent-<n>): its role's profile, its identity in the
        /// system prompt, its mail and ratings; cannot be combined with --profile
        #[arg(long, conflicts_with = "profile")]
        agent: Option<String>,
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
        /// Do not print the live text_delta / reasoning_delta / tool_call_progress lines
        #[arg(long)]
        quiet: bool,
        /// Keep calling the model after a call was refused or needed an approval
        #[arg(long)]
        continue_after_refusal: bool,
    },
    /// Trust a project's .nbook/config.toml to loosen your approval policy (prints what it
    /// loosens); the trust is kept in the config dir and dropped when the file changes
    Trust {
        /// The project folder
        path: PathBuf,
        /// Only show what the project config loosens and whether it is trusted
        #[arg(long, conflicts_with = "revoke")]
        show: bool,
        /// Forget the trust of this project
        #[arg(long)]
        revoke: bool,
        #[arg(long)]
        json: bool,
    },
    /// Serve the project's tools to an outside agent over MCP (stdio); mutating calls wait in
    /// the approval queue of the nbook that has the project open
    Mcp {
        /// The project (default: the one containing the current folder)
        #[arg(long)]
        project: Option<PathBuf>,
        #[arg(long, default_value = crate::mcp::DEFAULT_PROFILE)]
        profile: String,
        /// How long a call waits for the author before it returns pending_approval (ms)
        #[arg(long, default_value_t = crate::mcp::DEFAULT_WAIT_MS)]
        wait_ms: u64,
        /// With no nbook open on the project, refuse every mutating call; =false lets the
        /// approval policy run those it runs without asking
        #[arg(long, default_value_t = true, num_args = 0..=1, default_missing_value = "true", action = clap::ArgAction::Set)]
        approve_from_tui_only: bool,
        /// Print the snippet that registers nbook with this client, then exit
        #[arg(long, value_enum)]
        print_config: Option<crate::mcp::client_config::Client>,
    },
    /// The book's production board: list, show ID, create
    #[command(subcommand)]
    Board(board::BoardCommand),
    /// Durable agents' heartbeat runs: wake ID (one run now), runs ID (the record)
    #[command(subcommand)]
    Agent(agent::AgentCommand),
    /// List sessions
    Sessions {
        /// The project (default: the one containing the current folder)
        #[arg(long)]
        project: Option<PathBuf>,
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
    /// The reader of stdout went away (`| head`). 128 + SIGPIPE: what a shell reports for a
    /// program that died of the signal, as `cat` does, so `set -o pipefail` scripts see the
    /// same thing. Nothing is printed.
    pub const CLOSED_PIPE: u8 = 141;
}

/// Print one line on stdout. A closed pipe becomes the quiet [`exit::CLOSED_PIPE`] failure;
/// the caller returns it with `?` and stops producing output.
pub fn out(line: impl std::fmt::Display) -> Result<(), Failure> {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "{line}")
        .and_then(|()| stdout.flush())
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::BrokenPipe => Failure::closed_pipe(),
            _ => Failure::tool(format!("cannot write to stdout: {e}")),
        })
}

/// Print one line on stderr. If stderr itself is gone there is nobody to tell: ignored.
pub fn note(line: impl std::fmt::Display) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
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
    /// stdout was closed by its reader: end at once, print nothing.
    pub fn closed_pipe() -> Failure {
        Failure {
            code: exit::CLOSED_PIPE,
            message: String::new(),
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
            note(format!("nbook: cannot start the async runtime: {e}"));
            return ExitCode::from(exit::TOOL_ERROR);
        }
    };
    let result = runtime.block_on(dispatch(cli, dirs));
    // Agent tasks may still be parked on approvals; do not wait for them on exit.
    runtime.shutdown_background();
    match result {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            if f.code != exit::CLOSED_PIPE {
                note(format!(
                    "nbook: {}",
                    crate::text::escape_message(&f.message)
                ));
            }
            ExitCode::from(f.code)
        }
    }
}

async fn dispatch(cli: Cli, dirs: Dirs) -> Result<u8, Failure> {
    match cli.command {
        None => open::open(project_path(cli.path), dirs).await,
        Some(Command::Init { path, title }) => {
            let ws =
                crate::workspace::init::init(&path, title.as_deref()).map_err(Failure::usage)?;
            crate::store::open(&ws.db_path()).map_err(Failure::tool)?;
            // The template's chapter file names its chapter; the story tree must have it.
            crate::plot::template::seed_new_project(ws.root(), &ws.db_path())
                .map_err(Failure::tool)?;
            out(format!(
                "Created project '{}' at {}",
                crate::text::escape_for_terminal(&ws.title()),
                crate::text::escape_os(ws.root().as_os_str())
            ))?;
            out(format!(
                "Open it with: nbook {}",
                crate::text::escape_os(path.as_os_str())
            ))?;
            Ok(exit::OK)
        }
        Some(Command::Demo { dir }) => demo::demo(dir, dirs).await,
        Some(Command::Tools {
            profile,
            json,
            project,
        }) => tools::tools(
            profile,
            json,
            project.or_else(|| crate::workspace::find_project_root(std::path::Path::new("."))),
            &dirs,
        ),
        Some(Command::Call {
            tool,
            project,
            profile,
            mode,
            approve,
            reject,
            args,
            task,
        }) => {
            call::call(
                call::CallArgs {
                    tool,
                    project: project_path(project),
                    profile,
                    mode,
                    approve,
                    reject,
                    args,
                    task,
                },
                dirs,
            )
            .await
        }
        Some(Command::Run {
            project,
            profile,
            agent,
            message,
            model,
            provider,
            script,
            mode,
            approve_all,
            reject_all,
            quiet,
            continue_after_refusal,
        }) => {
            run::run(
                run::RunArgs {
                    project: project_path(project),
                    profile: profile.unwrap_or_else(|| run::DEFAULT_PROFILE.to_string()),
                    agent,
                    message,
                    model,
                    provider,
                    script,
                    mode,
                    approve_all,
                    reject_all,
                    quiet,
                    continue_after_refusal,
                },
                dirs,
            )
            .await
        }
        Some(Command::Mcp {
            project,
            profile,
            wait_ms,
            approve_from_tui_only,
            print_config,
        }) => {
            mcp::mcp(
                mcp::McpArgs {
                    project,
                    profile,
                    wait_ms,
                    approve_from_tui_only,
                    print_config,
                },
                dirs,
            )
            .await
        }
        Some(Command::Board(cmd)) => board::board(cmd, dirs).await,
        Some(Command::Agent(cmd)) => agent::agent(cmd, dirs).await,
        Some(Command::Sessions { project, json }) => {
            sessions::sessions(&project_path(project), json, dirs)
        }
        Some(Command::Trust {
            path,
            show,
            revoke,
            json,
        }) => trust::trust(
            &project_path(Some(path)),
            trust::Action::pick(show, revoke),
            json,
            &dirs,
        ),
    }
}

/// The project a command acts on: `--project`/`PATH` when given, else the current folder;
/// either way the project that contains it (a subfolder of a book opens the book).
pub fn project_path(given: Option<PathBuf>) -> PathBuf {
    let start = given.unwrap_or_else(|| PathBuf::from("."));
    crate::workspace::find_project_root(&start).unwrap_or(start)
}

/// Open the engine on a project folder (or the project containing it), with config loaded
/// (global + project); config warnings and the project lines held back until trusted go
/// to stderr.
pub fn open_engine(path: &std::path::Path, dirs: &Dirs) -> Result<Engine, Failure> {
    let (engine, report) = open_engine_report(path, dirs)?;
    for n in report.notes() {
        note(format!("nbook: warning: {n}"));
    }
    for e in engine.profile_errors().iter() {
        note(format!(
            "nbook: warning: {}",
            crate::text::escape_message(&e.to_string())
        ));
    }
    if let Some(e) = engine.database_read_only() {
        note(format!("nbook: warning: {e}"));
    }
    if let Err(e) = crate::workspace::series::load(engine.workspace().root()) {
        note(format!(
            "nbook: warning: series: {}",
            crate::text::escape_message(&e.to_string())
        ));
    }
    Ok(engine)
}

/// Open the engine and return what loading the config found, for a front end that shows it
/// itself (the TUI). Tool names in `[approval.tools]` are checked against the registry here.
pub fn open_engine_report(
    path: &std::path::Path,
    dirs: &Dirs,
) -> Result<(Engine, LoadReport), Failure> {
    let ws = Workspace::open(&project_path(Some(path.to_path_buf()))).map_err(Failure::usage)?;
    for n in ws.recovery() {
        note(format!(
            "nbook: repaired: {}",
            crate::text::escape_message(&n.to_string())
        ));
    }
    let mut report = Config::load_report(dirs, Some(ws.root())).map_err(Failure::usage)?;
    let registry = crate::tools::registry().map_err(Failure::tool)?;
    let engine = Engine::open(ws, report.config.clone(), dirs, registry).map_err(Failure::tool)?;
    report.check_tool_names(engine.registry().names());
    for note in report.notes() {
        tracing::warn!("config: {note}");
    }
    Ok((engine, report))
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
