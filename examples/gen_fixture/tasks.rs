//! `--tasks N`: the production board filled with N tasks (`NB-001`…) spread over the
//! `builtin:chapter` columns, each with a small plan's steps, some dependencies and a log line,
//! written in one transaction straight into the board's tables (creating them one by one
//! through `fn_task_create` would run its duplicate check N times).

use rusqlite::params;

const WORDS: [&str; 8] = [
    "harbour", "Flett", "watch", "letter", "storm", "ledger", "bridge", "lamp",
];
const COLUMNS: [&str; 5] = ["planning", "drafting", "review", "done", "archived"];

pub fn generate(root: &std::path::Path, n: usize) -> Result<f64, Box<dyn std::error::Error>> {
    let started = std::time::Instant::now();
    let mut conn = nbook::store::open(&root.join(".nbook/project.sqlite"))?;
    let tx = conn.transaction()?;
    let first: i64 = tx.query_row(
        "SELECT COALESCE(MAX(seq), 0) + 1 FROM nbook_board_task",
        [],
        |r| r.get(0),
    )?;
    let at = "2026-01-01T00:00:00Z";
    for k in 0..n as i64 {
        let seq = first + k;
        let i = seq as usize;
        let (w, v) = (WORDS[i % WORDS.len()], WORDS[(i / 7) % WORDS.len()]);
        let column = COLUMNS[i % COLUMNS.len()];
        let done = match column {
            "planning" => 0,
            "drafting" => i % 4,
            _ => 4,
        };
        let steps: Vec<serde_json::Value> = ["Preflight", "Opening", "Middle", "Ending"]
            .iter()
            .enumerate()
            .map(|(s, name)| serde_json::json!({"name": name, "status": if s < done { "done" } else { "pending" }}))
            .collect();
        let deps: Vec<String> = if seq > 3 && i.is_multiple_of(3) {
            vec![format!("NB-{:03}", seq - 3)]
        } else {
            vec![]
        };
        let id = format!("NB-{seq:03}");
        tx.execute(
            "INSERT INTO nbook_board_task (id, seq, title, description, column_id, dependencies, steps, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)",
            params![
                id,
                seq,
                format!("Revise chapter {i} for the {w}"),
                format!("Revise chapter {i}: the {w} scenes and the {v} thread must agree with the world timeline and the brief."),
                column,
                serde_json::to_string(&deps)?,
                serde_json::to_string(&steps)?,
                at
            ],
        )?;
        tx.execute(
            "INSERT INTO nbook_board_task_log (task_id, at, action) VALUES (?1, ?2, 'Task created')",
            params![id, at],
        )?;
    }
    tx.commit()?;
    Ok(started.elapsed().as_secs_f64())
}
