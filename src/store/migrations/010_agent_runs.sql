-- Heartbeat runs of durable agents (src/runner/heartbeat.rs, src/board/agent_runs.rs): one row
-- per wake of an agent — why it woke, the session it ran in, how it ended and the summary it
-- gave with fn_heartbeat_done (or the end of its turn).

CREATE TABLE IF NOT EXISTS nbook_agent_run (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  agent_id    TEXT NOT NULL,
  reason      TEXT NOT NULL,            -- timer | assignment | message | manual
  trigger     TEXT,                     -- the tasks of an assignment wake, comma-separated
  session_id  TEXT,
  started_at  TEXT NOT NULL,            -- RFC 3339
  started_ms  INTEGER NOT NULL,         -- the same instant, ms since the epoch (the timer's base)
  ended_at    TEXT,
  status      TEXT NOT NULL,            -- running | done | timed-out | failed | cancelled
  summary     TEXT
);
CREATE INDEX IF NOT EXISTS nbook_agent_run_agent ON nbook_agent_run (agent_id, id);
