//! The Board pane's test driver: an app on a [`Book`] with the Board focused and loaded, keys
//! and pastes whose effects run synchronously through the pane's real jobs
//! (`nbook::tui::board::jobs`: reads through the engine, the author's writes through the
//! engine) as the runtime runs them off the UI task. Effects other than Board jobs are dropped.

use std::sync::Arc;

use nbook::board::Board;
use nbook::engine::Engine;
use nbook::tui::action::{Action, Effect};
use nbook::tui::app::{AppState, Pane};
use nbook::tui::board::jobs;

use super::{empty_app, press, rt, Book};

/// The board of the book (project key `book`).
pub fn board(b: &Book) -> Board {
    Board::new(&b.root, "book")
}

/// Run effects as the runtime would (Board jobs; others dropped) until none are left.
pub fn run(engine: &Arc<Engine>, app: &mut AppState, fx: Vec<Effect>) {
    let mut queue = fx;
    while !queue.is_empty() {
        let next = match queue.remove(0) {
            Effect::BoardJob { ticket, job } => {
                let _in_runtime = rt().enter();
                let result = jobs::run(engine, job);
                app.update(Action::BoardJobDone { ticket, result })
            }
            _ => Vec::new(),
        };
        queue.extend(next);
    }
}

/// Press `k` (space-separated keys) and run what they start.
pub fn keys(b: &Book, app: &mut AppState, k: &str) {
    let fx = press(app, k);
    run(&b.engine, app, fx);
}

/// Paste `text` (a bracketed paste) into whatever has the focus and run what it starts.
pub fn paste(b: &Book, app: &mut AppState, text: &str) {
    let fx = app.update(Action::Paste(text.into()));
    run(&b.engine, app, fx);
}

/// An app on the book with the Board focused and loaded.
pub fn app(b: &Book, w: u16, h: u16) -> AppState {
    let (mut app, _) = empty_app(w, h);
    let fx: Vec<Effect> = app
        .start()
        .into_iter()
        .filter(|f| matches!(f, Effect::BoardJob { .. }))
        .collect();
    run(&b.engine, &mut app, fx);
    keys(b, &mut app, "6");
    assert_eq!(app.focus, Pane::Board);
    app
}
