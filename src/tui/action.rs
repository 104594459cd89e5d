//! The vocabulary of the UI: [`Command`]s (what a key in `keymap.toml` can `run`, with its name
//! and description for help and the palette), [`Action`]s (everything that can change
//! `AppState`: commands, typing, mouse, engine events, finished background jobs) and
//! [`Effect`]s (work `update` asks the runtime to do: answer the engine, load, walk, query).

use std::sync::Arc;

use crossterm::event::{KeyEvent, MouseEvent};

use crate::engine::agents::{InvokeMode, InvokeOutcome};
use crate::engine::inputs::{Answer, InputRequest};
use crate::engine::jobs::JobSnapshot;
use crate::engine::{Decision, EngineEvent, LogLine, Mode, PendingCall, SessionInfo};

use crate::tui::board::jobs::{BoardJob, BoardJobResult};
use crate::tui::files::finder::FinderMatch;
use crate::tui::files::tree::DirEntry;
use crate::tui::files::RelPath;
use crate::tui::story::data::StoryData;
use crate::tui::story::jobs::{StoryJob, StoryJobResult};
use crate::tui::widgets::markdown::PreviewDoc;
use crate::tui::world::jobs::{WorldJob, WorldJobResult};

macro_rules! commands {
    ($($variant:ident = $name:literal : $desc:literal,)*) => {
        /// A bindable command. `name` is what `run = "…"` says in keymap.toml.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Command { $($variant,)* }

        impl Command {
            pub const ALL: &'static [Command] = &[$(Command::$variant,)*];

            pub fn name(self) -> &'static str {
                match self { $(Command::$variant => $name,)* }
            }

            pub fn description(self) -> &'static str {
                match self { $(Command::$variant => $desc,)* }
            }
        }
    };
}

