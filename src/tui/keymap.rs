//! Keys → commands, per context, from `assets/keymap.toml` (embedded) merged with the user's
//! `<config>/keymap.toml`. The file shape follows yazi: one section per context, each with
//! `keymap = [{ on = "j", run = "down", desc = "…" }]`; a user section may instead give
//! `prepend_keymap` (wins over the defaults) or `append_keymap`. An unknown command, key,
//! field or section is reported with the file and line and only that binding (or section) is
//! left out: the rest of the author's file applies.

use std::path::Path;

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
    /// The Board's Inbox view (looked up before `Board`: `r` replies there instead of
    /// reloading).
    Inbox,
}

impl Context {
    pub const ALL: [Context; 15] = [
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
        Context::Inbox,
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
            Context::Inbox => "inbox",
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
    sections: [Vec<Binding>; 15],
}

/// One binding from `{ on, run, desc }`; on error the offending field's name and why.
fn binding(t: &dyn toml_edit::TableLike, ctx: Context) -> Result<Binding, (String, String)> {
    if let Some((k, _)) = t.iter().find(|(k, _)| !matches!(*k, "on" | "run" | "desc")) {
        return Err((
            k.to_string(),
            format!("unknown field `{k}` (a binding has on, run, desc)"),
        ));
    }
    let text = |f: &str| -> Result<Option<String>, (String, String)> {
        match t.get(f) {
            None => Ok(None),
            Some(v) => v
                .as_str()
                .map(|s| Some(s.to_string()))
                .ok_or((f.to_string(), format!("`{f}` must be a string"))),
        }
    };
    let on = text("on")?.ok_or((
        "run".to_string(),
        "a binding needs `on` (the key)".to_string(),
    ))?;
    let run = text("run")?.ok_or((
        "on".to_string(),
        "a binding needs `run` (the action)".to_string(),
    ))?;
    let key = Key::parse(&on).map_err(|m| ("on".to_string(), m))?;
    let cmd = Command::from_name(&run).ok_or_else(|| {
        (
            "run".to_string(),
            format!(
                "unknown action '{run}' in [{}]; the palette (Ctrl+P) lists every action",
                ctx.name()
            ),
        )
    })?;
    let desc = text("desc")?.unwrap_or_else(|| cmd.description().to_string());
    Ok(Binding { key, cmd, desc })
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

    /// Parse a keymap file on top of `base` (or from scratch when `base` is `None`); the first
    /// problem is an error (the embedded defaults and tests use this strict form).
    pub fn parse(text: &str, file: &str, base: Option<&Keymap>) -> Result<Keymap, KeymapError> {
        let (map, mut errors) = Keymap::parse_lenient(text, file, base);
        if errors.is_empty() {
            Ok(map)
        } else {
            Err(errors.swap_remove(0))
        }
    }

    /// Parse a keymap file on top of `base`, skipping what is wrong: a bad binding, an unknown
    /// field or section is reported with its line and left out, and every other line applies
    /// (one typo must not take away the author's other keys). Only a file that is not TOML at
    /// all applies nothing.
    pub fn parse_lenient(
        text: &str,
        file: &str,
        base: Option<&Keymap>,
    ) -> (Keymap, Vec<KeymapError>) {
        let mut map = base.cloned().unwrap_or_default();
        let mut errors = Vec::new();
        let err = |span: Option<std::ops::Range<usize>>, message: String| KeymapError {
            file: file.to_string(),
            line: span.map_or(1, |s| line_of(text, s.start)),
            message,
        };
        let doc = match toml_edit::ImDocument::parse(text) {
            Ok(d) => d,
            Err(e) => {
                errors.push(err(e.span(), e.message().to_string()));
                return (map, errors);
            }
        };
        for (name, item) in doc.as_table().iter() {
            let key_span = doc.as_table().key(name).and_then(|k| k.span());
            let Some(ctx) = Context::ALL.iter().copied().find(|c| c.name() == name) else {
                let known: Vec<&str> = Context::ALL.iter().map(|c| c.name()).collect();
                errors.push(err(
                    key_span,
                    format!(
                        "unknown section [{name}] is ignored; sections are {}",
                        known.join(", ")
                    ),
                ));
                continue;
            };
            let Some(section) = item.as_table_like() else {
                errors.push(err(key_span, format!("[{name}] must be a table")));
                continue;
            };
            let mut lists: [Option<Vec<Binding>>; 3] = [None, None, None];
            for (field, value) in section.iter() {
                let fspan = section
                    .get_key_value(field)
                    .and_then(|(k, _)| k.span())
                    .or(key_span.clone());
                let slot = match field {
                    "keymap" => 0,
                    "prepend_keymap" => 1,
                    "append_keymap" => 2,
                    other => {
                        errors.push(err(
                            fspan,
                            format!(
                                "unknown field `{other}` in [{name}] is ignored; use keymap, prepend_keymap or append_keymap"
                            ),
                        ));
                        continue;
                    }
                };
                let entries: Vec<(Option<std::ops::Range<usize>>, &dyn toml_edit::TableLike)> =
                    if let Some(a) = value.as_array() {
                        let mut v = Vec::new();
                        for e in a.iter() {
                            match e.as_inline_table() {
                                Some(t) => v.push((e.span(), t as &dyn toml_edit::TableLike)),
                                None => errors.push(err(
                                    e.span(),
                                    format!("a binding in [{name}] {field} must be {{ on = \"…\", run = \"…\" }}; skipped"),
                                )),
                            }
                        }
                        v
                    } else if let Some(a) = value.as_array_of_tables() {
                        a.iter()
                            .map(|t| (t.span(), t as &dyn toml_edit::TableLike))
                            .collect()
                    } else {
                        errors.push(err(
                            fspan,
                            format!("[{name}] {field} must be a list of bindings; ignored"),
                        ));
                        continue;
                    };
                let mut out = Vec::with_capacity(entries.len());
                for (span, t) in entries {
                    match binding(t, ctx) {
                        Ok(b) => out.push(b),
                        Err((at, message)) => {
                            let at = t
                                .get_key_value(&at)
                                .and_then(|(k, v)| v.span().or(k.span()))
                                .or(span);
                            errors.push(err(at, format!("{message}; this binding is skipped")));
                        }
                    }
                }
                lists[slot] = Some(out);
            }
            let slot = &mut map.sections[ctx.index()];
            let [replace, prepend, append] = lists;
            if let Some(replace) = replace {
                *slot = replace;
            }
            if let Some(mut front) = prepend {
                front.append(slot);
                *slot = front;
            }
            if let Some(back) = append {
                slot.extend(back);
            }
        }
        (map, errors)
    }

    /// Defaults plus the user's file at `path` if it exists, with every problem in it (the
    /// lines that are fine apply; see [`Keymap::parse_lenient`]).
    pub fn load(path: &Path) -> (Keymap, Vec<KeymapError>) {
        let defaults = Keymap::defaults();
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return (defaults, Vec::new()),
            Err(e) => {
                let error = KeymapError {
                    file: path.display().to_string(),
                    line: 0,
                    message: format!("cannot read: {e}; using the default keys"),
                };
                return (defaults, vec![error]);
            }
        };
        Keymap::parse_lenient(&text, &path.display().to_string(), Some(&defaults))
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
