//! Shared fixture for the Story pane tests: a real temporary project whose plot is built
//! through the plot services (the phase, which has no service, by SQL), a real engine on it,
//! an `AppState`, and a driver that runs the pane's effects synchronously through the real
//! jobs (`nbook::tui::story::jobs`, reading through the engine's read model and writing as the
//! author through the engine) the way the runtime does off the UI task.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Arc;

use nbook::engine::Engine;
use nbook::plot::input::*;
use nbook::plot::ledger::NodeRef;
use nbook::plot::{Field, PlotDb, ProjectMeta};
use nbook::tui::action::{Action, Effect};
use nbook::tui::app::AppState;
use nbook::tui::story::jobs;
use nbook::tui::story::RowNode;

pub mod board_ui;
#[path = "../tui_support/mod.rs"]
pub mod tui_support;
pub use tui_support::{empty_app, press, render};

pub struct Ids {
    pub act: i64,
    pub ch_oil: i64,
    pub ch_relief: i64,
    pub ch_fragments: i64,
    pub phase: i64,
    pub t_book: i64,
    pub t_father: i64,
    pub s_tin: i64,
    pub s_lamps: i64,
    pub s_boat: i64,
    pub s_fog: i64,
    pub s_oil: i64,
    pub p_who: i64,
    pub p_light: i64,
    pub d_thomas: i64,
    pub d_bell: i64,
}

pub struct Book {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    /// The test's own access to the database (building the book, checking results).
    pub db: PlotDb,
    pub engine: Arc<Engine>,
    pub ids: Ids,
}

/// The runtime engine calls run on (the jobs block on them, as on the runtime's blocking
/// pool). Shared and never dropped, so a `Book` may also live inside an async test.
pub fn rt() -> &'static tokio::runtime::Runtime {
    static RT: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("a runtime")
    })
}

fn s(v: &str) -> Option<String> {
    Some(v.to_string())
}

fn set(v: &str) -> Field<String> {
    Field::Set(v.to_string())
}

fn anchor(start: &str, end: &str) -> Option<WorldAnchorInput> {
    Some(WorldAnchorInput {
        start_time: s(start),
        end_time: s(end),
        subject_ids: vec![],
        location_subject_id: None,
    })
}

/// An empty project (no story row yet).
pub fn empty_book() -> Book {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("The Hesta Light")).unwrap();
    let db = PlotDb::new(root.join(".nbook/project.sqlite"), ProjectMeta::load(&root));
    let dirs = nbook::config::Dirs {
        config: tmp.path().join("home"),
        data: tmp.path().join("home/data"),
        logs: tmp.path().join("home/logs"),
    };
    let ws = nbook::workspace::Workspace::open(&root).unwrap();
    let engine = Arc::new(
        Engine::open(
            ws,
            nbook::config::Config::default(),
            &dirs,
            nbook::tools::registry().unwrap(),
        )
        .unwrap(),
    );
    Book {
        _tmp: tmp,
        root,
        db,
        engine,
        ids: Ids {
            act: 0,
            ch_oil: 0,
            ch_relief: 0,
            ch_fragments: 0,
            phase: 0,
            t_book: 0,
            t_father: 0,
            s_tin: 0,
            s_lamps: 0,
            s_boat: 0,
            s_fog: 0,
            s_oil: 0,
            p_who: 0,
            p_light: 0,
            d_thomas: 0,
            d_bell: 0,
        },
    }
}

