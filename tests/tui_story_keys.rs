//! Key-sequence tests of the Story pane on a real temporary project built through the plot
//! services: the effects of each key run through the pane's real jobs (as the runtime runs
//! them off the UI task) and the results are checked in the state and in the database.

mod tui_story_support;

use nbook::plot::ledger::NodeRef;
use nbook::tui::action::{Action, Command, Effect};
use nbook::tui::app::Pane;
use nbook::tui::input::{editor, text_of, Overlay};
use nbook::tui::story::data::Parent;
use nbook::tui::story::jobs::{DetailKey, StoryJob};
use nbook::tui::story::overlay::StoryOverlay;
use nbook::tui::story::{RowNode, StoryView};
use tui_story_support::*;

fn refs(app: &nbook::tui::app::AppState) -> Vec<Option<NodeRef>> {
    app.story.rows.iter().map(|r| r.node.node()).collect()
}

fn status(app: &nbook::tui::app::AppState) -> String {
    app.status
        .as_ref()
        .map(|m| m.text.clone())
        .unwrap_or_default()
}

fn story_overlay(app: &mut nbook::tui::app::AppState) -> &mut StoryOverlay {
    match &mut app.overlay {
        Some(Overlay::Story(o)) => o,
        other => panic!("a Story overlay expected, got {other:?}"),
    }
}

/// Replace the edit form's text (as if typed).
fn set_edit_text(app: &mut nbook::tui::app::AppState, f: impl Fn(String) -> String) {
    match story_overlay(app) {
        StoryOverlay::Edit { input, .. } => *input = editor(&f(text_of(input))),
        _ => panic!("edit form expected"),
    }
}

fn confirm_lines(app: &mut nbook::tui::app::AppState) -> Vec<String> {
    match story_overlay(app) {
        StoryOverlay::Confirm { title, lines, .. } => {
            let mut l = vec![title.clone()];
            l.extend(lines.iter().cloned());
            l
        }
        _ => panic!("confirmation expected"),
    }
}

#[test]
fn t_toggles_the_trees_and_p_d_show_the_ledgers() {
    let b = book();
    let i = &b.ids;
    let mut app = b.app(120, 40);
    assert_eq!(app.focus, Pane::Story);
    assert_eq!(app.story.view, StoryView::Carrier);
    assert_eq!(
        refs(&app),
        [
            Some(NodeRef::Act(i.act)),
            Some(NodeRef::Chapter(i.ch_oil)),
            Some(NodeRef::Chapter(i.ch_relief)),
            None, // chapters without an act
            Some(NodeRef::Chapter(i.ch_fragments)),
        ]
    );
    b.keys(&mut app, "t");
    assert_eq!(app.story.view, StoryView::Causal);
    assert_eq!(
        refs(&app),
        [
            Some(NodeRef::Phase(i.phase)),
            Some(NodeRef::Thread(i.t_book)),
            None, // threads without a phase
            Some(NodeRef::Thread(i.t_father)),
        ]
    );
    // Promises: open first (the paid-off one is fulfilled), with the derived stage.
    b.keys(&mut app, "p");
    assert_eq!(app.story.view, StoryView::Promises);
    assert_eq!(
        refs(&app),
        [
            Some(NodeRef::Promise(i.p_light)),
            Some(NodeRef::Promise(i.p_who))
        ]
    );
    let d = app.story.data.clone().unwrap();
    assert_eq!(d.promise(i.p_who).unwrap().status, "fulfilled");
    assert_eq!(d.promise(i.p_who).unwrap().derived_stage, "paid_off");
    assert_eq!(d.promise(i.p_light).unwrap().derived_stage, "echoed");
    b.keys(&mut app, "d");
    assert_eq!(
        refs(&app),
        [
            Some(NodeRef::Decision(i.d_thomas)),
            Some(NodeRef::Decision(i.d_bell))
        ]
    );
    // t from a ledger returns to the last tree; d again too.
    b.keys(&mut app, "t");
    assert_eq!(app.story.view, StoryView::Causal);
    b.keys(&mut app, "d d");
    assert_eq!(app.story.view, StoryView::Causal);
}