commands! {
    Quit = "quit": "Quit nbook (asks first if an agent is busy or a call is pending)",
    Help = "help": "Show every key binding",
    Messages = "messages": "Every status message of this run, newest first, with its time and kind",
    Palette = "palette": "Open the command palette",
    FocusNext = "focus_next": "Focus the next pane",
    FocusPrev = "focus_prev": "Focus the previous pane",
    FocusFiles = "focus_files": "Focus the Files pane",
    FocusStory = "focus_story": "Focus the Story pane",
    FocusWorld = "focus_world": "Focus the World pane",
    FocusSessions = "focus_sessions": "Focus the Sessions pane",
    FocusApprovals = "focus_approvals": "Focus the Approvals pane",
    FocusBoard = "focus_board": "Focus the Board pane (the production board)",
    CycleMode = "cycle_mode": "Switch the session's mode: normal → discuss → plan",
    Up = "up": "Move up",
    Down = "down": "Move down",
    PageUp = "page_up": "Move up one page",
    PageDown = "page_down": "Move down one page",
    Top = "top": "Go to the first row",
    Bottom = "bottom": "Go to the last row",
    DetailUp = "detail_up": "Scroll the preview / transcript up",
    DetailDown = "detail_down": "Scroll the preview / transcript down",
    Expand = "expand": "Open the folder (or preview the file)",
    Collapse = "collapse": "Close the folder, or go to its parent",
    Find = "find": "Find a project file by name (fuzzy)",
    EditFile = "edit_file": "Files: open the selected file in your editor ($VISUAL, else $EDITOR, else vi); saving it is your change, logged",
    ExternalEditor = "external_editor": "Hand the text being written (composer, reject reason, argument editor, record editor) to your editor",
    Suspend = "suspend": "Suspend nbook to the shell (fg brings it back)",
    Refresh = "refresh": "Reload this pane",
    Follow = "follow": "Jump to the end of the transcript and follow it",
    Approve = "approve": "Approve the selected call",
    ApproveSession = "approve_session": "Approve, and allow this tool on this target for the rest of the session",
    Reject = "reject": "Reject the selected call (optional reason)",
    EditArgs = "edit_args": "Edit the call: a write or edit opens the file it proposes in your editor; other calls' arguments as JSON",
    EditArgsJson = "edit_args_json": "Edit the call's arguments as JSON, then approve",
    Detail = "detail": "Show the whole request full-screen",
    History = "history": "Approvals: the history of every applied change (who, rule, diff) and the session grants; undo from there",
    HistoryUndo = "history_undo": "History: revert the selected change (shows its exact reverse preview first) or revoke the selected grant",
    DiffNextChange = "diff_next_change": "Approvals: jump to the next change in the preview",
    DiffPrevChange = "diff_prev_change": "Approvals: jump to the previous change in the preview",
    DiffSideBySide = "diff_side_by_side": "Approvals: file diffs side by side (old left, new right) ⇄ unified",
    DiffToggleHunk = "diff_toggle_hunk": "Approvals: keep ⇄ drop the hunk at the top of the preview (y then applies only the kept parts)",
    DiffToggleFile = "diff_toggle_file": "Approvals: keep ⇄ drop the whole file at the top of the preview",
    DiffSearch = "diff_search": "Approvals: search the preview (then n / N go to the matches)",
    DiffNextMatch = "diff_next_match": "Search: the next match in the preview",
    DiffPrevMatch = "diff_prev_match": "Search: the previous match in the preview",
    DiffEndSearch = "diff_end_search": "Search: end it (n rejects again)",
    Accept = "accept": "Send (one-line input) · choose (list) · new line (editor)",
    Submit = "submit": "Submit the input (also in the argument editor)",
    Cancel = "cancel": "Cancel / close",
    Confirm = "confirm": "Confirm the dialog",
    TrustConfig = "trust_config": "Trust this project's config to loosen your approval policy (the trust dialog at open)",
    PrevItem = "prev_item": "Previous item (lists) · cursor up (editor)",
    NextItem = "next_item": "Next item (lists) · cursor down (editor)",
    StoryToggleTree = "story_toggle_tree": "Story: switch between the carrier tree (acts → chapters) and the causal tree (phases → threads)",
    StoryPromises = "story_promises": "Story: show the promise ledger (again: back to the tree)",
    StoryDecisions = "story_decisions": "Story: show the decision ledger (again: back to the tree)",
    StoryBrief = "story_brief": "Story: show the writer brief of the selected chapter on the right (again: the detail)",
    StoryJumpChapter = "story_jump_chapter": "Story: jump from the selected scene to its chapter",
    StoryJumpThread = "story_jump_thread": "Story: jump from the selected scene to its thread",
    StoryFilter = "story_filter": "Story: filter by status (each press shows the next status, then all)",
    StorySearch = "story_search": "Story: fuzzy search over the titles of the whole story",
    StoryEdit = "story_edit": "Story: edit the selected record's fields (JSON)",
    StoryArchive = "story_archive": "Story: archive the thread or scene, abandon the promise, drop the decision",
    StoryDelete = "story_delete": "Story: delete the selected record for good (asks first, lists what cascades)",
    BoardNew = "board_new": "Board: create a task (you type its description; fn_task_create as you)",
    BoardMove = "board_move": "Board: move the selected task to the next column of its workflow",
    BoardMoveBack = "board_move_back": "Board: move the selected task to the previous column",
    BoardPause = "board_pause": "Board: pause the selected task (again: resume it)",
    BoardArchive = "board_archive": "Board: archive the selected task (m/M move it back)",
    BoardGoalNew = "board_goal_new": "Board: create a book goal (you type its title and description; fn_goal_create as you)",
    BoardGoals = "board_goals": "Board: list the goals to archive or unarchive one (fn_goal_archive as you)",
    BoardSteer = "board_steer": "Board: steer the selected task (a comment for its live session, or its next one)",
    BoardPlanApprove = "board_plan_approve": "Board: approve the selected task's plan when it waits for you at plan? (requirePlanApproval; fn_task_approve_plan as you)",
    BoardPlanReject = "board_plan_reject": "Board: send the selected task's plan back to planning with a reason when it waits for you at plan? (fn_task_reject_plan as you)",
    BoardRate = "board_rate": "Board: rate the selected task's last run (its last role session), 1–5 with a comment (fn_agent_rate as you)",
    BoardScheduler = "board_scheduler": "Board: stop the scheduler (no new role sessions; running ones finish) or start it again",
    BoardWorkflows = "board_workflows": "Board: the Workflows view — each workflow's columns, nodes and flow as a graph, and its settings (again: back to the board)",
    BoardWorkflowSet = "board_workflow_set": "Board: in the Workflows view, set a setting value of the selected workflow (id = value; empty clears)",
    BoardAgents = "board_agents": "Board: the durable agents with their last heartbeat run; Enter wakes the selected one now",
    BoardInbox = "board_inbox": "Board: the Inbox view — the author's mail (messages, reports, approval mails), newest first (again: back to the board)",
    InboxReply = "inbox_reply": "Inbox: reply to the selected mail (reaches its agent at once, or at its next heartbeat)",
    InboxApprovals = "inbox_approvals": "Inbox: from an approval mail, jump to the Approvals pane",
    InboxCompose = "inbox_compose": "Inbox: a new message to a durable agent, a profile agent or a session (at once, or at its next heartbeat)",
    InboxRoomPost = "inbox_room_post": "Inbox: post in a chat room",
    InboxRoomNew = "inbox_room_new": "Inbox: a new chat room — its name and its members (agents, profiles, sessions)",
    InboxRoomAdd = "inbox_room_add": "Inbox: add members to a chat room",
    BoardArtifacts = "board_artifacts": "Board: the Artifacts view — maps, covers, character sheets; images where the terminal can show them (again: back to the board)",
    WorldBack = "world_back": "World: move the cursor back one zoom unit (year, month, day or hour)",
    WorldForward = "world_forward": "World: move the cursor forward one zoom unit",
    WorldPrevSlice = "world_prev_slice": "World: move the cursor to the previous slice",
    WorldNextSlice = "world_next_slice": "World: move the cursor to the next slice",
    WorldFirst = "world_first": "World: move the cursor to the first slice of the timeline",
    WorldLast = "world_last": "World: move the cursor to the last slice of the timeline",
    WorldZoomIn = "world_zoom_in": "World: zoom in (year → month → day → hour)",
    WorldZoomOut = "world_zoom_out": "World: zoom out (hour → day → month → year)",
    WorldJump = "world_jump": "World: jump the cursor to a time typed in the project calendar",
    WorldFind = "world_find": "World: find a subject by name (fuzzy); Enter selects it",
    WorldFilter = "world_filter": "World: show subjects of the next type (then all types)",
    WorldMark = "world_mark": "World: mark instant A at the cursor for the diff (again on A: clear)",
    WorldState = "world_state": "World: show the selected subject's state at the cursor",
    WorldTrack = "world_track": "World: show the slices that touched the selected subject, with their patches",
    WorldDiff = "world_diff": "World: show what changed in the selected subject from A to the cursor",
    WorldIssues = "world_issues": "World: show every subject's issues at the cursor, with explanations",
    Compose = "compose": "Sessions: write to the selected session (a prompt when it is idle, a steer when it runs)",
    NewSession = "new_session": "Sessions: start a new session (profile, model, title)",
    ModelSetup = "model_setup": "Sessions: set up a model (find a local server or name one; writes config.toml)",
    CancelRun = "cancel_run": "Sessions: stop the selected session's run, its queued follow-ups and the agents it waits on",
    ToggleJobs = "toggle_jobs": "Sessions: switch between the session list and the background jobs",
    OpenTranscript = "open_transcript": "Sessions: move into the transcript to select and expand tool calls",
    RateRun = "rate_run": "Sessions: rate the selected session's run, 1–5 with a comment (fn_agent_rate as you)",
    CancelJob = "cancel_job": "Jobs: cancel the selected background job",
    JobSession = "job_session": "Jobs: go to the job's session (the agent it runs, else its owner)",
    ToggleEntry = "toggle_entry": "Transcript: expand / collapse the selected tool call (arguments and full result)",
    LeaveTranscript = "leave_transcript": "Transcript: back to the session list",
    Send = "send": "Composer: send (a prompt when the session is idle, a steer when it runs)",
    SendFollowup = "send_followup": "Composer: send as a follow-up (runs after the current run ends)",
    Newline = "newline": "Composer: insert a new line",
    LeaveComposer = "leave_composer": "Composer: leave it (the draft is kept)",
    NextField = "next_field": "Form: next question / field",
    PrevField = "prev_field": "Form: previous question / field",
    ToggleOption = "toggle_option": "Form: pick the option under the cursor (toggle it in a multi-choice question)",
    SkipQuestion = "skip_question": "Form: skip this question (again: answer it after all)",
    Copy = "copy": "Copy to the clipboard (OSC 52): the path in Files, the shown brief in Story, the message in the transcript, the preview in Approvals",
}