/// A small book: an act with two chapters plus a chapter outside it, a phase with the main
/// thread and a thread outside it, five scenes (one unplaced), a promise planted and paid off
/// (so fulfilled), an open promise, an open and a decided decision.
pub fn book() -> Book {
    let mut b = empty_book();
    let ids = b
        .db
        .commit(|p| {
            let story = p.ensure_story()?;
            p.conn().execute(
                "INSERT INTO \"StoryPhase\" (\"storyId\",\"sortOrder\",\"name\",\"title\",\"summary\",\"createdAt\",\"updatedAt\") \
                 VALUES (?1, 0, 'discovery', 'Discovery', 'The book is found and proves itself.', '2026-01-01T00:00:00.000+00:00', '2026-01-01T00:00:00.000+00:00')",
                [story],
            )?;
            let phase = p.conn().last_insert_rowid();
            let act = p
                .create_act(&ActInput {
                    name: s("act-1"),
                    title: s("The Book in the Oil Store"),
                    summary: s("Ada finds the weather book."),
                    ..ActInput::default()
                })?
                .id;
            let ch_oil = p
                .create_chapter(&ChapterInput {
                    act_id: Field::Set(act),
                    name: s("001-oil-store"),
                    title: s("The Oil Store"),
                    brief: BriefInput {
                        goal: set("Ada finds the weather book and hides it."),
                        pov: set("Ada, close third, past tense."),
                        reader_knows: set("Elspeth drowned in January."),
                        must_hide: set("Who is writing the entries."),
                        ..BriefInput::default()
                    },
                    ..ChapterInput::default()
                })?
                .id;
            let ch_relief = p
                .create_chapter(&ChapterInput {
                    act_id: Field::Set(act),
                    name: s("002-relief"),
                    title: s("The Relief"),
                    ..ChapterInput::default()
                })?
                .id;
            let ch_fragments = p
                .create_chapter(&ChapterInput {
                    name: s("fragments"),
                    title: s("Fragments"),
                    ..ChapterInput::default()
                })?
                .id;
            let t_book = p
                .create_thread(&ThreadInput {
                    story_phase_id: Field::Set(phase),
                    name: s("the-weather-book"),
                    title: s("The weather book"),
                    is_main_thread: Some(true),
                    status: s("active"),
                    mice_type: set("idea"),
                    summary: s("Who writes in a drowned woman's book?"),
                    tags: Some(vec!["mystery".into()]),
                    ..ThreadInput::default()
                })?
                .thread
                .id;
            let t_father = p
                .create_thread(&ThreadInput {
                    name: s("father-and-daughter"),
                    title: s("Father and daughter"),
                    summary: s("Thomas has stopped looking at anything."),
                    ..ThreadInput::default()
                })?
                .thread
                .id;
            let mut scene = |thread: i64, chapter: Option<i64>, title: &str, status: &str, a| {
                p.create_scene(&SceneInput {
                    thread_id: Some(thread),
                    chapter_id: chapter.map(Field::Set).unwrap_or_default(),
                    title: s(title),
                    status: s(status),
                    summary: s(&format!("What happens in '{title}'.")),
                    world_anchor: a,
                    ..SceneInput::default()
                })
                .map(|d| d.scene.id)
            };
            let s_tin = scene(t_book, Some(ch_oil), "Behind the fourth tin", "written", anchor("1911-03-14 06:10", "1911-03-14 06:30"))?;
            let s_lamps = scene(t_father, Some(ch_oil), "The lamps wanted filling", "written", anchor("1911-03-14 06:30", "1911-03-14 06:40"))?;
            let s_boat = scene(t_book, Some(ch_relief), "The new man comes on the boat", "written", anchor("1911-03-15 10:00", "1911-03-15 11:00"))?;
            let s_fog = scene(t_book, Some(ch_relief), "Fog from the second hour", "active", None)?;
            let s_oil = scene(t_father, None, "Thomas in the oil store", "draft", None)?;
            let p_who = p
                .create_promise(&PromiseInput {
                    name: s("who-writes-the-book"),
                    title: s("Who is writing in the weather book?"),
                    importance: s("high"),
                    summary: s("An answer to who keeps writing in Elspeth's hand."),
                    ..PromiseInput::default()
                })?
                .promise
                .id;
            let p_light = p
                .create_promise(&PromiseInput {
                    name: s("keep-the-light"),
                    title: s("Keep the light, whatever you see"),
                    importance: s("medium"),
                    ..PromiseInput::default()
                })?
                .promise
                .id;
            let beat = |kind: &str, note: &str| BeatInput {
                kind: s(kind),
                note: set(note),
                auto_fulfill: None,
            };
            p.set_beat(p_who, s_tin, &beat("plant", "Entries after 9 January."))?;
            p.set_beat(p_who, s_boat, &beat("payoff", "The watch is seven minutes fast."))?;
            p.set_beat(p_light, s_tin, &beat("plant", "Ada reads the 16 March entry."))?;
            p.set_beat(p_light, s_fog, &beat("advance", "Fog at the second hour."))?;
            let d_thomas = p
                .create_decision(&DecisionInput {
                    name: s("what-thomas-knows"),
                    title: s("How much does Thomas know?"),
                    question: s("Did Thomas know the book survived?"),
                    options: Some(vec![
                        nbook::plot::model::DecisionOption {
                            option: "He knows nothing.".into(),
                            note: s("Keeps him sympathetic."),
                        },
                        nbook::plot::model::DecisionOption {
                            option: "He hid it himself.".into(),
                            note: None,
                        },
                    ]),
                    ..DecisionInput::default()
                })?
                .id;
            let d_bell = p
                .create_decision(&DecisionInput {
                    name: s("the-bell"),
                    title: s("Does the fog bell ring?"),
                    question: s("Is the bell heard from the ship?"),
                    // References, shown by name in the ledger.
                    serves: Some(vec![format!("promise://{p_light}")]),
                    depends_on: Some(vec![
                        format!("decision://{d_thomas}"),
                        format!("thread://{t_book}"),
                    ]),
                    ..DecisionInput::default()
                })?
                .id;
            p.decide_decision(
                d_bell,
                &DecisionInput {
                    decision: set("It rings, too late."),
                    motivation: set("Guilt lands on the keeper."),
                    risk: set("Melodrama."),
                    ..DecisionInput::default()
                },
            )?;
            Ok(Ids {
                act,
                ch_oil,
                ch_relief,
                ch_fragments,
                phase,
                t_book,
                t_father,
                s_tin,
                s_lamps,
                s_boat,
                s_fog,
                s_oil,
                p_who,
                p_light,
                d_thomas,
                d_bell,
            })
        })
        .unwrap()
        .value;
    b.ids = ids;
    b
}

