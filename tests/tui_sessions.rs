//! The Sessions pane as a control surface, driven by keys in keymap notation: the composer
//! (prompt on an idle session, steer on a running one, follow-up with its own key, empty
//! messages refused, refusals from the agent host), cancelling a run, the transcript cursor
//! (expanding tool calls), per-message usage and the task list, the new-session form, the
//! jobs view, and questions answered from the Approvals pane. Snapshots of each at 80×24 and
//! 120×40.

mod tui_support;

use nbook::engine::agents::{InvokeMode, InvokeOutcome};
use nbook::engine::inputs::{Answer, InputRequest, InputSource, Question, QuestionOption};
use nbook::engine::jobs::{DeliveryStatus, JobKind, JobProgress, JobSnapshot, JobStatus};
use nbook::engine::{EngineEvent, LogLine, LogRecord, Mode, SessionState, ToolCall};
use nbook::tui::action::{Action, AnswerRefusal, Command, Effect};
use nbook::tui::app::{AppState, Pane};
use nbook::tui::input::{text_of, Overlay};
use nbook::tui::sessions::{Delivery, Entry, SessionsView, TaskStatus};
use serde_json::json;
use tui_support::*;

fn app_with(state: SessionState) -> AppState {
    let (mut app, _) = empty_app_with(
        100,
        30,
        vec![session("1", "leader.default", Mode::Normal, state, None)],
        vec![],
    );
    press(&mut app, "4");
    assert_eq!(app.focus, Pane::Sessions);
    // The transcript as the log read delivers it: just the header.
    let fx = press(&mut app, "r");
    let Some(Effect::LoadSessionLog { ticket, .. }) = fx.first() else {
        panic!("{fx:?}")
    };
    app.update(Action::SessionLogLoaded {
        ticket: *ticket,
        session_id: "1".into(),
        result: Ok(transcript().into_iter().take(1).collect()),
    });
    app
}

fn invoke(text: &str, mode: InvokeMode) -> Effect {
    Effect::Invoke {
        session_id: "1".into(),
        text: text.into(),
        mode,
    }
}

fn status(app: &AppState) -> String {
    app.status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default()
}

fn draft(app: &AppState) -> String {
    app.sessions.draft().map(text_of).unwrap_or_default()
}

#[test]
fn enter_on_an_idle_session_sends_a_prompt() {
    let mut app = app_with(SessionState::Idle);
    assert!(press(&mut app, "i").is_empty());
    assert!(app.sessions.composing);
    // Keys the Sessions pane binds (n, b, x, q) type text in the composer.
    let fx = press(&mut app, "n b x q <Space> h i <Enter>");
    assert_eq!(fx, [invoke("nbxq hi", InvokeMode::Prompt)]);
    assert_eq!(draft(&app), "", "the composer is cleared");
    assert!(app.sessions.composing, "it stays open for the next message");
    let out = &app.sessions.outbox["1"];
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].delivery, Delivery::Sending);
}

#[test]
fn enter_on_a_running_session_steers_and_the_follow_up_keys_queue() {
    let mut app = app_with(SessionState::Running);
    press(&mut app, "<Enter>");
    assert!(app.sessions.composing);
    assert_eq!(
        press(&mut app, "f a s t e r <Enter>"),
        [invoke("faster", InvokeMode::Steer)]
    );
    assert_eq!(
        press(&mut app, "t h e n <A-Enter>"),
        [invoke("then", InvokeMode::Followup)]
    );
    assert_eq!(
        press(&mut app, "a n d <C-f>"),
        [invoke("and", InvokeMode::Followup)]
    );
    // Waiting for the author counts as running.
    let mut app = app_with(SessionState::WaitingApproval);
    assert_eq!(
        press(&mut app, "i s <Enter>"),
        [invoke("s", InvokeMode::Steer)]
    );
}

#[test]
fn follow_up_on_an_idle_session_goes_as_a_prompt_and_says_so() {
    let mut app = app_with(SessionState::Idle);
    assert_eq!(
        press(&mut app, "i g o <A-Enter>"),
        [invoke("go", InvokeMode::Prompt)]
    );
    assert!(status(&app).contains("not running"), "{}", status(&app));
}

