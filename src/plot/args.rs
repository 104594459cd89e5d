//! The plot write tools' arguments as Rust types. The JSON Schema the model sees is generated
//! from these (doc comments are the field descriptions), and calls are deserialized into them,
//! so schema and parser cannot drift. Each turns into the typed input the services take
//! ([`super::input`]); rules that depend on the `action` are the services' (the TUI shares
//! them). Ids are accepted as strings of digits (NeuroBook's form) or as positive integers.
//!
//! [`ArgReader`] and the `*_input` functions keep the Story pane's edit path reading a JSON
//! object of changed fields through these same types.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

use super::error::{PlotError, PlotResult};
use super::input::*;
use super::model::{DecisionOption, RejectedAlternative, MAX_SUBJECTS};
use super::wire::vocab::*;
use super::wire::{field_id, field_string, OneOf, PlotId};

/// Declare an `action` enum: its variants, their spelling, and `as_str`.
macro_rules! actions {
    ($ty:ident { $($v:ident => $s:literal),* $(,)? }) => {
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, JsonSchema)]
        pub enum $ty {
            $(#[serde(rename = $s)] $v),*
        }
        impl $ty {
            pub fn as_str(self) -> &'static str {
                match self { $(Self::$v => $s),* }
            }
        }
    };
}

actions!(ActAction { Create => "create", Update => "update" });
actions!(RecordAction { Create => "create", Update => "update", Archive => "archive" });
actions!(PromiseAction { Create => "create", Update => "update", Abandon => "abandon", Fulfill => "fulfill" });
actions!(BeatAction { Set => "set", Remove => "remove" });
actions!(DecisionAction { Create => "create", Update => "update", Decide => "decide", Drop => "drop" });

fn vocab<V>(v: &Option<OneOf<V>>) -> Option<String> {
    v.as_ref().map(|s| s.as_str().to_string())
}

#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SaveActArgs {
    /// Act id (update)
    pub act_id: Option<PlotId>,
    /// Machine-friendly name, unique in the story (create)
    #[schemars(length(min = 1))]
    pub name: Option<String>,
    /// Title (create)
    #[schemars(length(min = 1))]
    pub title: Option<String>,
    pub summary: Option<String>,
    /// Note; null clears it
    #[serde(default)]
    pub note: Field<String>,
    #[schemars(range(min = 0))]
    pub sort_order: Option<i64>,
    /// What to do
    pub action: ActAction,
    /// Optional single-segment folder name of another open project; default: the current project
    #[schemars(length(min = 1))]
    pub project_root: Option<String>,
}

impl SaveActArgs {
    pub fn input(&self) -> ActInput {
        ActInput {
            name: self.name.clone(),
            title: self.title.clone(),
            summary: self.summary.clone(),
            note: self.note.clone(),
            sort_order: self.sort_order,
        }
    }
}

/// The writer's instructions; readerKnows/protagonistKnows/mustHide/hintOnly are the information control
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BriefArgs {
    /// Free text; null clears it
    #[serde(default)]
    pub goal: Field<String>,
    /// Free text; null clears it
    #[serde(default)]
    pub pov: Field<String>,
    /// Free text; null clears it
    #[serde(default)]
    pub tone: Field<String>,
    /// Free text; null clears it
    #[serde(default)]
    pub pacing: Field<String>,
    /// Free text; null clears it
    #[serde(default)]
    pub reader_knows: Field<String>,
    /// Free text; null clears it
    #[serde(default)]
    pub protagonist_knows: Field<String>,
    /// Free text; null clears it
    #[serde(default)]
    pub must_hide: Field<String>,
    /// Free text; null clears it
    #[serde(default)]
    pub hint_only: Field<String>,
    /// Free text; null clears it
    #[serde(default)]
    pub opening: Field<String>,
    /// Free text; null clears it
    #[serde(default)]
    pub ending: Field<String>,
    /// Free text; null clears it
    #[serde(default)]
    pub do_not_write: Field<String>,
}

impl BriefArgs {
    pub fn input(&self) -> BriefInput {
        BriefInput {
            goal: self.goal.clone(),
            pov: self.pov.clone(),
            tone: self.tone.clone(),
            pacing: self.pacing.clone(),
            reader_knows: self.reader_knows.clone(),
            protagonist_knows: self.protagonist_knows.clone(),
            must_hide: self.must_hide.clone(),
            hint_only: self.hint_only.clone(),
            opening: self.opening.clone(),
            ending: self.ending.clone(),
            do_not_write: self.do_not_write.clone(),
        }
    }
}

