//! Read-only summaries of the story and world tables for the Story and World panes.
//! Every query is bounded (LIMIT or an aggregate over an index) so a book with 100k scenes and
//! 1M slices still answers quickly; callers run these off the UI task.

use std::collections::HashMap;

use rusqlite::{params, Connection, OptionalExtension};

/// Most chapters listed (a 2-million-word book has about 300).
pub const CHAPTER_LIMIT: i64 = 2000;
pub const ACT_LIMIT: i64 = 200;
pub const THREAD_LIMIT: i64 = 500;
/// Subjects listed per type (the count covers all of them).
pub const SUBJECTS_PER_TYPE: i64 = 50;
pub const TYPE_LIMIT: i64 = 100;
/// Latest slices listed.
pub const SLICE_LIMIT: i64 = 50;

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ActRow {
    pub id: i64,
    pub name: String,
    pub title: String,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ChapterRow {
    pub id: i64,
    pub act_id: Option<i64>,
    pub name: String,
    pub title: String,
    pub scene_count: i64,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ThreadRow {
    pub name: String,
    pub title: String,
    pub status: String,
    pub is_main: bool,
    pub scene_count: i64,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct StoryOverview {
    /// The story row NeuroBook uses (lowest id); `None` when the project has no story yet.
    pub story_title: Option<String>,
    pub acts: Vec<ActRow>,
    /// Chapters in act order then chapter order (at most [`CHAPTER_LIMIT`]).
    pub chapters: Vec<ChapterRow>,
    pub chapter_count: i64,
    pub scene_count: i64,
    pub threads: Vec<ThreadRow>,
    pub thread_count: i64,
    pub open_promises: i64,
    pub promise_count: i64,
    pub open_decisions: i64,
    pub decision_count: i64,
}

impl StoryOverview {
    pub fn is_empty(&self) -> bool {
        self.acts.is_empty()
            && self.chapters.is_empty()
            && self.threads.is_empty()
            && self.scene_count == 0
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct SubjectRow {
    pub id: String,
    pub name: String,
    pub patch_count: i64,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct TypeRow {
    pub kind: String,
    pub count: i64,
    /// The first [`SUBJECTS_PER_TYPE`] subjects of this type by id.
    pub subjects: Vec<SubjectRow>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct SliceRow {
    pub instant: i64,
    pub title: String,
    pub kind: String,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorldOverview {
    pub types: Vec<TypeRow>,
    pub subject_count: i64,
    pub slice_count: i64,
    /// The latest slices, newest first.
    pub latest_slices: Vec<SliceRow>,
}

impl WorldOverview {
    pub fn is_empty(&self) -> bool {
        self.subject_count == 0 && self.slice_count == 0
    }
}

fn count(conn: &Connection, sql: &str, story: i64) -> rusqlite::Result<i64> {
    conn.query_row(sql, [story], |r| r.get(0))
}

/// Acts, chapters with scene counts, threads with scene counts, promise and decision counts.
pub fn story(conn: &Connection) -> rusqlite::Result<StoryOverview> {
    let story: Option<(i64, String)> = conn
        .query_row(
            r#"SELECT "id", "title" FROM "Story" ORDER BY "id" LIMIT 1"#,
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let Some((sid, title)) = story else {
        return Ok(StoryOverview::default());
    };
    let mut out = StoryOverview {
        story_title: Some(title),
        ..StoryOverview::default()
    };
    let mut stmt = conn.prepare(
        r#"SELECT "id", "name", "title" FROM "StoryAct" WHERE "storyId" = ?1 ORDER BY "sortOrder", "id" LIMIT ?2"#,
    )?;
    out.acts = stmt
        .query_map(params![sid, ACT_LIMIT], |r| {
            Ok(ActRow {
                id: r.get(0)?,
                name: r.get(1)?,
                title: r.get(2)?,
            })
        })?
        .collect::<Result<_, _>>()?;

    let mut scenes_by_chapter: HashMap<i64, i64> = HashMap::new();
    let mut stmt = conn.prepare(
        r#"SELECT "chapterId", count(*) FROM "StoryScene" WHERE "chapterId" IS NOT NULL GROUP BY "chapterId""#,
    )?;
    for row in stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))? {
        let (c, n) = row?;
        scenes_by_chapter.insert(c, n);
    }
    // Chapters in act order (chapters without an act last), then their own order.
    let mut stmt = conn.prepare(
        r#"SELECT c."id", c."actId", c."name", c."title"
           FROM "StoryChapter" c LEFT JOIN "StoryAct" a ON a."id" = c."actId"
           WHERE c."storyId" = ?1
           ORDER BY a."id" IS NULL, a."sortOrder", c."sortOrder", c."id" LIMIT ?2"#,
    )?;
    out.chapters = stmt
        .query_map(params![sid, CHAPTER_LIMIT], |r| {
            Ok(ChapterRow {
                id: r.get(0)?,
                act_id: r.get(1)?,
                name: r.get(2)?,
                title: r.get(3)?,
                scene_count: 0,
            })
        })?
        .collect::<Result<_, _>>()?;
    for c in &mut out.chapters {
        c.scene_count = scenes_by_chapter.get(&c.id).copied().unwrap_or(0);
    }
    out.chapter_count = count(
        conn,
        r#"SELECT count(*) FROM "StoryChapter" WHERE "storyId" = ?1"#,
        sid,
    )?;
    out.scene_count = count(
        conn,
        r#"SELECT count(*) FROM "StoryScene" WHERE "storyId" = ?1"#,
        sid,
    )?;

    let mut scenes_by_thread: HashMap<i64, i64> = HashMap::new();
    let mut stmt =
        conn.prepare(r#"SELECT "threadId", count(*) FROM "StoryScene" GROUP BY "threadId""#)?;
    for row in stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))? {
        let (t, n) = row?;
        scenes_by_thread.insert(t, n);
    }
    let mut stmt = conn.prepare(
        r#"SELECT "id", "name", "title", "status", "isMainThread" FROM "StoryThread"
           WHERE "storyId" = ?1 ORDER BY "isMainThread" DESC, "sortOrder", "id" LIMIT ?2"#,
    )?;
    out.threads = stmt
        .query_map(params![sid, THREAD_LIMIT], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                ThreadRow {
                    name: r.get(1)?,
                    title: r.get(2)?,
                    status: r.get(3)?,
                    is_main: r.get::<_, Option<bool>>(4)?.unwrap_or(false),
                    scene_count: 0,
                },
            ))
        })?
        .map(|r| {
            r.map(|(id, mut t)| {
                t.scene_count = scenes_by_thread.get(&id).copied().unwrap_or(0);
                t
            })
        })
        .collect::<Result<_, _>>()?;
    out.thread_count = count(
        conn,
        r#"SELECT count(*) FROM "StoryThread" WHERE "storyId" = ?1"#,
        sid,
    )?;
    out.promise_count = count(
        conn,
        r#"SELECT count(*) FROM "StoryPromise" WHERE "storyId" = ?1"#,
        sid,
    )?;
    out.open_promises = count(
        conn,
        r#"SELECT count(*) FROM "StoryPromise" WHERE "storyId" = ?1 AND "status" = 'open'"#,
        sid,
    )?;
    out.decision_count = count(
        conn,
        r#"SELECT count(*) FROM "StoryDecision" WHERE "storyId" = ?1"#,
        sid,
    )?;
    out.open_decisions = count(
        conn,
        r#"SELECT count(*) FROM "StoryDecision" WHERE "storyId" = ?1 AND "status" = 'open'"#,
        sid,
    )?;
    Ok(out)
}

/// Subject types with counts and their first subjects (with patch counts), the slice count
/// and the latest slices.
pub fn world(conn: &Connection) -> rusqlite::Result<WorldOverview> {
    let mut out = WorldOverview::default();
    let mut stmt = conn.prepare(
        r#"SELECT "type", count(*) FROM "WorldSubject" GROUP BY "type" ORDER BY "type" LIMIT ?1"#,
    )?;
    let types: Vec<(String, i64)> = stmt
        .query_map([TYPE_LIMIT], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    let mut subjects = conn.prepare(
        r#"SELECT "id", "name" FROM "WorldSubject" WHERE "type" = ?1 ORDER BY "id" LIMIT ?2"#,
    )?;
    let mut patches =
        conn.prepare(r#"SELECT count(*) FROM "WorldPatch" WHERE "subjectId" = ?1"#)?;
    for (kind, n) in types {
        let mut rows: Vec<SubjectRow> = subjects
            .query_map(params![kind, SUBJECTS_PER_TYPE], |r| {
                Ok(SubjectRow {
                    id: r.get(0)?,
                    name: r.get(1)?,
                    patch_count: 0,
                })
            })?
            .collect::<Result<_, _>>()?;
        for s in &mut rows {
            s.patch_count = patches.query_row([&s.id], |r| r.get(0))?;
        }
        out.subject_count += n;
        out.types.push(TypeRow {
            kind,
            count: n,
            subjects: rows,
        });
    }
    out.slice_count = conn.query_row(r#"SELECT count(*) FROM "WorldSlice""#, [], |r| r.get(0))?;
    let mut stmt = conn.prepare(
        r#"SELECT "instant", "title", "kind" FROM "WorldSlice" ORDER BY "instant" DESC LIMIT ?1"#,
    )?;
    out.latest_slices = stmt
        .query_map([SLICE_LIMIT], |r| {
            Ok(SliceRow {
                instant: r.get(0)?,
                title: r.get(1)?,
                kind: r.get(2)?,
            })
        })?
        .collect::<Result<_, _>>()?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_and_filled_databases() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("project.sqlite");
        let conn = crate::store::open(&p).unwrap();
        assert!(story(&conn).unwrap().is_empty());
        assert!(world(&conn).unwrap().is_empty());
        conn.execute_batch(
            r#"INSERT INTO "Story" ("title") VALUES ('Book');
               INSERT INTO "StoryAct" ("storyId","sortOrder","name","title") VALUES (1,0,'act-1','Arrival');
               INSERT INTO "StoryChapter" ("storyId","actId","sortOrder","name","title") VALUES (1,1,0,'ch-1','Harbour');
               INSERT INTO "StoryThread" ("storyId","sortOrder","name","title","isMainThread") VALUES (1,0,'main','Main',1);
               INSERT INTO "StoryScene" ("storyId","threadId","chapterId","threadSortOrder","title") VALUES (1,1,1,0,'s1'),(1,1,NULL,1,'s2');
               INSERT INTO "StoryPromise" ("storyId","name","title") VALUES (1,'p','P');
               INSERT INTO "WorldSubject" ("id","type","name") VALUES ('c0','character','Mira');
               INSERT INTO "WorldSlice" ("id","instant","title") VALUES ('s1', 100, 'Storm');
               INSERT INTO "WorldPatch" ("id","sliceId","subjectId","instant","path","op","value") VALUES ('p1','s1','c0',100,'/hp','replace','3');"#,
        )
        .unwrap();
        let s = story(&conn).unwrap();
        assert_eq!(s.chapters[0].scene_count, 1);
        assert_eq!(s.threads[0].scene_count, 2);
        assert!(s.threads[0].is_main);
        assert_eq!((s.scene_count, s.open_promises), (2, 1));
        let w = world(&conn).unwrap();
        assert_eq!(w.types[0].subjects[0].patch_count, 1);
        assert_eq!(w.slice_count, 1);
        assert_eq!(w.latest_slices[0].title, "Storm");
    }
}
