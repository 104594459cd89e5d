//! Agent sessions: the provider trait, the replay provider, and the agent loop.