#[test]
fn l_loads_scenes_off_the_ui_task_and_h_closes() {
    let b = book();
    let i = &b.ids;
    let mut app = b.app(120, 40);
    b.select(&mut app, NodeRef::Chapter(i.ch_oil));
    let fx = press(&mut app, "l");
    // Nothing is read on the UI task: a job is asked for and a loading row shows meanwhile.
    assert!(fx.iter().any(|f| matches!(
        f,
        Effect::StoryJob { job: StoryJob::Scenes(Parent::Chapter(c)), .. } if *c == i.ch_oil
    )));
    assert!(app
        .story
        .rows
        .iter()
        .any(|r| r.node == RowNode::ScenesLoading(Parent::Chapter(i.ch_oil))));
    b.run(&mut app, fx);
    let r = refs(&app);
    assert_eq!(r[1], Some(NodeRef::Chapter(i.ch_oil)));
    assert_eq!(r[2], Some(NodeRef::Scene(i.s_tin)));
    assert_eq!(r[3], Some(NodeRef::Scene(i.s_lamps)));
    assert_eq!(r[4], Some(NodeRef::Chapter(i.ch_relief)));
    // l on an open chapter steps into it; h goes back to the chapter, h again closes it.
    b.keys(&mut app, "l");
    assert_eq!(selected_ref(&app), Some(NodeRef::Scene(i.s_tin)));
    b.keys(&mut app, "h");
    assert_eq!(selected_ref(&app), Some(NodeRef::Chapter(i.ch_oil)));
    b.keys(&mut app, "h");
    assert_eq!(app.story.rows.len(), 5);
    // Reopening uses the cached list: no new job.
    let fx = press(&mut app, "l");
    assert!(!fx.iter().any(|f| matches!(
        f,
        Effect::StoryJob {
            job: StoryJob::Scenes(_),
            ..
        }
    )));
}

#[test]
fn c_and_t_jump_from_a_scene_to_its_chapter_and_thread() {
    let b = book();
    let i = &b.ids;
    let mut app = b.app(120, 40);
    b.keys(&mut app, "t");
    b.select(&mut app, NodeRef::Thread(i.t_book));
    b.keys(&mut app, "l");
    b.select(&mut app, NodeRef::Scene(i.s_boat));
    b.keys(&mut app, "c");
    assert_eq!(app.story.view, StoryView::Carrier);
    assert_eq!(selected_ref(&app), Some(NodeRef::Chapter(i.ch_relief)));
    // Its detail (chapter with brief status) loads for the right-hand view.
    assert!(matches!(
        app.story.detail.shown,
        Some((DetailKey::Node(NodeRef::Chapter(c)), _, Ok(_))) if c == i.ch_relief
    ));
    b.keys(&mut app, "l");
    b.select(&mut app, NodeRef::Scene(i.s_fog));
    b.keys(&mut app, "T");
    assert_eq!(app.story.view, StoryView::Causal);
    assert_eq!(selected_ref(&app), Some(NodeRef::Thread(i.t_book)));
    // An unplaced scene has no chapter to jump to: the status bar says so.
    b.select(&mut app, NodeRef::Thread(i.t_father));
    b.keys(&mut app, "l");
    b.select(&mut app, NodeRef::Scene(i.s_oil));
    b.keys(&mut app, "c");
    assert_eq!(app.story.view, StoryView::Causal);
    assert!(
        status(&app).contains("not placed in a chapter"),
        "{}",
        status(&app)
    );
    // On a non-scene row the keys explain themselves.
    b.select(&mut app, NodeRef::Thread(i.t_father));
    b.keys(&mut app, "c");
    assert!(status(&app).contains("Select a scene first"));
}

#[test]
fn f_filters_by_brief_status_and_by_thread_status() {
    let b = book();
    let i = &b.ids;
    let mut app = b.app(120, 40);
    b.keys(&mut app, "f");
    assert_eq!(app.story.filter(), Some("needs_plot"));
    assert_eq!(refs(&app), [None, Some(NodeRef::Chapter(i.ch_fragments))]);
    b.keys(&mut app, "f");
    assert_eq!(app.story.filter(), Some("needs_world_anchor"));
    assert_eq!(
        refs(&app),
        [
            Some(NodeRef::Act(i.act)),
            Some(NodeRef::Chapter(i.ch_relief))
        ]
    );
    b.keys(&mut app, "f f");
    assert_eq!(app.story.filter(), Some("needs_chapter_brief"));
    assert!(app.story.rows.is_empty());
    b.keys(&mut app, "f");
    assert_eq!(app.story.filter(), Some("ready"));
    assert_eq!(
        refs(&app),
        [Some(NodeRef::Act(i.act)), Some(NodeRef::Chapter(i.ch_oil))]
    );
    b.keys(&mut app, "f");
    assert_eq!(app.story.filter(), None);
    assert_eq!(app.story.rows.len(), 5);
    // The causal tree filters threads by their status, independently.
    b.keys(&mut app, "t f");
    assert_eq!(app.story.filter(), Some("active"));
    assert_eq!(
        refs(&app),
        [
            Some(NodeRef::Phase(i.phase)),
            Some(NodeRef::Thread(i.t_book))
        ]
    );
    b.keys(&mut app, "p f f");
    assert_eq!(app.story.filter(), Some("fulfilled"));
    assert_eq!(refs(&app), [Some(NodeRef::Promise(i.p_who))]);
}

