-- Durable agents (src/board/agents.rs; fusion-notes §2.5, §5 "Agents" and the Addendum
-- "Agent provisioning"): permanent agents with an identity (soul, instructions, memory), a
-- manager (reports_to) and a runtime config, created and deleted only through the author's
-- approval. Every edit archives the config it replaces in nbook_board_agent_revision.

CREATE TABLE IF NOT EXISTS nbook_board_agent (
  seq                      INTEGER PRIMARY KEY AUTOINCREMENT, -- never reused: agent-<seq>
  id                       TEXT NOT NULL UNIQUE,               -- agent-001, agent-002, …
  name                     TEXT NOT NULL,
  role                     TEXT NOT NULL,                      -- triage | executor | reviewer | merger | engineer | custom
  reports_to               TEXT NOT NULL,                      -- an agent id or dashboard (the author)
  soul                     TEXT NOT NULL DEFAULT '',
  instructions_text        TEXT NOT NULL DEFAULT '',
  instructions_path        TEXT,                               -- project-relative
  heartbeat_procedure_path TEXT,                               -- project-relative
  memory                   TEXT NOT NULL DEFAULT '',
  runtime_config           TEXT NOT NULL DEFAULT '{}',         -- JSON {heartbeatIntervalMs, heartbeatTimeoutMs, maxConcurrentRuns, messageResponseMode}
  revision                 INTEGER NOT NULL DEFAULT 1,
  created_by               TEXT,
  created_at               TEXT NOT NULL,
  updated_at               TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS nbook_board_agent_reports_to ON nbook_board_agent (reports_to);

CREATE TABLE IF NOT EXISTS nbook_board_agent_revision (
  seq         INTEGER PRIMARY KEY,
  agent_id    TEXT NOT NULL,
  revision    INTEGER NOT NULL,                -- the revision this config was
  config      TEXT NOT NULL,                   -- JSON: the whole agent record before the change
  change      TEXT NOT NULL,                   -- config | identity | delete
  actor       TEXT,
  created_at  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS nbook_board_agent_revision_agent ON nbook_board_agent_revision (agent_id, seq);
