//! The fields of each kind of plot record for the Story pane's detail view: every column a
//! record has (empty ones as "—"), its refs, beats, options and alternatives, with dangling
//! references marked; and the small row builders the detail and brief views share.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::plot::brief::BriefStatus;
use crate::plot::ledger::NodeDetail;
use crate::plot::model::*;
use crate::tui::chrome::thousands;
use crate::tui::story::data::{status_mark, StoryData};
use crate::tui::story::view::{brief_style, status_style};
use crate::tui::theme::Theme;
use crate::tui::widgets::wrap::Row;

pub(super) fn plain(text: impl Into<String>, style: Style) -> Row {
    (Line::from(Span::styled(text.into(), style)), 0)
}

pub(super) fn blank() -> Row {
    (Line::from(""), 0)
}

/// "label  value" with the value wrapping under itself; empty values show as "—".
pub(super) fn field(t: &Theme, label: &str, value: Option<&str>) -> Row {
    let v = value.map(str::trim).filter(|v| !v.is_empty());
    let lw = 14;
    (
        Line::from(vec![
            Span::styled(format!("{label:<lw$}"), t.dim),
            match v {
                Some(v) => Span::styled(v.replace('\n', " ⏎ "), t.text),
                None => Span::styled("—", t.dim),
            },
        ]),
        lw,
    )
}

pub(super) fn heading(t: &Theme, text: impl Into<String>) -> Row {
    plain(text, t.heading)
}

fn section(t: &Theme, text: impl Into<String>) -> Row {
    plain(text, t.heading2)
}

fn chapter_name(d: &StoryData, id: Option<i64>) -> Option<String> {
    id.map(|c| match d.chapter(c) {
        Some(r) => format!("{} (#{c})", r.chapter.title),
        None => format!("#{c} (missing)"),
    })
}

fn thread_name(d: &StoryData, id: i64) -> String {
    match d.thread(id) {
        Some(t) => format!("{} (#{id})", t.thread.title),
        None => format!("#{id}"),
    }
}

/// Every row the right-hand view shows (the update clamps scrolling with its length).
fn when(ts: &str) -> String {
    ts.chars()
        .take(19)
        .map(|c| if c == 'T' { ' ' } else { c })
        .collect()
}

fn stamps(t: &Theme, created: &str, updated: &str) -> Row {
    (
        Line::from(vec![
            Span::styled(format!("{:<14}", "created"), t.dim),
            Span::styled(when(created), t.meta),
            Span::styled("  updated ", t.dim),
            Span::styled(when(updated), t.meta),
        ]),
        14,
    )
}