#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SaveChapterArgs {
    /// Chapter id (update)
    pub chapter_id: Option<PlotId>,
    /// Act to place the chapter in; null takes it out of any act
    #[serde(default)]
    pub act_id: Field<PlotId>,
    /// Machine-friendly name, unique in the story (create); prose points at it
    #[schemars(length(min = 1))]
    pub name: Option<String>,
    /// Title (create)
    #[schemars(length(min = 1))]
    pub title: Option<String>,
    /// Note; null clears it
    #[serde(default)]
    pub note: Field<String>,
    #[schemars(range(min = 0))]
    pub sort_order: Option<i64>,
    /// The writer's instructions; readerKnows/protagonistKnows/mustHide/hintOnly are the information control
    pub brief: Option<BriefArgs>,
    /// What to do
    pub action: ActAction,
    /// Optional single-segment folder name of another open project; default: the current project
    #[schemars(length(min = 1))]
    pub project_root: Option<String>,
}

impl SaveChapterArgs {
    pub fn input(&self) -> ChapterInput {
        ChapterInput {
            act_id: field_id(&self.act_id),
            name: self.name.clone(),
            title: self.title.clone(),
            note: self.note.clone(),
            sort_order: self.sort_order,
            brief: self
                .brief
                .as_ref()
                .map(BriefArgs::input)
                .unwrap_or_default(),
        }
    }
}

#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SaveThreadArgs {
    /// Thread id (update/archive); default: the selected thread
    pub thread_id: Option<PlotId>,
    /// Phase to group the thread under; null ungroups it
    #[serde(default)]
    pub story_phase_id: Field<PlotId>,
    /// Machine-friendly name, unique in the story (create)
    #[schemars(length(min = 1))]
    pub name: Option<String>,
    /// Title (create)
    #[schemars(length(min = 1))]
    pub title: Option<String>,
    pub is_main_thread: Option<bool>,
    /// Default draft
    pub status: Option<OneOf<ThreadStatus>>,
    /// MICE type; null clears it
    #[serde(default)]
    pub mice_type: Field<OneOf<MiceType>>,
    pub summary: Option<String>,
    /// Tags (replaces the list)
    pub tags: Option<Vec<String>>,
    /// Null clears it
    #[serde(default)]
    pub writing_tip: Field<String>,
    /// Null clears it
    #[serde(default)]
    pub note: Field<String>,
    /// What to do
    pub action: RecordAction,
    /// Optional single-segment folder name of another open project; default: the current project
    #[schemars(length(min = 1))]
    pub project_root: Option<String>,
}

impl SaveThreadArgs {
    pub fn input(&self) -> ThreadInput {
        ThreadInput {
            story_phase_id: field_id(&self.story_phase_id),
            name: self.name.clone(),
            title: self.title.clone(),
            is_main_thread: self.is_main_thread,
            status: vocab(&self.status),
            mice_type: field_string(&self.mice_type),
            summary: self.summary.clone(),
            tags: self.tags.clone(),
            writing_tip: self.writing_tip.clone(),
            note: self.note.clone(),
        }
    }
}

// When and with whom the scene happens. Every key is required (null = not set), as in
// NeuroBook; the instants are derived from the calendar text.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WorldAnchorArgs {
    /// Calendar text, e.g. 1911-03-02 06:30 (BC 44-03-15 12:00); null = not set
    #[schemars(length(min = 1))]
    pub start_time: Required<String>,
    /// Calendar text, not before startTime
    #[schemars(length(min = 1))]
    pub end_time: Required<String>,
    /// Ignored on write (derived from startTime)
    pub start_instant: Required<StringOrInteger>,
    /// Ignored on write (derived from endTime)
    pub end_instant: Required<StringOrInteger>,
    /// World subjects in the scene (unique, at most 100)
    #[schemars(length(max = "MAX_SUBJECTS"), inner(length(min = 1)))]
    pub subject_ids: Vec<String>,
    #[schemars(length(min = 1))]
    pub location_subject_id: Required<String>,
}

/// A key that must be present but whose value may be `null` (`None`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Required<T>(pub Option<T>);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Required<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Option::<T>::deserialize(d).map(Required)
    }
}