impl Book {
    pub fn conn(&self) -> rusqlite::Connection {
        nbook::store::open(&self.db.db_path).unwrap()
    }

    pub fn text(&self, sql: &str) -> String {
        self.conn().query_row(sql, [], |r| r.get(0)).unwrap()
    }

    pub fn count(&self, sql: &str) -> i64 {
        self.conn().query_row(sql, [], |r| r.get(0)).unwrap()
    }

    /// Run effects the way the runtime would (Story loads and jobs; others are dropped),
    /// feeding results back until nothing is left. Returns every effect seen.
    pub fn run(&self, app: &mut AppState, fx: Vec<Effect>) -> Vec<Effect> {
        let mut seen = Vec::new();
        let mut queue = fx;
        while !queue.is_empty() {
            let f = queue.remove(0);
            seen.push(f.clone());
            let next = match f {
                Effect::LoadStory { ticket } => app.update(Action::StoryLoaded {
                    ticket,
                    result: jobs::load(&self.engine.read()),
                }),
                Effect::StoryJob { ticket, job } => {
                    let _in_runtime = rt().enter();
                    let result = jobs::run(&self.engine, job);
                    app.update(Action::StoryJobDone { ticket, result })
                }
                _ => Vec::new(),
            };
            queue.extend(next);
        }
        seen
    }

    /// Press keys (keymap notation) and run what they ask for.
    pub fn keys(&self, app: &mut AppState, keys: &str) -> Vec<Effect> {
        let fx = press(app, keys);
        self.run(app, fx)
    }

    /// Move the selection to the row showing `node` (must be visible) with j/k, running
    /// the detail jobs the moves ask for.
    pub fn select(&self, app: &mut AppState, node: NodeRef) {
        let i = app
            .story
            .rows
            .iter()
            .position(|r| r.node.node() == Some(node))
            .unwrap_or_else(|| panic!("{node:?} is not visible: {:?}", app.story.rows));
        let from = app.story.selected;
        let keys = if i >= from {
            "j ".repeat(i - from)
        } else {
            "k ".repeat(from - i)
        };
        if !keys.is_empty() {
            self.keys(app, keys.trim());
        }
        assert_eq!(app.story.selected, i);
    }

    /// An app on this book with the Story pane focused and loaded.
    pub fn app(&self, w: u16, h: u16) -> AppState {
        let (mut app, _) = empty_app(w, h);
        let fx: Vec<Effect> = app
            .start()
            .into_iter()
            .filter(|f| matches!(f, Effect::LoadStory { .. }))
            .collect();
        self.run(&mut app, fx);
        self.keys(&mut app, "2");
        app
    }
}

/// The selected row's node.
pub fn selected(app: &AppState) -> RowNode {
    app.story.selected_row().expect("a selected row").node
}

pub fn selected_ref(app: &AppState) -> Option<NodeRef> {
    selected(app).node()
}

/// The screen with record timestamps blanked (they change every run).
pub fn screen(app: &mut AppState, w: u16, h: u16) -> String {
    blank_timestamps(&render(app, w, h))
}

pub fn blank_timestamps(s: &str) -> String {
    let mut out: Vec<char> = s.chars().collect();
    let pat = "dddd-dd-dd?dd:dd:dd";
    let n = pat.chars().count();
    let mut i = 0;
    while i + n <= out.len() {
        let ok = pat.chars().zip(&out[i..i + n]).all(|(p, c)| match p {
            'd' => c.is_ascii_digit(),
            '?' => *c == 'T' || *c == ' ',
            p => p == *c,
        });
        if ok {
            let mut j = i;
            while j < out.len()
                && (j < i + n || out[j].is_ascii_digit() || ":-.+Z".contains(out[j]))
            {
                if out[j].is_ascii_digit() {
                    out[j] = '0';
                }
                j += 1;
            }
            i = j;
        } else {
            i += 1;
        }
    }
    // Times cut by an overlay ("0:44:24"): any digit run with two colons.
    let mut k = 0;
    while k < out.len() {
        let start = k;
        while k < out.len() && (out[k].is_ascii_digit() || out[k] == ':') {
            k += 1;
        }
        if out[start..k].iter().filter(|c| **c == ':').count() >= 2 {
            for c in &mut out[start..k] {
                if c.is_ascii_digit() {
                    *c = '0';
                }
            }
        }
        k = k.max(start + 1);
    }
    out.into_iter().collect()
}
