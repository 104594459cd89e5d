//! Keys → commands, per context, from `assets/keymap.toml` (embedded) merged with the user's
//! `<config>/keymap.toml`. The file shape follows yazi: one section per context, each with
//! `keymap = [{ on = "j", run = "down", desc = "…" }]`; a user section may instead give
//! `prepend_keymap` (wins over the defaults) or `append_keymap`. An unknown command, key or
//! section is a load error that names the file and line.

use std::path::Path;

use serde::Deserialize;
use toml::Spanned;

use crate::tui::action::Command;
use crate::tui::keys::Key;

pub const DEFAULT_KEYMAP: &str = include_str!("../../assets/keymap.toml");

/// Where a key is looked up. Overlays with a text input use `Input`; the question and
/// new-session forms use `Form`; other overlays `Overlay`. Inside the Sessions pane the
/// transcript cursor (`Transcript`) and the jobs view (`Jobs`) come before `Sessions`, and the
/// composer has its own section (`Composer`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Context {
    Global,
    Files,
    Story,
    World,
    Sessions,
    Approvals,
    Input,
    Overlay,
    Transcript,
    Jobs,
    Composer,
    Form,
    /// While a search is active in an approval preview: its next / previous match and its end
    /// (looked up before `Approvals`, so `n` finds the next match and rejects again after).
    DiffSearch,
    Board,
}

