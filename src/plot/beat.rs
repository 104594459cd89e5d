//! Promise beats: one per promise × scene (`set` upserts, `remove` deletes).
//!
//! - A `payoff` beat fulfils its promise when `autoFulfill` is not false, the promise is `open`
//!   and the scene is not archived.
//! - Changing a payoff beat to another kind, or removing a beat, runs the revert rule.

use super::ctx::{check_enum, int, opt_text, text, Plot};
use super::error::{PlotError, PlotResult};
use super::input::BeatInput;
use super::model::*;
use super::track::Table;

impl Plot<'_> {
    fn find_beat(
        &mut self,
        promise_id: i64,
        scene_id: i64,
    ) -> PlotResult<Option<(i64, String, Option<String>)>> {
        self.one(
            "SELECT \"id\",\"kind\",\"note\" FROM \"StoryPromiseBeat\" WHERE \"promiseId\" = ?1 AND \"sceneId\" = ?2",
            [promise_id, scene_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
    }

    /// Upsert the promise's beat on the scene; returns the promise with its beats.
    pub fn set_beat(
        &mut self,
        promise_id: i64,
        scene_id: i64,
        input: &BeatInput,
    ) -> PlotResult<PromiseDetailDto> {
        let kind = input.kind.as_deref().ok_or_else(|| {
            PlotError::invalid(
                "/kind",
                "required to set a beat: plant, advance, setback or payoff",
            )
        })?;
        check_enum("/kind", kind, BEAT_KINDS)?;
        self.ensure_story()?;
        let promise = self.find_promise(promise_id, "/promiseId")?;
        let scene = self.find_scene(scene_id, "/sceneId")?;
        self.observe(Table::Scene, scene.id)?;
        self.observe(Table::Promise, promise.id)?;
        let existing = self.find_beat(promise.id, scene.id)?;
        match &existing {
            Some((beat_id, _, _)) => {
                let mut sets = vec![("kind", text(kind))];
                if !input.note.is_keep() {
                    sets.push(("note", opt_text(input.note.value())));
                }
                self.update(Table::Beat, *beat_id, "update", &sets)?;
            }
            None => {
                self.insert(
                    Table::Beat,
                    &[
                        ("promiseId", int(promise.id)),
                        ("sceneId", int(scene.id)),
                        ("kind", text(kind)),
                        ("note", opt_text(input.note.value())),
                    ],
                )?;
            }
        }
        if kind == "payoff"
            && input.auto_fulfill != Some(false)
            && promise.status == "open"
            && scene.status != "archived"
        {
            self.update(
                Table::Promise,
                promise.id,
                "fulfil (payoff beat)",
                &[("status", text("fulfilled"))],
            )?;
        }
        if existing.as_ref().is_some_and(|(_, k, _)| k == "payoff") && kind != "payoff" {
            self.revert_fulfilled(&[promise.id])?;
        }
        self.promise_detail(promise.id)
    }

    /// Remove the promise's beat from the scene (an error if there is none).
    pub fn remove_beat(&mut self, promise_id: i64, scene_id: i64) -> PlotResult<PromiseDetailDto> {
        self.ensure_story()?;
        let promise = self.find_promise(promise_id, "/promiseId")?;
        let scene = self.find_scene(scene_id, "/sceneId")?;
        let Some((beat_id, _, _)) = self.find_beat(promise.id, scene.id)? else {
            return Err(PlotError::not_found(
                "/sceneId",
                format!("promise {} has no beat on scene {}", promise.id, scene.id),
            ));
        };
        self.delete_row(Table::Beat, beat_id)?;
        self.revert_fulfilled(&[promise.id])?;
        self.promise_detail(promise.id)
    }
}