impl<T: JsonSchema> JsonSchema for Required<T> {
    fn is_referenceable() -> bool {
        false
    }
    fn schema_name() -> String {
        Field::<T>::schema_name()
    }
    fn json_schema(gen: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        Field::<T>::json_schema(gen)
    }
}

/// An instant as NeuroBook writes it back: a string or an integer (ignored on write).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum StringOrInteger {
    Text(String),
    Integer(i64),
}

impl JsonSchema for StringOrInteger {
    fn is_referenceable() -> bool {
        false
    }
    fn schema_name() -> String {
        "StringOrInteger".into()
    }
    fn json_schema(_: &mut schemars::gen::SchemaGenerator) -> schemars::schema::Schema {
        serde_json::from_value(serde_json::json!({"type": ["string", "integer"]}))
            .unwrap_or(schemars::schema::Schema::Bool(true))
    }
}

#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SceneRefArgs {
    /// e.g. defines, constrains, depends_on, part_of
    #[schemars(length(min = 1))]
    pub relation: String,
    #[schemars(length(min = 1))]
    pub target: String,
    /// author or reader
    pub visibility: OneOf<RefVisibility>,
    #[serde(default)]
    pub note: Field<String>,
}

#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SaveSceneArgs {
    /// Scene id (update/archive); default: the selected scene
    pub scene_id: Option<PlotId>,
    /// Thread (create: default the selected thread; update: moves the scene)
    pub thread_id: Option<PlotId>,
    /// Chapter to place the scene in; null takes it out
    #[serde(default)]
    pub chapter_id: Field<PlotId>,
    /// Title (create)
    #[schemars(length(min = 1))]
    pub title: Option<String>,
    /// Default draft
    pub status: Option<OneOf<SceneStatus>>,
    /// Outcome of the main actor's attempt; null clears it
    #[serde(default)]
    pub outcome_type: Field<OneOf<OutcomeType>>,
    /// Null clears it
    #[serde(default)]
    pub pacing_role: Field<OneOf<PacingRole>>,
    pub summary: Option<String>,
    /// Null clears it
    #[serde(default)]
    pub purpose: Field<String>,
    /// Null clears it
    #[serde(default)]
    pub writing_tip: Field<String>,
    /// Null clears it
    #[serde(default)]
    pub note: Field<String>,
    /// When and with whom the scene happens (replaces the whole anchor)
    pub world_anchor: Option<WorldAnchorArgs>,
    /// References (replaces the list); target = content path, thread://<id or name> or scene://<id>
    pub refs: Option<Vec<SceneRefArgs>>,
    /// What to do
    pub action: RecordAction,
    /// Optional single-segment folder name of another open project; default: the current project
    #[schemars(length(min = 1))]
    pub project_root: Option<String>,
}

impl SaveSceneArgs {
    /// The scene input; `thread_id` is left to the tools (explicit or the selection).
    pub fn input(&self) -> SceneInput {
        SceneInput {
            thread_id: None,
            chapter_id: field_id(&self.chapter_id),
            title: self.title.clone(),
            status: vocab(&self.status),
            outcome_type: field_string(&self.outcome_type),
            pacing_role: field_string(&self.pacing_role),
            summary: self.summary.clone(),
            purpose: self.purpose.clone(),
            writing_tip: self.writing_tip.clone(),
            note: self.note.clone(),
            world_anchor: self.world_anchor.as_ref().map(|w| WorldAnchorInput {
                start_time: w.start_time.0.clone(),
                end_time: w.end_time.0.clone(),
                subject_ids: w.subject_ids.clone(),
                location_subject_id: w.location_subject_id.0.clone(),
            }),
            refs: self.refs.as_ref().map(|refs| {
                refs.iter()
                    .map(|r| SceneRefInput {
                        relation: r.relation.clone(),
                        target: r.target.clone(),
                        visibility: r.visibility.as_str().to_string(),
                        note: r.note.value().cloned(),
                    })
                    .collect()
            }),
        }
    }
}

