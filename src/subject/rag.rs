//! The subject retrieval index, `.nbook/subject-rag.sqlite` of the project holding the
//! subject: chunks of `events.jsonl` / `memory.jsonl` with their embedding vectors (BLOBs of
//! little-endian f32), searched by cosine similarity computed in Rust (`super::vectors`), with
//! no SQLite extension.
//!
//! Tables keep NeuroBook's names (`subject_rag_meta`, `subject_rag_sources`,
//! `subject_rag_chunks`); NeuroBook's sqlite-vec table is not used. The meta table records the
//! format, the embedding provider and model and the vector dimensions: an index built with
//! another model cannot be compared, so a mismatch fails and asks for the file to be deleted
//! (it is derived data, rebuilt from the JSONL files).
//!
//! Freshness: a source is rebuilt before a search when it is marked dirty
//! (`subject-rag-dirty.json`), was never indexed, or its file content no longer matches the
//! fingerprint stored with its chunks — so edits made by hand or by another program are
//! noticed too. A rebuild re-embeds only chunk texts the index does not already hold.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rusqlite::{params, Connection, OptionalExtension};
use serde::Serialize;

use super::vectors::{decode_into, dot, normalised, remember, to_blob, Cached};
pub use super::vectors::{ConfiguredEmbedder, Embedder};
use super::{
    content_fingerprint, dirty, events, io_lock, memory, read_source, split_chars, vectors, Source,
    Subject, SubjectError,
};
use crate::protocol::now_rfc3339;
use crate::workspace::{Access, Workspace};

/// Longest chunk embedded, in characters (NeuroBook's limit for memory chunks).
pub const MAX_CHUNK_CHARS: usize = 1200;
/// Texts per embedding request.
pub const EMBED_BATCH: usize = 64;
/// Written to `subject_rag_meta.format`; anything else is not an index this code can read.
pub const FORMAT: &str = "nbook-subject-rag-1";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS subject_rag_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS subject_rag_sources (
  subject_path TEXT NOT NULL,
  source TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  chunk_count INTEGER NOT NULL,
  built_at TEXT NOT NULL,
  build TEXT NOT NULL,
  PRIMARY KEY (subject_path, source)
);
CREATE TABLE IF NOT EXISTS subject_rag_chunks (
  id INTEGER PRIMARY KEY,
  subject_path TEXT NOT NULL,
  source TEXT NOT NULL,
  ordinal INTEGER NOT NULL,
  line INTEGER NOT NULL,
  topic TEXT,
  tick TEXT,
  time TEXT,
  text TEXT NOT NULL,
  content TEXT NOT NULL,
  vector BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS subject_rag_chunks_source
  ON subject_rag_chunks (subject_path, source, ordinal);
";

/// One chunk to index: where it came from, what is shown, what is embedded.
#[derive(Clone, Debug, PartialEq)]
pub struct Chunk {
    pub line: usize,
    pub topic: Option<String>,
    pub tick: Option<String>,
    pub time: Option<String>,
    /// Shown in results.
    pub text: String,
    /// Embedded (for memory: topic and aliases, then the view).
    pub content: String,
}

/// The chunks of one source file's text.
pub fn chunks(source: Source, text: &str, display: &str) -> Result<Vec<Chunk>, SubjectError> {
    let mut out = Vec::new();
    match source {
        Source::Events => {
            for ev in events::parse(text, display)? {
                for piece in split_chars(&ev.text, MAX_CHUNK_CHARS) {
                    out.push(Chunk {
                        line: ev.line,
                        topic: None,
                        tick: ev.tick.clone(),
                        time: ev.time.clone(),
                        content: piece.clone(),
                        text: piece,
                    });
                }
            }
        }
        Source::Memory => {
            let items = memory::parse(text, display)?;
            // Line numbers of the non-blank lines, in order (parse skips blank lines).
            let lines: Vec<usize> = text
                .lines()
                .enumerate()
                .filter(|(_, l)| !l.trim().is_empty())
                .map(|(i, _)| i + 1)
                .collect();
            for (n, item) in items.iter().enumerate() {
                let header = memory::header(item);
                let view = item
                    .get("view")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or_default();
                let budget = MAX_CHUNK_CHARS
                    .saturating_sub(header.chars().count() + 1)
                    .max(200);
                let topic = item
                    .get("topic")
                    .and_then(serde_json::Value::as_str)
                    .map(|t| t.trim().to_string());
                for piece in split_chars(view, budget) {
                    let content = format!("{header} {piece}");
                    // A very long topic could push the header past the limit on its own.
                    let content = split_chars(&content, MAX_CHUNK_CHARS)
                        .into_iter()
                        .next()
                        .unwrap_or_default();
                    out.push(Chunk {
                        line: lines.get(n).copied().unwrap_or(0),
                        topic: topic.clone(),
                        tick: None,
                        time: None,
                        text: piece,
                        content,
                    });
                }
            }
        }
    }
    Ok(out)
}

/// One search result.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Hit {
    pub rank: usize,
    pub source: String,
    pub score: f32,
    pub line: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tick: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    pub text: String,
}

