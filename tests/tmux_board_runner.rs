//! The board's scheduler end to end with the real binary in a real terminal (tmux) and a
//! scripted model server speaking the OpenAI wire format (tests/provider_support): nbook opens
//! on a project with one task and the Board shows it move — triage plans it, it goes to
//! Drafting with the executor on its card, then to Review, approved by the reviewer — `S`
//! stops the scheduler and `s` steers the task.
//!
//! Needs tmux. Without it the test is skipped with a message, except under CI (`CI` set),
//! where a missing tmux is a failure.

mod provider_support;
mod tmux_support;

use std::time::Duration;

use provider_support::*;
use serde_json::{json, Value};
use tmux_support::{skip_without_tmux, Tmux};

const BIN: &str = env!("CARGO_BIN_EXE_nbook");

fn chunk(delta: Value, finish: Option<&str>) -> String {
    json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}).to_string()
}

/// One tool call, sent after `wait` (so the screen can be seen between stages).
fn tool_call(id: &str, name: &str, args: &Value, wait: u64) -> Reply {
    Reply::sse(vec![
        Step::Sleep(Duration::from_millis(wait)),
        Step::Chunk(format!(
            "data: {}\n\n",
            chunk(
                json!({"tool_calls": [{"index": 0, "id": id, "type": "function",
                       "function": {"name": name, "arguments": args.to_string()}}]}),
                None,
            )
        )),
        Step::Chunk(format!(
            "data: {}\n\n",
            chunk(json!({}), Some("tool_calls"))
        )),
        Step::Chunk("data: [DONE]\n\n".into()),
    ])
}

fn text(t: &str) -> Reply {
    Reply::data(&[chunk(json!({"content": t}), Some("stop")), "[DONE]".into()])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_board_shows_a_task_moving_through_its_stages() {
    if skip_without_tmux() {
        return;
    }
    let plan = "# Task: NB-001 — Draft chapter 12\n\n## Mission\nDraft chapter 12.\n\n## Steps\n### Step 0: Preflight\n### Step 1: Draft it\n\n## File Scope\n- manuscript/012-chapter.md\n\n## Acceptance Criteria\n- Done.\n";
    let server = Server::start(vec![
        tool_call(
            "c1",
            "fn_task_prompt_write",
            &json!({"content": plan}),
            1500,
        ),
        text("Planned."),
        tool_call(
            "c2",
            "fn_task_update",
            &json!({"step": 0, "status": "done"}),
            2500,
        ),
        tool_call("c3", "fn_task_done", &json!({"summary": "Drafted."}), 1500),
        Reply::sse(vec![
            Step::Sleep(Duration::from_millis(1500)),
            Step::Chunk(format!(
                "data: {}\n\n",
                chunk(json!({"content": "APPROVE\nReads well."}), Some("stop"))
            )),
            Step::Chunk("data: [DONE]\n\n".into()),
        ]),
        text("No merge tool on this branch."),
    ])
    .await;
    let config = format!(
            "[providers.local]\nkind = \"openai\"\nbase_url = \"{}\"\n\
             [models.small]\nprovider = \"local\"\nname = \"smollm2\"\n\
             [defaults]\nmodel = \"small\"\n\
             [approval.tools]\nfn_task_prompt_write = \"allow\"\nfn_task_update = \"allow\"\nfn_task_done = \"allow\"\n",
            server.base_url()
        );
    let book = tmux_support::Book::init(Some(&config));
    let (home, p) = (&book.home, book.path.clone());
    let nbook = |args: &[&str]| book.nbook(args);
    let out = nbook(&[
        "board",
        "create",
        "Draft chapter 12 from its brief",
        "--project",
        &p,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let t = Tmux::start(
        &format!("nbook-e2e-runner-{}", std::process::id()),
        &format!(
            "env NBOOK_HOME='{}' TERM=xterm-256color '{}' '{}'",
            home.display(),
            BIN,
            p
        ),
    );
    let long = Duration::from_secs(60);
    t.wait_for("the TUI", long, |s| s.contains("1 Files"));
    t.keys(&["6"]);
    t.wait_for("triage at work", long, |s| {
        s.contains("Scheduler on · 1/2 running") && s.contains("▶ triage")
    });
    let s = t.wait_for("the executor at work in Drafting", long, |s| {
        s.contains("Drafting (1)") && s.contains("▶ executor")
    });
    assert!(s.contains("Planning (0)"), "{s}");
    t.wait_for("the reviewer at work in Review", long, |s| {
        s.contains("Review (1)") && s.contains("▶ reviewer")
    });
    t.wait_for("the approval, then the merger parking it", long, |s| {
        s.contains("needs-author") || s.contains("approved")
    });
    // S stops the scheduler.
    t.keys(&["S"]);
    t.wait_for("the stopped scheduler", long, |s| {
        s.contains("Scheduler off")
    });
    // s steers the task: stored for its next session (none runs now).
    t.keys(&["s"]);
    t.wait_for("the steering prompt", long, |s| s.contains("Steer NB-001"));
    t.type_text("Keep the storm for the last scene");
    t.keys(&["Enter"]);
    t.wait_for("the comment stored", long, |s| {
        s.contains("Steering comment")
    });
    t.keys(&["q"]);
    std::thread::sleep(Duration::from_millis(500));

    let out = nbook(&["board", "show", "NB-001", "--json", "--project", &p]);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(text.contains("Review APPROVE"), "{text}");
    assert!(
        text.contains("Steering comment added: Keep the storm for the last scene"),
        "{text}"
    );
    assert!(server.requests().len() >= 5);
}
