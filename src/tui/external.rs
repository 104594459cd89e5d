//! Handing the terminal to another program: the author's editor (`$VISUAL`, else `$EDITOR`,
//! else `vi`, split with shell-words rules so `EDITOR="code -w"` works) on a temporary copy of
//! a text, and Ctrl+Z (suspend to the shell, SIGTSTP once the terminal is restored).
//!
//! The run loop reaches the terminal only through the [`Handover`] trait: the real one
//! ([`TerminalHandover`]) leaves the full-screen UI, runs the program and takes the terminal
//! back whatever the program did; tests pass a fake that edits the file itself. What a copy
//! becomes (a file saved through the engine, text put back in a field, a call's edited
//! arguments) is `tui::handover`'s; this module only knows texts and programs.

use std::ffi::OsString;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};

/// The editor used when neither `$VISUAL` nor `$EDITOR` is set.
pub const FALLBACK_EDITOR: &str = "vi";

/// Why the editor could not edit a text. Every message says what happened to the text.
#[derive(Debug, thiserror::Error)]
pub enum ExternalError {
    #[error(
        "${var} is {value:?}, which is not a command (unbalanced quotes); nothing was changed"
    )]
    BadVariable { var: &'static str, value: String },
    #[error("the editor `{program}` (from {from}) was not found; set $VISUAL or $EDITOR to an editor that is installed. Nothing was changed")]
    NotFound { program: String, from: String },
    #[error("cannot start the editor `{program}`: {source}; nothing was changed")]
    Spawn {
        program: String,
        source: std::io::Error,
    },
    #[error("the editor `{program}` {status}; {kept}")]
    Failed {
        program: String,
        status: String,
        kept: String,
    },
    #[error("the edited text is not UTF-8; it is kept in {kept}, nothing was changed")]
    NotUtf8 { kept: String },
    #[error("cannot make the temporary copy for the editor: {0}; nothing was changed")]
    Temp(std::io::Error),
    #[error("cannot take the terminal back: {0}")]
    Terminal(std::io::Error),
    #[error("cannot suspend: {0}")]
    Suspend(std::io::Error),
}

/// The editor to run: a program and the arguments before the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EditorCommand {
    pub program: String,
    pub args: Vec<String>,
    /// Where it came from (`$VISUAL`, `$EDITOR`, or the fallback), for messages.
    pub from: String,
}

/// The editor from `$VISUAL`, else `$EDITOR`, else `vi`. An empty or blank variable counts
/// as unset; one that does not split into words (an unclosed quote) is an error.
pub fn editor_command(
    visual: Option<OsString>,
    editor: Option<OsString>,
) -> Result<EditorCommand, ExternalError> {
    for (var, value) in [("VISUAL", visual), ("EDITOR", editor)] {
        let Some(value) = value else { continue };
        let value = value.to_string_lossy().into_owned();
        if value.trim().is_empty() {
            continue;
        }
        let words = shlex::split(&value).ok_or_else(|| ExternalError::BadVariable {
            var,
            value: value.clone(),
        })?;
        let mut words = words.into_iter();
        let Some(program) = words.next() else {
            continue;
        };
        return Ok(EditorCommand {
            program,
            args: words.collect(),
            from: format!("${var}"),
        });
    }
    Ok(EditorCommand {
        program: FALLBACK_EDITOR.into(),
        args: Vec::new(),
        from: "the fallback, as neither $VISUAL nor $EDITOR is set".into(),
    })
}

/// [`editor_command`] from this process's environment.
pub fn editor_from_env() -> Result<EditorCommand, ExternalError> {
    editor_command(std::env::var_os("VISUAL"), std::env::var_os("EDITOR"))
}

/// The terminal, lent to another program and taken back.
pub trait Handover {
    /// Leave the full-screen UI, run `cmd` in the terminal until it ends, and take the
    /// terminal back — also when it could not start or failed.
    fn run(&mut self, program: &str, cmd: &mut Command) -> Result<ExitStatus, ExternalError>;
    /// Ctrl+Z: leave the full-screen UI and stop (SIGTSTP) until the shell resumes nbook,
    /// then take the terminal back.
    fn suspend(&mut self) -> Result<(), ExternalError>;
}