/// What a search did besides finding hits.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchReport {
    pub hits: Vec<Hit>,
    /// The source was rebuilt before searching.
    pub rebuilt: bool,
    /// Chunks embedded by the rebuild (reused vectors not counted).
    pub embedded: usize,
    /// Chunks the source has in the index.
    pub chunks: usize,
}

pub struct Index {
    conn: Connection,
    /// The file, as the key of the in-process vector cache.
    path: PathBuf,
    /// How the index file is named in messages (e.g. `.nbook/subject-rag.sqlite`).
    shown: String,
}

fn sql_err(shown: &str) -> impl Fn(rusqlite::Error) -> SubjectError + '_ {
    move |source| SubjectError::Index {
        shown: shown.to_string(),
        source,
    }
}

impl Index {
    /// Open (creating if needed) the index at `path`; `shown` names it in messages.
    pub fn open(path: &Path, shown: &str) -> Result<Index, SubjectError> {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|source| SubjectError::CreateDir {
                dir: parent.display().to_string(),
                source,
            })?;
        }
        let conn = Connection::open(path).map_err(sql_err(shown))?;
        let _ = conn.busy_timeout(Duration::from_secs(10));
        let _ = conn.pragma_update(None, "journal_mode", "WAL");
        let _ = conn.pragma_update(None, "synchronous", "NORMAL");
        conn.execute_batch(SCHEMA).map_err(sql_err(shown))?;
        let idx = Index {
            conn,
            path: path.to_path_buf(),
            shown: shown.to_string(),
        };
        match idx.meta("format")? {
            Some(f) if f == FORMAT => {}
            None if idx.is_empty()? => idx.set_meta("format", FORMAT)?,
            other => {
                return Err(SubjectError::IndexFormat {
                    shown: shown.to_string(),
                    format: other.unwrap_or_else(|| "unknown".into()),
                })
            }
        }
        Ok(idx)
    }

    fn is_empty(&self) -> Result<bool, SubjectError> {
        let n: i64 = self
            .conn
            .query_row(
                "SELECT (SELECT count(*) FROM subject_rag_meta) + (SELECT count(*) FROM subject_rag_chunks)",
                [],
                |r| r.get(0),
            )
            .map_err(sql_err(&self.shown))?;
        Ok(n == 0)
    }

    fn meta(&self, key: &str) -> Result<Option<String>, SubjectError> {
        self.conn
            .query_row(
                "SELECT value FROM subject_rag_meta WHERE key = ?1",
                [key],
                |r| r.get(0),
            )
            .optional()
            .map_err(sql_err(&self.shown))
    }

    fn set_meta(&self, key: &str, value: &str) -> Result<(), SubjectError> {
        self.conn
            .execute(
                "INSERT INTO subject_rag_meta (key, value) VALUES (?1, ?2)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                params![key, value],
            )
            .map(|_| ())
            .map_err(sql_err(&self.shown))
    }

    fn mismatch(&self, what: &str, stored: &str, now: &str) -> SubjectError {
        SubjectError::ModelMismatch {
            shown: self.shown.clone(),
            what: what.to_string(),
            stored: stored.to_string(),
            now: now.to_string(),
        }
    }

    /// Fail unless the index was built (or is empty and can be built) with this embedder.
    pub fn check_model(&self, emb: &dyn Embedder) -> Result<(), SubjectError> {
        for (key, now) in [("provider", emb.provider()), ("model", emb.model())] {
            match self.meta(key)? {
                Some(stored) if stored != now => return Err(self.mismatch(key, &stored, now)),
                Some(_) => {}
                None => self.set_meta(key, now)?,
            }
        }
        Ok(())
    }

    /// Record or check the dimensions of vectors the embedder returned.
    fn check_dims(&self, vectors: &[Vec<f32>]) -> Result<(), SubjectError> {
        let Some(first) = vectors.first() else {
            return Ok(());
        };
        if vectors
            .iter()
            .any(|v| v.len() != first.len() || v.is_empty())
        {
            return Err(SubjectError::MixedLengths);
        }
        let dims = first.len().to_string();
        match self.meta("dimensions")? {
            Some(stored) if stored != dims => Err(self.mismatch("dimensions", &stored, &dims)),
            Some(_) => Ok(()),
            None => self.set_meta("dimensions", &dims),
        }
    }

    fn stored_fingerprint(
        &self,
        subject: &str,
        source: Source,
    ) -> Result<Option<String>, SubjectError> {
        self.conn
            .query_row(
                "SELECT fingerprint FROM subject_rag_sources WHERE subject_path = ?1 AND source = ?2",
                params![subject, source.as_str()],
                |r| r.get(0),
            )
            .optional()
            .map_err(sql_err(&self.shown))
    }

    /// Vectors already stored for this source, by embedded content.
    fn known_vectors(
        &self,
        subject: &str,
        source: Source,
    ) -> Result<HashMap<String, Vec<u8>>, SubjectError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT content, vector FROM subject_rag_chunks WHERE subject_path = ?1 AND source = ?2",
            )
            .map_err(sql_err(&self.shown))?;
        let rows = stmt
            .query_map(params![subject, source.as_str()], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?))
            })
            .map_err(sql_err(&self.shown))?;
        let mut out = HashMap::new();
        for row in rows {
            let (c, v) = row.map_err(sql_err(&self.shown))?;
            out.insert(c, v);
        }
        Ok(out)
    }

    /// Replace the chunks of one source (one transaction). Returns how many were embedded.
    pub fn rebuild(
        &mut self,
        subject: &str,
        source: Source,
        fingerprint: &str,
        chunks: &[Chunk],
        emb: &dyn Embedder,
    ) -> Result<usize, SubjectError> {
        let mut known = self.known_vectors(subject, source)?;
        let mut queued = std::collections::HashSet::new();
        let missing: Vec<String> = chunks
            .iter()
            .filter(|c| !known.contains_key(&c.content) && queued.insert(c.content.as_str()))
            .map(|c| c.content.clone())
            .collect();
        for batch in missing.chunks(EMBED_BATCH) {
            let vectors = emb.embed(batch)?;
            if vectors.len() != batch.len() {
                return Err(SubjectError::VectorCount {
                    got: vectors.len(),
                    sent: batch.len(),
                });
            }
            self.check_dims(&vectors)?;
            for (text, v) in batch.iter().zip(vectors) {
                known.insert(text.clone(), to_blob(&v));
            }
        }
        let shown = self.shown.clone();
        let tx = self.conn.transaction().map_err(sql_err(&shown))?;
        tx.execute(
            "DELETE FROM subject_rag_chunks WHERE subject_path = ?1 AND source = ?2",
            params![subject, source.as_str()],
        )
        .map_err(sql_err(&shown))?;
        {
            let mut ins = tx
                .prepare(
                    "INSERT INTO subject_rag_chunks
                       (subject_path, source, ordinal, line, topic, tick, time, text, content, vector)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                )
                .map_err(sql_err(&shown))?;
            for (i, c) in chunks.iter().enumerate() {
                let vector = known.get(&c.content).cloned().unwrap_or_default();
                ins.execute(params![
                    subject,
                    source.as_str(),
                    i as i64,
                    c.line as i64,
                    c.topic,
                    c.tick,
                    c.time,
                    c.text,
                    c.content,
                    vector
                ])
                .map_err(sql_err(&shown))?;
            }
        }
        tx.execute(
            "INSERT INTO subject_rag_sources (subject_path, source, fingerprint, chunk_count, built_at, build)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT(subject_path, source) DO UPDATE SET
               fingerprint = excluded.fingerprint, chunk_count = excluded.chunk_count,
               built_at = excluded.built_at, build = excluded.build",
            params![
                subject,
                source.as_str(),
                fingerprint,
                chunks.len() as i64,
                now_rfc3339(),
                format!("{:016x}", rand::random::<u64>())
            ],
        )
        .map_err(sql_err(&shown))?;
        tx.commit().map_err(sql_err(&shown))?;
        Ok(missing.len())
    }

    /// Number of chunks stored for a source.
    pub fn chunk_count(&self, subject: &str, source: Source) -> Result<usize, SubjectError> {
        self.conn
            .query_row(
                "SELECT count(*) FROM subject_rag_chunks WHERE subject_path = ?1 AND source = ?2",
                params![subject, source.as_str()],
                |r| r.get::<_, i64>(0),
            )
            .map(|n| n as usize)
            .map_err(sql_err(&self.shown))
    }

    /// Top `limit` chunks of a source by cosine similarity to `query`, best first.
    ///
    /// The source's vectors are kept decoded and normalised in an in-process cache, keyed by
    /// the index file, subject and source, and validated against the source's build stamp
    /// inside the same read transaction that fetches the hits: a rebuild by this or another
    /// process changes the stamp, so the cache is never used stale.
    pub fn top(
        &self,
        subject: &str,
        source: Source,
        query: &[f32],
        limit: usize,
    ) -> Result<Vec<Hit>, SubjectError> {
        let shown = self.shown.as_str();
        let tx = self.conn.unchecked_transaction().map_err(sql_err(shown))?;
        let stamp: Option<String> = tx
            .query_row(
                "SELECT fingerprint || '|' || build || '|' || chunk_count FROM subject_rag_sources
                 WHERE subject_path = ?1 AND source = ?2",
                params![subject, source.as_str()],
                |r| r.get(0),
            )
            .optional()
            .map_err(sql_err(shown))?;
        let Some(stamp) = stamp else {
            return Ok(Vec::new());
        };
        let key = (self.path.clone(), subject.to_string(), source);
        let vectors = match vectors::lookup(&key, &stamp, query.len()) {
            Some(c) => c,
            None => {
                let c = Arc::new(self.load_vectors(subject, source, stamp, query.len())?);
                remember(key, c.clone());
                c
            }
        };
        let q = normalised(query);
        let mut scored: Vec<(f32, i64)> = vectors
            .ids
            .iter()
            .zip(vectors.data.chunks_exact(vectors.dims.max(1)))
            .map(|(id, v)| (dot(&q, v), *id))
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        scored.truncate(limit);
        let mut stmt = tx
            .prepare_cached(
                "SELECT line, topic, tick, time, text FROM subject_rag_chunks WHERE id = ?1",
            )
            .map_err(sql_err(shown))?;
        let mut hits = Vec::new();
        for (i, (score, id)) in scored.into_iter().enumerate() {
            let hit = stmt
                .query_row([id], |r| {
                    Ok(Hit {
                        rank: i + 1,
                        source: source.as_str().to_string(),
                        score,
                        line: r.get::<_, i64>(0)? as usize,
                        topic: r.get(1)?,
                        tick: r.get(2)?,
                        time: r.get(3)?,
                        text: r.get(4)?,
                    })
                })
                .map_err(sql_err(shown))?;
            hits.push(hit);
        }
        Ok(hits)
    }

    /// Read and normalise every vector of a source (vectors of another length are skipped).
    fn load_vectors(
        &self,
        subject: &str,
        source: Source,
        stamp: String,
        dims: usize,
    ) -> Result<Cached, SubjectError> {
        let shown = self.shown.as_str();
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id, vector FROM subject_rag_chunks WHERE subject_path = ?1 AND source = ?2",
            )
            .map_err(sql_err(shown))?;
        let mut rows = stmt
            .query(params![subject, source.as_str()])
            .map_err(sql_err(shown))?;
        let mut out = Cached {
            stamp,
            dims,
            ids: Vec::new(),
            data: Vec::new(),
        };
        let mut buf: Vec<f32> = Vec::with_capacity(dims);
        while let Some(row) = rows.next().map_err(sql_err(shown))? {
            let id: i64 = row.get(0).map_err(sql_err(shown))?;
            let blob = row.get_ref(1).map_err(sql_err(shown))?;
            decode_into(blob.as_blob().unwrap_or(&[]), &mut buf);
            if buf.len() != dims {
                continue;
            }
            out.ids.push(id);
            out.data.extend(normalised(&buf));
        }
        Ok(out)
    }
}

