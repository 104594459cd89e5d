-- Agent evaluations (issue #17, "Durable agents" part 2; Fusion's `agent_ratings`): one row
-- per rating of an agent, 1 to 5, by the author (rater_type user) or by another agent. The
-- agent is an id string — a permanent agent's profile key today (`writer`, `executor`, …),
-- a durable agent's id when there is one — so new kinds of agents plug in without a change
-- here. A rating of a session's run is stored against the session's agent with run_id = the
-- session id. Reflections are files (`.nbook/agents/<agent>-reflections.jsonl`), not rows.

CREATE TABLE IF NOT EXISTS nbook_agent_rating (
  id          INTEGER PRIMARY KEY,
  agent_id    TEXT NOT NULL,
  rater_type  TEXT NOT NULL CHECK (rater_type IN ('user', 'agent')),
  rater_id    TEXT NOT NULL,
  score       INTEGER NOT NULL CHECK (score BETWEEN 1 AND 5),
  category    TEXT,
  comment     TEXT,
  run_id      TEXT,
  task_id     TEXT,
  created_at  TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS nbook_agent_rating_agent ON nbook_agent_rating (agent_id, id);
