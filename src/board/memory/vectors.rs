//! Embedding vectors of memory windows, keyed by the embedding model and the sha256 of the
//! window's text: a fact that never goes stale (the same text under the same model has the same
//! vector), so a window edited by anyone simply has a new key. Kept in
//! `.nbook/memory-vectors.sqlite` (derived data: deleting it only costs re-embedding) and in an
//! in-process map, so a search over notes seen before embeds only the query.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use rusqlite::{params, Connection, OptionalExtension};

use crate::subject::vectors::{decode_into, normalised, to_blob, Embedder};

pub const VECTORS_FILE: &str = "memory-vectors.sqlite";
/// Windows embedded per request to the service.
const BATCH: usize = 64;

pub type Key = [u8; 32];

pub fn key_of(text: &str) -> Key {
    let d = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    let mut k = [0u8; 32];
    k.copy_from_slice(d.as_ref());
    k
}

#[derive(Debug, thiserror::Error)]
pub enum VectorError {
    #[error(transparent)]
    Embed(#[from] crate::net::embed::EmbedError),
    #[error("the memory vector store {path}: {source}")]
    Db {
        path: String,
        #[source]
        source: rusqlite::Error,
    },
    #[error("the embedding service returned {got} vectors for {sent} texts")]
    Count { got: usize, sent: usize },
    #[error(
        "the embedding service returned vectors of {got} dimensions where earlier ones had {want}"
    )]
    Dims { got: usize, want: usize },
}

type Map = HashMap<Key, Arc<Vec<f32>>>;

fn lock_cache() -> MutexGuard<'static, HashMap<(PathBuf, String), Map>> {
    static CACHE: OnceLock<Mutex<HashMap<(PathBuf, String), Map>>> = OnceLock::new();
    CACHE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// The vector store of one project's `.nbook/` for one model.
pub struct Store {
    db: PathBuf,
    model: String,
}

impl Store {
    pub fn new(nbook_dir: &Path, model: &str) -> Store {
        Store {
            db: nbook_dir.join(VECTORS_FILE),
            model: model.to_string(),
        }
    }

    fn open(&self) -> Result<Connection, VectorError> {
        let err = |source| VectorError::Db {
            path: self.db.display().to_string(),
            source,
        };
        let c = Connection::open(&self.db).map_err(err)?;
        c.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(err)?;
        c.execute_batch(
            "CREATE TABLE IF NOT EXISTS memory_vectors (
               model TEXT NOT NULL, hash BLOB NOT NULL, vector BLOB NOT NULL,
               PRIMARY KEY (model, hash))",
        )
        .map_err(err)?;
        Ok(c)
    }

    /// Normalised vectors for `texts` (same order): from the cache, then the store, then the
    /// embedder for the rest (stored for next time).
    pub fn vectors(
        &self,
        emb: &dyn Embedder,
        texts: &[&str],
    ) -> Result<Vec<Arc<Vec<f32>>>, VectorError> {
        let keys: Vec<Key> = texts.iter().map(|t| key_of(t)).collect();
        let ck = (self.db.clone(), self.model.clone());
        let mut found: Vec<Option<Arc<Vec<f32>>>> = {
            let cache = lock_cache();
            let m = cache.get(&ck);
            keys.iter()
                .map(|k| m.and_then(|m| m.get(k)).cloned())
                .collect()
        };
        if found.iter().all(Option::is_some) {
            return Ok(found.into_iter().flatten().collect());
        }
        let conn = self.open()?;
        let dberr = |source| VectorError::Db {
            path: self.db.display().to_string(),
            source,
        };
        let mut fresh: Vec<(Key, Arc<Vec<f32>>)> = Vec::new();
        {
            let mut q = conn
                .prepare_cached("SELECT vector FROM memory_vectors WHERE model = ?1 AND hash = ?2")
                .map_err(dberr)?;
            for (i, k) in keys.iter().enumerate() {
                if found[i].is_some() {
                    continue;
                }
                let blob: Option<Vec<u8>> = q
                    .query_row(params![self.model, &k[..]], |r| r.get(0))
                    .optional()
                    .map_err(dberr)?;
                if let Some(b) = blob {
                    let mut v = Vec::new();
                    decode_into(&b, &mut v);
                    let v = Arc::new(v);
                    found[i] = Some(v.clone());
                    fresh.push((*k, v));
                }
            }
        }
        let missing: Vec<usize> = (0..texts.len()).filter(|&i| found[i].is_none()).collect();
        let mut dims = found.iter().flatten().map(|v| v.len()).next();
        for batch in missing.chunks(BATCH) {
            let inputs: Vec<String> = batch.iter().map(|&i| texts[i].to_string()).collect();
            let got = emb.embed(&inputs)?;
            if got.len() != inputs.len() {
                return Err(VectorError::Count {
                    got: got.len(),
                    sent: inputs.len(),
                });
            }
            let mut ins = conn
                .prepare_cached(
                    "INSERT OR REPLACE INTO memory_vectors (model, hash, vector) VALUES (?1, ?2, ?3)",
                )
                .map_err(dberr)?;
            for (&i, v) in batch.iter().zip(got) {
                let want = *dims.get_or_insert(v.len());
                if v.len() != want {
                    return Err(VectorError::Dims { got: v.len(), want });
                }
                let v = Arc::new(normalised(&v));
                ins.execute(params![self.model, &keys[i][..], to_blob(&v)])
                    .map_err(dberr)?;
                found[i] = Some(v.clone());
                fresh.push((keys[i], v));
            }
        }
        let mut cache = lock_cache();
        let m = cache.entry(ck).or_default();
        for (k, v) in fresh {
            m.insert(k, v);
        }
        Ok(found.into_iter().flatten().collect())
    }
}
