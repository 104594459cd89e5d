//! Shared fixtures for the TUI tests: an `AppState` built from plain data (no terminal, no
//! engine) with a stepping clock, pending calls of every preview kind, a rendered-frame helper
//! and a key-sequence driver that parses keymap notation.
#![allow(dead_code)]

use std::sync::Arc;

use nbook::engine::{
    ChangeKind, EngineEvent, FileChange, LogLine, LogRecord, Mode, PendingCall, Preview,
    PreviewBody, SessionInfo, SessionState, ToolCall,
};
use nbook::tui::action::{Action, Command, Effect};
use nbook::tui::app::{AppInit, AppState};
use nbook::tui::clock::ManualClock;
use nbook::tui::files::tree::DirEntry;
use nbook::tui::keymap::Keymap;
use nbook::tui::keys::parse_sequence;
use nbook::tui::story::data::StoryData;
use nbook::tui::theme::Theme;
use nbook::tui::widgets::forms::ProfileChoice;
use nbook::tui::widgets::markdown::PreviewDoc;
use nbook::tui::world::jobs::WorldJobResult;
use nbook::tui::world::{WorldLoad, WorldMeta};
use ratatui::backend::TestBackend;
use ratatui::Terminal;
use serde_json::json;

pub const T0: &str = "2026-03-01T10:00:00Z";

pub fn clock() -> ManualClock {
    ManualClock::new(time::macros::datetime!(2026-03-01 10:00:42 UTC))
}

pub fn session(
    id: &str,
    profile: &str,
    mode: Mode,
    state: SessionState,
    parent: Option<&str>,
) -> SessionInfo {
    SessionInfo {
        id: id.into(),
        profile: profile.into(),
        title: format!("{profile} at work"),
        mode,
        state,
        created_at: T0.into(),
        parent: parent.map(str::to_string),
        input_tokens: 12_400,
        output_tokens: 3_100,
        cost: 0.0421,
        context_tokens: 0,
        context_window: 0,
        client: None,
        agent: None,
    }
}

pub fn pending(
    call_id: &str,
    tool: &str,
    body: PreviewBody,
    summary: &str,
    grant: bool,
    mode: Mode,
) -> PendingCall {
    PendingCall {
        // The TUI keys approvals by this id; the fixtures reuse the call id for it.
        approval_id: call_id.into(),
        call_id: call_id.into(),
        session_id: "1".into(),
        profile: "leader.default".into(),
        mode,
        tool: tool.into(),
        args: json!({"path": "manuscript/001-volume/001-chapter/index.md", "content": "The harbour was quiet.\n"}),
        preview: Preview {
            summary: summary.into(),
            body,
            targets: vec![],
        },
        requested_at: T0.into(),
        session_grant_allowed: grant,
        parts: false,
    }
}

pub fn patch_call() -> PendingCall {
    let changes = vec![
        FileChange {
            path: "manuscript/001-volume/001-chapter/index.md".into(),
            kind: ChangeKind::Update,
            move_to: None,
            diff: "--- a/manuscript/001-volume/001-chapter/index.md\n+++ b/manuscript/001-volume/001-chapter/index.md\n@@ -1,3 +1,3 @@\n # Chapter One\n-The harbour was quiet.\n+The harbour was quiet, and the gulls had gone.\n \n@@ -40,2 +40,3 @@\n Mira left at dawn.\n+She did not look back.\n".into(),
            added: 2,
            removed: 1,
        },
        FileChange {
            path: "lorebook/character/mira/index.md".into(),
            kind: ChangeKind::Add,
            move_to: None,
            diff: "--- /dev/null\n+++ b/lorebook/character/mira/index.md\n@@ -0,0 +1,2 @@\n+# Mira\n+A harbour pilot.\n".into(),
            added: 2,
            removed: 0,
        },
        FileChange {
            path: "notes/old-outline.md".into(),
            kind: ChangeKind::Update,
            move_to: Some("reference/outline.md".into()),
            diff: "--- a/notes/old-outline.md\n+++ b/reference/outline.md\n@@ -1 +1 @@\n-Outline\n+Outline (archived)\n".into(),
            added: 1,
            removed: 1,
        },
    ];
    let mut c = pending(
        "call-patch",
        "apply_patch",
        PreviewBody::Files { changes },
        "Edit 3 files (+5 -2)",
        true,
        Mode::Normal,
    );
    c.args = json!({"patch": "*** Begin Patch\n*** Update File: manuscript/001-volume/001-chapter/index.md\n*** End Patch"});
    c
}