#[test]
fn an_empty_message_is_refused() {
    let mut app = app_with(SessionState::Idle);
    assert!(press(&mut app, "i <Enter>").is_empty());
    assert!(press(&mut app, "<Space> <Space> <Enter>").is_empty());
    assert!(status(&app).contains("Nothing to send"), "{}", status(&app));
    assert!(app.sessions.outbox.get("1").is_none_or(Vec::is_empty));
}

#[test]
fn ctrl_j_inserts_a_new_line_and_esc_leaves_keeping_the_draft() {
    let mut app = app_with(SessionState::Idle);
    press(&mut app, "i a <C-j> b");
    assert_eq!(draft(&app), "a\nb");
    press(&mut app, "<Esc>");
    assert!(!app.sessions.composing);
    assert_eq!(draft(&app), "a\nb", "the draft is kept");
    // Back in: the same draft; Enter sends both lines.
    assert_eq!(
        press(&mut app, "i <Enter>"),
        [invoke("a\nb", InvokeMode::Prompt)]
    );
}

#[test]
fn drafts_belong_to_their_session() {
    let (mut app, _) = empty_app_with(
        100,
        30,
        vec![
            session(
                "1",
                "leader.default",
                Mode::Normal,
                SessionState::Idle,
                None,
            ),
            session("2", "writer", Mode::Normal, SessionState::Idle, Some("1")),
        ],
        vec![],
    );
    press(&mut app, "4 i o n e <Esc> k");
    assert_eq!(app.sessions.selected().unwrap().id, "1");
    assert_eq!(draft(&app), "");
    press(&mut app, "j");
    assert_eq!(draft(&app), "one");
}

#[test]
fn a_refusal_from_the_host_puts_the_message_back() {
    let mut app = app_with(SessionState::Running);
    press(&mut app, "i h u r r y <Enter>");
    app.update(Action::InvokeAdmitted {
        session_id: "1".into(),
        text: "hurry".into(),
        mode: InvokeMode::Steer,
        result: Err(
            "active_invocation_required: session 1 is idle; use mode \"prompt\" to start it".into(),
        ),
    });
    assert!(status(&app).contains("active_invocation_required"));
    assert!(status(&app).contains("back in the composer"));
    assert_eq!(draft(&app), "hurry");
    assert!(app.sessions.outbox["1"].is_empty());
}

#[test]
fn admitted_steers_queue_until_the_log_shows_them() {
    let mut app = app_with(SessionState::Running);
    press(&mut app, "i h u r r y <Enter>");
    app.update(Action::InvokeAdmitted {
        session_id: "1".into(),
        text: "hurry".into(),
        mode: InvokeMode::Steer,
        result: Ok(()),
    });
    assert_eq!(app.sessions.outbox["1"][0].delivery, Delivery::Queued);
    assert!(status(&app).contains("next turn"));
    app.update(Action::Engine(EngineEvent::Log {
        session_id: "1".into(),
        line: LogLine {
            ts: T0.into(),
            record: LogRecord::User {
                text: "hurry".into(),
            },
        },
    }));
    assert!(app.sessions.outbox["1"].is_empty());
}

#[test]
fn a_failed_run_marks_the_message_and_says_why() {
    let mut app = app_with(SessionState::Idle);
    press(&mut app, "i g o <Enter>");
    app.update(Action::InvokeFinished {
        session_id: "1".into(),
        text: "go".into(),
        outcome: InvokeOutcome {
            status: "error".into(),
            session_id: "1".into(),
            final_message: String::new(),
            data: serde_json::Value::Null,
            error: Some("no model for profile leader.default: set [defaults] model".into()),
            stats: None,
        },
    });
    assert!(matches!(
        &app.sessions.outbox["1"][0].delivery,
        Delivery::Failed(e) if e.contains("no model")
    ));
    assert!(status(&app).contains("no model"));
    let screen = render(&mut app, 120, 40);
    assert!(screen.contains("› go"), "{screen}");
    assert!(screen.contains("✗ not delivered: no model"), "{screen}");
}