#[test]
fn slash_searches_titles_and_enter_reveals_the_scene() {
    let b = book();
    let i = &b.ids;
    let mut app = b.app(120, 40);
    let fx = b.keys(&mut app, "/");
    assert!(fx.iter().any(|f| matches!(
        f,
        Effect::StoryJob {
            job: StoryJob::SearchIndex(_),
            ..
        }
    )));
    let fx = b.keys(&mut app, "s e c o n d");
    assert!(fx.iter().any(|f| matches!(
        f,
        Effect::StoryJob {
            job: StoryJob::Match { .. },
            ..
        }
    )));
    let items = app.story.search_index.clone().unwrap();
    match story_overlay(&mut app) {
        StoryOverlay::Search { hits, .. } => {
            assert_eq!(items[hits[0].item].node, NodeRef::Scene(i.s_fog));
            assert_eq!(hits[0].indices, [13, 14, 15, 16, 17, 18]);
        }
        _ => panic!("search expected"),
    }
    // Enter reveals it: its chapter opens (scenes load first), then the scene is selected.
    b.keys(&mut app, "<Enter>");
    assert!(app.overlay.is_none());
    assert_eq!(app.story.view, StoryView::Carrier);
    assert_eq!(selected_ref(&app), Some(NodeRef::Scene(i.s_fog)));
    // A promise hit switches to the ledger.
    b.keys(&mut app, "/ l i g h t");
    b.keys(&mut app, "<Enter>");
    assert_eq!(app.story.view, StoryView::Promises);
    assert_eq!(selected_ref(&app), Some(NodeRef::Promise(i.p_light)));
    // Esc closes without moving.
    b.keys(&mut app, "/ t i n <Esc>");
    assert!(app.overlay.is_none());
    assert_eq!(selected_ref(&app), Some(NodeRef::Promise(i.p_light)));
}

#[test]
fn e_edits_as_json_and_the_change_lands_in_the_db() {
    let b = book();
    let i = &b.ids;
    let mut app = b.app(120, 40);
    b.keys(&mut app, "t");
    b.select(&mut app, NodeRef::Thread(i.t_book));
    b.keys(&mut app, "e");
    set_edit_text(&mut app, |t| {
        assert!(t.contains("\"title\": \"The weather book\""), "{t}");
        t.replace("\"The weather book\"", "\"The Weather Book\"")
            .replace("\"status\": \"active\"", "\"status\": \"paused\"")
    });
    let fx = b.keys(&mut app, "<C-s>");
    // Only the changed fields went to the service.
    assert!(fx.iter().any(|f| matches!(f,
        Effect::StoryJob { job: StoryJob::Write(nbook::tui::story::edit::StoryWrite::Update { args, .. }), .. }
            if *args == serde_json::json!({"title": "The Weather Book", "status": "paused"}))));
    assert!(app.overlay.is_none());
    assert_eq!(
        b.text(&format!(
            "SELECT title || '/' || status FROM StoryThread WHERE id = {}",
            i.t_book
        )),
        "The Weather Book/paused"
    );
    assert!(
        status(&app).starts_with("✔ update StoryThread"),
        "{}",
        status(&app)
    );
    // The pane reloaded: the row shows the new title.
    let d = app.story.data.clone().unwrap();
    assert_eq!(d.thread(i.t_book).unwrap().thread.title, "The Weather Book");
    // Saving an unchanged form writes nothing.
    b.keys(&mut app, "e");
    let fx = b.keys(&mut app, "<C-s>");
    assert!(!fx.iter().any(|f| matches!(
        f,
        Effect::StoryJob {
            job: StoryJob::Write(_),
            ..
        }
    )));
    assert!(status(&app).contains("No field changed"));
}

