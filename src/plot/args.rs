//! JSON arguments (as the tools receive them) → typed inputs. The engine validated the JSON
//! Schema already; this layer still checks every type it reads, so input that did not come
//! through the schema (an edited call, a TUI form serialised as JSON) fails with a pointer too.
//!
//! Ids are accepted as strings of digits (NeuroBook's form) or as positive integers.

use serde_json::{Map, Value};

use super::error::{PlotError, PlotResult};
use super::input::*;
use super::model::{DecisionOption, RejectedAlternative};

/// Read one JSON object, naming fields by JSON Pointer.
pub struct ArgReader<'a> {
    obj: &'a Map<String, Value>,
    base: String,
}

static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();

/// A positive id given as `"12"` or `12`.
pub fn parse_id(v: &Value, ptr: &str) -> PlotResult<i64> {
    let id = match v {
        Value::String(s)
            if !s.starts_with('0') && !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) =>
        {
            s.parse().ok()
        }
        Value::Number(n) => n.as_i64(),
        _ => None,
    };
    id.filter(|i| *i > 0).ok_or_else(|| {
        PlotError::invalid(
            ptr,
            format!("{v} is not an id (a positive whole number, e.g. \"12\")"),
        )
    })
}

impl<'a> ArgReader<'a> {
    pub fn new(v: &'a Value) -> PlotResult<ArgReader<'a>> {
        match v {
            Value::Object(obj) => Ok(ArgReader {
                obj,
                base: String::new(),
            }),
            Value::Null => Ok(ArgReader {
                obj: EMPTY.get_or_init(Map::new),
                base: String::new(),
            }),
            _ => Err(PlotError::invalid("/", "the arguments must be an object")),
        }
    }

    pub fn ptr(&self, key: &str) -> String {
        format!("{}/{key}", self.base)
    }

    pub fn has(&self, key: &str) -> bool {
        self.obj.contains_key(key)
    }

    fn non_null(&self, key: &str) -> PlotResult<Option<&'a Value>> {
        match self.obj.get(key) {
            None => Ok(None),
            Some(Value::Null) => Err(PlotError::invalid(&self.ptr(key), "must not be null")),
            Some(v) => Ok(Some(v)),
        }
    }

    pub fn str(&self, key: &str) -> PlotResult<Option<String>> {
        match self.non_null(key)? {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(PlotError::invalid(&self.ptr(key), "must be a string")),
        }
    }

    pub fn field_str(&self, key: &str) -> PlotResult<Field<String>> {
        match self.obj.get(key) {
            None => Ok(Field::Keep),
            Some(Value::Null) => Ok(Field::Clear),
            Some(Value::String(s)) => Ok(Field::Set(s.clone())),
            Some(_) => Err(PlotError::invalid(
                &self.ptr(key),
                "must be a string or null",
            )),
        }
    }

    pub fn id(&self, key: &str) -> PlotResult<Option<i64>> {
        self.non_null(key)?
            .map(|v| parse_id(v, &self.ptr(key)))
            .transpose()
    }

    pub fn field_id(&self, key: &str) -> PlotResult<Field<i64>> {
        match self.obj.get(key) {
            None => Ok(Field::Keep),
            Some(Value::Null) => Ok(Field::Clear),
            Some(v) => Ok(Field::Set(parse_id(v, &self.ptr(key))?)),
        }
    }

    pub fn int(&self, key: &str) -> PlotResult<Option<i64>> {
        match self.non_null(key)? {
            None => Ok(None),
            Some(v) => v
                .as_i64()
                .map(Some)
                .ok_or_else(|| PlotError::invalid(&self.ptr(key), "must be a whole number")),
        }
    }

    pub fn field_int(&self, key: &str) -> PlotResult<Field<i64>> {
        match self.obj.get(key) {
            None => Ok(Field::Keep),
            Some(Value::Null) => Ok(Field::Clear),
            Some(v) => v.as_i64().map(Field::Set).ok_or_else(|| {
                PlotError::invalid(&self.ptr(key), "must be a whole number or null")
            }),
        }
    }

    pub fn bool(&self, key: &str) -> PlotResult<Option<bool>> {
        match self.non_null(key)? {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(PlotError::invalid(&self.ptr(key), "must be true or false")),
        }
    }

