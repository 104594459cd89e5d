//! Parts of a file preview, for approving a call in parts: every file change's diff hunks,
//! addressed by ids stable for that preview (`f1h0`: the first hunk of the second file), with a
//! digest of the preview so a selection made on another preview is refused.
//!
//! This module owns the ids, the check of a selection ([`PartSelection`]) against the preview
//! it was chosen on (giving the [`KeptParts`]), what the agent is told was applied and
//! rejected, and the comparison proving that a narrowed call's fresh preview holds exactly the
//! kept parts of the preview the author saw ([`matches_kept`]). Which tools can make only
//! some of their changes is their own declaration (`Tool::selects_parts`), not decided here.

use serde::{Deserialize, Serialize};

use super::preview::{ChangeKind, FileChange, Preview, PreviewBody};

/// The author's choice of parts: apply the kept ones, drop every other.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartSelection {
    /// [`parts_digest`] of the preview the parts were chosen on.
    pub preview: String,
    /// Ids of the parts to apply (`f0h1`, see [`parts_of`]); every other part is dropped.
    pub keep: Vec<String>,
    /// Why the other parts were dropped, for the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// One part of a preview: a hunk of a file's diff (a file that cannot be split, such as a
/// new, deleted or elided one, is one part).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    pub id: String,
    pub file: usize,
    pub hunk: usize,
    /// The file's number of parts.
    pub of: usize,
    /// First line of the hunk in the old file (1-based; 0 for a whole-file part).
    pub line: usize,
}

/// A selection that cannot be applied. Nothing was decided; the call still waits.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SelectionError {
    #[error("this call's preview is not a list of file diffs, so it cannot be approved in parts; approve or reject it whole")]
    NotFiles,
    #[error("{tool} cannot apply only some of its changes; approve or reject the call whole")]
    NotSupported { tool: String },
    #[error("unknown part id '{id}': this preview's parts are {known}; nothing was decided")]
    UnknownPart { id: String, known: String },
    #[error("the parts were chosen on another preview of this call (digest {given}, the waiting call's is {current}); nothing was decided: choose the parts again on the preview shown now")]
    StalePreview { given: String, current: String },
}

/// Which hunks of which files to apply: `files[i][j]` is hunk `j` of file `i`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeptParts {
    pub files: Vec<Vec<bool>>,
}

impl KeptParts {
    /// Everything kept, for a preview.
    pub fn all_of(preview: &Preview) -> KeptParts {
        KeptParts {
            files: file_changes(preview)
                .iter()
                .map(|c| vec![true; hunk_count(c)])
                .collect(),
        }
    }

    pub fn is_all(&self) -> bool {
        self.files.iter().flatten().all(|k| *k)
    }

    pub fn is_none(&self) -> bool {
        !self.files.iter().flatten().any(|k| *k)
    }

    /// Some hunk of file `i` is kept.
    pub fn file_kept(&self, i: usize) -> bool {
        self.files.get(i).is_some_and(|f| f.iter().any(|k| *k))
    }

    /// Every hunk of file `i` is kept.
    pub fn file_whole(&self, i: usize) -> bool {
        self.files.get(i).is_some_and(|f| f.iter().all(|k| *k))
    }

    /// (files kept, files, hunks kept, hunks).
    pub fn counts(&self) -> (usize, usize, usize, usize) {
        let files = self.files.len();
        let kept_files = (0..files).filter(|&i| self.file_kept(i)).count();
        let hunks = self.files.iter().map(Vec::len).sum();
        let kept = self.files.iter().flatten().filter(|k| **k).count();
        (kept_files, files, kept, hunks)
    }

    /// "2 of 3 files, 4 of 6 hunks".
    pub fn summary(&self) -> String {
        let (kf, f, kh, h) = self.counts();
        let s = |n: usize| if n == 1 { "" } else { "s" };
        format!("{kf} of {f} file{}, {kh} of {h} hunk{}", s(f), s(h))
    }

    /// The ids of the kept parts.
    pub fn ids(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (i, f) in self.files.iter().enumerate() {
            for (j, k) in f.iter().enumerate() {
                if *k {
                    out.push(part_id(i, j));
                }
            }
        }
        out
    }
}

