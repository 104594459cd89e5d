-- Fusion's research runs (src/board/research.rs; fusion-notes §2.4 and §5 "Research runs"):
-- one row per fn_research_run call. The run itself is a background job in the engine's job
-- store (`job_id`); this row is its durable record and what fn_research_list / get read.

CREATE TABLE IF NOT EXISTS nbook_research_run (
  seq          INTEGER PRIMARY KEY,             -- order (newest = highest)
  id           TEXT NOT NULL UNIQUE,            -- RR-001, RR-002, …
  query        TEXT NOT NULL,
  status       TEXT NOT NULL,                   -- pending | running | completed | failed | cancelled
  trigger      TEXT NOT NULL,                   -- who started it: "<profile> (session <id>)"
  session_id   TEXT,                            -- the session that called fn_research_run
  job_id       TEXT,                            -- the engine job that runs it (job-N)
  sources      TEXT NOT NULL DEFAULT '[]',      -- JSON [{url, title, snippet, status, error?, chars?}]
  events       TEXT NOT NULL DEFAULT '[]',      -- JSON [{at, type, message}]
  results      TEXT,                            -- JSON {summary, findings[{text, citations}], citations[{url, title}]}
  error        TEXT,
  token_usage  TEXT NOT NULL DEFAULT '{}',      -- JSON {inputTokens, outputTokens, totalTokens}
  tags         TEXT NOT NULL DEFAULT '[]',      -- JSON array of strings
  created_at   TEXT NOT NULL,
  started_at   TEXT,
  finished_at  TEXT
);
CREATE INDEX IF NOT EXISTS nbook_research_run_status ON nbook_research_run (status, seq);