    pub fn array(&self, key: &str) -> PlotResult<Option<&'a Vec<Value>>> {
        match self.non_null(key)? {
            None => Ok(None),
            Some(Value::Array(a)) => Ok(Some(a)),
            Some(_) => Err(PlotError::invalid(&self.ptr(key), "must be an array")),
        }
    }

    pub fn str_list(&self, key: &str) -> PlotResult<Option<Vec<String>>> {
        let Some(items) = self.array(key)? else {
            return Ok(None);
        };
        items
            .iter()
            .enumerate()
            .map(|(i, v)| {
                v.as_str().map(str::to_string).ok_or_else(|| {
                    PlotError::invalid(&format!("{}/{i}", self.ptr(key)), "must be a string")
                })
            })
            .collect::<PlotResult<Vec<_>>>()
            .map(Some)
    }

    pub fn object(&self, key: &str) -> PlotResult<Option<ArgReader<'a>>> {
        match self.non_null(key)? {
            None => Ok(None),
            Some(Value::Object(obj)) => Ok(Some(ArgReader {
                obj,
                base: self.ptr(key),
            })),
            Some(_) => Err(PlotError::invalid(&self.ptr(key), "must be an object")),
        }
    }

    /// The objects of an array, each with its own pointer.
    pub fn objects(&self, key: &str) -> PlotResult<Option<Vec<ArgReader<'a>>>> {
        let Some(items) = self.array(key)? else {
            return Ok(None);
        };
        let base = self.ptr(key);
        items
            .iter()
            .enumerate()
            .map(|(i, v)| match v {
                Value::Object(obj) => Ok(ArgReader {
                    obj,
                    base: format!("{base}/{i}"),
                }),
                _ => Err(PlotError::invalid(
                    &format!("{base}/{i}"),
                    "must be an object",
                )),
            })
            .collect::<PlotResult<Vec<_>>>()
            .map(Some)
    }
}

pub fn act_input(a: &ArgReader) -> PlotResult<ActInput> {
    Ok(ActInput {
        name: a.str("name")?,
        title: a.str("title")?,
        summary: a.str("summary")?,
        note: a.field_str("note")?,
        sort_order: a.int("sortOrder")?,
    })
}

pub fn chapter_input(a: &ArgReader) -> PlotResult<ChapterInput> {
    let mut brief = BriefInput::default();
    if let Some(b) = a.object("brief")? {
        brief = BriefInput {
            goal: b.field_str("goal")?,
            pov: b.field_str("pov")?,
            tone: b.field_str("tone")?,
            pacing: b.field_str("pacing")?,
            reader_knows: b.field_str("readerKnows")?,
            protagonist_knows: b.field_str("protagonistKnows")?,
            must_hide: b.field_str("mustHide")?,
            hint_only: b.field_str("hintOnly")?,
            opening: b.field_str("opening")?,
            ending: b.field_str("ending")?,
            do_not_write: b.field_str("doNotWrite")?,
        };
    }
    Ok(ChapterInput {
        act_id: a.field_id("actId")?,
        name: a.str("name")?,
        title: a.str("title")?,
        note: a.field_str("note")?,
        sort_order: a.int("sortOrder")?,
        brief,
    })
}

pub fn thread_input(a: &ArgReader) -> PlotResult<ThreadInput> {
    Ok(ThreadInput {
        story_phase_id: a.field_id("storyPhaseId")?,
        name: a.str("name")?,
        title: a.str("title")?,
        is_main_thread: a.bool("isMainThread")?,
        status: a.str("status")?,
        mice_type: a.field_str("miceType")?,
        summary: a.str("summary")?,
        tags: a.str_list("tags")?,
        writing_tip: a.field_str("writingTip")?,
        note: a.field_str("note")?,
    })
}