pub fn command_call() -> PendingCall {
    let mut c = pending(
        "call-bash",
        "bash",
        PreviewBody::Command {
            command: "wc -w manuscript/*/*/index.md".into(),
            cwd: "/book".into(),
            timeout_secs: Some(30),
        },
        "Run wc -w manuscript/*/*/index.md",
        false,
        Mode::Discuss,
    );
    c.args = json!({"command": "wc -w manuscript/*/*/index.md"});
    c.call_id = "call-bash".into();
    c
}

pub fn text_call() -> PendingCall {
    let mut c = pending(
        "call-mode",
        "switch_mode",
        PreviewBody::Text {
            text: "The agent asks to switch from plan to normal mode so it can write the chapter."
                .into(),
        },
        "Switch mode plan → normal",
        false,
        Mode::Plan,
    );
    c.args = json!({"mode": "normal", "reason": "ready to write"});
    c
}

pub fn write_call() -> PendingCall {
    pending(
        "call-write",
        "write",
        PreviewBody::Files {
            changes: vec![FileChange {
                path: "manuscript/001-volume/001-chapter/index.md".into(),
                kind: ChangeKind::Update,
                move_to: None,
                diff: "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+The harbour was quiet.\n".into(),
                added: 1,
                removed: 1,
            }],
        },
        "Edit manuscript/001-volume/001-chapter/index.md (+1 -1)",
        true,
        Mode::Normal,
    )
}

/// A bare app: default keymap and theme, no data.
pub fn empty_app(w: u16, h: u16) -> (AppState, ManualClock) {
    empty_app_with(w, h, Vec::new(), Vec::new())
}

pub fn empty_app_with(
    w: u16,
    h: u16,
    sessions: Vec<SessionInfo>,
    pending: Vec<PendingCall>,
) -> (AppState, ManualClock) {
    let clock = clock();
    let app = AppState::new(AppInit {
        title: "The Salt Road".into(),
        keymap: Keymap::defaults(),
        theme: Theme::builtin("dark").unwrap(),
        clock: Arc::new(clock.clone()),
        size: (w, h),
        sessions,
        pending,
        inputs: Vec::new(),
        jobs: Vec::new(),
        profiles: profiles(),
        models: vec!["local-qwen".into(), "sonnet".into()],
        focus_session: None,
        notices: Vec::new(),
    });
    (app, clock)
}

/// The profiles a new session may use, as `build_app` lists them (system-only ones left out).
pub fn profiles() -> Vec<ProfileChoice> {
    [
        (
            "leader.default",
            "Lead author",
            "Plans the book and coordinates the other agents",
        ),
        ("researcher", "Researcher", "Finds facts and sources"),
        (
            "world.engine",
            "World engine",
            "Keeps the world's timeline consistent",
        ),
        ("writer", "Writer", "Drafts chapters from a brief"),
    ]
    .into_iter()
    .map(|(k, n, d)| ProfileChoice {
        key: k.into(),
        name: n.into(),
        description: d.into(),
    })
    .collect()
}

fn e(name: &str, is_dir: bool) -> DirEntry {
    DirEntry {
        name: name.into(),
        is_dir,
    }
}

