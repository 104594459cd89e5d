//! `nbook mcp --print-config CLIENT`: the snippet that registers nbook with an MCP client,
//! and the line that lets the client run nbook's tools without asking — the author already
//! approves every change in nbook, so asking twice only trains people to click through.

use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Client {
    Claude,
    Codex,
    Opencode,
}

fn quoted(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

/// The snippet for `client`, starting `exe` (this nbook) on `project`.
pub fn snippet(client: Client, exe: &Path, project: &Path) -> String {
    let exe = exe.display().to_string();
    let project = project.display().to_string();
    let (qe, qp) = (quoted(&exe), quoted(&project));
    match client {
        Client::Claude => format!(
            "# Claude Code: register nbook (project scope writes .mcp.json; or add this to it by hand)\n\
claude mcp add --scope project nbook -- {exe} mcp --project {project}\n\
\n\
# .mcp.json\n\
{{\n  \"mcpServers\": {{\n    \"nbook\": {{ \"type\": \"stdio\", \"command\": {qe}, \"args\": [\"mcp\", \"--project\", {qp}] }}\n  }}\n}}\n\
\n\
# .claude/settings.json: let nbook's tools run without a second prompt (the author approves in nbook)\n\
{{ \"permissions\": {{ \"allow\": [\"mcp__nbook\"] }} }}\n"
        ),
        Client::Codex => format!(
            "# Codex CLI: ~/.codex/config.toml\n\
[mcp_servers.nbook]\n\
command = {qe}\n\
args = [\"mcp\", \"--project\", {qp}]\n\
# nbook's tool calls wait for the author's approval in nbook; do not ask a second time\n\
default_tools_approval_mode = \"approve\"\n"
        ),
        Client::Opencode => format!(
            "// opencode: opencode.json in the project (or ~/.config/opencode/opencode.json)\n\
{{\n  \"$schema\": \"https://opencode.ai/config.json\",\n  \"mcp\": {{\n    \"nbook\": {{ \"type\": \"local\", \"command\": [{qe}, \"mcp\", \"--project\", {qp}], \"enabled\": true }}\n  }},\n  \"permission\": {{ \"nbook_*\": \"allow\" }}\n}}\n"
        ),
    }
}
