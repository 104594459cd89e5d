//! The writer brief as Markdown, in NeuroBook's section order: goal and landing; chapter
//! parameters (pov/tone overrides); information control (always present — it is required);
//! pacing and opening; do not write; key plot points per scene (with world query hints in
//! autonomous mode, the world context in curated mode); promise tasks per scene; open
//! decisions; suggested reading. Empty optional sections are left out. No lore restatement,
//! queryable state or style rules.

use super::brief::BriefMode;
use super::brief::{BriefDto, BriefSceneDto};
use super::model::ChapterBrief;

fn tag(kind: &str) -> &'static str {
    match kind {
        "plant" => "[建立 plant]",
        "advance" => "[推进 advance]",
        "setback" => "[反挫 setback]",
        "payoff" => "[兑现 payoff]",
        _ => "[beat]",
    }
}

fn filled(v: &Option<String>) -> Option<&str> {
    v.as_deref().map(str::trim).filter(|s| !s.is_empty())
}

fn section(lines: &mut Vec<String>, title: &str, items: Vec<String>) {
    if items.is_empty() {
        return;
    }
    lines.push(format!("## {title}"));
    lines.extend(items.into_iter().map(|i| format!("- {i}")));
    lines.push(String::new());
}

fn chapter_sections(lines: &mut Vec<String>, b: &ChapterBrief) {
    let mut goal = Vec::new();
    if let Some(g) = filled(&b.goal) {
        goal.push(g.to_string());
    }
    if let Some(e) = filled(&b.ending) {
        goal.push(format!("Landing: {e}"));
    }
    section(lines, "Goal and landing", goal);
    let params: Vec<String> = [("POV", &b.pov), ("Tone", &b.tone)]
        .into_iter()
        .filter_map(|(k, v)| filled(v).map(|v| format!("{k}: {v}")))
        .collect();
    section(
        lines,
        "Chapter parameters (override the writer's defaults)",
        params,
    );
    let info: Vec<String> = [
        ("Reader knows", &b.reader_knows),
        ("Protagonist knows", &b.protagonist_knows),
        ("Must hide", &b.must_hide),
        ("May hint, never state", &b.hint_only),
    ]
    .into_iter()
    .filter_map(|(k, v)| filled(v).map(|v| format!("{k}: {v}")))
    .collect();
    if info.is_empty() {
        section(
            lines,
            "Information control (required)",
            vec!["⚠ Not set. The writer can query everything; without information control it will leak what the reader must not know yet. Fill the chapter brief before handing over.".into()],
        );
    } else {
        section(lines, "Information control (required)", info);
    }
    let pacing: Vec<String> = [("Pacing", &b.pacing), ("Opening hook", &b.opening)]
        .into_iter()
        .filter_map(|(k, v)| filled(v).map(|v| format!("{k}: {v}")))
        .collect();
    section(lines, "Pacing and opening", pacing);
    section(
        lines,
        "Do not write",
        filled(&b.do_not_write)
            .map(|d| vec![d.to_string()])
            .unwrap_or_default(),
    );
}

fn range(s: &BriefSceneDto) -> String {
    match (&s.world_anchor.start_time, &s.world_anchor.end_time) {
        (Some(a), Some(b)) => format!("{a} ~ {b}"),
        _ => "not anchored".into(),
    }
}

