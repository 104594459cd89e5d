//! Shared fixture for the World pane tests: a real temporary project whose world timeline is
//! written through the world store's write API (`WorldStore::write_slice` / `delete_slice`),
//! an `AppState` on it, and a driver that runs the pane's effects synchronously through the
//! real jobs (`nbook::tui::world::jobs::run`) the way the runtime does off the UI task.
#![allow(dead_code)]

use std::path::PathBuf;

use nbook::tui::action::{Action, Effect};
use nbook::tui::app::AppState;
use nbook::tui::world::jobs;
use nbook::world::prepare::NewPatch;
use nbook::world::schema::Op;
use nbook::world::store::WorldStore;
use nbook::world::write::NewSlice;
use nbook::world::World;
use serde_json::{json, Value};

#[path = "../tui_support/mod.rs"]
pub mod tui_support;
pub use tui_support::{empty_app, press, render};

pub struct Book {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub db: PathBuf,
}

fn p(subject: &str, path: &str, op: Op, value: Option<Value>) -> NewPatch {
    NewPatch {
        subject_id: subject.into(),
        path: path.into(),
        op,
        value,
        summary: None,
        declared_type: None,
        name: None,
    }
}

fn set(subject: &str, path: &str, value: Value) -> NewPatch {
    p(subject, path, Op::Replace, Some(value))
}

fn add(subject: &str, path: &str, n: i64, why: &str) -> NewPatch {
    let mut x = p(subject, path, Op::Increment, Some(json!(n)));
    x.summary = Some(why.into());
    x
}

/// A subject's first patch, declaring its type and name.
fn new(subject: &str, kind: &str, name: &str, path: &str, value: Value) -> NewPatch {
    let mut x = set(subject, path, value);
    x.declared_type = Some(kind.into());
    x.name = Some(name.into());
    x
}

/// An empty project (a database, no world data).
pub fn empty_book() -> Book {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("The Hesta Light")).unwrap();
    let db = root.join(".nbook/project.sqlite");
    drop(nbook::store::open(&db).unwrap());
    Book {
        _tmp: tmp,
        root,
        db,
    }
}

impl Book {
    pub fn conn(&self) -> rusqlite::Connection {
        nbook::store::open(&self.db).unwrap()
    }

    /// Write one slice through the store's write API; returns its id.
    pub fn write(&self, time: &str, title: &str, kind: &str, patches: Vec<NewPatch>) -> String {
        let conn = self.conn();
        let world = World::load(&self.root).unwrap();
        let st = WorldStore::new(&conn, &world);
        let instant = world.calendar.parse(time).unwrap();
        st.write_slice(&NewSlice {
            instant,
            title: title.into(),
            summary: String::new(),
            kind: kind.into(),
            patches,
        })
        .unwrap_or_else(|e| panic!("{title}: {e}"))
        .slice_id
    }

    pub fn delete(&self, slice_id: &str) {
        let conn = self.conn();
        let world = World::load(&self.root).unwrap();
        WorldStore::new(&conn, &world)
            .delete_slice(slice_id)
            .unwrap();
    }

    pub fn instant(&self, time: &str) -> i64 {
        World::load(&self.root)
            .unwrap()
            .calendar
            .parse(time)
            .unwrap()
    }

    /// Run the World jobs among `fx` (and those their results ask for) to completion.
    pub fn run(&self, app: &mut AppState, fx: Vec<Effect>) -> Vec<Effect> {
        let mut queue = fx;
        let mut rest = Vec::new();
        while !queue.is_empty() {
            let f = queue.remove(0);
            match f {
                Effect::WorldJob { ticket, job } => {
                    let result = jobs::run(
                        &nbook::engine::read::ReadModel::new(&self.root, &self.db),
                        job,
                    );
                    queue.extend(app.update(Action::WorldJobDone { ticket, result }));
                }
                other => rest.push(other),
            }
        }
        rest
    }

