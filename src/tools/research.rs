//! Topic research: `novel_rankings` and `novel_book_detail`, read-only over ranking snapshot
//! files (JSON).
//!
//! Where snapshots come from, in this order (earlier wins for the same platform and board):
//! 1. `<project>/.nbook/research/*.json`
//! 2. `<project>/reference/rankings/*.json`
//! 3. `<config>/research/*.json` (the nbook config folder, `NBOOK_HOME` when set)
//!
//! When none of these holds a snapshot, the sample shipped in `assets/research/` (compiled in)
//! is used, and every answer says so. A file holds one snapshot object, an array of them, or
//! `{"snapshots": [...]}`. A snapshot is `{platform, board, boardName?, fetchedAt (RFC 3339),
//! stale?, source?, items: [{rank, bookId, title, author?, ...}], books?: {<bookId>: {...}}}`.
//!
//! Every answer cites the snapshot's `fetchedAt` and carries a warning when the snapshot is
//! stale: `stale: true` in the file, or fetched more than `STALE_AFTER_DAYS` days ago.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use crate::engine::tool::{Mutates, ToolCtx, ToolError, ToolOutput};
use crate::engine::typed::TypedTool;

pub const STALE_AFTER_DAYS: i64 = 7;
pub const SAMPLE_NAME: &str = "built-in sample (assets/research/sample-rankings.json)";
const SAMPLE: &str = include_str!("../../assets/research/sample-rankings.json");

struct Snapshot {
    source: String,
    data: Value,
}

impl Snapshot {
    fn platform(&self) -> &str {
        self.data["platform"].as_str().unwrap_or_default()
    }
    fn board(&self) -> &str {
        self.data["board"].as_str().unwrap_or_default()
    }
    fn fetched_at(&self) -> &str {
        self.data["fetchedAt"].as_str().unwrap_or_default()
    }
    fn items(&self) -> &[Value] {
        self.data["items"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }
}

/// The folders searched for snapshots, in priority order.
pub fn snapshot_dirs(project_root: &Path, config_dir: &Path) -> Vec<PathBuf> {
    vec![
        project_root.join(".nbook").join("research"),
        project_root.join("reference").join("rankings"),
        config_dir.join("research"),
    ]
}

fn split_snapshots(v: Value) -> Vec<Value> {
    match v {
        Value::Array(a) => a,
        Value::Object(mut o) if o.contains_key("snapshots") => match o.remove("snapshots") {
            Some(Value::Array(a)) => a,
            _ => Vec::new(),
        },
        other => vec![other],
    }
}

/// Load every snapshot; `warnings` collects files that could not be used.
fn load(ctx: &ToolCtx, warnings: &mut Vec<String>) -> (Vec<Snapshot>, bool) {
    let config_dir = crate::config::Dirs::resolve().config;
    let mut out: Vec<Snapshot> = Vec::new();
    for dir in snapshot_dirs(ctx.workspace.root(), &config_dir) {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| {
                p.extension()
                    .is_some_and(|e| e.eq_ignore_ascii_case("json"))
                    && p.is_file()
            })
            .collect();
        files.sort();
        for f in files {
            let shown = f
                .strip_prefix(ctx.workspace.root())
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| f.display().to_string());
            let parsed = std::fs::read_to_string(&f)
                .map_err(|e| e.to_string())
                .and_then(|t| serde_json::from_str::<Value>(&t).map_err(|e| e.to_string()));
            match parsed {
                Ok(v) => push_snapshots(&mut out, &shown, v, warnings),
                Err(e) => warnings.push(format!(
                    "skipped {shown}: not a readable JSON snapshot ({e})"
                )),
            }
        }
    }
    if out.is_empty() {
        let v: Value = serde_json::from_str(SAMPLE).unwrap_or(Value::Null);
        push_snapshots(&mut out, SAMPLE_NAME, v, warnings);
        return (out, true);
    }
    (out, false)
}

fn push_snapshots(out: &mut Vec<Snapshot>, source: &str, v: Value, warnings: &mut Vec<String>) {
    for s in split_snapshots(v) {
        let snap = Snapshot {
            source: source.to_string(),
            data: s,
        };
        if snap.platform().is_empty() || snap.board().is_empty() || !snap.data["items"].is_array() {
            warnings.push(format!(
                "skipped a snapshot in {source}: it needs `platform`, `board` and an `items` list"
            ));
            continue;
        }
        let dup = out
            .iter()
            .any(|o| o.platform() == snap.platform() && o.board() == snap.board());
        if !dup {
            out.push(snap);
        }
    }
}

