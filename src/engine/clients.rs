//! Sessions of outside clients (an MCP client such as Claude Code): an engine session like an
//! agent's, titled and marked with the client's own name, so the Sessions pane shows who is
//! calling and the Approvals pane names it beside each of its pending calls. The mark is a
//! custom-state record in the session log, so it survives a restart.

use super::*;

/// The session-state key that names the outside client of a session.
pub const CLIENT_STATE_KEY: &str = "mcp.client";

impl Engine {
    /// A new session in `normal` mode for the outside client `client` (its `clientInfo.name`),
    /// with profile `profile_key`. The client's calls go through the same gate as an agent's.
    pub fn create_client_session(
        &self,
        profile_key: &str,
        client: &str,
    ) -> Result<SessionInfo, EngineError> {
        let info = self.create_session(profile_key, Mode::Normal, client, None)?;
        self.set_session_state(
            &info.id,
            vec![(CLIENT_STATE_KEY.to_string(), serde_json::json!(client))],
        )?;
        self.update_session(&info.id, |s| s.client = Some(client.to_string()));
        Ok(self.session(&info.id).unwrap_or(info))
    }
}