pub(super) fn node_rows(t: &Theme, d: &StoryData, n: &NodeDetail) -> Vec<Row> {
    let mut r = Vec::new();
    match n {
        NodeDetail::Story { story } => {
            r.push(heading(t, story.title.clone()));
            r.push(field(t, "summary", Some(&story.summary)));
            r.push(field(t, "note", story.note.as_deref()));
            let o = &d.overview;
            r.push(blank());
            r.push(plain(
                format!(
                    "{} · {} · {} · {} {}",
                    crate::text::count(o.acts.len(), "act", "acts"),
                    crate::text::count(d.chapter_count(), "chapter", "chapters"),
                    crate::text::count(d.thread_count(), "thread", "threads"),
                    thousands(o.scene_count as i64),
                    crate::text::noun(o.scene_count, "scene", "scenes")
                ),
                t.text,
            ));
            r.push(plain(
                format!(
                    "promises {} open of {} · decisions {} open of {}",
                    o.open_promises,
                    d.promises.len(),
                    o.open_decisions,
                    d.decisions.len()
                ),
                t.text,
            ));
        }
        NodeDetail::Act { act: a } => {
            r.push(heading(t, a.title.clone()));
            r.push(field(t, "name", Some(&a.name)));
            r.push(field(t, "sort order", Some(&a.sort_order.to_string())));
            r.push(field(t, "summary", Some(&a.summary)));
            r.push(field(t, "note", a.note.as_deref()));
            r.push(stamps(t, &a.created_at, &a.updated_at));
        }
        NodeDetail::Chapter {
            detail,
            brief_status,
        } => chapter_rows(t, d, &mut r, detail, *brief_status),
        NodeDetail::Phase { phase: p } => {
            r.push(heading(t, p.title.clone()));
            r.push(field(t, "name", Some(&p.name)));
            r.push(field(t, "sort order", Some(&p.sort_order.to_string())));
            r.push(field(t, "summary", Some(&p.summary)));
            r.push(field(t, "note", p.note.as_deref()));
            r.push(stamps(t, &p.created_at, &p.updated_at));
        }
        NodeDetail::Thread { detail } => {
            let th = &detail.thread;
            let star = if th.is_main_thread { "★ " } else { "" };
            r.push(heading(t, format!("{star}{}", th.title)));
            r.push(field(t, "name", Some(&th.name)));
            r.push(field(t, "status", Some(&th.status)));
            r.push(field(
                t,
                "main thread",
                Some(if th.is_main_thread { "yes" } else { "no" }),
            ));
            r.push(field(t, "MICE type", th.mice_type.as_deref()));
            let phase = th.story_phase_id.map(|p| {
                d.phase(p)
                    .map(|x| x.title.clone())
                    .unwrap_or(format!("#{p}"))
            });
            r.push(field(t, "phase", phase.as_deref()));
            r.push(field(t, "sort order", Some(&th.sort_order.to_string())));
            r.push(field(t, "tags", Some(&th.tags.join(", "))));
            r.push(field(t, "summary", Some(&th.summary)));
            r.push(field(t, "writing tip", th.writing_tip.as_deref()));
            r.push(field(t, "note", th.note.as_deref()));
            r.push(field(t, "scenes", Some(&detail.scenes.len().to_string())));
            r.push(stamps(t, &th.created_at, &th.updated_at));
        }
        NodeDetail::Scene { context } => scene_rows(t, d, &mut r, &context.scene),
        NodeDetail::Promise { detail } => promise_rows(t, d, &mut r, detail),
        NodeDetail::Decision { decision } => decision_rows(t, d, &mut r, decision),
    }
    r
}

fn chapter_rows(
    t: &Theme,
    d: &StoryData,
    r: &mut Vec<Row>,
    detail: &ChapterDetailDto,
    status: BriefStatus,
) {
    let c = &detail.chapter;
    r.push(heading(t, c.title.clone()));
    r.push((
        Line::from(vec![
            Span::styled(format!("{:<14}", "brief status"), t.dim),
            Span::styled(status.as_str(), brief_style(t, status)),
            Span::styled("  (b shows the brief)", t.dim),
        ]),
        14,
    ));
    r.push(field(t, "name", Some(&c.name)));
    let act = c
        .act_id
        .map(|a| d.act(a).map(|x| x.title.clone()).unwrap_or(format!("#{a}")));
    r.push(field(t, "act", act.as_deref()));
    r.push(field(t, "sort order", Some(&c.sort_order.to_string())));
    r.push(field(t, "note", c.note.as_deref()));
    r.push(section(t, "Brief"));
    let b = &c.brief;
    for (label, v) in [
        ("goal", &b.goal),
        ("pov", &b.pov),
        ("tone", &b.tone),
        ("pacing", &b.pacing),
        ("reader knows", &b.reader_knows),
        ("hero knows", &b.protagonist_knows),
        ("must hide", &b.must_hide),
        ("hint only", &b.hint_only),
        ("opening", &b.opening),
        ("ending", &b.ending),
        ("do not write", &b.do_not_write),
    ] {
        r.push(field(t, label, v.as_deref()));
    }
    r.push(section(t, format!("Scenes ({})", detail.total_scenes)));
    for s in &detail.scenes {
        r.push((
            Line::from(vec![
                Span::styled(
                    format!("{} ", status_mark(&s.status)),
                    status_style(t, &s.status),
                ),
                Span::raw(s.title.clone()),
                Span::styled(format!(" · {}", s.thread_title), t.dim),
            ]),
            2,
        ));
    }
    r.push(stamps(t, &c.created_at, &c.updated_at));
}