/// Seconds since the Unix epoch of an RFC 3339 time (`2026-07-20T08:00:00Z`, fractions and
/// offsets accepted).
pub fn parse_rfc3339(s: &str) -> Option<i64> {
    let s = s.trim();
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| s.get(r)?.parse::<i64>().ok();
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, se) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || se > 60 {
        return None;
    }
    let mut rest = &s[19..];
    if let Some(r) = rest.strip_prefix('.') {
        let n = r.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return None;
        }
        rest = &r[n..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ if rest.len() == 6 && (rest.starts_with('+') || rest.starts_with('-')) => {
            let oh: i64 = rest[1..3].parse().ok()?;
            let om: i64 = rest[4..6].parse().ok()?;
            let o = oh * 3600 + om * 60;
            if rest.starts_with('-') {
                -o
            } else {
                o
            }
        }
        _ => return None,
    };
    // Days from civil (Howard Hinnant).
    let (yy, mm) = if mo <= 2 {
        (y - 1, mo + 9)
    } else {
        (y, mo - 3)
    };
    let era = yy.div_euclid(400);
    let yoe = yy - era * 400;
    let doy = (153 * mm + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + h * 3600 + mi * 60 + se - offset)
}

fn now_secs() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Staleness of one snapshot: `(stale, ageDays, warning)`.
fn staleness(s: &Snapshot) -> (bool, Option<i64>, Option<String>) {
    let label = format!("{}/{}", s.platform(), s.board());
    let fetched = s.fetched_at();
    let age = parse_rfc3339(fetched).map(|t| (now_secs() - t).max(0) / 86_400);
    if s.data["stale"].as_bool() == Some(true) {
        return (
            true,
            age,
            Some(format!(
                "the {label} snapshot is marked stale (fetched at {fetched}); rankings may have changed since"
            )),
        );
    }
    match age {
        None => (
            true,
            None,
            Some(format!(
                "the {label} snapshot has no valid fetchedAt ({fetched:?}); treat it as stale"
            )),
        ),
        Some(days) if days > STALE_AFTER_DAYS => (
            true,
            Some(days),
            Some(format!(
                "the {label} snapshot was fetched at {fetched}, {days} days ago (more than {STALE_AFTER_DAYS}); rankings may have changed since"
            )),
        ),
        Some(days) => (false, Some(days), None),
    }
}

fn sample_warning(sample: bool, warnings: &mut Vec<String>) {
    if sample {
        warnings.push(format!(
            "no ranking snapshots found in the project (.nbook/research/ or reference/rankings/) or the config folder (research/); this answer uses the {SAMPLE_NAME}, which is illustrative, not real data"
        ));
    }
}

fn platforms(snaps: &[Snapshot]) -> Vec<String> {
    let mut p: Vec<String> = snaps.iter().map(|s| s.platform().to_string()).collect();
    p.sort();
    p.dedup();
    p
}

fn check_platform(snaps: &[Snapshot], platform: &str) -> Result<(), ToolError> {
    if snaps.iter().any(|s| s.platform() == platform) {
        return Ok(());
    }
    Err(ToolError::failed(format!(
        "no ranking snapshot for platform {platform:?}; available platforms: {}",
        platforms(snaps).join(", ")
    )))
}

fn output(value: Value) -> ToolOutput {
    ToolOutput {
        content: serde_json::to_string_pretty(&value).unwrap_or_default(),
        details: Some(value),
        ..Default::default()
    }
}

