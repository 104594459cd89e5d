//! The engine's public vocabulary. The types live in the leaf [`crate::protocol`] module, so
//! the layers below the engine (plot, world, subject) can share them without importing the
//! engine; this re-export keeps `crate::engine::types::…` paths working.

pub use crate::protocol::*;