#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SavePromiseArgs {
    /// Promise id (all actions but create)
    pub promise_id: Option<PlotId>,
    /// Machine-friendly name, unique in the story (create)
    #[schemars(length(min = 1))]
    pub name: Option<String>,
    /// Title (create)
    #[schemars(length(min = 1))]
    pub title: Option<String>,
    /// Not on create; update with open reopens
    pub status: Option<OneOf<PromiseStatus>>,
    /// Default medium
    pub importance: Option<OneOf<Importance>>,
    /// What was promised to the reader
    pub summary: Option<String>,
    /// The effect the payoff must land (shown to the payoff scene's writer only); null clears it
    #[serde(default)]
    pub payoff_expectation: Field<String>,
    /// Advisory: chapters between beats; null clears it
    #[serde(default)]
    #[schemars(range(min = 1))]
    pub cadence_chapters: Field<i64>,
    /// Chapter by which it must pay off; null clears it
    #[serde(default)]
    pub deadline_chapter_id: Field<PlotId>,
    /// Replaces the list; vocabulary setup_payoff, prophecy, motif, mirror
    pub tags: Option<Vec<String>>,
    /// What to do
    pub action: PromiseAction,
    /// Optional single-segment folder name of another open project; default: the current project
    #[schemars(length(min = 1))]
    pub project_root: Option<String>,
}

impl SavePromiseArgs {
    pub fn input(&self) -> PromiseInput {
        PromiseInput {
            name: self.name.clone(),
            title: self.title.clone(),
            status: vocab(&self.status),
            importance: vocab(&self.importance),
            summary: self.summary.clone(),
            payoff_expectation: self.payoff_expectation.clone(),
            cadence_chapters: self.cadence_chapters.clone(),
            deadline_chapter_id: field_id(&self.deadline_chapter_id),
            tags: self.tags.clone(),
        }
    }
}

#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SaveBeatArgs {
    /// The promise
    pub promise_id: PlotId,
    /// The scene; default: the selected scene
    pub scene_id: Option<PlotId>,
    /// set: plant (establish), advance, setback, payoff (fulfil)
    pub kind: Option<OneOf<BeatKind>>,
    /// Instruction for this beat's writer; null clears it
    #[serde(default)]
    pub note: Field<String>,
    /// A payoff fulfils the open promise (default true); false for a milestone payoff
    pub auto_fulfill: Option<bool>,
    /// What to do
    pub action: BeatAction,
    /// Optional single-segment folder name of another open project; default: the current project
    #[schemars(length(min = 1))]
    pub project_root: Option<String>,
}

impl SaveBeatArgs {
    pub fn input(&self) -> BeatInput {
        BeatInput {
            kind: vocab(&self.kind),
            note: self.note.clone(),
            auto_fulfill: self.auto_fulfill,
        }
    }
}

#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct OptionArgs {
    /// A candidate answer
    #[schemars(length(min = 1))]
    pub option: String,
    #[serde(default)]
    pub note: Field<String>,
}

#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RejectedArgs {
    /// A rejected candidate
    #[schemars(length(min = 1))]
    pub option: String,
    #[serde(default)]
    pub why_rejected: Field<String>,
}

#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AnchorArgs {
    /// story takes nothing; content takes path; the others take id
    pub kind: OneOf<AnchorKind>,
    /// Record id
    pub id: Option<PlotId>,
    /// Content path, e.g. lorebook/character/ada/
    #[schemars(length(min = 1))]
    pub path: Option<String>,
}

#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SaveDecisionArgs {
    /// Decision id (all actions but create)
    pub decision_id: Option<PlotId>,
    /// Machine-friendly name, unique in the story (create)
    #[schemars(length(min = 1))]
    pub name: Option<String>,
    /// Title (create)
    #[schemars(length(min = 1))]
    pub title: Option<String>,
    /// Not on create; update with open reopens, with superseded (plus supersededById) supersedes
    pub status: Option<OneOf<DecisionStatus>>,
    /// The open question (create)
    #[schemars(length(min = 1))]
    pub question: Option<String>,
    pub options: Option<Vec<OptionArgs>>,
    /// Chapter by which it must be decided; null clears it
    #[serde(default)]
    pub deadline_chapter_id: Field<PlotId>,
    /// The conclusion (decide)
    #[serde(default)]
    pub decision: Field<String>,
    /// Why (decide)
    #[serde(default)]
    pub motivation: Field<String>,
    pub rejected_alternatives: Option<Vec<RejectedArgs>>,
    /// What could go wrong and where a writer must stop (decide)
    #[serde(default)]
    pub risk: Field<String>,
    /// On decide: the option chosen; the others become rejectedAlternatives
    #[schemars(length(min = 1))]
    pub chosen_option: Option<String>,
    /// promise://id, decision://id, thread://id, scene://id or a content path (replaces the list)
    #[schemars(inner(length(min = 1)))]
    pub serves: Option<Vec<String>>,
    /// Same forms as serves (replaces the list)
    #[schemars(inner(length(min = 1)))]
    pub depends_on: Option<Vec<String>>,
    /// The decision replacing this one; null clears it
    #[serde(default)]
    pub superseded_by_id: Field<PlotId>,
    pub anchor: Option<AnchorArgs>,
    /// Note; on drop, why the question no longer matters
    #[serde(default)]
    pub note: Field<String>,
    /// What to do
    pub action: DecisionAction,
    /// Optional single-segment folder name of another open project; default: the current project
    #[schemars(length(min = 1))]
    pub project_root: Option<String>,
}