#[test]
fn cancel_keys_stop_a_running_session_only() {
    let mut app = app_with(SessionState::Running);
    let cancel = Effect::CancelRun {
        session_id: "1".into(),
    };
    assert_eq!(press(&mut app, "x"), std::slice::from_ref(&cancel));
    assert_eq!(press(&mut app, "<Esc>"), std::slice::from_ref(&cancel));
    assert_eq!(press(&mut app, "<C-c>"), std::slice::from_ref(&cancel));
    // In the composer Ctrl+C cancels the run too (and the draft stays).
    assert_eq!(press(&mut app, "i w a i t <C-c>"), [cancel]);
    assert_eq!(draft(&app), "wait");
    let mut app = app_with(SessionState::Idle);
    assert!(press(&mut app, "x").is_empty());
    assert!(
        status(&app).contains("no run to cancel"),
        "{}",
        status(&app)
    );
}

#[test]
fn shift_tab_in_the_composer_switches_the_mode() {
    let mut app = app_with(SessionState::Idle);
    assert_eq!(
        press(&mut app, "i <S-Tab>"),
        [Effect::SetMode {
            session_id: "1".into(),
            mode: Mode::Discuss
        }]
    );
    assert!(app.sessions.composing);
}

#[test]
fn compose_without_a_session_points_at_new_session() {
    let (mut app, _) = empty_app(100, 30);
    press(&mut app, "4 i");
    assert!(!app.sessions.composing);
    assert!(status(&app).contains("n starts one"), "{}", status(&app));
}

fn line(record: LogRecord) -> LogLine {
    LogLine {
        ts: T0.into(),
        record,
    }
}

/// A transcript with per-message usage, a tool-only message, and a task list.
fn rich_log() -> Vec<LogLine> {
    let mut lines = transcript();
    lines.insert(
        3,
        line(LogRecord::Usage {
            input_tokens: 1_204,
            output_tokens: 310,
            cost: 0.0031,
            cached_input_tokens: 0,
            reasoning_tokens: 0,
            estimated: false,
        }),
    );
    lines.push(line(LogRecord::Custom {
        key: "agent.tasks".into(),
        value: json!({"title": "Chapter one", "steps": [
            {"id": "1", "text": "Read the chapter", "status": "completed"},
            {"id": "2", "text": "Tighten the opening", "status": "in_progress"},
            {"id": "3", "text": "Check the lorebook", "status": "pending", "note": "Mira's age"}
        ]}),
    }));
    lines.push(line(LogRecord::Custom {
        key: "ui.model".into(),
        value: json!("local-qwen"),
    }));
    lines.push(line(LogRecord::Assistant {
        text: String::new(),
        tool_calls: vec![ToolCall {
            id: "c4".into(),
            name: "read".into(),
            arguments: json!({"path": "lorebook/character/mira/index.md"}),
        }],
    }));
    lines.push(line(LogRecord::Usage {
        input_tokens: 2_000,
        output_tokens: 12,
        cost: 0.002,
        cached_input_tokens: 0,
        reasoning_tokens: 0,
        estimated: false,
    }));
    lines.push(line(LogRecord::ToolResult {
        call_id: "c4".into(),
        tool: "read".into(),
        ok: true,
        content: "# Mira\nA harbour pilot, thirty-one.\nShe counts boats.".into(),
        details: None,
    }));
    lines
}

/// The full fixture app on the Sessions pane with `rich_log` as session 1's transcript.
fn rich_app(w: u16, h: u16) -> AppState {
    let (mut app, _) = full_app(w, h);
    app.focus = Pane::Sessions;
    let fx = app.update(Action::Cmd(Command::Refresh));
    let ticket = fx
        .iter()
        .find_map(|f| match f {
            Effect::LoadSessionLog { ticket, .. } => Some(*ticket),
            _ => None,
        })
        .unwrap();
    app.update(Action::SessionLogLoaded {
        ticket,
        session_id: "1".into(),
        result: Ok(rich_log()),
    });
    app
}