pub const CHAPTER: &str = "---\ntitle: Chapter One\npov: Mira\n---\n# Chapter One\n\nThe harbour was quiet. Mira counted the boats twice, because the first count came out wrong, and the second came out worse.\n\n## The letter\n\n> Come home before the storm.\n\n- a torn envelope\n- a key\n";

/// An app with data in every pane (as the background jobs and the engine would deliver it).
pub fn full_app(w: u16, h: u16) -> (AppState, ManualClock) {
    let sessions = vec![
        session(
            "1",
            "leader.default",
            Mode::Normal,
            SessionState::WaitingApproval,
            None,
        ),
        session("2", "writer", Mode::Plan, SessionState::Running, Some("1")),
    ];
    let (mut app, clock) = empty_app_with(
        w,
        h,
        sessions,
        vec![patch_call(), command_call(), text_call()],
    );
    let fx = app.start();
    let ticket = |fx: &[Effect], dir: &str| {
        fx.iter()
            .find_map(|f| match f {
                Effect::LoadDir { ticket, dir: d } if d == dir => Some(*ticket),
                _ => None,
            })
            .unwrap()
    };
    let root_ticket = ticket(&fx, "");
    app.update(Action::DirLoaded {
        ticket: root_ticket,
        dir: "".into(),
        result: Ok(vec![
            e(".nbook", true),
            e(".git", true),
            e("manuscript", true),
            e("lorebook", true),
            e("AGENTS.md", false),
            e("project.yaml", false),
        ]),
    });
    // Open manuscript, then its volume.
    for (dir, entries) in [
        (
            "manuscript",
            vec![e("001-volume", true), e("index.md", false)],
        ),
        (
            "manuscript/001-volume",
            vec![
                e("001-chapter", true),
                e("002-chapter", true),
                e("index.md", false),
            ],
        ),
        (
            "manuscript/001-volume/001-chapter",
            vec![e("index.md", false)],
        ),
    ] {
        assert!(app.files.tree.select_path(dir), "{dir}");
        let fx = app.update(Action::Cmd(Command::Expand));
        let t = ticket(&fx, dir);
        app.update(Action::DirLoaded {
            ticket: t,
            dir: dir.into(),
            result: Ok(entries),
        });
    }
    app.files
        .tree
        .select_path("manuscript/001-volume/001-chapter/index.md");
    let fx = app.update(Action::Cmd(Command::Expand));
    let t = fx
        .iter()
        .find_map(|f| match f {
            Effect::LoadPreview { ticket, .. } => Some(*ticket),
            _ => None,
        })
        .unwrap();
    app.update(Action::PreviewLoaded {
        ticket: t,
        path: "manuscript/001-volume/001-chapter/index.md".into(),
        result: Ok(PreviewDoc::from_bytes(
            CHAPTER.as_bytes(),
            CHAPTER.len() as u64,
            true,
        )),
    });
    app.update(Action::Engine(EngineEvent::FilesChanged {
        session_id: "1".into(),
        paths: vec!["manuscript/001-volume/001-chapter/index.md".into()],
    }));
    // The FilesChanged reload asks for a new preview; deliver it again.
    if let Some(p) = app.files.preview.clone() {
        if let Some(t) = p.loading {
            app.update(Action::PreviewLoaded {
                ticket: t,
                path: p.path.clone(),
                result: Ok(PreviewDoc::from_bytes(
                    CHAPTER.as_bytes(),
                    CHAPTER.len() as u64,
                    true,
                )),
            });
        }
    }
    // Story and world.
    let story_ticket = app.story.loading.unwrap();
    app.update(Action::StoryLoaded {
        ticket: story_ticket,
        result: Ok(story()),
    });
    let world_ticket = app.world.loading.unwrap();
    app.update(Action::WorldJobDone {
        ticket: world_ticket,
        result: WorldJobResult::Loaded(Ok(world())),
    });
    // Transcript of the selected session (2 is selected: the last one).
    app.sessions.selected = 0;
    let focus_then = app.focus;
    app.focus = nbook::tui::app::Pane::Sessions;
    let fx = app.update(Action::Cmd(Command::Refresh));
    app.focus = focus_then;
    let t = fx
        .iter()
        .find_map(|f| match f {
            Effect::LoadSessionLog { ticket, .. } => Some(*ticket),
            _ => None,
        })
        .unwrap();
    app.update(Action::SessionLogLoaded {
        ticket: t,
        session_id: "1".into(),
        result: Ok(transcript()),
    });
    app.status = None;
    (app, clock)
}