/// Bring `source` of `subject` up to date in its project's index, then return the `limit`
/// chunks closest to `query`.
pub fn search(
    ws: &Workspace,
    subject: &Subject,
    source: Source,
    query: &str,
    limit: usize,
    emb: &dyn Embedder,
) -> Result<SearchReport, SubjectError> {
    let file = subject.source_file(ws, source, Access::Read)?;
    let mut index = Index::open(&subject.index_path(), &subject.index_display())?;
    index.check_model(emb)?;
    let mut report = SearchReport::default();

    // Read the mark and the file together, so a mark made after this read survives the clear.
    let (mark, text) = {
        let _guard = io_lock();
        (
            dirty::marked(&subject.dirty_path(), subject.key(), source),
            read_source(&file.abs, &file.display)?,
        )
    };
    let fingerprint = content_fingerprint(text.as_deref());
    let stored = index.stored_fingerprint(subject.key(), source)?;
    if mark.is_some() || stored.as_deref() != Some(fingerprint.as_str()) {
        let chunks = chunks(source, text.as_deref().unwrap_or_default(), &file.display)?;
        report.embedded = index.rebuild(subject.key(), source, &fingerprint, &chunks, emb)?;
        report.rebuilt = true;
        if let Some(seen) = mark {
            let _guard = io_lock();
            dirty::clear(&subject.dirty_path(), subject.key(), source, &seen)?;
        }
    }
    report.chunks = index.chunk_count(subject.key(), source)?;
    if report.chunks == 0 {
        return Ok(report);
    }
    let q = emb.embed(&[query.to_string()])?;
    index.check_dims(&q)?;
    let Some(qv) = q.first() else {
        return Err(SubjectError::NoQueryVector);
    };
    report.hits = index.top(subject.key(), source, qv, limit)?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A deterministic bag-of-letters embedder, counting what it embeds.
    struct Letters {
        model: &'static str,
        calls: Cell<usize>,
        texts: Cell<usize>,
    }

    impl Embedder for Letters {
        fn provider(&self) -> &str {
            "test"
        }
        fn model(&self) -> &str {
            self.model
        }
        fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, crate::net::embed::EmbedError> {
            self.calls.set(self.calls.get() + 1);
            self.texts.set(self.texts.get() + texts.len());
            Ok(texts
                .iter()
                .map(|t| {
                    let mut v = vec![0f32; 26];
                    for c in t.to_lowercase().chars() {
                        if c.is_ascii_lowercase() {
                            v[(c as u8 - b'a') as usize] += 1.0;
                        }
                    }
                    v
                })
                .collect())
        }
    }

    fn letters(model: &'static str) -> Letters {
        Letters {
            model,
            calls: Cell::new(0),
            texts: Cell::new(0),
        }
    }

    #[test]
    fn memory_chunks_stay_under_the_limit() {
        let long = "word ".repeat(1000);
        let text = format!(
            "{{\"topic\":\"t\",\"view\":\"{long}\"}}\n\n{{\"topic\":\"u\",\"aliases\":[\"you\"],\"view\":\"short\"}}\n"
        );
        let c = chunks(Source::Memory, &text, "m").unwrap();
        assert!(c.len() > 4);
        assert!(c
            .iter()
            .all(|c| c.content.chars().count() <= MAX_CHUNK_CHARS));
        let last = c.last().unwrap();
        assert_eq!(last.line, 3);
        assert_eq!(last.content, "u (you): short");
        assert_eq!(last.topic.as_deref(), Some("u"));
    }

    #[test]
    fn rebuild_reuses_vectors_and_model_changes_fail() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("i.sqlite");
        let emb = letters("a");
        let mut idx = Index::open(&path, "i").unwrap();
        idx.check_model(&emb).unwrap();
        let c = chunks(
            Source::Events,
            "{\"text\":\"zzz\"}\n{\"text\":\"aaa\"}\n",
            "e",
        )
        .unwrap();
        assert_eq!(idx.rebuild("s", Source::Events, "f1", &c, &emb).unwrap(), 2);
        let c2 = chunks(
            Source::Events,
            "{\"text\":\"zzz\"}\n{\"text\":\"aaa\"}\n{\"tick\":4,\"text\":\"bbb\"}\n",
            "e",
        )
        .unwrap();
        assert_eq!(
            idx.rebuild("s", Source::Events, "f2", &c2, &emb).unwrap(),
            1
        );
        let q = emb.embed(&["b".into()]).unwrap();
        let hits = idx.top("s", Source::Events, &q[0], 2).unwrap();
        assert_eq!(hits[0].text, "bbb");
        assert_eq!(hits[0].tick.as_deref(), Some("4"));
        assert_eq!(hits[0].line, 3);
        drop(idx);
        let idx = Index::open(&path, ".nbook/subject-rag.sqlite").unwrap();
        let e = idx.check_model(&letters("b")).unwrap_err();
        assert!(
            matches!(&e, SubjectError::ModelMismatch { what, stored, now, .. } if what == "model" && stored == "a" && now == "b"),
            "{e:?}"
        );
        let e = e.to_string();
        assert!(
            e.contains("model \"a\"") && e.contains("Delete .nbook/subject-rag.sqlite"),
            "{e}"
        );
        let e = idx.check_dims(&[vec![1.0; 3]]).unwrap_err().to_string();
        assert!(e.contains("dimensions \"26\""), "{e}");
    }

    #[test]
    fn cached_vectors_follow_a_rebuild_by_another_connection() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("i.sqlite");
        let emb = letters("a");
        let mut writer = Index::open(&path, "i").unwrap();
        let reader = Index::open(&path, "i").unwrap();
        let c = chunks(Source::Events, "{\"text\":\"zzz\"}\n", "e").unwrap();
        writer.rebuild("s", Source::Events, "f1", &c, &emb).unwrap();
        let q = emb.embed(&["q".into()]).unwrap().remove(0);
        assert_eq!(
            reader.top("s", Source::Events, &q, 5).unwrap()[0].text,
            "zzz"
        );
        let c = chunks(
            Source::Events,
            "{\"text\":\"qqq\"}\n{\"text\":\"zzz\"}\n",
            "e",
        )
        .unwrap();
        writer.rebuild("s", Source::Events, "f2", &c, &emb).unwrap();
        let hits = reader.top("s", Source::Events, &q, 5).unwrap();
        assert_eq!(hits.len(), 2);
        assert_eq!(hits[0].text, "qqq");
        assert!((hits[0].score - 1.0).abs() < 1e-5);
        assert!(reader.top("t", Source::Events, &q, 5).unwrap().is_empty());
    }

    #[test]
    fn foreign_index_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("i.sqlite");
        let c = Connection::open(&path).unwrap();
        c.execute_batch("CREATE TABLE subject_rag_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL); INSERT INTO subject_rag_meta VALUES ('embeddingModel', 'x');").unwrap();
        drop(c);
        let e = Index::open(&path, "i").err().unwrap();
        assert!(
            matches!(&e, SubjectError::IndexFormat { shown, .. } if shown == "i"),
            "{e:?}"
        );
        let e = e.to_string();
        assert!(
            e.contains("another program") && e.contains("delete it"),
            "{e}"
        );
    }
}
