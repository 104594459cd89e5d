//! The Story pane's right-hand view: every field of the selected node (as loaded off the UI
//! task; until it arrives, what the row already knows plus "loading…"), or in brief mode the
//! selected chapter's writer brief (status, next step, warnings, the Markdown brief) and,
//! with no chapter selected, the brief status of every chapter at a glance.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

use crate::plot::ledger::NodeRef;
use crate::tui::app::AppState;
use crate::tui::story::data::{brief_badge, StoryData, BRIEF_STATUSES};
use crate::tui::story::jobs::{DetailDoc, DetailKey};
use crate::tui::story::view::brief_style;
use crate::tui::story::view::fields::{blank, field, heading, node_rows, plain};
use crate::tui::story::RightMode;
use crate::tui::widgets::markdown::styled_line;
use crate::tui::widgets::wrap::draw_top_down;
use crate::tui::widgets::wrap::Row;

pub fn draw_detail(app: &AppState, area: Rect, buf: &mut Buffer) {
    let rows = detail_rows(app);
    let skip = app.story.detail.scroll.min(rows.len().saturating_sub(1));
    draw_top_down(area, buf, rows.into_iter().skip(skip));
}

pub fn detail_title(app: &AppState) -> String {
    let st = &app.story;
    let d = st.data.as_deref();
    let name = |n: NodeRef| -> String {
        let t = d.and_then(|d| match n {
            NodeRef::Act(id) => d.act(id).map(|a| a.title.clone()),
            NodeRef::Chapter(id) => d.chapter(id).map(|c| c.chapter.title.clone()),
            NodeRef::Phase(id) => d.phase(id).map(|p| p.title.clone()),
            NodeRef::Thread(id) => d.thread(id).map(|t| t.thread.title.clone()),
            NodeRef::Promise(id) => d.promise(id).map(|p| p.title.clone()),
            NodeRef::Decision(id) => d.decision(id).map(|x| x.title.clone()),
            NodeRef::Scene(id) => st.selected_row().and_then(|r| match r.node {
                crate::tui::story::RowNode::Scene { parent, index, .. } => st
                    .scene(parent, index)
                    .filter(|s| s.id == id)
                    .map(|s| s.title.clone()),
                _ => None,
            }),
            _ => None,
        });
        t.unwrap_or_default()
    };
    match (st.right, st.detail.want) {
        (RightMode::Brief, Some(DetailKey::Brief(c))) => {
            format!(" Writer brief · {} ", name(NodeRef::Chapter(c)))
        }
        (RightMode::Brief, _) => " Writer briefs · every chapter ".into(),
        (_, Some(DetailKey::Node(n))) => {
            let kind = match n {
                NodeRef::Story => return " Story ".into(),
                NodeRef::Act(_) => "Act",
                NodeRef::Chapter(_) => "Chapter",
                NodeRef::Phase(_) => "Phase",
                NodeRef::Thread(_) => "Thread",
                NodeRef::Scene(_) => "Scene",
                NodeRef::Promise(_) => "Promise",
                NodeRef::Decision(_) => "Decision",
            };
            let n2 = name(n);
            if n2.is_empty() {
                format!(" {kind} ")
            } else {
                format!(" {kind} · {n2} ")
            }
        }
        _ => " Story ".into(),
    }
}

pub fn detail_rows(app: &AppState) -> Vec<Row> {
    let t = &app.theme;
    let st = &app.story;
    let Some(d) = st.data.as_deref() else {
        return vec![match &st.error {
            Some(e) => plain(e.clone(), t.status_error),
            None => plain("loading…", t.dim),
        }];
    };
    if st.right == RightMode::Brief {
        return match st.detail.want {
            Some(DetailKey::Brief(c)) => brief_rows(app, d, c),
            _ => glance_rows(app, d),
        };
    }
    let Some(DetailKey::Node(node)) = st.detail.want else {
        return hint_rows(app, d);
    };
    match st.shown_detail() {
        Some(Ok(doc)) => match doc.as_ref() {
            DetailDoc::Node(n) => node_rows(t, d, n),
            DetailDoc::Brief { .. } => Vec::new(),
        },
        Some(Err(e)) => vec![plain(e.clone(), t.status_error)],
        None => {
            let mut rows = quick_rows(app, d, node);
            rows.push(plain("loading…", t.dim));
            rows
        }
    }
}

fn hint_rows(app: &AppState, d: &StoryData) -> Vec<Row> {
    let t = &app.theme;
    if d.is_empty() {
        return vec![
            heading(t, "No story yet."),
            blank(),
            (
                Line::from(Span::styled(
                    "Agents build it with the plot tools (acts, chapters, threads, scenes, promises, decisions); it shows here as it grows. The data lives in .nbook/project.sqlite, readable by NeuroBook too.",
                    t.dim,
                )),
                0,
            ),
        ];
    }
    vec![plain("Select a row to see all its fields.", t.dim)]
}