/// A small story as the Story pane's load job would deliver it (two acts, four chapters at
/// different brief statuses, a phase with two threads, a promise, a decision).
pub fn story() -> StoryData {
    use nbook::plot::brief::BriefStatus;
    use nbook::plot::ledger::{ChapterStatusRow, ThreadRow, TreeOverview};
    use nbook::plot::model::{
        ActDto, ChapterDto, DecisionDto, PhaseDto, PromiseDto, StoryDto, ThreadDto,
    };
    let act = |id: i64, title: &str| ActDto {
        id,
        story_id: 1,
        sort_order: id,
        name: format!("act-{id}"),
        title: title.into(),
        ..ActDto::default()
    };
    let chapter =
        |id: i64, act: Option<i64>, title: &str, scenes: usize, status| ChapterStatusRow {
            chapter: ChapterDto {
                id,
                story_id: 1,
                act_id: act,
                sort_order: id,
                name: format!("ch-{id}"),
                title: title.into(),
                ..ChapterDto::default()
            },
            scene_count: scenes,
            status,
        };
    let thread = |id: i64, title: &str, status: &str, main: bool, scenes: usize| ThreadRow {
        thread: ThreadDto {
            id,
            story_id: 1,
            story_phase_id: Some(1),
            sort_order: id,
            name: format!("thread-{id}"),
            title: title.into(),
            is_main_thread: main,
            status: status.into(),
            ..ThreadDto::default()
        },
        scene_count: scenes,
    };
    let overview = TreeOverview {
        story: StoryDto {
            id: Some(1),
            title: "The Salt Road".into(),
            ..StoryDto::default()
        },
        acts: vec![
            (
                act(1, "Departure"),
                vec![
                    chapter(1, Some(1), "Harbour", 4, BriefStatus::Ready),
                    chapter(2, Some(1), "The Letter", 3, BriefStatus::NeedsChapterBrief),
                ],
            ),
            (
                act(2, "The Storm"),
                vec![chapter(
                    3,
                    Some(2),
                    "Open Water",
                    5,
                    BriefStatus::NeedsWorldAnchor,
                )],
            ),
        ],
        ungrouped_chapters: vec![chapter(4, None, "Fragments", 0, BriefStatus::NeedsPlot)],
        phases: vec![(
            PhaseDto {
                id: 1,
                story_id: 1,
                name: "departure".into(),
                title: "Departure".into(),
                ..PhaseDto::default()
            },
            vec![
                thread(1, "Mira goes home", "active", true, 9),
                thread(2, "Who wrote the letter", "draft", false, 3),
            ],
        )],
        ungrouped_threads: vec![],
        scene_count: 12,
        open_promises: 1,
        open_decisions: 1,
    };
    let promise = PromiseDto {
        id: 1,
        story_id: 1,
        name: "the-letter".into(),
        title: "Who wrote the letter?".into(),
        status: "open".into(),
        importance: "high".into(),
        derived_stage: "planted".into(),
        ..PromiseDto::default()
    };
    let decision = DecisionDto {
        id: 1,
        story_id: 1,
        name: "storm".into(),
        title: "Does the storm sink the boat?".into(),
        status: "open".into(),
        ..DecisionDto::default()
    };
    StoryData::new(overview, vec![promise], vec![decision])
}

