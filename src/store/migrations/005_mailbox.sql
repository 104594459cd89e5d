-- The mailbox and chat rooms of Fusion's board (src/board/mailbox.rs; fusion-notes §5
-- "Messages (mailbox)" and "Chat rooms"). Messages go between agents (profile keys and live
-- sessions `session:<id>`, the ids fn_list_agents gives), the author (`dashboard`) and the
-- engine (`system`: approval mails).

CREATE TABLE IF NOT EXISTS nbook_board_message (
  seq         INTEGER PRIMARY KEY,             -- order (newest = highest)
  id          TEXT NOT NULL UNIQUE,            -- msg-000001, msg-000002, …
  from_id     TEXT NOT NULL,
  from_type   TEXT NOT NULL,                   -- agent | user | system
  to_id       TEXT NOT NULL,
  to_type     TEXT NOT NULL,                   -- agent | user
  content     TEXT NOT NULL,
  type        TEXT NOT NULL,                   -- agent-to-agent | agent-to-user | user-to-agent | system
  read        INTEGER NOT NULL DEFAULT 0,
  archived    INTEGER NOT NULL DEFAULT 0,
  metadata    TEXT NOT NULL DEFAULT '{}',      -- JSON {replyTo, wakeRecipient, taskId, conversationId, mailKind, report, approvalRequestId}
  once_key    TEXT UNIQUE,                     -- Fusion's sendMessageOnce key (approval-mail:<call>)
  created_at  TEXT NOT NULL,
  read_at     TEXT
);
CREATE INDEX IF NOT EXISTS nbook_board_message_to ON nbook_board_message (to_id, read, seq);

CREATE TABLE IF NOT EXISTS nbook_board_room (
  id          TEXT PRIMARY KEY,                -- room-001, …
  seq         INTEGER NOT NULL UNIQUE,
  name        TEXT NOT NULL,
  slug        TEXT NOT NULL UNIQUE,
  description TEXT NOT NULL DEFAULT '',
  status      TEXT NOT NULL DEFAULT 'active',
  created_at  TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS nbook_board_room_member (
  room_id     TEXT NOT NULL REFERENCES nbook_board_room (id) ON DELETE CASCADE,
  agent_id    TEXT NOT NULL,
  role        TEXT NOT NULL DEFAULT 'member',
  PRIMARY KEY (room_id, agent_id)
);

CREATE TABLE IF NOT EXISTS nbook_board_room_message (
  seq             INTEGER PRIMARY KEY,
  id              TEXT NOT NULL UNIQUE,        -- rmsg-000001, …
  room_id         TEXT NOT NULL REFERENCES nbook_board_room (id) ON DELETE CASCADE,
  role            TEXT NOT NULL,               -- agent | user
  content         TEXT NOT NULL,
  metadata        TEXT NOT NULL DEFAULT '{}',  -- JSON {replyTo}
  sender_agent_id TEXT NOT NULL,
  mentions        TEXT NOT NULL DEFAULT '[]',  -- JSON array of agent ids
  created_at      TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS nbook_board_room_message_room ON nbook_board_room_message (room_id, seq);
