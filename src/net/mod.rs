//! Shared network infrastructure for the synchronous code that talks HTTP — the web tools,
//! and the embedding client behind `world.search.text` and subject memory: one runtime every
//! request runs on ([`runtime`]), one HTTP client ([`http`]), and the OpenAI-compatible
//! embedding client ([`embed`]). Nothing here knows about the engine or the tools.

pub mod embed;
pub mod http;
pub mod runtime;
