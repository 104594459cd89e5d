//! World engine benchmarks on the workload NeuroBook was measured with (shared/bench).
//!
//! Database: `NBOOK_WORLD_BENCH_DB` (a file written by `shared/bench/gen_world.py`, e.g. the
//! 1M-slice / 10k-subject one), copied to a temporary file first because opening it through
//! nbook adds indexes and checkpoints. Without it, a smaller timeline is generated here
//! (`NBOOK_WORLD_BENCH_SLICES`, default 100 000 slices over 10 000 subjects) and the run says so.
//! Queries: `shared/bench/queries.json` (`NBOOK_WORLD_BENCH_QUERIES` overrides) for the size
//! whose slice count matches the database, else queries drawn here with a fixed seed.
//!
//! Besides criterion's own output, a table of median / p95 over the query list is printed,
//! in the form of shared/bench/README.md, including the ratio to a naive full replay.

#[path = "../examples/gen_fixture/world.rs"]
#[allow(dead_code)]
mod gen_world;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use nbook::engine::profiles::Profiles;
use nbook::engine::tool::{Tool, ToolCtx};
use nbook::engine::Mode;
use nbook::tools::world::ExecuteWorld;
use nbook::world::reducer::Reduced;
use nbook::world::store::WorldStore;
use nbook::world::write::NewSlice;
use nbook::world::{prepare::NewPatch, Schema, World};
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};

struct Workload {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    world: World,
    state_at: Vec<(String, i64)>,
    get_now: Vec<String>,
    writes: Vec<(i64, String, String, String, Value)>,
    label: String,
}

fn template() -> Schema {
    Schema::parse(include_str!("../assets/template/world-engine/schema.toml"))
        .expect("template schema")
}

fn setup() -> Workload {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("book");
    nbook::workspace::init::init(&root, Some("World bench")).expect("init");
    let db = root.join(".nbook/project.sqlite");
    let schema = template();
    let label = match std::env::var_os("NBOOK_WORLD_BENCH_DB") {
        Some(src) => {
            let t = Instant::now();
            std::fs::copy(&src, &db).expect("copy the benchmark database");
            let conn = nbook::store::open(&db).expect("open (migrations add nbook's indexes)");
            let migrated = t.elapsed();
            let t = Instant::now();
            let (subjects, cps) =
                nbook::world::index::rebuild(&conn, &schema).expect("rebuild checkpoints");
            eprintln!(
                "world bench: {} (copied + migrated in {:.1}s; {cps} checkpoints for {subjects} subjects built in {:.1}s)",
                Path::new(&src).display(),
                migrated.as_secs_f64(),
                t.elapsed().as_secs_f64()
            );
            Path::new(&src).display().to_string()
        }
        None => {
            let slices: usize = std::env::var("NBOOK_WORLD_BENCH_SLICES")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(100_000);
            let mut conn = nbook::store::open(&db).expect("open");
            let st = gen_world::generate(&mut conn, &schema, 10_000, slices, 1).expect("generate");
            eprintln!(
                "world bench: NBOOK_WORLD_BENCH_DB is not set, so a SMALLER timeline was generated here: {} slices / {} subjects / {} patches (load {:.1}s, indexes + {} checkpoints {:.1}s)",
                st.slices, st.subjects, st.patches, st.load_secs, st.checkpoints, st.index_secs
            );
            format!("generated {slices} slices")
        }
    };
    let world = World::load(&root).expect("world config");
    let conn = nbook::store::open(&db).expect("open");
    let (slices, first, last): (i64, i64, i64) = conn
        .query_row(
            r#"SELECT count(*), min("instant"), max("instant") FROM "WorldSlice""#,
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .expect("stats");
    let (state_at, get_now, writes) = queries(slices, first, last, &conn);
    Workload {
        _tmp: tmp,
        root,
        world,
        state_at,
        get_now,
        writes,
        label,
    }
}

type Queries = (
    Vec<(String, i64)>,
    Vec<String>,
    Vec<(i64, String, String, String, Value)>,
);

/// The shared query lists for this database size, or drawn here.
fn queries(slices: i64, first: i64, last: i64, conn: &rusqlite::Connection) -> Queries {
    let path = std::env::var_os("NBOOK_WORLD_BENCH_QUERIES")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/bench/queries.json")
        });
    if let Some(size) = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|q| {
            q["sizes"]
                .as_object()?
                .values()
                .find(|s| {
                    s["db"]["slices"] == json!(slices) && s["db"]["lastInstant"] == json!(last)
                })
                .cloned()
        })
    {
        eprintln!("world bench: queries from {}", path.display());
        let all = |k: &str| -> Vec<Value> {
            let mut v = size[k]["warmup"].as_array().cloned().unwrap_or_default();
            v.extend(size[k]["timed"].as_array().cloned().unwrap_or_default());
            v
        };
        let state_at = all("stateAt")
            .iter()
            .map(|q| {
                (
                    q["subjectId"].as_str().unwrap_or("c0").to_string(),
                    q["at"].as_i64().unwrap_or(last),
                )
            })
            .collect();
        let get_now = all("getNow")
            .iter()
            .map(|q| q["subjectId"].as_str().unwrap_or("c0").to_string())
            .collect();
        let writes = all("write")
            .iter()
            .map(|q| {
                let s = |k: &str| q[k].as_str().unwrap_or_default().to_string();
                (
                    q["instant"].as_i64().unwrap_or(last + 1),
                    s("subjectId"),
                    s("path"),
                    s("op"),
                    q["value"].clone(),
                )
            })
            .collect();
        return (state_at, get_now, writes);
    }
    eprintln!(
        "world bench: no matching query list in {}; drawing queries (seed 7)",
        path.display()
    );
    let n: i64 = conn
        .query_row(
            r#"SELECT count(*) FROM "WorldSubject" WHERE "type" = 'character'"#,
            [],
            |r| r.get(0),
        )
        .expect("count");
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    let state_at = (0..320)
        .map(|_| {
            (
                format!("c{}", rng.gen_range(0..n)),
                rng.gen_range(first..=last),
            )
        })
        .collect();
    let get_now = (0..320)
        .map(|_| format!("c{}", rng.gen_range(0..n)))
        .collect();
    let with_hp: Vec<String> = conn
        .prepare(r#"SELECT DISTINCT "subjectId" FROM "WorldPatch" WHERE "path" = '/hp' AND "op" = 'replace' LIMIT 1000"#)
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .expect("subjects with hp");
    let mut t = last;
    let writes = (0..320)
        .map(|_| {
            t += rng.gen_range(1..=3600);
            (
                t,
                with_hp[rng.gen_range(0..with_hp.len())].clone(),
                "/hp".into(),
                "increment".into(),
                json!(rng.gen_range(1..=20)),
            )
        })
        .collect();
    (state_at, get_now, writes)
}