fn scene_rows(t: &Theme, d: &StoryData, r: &mut Vec<Row>, sd: &SceneDetailDto) {
    let s = &sd.scene;
    r.push(heading(t, s.title.clone()));
    r.push(field(t, "status", Some(&s.status)));
    r.push(field(t, "thread", Some(&thread_name(d, s.thread_id))));
    let chapter = chapter_name(d, s.chapter_id).unwrap_or_else(|| "not placed".into());
    r.push(field(t, "chapter", Some(&chapter)));
    r.push(field(t, "outcome", s.outcome_type.as_deref()));
    r.push(field(t, "pacing role", s.pacing_role.as_deref()));
    r.push(field(t, "summary", Some(&s.summary)));
    r.push(field(t, "purpose", s.purpose.as_deref()));
    r.push(field(t, "writing tip", s.writing_tip.as_deref()));
    r.push(field(t, "note", s.note.as_deref()));
    r.push(plain("c jumps to the chapter · T to the thread", t.meta));
    let w = &s.world_anchor;
    r.push(section(t, "World anchor"));
    r.push(field(t, "start", w.start_time.as_deref()));
    r.push(field(t, "end", w.end_time.as_deref()));
    r.push(field(t, "subjects", Some(&w.subject_ids.join(", "))));
    r.push(field(t, "location", w.location_subject_id.as_deref()));
    r.push(section(t, format!("Refs ({})", sd.refs.len())));
    for x in &sd.refs {
        let dangling = if x.valid { "" } else { " (dangling)" };
        r.push((
            Line::from(vec![
                Span::styled(format!("{} → ", x.relation), t.dim),
                Span::raw(x.target.clone()),
                Span::styled(format!(" · {}{dangling}", x.visibility), t.dim),
            ]),
            4,
        ));
        if let Some(n) = x.note.as_deref().filter(|n| !n.is_empty()) {
            r.push((Line::from(Span::styled(format!("    {n}"), t.meta)), 4));
        }
    }
    r.push(section(t, format!("Promise beats ({})", sd.beats.len())));
    for b in &sd.beats {
        r.push((
            Line::from(vec![
                Span::styled(format!("{:<8}", b.kind), t.tool),
                Span::raw(b.promise_title.clone()),
                Span::styled(format!(" · {}", b.promise_status), t.dim),
            ]),
            8,
        ));
        if let Some(n) = b.note.as_deref().filter(|n| !n.is_empty()) {
            r.push((Line::from(Span::styled(format!("        {n}"), t.meta)), 8));
        }
    }
    r.push(stamps(t, &s.created_at, &s.updated_at));
}

fn promise_rows(t: &Theme, d: &StoryData, r: &mut Vec<Row>, pd: &PromiseDetailDto) {
    let p = &pd.promise;
    r.push(heading(t, p.title.clone()));
    r.push(field(t, "name", Some(&p.name)));
    r.push(field(t, "status", Some(&p.status)));
    r.push(field(t, "importance", Some(&p.importance)));
    r.push(field(t, "stage", Some(&p.derived_stage)));
    r.push(field(t, "summary", Some(&p.summary)));
    r.push(field(t, "payoff", p.payoff_expectation.as_deref()));
    let cadence = p.cadence_chapters.map(|c| match c {
        1 => "every chapter".to_string(),
        c => format!("every {c} chapters"),
    });
    r.push(field(t, "cadence", cadence.as_deref()));
    r.push(field(
        t,
        "deadline",
        chapter_name(d, p.deadline_chapter_id).as_deref(),
    ));
    r.push(field(t, "tags", Some(&p.tags.join(", "))));
    let s = &p.beat_stats;
    r.push(section(t, format!("Beats ({})", s.total)));
    r.push(plain(
        format!(
            "plant {} · advance {} · setback {} · payoff {}",
            s.by_kind.plant, s.by_kind.advance, s.by_kind.setback, s.by_kind.payoff
        ),
        t.text,
    ));
    r.push(plain(
        format!(
            "planned {} · factual {} · archived {}",
            s.by_state.planned, s.by_state.factual, s.by_state.archived
        ),
        t.dim,
    ));
    for b in &pd.beats {
        let ch = b
            .scene
            .chapter
            .as_ref()
            .map(|c| format!(" · {}", c.title))
            .unwrap_or_default();
        r.push((
            Line::from(vec![
                Span::styled(format!("{:<8}", b.kind), t.tool),
                Span::raw(b.scene.title.clone()),
                Span::styled(format!(" · {}{ch}", b.state), t.dim),
            ]),
            8,
        ));
        if let Some(n) = b.note.as_deref().filter(|n| !n.is_empty()) {
            r.push((Line::from(Span::styled(format!("        {n}"), t.meta)), 8));
        }
    }
    r.push(stamps(t, &p.created_at, &p.updated_at));
}