#[test]
fn a_bad_edit_shows_the_services_error_and_writes_nothing() {
    let b = book();
    let i = &b.ids;
    let mut app = b.app(120, 40);
    b.select(&mut app, NodeRef::Chapter(i.ch_relief));
    b.keys(&mut app, "l");
    b.select(&mut app, NodeRef::Scene(i.s_fog));
    let before = std::fs::read(&b.db.db_path).unwrap();
    // Typing breaks the JSON: the form says where, nothing is sent.
    b.keys(&mut app, "e");
    let fx = b.keys(&mut app, "x <C-s>");
    assert!(fx.is_empty());
    match story_overlay(&mut app) {
        StoryOverlay::Edit { error, .. } => {
            assert!(error.as_deref().unwrap().contains("Not valid JSON"))
        }
        _ => panic!(),
    }
    b.keys(&mut app, "<Esc>");
    // A lifecycle rule: the service's error names the field; the form stays open.
    b.keys(&mut app, "e");
    set_edit_text(&mut app, |t| {
        t.replace("\"status\": \"active\"", "\"status\": \"finished\"")
    });
    b.keys(&mut app, "<C-s>");
    match story_overlay(&mut app) {
        StoryOverlay::Edit { error, saving, .. } => {
            let e = error.as_deref().unwrap();
            // The tool's own schema refuses it, as it would an agent's call.
            assert!(e.starts_with("/status: \"finished\" is not one of"), "{e}");
            assert!(e.contains("nothing was changed"), "{e}");
            assert!(saving.is_none());
        }
        _ => panic!(),
    }
    // An unknown field is refused by name.
    set_edit_text(&mut app, |t| t.replacen('{', "{\"titel\": \"x\",", 1));
    b.keys(&mut app, "<C-s>");
    match story_overlay(&mut app) {
        StoryOverlay::Edit { error, .. } => {
            assert!(error
                .as_deref()
                .unwrap()
                .starts_with("/titel: unknown field"))
        }
        _ => panic!(),
    }
    assert_eq!(std::fs::read(&b.db.db_path).unwrap(), before);
}

#[test]
fn archiving_a_scene_reopens_the_promise_it_paid_off() {
    let b = book();
    let i = &b.ids;
    let mut app = b.app(120, 40);
    let promise = format!("SELECT status FROM StoryPromise WHERE id = {}", i.p_who);
    assert_eq!(b.text(&promise), "fulfilled");
    b.select(&mut app, NodeRef::Chapter(i.ch_relief));
    b.keys(&mut app, "l");
    b.select(&mut app, NodeRef::Scene(i.s_boat));
    b.keys(&mut app, "x");
    // The confirmation shows the derived change the archive brings.
    let lines = confirm_lines(&mut app).join("\n");
    assert!(
        lines.contains(&format!("Archive StoryScene #{}?", i.s_boat)),
        "{lines}"
    );
    assert!(
        lines.contains("status: \"written\" → \"archived\""),
        "{lines}"
    );
    assert!(
        lines.contains(&format!("StoryPromise #{} (who-writes-the-book)", i.p_who)),
        "{lines}"
    );
    assert!(
        lines.contains("status: \"fulfilled\" → \"open\""),
        "{lines}"
    );
    // The dry run changed nothing.
    assert_eq!(b.text(&promise), "fulfilled");
    b.keys(&mut app, "y");
    assert_eq!(b.text(&promise), "open");
    assert_eq!(
        b.text(&format!(
            "SELECT status FROM StoryScene WHERE id = {}",
            i.s_boat
        )),
        "archived"
    );
    assert!(
        status(&app).contains("2 records changed"),
        "{}",
        status(&app)
    );
    // Archiving an act is not a thing: the status bar points at delete.
    b.select(&mut app, NodeRef::Act(i.act));
    let fx = b.keys(&mut app, "x");
    assert!(fx.is_empty());
    assert!(status(&app).contains("no archive"));
}

