-- A task's *declared* repository scope in series workspace mode (src/board/repository_scope.rs;
-- fusion-notes §2.1 fn_task_create repository_scope?[], §1 PROMPT.md `## Repository Scope`):
-- the other books of the series the task means to work in, declared up front, whether or not
-- it acquired a draft area there yet (acquisitions stay in nbook_board_task_repository, 011).
-- Kept apart from 011 because an acquired row always has an area; a declared one may not.
-- An acquisition outside the declared scope extends it (declared_by 'acquisition'), as
-- Fusion's fn_acquire_repo_worktree does. The task's own book is implied and has no row.

CREATE TABLE IF NOT EXISTS nbook_board_task_declared_repository (
  task_id     TEXT NOT NULL,
  book        TEXT NOT NULL,   -- the sibling book's folder name
  declared_by TEXT NOT NULL,   -- 'create' (fn_task_create), 'prompt' (PROMPT.md), 'acquisition'
  reason      TEXT,
  declared_at TEXT NOT NULL,
  PRIMARY KEY (task_id, book)
);
