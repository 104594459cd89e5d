//! The story tables of a long book: `--chapters N --scenes N`, plus promises (one per 200
//! scenes) with beats and decisions (one per two chapters plus one per 1000 scenes), all in
//! NeuroBook's storage conventions (ISO timestamps, JSON text columns, instants from
//! 0001-01-01). Written in one transaction with plain SQL; deterministic for the same counts.
//!
//! Shape: acts of 30 chapters; three phases; a thread per 500 scenes (a third of them outside
//! any phase); scenes spread evenly over the chapters in reading order; the first 60% of the
//! scenes written, 1% archived; 90% anchored in time on subjects `c0..c199` at locations
//! `l0..l15` (the names the world generator uses); two thirds of the chapters with information
//! control filled in.

use std::path::Path;
use std::time::Instant;

use nbook::plot::time::now_iso;
use nbook::plot::ProjectMeta;
use rusqlite::params;

pub struct Stats {
    pub acts: usize,
    pub chapters: usize,
    pub threads: usize,
    pub scenes: usize,
    pub promises: usize,
    pub beats: usize,
    pub decisions: usize,
    pub secs: f64,
}

/// 1911-01-01 00:00 in gregorian seconds since 0001-01-01.
const START: i64 = 60_273_964_800;

pub fn generate(
    root: &Path,
    chapters: usize,
    scenes: usize,
) -> Result<Stats, Box<dyn std::error::Error>> {
    let t0 = Instant::now();
    let mut conn = nbook::store::open(&root.join(".nbook/project.sqlite"))?;
    let existing: i64 = conn.query_row("SELECT COUNT(*) FROM \"StoryScene\"", [], |r| r.get(0))?;
    if existing > 0 {
        return Err(format!(
            "the project already has {existing} scenes; generate the story into a new project"
        )
        .into());
    }
    let now = now_iso();
    let tx = conn.transaction()?;
    let story: i64 = match tx.query_row(
        "SELECT \"id\" FROM \"Story\" ORDER BY \"id\" LIMIT 1",
        [],
        |r| r.get(0),
    ) {
        Ok(id) => id,
        Err(_) => {
            let meta = ProjectMeta::load(root);
            tx.execute(
                "INSERT INTO \"Story\" (\"title\",\"summary\",\"createdAt\",\"updatedAt\") VALUES (?1,?2,?3,?3)",
                params![meta.title, meta.summary, now],
            )?;
            tx.last_insert_rowid()
        }
    };

    // Acts and chapters.
    let acts = chapters.div_ceil(30);
    let mut act_ids = Vec::with_capacity(acts);
    for a in 0..acts {
        tx.execute(
            "INSERT INTO \"StoryAct\" (\"storyId\",\"sortOrder\",\"name\",\"title\",\"summary\",\"createdAt\",\"updatedAt\") VALUES (?1,?2,?3,?4,?5,?6,?6)",
            params![story, a as i64, format!("act-{:02}", a + 1), format!("Act {}", a + 1), format!("Volume {} of the long book.", a + 1), now],
        )?;
        act_ids.push(tx.last_insert_rowid());
    }
    let mut chapter_ids = Vec::with_capacity(chapters);
    {
        let mut ins = tx.prepare(
            "INSERT INTO \"StoryChapter\" (\"storyId\",\"actId\",\"sortOrder\",\"name\",\"title\",\"briefGoal\",\"briefPov\",\"briefReaderKnows\",\"briefMustHide\",\"createdAt\",\"updatedAt\") \
             VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?10)",
        )?;
        for c in 0..chapters {
            let briefed = c % 3 != 2;
            ins.execute(params![
                story,
                act_ids[c / 30],
                c as i64,
                format!("{:03}-volume-{:03}-chapter", c / 30 + 1, c % 30 + 1),
                format!("Chapter {}", c + 1),
                briefed.then(|| format!("Chapter {} moves the tide one notch.", c + 1)),
                briefed.then_some("Ada, close third, past tense."),
                briefed.then(|| format!("Everything up to chapter {}.", c)),
                briefed.then_some("Who writes the entries."),
                now
            ])?;
            chapter_ids.push(tx.last_insert_rowid());
        }
    }

    // Phases and threads.
    let mut phase_ids = Vec::new();
    for (i, (name, title)) in [
        ("setup", "Setup"),
        ("confrontation", "Confrontation"),
        ("resolution", "Resolution"),
    ]
    .iter()
    .enumerate()
    {
        if scenes == 0 {
            break;
        }
        tx.execute(
            "INSERT INTO \"StoryPhase\" (\"storyId\",\"sortOrder\",\"name\",\"title\",\"createdAt\",\"updatedAt\") VALUES (?1,?2,?3,?4,?5,?5)",
            params![story, i as i64, name, title, now],
        )?;
        phase_ids.push(tx.last_insert_rowid());
    }
    let threads = if scenes == 0 { 0 } else { scenes.div_ceil(500) };
    let mut thread_ids = Vec::with_capacity(threads);
    for t in 0..threads {
        let phase = if t % 3 == 2 {
            None
        } else {
            Some(phase_ids[t % phase_ids.len()])
        };
        tx.execute(
            "INSERT INTO \"StoryThread\" (\"storyId\",\"storyPhaseId\",\"sortOrder\",\"name\",\"title\",\"isMainThread\",\"status\",\"miceType\",\"summary\",\"tags\",\"createdAt\",\"updatedAt\") \
             VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?11)",
            params![
                story,
                phase,
                t as i64,
                format!("thread-{:04}", t + 1),
                format!("Thread {}", t + 1),
                t == 0,
                if t % 7 == 6 { "done" } else { "active" },
                ["milieu", "idea", "character", "event"][t % 4],
                format!("What thread {} is about.", t + 1),
                "[\"generated\"]",
                now
            ],
        )?;
        thread_ids.push(tx.last_insert_rowid());
    }

    // Scenes, spread over the chapters in reading order; each thread takes a contiguous run.
    let mut scene_ids = Vec::with_capacity(scenes);
    {
        let mut ins = tx.prepare(
            "INSERT INTO \"StoryScene\" (\"storyId\",\"threadId\",\"chapterId\",\"threadSortOrder\",\"chapterSortOrder\",\"title\",\"status\",\"outcomeType\",\"pacingRole\",\"summary\",\"purpose\",\
             \"startInstant\",\"endInstant\",\"subjectIdsJson\",\"locationSubjectId\",\"createdAt\",\"updatedAt\") VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?16)",
        )?;
        let mut ref_ins = tx.prepare(
            "INSERT INTO \"StorySceneRef\" (\"sceneId\",\"sortOrder\",\"relation\",\"rawTarget\",\"targetKind\",\"visibility\",\"createdAt\",\"updatedAt\") VALUES (?1,0,'defines',?2,'content','author',?3,?3)",
        )?;
        let per_thread = scenes.div_ceil(threads.max(1)).max(1);
        let mut chapter_counter = vec![0i64; chapters];
        for s in 0..scenes {
            let chapter = (chapters > 0).then(|| s * chapters / scenes);
            let chapter_order = chapter.map(|c| {
                chapter_counter[c] += 1;
                chapter_counter[c] - 1
            });
            let anchored = s % 10 != 9;
            let start = START + s as i64 * 3_600;
            let status = if s % 100 == 99 {
                "archived"
            } else if s * 10 < scenes * 6 {
                "written"
            } else {
                "draft"
            };
            ins.execute(params![
                story,
                thread_ids[s / per_thread],
                chapter.map(|c| chapter_ids[c]),
                (s % per_thread) as i64,
                chapter_order,
                format!("Scene {}", s + 1),
                status,
                ["yes_but", "no_and", "yes_and", "no_but"][s % 4],
                ["setup", "escalation", "breather", "climax", "resolution"][s % 5],
                format!("Scene {} turns one small thing.", s + 1),
                (s % 2 == 0).then(|| format!("Purpose of scene {}.", s + 1)),
                anchored.then_some(start),
                anchored.then_some(start + 1_800),
                format!("[\"c{}\",\"c{}\"]", s % 200, (s + 1) % 200),
                anchored.then(|| format!("l{}", s % 16)),
                now
            ])?;
            let id = tx.last_insert_rowid();
            if s % 50 == 0 {
                ref_ins.execute(params![
                    id,
                    format!("lorebook/location/entry-{:05}/", s % 1000),
                    now
                ])?;
            }
            scene_ids.push(id);
        }
    }

    // Promises with beats: plant, two advances, and a payoff for two thirds of them.
    let promises = if scenes == 0 { 0 } else { scenes.div_ceil(200) };
    let mut beats = 0;
    {
        let mut p_ins = tx.prepare(
            "INSERT INTO \"StoryPromise\" (\"storyId\",\"name\",\"title\",\"status\",\"importance\",\"summary\",\"payoffExpectation\",\"deadlineChapterId\",\"tags\",\"createdAt\",\"updatedAt\") \
             VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?10)",
        )?;
        let mut b_ins = tx.prepare("INSERT INTO \"StoryPromiseBeat\" (\"promiseId\",\"sceneId\",\"kind\",\"note\",\"createdAt\",\"updatedAt\") VALUES (?1,?2,?3,?4,?5,?5)")?;
        for p in 0..promises {
            let paid = p % 3 != 0;
            let span = scenes / promises.max(1);
            let base = p * span;
            p_ins.execute(params![
                story,
                format!("promise-{:04}", p + 1),
                format!("Promise {}", p + 1),
                if paid {
                    "fulfilled"
                } else if p % 9 == 3 {
                    "abandoned"
                } else {
                    "open"
                },
                ["low", "medium", "high"][p % 3],
                format!("What the reader was promised ({}).", p + 1),
                Some("Relief, then a new question."),
                (chapters > 0).then(|| chapter_ids[(p * 7) % chapters]),
                "[\"setup_payoff\"]",
                now
            ])?;
            let pid = tx.last_insert_rowid();
            let mut kinds = vec![("plant", 0), ("advance", span / 3), ("advance", span / 2)];
            if paid {
                kinds.push(("payoff", span.saturating_sub(2)));
            }
            let mut used = Vec::new();
            for (kind, offset) in kinds {
                let sid = scene_ids[(base + offset).min(scenes - 1)];
                if used.contains(&sid) {
                    continue;
                }
                used.push(sid);
                b_ins.execute(params![
                    pid,
                    sid,
                    kind,
                    Some(format!("{kind} of promise {}", p + 1)),
                    now
                ])?;
                beats += 1;
            }
        }
    }

    // Decisions: open, decided (with decision/motivation/risk), dropped (with a note).
    let decisions = chapters / 2 + scenes / 1000;
    {
        let mut ins = tx.prepare(
            "INSERT INTO \"StoryDecision\" (\"storyId\",\"name\",\"title\",\"status\",\"question\",\"options\",\"deadlineChapterId\",\"decision\",\"motivation\",\"rejectedAlternatives\",\"risk\",\
             \"serves\",\"anchorKind\",\"anchorChapterId\",\"note\",\"createdAt\",\"updatedAt\") VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?16)",
        )?;
        for d in 0..decisions {
            let status = ["open", "decided", "decided", "dropped"][d % 4];
            let decided = status == "decided";
            let chapter = (chapters > 0).then(|| chapter_ids[(d * 2) % chapters]);
            ins.execute(params![
                story,
                format!("d-{:04}", d + 1),
                format!("Decision {}", d + 1),
                status,
                format!("Question {}?", d + 1),
                "[{\"option\":\"yes\",\"note\":null},{\"option\":\"no\",\"note\":null}]",
                chapter,
                decided.then_some("yes"),
                decided.then_some("It keeps the mystery open."),
                if decided {
                    "[{\"option\":\"no\",\"whyRejected\":null}]"
                } else {
                    "[]"
                },
                decided.then_some("Do not explain the mechanism."),
                if promises > 0 {
                    format!("[\"promise://{}\"]", d % promises + 1)
                } else {
                    "[]".into()
                },
                if chapter.is_some() {
                    "chapter"
                } else {
                    "story"
                },
                chapter,
                (status == "dropped").then_some("The subplot was cut."),
                now
            ])?;
        }
    }
    tx.commit()?;
    Ok(Stats {
        acts,
        chapters,
        threads,
        scenes,
        promises,
        beats,
        decisions,
        secs: t0.elapsed().as_secs_f64(),
    })
}