/// What the row already knows, while the full detail loads.
fn quick_rows(app: &AppState, d: &StoryData, node: NodeRef) -> Vec<Row> {
    let t = &app.theme;
    match node {
        NodeRef::Story => vec![heading(t, d.overview.story.title.clone())],
        NodeRef::Act(id) => match d.act(id) {
            Some(a) => vec![
                heading(t, a.title.clone()),
                field(t, "summary", Some(&a.summary)),
            ],
            None => Vec::new(),
        },
        NodeRef::Phase(id) => match d.phase(id) {
            Some(p) => vec![
                heading(t, p.title.clone()),
                field(t, "summary", Some(&p.summary)),
            ],
            None => Vec::new(),
        },
        NodeRef::Chapter(id) => match d.chapter(id) {
            Some(c) => vec![
                heading(t, c.chapter.title.clone()),
                field(t, "brief status", Some(c.status.as_str())),
                field(t, "scenes", Some(&c.scene_count.to_string())),
            ],
            None => Vec::new(),
        },
        NodeRef::Thread(id) => match d.thread(id) {
            Some(th) => vec![
                heading(t, th.thread.title.clone()),
                field(t, "status", Some(&th.thread.status)),
                field(t, "scenes", Some(&th.scene_count.to_string())),
            ],
            None => Vec::new(),
        },
        NodeRef::Promise(id) => d
            .promise(id)
            .map(|p| {
                vec![
                    heading(t, p.title.clone()),
                    field(t, "status", Some(&p.status)),
                ]
            })
            .unwrap_or_default(),
        NodeRef::Decision(id) => d
            .decision(id)
            .map(|x| {
                vec![
                    heading(t, x.title.clone()),
                    field(t, "status", Some(&x.status)),
                ]
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// "2026-01-02 03:04:05" from any stored DateTime form.
fn brief_rows(app: &AppState, d: &StoryData, chapter: i64) -> Vec<Row> {
    let t = &app.theme;
    let doc = app.story.shown_detail();
    let Some(Ok(doc)) = doc else {
        let mut rows = match d.chapter(chapter) {
            Some(c) => vec![
                heading(t, c.chapter.title.clone()),
                (
                    Line::from(Span::styled(c.status.as_str(), brief_style(t, c.status))),
                    0,
                ),
            ],
            None => Vec::new(),
        };
        rows.push(match doc {
            Some(Err(e)) => plain(e.clone(), t.status_error),
            _ => plain("loading the brief…", t.dim),
        });
        return rows;
    };
    let DetailDoc::Brief { brief, lines } = doc.as_ref() else {
        return Vec::new();
    };
    let mut r = vec![
        (
            Line::from(vec![
                Span::styled("status ", t.dim),
                Span::styled(brief.status.as_str(), brief_style(t, brief.status)),
                Span::styled(
                    format!(
                        " · {} · {} mode",
                        crate::text::count(brief.total_scenes, "scene", "scenes"),
                        brief.mode
                    ),
                    t.dim,
                ),
            ]),
            0,
        ),
        (
            Line::from(vec![
                Span::styled("next   ", t.dim),
                Span::raw(brief.next_step.clone()),
            ]),
            7,
        ),
    ];
    for w in &brief.warnings {
        r.push((Line::from(Span::styled(format!("⚠ {w}"), t.tool_wait)), 2));
    }
    r.push(blank());
    r.extend(
        lines
            .iter()
            .map(|(k, text)| (styled_line(*k, text, t).to_owned_line(), 2)),
    );
    r
}

trait OwnedLine {
    fn to_owned_line(self) -> Line<'static>;
}

impl OwnedLine for Line<'_> {
    fn to_owned_line(self) -> Line<'static> {
        Line::from(
            self.spans
                .into_iter()
                .map(|s| Span::styled(s.content.into_owned(), s.style))
                .collect::<Vec<_>>(),
        )
        .style(self.style)
    }
}

fn glance_rows(app: &AppState, d: &StoryData) -> Vec<Row> {
    let t = &app.theme;
    let counts = d.brief_counts();
    let mut spans = Vec::new();
    for (s, n) in BRIEF_STATUSES.iter().zip(counts) {
        if !spans.is_empty() {
            spans.push(Span::styled(" · ", t.dim));
        }
        spans.push(Span::styled(
            format!("{n} {}", s.as_str()),
            brief_style(t, *s),
        ));
    }
    let mut r = vec![
        (Line::from(spans), 2),
        plain(
            "Select a chapter (or one of its scenes) for its full brief; f filters the carrier tree by status.",
            t.dim,
        ),
        blank(),
    ];
    for c in d.chapters_in_order() {
        r.push((
            Line::from(vec![
                Span::styled(
                    format!("{:<14}", brief_badge(c.status)),
                    brief_style(t, c.status),
                ),
                Span::raw(c.chapter.title.clone()),
                Span::styled(
                    format!(
                        " · {}",
                        crate::text::count(c.scene_count, "scene", "scenes")
                    ),
                    t.dim,
                ),
            ]),
            14,
        ));
    }
    r
}