#[test]
fn delete_asks_first_lists_the_cascade_and_n_deletes_nothing() {
    let b = book();
    let i = &b.ids;
    let mut app = b.app(120, 40);
    let before = std::fs::read(&b.db.db_path).unwrap();
    b.keys(&mut app, "t");
    b.select(&mut app, NodeRef::Thread(i.t_father));
    let fx = b.keys(&mut app, "D");
    assert!(!fx.iter().any(|f| matches!(
        f,
        Effect::StoryJob {
            job: StoryJob::Write(_),
            ..
        }
    )));
    let lines = confirm_lines(&mut app);
    assert_eq!(lines[0], "Delete — this cannot be undone");
    assert_eq!(
        lines[1],
        format!(
            "Delete StoryThread #{} (father-and-daughter) for good?",
            i.t_father
        )
    );
    assert!(
        lines.contains(&"  also deletes 2 scenes".to_string()),
        "{lines:?}"
    );
    let fx = b.keys(&mut app, "n");
    assert!(app.overlay.is_none());
    assert!(fx.is_empty());
    assert_eq!(std::fs::read(&b.db.db_path).unwrap(), before);
    // Esc keeps everything too; y deletes with the cascade.
    b.keys(&mut app, "D <Esc>");
    assert_eq!(std::fs::read(&b.db.db_path).unwrap(), before);
    b.keys(&mut app, "D y");
    assert_eq!(b.count("SELECT COUNT(*) FROM StoryThread"), 1);
    assert_eq!(b.count("SELECT COUNT(*) FROM StoryScene"), 3);
    assert!(!refs(&app).contains(&Some(NodeRef::Thread(i.t_father))));
    assert!(
        status(&app).starts_with("✔ delete StoryThread"),
        "{}",
        status(&app)
    );
}

#[test]
fn x_on_a_decision_asks_for_the_note_then_drops_it() {
    let b = book();
    let i = &b.ids;
    let mut app = b.app(120, 40);
    b.keys(&mut app, "d");
    b.select(&mut app, NodeRef::Decision(i.d_thomas));
    b.keys(&mut app, "x");
    assert!(matches!(story_overlay(&mut app), StoryOverlay::Note { .. }));
    b.keys(&mut app, "m o o t <Enter>");
    let lines = confirm_lines(&mut app).join("\n");
    assert!(lines.contains("status: \"open\" → \"dropped\""), "{lines}");
    b.keys(&mut app, "y");
    assert_eq!(
        b.text(&format!(
            "SELECT status || '/' || note FROM StoryDecision WHERE id = {}",
            i.d_thomas
        )),
        "dropped/moot"
    );
    // Dropping without a note is the service's error, shown in the status bar.
    b.select(&mut app, NodeRef::Decision(i.d_bell));
    b.keys(&mut app, "x <Enter>");
    assert!(app.overlay.is_none());
    assert!(
        status(&app).starts_with("✗ drop StoryDecision"),
        "{}",
        status(&app)
    );
    assert!(status(&app).contains("nothing was changed"));
}

#[test]
fn b_shows_the_writer_brief_of_the_selected_chapter() {
    let b = book();
    let i = &b.ids;
    let mut app = b.app(120, 40);
    b.select(&mut app, NodeRef::Chapter(i.ch_oil));
    b.keys(&mut app, "b");
    assert_eq!(app.story.detail.want, Some(DetailKey::Brief(i.ch_oil)));
    let s = screen(&mut app, 120, 40);
    assert!(s.contains("Writer brief · The Oil Store"), "{s}");
    assert!(s.contains("status ready"), "{s}");
    assert!(
        s.contains("Ada finds the weather book and hides it."),
        "{s}"
    );
    // A scene shows its chapter's brief; an act shows every chapter at a glance.
    b.select(&mut app, NodeRef::Act(i.act));
    let s = screen(&mut app, 120, 40);
    assert!(s.contains("1 needs_plot · 1 needs_world_anchor"), "{s}");
    b.keys(&mut app, "b");
    assert_eq!(
        app.story.detail.want,
        Some(DetailKey::Node(NodeRef::Act(i.act)))
    );
}

#[test]
fn story_commands_from_the_palette_focus_the_pane() {
    let b = book();
    let mut app = b.app(120, 40);
    b.keys(&mut app, "1");
    assert_eq!(app.focus, Pane::Files);
    b.run(&mut app, Vec::new());
    let fx = app.update(Action::Cmd(Command::StoryPromises));
    b.run(&mut app, fx);
    assert_eq!(app.focus, Pane::Story);
    assert_eq!(app.story.view, StoryView::Promises);
}

