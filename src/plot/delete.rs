//! Hard deletes — for the author only (the TUI, behind a confirmation); agents can only
//! archive, abandon or drop. [`Plot::cascade_summary`] says what a delete takes with it, for
//! the confirmation dialog; [`Plot::hard_delete`] does it (run it through
//! [`super::PlotDb::commit`]; the returned changes can be logged).
//!
//! Cascades follow NeuroBook's schema: a thread takes its scenes, their beats and refs; a
//! scene its beats and refs; a promise its beats; a chapter unplaces its scenes and clears
//! promise deadlines; an act ungroups its chapters; decision anchors on a deleted record read
//! as `story`; references by URI are left dangling (shown `valid: false`). Promises fulfilled
//! only by payoffs on deleted scenes reopen.

use serde::Serialize;

use super::ctx::{opt_int, Plot};
use super::error::{PlotError, PlotResult};
use super::ledger::NodeRef;
use super::track::{label, snapshot, Table};

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CascadeSummary {
    /// e.g. "StoryThread #3 (the-harbour)".
    pub target: String,
    /// (what, how many) deleted along with it.
    pub deleted: Vec<(String, usize)>,
    /// (what, how many) kept but detached or left dangling.
    pub detached: Vec<(String, usize)>,
    /// Promises that go back from fulfilled to open.
    pub reopened_promises: Vec<String>,
}

impl CascadeSummary {
    /// Lines for a confirmation dialog.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!("Delete {} for good?", self.target)];
        out.extend(
            self.deleted
                .iter()
                .filter(|(_, n)| *n > 0)
                .map(|(w, n)| format!("  also deletes {n} {w}")),
        );
        out.extend(
            self.detached
                .iter()
                .filter(|(_, n)| *n > 0)
                .map(|(w, n)| format!("  {n} {w}")),
        );
        out.extend(
            self.reopened_promises
                .iter()
                .map(|p| format!("  reopens promise {p}")),
        );
        out
    }
}

fn in_list(ids: &[i64]) -> String {
    ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
}