fn file_changes(preview: &Preview) -> &[FileChange] {
    match &preview.body {
        PreviewBody::Files { changes } => changes,
        _ => &[],
    }
}

pub fn part_id(file: usize, hunk: usize) -> String {
    format!("f{file}h{hunk}")
}

/// One `@@` hunk of a unified diff: its header and its body lines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DiffHunk<'a> {
    pub header: &'a str,
    pub body: Vec<&'a str>,
}

impl DiffHunk<'_> {
    /// The old side of the header ("-10,4"): where the hunk sits in the file as it is now.
    pub fn old_range(&self) -> &str {
        self.header
            .trim_start_matches('@')
            .split_whitespace()
            .next()
            .unwrap_or("")
    }

    /// First old line (1-based).
    pub fn old_start(&self) -> usize {
        self.old_range()
            .trim_start_matches('-')
            .split(',')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    }
}

/// The hunks of a unified diff (the `---`/`+++` header lines before the first are skipped).
pub fn diff_hunks(diff: &str) -> Vec<DiffHunk<'_>> {
    let mut out: Vec<DiffHunk> = Vec::new();
    for l in diff.lines() {
        if l.starts_with("@@") {
            out.push(DiffHunk {
                header: l,
                body: Vec::new(),
            });
        } else if let Some(h) = out.last_mut() {
            h.body.push(l);
        }
    }
    out
}

/// The note a bounded preview puts where it left lines out (see `tools::preview_diff`).
pub fn is_elided(diff: &str) -> bool {
    diff.lines()
        .any(|l| l.starts_with("… ") && l.contains(" lines elided ("))
}

/// Whether a file's hunks can be kept one by one: an update whose diff is shown whole.
pub fn splittable(c: &FileChange) -> bool {
    c.kind == ChangeKind::Update && !is_elided(&c.diff) && diff_hunks(&c.diff).len() > 1
}

/// How many parts a file change has: its hunks, or 1 when it cannot be split.
pub fn hunk_count(c: &FileChange) -> usize {
    if splittable(c) {
        diff_hunks(&c.diff).len()
    } else {
        1
    }
}

/// Every part of a file preview, in order (empty for other previews).
pub fn parts_of(preview: &Preview) -> Vec<Part> {
    let mut out = Vec::new();
    for (i, c) in file_changes(preview).iter().enumerate() {
        let n = hunk_count(c);
        let hunks = diff_hunks(&c.diff);
        for j in 0..n {
            out.push(Part {
                id: part_id(i, j),
                file: i,
                hunk: j,
                of: n,
                line: if n > 1 {
                    hunks.get(j).map(|h| h.old_start()).unwrap_or(0)
                } else {
                    0
                },
            });
        }
    }
    out
}

/// A digest of what a file preview shows (paths, kinds, diffs): FNV-1a, stable across builds.
pub fn parts_digest(preview: &Preview) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |s: &str| {
        for b in s.bytes().chain([0xff]) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    for c in file_changes(preview) {
        eat(&c.path);
        eat(match c.kind {
            ChangeKind::Add => "add",
            ChangeKind::Update => "update",
            ChangeKind::Delete => "delete",
        });
        eat(c.move_to.as_deref().unwrap_or(""));
        eat(&c.diff);
    }
    format!("{h:016x}")
}

/// Check a selection against the preview it claims to be made on.
pub fn check(preview: &Preview, sel: &PartSelection) -> Result<KeptParts, SelectionError> {
    if file_changes(preview).is_empty() {
        return Err(SelectionError::NotFiles);
    }
    let current = parts_digest(preview);
    if sel.preview != current {
        return Err(SelectionError::StalePreview {
            given: sel.preview.clone(),
            current,
        });
    }
    let parts = parts_of(preview);
    let mut kept = KeptParts {
        files: file_changes(preview)
            .iter()
            .map(|c| vec![false; hunk_count(c)])
            .collect(),
    };
    for id in &sel.keep {
        let Some(p) = parts.iter().find(|p| &p.id == id) else {
            let known: Vec<&str> = parts.iter().map(|p| p.id.as_str()).collect();
            return Err(SelectionError::UnknownPart {
                id: id.clone(),
                known: known.join(", "),
            });
        };
        kept.files[p.file][p.hunk] = true;
    }
    Ok(kept)
}