/// A spawn error as the author reads it: a missing program is named as such.
pub fn spawn_error(program: &str, from: &str, e: std::io::Error) -> ExternalError {
    if e.kind() == std::io::ErrorKind::NotFound {
        ExternalError::NotFound {
            program: program.to_string(),
            from: from.to_string(),
        }
    } else {
        ExternalError::Spawn {
            program: program.to_string(),
            source: e,
        }
    }
}

/// Is the terminal lent to another program right now, or was it a moment ago? A Ctrl+C typed
/// there sends SIGINT to nbook too, and the run loop ignores it. The signal is delivered at
/// once but read by the loop's signal task later — possibly after the terminal came back — so
/// a SIGINT read within [`GRACE`] of the hand-back counts as typed into the other program.
static HANDED_OVER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static RETURNED_AT: std::sync::Mutex<Option<std::time::Instant>> = std::sync::Mutex::new(None);

/// How long after the terminal came back a SIGINT still counts as the lent program's.
const GRACE: std::time::Duration = std::time::Duration::from_secs(1);

pub fn handed_over() -> bool {
    if HANDED_OVER.load(std::sync::atomic::Ordering::SeqCst) {
        return true;
    }
    RETURNED_AT
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .is_some_and(|t| t.elapsed() < GRACE)
}

/// Marks the terminal lent for as long as it lives.
struct Lent;

impl Lent {
    fn new() -> Lent {
        HANDED_OVER.store(true, std::sync::atomic::Ordering::SeqCst);
        Lent
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        *RETURNED_AT.lock().unwrap_or_else(|e| e.into_inner()) = Some(std::time::Instant::now());
        HANDED_OVER.store(false, std::sync::atomic::Ordering::SeqCst);
    }
}

/// The real terminal (see `tui::terminal`).
pub struct TerminalHandover;

impl Handover for TerminalHandover {
    fn run(&mut self, _program: &str, cmd: &mut Command) -> Result<ExitStatus, ExternalError> {
        let _lent = Lent::new();
        crate::tui::terminal::leave();
        let status = cmd.status();
        // Back first, whatever the program did, so an error below is shown in the UI.
        crate::tui::terminal::resume().map_err(ExternalError::Terminal)?;
        status.map_err(|e| ExternalError::Spawn {
            program: String::new(),
            source: e,
        })
    }

    fn suspend(&mut self) -> Result<(), ExternalError> {
        let _lent = Lent::new();
        crate::tui::terminal::leave();
        // The whole process group, as the terminal itself does for a typed Ctrl+Z: the shell
        // sees the job stop and takes the terminal. Execution continues here on `fg`.
        #[cfg(unix)]
        let stopped = {
            // SAFETY: kill(2) with pid 0 signals our own process group; no memory involved.
            let r = unsafe { libc::kill(0, libc::SIGTSTP) };
            if r == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error())
            }
        };
        #[cfg(not(unix))]
        let stopped: std::io::Result<()> = Ok(());
        crate::tui::terminal::resume().map_err(ExternalError::Terminal)?;
        stopped.map_err(ExternalError::Suspend)
    }
}

/// What the editor did to a text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Edited {
    Unchanged,
    Changed(String),
}

/// The temporary file's suffix: the extension of `name` (so the editor picks its syntax), else
/// `.txt`.
fn suffix_of(name: &str) -> String {
    Path::new(name)
        .extension()
        .and_then(|e| e.to_str())
        .filter(|e| e.chars().all(|c| c.is_ascii_alphanumeric()) && e.len() <= 12)
        .map(|e| format!(".{e}"))
        .unwrap_or_else(|| ".txt".into())
}

/// Keep `text` in a file that outlives nbook's run (so nothing typed is lost); its path.
pub fn keep_text(text: &[u8], name: &str) -> Result<PathBuf, ExternalError> {
    let mut f = tempfile::Builder::new()
        .prefix("nbook-kept-")
        .suffix(&suffix_of(name))
        .tempfile()
        .map_err(ExternalError::Temp)?;
    f.write_all(text).map_err(ExternalError::Temp)?;
    let (_, path) = f.keep().map_err(|e| ExternalError::Temp(e.error))?;
    Ok(path)
}