impl Context {
    pub const ALL: [Context; 14] = [
        Context::Global,
        Context::Files,
        Context::Story,
        Context::World,
        Context::Sessions,
        Context::Approvals,
        Context::Input,
        Context::Overlay,
        Context::Transcript,
        Context::Jobs,
        Context::Composer,
        Context::Form,
        Context::DiffSearch,
        Context::Board,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Context::Global => "global",
            Context::Files => "files",
            Context::Story => "story",
            Context::World => "world",
            Context::Sessions => "sessions",
            Context::Approvals => "approvals",
            Context::Input => "input",
            Context::Overlay => "overlay",
            Context::Transcript => "transcript",
            Context::Jobs => "jobs",
            Context::Composer => "composer",
            Context::Form => "form",
            Context::DiffSearch => "diff_search",
            Context::Board => "board",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binding {
    pub key: Key,
    pub cmd: Command,
    pub desc: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeymapError {
    pub file: String,
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for KeymapError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} line {}: {}", self.file, self.line, self.message)
    }
}

impl std::error::Error for KeymapError {}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Keymap {
    sections: [Vec<Binding>; 14],
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileDe {
    global: Option<SectionDe>,
    files: Option<SectionDe>,
    story: Option<SectionDe>,
    world: Option<SectionDe>,
    sessions: Option<SectionDe>,
    approvals: Option<SectionDe>,
    input: Option<SectionDe>,
    overlay: Option<SectionDe>,
    transcript: Option<SectionDe>,
    jobs: Option<SectionDe>,
    composer: Option<SectionDe>,
    form: Option<SectionDe>,
    diff_search: Option<SectionDe>,
    board: Option<SectionDe>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SectionDe {
    keymap: Option<Vec<EntryDe>>,
    prepend_keymap: Option<Vec<EntryDe>>,
    append_keymap: Option<Vec<EntryDe>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryDe {
    on: Spanned<String>,
    run: Spanned<String>,
    desc: Option<String>,
}

fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()
        .iter()
        .take(offset.min(text.len()))
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

impl Keymap {
    /// The embedded defaults. They are tested to parse, so failure here is a build defect.
    pub fn defaults() -> Keymap {
        Keymap::parse(DEFAULT_KEYMAP, "assets/keymap.toml", None).unwrap_or_default()
    }

    /// Parse a keymap file on top of `base` (or from scratch when `base` is `None`).
    pub fn parse(text: &str, file: &str, base: Option<&Keymap>) -> Result<Keymap, KeymapError> {
        let err = |line: usize, message: String| KeymapError {
            file: file.to_string(),
            line,
            message,
        };
        let de: FileDe = toml::from_str(text).map_err(|e| {
            let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(1);
            err(line, e.message().to_string())
        })?;
        let mut map = base.cloned().unwrap_or_default();
        let sections = [
            (Context::Global, de.global),
            (Context::Files, de.files),
            (Context::Story, de.story),
            (Context::World, de.world),
            (Context::Sessions, de.sessions),
            (Context::Approvals, de.approvals),
            (Context::Input, de.input),
            (Context::Overlay, de.overlay),
            (Context::Transcript, de.transcript),
            (Context::Jobs, de.jobs),
            (Context::Composer, de.composer),
            (Context::Form, de.form),
            (Context::DiffSearch, de.diff_search),
            (Context::Board, de.board),
        ];
        for (ctx, section) in sections {
            let Some(section) = section else { continue };
            let convert =
                |entries: Option<Vec<EntryDe>>| -> Result<Option<Vec<Binding>>, KeymapError> {
                    let Some(entries) = entries else {
                        return Ok(None);
                    };
                    let mut out = Vec::with_capacity(entries.len());
                    for e in entries {
                        let key = Key::parse(e.on.get_ref())
                            .map_err(|m| err(line_of(text, e.on.span().start), m))?;
                        let cmd = Command::from_name(e.run.get_ref()).ok_or_else(|| {
                        err(
                            line_of(text, e.run.span().start),
                            format!(
                                "unknown action '{}' in [{}]; the palette (Ctrl+P) lists every action",
                                e.run.get_ref(),
                                ctx.name()
                            ),
                        )
                    })?;
                        let desc = e.desc.unwrap_or_else(|| cmd.description().to_string());
                        out.push(Binding { key, cmd, desc });
                    }
                    Ok(Some(out))
                };
            let slot = &mut map.sections[ctx.index()];
            if let Some(replace) = convert(section.keymap)? {
                *slot = replace;
            }
            if let Some(mut front) = convert(section.prepend_keymap)? {
                front.append(slot);
                *slot = front;
            }
            if let Some(back) = convert(section.append_keymap)? {
                slot.extend(back);
            }
        }
        Ok(map)
    }

    /// Defaults plus the user's file at `path` if it exists. A bad user file leaves the
    /// defaults in force and returns its error for the status bar.
    pub fn load(path: &Path) -> (Keymap, Option<KeymapError>) {
        let defaults = Keymap::defaults();
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (defaults, None),
            Err(e) => {
                let error = KeymapError {
                    file: path.display().to_string(),
                    line: 0,
                    message: format!("cannot read: {e}"),
                };
                return (defaults, Some(error));
            }
        };
        match Keymap::parse(&text, &path.display().to_string(), Some(&defaults)) {
            Ok(map) => (map, None),
            Err(e) => (defaults, Some(e)),
        }
    }

    pub fn lookup(&self, ctx: Context, key: Key) -> Option<Command> {
        self.sections[ctx.index()]
            .iter()
            .find(|b| b.key == key)
            .map(|b| b.cmd)
    }

    pub fn bindings(&self, ctx: Context) -> &[Binding] {
        &self.sections[ctx.index()]
    }

    /// The first key bound to `cmd`, looking in `prefer` first, then every context.
    pub fn key_for(&self, cmd: Command, prefer: &[Context]) -> Option<Key> {
        prefer
            .iter()
            .chain(Context::ALL.iter())
            .find_map(|ctx| self.sections[ctx.index()].iter().find(|b| b.cmd == cmd))
            .map(|b| b.key)
    }

    /// Help rows for a context: one row per command, its keys joined (`j, <Down>`).
    pub fn help_rows(&self, ctx: Context) -> Vec<(String, String)> {
        let mut rows: Vec<(Command, Vec<String>, String)> = Vec::new();
        for b in &self.sections[ctx.index()] {
            match rows.iter_mut().find(|(c, _, _)| *c == b.cmd) {
                Some(row) => row.1.push(b.key.notation()),
                None => rows.push((b.cmd, vec![b.key.notation()], b.desc.clone())),
            }
        }
        rows.into_iter()
            .map(|(_, keys, desc)| (keys.join(", "), desc))
            .collect()
    }
}