/// Median and p95 of running `f` once per item (the first 20 are warm-up).
fn profile<T>(items: &[T], mut f: impl FnMut(&T)) -> (Duration, Duration) {
    let mut times: Vec<Duration> = items
        .iter()
        .enumerate()
        .filter_map(|(i, x)| {
            let t = Instant::now();
            f(x);
            (i >= 20).then(|| t.elapsed())
        })
        .collect();
    times.sort();
    let at = |q: f64| times[((times.len() as f64 - 1.0) * q).round() as usize];
    (at(0.5), at(0.95))
}

fn ms(d: Duration) -> String {
    format!("{:.4}", d.as_secs_f64() * 1e3)
}

/// NeuroBook's way: replay every patch of the subject up to `at`.
fn naive(st: &WorldStore<'_>, id: &str, at: i64) -> Reduced {
    let subject = st.subject(id).expect("subject").expect("exists");
    let mut red = Reduced::default();
    for p in st.patches_between(id, None, at).expect("patches") {
        red.apply(st.schema, &subject.kind, &p);
    }
    red
}

fn tool_ctx(w: &Workload) -> ToolCtx {
    let (profiles, _) = Profiles::load(&[]);
    ToolCtx {
        workspace: Arc::new(nbook::workspace::Workspace::open(&w.root).expect("workspace")),
        config: Arc::new(nbook::config::Config::default()),
        profile: profiles.get("world.engine").expect("world.engine profile"),
        session_id: "bench".into(),
        mode: Mode::Normal,
        session_state: Arc::default(),
        call_id: String::new(),
        services: None,
        cancel: Default::default(),
    }
}

