-- Custom board workflows and workflow setting values (issue #17). Built-in workflows
-- (builtin:chapter) are constants of the build and never stored here; their setting *values*
-- are (a book tunes the built-in). A task's workflow selection is its
-- nbook_board_task.workflow_id; selections, settings and workflow edits are recorded in
-- nbook_board_config_revision with the actor that made them.

CREATE TABLE IF NOT EXISTS nbook_board_workflow (
  id           TEXT PRIMARY KEY,               -- WF-001, WF-002, …
  seq          INTEGER NOT NULL UNIQUE,
  name         TEXT NOT NULL,
  description  TEXT NOT NULL DEFAULT '',
  icon         TEXT,
  ir           TEXT NOT NULL,                  -- JSON: the validated, normalized IR v2
  layout       TEXT,                           -- JSON: the editor's node positions, opaque
  revision     INTEGER NOT NULL DEFAULT 1,
  created_at   TEXT NOT NULL,
  updated_at   TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS nbook_board_workflow_settings (
  workflow_id  TEXT PRIMARY KEY,               -- a custom workflow's id or builtin:…
  "values"     TEXT NOT NULL DEFAULT '{}',     -- JSON object: the stored (raw) values
  revision     INTEGER NOT NULL DEFAULT 1,
  updated_at   TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS nbook_board_config_revision (
  id           INTEGER PRIMARY KEY,
  workflow_id  TEXT NOT NULL,
  subject      TEXT NOT NULL,                  -- settings | workflow | selection
  actor_kind   TEXT NOT NULL,                  -- agent | user | system
  actor_id     TEXT NOT NULL,
  before       TEXT,                           -- JSON
  after        TEXT,                           -- JSON
  created_at   TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS nbook_board_config_revision_wf ON nbook_board_config_revision (workflow_id, id);
