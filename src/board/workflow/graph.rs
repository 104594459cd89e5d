//! Graph helpers of the IR v2 validator (`super::validate`): reachability, cycle search,
//! the members of split branches, and the safe-regex check for `loop.exitWhen` patterns.

use std::collections::{HashMap, HashSet, VecDeque};

use super::ir::{IrEdge, IrNode};

/// Nodes between a split and its join (the split's branches).
pub(super) fn branch_members<'a>(nodes: &'a [IrNode], fwd: &[&'a IrEdge]) -> HashSet<&'a str> {
    let kind: HashMap<&str, &str> = nodes
        .iter()
        .map(|n| (n.id.as_str(), n.kind.as_str()))
        .collect();
    let mut out = HashSet::new();
    for s in nodes.iter().filter(|n| n.kind == "split") {
        let mut q: VecDeque<&str> = fwd
            .iter()
            .filter(|e| e.from == s.id)
            .map(|e| e.to.as_str())
            .collect();
        while let Some(id) = q.pop_front() {
            if kind.get(id).is_none_or(|k| *k == "join") {
                continue;
            }
            if out.insert(id) {
                q.extend(fwd.iter().filter(|e| e.from == id).map(|e| e.to.as_str()));
            }
        }
    }
    out
}

pub(super) fn reachable<'a>(
    from: &'a str,
    fwd: &[&'a IrEdge],
    blocked: Option<&HashSet<&str>>,
) -> HashSet<&'a str> {
    let mut out: HashMap<&str, Vec<&'a str>> = HashMap::new();
    for e in fwd {
        out.entry(e.from.as_str()).or_default().push(e.to.as_str());
    }
    let mut seen = HashSet::new();
    let mut q = VecDeque::from([from]);
    seen.insert(from);
    while let Some(id) = q.pop_front() {
        for &to in out.get(id).map_or(&[][..], Vec::as_slice) {
            if blocked.is_some_and(|b| b.contains(to)) {
                continue;
            }
            if seen.insert(to) {
                q.push_back(to);
            }
        }
    }
    seen
}

/// A node on a cycle of `fwd`, if any (iterative DFS, three colours).
pub(super) fn find_cycle(nodes: &[IrNode], fwd: &[&IrEdge]) -> Option<String> {
    let mut out: HashMap<&str, Vec<&str>> = HashMap::new();
    for e in fwd {
        out.entry(e.from.as_str()).or_default().push(e.to.as_str());
    }
    let mut colour: HashMap<&str, u8> = HashMap::new();
    for n in nodes {
        if colour.contains_key(n.id.as_str()) {
            continue;
        }
        let mut stack: Vec<(&str, usize)> = vec![(n.id.as_str(), 0)];
        colour.insert(n.id.as_str(), 1);
        while let Some((id, i)) = stack.pop() {
            let next = out.get(id).and_then(|v| v.get(i)).copied();
            match next {
                Some(to) => {
                    stack.push((id, i + 1));
                    match colour.get(to) {
                        Some(1) => return Some(to.to_string()),
                        Some(_) => {}
                        None => {
                            colour.insert(to, 1);
                            stack.push((to, 0));
                        }
                    }
                }
                None => {
                    colour.insert(id, 2);
                }
            }
        }
    }
    None
}

/// A pattern safe to run on model output: at most [`REGEX_MAX`](super::validate::REGEX_MAX) characters, no
/// backreferences, no quantified group that itself holds a quantifier (`(a+)+`: the shape
/// that backtracks exponentially).
pub fn safe_regex(p: &str) -> Result<(), String> {
    if p.chars().count() > super::validate::REGEX_MAX {
        return Err(format!(
            "longer than {} characters",
            super::validate::REGEX_MAX
        ));
    }
    let chars: Vec<char> = p.chars().collect();
    // Per open group: whether it holds a quantifier.
    let mut groups: Vec<bool> = Vec::new();
    let mut last_group_quantified: Option<bool> = None;
    let mut i = 0;
    let mut in_class = false;
    while i < chars.len() {
        let ch = chars[i];
        if ch == '\\' {
            let next = chars.get(i + 1).copied();
            if next.is_some_and(|n| n.is_ascii_digit() && n != '0') || next == Some('k') {
                return Err("backreferences are not allowed".into());
            }
            i += 2;
            last_group_quantified = None;
            continue;
        }
        if in_class {
            if ch == ']' {
                in_class = false;
            }
            i += 1;
            continue;
        }
        match ch {
            '[' => {
                in_class = true;
                last_group_quantified = None;
            }
            '(' => {
                groups.push(false);
                last_group_quantified = None;
                // (?:…), (?=…), (?!…): the `?` is syntax, not a quantifier.
                if chars.get(i + 1) == Some(&'?') {
                    i += 1;
                }
            }
            ')' => {
                let q = groups.pop().ok_or("unbalanced parenthesis")?;
                last_group_quantified = Some(q);
                i += 1;
                continue;
            }
            '*' | '+' | '{' => {
                if last_group_quantified == Some(true) {
                    return Err("nested quantifiers are not allowed".into());
                }
                if let Some(g) = groups.last_mut() {
                    *g = true;
                }
                // A quantified inner group makes the enclosing group quantified too.
                last_group_quantified = None;
            }
            // `?` (optional, or lazy after a quantifier) repeats nothing.
            '?' => {}
            _ => last_group_quantified = None,
        }
        i += 1;
    }
    if !groups.is_empty() {
        return Err("unbalanced parenthesis".into());
    }
    Ok(())
}
