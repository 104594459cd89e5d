//! Snapshots of the Story pane at 80×24 and 120×40 on a real temporary project (built through
//! the plot services, read through the pane's real jobs): both trees, the node detail, both
//! ledgers, the writer brief and the brief overview, the search, the edit form, the archive and
//! delete confirmations, and the empty state. Record timestamps are blanked.

mod tui_story_support;

use nbook::plot::ledger::NodeRef;
use nbook::tui::app::AppState;
use tui_story_support::*;

const SIZES: [(u16, u16); 2] = [(80, 24), (120, 40)];

fn snap(name: &str, build: impl Fn(&Book, u16, u16) -> AppState) {
    let b = book();
    for (w, h) in SIZES {
        let mut app = build(&b, w, h);
        let s = screen(&mut app, w, h);
        insta::assert_snapshot!(format!("{name}_{w}x{h}"), s);
    }
}

#[test]
fn carrier_tree_with_an_open_chapter() {
    snap("story_carrier", |b, w, h| {
        let mut app = b.app(w, h);
        b.select(&mut app, NodeRef::Chapter(b.ids.ch_relief));
        b.keys(&mut app, "l");
        app
    });
}

#[test]
fn causal_tree_with_a_scene_detail() {
    snap("story_causal_scene", |b, w, h| {
        let mut app = b.app(w, h);
        b.keys(&mut app, "t");
        b.select(&mut app, NodeRef::Thread(b.ids.t_book));
        b.keys(&mut app, "l");
        b.select(&mut app, NodeRef::Scene(b.ids.s_tin));
        app
    });
}

#[test]
fn node_detail_of_a_thread() {
    snap("story_detail_thread", |b, w, h| {
        let mut app = b.app(w, h);
        b.keys(&mut app, "t");
        b.select(&mut app, NodeRef::Thread(b.ids.t_book));
        app
    });
}

#[test]
fn promise_ledger() {
    snap("story_promises", |b, w, h| {
        let mut app = b.app(w, h);
        b.keys(&mut app, "p");
        app
    });
}

#[test]
fn decision_ledger() {
    snap("story_decisions", |b, w, h| {
        let mut app = b.app(w, h);
        b.keys(&mut app, "d");
        b.select(&mut app, NodeRef::Decision(b.ids.d_bell));
        app
    });
}

#[test]
fn writer_brief_of_a_chapter() {
    snap("story_brief", |b, w, h| {
        let mut app = b.app(w, h);
        b.select(&mut app, NodeRef::Chapter(b.ids.ch_oil));
        b.keys(&mut app, "b");
        app
    });
}

#[test]
fn brief_status_of_every_chapter() {
    snap("story_brief_glance", |b, w, h| {
        let mut app = b.app(w, h);
        b.keys(&mut app, "b");
        app
    });
}

#[test]
fn search_overlay() {
    snap("story_search", |b, w, h| {
        let mut app = b.app(w, h);
        b.keys(&mut app, "/");
        b.keys(&mut app, "t h e");
        app
    });
}

#[test]
fn edit_overlay() {
    snap("story_edit", |b, w, h| {
        let mut app = b.app(w, h);
        b.keys(&mut app, "t");
        b.select(&mut app, NodeRef::Thread(b.ids.t_book));
        b.keys(&mut app, "e");
        app
    });
}

#[test]
fn delete_confirmation_lists_the_cascade() {
    snap("story_delete", |b, w, h| {
        let mut app = b.app(w, h);
        b.keys(&mut app, "t");
        b.select(&mut app, NodeRef::Thread(b.ids.t_book));
        b.keys(&mut app, "D");
        app
    });
}

#[test]
fn archive_confirmation_lists_the_derived_changes() {
    snap("story_archive", |b, w, h| {
        let mut app = b.app(w, h);
        b.select(&mut app, NodeRef::Chapter(b.ids.ch_relief));
        b.keys(&mut app, "l");
        b.select(&mut app, NodeRef::Scene(b.ids.s_boat));
        b.keys(&mut app, "x");
        app
    });
}

#[test]
fn empty_project() {
    let b = empty_book();
    for (w, h) in SIZES {
        let mut app = b.app(w, h);
        let s = screen(&mut app, w, h);
        insta::assert_snapshot!(format!("story_empty_project_{w}x{h}"), s);
    }
}
