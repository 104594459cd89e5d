-- A task's repository scope in series workspace mode (src/board/repository_scope.rs;
-- fusion-notes §2.1 fn_acquire_repo_worktree): the other books of the series in which the
-- task acquired a draft area, with the area's path and why it was acquired. The task's own
-- book is always in scope and has no row.

CREATE TABLE IF NOT EXISTS nbook_board_task_repository (
  task_id     TEXT NOT NULL,
  book        TEXT NOT NULL,   -- the sibling book's folder name
  area_path   TEXT NOT NULL,   -- absolute path of the task's draft area in that book
  reason      TEXT,
  acquired_by TEXT,
  acquired_at TEXT NOT NULL,
  PRIMARY KEY (task_id, book)
);