impl Command {
    pub fn from_name(name: &str) -> Option<Command> {
        Command::ALL.iter().copied().find(|c| c.name() == name)
    }

    /// Approval decisions are subject to the typing guard.
    pub fn is_approval_key(self) -> bool {
        matches!(
            self,
            Command::Approve
                | Command::ApproveSession
                | Command::Reject
                | Command::EditArgs
                | Command::EditArgsJson
        )
    }

    /// Commands of the Story pane (run from the palette they focus it first).
    pub fn is_story(self) -> bool {
        self.name().starts_with("story_")
    }

    /// Commands of the World pane (run from the palette they focus it first).
    /// Commands of the Board pane (run from the palette they focus it first).
    pub fn is_board(self) -> bool {
        self.name().starts_with("board_")
    }

    pub fn is_world(self) -> bool {
        self.name().starts_with("world_")
    }

    /// Commands of an approval preview (run from the palette they focus Approvals first).
    pub fn is_diff(self) -> bool {
        self.name().starts_with("diff_")
    }

    /// Commands of the Sessions pane (run from the palette they focus it first).
    pub fn is_sessions(self) -> bool {
        matches!(
            self,
            Command::Compose
                | Command::NewSession
                | Command::CancelRun
                | Command::ToggleJobs
                | Command::OpenTranscript
                | Command::CancelJob
                | Command::JobSession
                | Command::RateRun
        )
    }