impl SaveDecisionArgs {
    pub fn input(&self) -> DecisionInput {
        DecisionInput {
            name: self.name.clone(),
            title: self.title.clone(),
            status: vocab(&self.status),
            question: self.question.clone(),
            options: self.options.as_ref().map(|items| {
                items
                    .iter()
                    .map(|o| DecisionOption {
                        option: o.option.clone(),
                        note: o.note.value().cloned(),
                    })
                    .collect()
            }),
            deadline_chapter_id: field_id(&self.deadline_chapter_id),
            decision: self.decision.clone(),
            motivation: self.motivation.clone(),
            rejected_alternatives: self.rejected_alternatives.as_ref().map(|items| {
                items
                    .iter()
                    .map(|o| RejectedAlternative {
                        option: o.option.clone(),
                        why_rejected: o.why_rejected.value().cloned(),
                    })
                    .collect()
            }),
            risk: self.risk.clone(),
            chosen_option: self.chosen_option.clone(),
            serves: self.serves.clone(),
            depends_on: self.depends_on.clone(),
            superseded_by_id: field_id(&self.superseded_by_id),
            anchor: self.anchor.as_ref().map(|a| AnchorInput {
                kind: a.kind.as_str().to_string(),
                id: a.id.map(PlotId::get),
                path: a.path.clone(),
            }),
            note: self.note.clone(),
        }
    }
}

/// Read typed arguments from JSON as a plot error with the pointer of the bad field.
pub fn parse<T: serde::de::DeserializeOwned>(args: &Value) -> PlotResult<T> {
    crate::json_args::parse(args).map_err(|e| PlotError::invalid(&e.pointer, e.message))
}

/// A JSON object of fields to change (the Story pane's edit form), read through the tools'
/// argument types as an `update`.
pub struct ArgReader<'a> {
    args: &'a Value,
}

impl<'a> ArgReader<'a> {
    pub fn new(v: &'a Value) -> PlotResult<ArgReader<'a>> {
        match v {
            Value::Object(_) | Value::Null => Ok(ArgReader { args: v }),
            _ => Err(PlotError::invalid("/", "the arguments must be an object")),
        }
    }

    /// An optional id field.
    pub fn id(&self, key: &str) -> PlotResult<Option<i64>> {
        match self.args.get(key) {
            None => Ok(None),
            Some(v) => parse::<PlotId>(v)
                .map(|id| Some(id.get()))
                .map_err(|e| PlotError::invalid(&format!("/{key}"), e.message)),
        }
    }

    /// The fields as arguments of an `update` call of the tool `T`.
    fn update<T: serde::de::DeserializeOwned>(&self) -> PlotResult<T> {
        let mut obj = self.args.as_object().cloned().unwrap_or_default();
        obj.entry("action").or_insert_with(|| Value::from("update"));
        parse(&Value::Object(obj))
    }
}

pub fn act_input(a: &ArgReader) -> PlotResult<ActInput> {
    a.update::<SaveActArgs>().map(|x| x.input())
}

pub fn chapter_input(a: &ArgReader) -> PlotResult<ChapterInput> {
    a.update::<SaveChapterArgs>().map(|x| x.input())
}

pub fn thread_input(a: &ArgReader) -> PlotResult<ThreadInput> {
    a.update::<SaveThreadArgs>().map(|x| x.input())
}

/// `threadId` is not read here: the callers resolve it (explicit or selection).
pub fn scene_input(a: &ArgReader) -> PlotResult<SceneInput> {
    a.update::<SaveSceneArgs>().map(|x| x.input())
}

pub fn promise_input(a: &ArgReader) -> PlotResult<PromiseInput> {
    a.update::<SavePromiseArgs>().map(|x| x.input())
}

pub fn decision_input(a: &ArgReader) -> PlotResult<DecisionInput> {
    a.update::<SaveDecisionArgs>().map(|x| x.input())
}
