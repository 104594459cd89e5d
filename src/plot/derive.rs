//! Values derived from promise beats, and the fulfilled→open revert rule.
//!
//! - Beat state comes from its scene: draft/active → planned, written/revised → factual,
//!   archived → archived.
//! - Beats on archived scenes take part in no derivation (the record is kept).
//! - `derivedStage`: paid_off if any valid payoff, else echoed if any advance/setback, else
//!   planted if any plant, else unplanted.
//! - Revert: a `fulfilled` promise goes back to `open` when no payoff beat on a non-archived
//!   scene remains. Checked after a beat is removed, a payoff beat changes kind, a scene is
//!   archived or deleted, a thread is deleted. Only reverts: un-archiving a scene never
//!   fulfils again (a payoff beat write or an explicit fulfil does).

use std::collections::HashMap;

use super::ctx::{text, Plot};
use super::error::PlotResult;
use super::model::*;
use super::track::Table;

pub fn beat_state(scene_status: &str) -> &'static str {
    match scene_status {
        "written" | "revised" => "factual",
        "archived" => "archived",
        _ => "planned",
    }
}

/// Stage and stats from (kind, scene status) pairs.
pub fn derive_stage<'a>(
    beats: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> (&'static str, BeatStats) {
    let mut stats = BeatStats::default();
    for (kind, scene_status) in beats {
        stats.total += 1;
        let state = beat_state(scene_status);
        match state {
            "factual" => stats.by_state.factual += 1,
            "archived" => stats.by_state.archived += 1,
            _ => stats.by_state.planned += 1,
        }
        if state == "archived" {
            continue;
        }
        match kind {
            "plant" => stats.by_kind.plant += 1,
            "advance" => stats.by_kind.advance += 1,
            "setback" => stats.by_kind.setback += 1,
            "payoff" => stats.by_kind.payoff += 1,
            _ => {}
        }
    }
    let k = &stats.by_kind;
    let stage = if k.payoff > 0 {
        "paid_off"
    } else if k.advance + k.setback > 0 {
        "echoed"
    } else if k.plant > 0 {
        "planted"
    } else {
        "unplanted"
    };
    (stage, stats)
}

impl Plot<'_> {
    /// (promise id → [(kind, scene status)]) for the given promises, or every promise of the
    /// story when `ids` is `None`. One query.
    pub(crate) fn beat_kinds(
        &mut self,
        ids: Option<&[i64]>,
    ) -> PlotResult<HashMap<i64, Vec<(String, String)>>> {
        let mut map: HashMap<i64, Vec<(String, String)>> = HashMap::new();
        let rows: Vec<(i64, String, String)> = match ids {
            Some([one]) => self.all(
                "SELECT b.\"promiseId\", b.\"kind\", s.\"status\" FROM \"StoryPromiseBeat\" b JOIN \"StoryScene\" s ON s.\"id\" = b.\"sceneId\" WHERE b.\"promiseId\" = ?1",
                [*one],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )?,
            _ => {
                let story = self.story_id()?.unwrap_or(-1);
                self.all(
                    "SELECT b.\"promiseId\", b.\"kind\", s.\"status\" FROM \"StoryPromiseBeat\" b JOIN \"StoryScene\" s ON s.\"id\" = b.\"sceneId\" \
                     JOIN \"StoryPromise\" p ON p.\"id\" = b.\"promiseId\" WHERE p.\"storyId\" = ?1",
                    [story],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )?
            }
        };
        for (p, kind, status) in rows {
            if ids.is_none_or(|ids| ids.contains(&p)) {
                map.entry(p).or_default().push((kind, status));
            }
        }
        Ok(map)
    }

    /// Fill a promise's derived stage, beat stats and deadline chapter.
    pub(crate) fn fill_promise(
        &mut self,
        p: &mut PromiseDto,
        beats: &[(String, String)],
    ) -> PlotResult<()> {
        let (stage, stats) = derive_stage(beats.iter().map(|(k, s)| (k.as_str(), s.as_str())));
        p.derived_stage = stage.to_string();
        p.beat_stats = stats;
        p.deadline_chapter = match p.deadline_chapter_id {
            Some(id) => self.chapter_ref(id)?,
            None => None,
        };
        Ok(())
    }

    /// Promises that have a beat on any of these scenes.
    pub(crate) fn promises_beaten_on(&mut self, scene_ids: &[i64]) -> PlotResult<Vec<i64>> {
        let mut out = Vec::new();
        for s in scene_ids {
            for p in self.all(
                "SELECT DISTINCT \"promiseId\" FROM \"StoryPromiseBeat\" WHERE \"sceneId\" = ?1",
                [*s],
                |r| r.get::<_, i64>(0),
            )? {
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
        out.sort_unstable();
        Ok(out)
    }

    /// The revert rule for these promises (see the module docs).
    pub(crate) fn revert_fulfilled(&mut self, promise_ids: &[i64]) -> PlotResult<()> {
        for &id in promise_ids {
            let status: Option<String> = self.one(
                "SELECT \"status\" FROM \"StoryPromise\" WHERE \"id\" = ?1",
                [id],
                |r| r.get(0),
            )?;
            if status.as_deref() != Some("fulfilled") {
                continue;
            }
            let valid_payoffs = self.count(
                "SELECT COUNT(*) FROM \"StoryPromiseBeat\" b JOIN \"StoryScene\" s ON s.\"id\" = b.\"sceneId\" \
                 WHERE b.\"promiseId\" = ?1 AND b.\"kind\" = 'payoff' AND s.\"status\" != 'archived'",
                [id],
            )?;
            if valid_payoffs == 0 {
                self.update(
                    Table::Promise,
                    id,
                    "reopen (no valid payoff beat left)",
                    &[("status", text("open"))],
                )?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stage_ladder_ignores_archived_beats() {
        assert_eq!(derive_stage([]).0, "unplanted");
        assert_eq!(derive_stage([("plant", "draft")]).0, "planted");
        assert_eq!(
            derive_stage([("plant", "written"), ("setback", "active")]).0,
            "echoed"
        );
        assert_eq!(
            derive_stage([("plant", "written"), ("payoff", "revised")]).0,
            "paid_off"
        );
        let (stage, stats) = derive_stage([("plant", "written"), ("payoff", "archived")]);
        assert_eq!(stage, "planted");
        assert_eq!(stats.total, 2);
        assert_eq!(stats.by_kind.payoff, 0);
        assert_eq!(
            (
                stats.by_state.factual,
                stats.by_state.archived,
                stats.by_state.planned
            ),
            (1, 1, 0)
        );
    }
}