#[test]
fn an_empty_project_has_nothing_to_select_and_nothing_breaks() {
    let b = empty_book();
    let mut app = b.app(80, 24);
    assert!(app.story.data.as_ref().unwrap().is_empty());
    for k in [
        "j", "l", "h", "t", "p", "d", "b", "c", "T", "f", "e", "x", "D", "G",
    ] {
        b.keys(&mut app, k);
        assert!(app.overlay.is_none(), "{k}");
    }
    // Reading never creates the story row.
    assert_eq!(b.count("SELECT COUNT(*) FROM Story"), 0);
}

#[test]
fn a_confirmed_archive_fails_as_stale_when_an_agent_changed_the_scene_meanwhile() {
    let b = book();
    let i = &b.ids;
    let mut app = b.app(120, 40);
    b.select(&mut app, NodeRef::Chapter(i.ch_relief));
    b.keys(&mut app, "l");
    b.select(&mut app, NodeRef::Scene(i.s_boat));
    b.keys(&mut app, "x");
    assert!(confirm_lines(&mut app)[0].starts_with("Archive StoryScene"));
    // While the dialog is open, an agent rewrites the scene's summary through the engine.
    let agent = b
        .engine
        .create_session("leader.default", nbook::engine::Mode::Normal, "agent", None)
        .unwrap()
        .id;
    let r = rt().block_on(b.engine.call(
        &agent,
        nbook::engine::ToolCall {
            id: String::new(),
            name: "save_story_scene".into(),
            arguments: serde_json::json!({"action": "update", "sceneId": i.s_boat, "summary": "Rewritten."}),
        },
        nbook::engine::Approval::Auto {
            decision: nbook::engine::Decision::Approve,
            by: "test",
        },
    ));
    assert!(r.ok, "{}", r.content);
    let before = std::fs::read(&b.db.db_path).unwrap();
    b.keys(&mut app, "y");
    // What the author confirmed is not what would happen now: nothing changes, and the status
    // bar says why.
    assert_eq!(std::fs::read(&b.db.db_path).unwrap(), before);
    assert!(
        status(&app).starts_with("✗ archive StoryScene") && status(&app).contains("stale"),
        "{}",
        status(&app)
    );
    assert_eq!(
        b.text(&format!(
            "SELECT status FROM StoryScene WHERE id = {}",
            i.s_boat
        )),
        "written"
    );
    // Asked again, the dialog shows the current state and the archive goes through.
    b.select(&mut app, NodeRef::Scene(i.s_boat));
    b.keys(&mut app, "x");
    b.keys(&mut app, "y");
    assert!(
        status(&app).starts_with("✔ archive StoryScene"),
        "{}",
        status(&app)
    );
    assert_eq!(
        b.text(&format!(
            "SELECT status FROM StoryScene WHERE id = {}",
            i.s_boat
        )),
        "archived"
    );
}

/// Ctrl+E in the record editor hands the record's JSON to `$EDITOR` (as `Effect::Editor`);
/// what the editor saved comes back into the form, and Ctrl+S saves it as the author's change.
#[test]
fn ctrl_e_hands_the_record_to_the_editor_and_the_edit_is_saved() {
    use nbook::tui::action::{EditorDone, EditorJob, TextTarget};
    let b = book();
    let i = &b.ids;
    let mut app = b.app(120, 40);
    b.keys(&mut app, "t");
    b.select(&mut app, NodeRef::Thread(i.t_book));
    b.keys(&mut app, "e");
    let fx = b.keys(&mut app, "<C-e>");
    let text = match fx.as_slice() {
        [Effect::Editor(EditorJob::Text {
            target: TextTarget::StoryRecord,
            text,
            name,
        })] => {
            assert_eq!(name, "record.json");
            text.clone()
        }
        other => panic!("the record should go to the editor: {other:?}"),
    };
    assert!(text.contains("\"title\": \"The weather book\""), "{text}");
    let edited = format!(
        "{}\n",
        text.replace("\"The weather book\"", "\"The Book of Weather\"")
    );
    app.update(Action::EditorDone(EditorDone::Text {
        target: TextTarget::StoryRecord,
        result: Ok(Some(edited)),
    }));
    match story_overlay(&mut app) {
        StoryOverlay::Edit { input, .. } => {
            assert!(text_of(input).contains("The Book of Weather"))
        }
        _ => panic!("the edit form should stay open"),
    }
    b.keys(&mut app, "<C-s>");
    let d = app.story.data.clone().unwrap();
    assert_eq!(
        d.thread(i.t_book).unwrap().thread.title,
        "The Book of Weather"
    );
}