/// A decision's reference as the author knows it: the record's title with its kind and id
/// (`Who writes the book (promise #1)`), a content path as itself; the raw `promise://1` only
/// when the record is not loaded (a scene: the pane loads scenes per chapter).
fn ref_name(d: &StoryData, target: &str) -> String {
    use crate::plot::refs::{parse_decision_ref, DecisionRef};
    let named = match parse_decision_ref(target) {
        Some(DecisionRef::Entity { kind, id }) => {
            let title = match kind {
                "promise" => d.promise(id).map(|p| p.title.clone()),
                "decision" => d.decision(id).map(|x| x.title.clone()),
                "thread" => d.thread(id).map(|t| t.thread.title.clone()),
                _ => None,
            };
            title.map(|title| format!("{title} ({kind} #{id})"))
        }
        Some(DecisionRef::Content(path)) => Some(path),
        None => None,
    };
    named.unwrap_or_else(|| target.to_string())
}

fn decision_rows(t: &Theme, d: &StoryData, r: &mut Vec<Row>, x: &DecisionDto) {
    r.push(heading(t, x.title.clone()));
    r.push(field(t, "name", Some(&x.name)));
    r.push(field(t, "status", Some(&x.status)));
    r.push(field(t, "question", Some(&x.question)));
    r.push(section(t, format!("Options ({})", x.options.len())));
    for o in &x.options {
        let note = o
            .note
            .as_deref()
            .map(|n| format!(" — {n}"))
            .unwrap_or_default();
        r.push((
            Line::from(vec![
                Span::raw(format!("• {}", o.option)),
                Span::styled(note, t.dim),
            ]),
            2,
        ));
    }
    r.push(field(
        t,
        "deadline",
        chapter_name(d, x.deadline_chapter_id).as_deref(),
    ));
    r.push(field(t, "decision", x.decision.as_deref()));
    r.push(field(t, "motivation", x.motivation.as_deref()));
    r.push(field(t, "risk", x.risk.as_deref()));
    if !x.rejected_alternatives.is_empty() {
        r.push(section(t, "Rejected alternatives"));
        for a in &x.rejected_alternatives {
            let why = a
                .why_rejected
                .as_deref()
                .map(|w| format!(" — {w}"))
                .unwrap_or_default();
            r.push((
                Line::from(vec![
                    Span::raw(format!("• {}", a.option)),
                    Span::styled(why, t.dim),
                ]),
                2,
            ));
        }
    }
    let refs = |v: &[RefCheck]| -> String {
        v.iter()
            .map(|r| {
                if r.valid {
                    ref_name(d, &r.target)
                } else {
                    format!("{} (dangling)", r.target)
                }
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    r.push(field(t, "serves", Some(&refs(&x.serves))));
    r.push(field(t, "depends on", Some(&refs(&x.depends_on))));
    let sup = x.superseded_by_id.map(|s| match d.decision(s) {
        Some(o) => format!("{} (#{s})", o.title),
        None => format!("#{s}"),
    });
    r.push(field(t, "superseded by", sup.as_deref()));
    let a = &x.anchor;
    let anchor = match (a.id, &a.path) {
        (Some(id), _) => format!("{} #{id}", a.kind),
        (None, Some(p)) => format!("{} {p}", a.kind),
        _ => a.kind.clone(),
    };
    r.push(field(t, "anchor", Some(&anchor)));
    r.push(field(t, "note", x.note.as_deref()));
    r.push(stamps(t, &x.created_at, &x.updated_at));
}