#[test]
fn usage_goes_on_its_message_and_tasks_and_model_are_read_from_the_log() {
    let app = rich_app(120, 40);
    let tr = app.sessions.transcript.as_ref().unwrap();
    let usage = tr.entries.iter().find_map(|e| match e {
        Entry::Assistant { usage, .. } => *usage,
        _ => None,
    });
    assert_eq!(usage.unwrap().input_tokens, 1_204);
    let tool_usage = tr.entries.iter().find_map(|e| match e {
        Entry::Tool { call_id, usage, .. } if call_id == "c4" => *usage,
        _ => None,
    });
    assert_eq!(tool_usage.unwrap().output_tokens, 12);
    let tasks = tr.tasks.as_ref().unwrap();
    assert_eq!(tasks.steps.len(), 3);
    assert_eq!(tasks.steps[1].status, TaskStatus::InProgress);
    assert_eq!(tr.model.as_deref(), Some("local-qwen"));
}

#[test]
fn the_transcript_cursor_expands_tool_calls() {
    let mut app = rich_app(120, 40);
    press(&mut app, "l");
    assert!(app.sessions.in_transcript);
    let n = app.sessions.transcript.as_ref().unwrap().entries.len();
    assert_eq!(app.sessions.cursor, n - 1, "starts on the last entry");
    // The last entry is the read of c4.
    press(&mut app, "<Enter>");
    assert!(app
        .sessions
        .transcript
        .as_ref()
        .unwrap()
        .expanded
        .contains("c4"));
    let screen = render(&mut app, 120, 40);
    assert!(screen.contains("A harbour pilot, thirty-one."), "{screen}");
    assert!(screen.contains("\"path\": \"lorebook/character/mira/index.md\""));
    press(&mut app, "<Space>");
    assert!(app
        .sessions
        .transcript
        .as_ref()
        .unwrap()
        .expanded
        .is_empty());
    // A note does not expand (the write call reads after its approval notes: two up).
    press(&mut app, "k k");
    press(&mut app, "<Enter>");
    assert!(status(&app).contains("Only tool calls expand"));
    press(&mut app, "h");
    assert!(!app.sessions.in_transcript);
    // j/k move the session list again.
    press(&mut app, "j");
    assert_eq!(app.sessions.selected().unwrap().id, "2");
}

fn request() -> InputRequest {
    let opt = |l: &str, d: Option<&str>| QuestionOption {
        label: l.into(),
        description: d.map(str::to_string),
    };
    InputRequest {
        id: "call-ask".into(),
        session_id: "1".into(),
        source: InputSource::Agent,
        title: "Before I draft chapter three".into(),
        questions: vec![
            Question {
                header: Some("Tone".into()),
                question: "How should the storm scene feel?".into(),
                options: vec![
                    opt("bleak", Some("nobody is safe")),
                    opt("warm", Some("the crew holds together")),
                ],
                multi: false,
            },
            Question {
                header: None,
                question: "Which threads should it touch?".into(),
                options: vec![
                    opt("the letter", None),
                    opt("the watch", None),
                    opt("Mira's father", None),
                ],
                multi: true,
            },
            Question {
                header: None,
                question: "What is the boat called?".into(),
                options: vec![],
                multi: false,
            },
        ],
        requested_at: "2026-03-01T10:00:30Z".into(),
    }
}

fn question_app(w: u16, h: u16) -> AppState {
    let (mut app, _) = full_app(w, h);
    app.update(Action::Engine(EngineEvent::InputRequested {
        request: request(),
    }));
    app.focus = Pane::Approvals;
    app.approvals.selected = app.approvals.len() - 1;
    app.status = None;
    app
}

#[test]
fn a_question_waits_in_approvals_beside_the_calls() {
    let (mut app, _) = full_app(100, 30);
    app.update(Action::Engine(EngineEvent::InputRequested {
        request: request(),
    }));
    assert!(
        status(&app).contains("asks: Before I draft"),
        "{}",
        status(&app)
    );
    assert_eq!(app.approvals.len(), 4);
    assert_eq!(app.approvals.question_count(), 1);
    assert!(app.quit_concerns().iter().any(|c| c.contains("question")));
    // Approval keys on a question say what to do instead.
    press(&mut app, "5 G");
    assert!(press(&mut app, "y").is_empty());
    assert!(status(&app).contains("is a question"), "{}", status(&app));
    // Withdrawn (its run was cancelled): gone.
    app.update(Action::Engine(EngineEvent::InputResolved {
        id: "call-ask".into(),
        outcome: "withdrawn".into(),
    }));
    assert_eq!(app.approvals.question_count(), 0);
}

