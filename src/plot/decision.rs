//! Decisions (ADR-style records). Created `open`; afterwards any status may be set, but the
//! merged final state must hold:
//! - `decided` ⇒ decision, motivation and risk non-empty;
//! - `dropped` ⇒ note non-empty;
//! - `superseded` ⇒ supersededById set (another decision of the same story, not itself).
//!
//! Only on the transition into `decided` do unchosen options become `rejectedAlternatives`
//! skeletons (`whyRejected: null`), unless the alternatives are given; `chosenOption` is valid
//! only then, must match an option, and excludes `rejectedAlternatives`.
//!
//! Ledger order: open, decided, superseded, dropped; then id.

use super::ctx::{check_enum, int, json_text, opt_int, opt_text, required_text, text, Plot};
use super::error::{PlotError, PlotResult};
use super::input::{AnchorInput, DecisionInput, Field};
use super::model::*;
use super::rows;
use super::track::Table;

fn status_rank(s: &str) -> u8 {
    match s {
        "open" => 0,
        "decided" => 1,
        "superseded" => 2,
        "dropped" => 3,
        _ => 4,
    }
}

fn blank(v: &Option<String>) -> bool {
    v.as_deref().is_none_or(|s| s.trim().is_empty())
}

/// Trim each option and refuse duplicates: `decide` finds the chosen option by its text, so two
/// equal texts would make the rejected-alternative skeletons ambiguous.
fn normalize_options(options: &[DecisionOption]) -> PlotResult<Vec<DecisionOption>> {
    let mut out: Vec<DecisionOption> = Vec::with_capacity(options.len());
    for (i, o) in options.iter().enumerate() {
        let option = required_text(&format!("/options/{i}/option"), &o.option)?;
        if let Some(j) = out.iter().position(|x| x.option == option) {
            return Err(PlotError::invalid(
                &format!("/options/{i}/option"),
                format!("'{option}' repeats /options/{j}/option (options are compared after trimming); each option needs its own text, because decide identifies the chosen option by it"),
            ));
        }
        out.push(DecisionOption {
            option,
            note: o.note.clone(),
        });
    }
    Ok(out)
}

fn normalize_rejected(items: &[RejectedAlternative]) -> PlotResult<Vec<RejectedAlternative>> {
    items
        .iter()
        .enumerate()
        .map(|(i, o)| {
            Ok(RejectedAlternative {
                option: required_text(&format!("/rejectedAlternatives/{i}/option"), &o.option)?,
                why_rejected: o.why_rejected.clone(),
            })
        })
        .collect()
}

