//! A large world timeline for benchmarks, shaped like `shared/bench/gen_world.py`: characters
//! `c0..cN-1` with `/hp`, `/gold` and a `/location` reference to locations `l0..l15`; one slice
//! per instant from 2020-01-01 00:00, each 1..3600 s after the previous; one patch per slice
//! (two on a character's first touch: `replace /hp`, `replace /gold`), later ones drawn from
//! increment/replace /hp, increment/replace /gold, replace /location with the same weights.
//! Seeded, so the same arguments give the same timeline (not byte-identical to the Python
//! generator, whose random stream differs). Everything is written in one transaction with the
//! secondary indexes dropped during the load and rebuilt after, then nbook's checkpoints are
//! computed once.

use std::time::Instant;

use rand::{Rng, SeedableRng};
use rusqlite::{params, Connection};

/// 2020-01-01 00:00 in gregorian seconds since 0001-01-01.
pub const START_INSTANT: i64 = 63_713_433_600;
const LOCATIONS: usize = 16;

pub struct Stats {
    pub subjects: usize,
    pub slices: usize,
    pub patches: usize,
    pub first_instant: i64,
    pub last_instant: i64,
    pub load_secs: f64,
    /// Rebuilding the secondary indexes and computing the checkpoints.
    pub index_secs: f64,
    pub checkpoints: usize,
}

fn uuid(rng: &mut impl Rng) -> String {
    let b: u128 = rng.gen();
    let h = format!(
        "{:032x}",
        (b & !(0xF << 76) & !(0x3 << 62)) | (0x4 << 76) | (0x2 << 62)
    );
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// Append a generated timeline to an opened (migrated) project database whose world tables
/// are empty.
pub fn generate(
    conn: &mut Connection,
    schema: &nbook::world::Schema,
    subjects: usize,
    slices: usize,
    seed: u64,
) -> Result<Stats, Box<dyn std::error::Error>> {
    let existing: i64 = conn.query_row(r#"SELECT count(*) FROM "WorldSlice""#, [], |r| r.get(0))?;
    if existing > 0 {
        return Err(format!(
            "the project already has {existing} world slices; generate into a new project"
        )
        .into());
    }
    if subjects == 0 {
        return Err("--subjects must be at least 1".into());
    }
    let t0 = Instant::now();
    conn.execute_batch("PRAGMA synchronous = OFF; PRAGMA cache_size = -400000;")?;
    let tx = conn.transaction()?;
    // Secondary indexes are rebuilt after the load: much faster than maintaining them per row.
    let indexes: Vec<(String, String)> = tx
        .prepare(r#"SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN ('WorldPatch','WorldSlice')"#)?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<Result<_, _>>()?;
    for (name, _) in &indexes {
        tx.execute_batch(&format!("DROP INDEX \"{name}\""))?;
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let (patches, last_instant, load_secs) = {
        let mut subj =
            tx.prepare(r#"INSERT INTO "WorldSubject" ("id","type","name") VALUES (?1,?2,?3)"#)?;
        for i in 0..subjects {
            subj.execute(params![
                format!("c{i}"),
                "character",
                format!("Character {i}")
            ])?;
        }
        for j in 0..LOCATIONS {
            subj.execute(params![
                format!("l{j}"),
                "location",
                format!("Location {j}")
            ])?;
        }
        let mut slice = tx.prepare(r#"INSERT INTO "WorldSlice" ("id","instant","title","summary","kind") VALUES (?1,?2,?3,'','event')"#)?;
        let mut patch = tx.prepare(
            r#"INSERT INTO "WorldPatch" ("id","sliceId","subjectId","instant","seq","path","op","value") VALUES (?1,?2,?3,?4,?5,?6,?7,?8)"#,
        )?;
        let mut initialised = vec![false; subjects];
        let mut instant = START_INSTANT;
        let mut patches = 0usize;
        for i in 0..slices {
            if i > 0 {
                instant += rng.gen_range(1..=3600);
            }
            let sid = uuid(&mut rng);
            slice.execute(params![sid, instant, format!("s{i}")])?;
            let c = rng.gen_range(0..subjects);
            let subject = format!("c{c}");
            if !initialised[c] {
                initialised[c] = true;
                let (hp, gold) = (
                    rng.gen_range(50..=150).to_string(),
                    rng.gen_range(0..=1000).to_string(),
                );
                patch.execute(params![
                    uuid(&mut rng),
                    sid,
                    subject,
                    instant,
                    0,
                    "/hp",
                    "replace",
                    hp
                ])?;
                patch.execute(params![
                    uuid(&mut rng),
                    sid,
                    subject,
                    instant,
                    1,
                    "/gold",
                    "replace",
                    gold
                ])?;
                patches += 2;
                continue;
            }
            let r = rng.gen_range(0..100);
            let (op, path, value) = match r {
                0..30 => ("increment", "/hp", signed(&mut rng)),
                30..40 => ("replace", "/hp", rng.gen_range(0..=200).to_string()),
                40..65 => ("increment", "/gold", signed(&mut rng)),
                65..75 => ("replace", "/gold", rng.gen_range(0..=5000).to_string()),
                _ => (
                    "replace",
                    "/location",
                    format!("\"subject://l{}\"", rng.gen_range(0..LOCATIONS)),
                ),
            };
            patch.execute(params![
                uuid(&mut rng),
                sid,
                subject,
                instant,
                0,
                path,
                op,
                value
            ])?;
            patches += 1;
        }
        (patches, instant, t0.elapsed().as_secs_f64())
    };
    let t1 = Instant::now();
    for (_, sql) in &indexes {
        tx.execute_batch(sql)?;
    }
    tx.commit()?;
    conn.execute_batch("PRAGMA synchronous = FULL;")?;
    let (_, checkpoints) = nbook::world::index::rebuild(conn, schema)?;
    Ok(Stats {
        subjects,
        slices,
        patches,
        first_instant: START_INSTANT,
        last_instant,
        load_secs,
        index_secs: t1.elapsed().as_secs_f64(),
        checkpoints,
    })
}

fn signed(rng: &mut impl Rng) -> String {
    let v: i64 = rng.gen_range(1..=20);
    (if rng.gen_bool(0.5) { v } else { -v }).to_string()
}
