//! Embedding vectors for the subject index: the [`Embedder`] seam and the configured
//! OpenAI-compatible service behind it (`crate::net::embed`), the BLOB encoding of vectors
//! (little-endian f32), similarity, and the in-process cache of a source's normalised vectors.
//!
//! The cache is keyed by index file, subject and source and holds the build stamp the vectors
//! were read under; the index validates that stamp in the same read transaction before using
//! an entry, so a rebuild by this or another process is never answered from stale vectors.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use super::Source;

/// Something that turns texts into vectors, named by provider and model.
pub trait Embedder {
    fn provider(&self) -> &str;
    fn model(&self) -> &str;
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, crate::net::embed::EmbedError>;
}

/// The embedding service of the config (`[embedding]` + `[providers.X]`).
pub struct ConfiguredEmbedder {
    provider: String,
    cfg: crate::net::embed::EmbedConfig,
    timeout: Duration,
}

impl ConfiguredEmbedder {
    /// The configured service, or why there is none, saying what to configure (no keyword
    /// fallback).
    pub fn from_config(
        config: &crate::config::Config,
    ) -> Result<ConfiguredEmbedder, crate::net::embed::EmbedError> {
        let cfg = crate::net::embed::EmbedConfig::from_config(config, "subject_rag_search")?;
        let provider = config
            .embedding
            .as_ref()
            .map(|e| e.provider.clone())
            .unwrap_or_default();
        Ok(ConfiguredEmbedder {
            provider,
            cfg,
            timeout: Duration::from_secs(120),
        })
    }
}

impl Embedder for ConfiguredEmbedder {
    fn provider(&self) -> &str {
        &self.provider
    }
    fn model(&self) -> &str {
        &self.cfg.model
    }
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, crate::net::embed::EmbedError> {
        self.cfg.embed(texts, self.timeout)
    }
}

pub fn to_blob(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Decode a vector BLOB into `out` (cleared first), reusing its allocation.
pub fn decode_into(b: &[u8], out: &mut Vec<f32>) {
    out.clear();
    out.extend(
        b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])),
    );
}

/// Cosine similarity; 0 when either vector is zero.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (mut dot, mut na, mut nb) = (0f32, 0f32, 0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

/// A source's vectors, decoded and normalised, with the build stamp they were read under.
pub struct Cached {
    pub stamp: String,
    pub dims: usize,
    pub ids: Vec<i64>,
    /// `ids.len() * dims` floats, row after row.
    pub data: Vec<f32>,
}

pub type CacheKey = (PathBuf, String, Source);

/// Most floats the cache holds (64 MB); past it, other entries are dropped.
const CACHE_FLOATS: usize = 16 << 20;

fn lock_cache() -> MutexGuard<'static, HashMap<CacheKey, Arc<Cached>>> {
    static CACHE: OnceLock<Mutex<HashMap<CacheKey, Arc<Cached>>>> = OnceLock::new();
    CACHE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

pub fn remember(key: CacheKey, entry: Arc<Cached>) {
    if entry.data.len() > CACHE_FLOATS {
        return;
    }
    let mut cache = lock_cache();
    cache.remove(&key);
    let mut total: usize = cache.values().map(|c| c.data.len()).sum();
    while total + entry.data.len() > CACHE_FLOATS {
        let Some(k) = cache.keys().next().cloned() else {
            break;
        };
        if let Some(old) = cache.remove(&k) {
            total -= old.data.len();
        }
    }
    cache.insert(key, entry);
}

pub fn normalised(v: &[f32]) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n == 0.0 {
        vec![0.0; v.len()]
    } else {
        v.iter().map(|x| x / n).collect()
    }
}

pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    // Eight independent accumulators let the compiler vectorise the loop.
    let mut acc = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for k in 0..8 {
            acc[k] += x[k] * y[k];
        }
    }
    let tail: f32 = ra.iter().zip(rb).map(|(x, y)| x * y).sum();
    acc.iter().sum::<f32>() + tail
}

/// The cached vectors for `key`, if they were read under `stamp` with `dims` dimensions.
pub fn lookup(key: &CacheKey, stamp: &str, dims: usize) -> Option<Arc<Cached>> {
    lock_cache()
        .get(key)
        .filter(|c| c.stamp == stamp && c.dims == dims)
        .cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_round_trip_and_similarity_is_cosine() {
        let mut v = vec![9.0];
        decode_into(&to_blob(&[1.5, -2.0]), &mut v);
        assert_eq!(v, vec![1.5, -2.0]);
        assert!((cosine(&[1.0, 0.0], &[1.0, 0.0]) - 1.0).abs() < 1e-6);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
        let a: Vec<f32> = (0..19).map(|i| i as f32 - 4.0).collect();
        let b: Vec<f32> = (0..19).map(|i| (i * i) as f32 * 0.1).collect();
        let (na, nb) = (normalised(&a), normalised(&b));
        assert!((dot(&na, &nb) - cosine(&a, &b)).abs() < 1e-5);
    }
}