    /// Commands that only mean something inside a text field, a form or the transcript
    /// cursor; the palette leaves them out.
    pub fn is_contextual(self) -> bool {
        matches!(
            self,
            Command::Accept
                | Command::Submit
                | Command::Cancel
                | Command::Confirm
                | Command::TrustConfig
                | Command::PrevItem
                | Command::NextItem
                | Command::ToggleEntry
                | Command::LeaveTranscript
                | Command::Send
                | Command::SendFollowup
                | Command::Newline
                | Command::LeaveComposer
                | Command::NextField
                | Command::PrevField
                | Command::ToggleOption
                | Command::SkipQuestion
                | Command::DiffNextMatch
                | Command::DiffPrevMatch
                | Command::DiffEndSearch
                | Command::ExternalEditor
        )
    }
}

pub type Ticket = u64;

/// Why the engine refused answers: `stays` means the question is still waiting (a bad
/// answer); otherwise it is gone (answered elsewhere, or its run was cancelled).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnswerRefusal {
    pub message: String,
    pub stays: bool,
}

/// Everything that can change the UI state. `AppState::update` is the only consumer.
#[derive(Debug)]
pub enum Action {
    Cmd(Command),
    /// A key typed into the active text input (no binding in `[input]` matched it).
    Text(KeyEvent),
    Paste(String),
    Mouse(MouseEvent),
    Resize(u16, u16),
    /// Once a second: ages, message expiry, deferred reloads.
    Tick,
    Engine(EngineEvent),
    /// The engine's event stream lagged: the runtime re-read the queue and the sessions.
    Resync {
        pending: Vec<PendingCall>,
        inputs: Vec<InputRequest>,
        sessions: Vec<SessionInfo>,
    },
    /// A background job started or changed (progress, status).
    Job(JobSnapshot),
    /// The job stream lagged: every job as the store lists it now.
    JobsResync(Vec<JobSnapshot>),
    /// A message from the composer was admitted (`Ok`) or refused by the agent host.
    InvokeAdmitted {
        session_id: String,
        text: String,
        mode: InvokeMode,
        result: Result<(), String>,
    },
    /// The run a composer message started or joined ended.
    InvokeFinished {
        session_id: String,
        text: String,
        outcome: InvokeOutcome,
    },
    /// A session asked for from the new-session form was created (or refused).
    SessionCreated(Result<SessionInfo, String>),
    /// The durable agents for the new-session form (or why they could not be read).
    DurableAgentsLoaded(Result<Vec<crate::tui::widgets::forms::AgentChoice>, String>),
    /// The engine took the answers (`Ok`) or refused them with a reason (the question stays).
    AnswerChecked {
        id: String,
        result: Result<(), AnswerRefusal>,
    },
    /// A short note from an effect (a cancel that found nothing running…).
    Notice(String),
    DirLoaded {
        ticket: Ticket,
        dir: RelPath,
        result: Result<Vec<DirEntry>, String>,
    },
    FilesWalked {
        ticket: Ticket,
        paths: Arc<Vec<RelPath>>,
    },
    FinderMatched {
        ticket: Ticket,
        matches: Vec<FinderMatch>,
    },
    PreviewLoaded {
        ticket: Ticket,
        path: RelPath,
        result: Result<PreviewDoc, String>,
    },
    SessionLogLoaded {
        ticket: Ticket,
        session_id: String,
        result: Result<Vec<LogLine>, String>,
    },
    StoryLoaded {
        ticket: Ticket,
        result: Result<StoryData, String>,
    },
    /// A Story pane job finished (scenes, detail, search, edit form, preview, write).
    StoryJobDone {
        ticket: Ticket,
        result: StoryJobResult,
    },
    /// The board's scheduler changed (a session started or ended, it was stopped or started).
    BoardScheduler(crate::runner::RunnerStatus),
    /// A Board pane job finished (the board, a task's detail, a write).
    BoardJobDone {
        ticket: Ticket,
        result: BoardJobResult,
    },
    /// A History view job finished.
    HistoryJobDone {
        ticket: Ticket,
        result: crate::tui::history::jobs::HistoryJobResult,
    },
    /// A World pane job finished (load, subjects, counts, slices, track, issues).
    WorldJobDone {
        ticket: Ticket,
        result: WorldJobResult,
    },
    /// A call restored at open was previewed anew (`Ok`: the call as it waits now).
    Repreviewed {
        call_id: String,
        result: Result<crate::engine::PendingCall, String>,
    },
    /// Edited arguments were checked by the engine; `Ok` means the edit was sent.
    EditChecked {
        call_id: String,
        result: Result<(), String>,
    },
    /// An effect failed (a decision for a call that is gone, a mode switch…).
    EffectFailed(String),
    /// The terminal is back from the author's editor or the shell.
    EditorDone(EditorDone),
    /// The terminal gained (`true`) or lost focus (crossterm focus events).
    Focus(bool),
    /// A job of the model setup form finished.
    SetupDone {
        ticket: Ticket,
        result: crate::tui::sessions::setup::SetupResult,
    },
    /// config.toml changed and was loaded again (or failed to: the old config stays).
    ConfigReloaded(ConfigReload),
    /// keymap.toml changed: the keymap it gives now, and the problems in it.
    KeymapReloaded {
        keymap: Box<crate::tui::keymap::Keymap>,
        errors: Vec<crate::tui::keymap::KeymapError>,
    },
}