#[test]
fn the_answer_form_picks_toggles_types_and_sends() {
    let mut app = question_app(100, 30);
    press(&mut app, "<Enter>");
    assert!(matches!(app.overlay, Some(Overlay::Answer(_))));
    // Nothing answered: refused here, nothing sent.
    assert!(press(&mut app, "<Enter>").is_empty());
    let Some(Overlay::Answer(f)) = &app.overlay else {
        panic!()
    };
    assert!(f
        .error
        .as_ref()
        .unwrap()
        .contains("Question 1 has no answer"));
    // 2 picks "warm"; Tab; 1 and 3 toggle two threads, 3 again untoggles, 2 adds.
    press(&mut app, "2 <Tab> 1 3 3 2 <Tab>");
    // The third is free text: typing goes to it (digits too).
    press(&mut app, "T h e <Space> H e s t a <Space> 2");
    let fx = press(&mut app, "<Enter>");
    assert_eq!(
        fx,
        [Effect::AnswerInput {
            id: "call-ask".into(),
            answers: vec![
                Answer {
                    question_index: 0,
                    text: "warm".into(),
                    selected_option_index: Some(1),
                    ..Answer::default()
                },
                Answer {
                    question_index: 1,
                    text: "the letter, the watch".into(),
                    selected_option_indexes: vec![0, 1],
                    ..Answer::default()
                },
                Answer {
                    question_index: 2,
                    text: "The Hesta 2".into(),
                    ..Answer::default()
                },
            ]
        }]
    );
    // Sending: a second Enter sends nothing more.
    assert!(press(&mut app, "<Enter>").is_empty());
    // The engine refuses one answer: the form stays with the reason.
    app.update(Action::AnswerChecked {
        id: "call-ask".into(),
        result: Err(AnswerRefusal {
            message: "answer 2: option 9 does not exist".into(),
            stays: true,
        }),
    });
    let Some(Overlay::Answer(f)) = &app.overlay else {
        panic!("the form stays open")
    };
    assert!(!f.sending);
    assert!(f.error.as_ref().unwrap().contains("option 9"));
    // Accepted: the form closes and the question leaves the list.
    assert_eq!(press(&mut app, "<Enter>").len(), 1);
    app.update(Action::AnswerChecked {
        id: "call-ask".into(),
        result: Ok(()),
    });
    assert!(app.overlay.is_none());
    assert_eq!(app.approvals.question_count(), 0);
    assert!(status(&app).contains("✔ answered"));
}

#[test]
fn skipped_questions_go_as_ignored_and_esc_keeps_the_question_waiting() {
    let mut app = question_app(100, 30);
    press(&mut app, "<Enter> <C-x> <C-x> <C-x>");
    let Some(Overlay::Answer(f)) = &app.overlay else {
        panic!()
    };
    assert!(f.answers.iter().all(|a| a.skipped));
    let fx = press(&mut app, "<Enter>");
    let Some(Effect::AnswerInput { answers, .. }) = fx.first() else {
        panic!("{fx:?}")
    };
    assert!(answers.iter().all(|a| a.ignored));
    let mut app = question_app(100, 30);
    press(&mut app, "<Enter> <Esc>");
    assert!(app.overlay.is_none());
    assert_eq!(app.approvals.question_count(), 1);
    assert!(status(&app).contains("still waiting"));
}

#[test]
fn the_new_session_form_creates_and_focuses_the_composer() {
    let mut app = app_with(SessionState::Idle);
    press(&mut app, "n");
    assert!(matches!(app.overlay, Some(Overlay::NewSession(_))));
    let fx = press(
        &mut app,
        "w r <Tab> <Down> <Tab> D r a f t <Space> t w o <Enter>",
    );
    assert_eq!(
        fx,
        [Effect::CreateSession {
            profile: "writer".into(),
            agent: None,
            model: Some("local-qwen".into()),
            title: "Draft two".into(),
            mode: Mode::Normal,
        }]
    );
    let fx = app.update(Action::SessionCreated(Ok(session(
        "7",
        "writer",
        Mode::Normal,
        SessionState::Idle,
        None,
    ))));
    assert!(app.overlay.is_none());
    assert_eq!(app.sessions.selected().unwrap().id, "7");
    assert!(app.sessions.composing);
    assert!(
        matches!(fx.as_slice(), [Effect::LoadSessionLog { session_id, .. }] if session_id == "7")
    );
    // Without a title the profile's name is used; without a model, the profile default.
    press(&mut app, "<Esc> n");
    let fx = press(&mut app, "<Enter>");
    assert!(matches!(
        fx.as_slice(),
        [Effect::CreateSession { profile, model: None, title, .. }]
            if profile == "leader.default" && title == "Lead author session"
    ));
    app.update(Action::SessionCreated(Err("no such profile".into())));
    let Some(Overlay::NewSession(f)) = &app.overlay else {
        panic!("the form stays with the error")
    };
    assert!(f.error.as_ref().unwrap().contains("no such profile"));
}