/// Run the editor on a temporary copy of `text` (named like `name`) and read it back.
/// A failed editor (non-zero exit) changes nothing; if it had saved a change, the copy is kept
/// and the error says where.
pub fn edit_text(
    h: &mut dyn Handover,
    editor: &EditorCommand,
    text: &str,
    name: &str,
) -> Result<Edited, ExternalError> {
    let mut file = tempfile::Builder::new()
        .prefix("nbook-")
        .suffix(&suffix_of(name))
        .tempfile()
        .map_err(ExternalError::Temp)?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.flush())
        .map_err(ExternalError::Temp)?;
    let path = file.into_temp_path();
    let mut cmd = Command::new(&editor.program);
    cmd.args(&editor.args).arg(&*path);
    let status = match h.run(&editor.program, &mut cmd) {
        Err(ExternalError::Spawn { program, source }) if program.is_empty() => {
            return Err(spawn_error(&editor.program, &editor.from, source))
        }
        other => other?,
    };
    let bytes = std::fs::read(&path).map_err(ExternalError::Temp)?;
    let changed = bytes != text.as_bytes();
    let keep = |bytes: &[u8]| keep_text(bytes, name).map(|p| p.display().to_string());
    if !status.success() {
        let kept = if changed {
            format!(
                "nothing was changed; what it saved is kept in {}",
                keep(&bytes)?
            )
        } else {
            "nothing was changed".to_string()
        };
        let status = match status.code() {
            Some(c) => format!("exited with status {c}"),
            None => "was stopped by a signal".to_string(),
        };
        return Err(ExternalError::Failed {
            program: editor.program.clone(),
            status,
            kept,
        });
    }
    if !changed {
        return Ok(Edited::Unchanged);
    }
    match String::from_utf8(bytes) {
        Ok(s) => Ok(Edited::Changed(s)),
        Err(e) => Err(ExternalError::NotUtf8 {
            kept: keep(e.as_bytes())?,
        }),
    }
}