fn subject_list(s: &BriefSceneDto) -> String {
    if s.world_anchor.subject_ids.is_empty() {
        return "none given".into();
    }
    s.world_anchor
        .subject_ids
        .iter()
        .map(|id| {
            match s
                .world_context
                .as_ref()
                .and_then(|c| c.subjects.iter().find(|k| &k.id == id))
            {
                Some(k) if !k.name.is_empty() => format!("{} ({id})", k.name),
                Some(_) => id.clone(),
                None => format!("{id} (unresolved)"),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn location(s: &BriefSceneDto) -> Option<String> {
    let id = s.world_anchor.location_subject_id.as_ref()?;
    Some(
        match s.world_context.as_ref().and_then(|c| c.location.as_ref()) {
            Some(l) if !l.name.is_empty() => format!("{} ({id})", l.name),
            _ => id.clone(),
        },
    )
}

fn scene_points(lines: &mut Vec<String>, dto: &BriefDto, mode: BriefMode) {
    lines.push("## Key plot points (by scene)".into());
    if dto.scenes.is_empty() {
        lines.push("- No scenes are placed in this chapter yet.".into());
    }
    for (i, s) in dto.scenes.iter().enumerate() {
        lines.push(String::new());
        lines.push(format!("### {}. {}", i + 1, s.title));
        lines.push(format!(
            "- Thread: {}{}",
            s.thread_title,
            if s.thread_is_main {
                " (main thread)"
            } else {
                ""
            }
        ));
        lines.push(format!(
            "- What happens: {}",
            if s.summary.trim().is_empty() {
                "not filled in"
            } else {
                s.summary.trim()
            }
        ));
        lines.push(format!(
            "- Purpose: {}",
            filled(&s.purpose).unwrap_or("not filled in")
        ));
        if let Some(t) = filled(&s.writing_tip) {
            lines.push(format!("- Writing tip: {t}"));
        }
        if !s.thread_summary.trim().is_empty() {
            lines.push(format!("- Thread arc: {}", s.thread_summary.trim()));
        }
        let loc = location(s);
        match mode {
            BriefMode::Autonomous => lines.push(format!(
                "- World query hints: use execute_world on subjects [{}]{} for {}",
                subject_list(s),
                loc.map(|l| format!(" and location {l}"))
                    .unwrap_or_default(),
                range(s)
            )),
            BriefMode::Curated => {
                lines.push(format!(
                    "- Time: {} | In the scene: {} | Location: {}",
                    range(s),
                    subject_list(s),
                    loc.unwrap_or_else(|| "not given".into())
                ));
                match &s.world_context {
                    None => lines.push("  - World context: not available (no time range)".into()),
                    Some(c) => {
                        let known: Vec<String> = c
                            .subjects
                            .iter()
                            .map(|k| {
                                format!(
                                    "{} ({})",
                                    if k.name.is_empty() { &k.id } else { &k.name },
                                    k.kind
                                )
                            })
                            .collect();
                        lines.push(format!(
                            "  - Subjects: {}",
                            if known.is_empty() {
                                "none resolved".into()
                            } else {
                                known.join(", ")
                            }
                        ));
                    }
                }
            }
        }
    }
    lines.push(String::new());
}

/// Render the brief.
pub(crate) fn render(dto: &BriefDto, mode: BriefMode) -> String {
    let mut lines: Vec<String> = vec![
        format!("# Chapter writer brief: {}", dto.chapter.title),
        String::new(),
        format!("Chapter: {} (name: {}) · status: {}", dto.chapter.title, dto.chapter.name, dto.status.as_str()),
        match mode {
            BriefMode::Autonomous => "> Autonomous mode: check the world with execute_world and read the lorebook yourself; this brief gives the frame and query hints, not queryable state.".into(),
            BriefMode::Curated => "> Curated mode: the world summaries below are what you may rely on; nothing outside them is established.".into(),
        },
        String::new(),
    ];
    chapter_sections(&mut lines, &dto.chapter.brief);
    section(&mut lines, "Warnings", dto.warnings.clone());
    scene_points(&mut lines, dto, mode);
    if !dto.promise_tasks.is_empty() {
        lines.push("## Promise tasks".into());
        let mut last_scene = None;
        for t in &dto.promise_tasks {
            if last_scene != Some(t.scene_id) {
                lines.push(String::new());
                lines.push(format!("### {}", t.scene_title));
                last_scene = Some(t.scene_id);
            }
            let mut line = format!(
                "- {} {} ({})",
                tag(&t.kind),
                t.promise_title,
                t.promise_name
            );
            if let Some(n) = filled(&t.note) {
                line.push_str(&format!(": {n}"));
            }
            if let Some(e) = filled(&t.payoff_expectation) {
                line.push_str(&format!(" — payoff expectation: {e}"));
            }
            lines.push(line);
        }
        lines.push(String::new());
    }
    let decisions: Vec<String> = dto
        .open_decisions
        .iter()
        .map(|d| {
            format!(
                "{} ({}): {} — {}; do not settle it in prose",
                d.title, d.name, d.question, d.reason
            )
        })
        .collect();
    section(&mut lines, "Open decisions (not blocking)", decisions);
    let reading: Vec<String> = dto
        .suggested_reading
        .iter()
        .map(|r| match filled(&r.note) {
            Some(n) => format!("{} ({} · {n})", r.path, r.relation),
            None => format!("{} ({})", r.path, r.relation),
        })
        .collect();
    section(&mut lines, "Suggested reading", reading);
    lines.join("\n").trim_end().to_string()
}
