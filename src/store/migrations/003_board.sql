-- nbook's own tables for Fusion's production board (src/board/). NeuroBook ignores every
-- table it does not know, so these live beside its tables in project.sqlite; the `nbook_`
-- prefix keeps them apart from NeuroBook's PascalCase names.

CREATE TABLE IF NOT EXISTS nbook_board_task (
  id            TEXT PRIMARY KEY,              -- NB-001, NB-002, …
  seq           INTEGER NOT NULL UNIQUE,       -- the number in the id, for allocation and order
  title         TEXT NOT NULL,
  description   TEXT NOT NULL,
  column_id     TEXT NOT NULL,                 -- a column of the task's workflow
  status        TEXT NOT NULL DEFAULT '',      -- free sub-status (failed, needs-replan, …)
  priority      TEXT NOT NULL DEFAULT 'normal',
  workflow_id   TEXT NOT NULL DEFAULT 'builtin:chapter',
  dependencies  TEXT NOT NULL DEFAULT '[]',    -- JSON array of task ids
  steps         TEXT NOT NULL DEFAULT '[]',    -- JSON [{name, status}]
  custom_fields TEXT NOT NULL DEFAULT '{}',    -- JSON object keyed by field id
  blocked_by    TEXT NOT NULL DEFAULT '[]',    -- JSON array of task ids
  blocked_reason TEXT,                         -- "BLOCKED: <reason>"
  file_scope    TEXT NOT NULL DEFAULT '[]',    -- JSON array of project-relative paths/globs
  prompt        TEXT,                          -- PROMPT.md (mirrored to .nbook/tasks/<ID>/)
  summary       TEXT,
  revision      INTEGER NOT NULL DEFAULT 1,    -- bumped by every change: the stale check
  created_at    TEXT NOT NULL,
  updated_at    TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS nbook_board_task_column ON nbook_board_task (column_id, seq);

CREATE TABLE IF NOT EXISTS nbook_board_task_log (
  id       INTEGER PRIMARY KEY,
  task_id  TEXT NOT NULL REFERENCES nbook_board_task (id) ON DELETE CASCADE,
  at       TEXT NOT NULL,
  action   TEXT NOT NULL,
  outcome  TEXT,
  actor    TEXT
);
CREATE INDEX IF NOT EXISTS nbook_board_task_log_task ON nbook_board_task_log (task_id, id);

CREATE TABLE IF NOT EXISTS nbook_board_document (
  task_id      TEXT NOT NULL REFERENCES nbook_board_task (id) ON DELETE CASCADE,
  key          TEXT NOT NULL,
  content      TEXT NOT NULL,
  revision     INTEGER NOT NULL,
  content_hash TEXT NOT NULL,                  -- sha256:<64 lowercase hex> of the UTF-8 bytes
  author       TEXT NOT NULL,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL,
  PRIMARY KEY (task_id, key)
);

-- Every write keeps the revision it replaces here.
CREATE TABLE IF NOT EXISTS nbook_board_document_revision (
  task_id      TEXT NOT NULL,
  key          TEXT NOT NULL,
  revision     INTEGER NOT NULL,
  content      TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  author       TEXT NOT NULL,
  written_at   TEXT NOT NULL,
  PRIMARY KEY (task_id, key, revision),
  FOREIGN KEY (task_id, key) REFERENCES nbook_board_document (task_id, key) ON DELETE CASCADE
);

CREATE TABLE IF NOT EXISTS nbook_board_goal (
  id          TEXT PRIMARY KEY,                -- G-001, …
  seq         INTEGER NOT NULL UNIQUE,
  title       TEXT NOT NULL,
  description TEXT NOT NULL DEFAULT '',
  status      TEXT NOT NULL DEFAULT 'active',  -- active | archived
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);