/// Run a blocking hand-over from the async run loop without starving the runtime's other
/// tasks (agent runs go on while the author edits).
pub fn blocking<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A SIGINT delivered while the editor ran but read by the loop just after the terminal
    /// came back must still count as the editor's (it used to end nbook now and then).
    #[test]
    fn a_sigint_read_just_after_the_hand_back_is_the_lent_programs() {
        {
            let _lent = Lent::new();
            assert!(handed_over());
        }
        assert!(handed_over(), "within the grace after the hand-back");
        *RETURNED_AT.lock().unwrap() = Some(std::time::Instant::now() - GRACE * 2);
        assert!(!handed_over(), "long after, a SIGINT is nbook's own");
    }

    fn os(s: &str) -> Option<OsString> {
        Some(OsString::from(s))
    }

    #[test]
    fn visual_wins_then_editor_then_vi_and_words_split_like_a_shell() {
        let e = editor_command(os("nano"), os("code -w")).unwrap();
        assert_eq!((e.program.as_str(), e.from.as_str()), ("nano", "$VISUAL"));
        let e = editor_command(None, os("code -w")).unwrap();
        assert_eq!(e.program, "code");
        assert_eq!(e.args, ["-w"]);
        let e = editor_command(os("  "), os("'/opt/My Editor/bin/ed' --wait \"a b\"")).unwrap();
        assert_eq!(e.program, "/opt/My Editor/bin/ed");
        assert_eq!(e.args, ["--wait", "a b"]);
        let e = editor_command(None, None).unwrap();
        assert_eq!(e.program, FALLBACK_EDITOR);
        let e = editor_command(os(""), os("")).unwrap();
        assert_eq!(e.program, FALLBACK_EDITOR);
    }

    #[test]
    fn an_unclosed_quote_is_an_error_naming_the_variable() {
        let e = editor_command(None, os("vim '-c")).unwrap_err();
        assert!(e.to_string().contains("$EDITOR"), "{e}");
        assert!(e.to_string().contains("nothing was changed"), "{e}");
    }

    /// What the fake editor does to the file; its exit code.
    type Play = Box<dyn FnMut(&Path) -> std::io::Result<i32>>;

    /// A terminal that runs nothing: `edit` plays the editor on the file it was given.
    struct Fake {
        edit: Play,
        runs: Vec<Vec<String>>,
    }

    impl Handover for Fake {
        fn run(&mut self, program: &str, cmd: &mut Command) -> Result<ExitStatus, ExternalError> {
            let mut argv = vec![program.to_string()];
            argv.extend(cmd.get_args().map(|a| a.to_string_lossy().into_owned()));
            let file = PathBuf::from(argv.last().cloned().unwrap_or_default());
            self.runs.push(argv);
            let code = (self.edit)(&file).map_err(|e| ExternalError::Spawn {
                program: String::new(),
                source: e,
            })?;
            // A real status with that code, from a real (tiny) process.
            Command::new("sh")
                .args(["-c", &format!("exit {code}")])
                .status()
                .map_err(ExternalError::Terminal)
        }
        fn suspend(&mut self) -> Result<(), ExternalError> {
            Ok(())
        }
    }

    fn fake(edit: impl FnMut(&Path) -> std::io::Result<i32> + 'static) -> Fake {
        Fake {
            edit: Box::new(edit),
            runs: Vec::new(),
        }
    }

    fn code_w() -> EditorCommand {
        editor_command(None, os("code -w")).unwrap()
    }

    #[test]
    fn the_editor_gets_its_words_and_a_copy_named_like_the_text() {
        let mut h = fake(|p| {
            let mut s = std::fs::read_to_string(p)?;
            s.push_str("A new line.\n");
            std::fs::write(p, s)?;
            Ok(0)
        });
        let out = edit_text(&mut h, &code_w(), "First.\n", "chapter.md").unwrap();
        assert_eq!(out, Edited::Changed("First.\nA new line.\n".into()));
        let argv = &h.runs[0];
        assert_eq!(&argv[..2], ["code", "-w"]);
        assert!(argv[2].ends_with(".md"), "{argv:?}");
        assert!(
            !Path::new(&argv[2]).exists(),
            "the copy is removed afterwards"
        );
    }

    #[test]
    fn an_untouched_copy_is_unchanged() {
        let mut h = fake(|_| Ok(0));
        assert_eq!(
            edit_text(&mut h, &code_w(), "Same.\n", "x.md").unwrap(),
            Edited::Unchanged
        );
    }

    #[test]
    fn a_missing_editor_is_named_and_changes_nothing() {
        let mut h = fake(|_| {
            Err(std::io::Error::new(
                std::io::ErrorKind::NotFound,
                "No such file",
            ))
        });
        let e = edit_text(&mut h, &code_w(), "Text.\n", "x.md").unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, ExternalError::NotFound { .. }), "{msg}");
        assert!(msg.contains("`code`") && msg.contains("$EDITOR"), "{msg}");
    }

    #[test]
    fn a_failing_editor_changes_nothing_and_keeps_what_it_saved() {
        let mut h = fake(|p| {
            std::fs::write(p, "half done\n")?;
            Ok(3)
        });
        let e = edit_text(&mut h, &code_w(), "Text.\n", "x.md").unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("exited with status 3"), "{msg}");
        let kept = msg.rsplit("kept in ").next().unwrap().trim();
        assert_eq!(std::fs::read_to_string(kept).unwrap(), "half done\n");
        std::fs::remove_file(kept).unwrap();
        let mut h = fake(|_| Ok(1));
        let e = edit_text(&mut h, &code_w(), "Text.\n", "x.md").unwrap_err();
        assert!(e.to_string().ends_with("nothing was changed"), "{e}");
    }

    #[test]
    fn bytes_that_are_not_utf8_are_kept_not_taken() {
        let mut h = fake(|p| {
            std::fs::write(p, b"caf\xe9\n")?;
            Ok(0)
        });
        let e = edit_text(&mut h, &code_w(), "Text.\n", "x").unwrap_err();
        let msg = e.to_string();
        assert!(matches!(e, ExternalError::NotUtf8 { .. }), "{msg}");
        let kept = msg
            .split("kept in ")
            .nth(1)
            .and_then(|s| s.split(',').next())
            .unwrap();
        assert!(kept.ends_with(".txt"), "{kept}");
        assert_eq!(std::fs::read(kept).unwrap(), b"caf\xe9\n");
        std::fs::remove_file(kept).unwrap();
    }

    #[test]
    fn suffixes_come_from_the_name() {
        assert_eq!(suffix_of("a/b/index.md"), ".md");
        assert_eq!(suffix_of("args.json"), ".json");
        assert_eq!(suffix_of("README"), ".txt");
        assert_eq!(suffix_of("x.m d"), ".txt");
    }
}