impl Plot<'_> {
    fn resolve_decision(&mut self, mut d: DecisionDto) -> PlotResult<DecisionDto> {
        d.deadline_chapter = match d.deadline_chapter_id {
            Some(id) => self.chapter_ref(id)?,
            None => None,
        };
        d.serves = self.ref_checks(&d.serves)?;
        d.depends_on = self.ref_checks(&d.depends_on)?;
        Ok(d)
    }

    /// `get_story_decision` with an id.
    pub fn get_decision(&mut self, id: i64) -> PlotResult<DecisionDto> {
        let (d, _) = self.find_decision(id, "/decisionId")?;
        self.resolve_decision(d)
    }

    /// `get_story_decision` without an id: the ledger, dangling references marked.
    pub fn list_decisions(&mut self) -> PlotResult<Vec<DecisionDto>> {
        let Some(story) = self.story_id()? else {
            return Ok(Vec::new());
        };
        let sql = format!(
            "SELECT {} FROM \"StoryDecision\" WHERE \"storyId\" = ?1",
            rows::DECISION_COLS
        );
        let raw = self.all(&sql, [story], rows::decision)?;
        let mut list = Vec::with_capacity(raw.len());
        for (d, _) in raw {
            list.push(self.resolve_decision(d)?);
        }
        list.sort_by_key(|d| (status_rank(&d.status), d.id));
        Ok(list)
    }

    fn check_decision_common(&mut self, input: &DecisionInput) -> PlotResult<()> {
        if let Some(s) = &input.status {
            check_enum("/status", s, DECISION_STATUSES)?;
        }
        if let Some(c) = input.deadline_chapter_id.value() {
            self.find_chapter(*c, "/deadlineChapterId")?;
        }
        Ok(())
    }

    /// Create an open decision: `name`, `title` and `question` required; the fields of a settled
    /// decision are refused.
    pub fn create_decision(&mut self, input: &DecisionInput) -> PlotResult<DecisionDto> {
        let settled: Vec<&str> = [
            ("status", input.status.is_some()),
            ("decision", !input.decision.is_keep()),
            ("motivation", !input.motivation.is_keep()),
            ("risk", !input.risk.is_keep()),
            (
                "rejectedAlternatives",
                input.rejected_alternatives.is_some(),
            ),
            ("supersededById", !input.superseded_by_id.is_keep()),
            ("chosenOption", input.chosen_option.is_some()),
        ]
        .into_iter()
        .filter_map(|(k, present)| present.then_some(k))
        .collect();
        if let Some(first) = settled.first() {
            return Err(PlotError::invalid(
                &format!("/{first}"),
                format!("create makes an open decision and does not take {}; settle it afterwards with action decide", settled.join("/")),
            ));
        }
        let name = required_text(
            "/name",
            input
                .name
                .as_deref()
                .ok_or_else(|| PlotError::invalid("/name", "required to create a decision"))?,
        )?;
        let title = required_text(
            "/title",
            input
                .title
                .as_deref()
                .ok_or_else(|| PlotError::invalid("/title", "required to create a decision"))?,
        )?;
        let question = required_text(
            "/question",
            input.question.as_deref().ok_or_else(|| {
                PlotError::invalid(
                    "/question",
                    "required to create a decision: the open question is its core",
                )
            })?,
        )?;
        let story = self.ensure_story()?;
        self.check_decision_common(input)?;
        self.assert_name_free(Table::Decision, story, &name, None, "decision")?;
        let options = normalize_options(input.options.as_deref().unwrap_or(&[]))?;
        let anchor = self
            .resolve_anchor(input.anchor.as_ref().unwrap_or(&AnchorInput {
                kind: "story".into(),
                ..AnchorInput::default()
            }))?
            .0;
        let serves = self.check_decision_refs("serves", input.serves.as_deref().unwrap_or(&[]))?;
        let depends =
            self.check_decision_refs("dependsOn", input.depends_on.as_deref().unwrap_or(&[]))?;
        let id = self.insert(
            Table::Decision,
            &[
                ("storyId", int(story)),
                ("name", text(&name)),
                ("title", text(&title)),
                ("status", text("open")),
                ("question", text(&question)),
                ("options", json_text(&options)),
                (
                    "deadlineChapterId",
                    opt_int(input.deadline_chapter_id.value().copied()),
                ),
                ("rejectedAlternatives", text("[]")),
                ("serves", json_text(&serves)),
                ("dependsOn", json_text(&depends)),
                ("anchorKind", text(&anchor.kind)),
                ("anchorActId", opt_int(anchor.act)),
                ("anchorChapterId", opt_int(anchor.chapter)),
                ("anchorThreadId", opt_int(anchor.thread)),
                ("anchorSceneId", opt_int(anchor.scene)),
                ("anchorPromiseId", opt_int(anchor.promise)),
                ("anchorPath", opt_text(anchor.path.as_ref())),
                ("note", opt_text(input.note.value())),
            ],
        )?;
        self.get_decision(id)
    }

    pub fn update_decision(&mut self, id: i64, input: &DecisionInput) -> PlotResult<DecisionDto> {
        self.write_decision(id, input, "update")
    }

    /// Settle it: status `decided` (needs decision, motivation and risk).
    pub fn decide_decision(&mut self, id: i64, input: &DecisionInput) -> PlotResult<DecisionDto> {
        self.forced_decision_status(id, input, "decided", "decide")
    }

    /// The question became moot: status `dropped` (needs a note saying why).
    pub fn drop_decision(&mut self, id: i64, input: &DecisionInput) -> PlotResult<DecisionDto> {
        self.forced_decision_status(id, input, "dropped", "drop")
    }

    fn forced_decision_status(
        &mut self,
        id: i64,
        input: &DecisionInput,
        status: &str,
        action: &str,
    ) -> PlotResult<DecisionDto> {
        if let Some(s) = input.status.as_deref().filter(|s| *s != status) {
            return Err(PlotError::invalid("/status", format!("{action} sets the status to {status}; it cannot also set status '{s}' (use action update for other statuses)")));
        }
        let input = DecisionInput {
            status: Some(status.into()),
            ..input.clone()
        };
        self.write_decision(id, &input, action)
    }

    fn write_decision(
        &mut self,
        id: i64,
        input: &DecisionInput,
        action: &str,
    ) -> PlotResult<DecisionDto> {
        self.ensure_story()?;
        let (current, _) = self.find_decision(id, "/decisionId")?;
        self.check_decision_common(input)?;
        let mut sets = Vec::new();
        if let Some(n) = &input.name {
            let n = required_text("/name", n)?;
            if n != current.name {
                self.assert_name_free(Table::Decision, current.story_id, &n, Some(id), "decision")?;
            }
            sets.push(("name", text(&n)));
        }
        if let Some(t) = &input.title {
            sets.push(("title", text(&required_text("/title", t)?)));
        }
        if let Some(q) = &input.question {
            sets.push(("question", text(&required_text("/question", q)?)));
        }
        if let Some(s) = input.superseded_by_id.value() {
            if *s == id {
                return Err(PlotError::invalid("/supersededById", "a decision cannot supersede itself; point at the newer decision that replaces it"));
            }
            self.find_decision(*s, "/supersededById")?;
        }
        let anchor = match &input.anchor {
            Some(a) => Some(self.resolve_anchor(a)?.0),
            None => None,
        };
        let serves = match &input.serves {
            Some(s) => Some(self.check_decision_refs("serves", s)?),
            None => None,
        };
        let depends = match &input.depends_on {
            Some(s) => Some(self.check_decision_refs("dependsOn", s)?),
            None => None,
        };
        let options = match &input.options {
            Some(o) => Some(normalize_options(o)?),
            None => None,
        };
        // The state after the write; the invariants and the decide transition look at it.
        let final_status = input
            .status
            .clone()
            .unwrap_or_else(|| current.status.clone());
        let final_options = options.clone().unwrap_or_else(|| current.options.clone());
        let final_decision = input.decision.merge(current.decision.clone());
        let final_motivation = input.motivation.merge(current.motivation.clone());
        let final_risk = input.risk.merge(current.risk.clone());
        let final_note = input.note.merge(current.note.clone());
        let final_superseded = input.superseded_by_id.merge(current.superseded_by_id);
        let deciding = final_status == "decided" && current.status != "decided";
        if input.chosen_option.is_some() && !deciding {
            return Err(PlotError::invalid("/chosenOption", "chosenOption is only valid when the decision is being decided (its status becomes decided); to fill in why alternatives were rejected, update rejectedAlternatives"));
        }
        if deciding && input.chosen_option.is_some() && input.rejected_alternatives.is_some() {
            return Err(PlotError::invalid("/chosenOption", "give either chosenOption (unchosen options become rejected alternatives) or rejectedAlternatives (the whole list), not both"));
        }
        let mut rejected = match &input.rejected_alternatives {
            Some(r) => Some(normalize_rejected(r)?),
            None => None,
        };
        if deciding && rejected.is_none() {
            if let Some(chosen) = &input.chosen_option {
                if !final_options.iter().any(|o| &o.option == chosen) {
                    let known: Vec<&str> =
                        final_options.iter().map(|o| o.option.as_str()).collect();
                    return Err(PlotError::invalid(
                        "/chosenOption",
                        format!(
                            "'{chosen}' matches no option; the options are: {}",
                            if known.is_empty() {
                                "(none)".to_string()
                            } else {
                                known.join(" / ")
                            }
                        ),
                    ));
                }
            }
            rejected = Some(
                final_options
                    .iter()
                    .filter(|o| Some(&o.option) != input.chosen_option.as_ref())
                    .map(|o| RejectedAlternative {
                        option: o.option.clone(),
                        why_rejected: None,
                    })
                    .collect(),
            );
        }
        match final_status.as_str() {
            "decided" => {
                for (field, v) in [
                    ("decision", &final_decision),
                    ("motivation", &final_motivation),
                    ("risk", &final_risk),
                ] {
                    if blank(v) {
                        return Err(PlotError::invalid(
                            &format!("/{field}"),
                            format!("a decided decision needs a non-empty {field} (decision = the conclusion, motivation = why, risk = where a writer must stop)"),
                        ));
                    }
                }
            }
            "dropped" if blank(&final_note) => {
                return Err(PlotError::invalid(
                    "/note",
                    "a dropped decision needs a note saying why the question no longer matters",
                ));
            }
            "superseded" if final_superseded.is_none() => {
                return Err(PlotError::invalid("/supersededById", "a superseded decision needs supersededById: the id of the decision that replaces it"));
            }
            _ => {}
        }
        if let Some(s) = &input.status {
            sets.push(("status", text(s)));
        }
        if let Some(o) = &options {
            sets.push(("options", json_text(o)));
        }
        for (col, field) in [
            ("decision", &input.decision),
            ("motivation", &input.motivation),
            ("risk", &input.risk),
            ("note", &input.note),
        ] {
            if !field.is_keep() {
                sets.push((col, opt_text(field.value())));
            }
        }
        if !input.deadline_chapter_id.is_keep() {
            sets.push((
                "deadlineChapterId",
                opt_int(input.deadline_chapter_id.value().copied()),
            ));
        }
        if let Some(r) = &rejected {
            sets.push(("rejectedAlternatives", json_text(r)));
        }
        if let Some(s) = &serves {
            sets.push(("serves", json_text(s)));
        }
        if let Some(d) = &depends {
            sets.push(("dependsOn", json_text(d)));
        }
        if !matches!(input.superseded_by_id, Field::Keep) {
            sets.push((
                "supersededById",
                opt_int(input.superseded_by_id.value().copied()),
            ));
        }
        if let Some(a) = &anchor {
            sets.push(("anchorKind", text(&a.kind)));
            sets.push(("anchorActId", opt_int(a.act)));
            sets.push(("anchorChapterId", opt_int(a.chapter)));
            sets.push(("anchorThreadId", opt_int(a.thread)));
            sets.push(("anchorSceneId", opt_int(a.scene)));
            sets.push(("anchorPromiseId", opt_int(a.promise)));
            sets.push(("anchorPath", opt_text(a.path.as_ref())));
        }
        self.update(Table::Decision, id, action, &sets)?;
        self.get_decision(id)
    }
}