fn job(id: &str, kind: JobKind, status: JobStatus, progress: Option<(u64, u64)>) -> JobSnapshot {
    JobSnapshot {
        job_id: id.into(),
        kind,
        title: match kind {
            JobKind::Workflow => "workflow chapter-pass".into(),
            JobKind::InvokeAgent => "writer #2".into(),
            JobKind::Bash => "wc -w manuscript".into(),
            JobKind::Research => "research RR-001: salt tax in Lüneburg 1820".into(),
        },
        owner_session_id: Some("1".into()),
        origin_tool_call_id: None,
        status,
        created_at: "2026-03-01T09:58:00Z".into(),
        ended_at: status
            .is_final()
            .then(|| "2026-03-01T09:59:30Z".to_string()),
        reference: match kind {
            JobKind::InvokeAgent => json!({"sessionId": "2"}),
            JobKind::Workflow => json!({"workflowKey": "chapter-pass"}),
            JobKind::Bash => json!({"command": "wc -w manuscript/*/*/index.md"}),
            JobKind::Research => json!({"researchRunId": "RR-001", "requestedBy": "1"}),
        },
        preview: Some("Check every chapter against its brief".into()),
        error: (status == JobStatus::Failed).then(|| "exit status 1".to_string()),
        progress: progress.map(|(done, total)| JobProgress {
            phase: Some("chapters".into()),
            done,
            total,
        }),
        delivery_status: DeliveryStatus::NotRequired,
        delivery_error: None,
    }
}

fn jobs_app(w: u16, h: u16) -> AppState {
    let (mut app, _) = full_app(w, h);
    app.focus = Pane::Sessions;
    for j in [
        job("job-1", JobKind::Bash, JobStatus::Failed, None),
        job("job-2", JobKind::InvokeAgent, JobStatus::Completed, None),
        job("job-3", JobKind::Workflow, JobStatus::Running, Some((3, 7))),
        job("job-4", JobKind::InvokeAgent, JobStatus::Waiting, None),
    ] {
        app.update(Action::Job(j));
    }
    press(&mut app, "b");
    app.sessions.jobs.selected = 1;
    app.status = None;
    app
}

#[test]
fn the_jobs_view_lists_newest_first_and_cancels_with_the_id() {
    let mut app = jobs_app(100, 30);
    assert_eq!(app.sessions.view, SessionsView::Jobs);
    let ids: Vec<&str> = app
        .sessions
        .jobs
        .list
        .iter()
        .map(|j| j.job_id.as_str())
        .collect();
    assert_eq!(ids, ["job-4", "job-3", "job-2", "job-1"]);
    assert_eq!(
        press(&mut app, "x"),
        [Effect::CancelJob {
            job_id: "job-3".into()
        }]
    );
    assert!(status(&app).contains("job-3"));
    // A finished job: nothing to cancel.
    press(&mut app, "j");
    assert!(press(&mut app, "x").is_empty());
    assert!(status(&app).contains("already completed"));
    // Progress updates land on the same row; a new job keeps the selection.
    app.update(Action::Job(job(
        "job-3",
        JobKind::Workflow,
        JobStatus::Running,
        Some((5, 7)),
    )));
    app.update(Action::Job(job(
        "job-5",
        JobKind::Bash,
        JobStatus::Running,
        None,
    )));
    assert_eq!(app.sessions.jobs.selected().unwrap().job_id, "job-2");
    // Enter goes to the session the agent job runs.
    press(&mut app, "<Enter>");
    assert_eq!(app.sessions.view, SessionsView::Sessions);
    assert_eq!(app.sessions.selected().unwrap().id, "2");
    // b toggles back; Esc leaves the jobs view.
    press(&mut app, "b");
    assert_eq!(app.sessions.view, SessionsView::Jobs);
    press(&mut app, "<Esc>");
    assert_eq!(app.sessions.view, SessionsView::Sessions);
}

