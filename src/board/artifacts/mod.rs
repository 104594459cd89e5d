//! The book's artifacts (Fusion's artifact registry, notes §5): maps, covers, character sheets,
//! mood boards — documents, images, video, audio or anything else an agent or the author
//! registers so others can find it.
//!
//! **Storage.** A row per artifact in nbook's own table `nbook_artifacts` in project.sqlite
//! (created on the first registration, so databases that never held one are untouched and
//! NeuroBook ignores it like every `nbook_` table), and for file payloads a copy in managed
//! storage: `.nbook/artifacts/<ID>.<ext>`, or `.nbook/tasks/<TASK>/artifacts/<ID>.<ext>` for a
//! task's artifact. Inline text (`content`) lives in the row.
//!
//! **Checks** ([`prepare`], before anything changes): exactly one source (inline content,
//! base64 bytes, a project path, or an outside `uri` reference); a project path resolved through
//! the workspace's path authorization (its real path must stay in the project; `.nbook/` and
//! `.git/` are refused, so private memory cannot be copied out); at most [`MAX_BYTES`] of bytes
//! and [`MAX_INLINE`] of inline text; the bytes' signature must match what the MIME type, the
//! extension or the artifact type claims (PNG, JPEG, GIF, WebP, SVG, PDF, mp4/mov, WebM).

pub mod magic;

use std::path::{Path, PathBuf};

use base64::Engine as _;
use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;
use serde_json::{json, Value};

use crate::board::{Board, BoardError, Outcome};
use crate::workspace::{Access, Workspace};
use magic::Format;

/// Largest file payload (Fusion's cap).
pub const MAX_BYTES: u64 = 50 * 1024 * 1024;
/// Largest inline text.
pub const MAX_INLINE: usize = 1024 * 1024;
/// Characters of a stored text file `view` returns.
pub const VIEW_CHARS: usize = 20_000;

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS nbook_artifacts (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL,
  title TEXT NOT NULL,
  description TEXT,
  mime_type TEXT NOT NULL,
  size_bytes INTEGER NOT NULL,
  uri TEXT,
  content TEXT,
  author_id TEXT NOT NULL,
  author_type TEXT NOT NULL,
  task_id TEXT,
  metadata TEXT NOT NULL,
  created_at TEXT NOT NULL
)";