    /// Press keys and run the World jobs they ask for.
    pub fn keys(&self, app: &mut AppState, keys: &str) -> Vec<Effect> {
        let fx = press(app, keys);
        self.run(app, fx)
    }

    /// An app on this book with the World pane focused and loaded.
    pub fn app(&self, w: u16, h: u16) -> AppState {
        let (mut app, _) = empty_app(w, h);
        let fx: Vec<Effect> = app
            .start()
            .into_iter()
            .filter(|f| matches!(f, Effect::WorldJob { .. }))
            .collect();
        self.run(&mut app, fx);
        self.keys(&mut app, "3");
        app
    }
}

/// A lighthouse in 1911–1913: two keepers, two places, the weather book, the Board; an
/// increment whose base slice was deleted (an E1 issue from 1911-03-10 on).
pub fn book() -> Book {
    let b = empty_book();
    b.write(
        "1911-01-01 00:00",
        "Opening state",
        "init",
        vec![
            new(
                "l-light",
                "location",
                "Hesta Light",
                "/locationType",
                json!("lighthouse"),
            ),
            new(
                "l-geo",
                "location",
                "The East Geo",
                "/locationType",
                json!("cove"),
            ),
            new(
                "f-board",
                "faction",
                "Northern Lights Board",
                "/treasury",
                json!(100),
            ),
            new("c-ada", "character", "Ada Marwick", "/age", json!(14)),
            set("c-ada", "/location", json!("subject://l-light")),
            set("c-ada", "/inventory", json!(["lamp"])),
            new("c-thomas", "character", "Thomas Marwick", "/age", json!(44)),
            set("c-thomas", "/location", json!("subject://l-light")),
            new(
                "i-book",
                "item",
                "The weather book",
                "/itemType",
                json!("logbook"),
            ),
        ],
    );
    b.write(
        "1911-01-09 16:00",
        "Elspeth lost at the East Geo",
        "event",
        vec![set("c-thomas", "/mood", json!("grieving"))],
    );
    b.write(
        "1911-02-14 07:00",
        "Ada finds the weather book",
        "scene",
        vec![
            p(
                "c-ada",
                "/inventory",
                Op::Append,
                Some(json!("weather book")),
            ),
            set("i-book", "/owner", json!("subject://c-ada")),
        ],
    );
    b.write(
        "1911-02-20 22:00",
        "Storm on the light",
        "event",
        vec![
            add("c-ada", "/hp", -20, "cut by the lantern glass"),
            add("c-thomas", "/hp", -10, "burnt hand"),
        ],
    );
    b.write(
        "1911-03-03 12:00",
        "The relief boat",
        "event",
        vec![add("f-board", "/treasury", -40, "relief wages")],
    );
    b.write(
        "1911-03-03 18:00",
        "Ada hides the book",
        "scene",
        vec![set("c-ada", "/location", json!("subject://l-geo"))],
    );
    let base = b.write(
        "1911-03-05 09:00",
        "Oil stock counted",
        "event",
        vec![set("c-thomas", "/oil", json!(20))],
    );
    b.write(
        "1911-03-10 09:00",
        "Oil delivered",
        "event",
        vec![add("c-thomas", "/oil", 5, "a barrel from the boat")],
    );
    b.delete(&base);
    b.write(
        "1911-04-18 21:00",
        "Thomas reads the entries",
        "scene",
        vec![set("c-thomas", "/mood", json!("afraid"))],
    );
    b.write(
        "1912-06-01 00:00",
        "A year on the rock",
        "event",
        vec![set("c-ada", "/age", json!(15))],
    );
    b.write(
        "1913-01-01 00:00",
        "New keeper",
        "event",
        vec![set("c-ada", "/location", json!("subject://l-light"))],
    );
    b
}

/// The screen as text.
pub fn screen(app: &mut AppState, w: u16, h: u16) -> String {
    render(app, w, h)
}