// Snapshots.

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

fn snap(name: &str, build: impl Fn(u16, u16) -> AppState) {
    for (w, h) in SIZES {
        let mut app = build(w, h);
        let screen = render(&mut app, w, h);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), screen);
    }
}

#[test]
fn snapshot_composer_with_usage_tasks_and_a_queued_steer() {
    snap("sessions_composer", |w, h| {
        let mut app = rich_app(w, h);
        if let Some(s) = app.sessions.list.iter_mut().find(|s| s.id == "1") {
            s.state = SessionState::Running;
        }
        press(&mut app, "i k e e p <Space> i t <Space> s h o r t <Enter>");
        app.update(Action::InvokeAdmitted {
            session_id: "1".into(),
            text: "keep it short".into(),
            mode: InvokeMode::Steer,
            result: Ok(()),
        });
        press(&mut app, "a n d <Space> t h e n <C-j> c h e c k");
        app.status = None;
        app
    });
}

#[test]
fn snapshot_transcript_with_an_expanded_tool_call() {
    snap("sessions_expanded", |w, h| {
        let mut app = rich_app(w, h);
        press(&mut app, "l <Enter>");
        app.status = None;
        app
    });
}

#[test]
fn snapshot_jobs_view_with_progress() {
    snap("sessions_jobs", jobs_app);
}

#[test]
fn snapshot_jobs_view_with_a_research_run() {
    snap("sessions_jobs_research", |w, h| {
        let mut app = jobs_app(w, h);
        let mut j = job("job-5", JobKind::Research, JobStatus::Running, Some((3, 7)));
        if let Some(p) = j.progress.as_mut() {
            p.phase = Some("fetch".into());
        }
        // A research run's job has no owner session: its result is read with fn_research_get.
        j.owner_session_id = None;
        j.preview = Some("salt tax in Lüneburg 1820".into());
        app.update(Action::Job(j));
        app.sessions.jobs.selected = 0;
        app
    });
}

#[test]
fn snapshot_jobs_view_empty() {
    snap("sessions_jobs_empty", |w, h| {
        let (mut app, _) = empty_app(w, h);
        press(&mut app, "4 b");
        app
    });
}

#[test]
fn snapshot_question_in_approvals() {
    snap("question_preview", question_app);
}

#[test]
fn snapshot_answer_form() {
    snap("answer_form", |w, h| {
        let mut app = question_app(w, h);
        press(&mut app, "<Enter> 2 <Tab> 1 3 <Down>");
        app
    });
}

#[test]
fn snapshot_answer_form_refused() {
    snap("answer_form_refused", |w, h| {
        let mut app = question_app(w, h);
        press(&mut app, "<Enter> 1 <Tab> <Tab> <Enter>");
        app
    });
}

#[test]
fn snapshot_new_session_form() {
    snap("new_session", |w, h| {
        let (mut app, _) = full_app(w, h);
        press(&mut app, "4 n w r <Tab>");
        app
    });
}

#[test]
fn small_and_odd_sizes_do_not_panic() {
    for (w, h) in [
        (20, 6),
        (30, 8),
        (45, 20),
        (49, 12),
        (50, 10),
        (61, 15),
        (200, 60),
    ] {
        let mut app = rich_app(w, h);
        press(&mut app, "i a <C-j> b");
        render(&mut app, w, h);
        press(&mut app, "<Esc> l <Enter>");
        render(&mut app, w, h);
        press(&mut app, "h n");
        render(&mut app, w, h);
        let mut app = jobs_app(w, h);
        render(&mut app, w, h);
        let mut app = question_app(w, h);
        press(&mut app, "<Enter> 1 <Tab> 2");
        render(&mut app, w, h);
    }
}