/// `threadId` is not read here: the tools resolve it (explicit or selection).
pub fn scene_input(a: &ArgReader) -> PlotResult<SceneInput> {
    let world_anchor = match a.object("worldAnchor")? {
        None => None,
        Some(w) => Some(WorldAnchorInput {
            start_time: w.field_str("startTime")?.value().cloned(),
            end_time: w.field_str("endTime")?.value().cloned(),
            subject_ids: w.str_list("subjectIds")?.unwrap_or_default(),
            location_subject_id: w.field_str("locationSubjectId")?.value().cloned(),
        }),
    };
    let refs = match a.objects("refs")? {
        None => None,
        Some(items) => Some(
            items
                .iter()
                .map(|r| {
                    Ok(SceneRefInput {
                        relation: r.str("relation")?.unwrap_or_default(),
                        target: r
                            .str("target")?
                            .ok_or_else(|| PlotError::invalid(&r.ptr("target"), "required"))?,
                        visibility: r.str("visibility")?.unwrap_or_else(|| "author".into()),
                        note: r.field_str("note")?.value().cloned(),
                    })
                })
                .collect::<PlotResult<Vec<_>>>()?,
        ),
    };
    Ok(SceneInput {
        thread_id: None,
        chapter_id: a.field_id("chapterId")?,
        title: a.str("title")?,
        status: a.str("status")?,
        outcome_type: a.field_str("outcomeType")?,
        pacing_role: a.field_str("pacingRole")?,
        summary: a.str("summary")?,
        purpose: a.field_str("purpose")?,
        writing_tip: a.field_str("writingTip")?,
        note: a.field_str("note")?,
        world_anchor,
        refs,
    })
}

pub fn promise_input(a: &ArgReader) -> PlotResult<PromiseInput> {
    Ok(PromiseInput {
        name: a.str("name")?,
        title: a.str("title")?,
        status: a.str("status")?,
        importance: a.str("importance")?,
        summary: a.str("summary")?,
        payoff_expectation: a.field_str("payoffExpectation")?,
        cadence_chapters: a.field_int("cadenceChapters")?,
        deadline_chapter_id: a.field_id("deadlineChapterId")?,
        tags: a.str_list("tags")?,
    })
}

pub fn beat_input(a: &ArgReader) -> PlotResult<BeatInput> {
    Ok(BeatInput {
        kind: a.str("kind")?,
        note: a.field_str("note")?,
        auto_fulfill: a.bool("autoFulfill")?,
    })
}

pub fn decision_input(a: &ArgReader) -> PlotResult<DecisionInput> {
    let options = match a.objects("options")? {
        None => None,
        Some(items) => Some(
            items
                .iter()
                .map(|o| {
                    Ok(DecisionOption {
                        option: o
                            .str("option")?
                            .ok_or_else(|| PlotError::invalid(&o.ptr("option"), "required"))?,
                        note: o.field_str("note")?.value().cloned(),
                    })
                })
                .collect::<PlotResult<Vec<_>>>()?,
        ),
    };
    let rejected = match a.objects("rejectedAlternatives")? {
        None => None,
        Some(items) => Some(
            items
                .iter()
                .map(|o| {
                    Ok(RejectedAlternative {
                        option: o
                            .str("option")?
                            .ok_or_else(|| PlotError::invalid(&o.ptr("option"), "required"))?,
                        why_rejected: o.field_str("whyRejected")?.value().cloned(),
                    })
                })
                .collect::<PlotResult<Vec<_>>>()?,
        ),
    };
    let anchor = match a.object("anchor")? {
        None => None,
        Some(o) => Some(AnchorInput {
            kind: o
                .str("kind")?
                .ok_or_else(|| PlotError::invalid(&o.ptr("kind"), "required"))?,
            id: o.id("id")?,
            path: o.str("path")?,
        }),
    };
    Ok(DecisionInput {
        name: a.str("name")?,
        title: a.str("title")?,
        status: a.str("status")?,
        question: a.str("question")?,
        options,
        deadline_chapter_id: a.field_id("deadlineChapterId")?,
        decision: a.field_str("decision")?,
        motivation: a.field_str("motivation")?,
        rejected_alternatives: rejected,
        risk: a.field_str("risk")?,
        chosen_option: a.str("chosenOption")?,
        serves: a.str_list("serves")?,
        depends_on: a.str_list("dependsOn")?,
        superseded_by_id: a.field_id("supersededById")?,
        anchor,
        note: a.field_str("note")?,
    })
}