/// What the TUI takes from a reloaded config.
#[derive(Clone, Debug)]
pub struct ConfigReload {
    /// `Ok`: the model keys and notification settings now in force; `Err`: why the files do
    /// not load.
    pub result: Result<(Vec<String>, crate::config::NotifyConfig), String>,
    /// Warnings (unknown keys, held project lines, a theme that does not load), one each.
    pub notes: Vec<String>,
    /// The theme `theme =` names now (`None`: leave the current one).
    pub theme: Option<Box<crate::tui::theme::Theme>>,
}

/// Where a text handed to the editor (Ctrl+E) goes back to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TextTarget {
    /// The composer's draft of a session.
    Composer { session_id: String },
    /// The reject prompt of a waiting call.
    RejectReason { call_id: String },
    /// The JSON argument editor of a waiting call.
    EditArgs { call_id: String },
    /// The Story pane's record editor (JSON).
    StoryRecord,
}

/// What the run loop does with the terminal lent to the author's editor or the shell.
#[derive(Clone, Debug, PartialEq)]
pub enum EditorJob {
    /// A project file, edited on a temporary copy and saved as an author `write`.
    File { path: RelPath },
    /// The text of a field, put back where it came from; `name` names the copy (its suffix
    /// picks the editor's syntax).
    Text {
        target: TextTarget,
        text: String,
        name: String,
    },
    /// The whole file a waiting `write`/`edit` call proposes; the edited file becomes the
    /// call's edited arguments.
    Proposal {
        approval_id: String,
        tool: String,
        args: serde_json::Value,
    },
    /// Ctrl+Z: to the shell until `fg`.
    Suspend,
}