/// The world's counts as the World pane's load job would deliver them (no reader: the World
/// pane's own tests use a real project).
pub fn world() -> WorldLoad {
    WorldLoad {
        reader: None,
        meta: WorldMeta {
            bounds: Some((63_744_926_400, 63_745_012_800)),
            types: vec![("character".into(), 3), ("location".into(), 1)],
            subject_count: 4,
            slice_count: 1_204,
        },
    }
}

fn line(record: LogRecord) -> LogLine {
    LogLine {
        ts: T0.into(),
        record,
    }
}

pub fn transcript() -> Vec<LogLine> {
    vec![
        line(LogRecord::Header {
            session_id: "1".into(),
            profile: "leader.default".into(),
            mode: Mode::Normal,
            title: "Chapter one".into(),
            parent: None,
        }),
        line(LogRecord::User {
            text: "Tighten the opening of chapter one.".into(),
        }),
        line(LogRecord::Assistant {
            text: "I will read the chapter first, then propose an edit.".into(),
            tool_calls: vec![ToolCall {
                id: "c1".into(),
                name: "read".into(),
                arguments: json!({"path": "manuscript/001-volume/001-chapter/index.md"}),
            }],
        }),
        line(LogRecord::ToolResult {
            call_id: "c1".into(),
            tool: "read".into(),
            ok: true,
            content: "---\ntitle: Chapter One".into(),
            details: None,
        }),
        line(LogRecord::Assistant {
            text: String::new(),
            tool_calls: vec![
                ToolCall {
                    id: "c2".into(),
                    name: "bash".into(),
                    arguments: json!({"command": "rm -rf notes"}),
                },
                ToolCall {
                    id: "c3".into(),
                    name: "write".into(),
                    arguments: json!({"path": "manuscript/001-volume/001-chapter/index.md", "content": "x"}),
                },
            ],
        }),
        line(LogRecord::ApprovalRequested {
            approval_id: "ap-1".into(),
            call_id: "c2".into(),
            tool: "bash".into(),
            args: json!({"command": "rm -rf notes"}),
            preview: Preview {
                summary: "Run rm -rf notes".into(),
                body: PreviewBody::Command {
                    command: "rm -rf notes".into(),
                    cwd: "/book".into(),
                    timeout_secs: None,
                },
                targets: vec![],
            },
            mode: Mode::Normal,
        }),
        line(LogRecord::ApprovalResolved {
            approval_id: "ap-1".into(),
            call_id: "c2".into(),
            decision: "reject".into(),
            by: "author".into(),
            reason: Some("keep the notes".into()),
            edited_args: None,
        }),
        line(LogRecord::ToolResult {
            call_id: "c2".into(),
            tool: "bash".into(),
            ok: false,
            content: "rejected by the author".into(),
            details: None,
        }),
        line(LogRecord::ModeChange {
            from: Mode::Plan,
            to: Mode::Normal,
            by: "author".into(),
        }),
        line(LogRecord::ApprovalRequested {
            approval_id: "ap-2".into(),
            call_id: "c3".into(),
            tool: "write".into(),
            args: json!({"path": "manuscript/001-volume/001-chapter/index.md", "content": "x"}),
            preview: Preview {
                summary: "Edit manuscript/001-volume/001-chapter/index.md (+1 -1)".into(),
                body: PreviewBody::Text {
                    text: String::new(),
                },
                targets: vec![],
            },
            mode: Mode::Normal,
        }),
    ]
}

/// Render the app into a `w`×`h` test terminal and return the screen text.
pub fn render(app: &mut AppState, w: u16, h: u16) -> String {
    app.update(Action::Resize(w, h));
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| nbook::tui::chrome::view(app, f)).unwrap();
    t.backend().to_string()
}

/// Press keys written in keymap notation ("n h i <Enter>"); returns all effects.
pub fn press(app: &mut AppState, keys: &str) -> Vec<Effect> {
    let mut out = Vec::new();
    for k in parse_sequence(keys).unwrap() {
        out.extend(app.handle_key(k));
    }
    out
}
