-- Steering comments the author adds to a board task (`s` on the Board, `fn_task_steer`).
-- Each is delivered once: into the task's live session at its next turn boundary, or into
-- the first message of the task's next role session. `delivered_at` is set in the same
-- transaction that hands the comment out, so no comment is delivered twice.

CREATE TABLE IF NOT EXISTS nbook_board_steering (
  id            INTEGER PRIMARY KEY,
  task_id       TEXT NOT NULL REFERENCES nbook_board_task (id) ON DELETE CASCADE,
  text          TEXT NOT NULL,
  author        TEXT NOT NULL,
  created_at    TEXT NOT NULL,
  delivered_at  TEXT,
  delivered_to  TEXT                            -- the session id it went into
);
CREATE INDEX IF NOT EXISTS nbook_board_steering_task ON nbook_board_steering (task_id, id);