/// A project file after the editor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FileSaved {
    Unchanged,
    /// Saved as the author's change; `summary` says how much changed.
    Saved {
        summary: String,
    },
}

/// How a hand-over went (each error says what happened to the text).
#[derive(Clone, Debug, PartialEq)]
pub enum EditorDone {
    File {
        path: RelPath,
        result: Result<FileSaved, String>,
    },
    /// `Ok(None)`: the text came back unchanged.
    Text {
        target: TextTarget,
        result: Result<Option<String>, String>,
    },
    /// `Ok(Some(args))`: the arguments the edited file became; `Ok(None)`: unchanged.
    Proposal {
        approval_id: String,
        tool: String,
        result: Result<Option<serde_json::Value>, String>,
    },
    Suspended(Result<(), String>),
}

/// Work `update` asks for; the runtime executes it (off the UI task when heavy).
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    /// Record the author's trust of a project config (in the config dir, bound to its hash).
    TrustProjectConfig {
        project: String,
        sha256: String,
        lines: Vec<String>,
    },
    Decide {
        call_id: String,
        decision: Decision,
    },
    /// Preview a stale call restored at open anew (its target changed while nbook was closed).
    Repreview {
        call_id: String,
    },
    /// Validate edited arguments with the engine; if valid send `Decision::Edit`.
    EditArgs {
        call_id: String,
        tool: String,
        args: serde_json::Value,
    },
    SetMode {
        session_id: String,
        mode: Mode,
    },
    /// Send a message to a session through the agent host (the model key stored in the
    /// session's `ui.model` state goes with it).
    Invoke {
        session_id: String,
        text: String,
        mode: InvokeMode,
    },
    /// Cancel a session's run (and its follow-ups, questions and the agents it waits on).
    CancelRun {
        session_id: String,
    },
    /// Read the durable agents for the new-session form.
    LoadDurableAgents,
    CreateSession {
        profile: String,
        /// Start the session as this durable agent (`profile` is its role's profile).
        agent: Option<String>,
        /// A key of config.toml's `[models]`; `None` uses the profile's default.
        model: Option<String>,
        title: String,
        mode: Mode,
    },
    AnswerInput {
        id: String,
        answers: Vec<Answer>,
    },
    CancelJob {
        job_id: String,
    },
    LoadDir {
        ticket: Ticket,
        dir: RelPath,
    },
    WalkFiles {
        ticket: Ticket,
    },
    FilterFiles {
        ticket: Ticket,
        query: String,
        paths: Arc<Vec<RelPath>>,
    },
    LoadPreview {
        ticket: Ticket,
        path: RelPath,
    },
    LoadSessionLog {
        ticket: Ticket,
        session_id: String,
    },
    LoadStory {
        ticket: Ticket,
    },
    StoryJob {
        ticket: Ticket,
        job: StoryJob,
    },
    BoardJob {
        ticket: Ticket,
        job: BoardJob,
    },
    /// Stop (false) or start (true) the board's scheduler.
    BoardScheduler {
        on: bool,
    },
    /// Wake a durable agent now (the heartbeat scheduler's manual wake).
    HeartbeatWake {
        agent: String,
    },
    WorldJob {
        ticket: Ticket,
        job: WorldJob,
    },
    /// A job of the History view (load, reverse preview, revert, revoke).
    HistoryJob {
        ticket: Ticket,
        job: crate::tui::history::jobs::HistoryJob,
    },
    /// Lend the terminal to the author's editor or the shell (the run loop does it; the UI
    /// waits, the agents do not).
    Editor(EditorJob),
    /// Ring the bell and/or send a desktop notification (the run loop writes it to the
    /// terminal; rendering stays pure).
    Notify(crate::tui::notify::Notification),
    /// A job of the model setup form (probing servers, planning or writing config.toml).
    Setup {
        ticket: Ticket,
        job: crate::tui::sessions::setup::SetupJob,
    },
    /// Put this text on the clipboard through the terminal (OSC 52; the run loop writes it).
    Clipboard(String),
    Quit,
}