#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Document,
    Image,
    Video,
    Audio,
    Other,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Document => "document",
            Kind::Image => "image",
            Kind::Video => "video",
            Kind::Audio => "audio",
            Kind::Other => "other",
        }
    }

    fn parse(s: &str) -> Kind {
        match s {
            "document" => Kind::Document,
            "image" => Kind::Image,
            "video" => Kind::Video,
            "audio" => Kind::Audio,
            _ => Kind::Other,
        }
    }

    /// The formats an artifact of this type must be, if it is checked by type.
    fn required(self) -> &'static [Format] {
        match self {
            Kind::Image => &[
                Format::Png,
                Format::Jpeg,
                Format::Gif,
                Format::Webp,
                Format::Svg,
            ],
            Kind::Video => &[Format::Mp4, Format::Webm],
            _ => &[],
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ArtifactError {
    #[error("an artifact needs its payload: content (inline text), dataBase64 (bytes), path (a project file) or uri (an outside reference)")]
    NoSource,
    #[error("give exactly one of content, dataBase64, path and uri (got {})", given.join(", "))]
    SourceConflict { given: Vec<&'static str> },
    #[error("title must not be empty")]
    NoTitle,
    #[error("dataBase64 is not valid base64 ({0}); send the file's bytes in standard base64")]
    BadBase64(String),
    /// `why` names the path (the workspace's refusals do, and so do ours).
    #[error("artifact source refused: {why}")]
    PathRefused { path: String, why: String },
    #[error("{path} does not exist or is not a file")]
    SourceMissing { path: String },
    #[error("the payload is {size} bytes; artifacts hold at most {limit} bytes")]
    TooLarge { size: u64, limit: u64 },
    #[error("{claimed} but the bytes are {found}; register the file under its real type (or fix the file)")]
    Signature { claimed: String, found: String },
    #[error("no artifact {id}; fn_artifact_list lists them")]
    NotFound { id: String },
    #[error(transparent)]
    Board(#[from] BoardError),
    #[error("cannot {action} {path}: {source}")]
    Io {
        action: &'static str,
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl ArtifactError {
    pub fn code(&self) -> &'static str {
        use ArtifactError::*;
        match self {
            NoSource => "ARTIFACT_NO_SOURCE",
            SourceConflict { .. } => "ARTIFACT_SOURCE_CONFLICT",
            NoTitle => "INVALID_ARGUMENT",
            BadBase64(_) => "ARTIFACT_BAD_BASE64",
            PathRefused { .. } => "ARTIFACT_PATH_REFUSED",
            SourceMissing { .. } => "ARTIFACT_SOURCE_MISSING",
            TooLarge { .. } => "ARTIFACT_TOO_LARGE",
            Signature { .. } => "ARTIFACT_SIGNATURE_MISMATCH",
            NotFound { .. } => "ARTIFACT_NOT_FOUND",
            Board(b) => b.code(),
            Io { .. } => "ARTIFACT_STORAGE",
        }
    }

    pub fn details(&self) -> Value {
        use ArtifactError::*;
        let mut d = match self {
            Board(b) => return b.details(),
            SourceConflict { given } => json!({"given": given}),
            PathRefused { path, why } => json!({"path": path, "reason": why}),
            SourceMissing { path } => json!({"path": path}),
            TooLarge { size, limit } => json!({"size": size, "limit": limit}),
            Signature { claimed, found } => json!({"claimed": claimed, "found": found}),
            NotFound { id } => json!({"id": id}),
            _ => json!({}),
        };
        d["code"] = json!(self.code());
        d
    }
}

pub type ArtifactResult<T> = Result<T, ArtifactError>;

/// What a caller asks to register (the tool's arguments, plus who asks).
#[derive(Clone, Debug, Default)]
pub struct Register {
    pub kind: Option<Kind>,
    pub title: String,
    pub description: Option<String>,
    pub mime_type: Option<String>,
    pub uri: Option<String>,
    pub content: Option<String>,
    pub data_base64: Option<String>,
    pub path: Option<String>,
    pub task_id: Option<String>,
    pub author_id: String,
    pub author_type: String,
}

/// A checked registration: everything the row and the managed file will hold.
#[derive(Clone, Debug, PartialEq)]
pub struct Prepared {
    pub kind: Kind,
    pub title: String,
    pub description: Option<String>,
    pub mime_type: String,
    pub size: u64,
    pub external_uri: Option<String>,
    pub content: Option<String>,
    pub bytes: Option<Vec<u8>>,
    pub ext: String,
    pub metadata: Value,
    pub task_id: Option<String>,
    pub author_id: String,
    pub author_type: String,
    /// Where the payload came from, for the preview (`inline`, `dataBase64`, a project path).
    pub source: String,
}

/// An artifact as stored.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: Kind,
    pub title: String,
    pub description: Option<String>,
    pub mime_type: String,
    pub size_bytes: u64,
    /// Project-relative managed file, or the outside reference.
    pub uri: Option<String>,
    /// Inline text (documents registered with `content`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    pub author_id: String,
    pub author_type: String,
    pub task_id: Option<String>,
    pub metadata: Value,
    pub created_at: String,
}

impl Artifact {
    /// The managed file, when the payload is one.
    pub fn managed_file(&self, root: &Path) -> Option<PathBuf> {
        self.uri
            .as_deref()
            .filter(|u| u.starts_with(".nbook/") && !u.split('/').any(|c| c == ".."))
            .map(|u| root.join(u))
    }

    pub fn dimensions(&self) -> Option<(u64, u64)> {
        Some((
            self.metadata.get("width")?.as_u64()?,
            self.metadata.get("height")?.as_u64()?,
        ))
    }

    pub fn is_text(&self) -> bool {
        let m = self.mime_type.to_ascii_lowercase();
        self.content.is_some()
            || m.starts_with("text/")
            || m.contains("json")
            || m.contains("xml")
            || m.contains("markdown")
    }
}

fn ext_of(path: &str) -> Option<String> {
    Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .filter(|e| !e.is_empty() && e.len() <= 8 && e.chars().all(|c| c.is_ascii_alphanumeric()))
        .map(str::to_ascii_lowercase)
}

fn describe(bytes: &[u8]) -> String {
    match magic::sniff(bytes) {
        Some(f) => format!("a {} file", f.name()),
        None => {
            let head: Vec<String> = bytes.iter().take(8).map(|b| format!("{b:02x}")).collect();
            format!("no known format (they start with {})", head.join(" "))
        }
    }
}

/// Check a registration and read its payload; changes nothing.
pub fn prepare(ws: &Workspace, r: &Register) -> ArtifactResult<Prepared> {
    let title = r.title.trim();
    if title.is_empty() {
        return Err(ArtifactError::NoTitle);
    }
    let mut given = Vec::new();
    if r.content.is_some() {
        given.push("content");
    }
    if r.data_base64.is_some() {
        given.push("dataBase64");
    }
    if r.path.is_some() {
        given.push("path");
    }
    if r.uri.is_some() {
        given.push("uri");
    }
    match given.len() {
        0 => return Err(ArtifactError::NoSource),
        1 => {}
        _ => return Err(ArtifactError::SourceConflict { given }),
    }
    let kind = r.kind.unwrap_or(Kind::Other);
    let base = Prepared {
        kind,
        title: title.to_string(),
        description: r.description.clone().filter(|d| !d.trim().is_empty()),
        mime_type: String::new(),
        size: 0,
        external_uri: None,
        content: None,
        bytes: None,
        ext: "bin".into(),
        metadata: json!({}),
        task_id: r.task_id.clone(),
        author_id: r.author_id.clone(),
        author_type: r.author_type.clone(),
        source: String::new(),
    };
    if let Some(text) = &r.content {
        if text.len() > MAX_INLINE {
            return Err(ArtifactError::TooLarge {
                size: text.len() as u64,
                limit: MAX_INLINE as u64,
            });
        }
        if !kind.required().is_empty() {
            return Err(ArtifactError::Signature {
                claimed: format!("type {} needs image or video bytes", kind.as_str()),
                found: "inline text (content); send dataBase64 or a path".into(),
            });
        }
        return Ok(Prepared {
            mime_type: r
                .mime_type
                .clone()
                .unwrap_or_else(|| "text/markdown".into()),
            size: text.len() as u64,
            content: Some(text.clone()),
            source: "inline".into(),
            ..base
        });
    }
    if let Some(uri) = &r.uri {
        return Ok(Prepared {
            mime_type: r
                .mime_type
                .clone()
                .unwrap_or_else(|| "application/octet-stream".into()),
            external_uri: Some(uri.trim().to_string()),
            source: "uri".into(),
            ..base
        });
    }
    let (bytes, source, path_ext) = if let Some(b64) = &r.data_base64 {
        let clean: String = b64.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        // Decoded size is 3/4 of the text: refuse an oversize payload before decoding it.
        let approx = (clean.len() as u64 / 4) * 3;
        if approx > MAX_BYTES + 3 {
            return Err(ArtifactError::TooLarge {
                size: approx,
                limit: MAX_BYTES,
            });
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(clean.as_bytes())
            .map_err(|e| ArtifactError::BadBase64(e.to_string()))?;
        (bytes, "dataBase64".to_string(), None)
    } else {
        let path = r.path.as_deref().unwrap_or_default();
        let refused = |why: String| ArtifactError::PathRefused {
            path: path.to_string(),
            why,
        };
        let res = ws
            .resolve(path, Access::Read)
            .map_err(|e| refused(e.to_string()))?;
        if !res.in_current {
            return Err(refused(format!(
                "{} is in another project; artifacts are copied from this project only",
                res.display
            )));
        }
        let first = res.rel.split('/').next().unwrap_or_default();
        if first == ".nbook" || first == ".git" {
            return Err(refused(format!(
                "{} is under {first}/, which is nbook's and git's own (memory, sessions, the database); such files cannot become artifacts",
                res.display
            )));
        }
        let meta = std::fs::metadata(&res.abs).map_err(|_| ArtifactError::SourceMissing {
            path: res.display.clone(),
        })?;
        if !meta.is_file() {
            return Err(ArtifactError::SourceMissing {
                path: res.display.clone(),
            });
        }
        if meta.len() > MAX_BYTES {
            return Err(ArtifactError::TooLarge {
                size: meta.len(),
                limit: MAX_BYTES,
            });
        }
        let bytes = std::fs::read(&res.abs).map_err(|source| ArtifactError::Io {
            action: "read",
            path: res.display.clone(),
            source,
        })?;
        (bytes, res.display.clone(), ext_of(&res.rel))
    };
    if bytes.len() as u64 > MAX_BYTES {
        return Err(ArtifactError::TooLarge {
            size: bytes.len() as u64,
            limit: MAX_BYTES,
        });
    }
    let sniffed = magic::sniff(&bytes);
    let claimed_mime = r.mime_type.clone().or_else(|| {
        path_ext
            .as_deref()
            .and_then(magic::mime_of_ext)
            .map(String::from)
    });
    if let Some(claim) = claimed_mime.as_deref().and_then(Format::from_mime) {
        if sniffed != Some(claim) {
            return Err(ArtifactError::Signature {
                claimed: format!(
                    "{} claims {}",
                    if r.mime_type.is_some() {
                        "mimeType"
                    } else {
                        "the file's extension"
                    },
                    claim.mime()
                ),
                found: describe(&bytes),
            });
        }
    }
    let required = kind.required();
    if !required.is_empty() && !sniffed.is_some_and(|f| required.contains(&f)) {
        let names: Vec<&str> = required.iter().map(|f| f.name()).collect();
        return Err(ArtifactError::Signature {
            claimed: format!("type {} must be {}", kind.as_str(), names.join(", ")),
            found: describe(&bytes),
        });
    }
    let mime_type = claimed_mime
        .or_else(|| sniffed.map(|f| f.mime().to_string()))
        .unwrap_or_else(|| "application/octet-stream".into());
    let ext = sniffed
        .map(|f| f.ext().to_string())
        .or(path_ext)
        .unwrap_or_else(|| "bin".into());
    let digest = ring::digest::digest(&ring::digest::SHA256, &bytes);
    let hex: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    let mut metadata = json!({"sha256": hex, "source": source});
    if let Some((w, h)) = magic::dimensions(&bytes) {
        metadata["width"] = json!(w);
        metadata["height"] = json!(h);
    }
    Ok(Prepared {
        mime_type,
        size: bytes.len() as u64,
        bytes: Some(bytes),
        ext,
        metadata,
        source,
        ..base
    })
}

fn table_exists(c: &Connection) -> rusqlite::Result<bool> {
    c.query_row(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'nbook_artifacts'",
        [],
        |_| Ok(()),
    )
    .optional()
    .map(|o| o.is_some())
}

fn managed_rel(task: Option<&str>, id: &str, ext: &str) -> String {
    match task {
        Some(t) => format!(".nbook/tasks/{t}/artifacts/{id}.{ext}"),
        None => format!(".nbook/artifacts/{id}.{ext}"),
    }
}

/// Store a checked registration: the managed file, then its row, in one board transaction
/// (the file is removed again if the row cannot be written).
pub fn commit(board: &Board, root: &Path, p: &Prepared) -> ArtifactResult<Artifact> {
    let root = root.to_path_buf();
    let written: std::sync::Mutex<Option<PathBuf>> = std::sync::Mutex::new(None);
    let result = board.commit(|c: &Connection| {
        if let Some(t) = &p.task_id {
            crate::board::tasks::require(c, t)?;
        }
        c.execute_batch(SCHEMA)?;
        let seq: i64 = c.query_row(
            "SELECT COALESCE(MAX(seq), 0) + 1 FROM nbook_artifacts",
            [],
            |r| r.get(0),
        )?;
        let id = format!("ART-{seq:03}");
        let uri = match &p.bytes {
            Some(bytes) => {
                let rel = managed_rel(p.task_id.as_deref(), &id, &p.ext);
                let abs = root.join(&rel);
                crate::workspace::atomic_write(&abs, bytes).map_err(|source| BoardError::Io {
                    action: "write",
                    path: rel.clone(),
                    source,
                })?;
                *written.lock().unwrap_or_else(|e| e.into_inner()) = Some(abs);
                Some(rel)
            }
            None => p.external_uri.clone(),
        };
        let a = Artifact {
            id: id.clone(),
            kind: p.kind,
            title: p.title.clone(),
            description: p.description.clone(),
            mime_type: p.mime_type.clone(),
            size_bytes: p.size,
            uri,
            content: p.content.clone(),
            author_id: p.author_id.clone(),
            author_type: p.author_type.clone(),
            task_id: p.task_id.clone(),
            metadata: p.metadata.clone(),
            created_at: crate::board::now(),
        };
        c.execute(
            "INSERT INTO nbook_artifacts (seq, id, type, title, description, mime_type, size_bytes,
               uri, content, author_id, author_type, task_id, metadata, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            params![
                seq,
                a.id,
                a.kind.as_str(),
                a.title,
                a.description,
                a.mime_type,
                a.size_bytes as i64,
                a.uri,
                a.content,
                a.author_id,
                a.author_type,
                a.task_id,
                a.metadata.to_string(),
                a.created_at
            ],
        )?;
        Ok(Outcome {
            text: format!("Registered {id}"),
            value: serde_json::to_value(&a).unwrap_or_default(),
            ..Outcome::default()
        })
    });
    match result {
        Ok(done) => serde_json::from_value::<Value>(done.outcome.value)
            .ok()
            .and_then(|v| from_json(&v))
            .ok_or_else(|| {
                ArtifactError::Board(BoardError::Corrupt {
                    what: "artifact".into(),
                    message: "the stored artifact did not read back".into(),
                })
            }),
        Err(e) => {
            if let Some(abs) = written.lock().unwrap_or_else(|e| e.into_inner()).take() {
                let _ = std::fs::remove_file(abs);
            }
            Err(e.into())
        }
    }
}

fn from_json(v: &Value) -> Option<Artifact> {
    Some(Artifact {
        id: v["id"].as_str()?.to_string(),
        kind: Kind::parse(v["type"].as_str()?),
        title: v["title"].as_str()?.to_string(),
        description: v["description"].as_str().map(String::from),
        mime_type: v["mimeType"].as_str()?.to_string(),
        size_bytes: v["sizeBytes"].as_u64()?,
        uri: v["uri"].as_str().map(String::from),
        content: v["content"].as_str().map(String::from),
        author_id: v["authorId"].as_str()?.to_string(),
        author_type: v["authorType"].as_str()?.to_string(),
        task_id: v["taskId"].as_str().map(String::from),
        metadata: v["metadata"].clone(),
        created_at: v["createdAt"].as_str()?.to_string(),
    })
}

const COLUMNS: &str = "id, type, title, description, mime_type, size_bytes, uri, content, author_id, author_type, task_id, metadata, created_at";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Artifact> {
    let meta: String = r.get(11)?;
    Ok(Artifact {
        id: r.get(0)?,
        kind: Kind::parse(&r.get::<_, String>(1)?),
        title: r.get(2)?,
        description: r.get(3)?,
        mime_type: r.get(4)?,
        size_bytes: r.get::<_, i64>(5)?.max(0) as u64,
        uri: r.get(6)?,
        content: r.get(7)?,
        author_id: r.get(8)?,
        author_type: r.get(9)?,
        task_id: r.get(10)?,
        metadata: serde_json::from_str(&meta).unwrap_or(Value::Null),
        created_at: r.get(12)?,
    })
}

/// Filters of a list.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    pub kind: Option<Kind>,
    pub author_id: Option<String>,
    pub task_id: Option<String>,
    pub search: Option<String>,
    pub limit: usize,
    pub offset: usize,
}

/// Artifacts matching `f`, newest first, and how many match in all.
pub fn list(c: &Connection, f: &Filter) -> rusqlite::Result<(Vec<Artifact>, usize)> {
    if !table_exists(c)? {
        return Ok((Vec::new(), 0));
    }
    let like = f.search.as_deref().map(|s| {
        format!(
            "%{}%",
            s.replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_")
        )
    });
    let clause = "WHERE (?1 IS NULL OR type = ?1) AND (?2 IS NULL OR author_id = ?2)
        AND (?3 IS NULL OR task_id = ?3)
        AND (?4 IS NULL OR title LIKE ?4 ESCAPE '\\' OR description LIKE ?4 ESCAPE '\\')";
    let kind = f.kind.map(Kind::as_str);
    let p = params![kind, f.author_id, f.task_id, like];
    let total: i64 = c.query_row(
        &format!("SELECT COUNT(*) FROM nbook_artifacts {clause}"),
        p,
        |r| r.get(0),
    )?;
    let mut st = c.prepare(&format!(
        "SELECT {COLUMNS} FROM nbook_artifacts {clause} ORDER BY seq DESC LIMIT ?5 OFFSET ?6"
    ))?;
    let rows = st
        .query_map(
            params![
                kind,
                f.author_id,
                f.task_id,
                like,
                f.limit as i64,
                f.offset as i64
            ],
            row,
        )?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok((rows, total.max(0) as usize))
}

pub fn load(c: &Connection, id: &str) -> rusqlite::Result<Option<Artifact>> {
    if !table_exists(c)? {
        return Ok(None);
    }
    c.query_row(
        &format!("SELECT {COLUMNS} FROM nbook_artifacts WHERE id = ?1"),
        [id],
        row,
    )
    .optional()
}

/// The text of a text artifact: inline content, or the managed file's first
/// [`VIEW_CHARS`] characters; `None` for media and outside references.
pub fn text_of(root: &Path, a: &Artifact) -> Option<(String, bool)> {
    if let Some(c) = &a.content {
        return Some(cut(c));
    }
    if !a.is_text() {
        return None;
    }
    let bytes = std::fs::read(a.managed_file(root)?).ok()?;
    Some(cut(&String::from_utf8_lossy(&bytes)))
}

fn cut(s: &str) -> (String, bool) {
    match s.char_indices().nth(VIEW_CHARS) {
        Some((i, _)) => (s[..i].to_string(), true),
        None => (s.to_string(), false),
    }
}

/// `12.3 KB`-style size.
pub fn human_size(n: u64) -> String {
    const UNITS: [&str; 4] = ["B", "KB", "MB", "GB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u < UNITS.len() - 1 {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// What a viewer shows of an artifact.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Payload {
    /// Text (inline or a managed text file), and whether it was cut.
    Text(String, bool),
    /// A raster image's managed bytes (PNG, JPEG, GIF, WebP).
    Image(Vec<u8>),
    /// Nothing to show beyond the metadata (video, audio, SVG, PDF, outside references), or
    /// why the payload could not be read.
    None(Option<String>),
}

/// The payload of `a` under the project at `root`.
pub fn payload(root: &Path, a: &Artifact) -> Payload {
    if let Some((t, cut)) = text_of(root, a) {
        return Payload::Text(t, cut);
    }
    let raster = matches!(
        Format::from_mime(&a.mime_type),
        Some(Format::Png | Format::Jpeg | Format::Gif | Format::Webp)
    );
    let Some(file) = a.managed_file(root).filter(|_| raster) else {
        return Payload::None(None);
    };
    match std::fs::metadata(&file) {
        Ok(m) if m.len() > MAX_BYTES => {
            return Payload::None(Some(format!(
                "{} is larger than {MAX_BYTES} bytes",
                file.display()
            )))
        }
        Err(e) => return Payload::None(Some(format!("cannot read {}: {e}", file.display()))),
        _ => {}
    }
    match std::fs::read(&file) {
        Ok(b) => Payload::Image(b),
        Err(e) => Payload::None(Some(format!("cannot read {}: {e}", file.display()))),
    }
}