/// How a file is named to the agent and the author: "a.md", "a.md → b.md".
fn file_name(c: &FileChange) -> String {
    match &c.move_to {
        Some(to) => format!("{} → {}", c.path, to),
        None => c.path.clone(),
    }
}

/// What was applied and what was rejected, one line per file (hunks named by their lines).
pub fn describe(preview: &Preview, kept: &KeptParts) -> (Vec<String>, Vec<String>) {
    let (mut applied, mut rejected) = (Vec::new(), Vec::new());
    for (i, c) in file_changes(preview).iter().enumerate() {
        let name = file_name(c);
        let Some(marks) = kept.files.get(i) else {
            continue;
        };
        if marks.iter().all(|k| *k) {
            applied.push(format!("{name} (the whole change)"));
            continue;
        }
        if !marks.iter().any(|k| *k) {
            rejected.push(format!("{name} (the whole change)"));
            continue;
        }
        let hunks = diff_hunks(&c.diff);
        let list = |want: bool| -> String {
            marks
                .iter()
                .enumerate()
                .filter(|(_, k)| **k == want)
                .map(|(j, _)| {
                    let at = hunks.get(j).map(|h| h.old_range()).unwrap_or("");
                    format!("hunk {} of {} (@@ {at})", j + 1, marks.len())
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        applied.push(format!("{name}: {}", list(true)));
        rejected.push(format!("{name}: {}", list(false)));
    }
    (applied, rejected)
}

/// The text the agent reads before the tool's own result when only some parts were applied.
pub fn result_note(preview: &Preview, kept: &KeptParts, reason: Option<&str>) -> String {
    let (applied, rejected) = describe(preview, kept);
    let mut s = format!(
        "The author approved only part of this call ({}).\nApplied:\n",
        kept.summary()
    );
    for a in &applied {
        s.push_str(&format!("  - {a}\n"));
    }
    s.push_str("Rejected (not applied):\n");
    for r in &rejected {
        s.push_str(&format!("  - {r}\n"));
    }
    match reason {
        Some(r) => s.push_str(&format!("The author's reason: {r}\n")),
        None => s.push_str("The author gave no reason.\n"),
    }
    s.push_str("Do not propose the rejected parts again unchanged.");
    s
}

/// Whether `now` (the fresh preview of the narrowed call) shows exactly the kept parts of
/// `shown`: the kept files in order with the same path, kind and move, each kept hunk with the
/// same place in the old file and the same lines, and no target changed since. The error says
/// what differs.
pub fn matches_kept(shown: &Preview, kept: &KeptParts, now: &Preview) -> Result<(), String> {
    let before = file_changes(shown);
    let after = file_changes(now);
    let want: Vec<usize> = (0..before.len()).filter(|&i| kept.file_kept(i)).collect();
    if want.len() != after.len() {
        return Err(format!(
            "the narrowed call changes {} file(s), the kept parts are in {}",
            after.len(),
            want.len()
        ));
    }
    for (&i, a) in want.iter().zip(after) {
        let b = &before[i];
        if (&b.path, &b.kind, &b.move_to) != (&a.path, &a.kind, &a.move_to) {
            return Err(format!("{} became {}", file_name(b), file_name(a)));
        }
        if !splittable(b) || kept.file_whole(i) {
            if b.diff != a.diff {
                return Err(format!("the diff of {} differs", file_name(b)));
            }
            continue;
        }
        let shown_hunks = diff_hunks(&b.diff);
        let kept_hunks: Vec<&DiffHunk> = shown_hunks
            .iter()
            .enumerate()
            .filter(|(j, _)| kept.files[i].get(*j).copied().unwrap_or(false))
            .map(|(_, h)| h)
            .collect();
        let now_hunks = diff_hunks(&a.diff);
        let same = kept_hunks.len() == now_hunks.len()
            && kept_hunks
                .iter()
                .zip(&now_hunks)
                .all(|(k, n)| k.old_range() == n.old_range() && k.body == n.body);
        if !same {
            return Err(format!(
                "the hunks of {} do not come out as shown",
                file_name(b)
            ));
        }
    }
    for t in &now.targets {
        match shown.targets.iter().find(|s| s.key == t.key) {
            Some(s) if s.fingerprint == t.fingerprint => {}
            Some(_) => return Err(format!("{} changed since the preview", t.key)),
            None => return Err(format!("{} was not in the preview", t.key)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(path: &str, diff: &str) -> FileChange {
        FileChange {
            path: path.into(),
            kind: ChangeKind::Update,
            move_to: None,
            diff: diff.into(),
            added: 1,
            removed: 1,
        }
    }

    fn preview(changes: Vec<FileChange>) -> Preview {
        Preview {
            summary: "p".into(),
            body: PreviewBody::Files { changes },
            targets: Vec::new(),
        }
    }

    const TWO: &str =
        "--- a/a\n+++ b/a\n@@ -1,3 +1,3 @@\n x\n-y\n+Y\n z\n@@ -20,3 +20,3 @@\n p\n-q\n+Q\n r\n";

    #[test]
    fn ids_digest_and_selections() {
        let p = preview(vec![change("a", TWO), change("b", "@@ -1 +1 @@\n-o\n+n\n")]);
        let ids: Vec<String> = parts_of(&p).into_iter().map(|p| p.id).collect();
        assert_eq!(ids, ["f0h0", "f0h1", "f1h0"]);
        assert_eq!(parts_of(&p)[1].line, 20);
        let d = parts_digest(&p);
        let kept = check(
            &p,
            &PartSelection {
                preview: d.clone(),
                keep: vec!["f0h1".into()],
                reason: None,
            },
        )
        .unwrap();
        assert_eq!(kept.files, vec![vec![false, true], vec![false]]);
        assert_eq!(kept.summary(), "1 of 2 files, 1 of 3 hunks");
        let (applied, rejected) = describe(&p, &kept);
        assert_eq!(applied, ["a: hunk 2 of 2 (@@ -20,3)"]);
        assert_eq!(
            rejected,
            ["a: hunk 1 of 2 (@@ -1,3)", "b (the whole change)"]
        );
        let bad = check(
            &p,
            &PartSelection {
                preview: d,
                keep: vec!["f9h0".into()],
                reason: None,
            },
        );
        assert!(
            matches!(bad, Err(SelectionError::UnknownPart { .. })),
            "{bad:?}"
        );
        let stale = check(
            &p,
            &PartSelection {
                preview: "0".into(),
                keep: vec![],
                reason: None,
            },
        );
        assert!(matches!(stale, Err(SelectionError::StalePreview { .. })));
    }

    #[test]
    fn elided_and_new_files_are_one_part() {
        let mut add = change("n", "@@ -0,0 +1,2 @@\n+a\n+b\n");
        add.kind = ChangeKind::Add;
        let elided = change(
            "e",
            "@@ -1 +1 @@\n-a\n+b\n… 9 lines elided (the whole change: +5 -5 lines, 1 → 2 bytes) …\n@@ -50 +50 @@\n-c\n+d\n",
        );
        let p = preview(vec![add, elided]);
        assert_eq!(parts_of(&p).len(), 2);
    }

    #[test]
    fn a_narrowed_preview_must_show_the_kept_hunks() {
        let p = preview(vec![change("a", TWO)]);
        let kept = KeptParts {
            files: vec![vec![false, true]],
        };
        let ok = preview(vec![change(
            "a",
            "--- a/a\n+++ b/a\n@@ -20,3 +20,3 @@\n p\n-q\n+Q\n r\n",
        )]);
        assert_eq!(matches_kept(&p, &kept, &ok), Ok(()));
        let other = preview(vec![change(
            "a",
            "--- a/a\n+++ b/a\n@@ -20,3 +20,3 @@\n p\n-q\n+W\n r\n",
        )]);
        assert!(matches_kept(&p, &kept, &other).is_err());
    }
}