fn book_id_of(item: &Value) -> Option<String> {
    match &item["bookId"] {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------------

pub struct NovelRankings;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RankingsArgs {
    /// Platform key, e.g. qidian or fanqie
    #[schemars(length(min = 1, max = 64))]
    pub platform: String,
    /// Board key, e.g. yuepiao, hotsales, 0_1_1139
    #[schemars(length(min = 1, max = 128))]
    pub board: String,
}

impl TypedTool for NovelRankings {
    type Args = RankingsArgs;
    const NAME: &'static str = "novel_rankings";
    const GROUP: &'static str = "research";
    const DESCRIPTION: &'static str = "Read a web-novel ranking board (e.g. platform qidian, board yuepiao) from the ranking snapshots saved in the project or config folder. Cite the snapshot's fetchedAt and mention any staleness warning.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        // Snapshot files only: nothing is fetched, so no egress.
        Effects::touches(&[Files])
    };
    const PARALLEL_SAFE: bool = true;
    fn run(&self, ctx: &ToolCtx, args: &RankingsArgs) -> Result<ToolOutput, ToolError> {
        let platform = args.platform.trim();
        let board = args.board.trim();
        let mut warnings = Vec::new();
        let (snaps, sample) = load(ctx, &mut warnings);
        check_platform(&snaps, platform)?;
        let Some(snap) = snaps
            .iter()
            .find(|s| s.platform() == platform && s.board() == board)
        else {
            let boards: Vec<&str> = snaps
                .iter()
                .filter(|s| s.platform() == platform)
                .map(|s| s.board())
                .collect();
            return Err(ToolError::failed(format!(
                "no ranking snapshot for board {board:?} on {platform}; available boards: {}",
                boards.join(", ")
            )));
        };
        sample_warning(sample, &mut warnings);
        let (stale, age, w) = staleness(snap);
        warnings.extend(w);
        let mut out = json!({
            "platform": platform,
            "board": board,
        });
        if let Some(n) = snap.data["boardName"].as_str() {
            out["boardName"] = json!(n);
        }
        out["fetchedAt"] = snap.data["fetchedAt"].clone();
        out["ageDays"] = json!(age);
        out["stale"] = json!(stale);
        out["snapshot"] = json!(snap.source);
        out["citation"] = json!(format!(
            "{platform} {board} ranking, snapshot fetched at {} ({})",
            snap.fetched_at(),
            snap.source
        ));
        out["warnings"] = json!(warnings);
        out["items"] = json!(snap.items());
        Ok(output(out))
    }
}

pub struct NovelBookDetail;

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BookDetailArgs {
    #[schemars(length(min = 1, max = 64))]
    pub platform: String,
    /// The platform's book id, as listed by novel_rankings
    #[schemars(length(min = 1, max = 128))]
    pub book_id: String,
}

impl TypedTool for NovelBookDetail {
    type Args = BookDetailArgs;
    const NAME: &'static str = "novel_book_detail";
    const GROUP: &'static str = "research";
    const DESCRIPTION: &'static str = "Details of one book (platform + bookId) from the ranking snapshots: its entry, extra detail when the snapshot has it, and every board it ranks on. Cite fetchedAt and mention any staleness warning.";
    const MUTATES: Mutates = Mutates::No;
    const EFFECTS: crate::engine::tool::Effects = {
        use crate::engine::tool::{Domain::*, Effects};
        // Snapshot files only: nothing is fetched, so no egress.
        Effects::touches(&[Files])
    };
    const PARALLEL_SAFE: bool = true;
    fn run(&self, ctx: &ToolCtx, args: &BookDetailArgs) -> Result<ToolOutput, ToolError> {
        let platform = args.platform.trim();
        let book_id = args.book_id.trim();
        let mut warnings = Vec::new();
        let (snaps, sample) = load(ctx, &mut warnings);
        check_platform(&snaps, platform)?;
        let mut book = Map::new();
        let mut rankings = Vec::new();
        let mut detail: Option<Value> = None;
        let mut latest: Option<(i64, String)> = None;
        let mut stale_any = false;
        let mut known: Vec<String> = Vec::new();
        for s in snaps.iter().filter(|s| s.platform() == platform) {
            let extra = s.data["books"].get(book_id).cloned();
            let item = s
                .items()
                .iter()
                .find(|i| book_id_of(i).as_deref() == Some(book_id));
            for i in s.items() {
                if let Some(id) = book_id_of(i) {
                    if !known.contains(&id) {
                        known.push(id);
                    }
                }
            }
            if item.is_none() && extra.is_none() {
                continue;
            }
            let (stale, _, w) = staleness(s);
            stale_any |= stale;
            if let Some(w) = w {
                if !warnings.contains(&w) {
                    warnings.push(w);
                }
            }
            let t = parse_rfc3339(s.fetched_at()).unwrap_or(i64::MIN);
            if latest.as_ref().is_none_or(|(lt, _)| t > *lt) {
                latest = Some((t, s.fetched_at().to_string()));
            }
            if let Some(item) = item {
                if let Some(o) = item.as_object() {
                    for (k, v) in o {
                        if k != "rank" && !book.contains_key(k) {
                            book.insert(k.clone(), v.clone());
                        }
                    }
                }
                rankings.push(json!({
                    "board": s.board(),
                    "boardName": s.data["boardName"],
                    "rank": item["rank"],
                    "fetchedAt": s.fetched_at(),
                    "snapshot": s.source,
                }));
            }
            if detail.is_none() {
                detail = extra;
            }
        }
        if book.is_empty() && detail.is_none() {
            let shown: Vec<String> = known.iter().take(50).cloned().collect();
            let more = if known.len() > 50 {
                format!(" (and {} more)", known.len() - 50)
            } else {
                String::new()
            };
            return Err(ToolError::failed(format!(
                "book {book_id:?} is not in any {platform} ranking snapshot; known book ids: {}{more}",
                shown.join(", ")
            )));
        }
        sample_warning(sample, &mut warnings);
        warnings.sort_by_key(|w| !w.starts_with("no ranking snapshots"));
        let fetched = latest.map(|(_, f)| f).unwrap_or_default();
        let mut out = json!({"platform": platform, "bookId": book_id});
        out["book"] = Value::Object(book);
        if let Some(d) = detail {
            out["detail"] = d;
        }
        out["rankings"] = json!(rankings);
        out["fetchedAt"] = json!(fetched);
        out["stale"] = json!(stale_any);
        out["citation"] = json!(format!(
            "{platform} book {book_id}, from ranking snapshots fetched at {fetched}"
        ));
        out["warnings"] = json!(warnings);
        Ok(output(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(parse_rfc3339("2000-03-01T00:00:00Z"), Some(951_868_800));
        assert_eq!(parse_rfc3339("1970-01-01T01:00:00.5+01:00"), Some(0));
        assert_eq!(parse_rfc3339("yesterday"), None);
    }

    #[test]
    fn sample_parses() {
        let v: Value = serde_json::from_str(SAMPLE).unwrap();
        assert!(split_snapshots(v).len() >= 2);
    }
}
