//! A line-based three-way merge: the draft's change and the manuscript's change, both made
//! from the same base, combined when they touch different lines — a stale merge rebased.
//! Changes to overlapping (or the same insertion point of) base lines conflict unless they
//! are identical.

use similar::{capture_diff_slices, Algorithm, DiffOp};

/// One replacement of base lines `start..end` by `lines`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Edit<'a> {
    start: usize,
    end: usize,
    lines: Vec<&'a str>,
}

fn edits<'a>(base: &[&'a str], other: &[&'a str]) -> Vec<Edit<'a>> {
    capture_diff_slices(Algorithm::Myers, base, other)
        .into_iter()
        .filter_map(|op| match op {
            DiffOp::Equal { .. } => None,
            DiffOp::Delete {
                old_index, old_len, ..
            } => Some(Edit {
                start: old_index,
                end: old_index + old_len,
                lines: Vec::new(),
            }),
            DiffOp::Insert {
                old_index,
                new_index,
                new_len,
            } => Some(Edit {
                start: old_index,
                end: old_index,
                lines: other[new_index..new_index + new_len].to_vec(),
            }),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => Some(Edit {
                start: old_index,
                end: old_index + old_len,
                lines: other[new_index..new_index + new_len].to_vec(),
            }),
        })
        .collect()
}

/// Whether two edits touch the same base lines (or insert at the same point, or one inserts
/// at the edge of the other's range).
fn collide(a: &Edit, b: &Edit) -> bool {
    if a.start == a.end || b.start == b.end {
        // An insertion collides with an edit whose range contains or borders its point.
        let (ins, other) = if a.start == a.end { (a, b) } else { (b, a) };
        return other.start <= ins.start && ins.start <= other.end;
    }
    a.start < b.end && b.start < a.end
}

/// The base lines where the two sides' changes conflict (1-based, first line of each).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    pub lines: Vec<usize>,
}

/// `base` changed into `ours` and into `theirs`: both changes applied, or the base lines
/// where they conflict.
pub fn merge3(base: &str, ours: &str, theirs: &str) -> Result<String, Conflict> {
    let b: Vec<&str> = base.split_inclusive('\n').collect();
    let o: Vec<&str> = ours.split_inclusive('\n').collect();
    let t: Vec<&str> = theirs.split_inclusive('\n').collect();
    let mut all: Vec<Edit> = Vec::new();
    let mut conflicts = Vec::new();
    let theirs_edits = edits(&b, &t);
    for e in edits(&b, &o) {
        match theirs_edits.iter().find(|x| collide(&e, x)) {
            Some(x) if *x == e => {}
            Some(x) => conflicts.push(x.start.min(e.start) + 1),
            None => {}
        }
        all.push(e);
    }
    if !conflicts.is_empty() {
        conflicts.dedup();
        return Err(Conflict { lines: conflicts });
    }
    for x in theirs_edits {
        if !all.contains(&x) {
            all.push(x);
        }
    }
    // Insertions at a point come before a replacement starting there (they cannot both
    // exist from one side, and across sides a collision was refused above).
    all.sort_by_key(|e| (e.start, e.end));
    let mut out = String::with_capacity(base.len().max(ours.len()).max(theirs.len()));
    let mut at = 0;
    for e in &all {
        for line in &b[at..e.start] {
            out.push_str(line);
        }
        for line in &e.lines {
            out.push_str(line);
        }
        at = e.end;
    }
    for line in &b[at..] {
        out.push_str(line);
    }
    Ok(out)
}

/// The line that opens a conflict written by [`conflict_text`].
pub const DRAFT_MARKER: &str = "<<<<<<< draft";

/// `ours` with git-style conflict markers around the whole file's two versions, for the
/// executor to resolve when a rebase did not apply.
pub fn conflict_text(ours: &str, theirs: &str) -> String {
    let mut s = format!("{DRAFT_MARKER}\n");
    s.push_str(ours);
    if !ours.ends_with('\n') && !ours.is_empty() {
        s.push('\n');
    }
    s.push_str("=======\n");
    s.push_str(theirs);
    if !theirs.ends_with('\n') && !theirs.is_empty() {
        s.push('\n');
    }
    s.push_str(">>>>>>> manuscript\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_to_different_lines_merge_and_overlaps_conflict() {
        let base = "one\ntwo\nthree\nfour\n";
        let ours = "one\nTWO\nthree\nfour\n";
        let theirs = "one\ntwo\nthree\nFOUR\n";
        assert_eq!(
            merge3(base, ours, theirs).unwrap(),
            "one\nTWO\nthree\nFOUR\n"
        );
        // Both sides made the same change: taken once.
        assert_eq!(merge3(base, ours, ours).unwrap(), ours);
        // An insertion at the end on one side, a change at the start on the other.
        assert_eq!(
            merge3(
                base,
                "zero\none\ntwo\nthree\nfour\n",
                "one\ntwo\nthree\nfour\nfive\n"
            )
            .unwrap(),
            "zero\none\ntwo\nthree\nfour\nfive\n"
        );
        let clash = merge3(base, "one\n2\nthree\nfour\n", "one\nzwei\nthree\nfour\n").unwrap_err();
        assert_eq!(clash.lines, vec![2]);
    }
}