fn bench_world(c: &mut Criterion) {
    let w = setup();
    let db = w.root.join(".nbook/project.sqlite");
    let conn = nbook::store::open(&db).expect("open");
    let st = WorldStore::new(&conn, &w.world);
    // Correctness first: checkpointed and naive states agree on every query.
    for (id, at) in &w.state_at {
        let fast = st.state_at(id, *at).expect("state").expect("subject");
        assert_eq!(fast.attrs, naive(&st, id, *at).state, "{id} at {at}");
    }
    let (q_med, q_p95) = profile(&w.state_at, |(id, at)| {
        std::hint::black_box(st.state_at(id, *at).expect("state"));
    });
    let (n_med, n_p95) = profile(&w.state_at, |(id, at)| {
        std::hint::black_box(naive(&st, id, *at));
    });
    let mut g = c.benchmark_group("world");
    let mut i = 0usize;
    g.bench_function("state_at_checkpointed", |b| {
        b.iter(|| {
            let (id, at) = &w.state_at[i % w.state_at.len()];
            i += 1;
            st.state_at(id, *at).expect("state")
        })
    });
    g.bench_function("state_at_naive_full_replay", |b| {
        b.iter(|| {
            let (id, at) = &w.state_at[i % w.state_at.len()];
            i += 1;
            naive(&st, id, *at)
        })
    });
    g.finish();

    // Slice writes at the end of the timeline: the engine's work (inside one open transaction,
    // as a script's writes are), then each committed on its own (adds the journal fsyncs of
    // SQLite's default rollback journal, which depend on the disk, not on nbook).
    let write = |q: &(i64, String, String, String, Value)| {
        let patch = NewPatch::from_json(
            &json!({"subjectId": q.1, "path": q.2, "op": q.3, "value": q.4}),
            0,
        )
        .expect("patch");
        let s = NewSlice {
            instant: q.0,
            title: "bench".into(),
            summary: String::new(),
            kind: "event".into(),
            patches: vec![patch],
        };
        st.write_slice(&s).expect("write");
    };
    let half = w.writes.len() / 2;
    conn.execute_batch("BEGIN IMMEDIATE").expect("begin");
    let (w_med, w_p95) = profile(&w.writes[..half], write);
    conn.execute_batch("COMMIT").expect("commit");
    let (c_med, c_p95) = profile(&w.writes[half..], write);
    let mut next = w.writes.last().map_or(0, |q| q.0) + 60;
    conn.execute_batch("BEGIN IMMEDIATE").expect("begin");
    let mut g = c.benchmark_group("world");
    g.bench_function("write_slice_in_transaction", |b| {
        b.iter(|| {
            let q = &w.writes[i % w.writes.len()];
            i += 1;
            next += 60;
            write(&(next, q.1.clone(), q.2.clone(), q.3.clone(), q.4.clone()))
        })
    });
    g.finish();
    conn.execute_batch("ROLLBACK").expect("rollback");

    // execute_world through the real tool (connection pool, world config cache, QuickJS
    // start-up, prelude, script, transaction), as the engine runs it.
    let ctx = tool_ctx(&w);
    let exec = |code: &str| {
        let out = ExecuteWorld
            .run(&ctx, &json!({"code": code}).into())
            .expect("execute_world");
        std::hint::black_box(out);
    };
    let returns: Vec<usize> = (0..320).collect();
    let (r_med, r_p95) = profile(&returns, |_| exec("return 1"));
    let (g_med, g_p95) = profile(&w.get_now, |id| {
        exec(&format!("return await world.subject.get({id:?})"))
    });
    let mut g = c.benchmark_group("world");
    g.bench_function("execute_world_return_1", |b| b.iter(|| exec("return 1")));
    g.finish();

    println!("\nworld engine on {} — median / p95 in ms", w.label);
    println!("| operation | nbook |");
    println!("|---|---|");
    println!(
        "| state of one subject at a random instant (checkpoints) | {} / {} |",
        ms(q_med),
        ms(q_p95)
    );
    println!(
        "| same, naive full replay of the subject's history | {} / {} |",
        ms(n_med),
        ms(n_p95)
    );
    println!(
        "| ratio naive / checkpointed (median) | {:.1}x |",
        n_med.as_secs_f64() / q_med.as_secs_f64().max(1e-12)
    );
    println!(
        "| write one slice with one patch at the end (engine work, in a transaction) | {} / {} |",
        ms(w_med),
        ms(w_p95)
    );
    println!(
        "| same, each committed on its own (rollback journal, synchronous=FULL) | {} / {} |",
        ms(c_med),
        ms(c_p95)
    );
    println!(
        "| execute_world: a script that only returns 1 | {} / {} |",
        ms(r_med),
        ms(r_p95)
    );
    println!(
        "| execute_world: world.subject.get(id) at now | {} / {} |",
        ms(g_med),
        ms(g_p95)
    );
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50).measurement_time(Duration::from_secs(3)).warm_up_time(Duration::from_secs(1));
    targets = bench_world
}
criterion_main!(benches);