impl Plot<'_> {
    fn ids(&self, sql: &str, id: i64) -> PlotResult<Vec<i64>> {
        self.all(sql, [id], |r| r.get(0))
    }

    fn n(&self, sql: &str) -> PlotResult<usize> {
        Ok(self.count(sql, [])? as usize)
    }

    /// The scenes a delete of `node` removes.
    fn doomed_scenes(&self, node: NodeRef) -> PlotResult<Vec<i64>> {
        match node {
            NodeRef::Thread(t) => self.ids(
                "SELECT \"id\" FROM \"StoryScene\" WHERE \"threadId\" = ?1",
                t,
            ),
            NodeRef::Scene(s) => Ok(vec![s]),
            _ => Ok(Vec::new()),
        }
    }

    /// Fulfilled promises whose every valid payoff is on one of these scenes.
    fn promises_reopened_by(&mut self, scenes: &[i64]) -> PlotResult<Vec<(i64, String)>> {
        if scenes.is_empty() {
            return Ok(Vec::new());
        }
        let list = in_list(scenes);
        let sql = format!(
            "SELECT p.\"id\", p.\"name\" FROM \"StoryPromise\" p WHERE p.\"status\" = 'fulfilled' \
             AND EXISTS (SELECT 1 FROM \"StoryPromiseBeat\" b WHERE b.\"promiseId\" = p.\"id\" AND b.\"sceneId\" IN ({list})) \
             AND NOT EXISTS (SELECT 1 FROM \"StoryPromiseBeat\" b JOIN \"StoryScene\" s ON s.\"id\" = b.\"sceneId\" \
               WHERE b.\"promiseId\" = p.\"id\" AND b.\"kind\" = 'payoff' AND s.\"status\" != 'archived' AND s.\"id\" NOT IN ({list})) ORDER BY p.\"id\""
        );
        self.all(&sql, [], |r| Ok((r.get(0)?, r.get(1)?)))
    }

    fn node_table(node: NodeRef) -> PlotResult<(Table, i64)> {
        Ok(match node {
            NodeRef::Act(id) => (Table::Act, id),
            NodeRef::Chapter(id) => (Table::Chapter, id),
            NodeRef::Thread(id) => (Table::Thread, id),
            NodeRef::Scene(id) => (Table::Scene, id),
            NodeRef::Promise(id) => (Table::Promise, id),
            NodeRef::Decision(id) => (Table::Decision, id),
            NodeRef::Story | NodeRef::Phase(_) => return Err(Self::rule(
                "only acts, chapters, threads, scenes, promises and decisions can be deleted here",
            )),
        })
    }

    /// What deleting `node` would take with it. Nothing is changed.
    pub fn cascade_summary(&mut self, node: NodeRef) -> PlotResult<CascadeSummary> {
        let (table, id) = Self::node_table(node)?;
        match node {
            NodeRef::Act(a) => drop(self.find_act(a, "/actId")?),
            NodeRef::Chapter(c) => drop(self.find_chapter(c, "/chapterId")?),
            NodeRef::Thread(t) => drop(self.find_thread(t, "/threadId")?),
            NodeRef::Scene(s) => drop(self.find_scene(s, "/sceneId")?),
            NodeRef::Promise(p) => drop(self.find_promise(p, "/promiseId")?),
            NodeRef::Decision(d) => drop(self.find_decision(d, "/decisionId")?),
            _ => {}
        }
        let row = snapshot(self.conn(), table, id)?;
        let mut s = CascadeSummary {
            target: label(table, id, row.as_ref()),
            ..CascadeSummary::default()
        };
        let scenes = self.doomed_scenes(node)?;
        let sl = in_list(&scenes);
        let uri = |kind: &str| {
            format!("SELECT COUNT(*) FROM \"StoryDecision\" WHERE \"serves\" LIKE '%\"{kind}://{id}\"%' OR \"dependsOn\" LIKE '%\"{kind}://{id}\"%'")
        };
        match node {
            NodeRef::Act(_) => {
                s.detached.push((
                    "chapters moved out of the act".into(),
                    self.n(&format!(
                        "SELECT COUNT(*) FROM \"StoryChapter\" WHERE \"actId\" = {id}"
                    ))?,
                ));
                s.detached.push((
                    "decision anchors reset to story".into(),
                    self.n(&format!(
                        "SELECT COUNT(*) FROM \"StoryDecision\" WHERE \"anchorActId\" = {id}"
                    ))?,
                ));
            }
            NodeRef::Chapter(_) => {
                s.detached.push((
                    "scenes taken out of the chapter".into(),
                    self.n(&format!(
                        "SELECT COUNT(*) FROM \"StoryScene\" WHERE \"chapterId\" = {id}"
                    ))?,
                ));
                s.detached.push((
                    "promise deadlines cleared".into(),
                    self.n(&format!(
                        "SELECT COUNT(*) FROM \"StoryPromise\" WHERE \"deadlineChapterId\" = {id}"
                    ))?,
                ));
                s.detached.push((
                    "decision anchors reset to story".into(),
                    self.n(&format!(
                        "SELECT COUNT(*) FROM \"StoryDecision\" WHERE \"anchorChapterId\" = {id}"
                    ))?,
                ));
                s.detached.push((
                    "decision deadlines left pointing at a missing chapter".into(),
                    self.n(&format!(
                        "SELECT COUNT(*) FROM \"StoryDecision\" WHERE \"deadlineChapterId\" = {id}"
                    ))?,
                ));
            }
            NodeRef::Thread(_) | NodeRef::Scene(_) => {
                if let NodeRef::Thread(_) = node {
                    s.deleted.push(("scenes".into(), scenes.len()));
                }
                s.deleted.push((
                    "promise beats".into(),
                    self.n(&format!(
                        "SELECT COUNT(*) FROM \"StoryPromiseBeat\" WHERE \"sceneId\" IN ({sl})"
                    ))?,
                ));
                s.deleted.push((
                    "scene refs".into(),
                    self.n(&format!(
                        "SELECT COUNT(*) FROM \"StorySceneRef\" WHERE \"sceneId\" IN ({sl})"
                    ))?,
                ));
                let thread_clause = if let NodeRef::Thread(t) = node {
                    format!(" OR \"targetThreadId\" = {t}")
                } else {
                    String::new()
                };
                s.detached.push((
                    "refs from other scenes left dangling".into(),
                    self.n(&format!("SELECT COUNT(*) FROM \"StorySceneRef\" WHERE \"sceneId\" NOT IN ({sl}) AND (\"targetSceneId\" IN ({sl}){thread_clause})"))?,
                ));
                let anchor_thread = if let NodeRef::Thread(t) = node {
                    format!(" OR \"anchorThreadId\" = {t}")
                } else {
                    String::new()
                };
                s.detached.push(("decision anchors reset to story".into(), self.n(&format!("SELECT COUNT(*) FROM \"StoryDecision\" WHERE \"anchorSceneId\" IN ({sl}){anchor_thread}"))?));
                s.reopened_promises = self
                    .promises_reopened_by(&scenes)?
                    .into_iter()
                    .map(|(i, n)| format!("#{i} ({n})"))
                    .collect();
            }
            NodeRef::Promise(_) => {
                s.deleted.push((
                    "promise beats".into(),
                    self.n(&format!(
                        "SELECT COUNT(*) FROM \"StoryPromiseBeat\" WHERE \"promiseId\" = {id}"
                    ))?,
                ));
                s.detached.push((
                    "decision anchors reset to story".into(),
                    self.n(&format!(
                        "SELECT COUNT(*) FROM \"StoryDecision\" WHERE \"anchorPromiseId\" = {id}"
                    ))?,
                ));
                s.detached.push((
                    "decisions whose serves/dependsOn would dangle".into(),
                    self.n(&uri("promise"))?,
                ));
            }
            NodeRef::Decision(_) => {
                s.detached.push((
                    "decisions no longer marked as superseded by it".into(),
                    self.n(&format!(
                        "SELECT COUNT(*) FROM \"StoryDecision\" WHERE \"supersededById\" = {id}"
                    ))?,
                ));
                s.detached.push((
                    "decisions whose serves/dependsOn would dangle".into(),
                    self.n(&uri("decision"))?,
                ));
            }
            _ => {}
        }
        Ok(s)
    }

    /// Delete `node` and what cascades with it; returns the summary of what went.
    pub fn hard_delete(&mut self, node: NodeRef) -> PlotResult<CascadeSummary> {
        let summary = self.cascade_summary(node)?;
        let (table, id) = Self::node_table(node)?;
        let scenes = self.doomed_scenes(node)?;
        let promises = self.promises_beaten_on(&scenes)?;
        for s in &scenes {
            for b in self.ids(
                "SELECT \"id\" FROM \"StoryPromiseBeat\" WHERE \"sceneId\" = ?1",
                *s,
            )? {
                self.touch(Table::Beat, b, "delete")?;
            }
            if table != Table::Scene {
                self.touch(Table::Scene, *s, "delete")?;
            }
        }
        match node {
            NodeRef::Chapter(c) => {
                for s in self.ids(
                    "SELECT \"id\" FROM \"StoryScene\" WHERE \"chapterId\" = ?1",
                    c,
                )? {
                    self.update(
                        Table::Scene,
                        s,
                        "unplace (chapter deleted)",
                        &[("chapterSortOrder", opt_int(None))],
                    )?;
                }
            }
            NodeRef::Promise(p) => {
                for b in self.ids(
                    "SELECT \"id\" FROM \"StoryPromiseBeat\" WHERE \"promiseId\" = ?1",
                    p,
                )? {
                    self.touch(Table::Beat, b, "delete")?;
                }
            }
            _ => {}
        }
        self.delete_row(table, id)?;
        if self.count(
            &format!(
                "SELECT COUNT(*) FROM \"{}\" WHERE \"id\" = ?1",
                table.name()
            ),
            [id],
        )? != 0
        {
            return Err(PlotError::db(format!("{} was not deleted", summary.target)));
        }
        self.revert_fulfilled(&promises)?;
        Ok(summary)
    }
}
