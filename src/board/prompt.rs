//! PROMPT.md: the task's plan. Validation names the first failing section, in the order the
//! sections are checked: `# Task: ID — Title`, `## Mission`, `## Steps` (with
//! `### Step N: Title`, numbered from 0 — Step 0 is the preflight — without gaps),
//! `## File Scope` (project-relative entries, see [`super::scope`]) and
//! `## Acceptance Criteria`. Other sections (Dependencies, Context to Read First, Do NOT, …)
//! are allowed and kept as written. An optional `## Repository Scope` (series workspace mode)
//! lists the books of the series the task works in (`- book`); it is read here and checked
//! against the series by the caller (`super::repository_scope::check_declared`).

use super::error::{BoardError, BoardResult};
use super::scope;

/// What the board takes from a valid PROMPT.md.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parsed {
    pub title: String,
    /// Step titles in order (index = step number).
    pub steps: Vec<String>,
    pub file_scope: Vec<String>,
    /// The `## Repository Scope` entries as written (`None`: no such section).
    pub repository_scope: Option<Vec<String>>,
}

fn invalid(section: &str, message: impl Into<String>) -> BoardError {
    BoardError::PromptInvalid {
        section: section.to_string(),
        message: message.into(),
    }
}

/// The body lines of every `## ` section, by heading.
fn sections(text: &str) -> Vec<(String, Vec<&str>)> {
    let mut out: Vec<(String, Vec<&str>)> = Vec::new();
    for line in text.lines() {
        if let Some(h) = line.strip_prefix("## ") {
            out.push((h.trim().to_string(), Vec::new()));
        } else if let Some((_, body)) = out.last_mut() {
            body.push(line);
        }
    }
    out
}

fn section<'a>(all: &'a [(String, Vec<&'a str>)], name: &str) -> Option<&'a [&'a str]> {
    all.iter()
        .find(|(h, _)| h.eq_ignore_ascii_case(name))
        .map(|(_, b)| b.as_slice())
}

fn has_text(body: &[&str]) -> bool {
    body.iter().any(|l| !l.trim().is_empty())
}

/// Validate `text` as the PROMPT.md of task `task_id`.
pub fn validate(task_id: &str, text: &str) -> BoardResult<Parsed> {
    const HEADER: &str = "# Task";
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let Some(rest) = first.trim().strip_prefix("# Task:") else {
        return Err(invalid(
            HEADER,
            format!("the first line must be `# Task: {task_id} — Title`"),
        ));
    };
    let Some((id, title)) = rest
        .split_once(" — ")
        .or_else(|| rest.split_once(" - "))
        .map(|(a, b)| (a.trim(), b.trim()))
    else {
        return Err(invalid(
            HEADER,
            format!("the first line must be `# Task: {task_id} — Title` (an em dash between id and title)"),
        ));
    };
    if id != task_id {
        return Err(invalid(
            HEADER,
            format!("it names task {id}, but this is the PROMPT.md of {task_id}"),
        ));
    }
    if title.is_empty() {
        return Err(invalid(HEADER, "the title after the dash is empty"));
    }
    let all = sections(text);
    match section(&all, "Mission") {
        None => return Err(invalid("## Mission", "the section is missing")),
        Some(b) if !has_text(b) => return Err(invalid("## Mission", "the section is empty")),
        _ => {}
    }
    let steps = match section(&all, "Steps") {
        None => return Err(invalid("## Steps", "the section is missing")),
        Some(body) => parse_steps(body)?,
    };
    let file_scope = match section(&all, "File Scope") {
        None => return Err(invalid("## File Scope", "the section is missing")),
        Some(body) => {
            let mut entries = Vec::new();
            for line in body {
                let l = line.trim();
                let Some(item) = l.strip_prefix("- ").or_else(|| l.strip_prefix("* ")) else {
                    continue;
                };
                let e = scope::check_entry(item)
                    .map_err(|e| invalid("## File Scope", e.to_string()))?;
                if !entries.contains(&e) {
                    entries.push(e);
                }
            }
            if entries.is_empty() {
                return Err(invalid(
                    "## File Scope",
                    "list at least one project-relative path or glob as `- path`",
                ));
            }
            entries
        }
    };
    match section(&all, "Acceptance Criteria") {
        None => return Err(invalid("## Acceptance Criteria", "the section is missing")),
        Some(b) if !has_text(b) => {
            return Err(invalid("## Acceptance Criteria", "the section is empty"))
        }
        _ => {}
    }
    let repository_scope = match section(&all, "Repository Scope") {
        None => None,
        Some(body) => {
            let books: Vec<String> = body
                .iter()
                .filter_map(|l| {
                    let l = l.trim();
                    l.strip_prefix("- ").or_else(|| l.strip_prefix("* "))
                })
                .map(|b| b.trim().trim_matches('`').trim().to_string())
                .collect();
            if books.is_empty() {
                return Err(invalid(
                    "## Repository Scope",
                    "list the books of the series the task works in as `- book` (or leave the section out)",
                ));
            }
            Some(books)
        }
    };
    Ok(Parsed {
        title: title.to_string(),
        steps,
        file_scope,
        repository_scope,
    })
}

/// `### Step N: Title` headings, numbered 0, 1, 2… An optional `(depends: 1,2)` annotation is
/// dropped from the title.
fn parse_steps(body: &[&str]) -> BoardResult<Vec<String>> {
    const S: &str = "## Steps";
    let mut steps = Vec::new();
    for line in body {
        let Some(h) = line.trim().strip_prefix("### ") else {
            continue;
        };
        let Some(rest) = h.strip_prefix("Step ") else {
            return Err(invalid(
                S,
                format!("`### {h}` is not a step heading; write `### Step N: Title`"),
            ));
        };
        let Some((n, title)) = rest.split_once(':') else {
            return Err(invalid(
                S,
                format!("`### {h}` needs a colon: `### Step N: Title`"),
            ));
        };
        let n: usize = n.trim().parse().map_err(|_| {
            invalid(
                S,
                format!("`### {h}`: the step number must be a whole number"),
            )
        })?;
        if n != steps.len() {
            return Err(invalid(
                S,
                format!(
                    "`### {h}`: steps are numbered from 0 (Step 0 = Preflight) without gaps; expected Step {}",
                    steps.len()
                ),
            ));
        }
        let mut title = title.trim();
        if let Some(i) = title.rfind("(depends:") {
            title = title[..i].trim();
        }
        if title.is_empty() {
            return Err(invalid(S, format!("Step {n} has no title")));
        }
        steps.push(title.to_string());
    }
    if steps.is_empty() {
        return Err(invalid(
            S,
            "no `### Step N: Title` headings (Step 0 = Preflight)",
        ));
    }
    Ok(steps)
}

/// `text` with `entries` appended to its `## File Scope` list (a section is added at the end
/// when there is none).
pub fn add_file_scope(text: &str, entries: &[String]) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let start = lines.iter().position(|l| {
        l.trim_start()
            .strip_prefix("## ")
            .is_some_and(|h| h.trim().eq_ignore_ascii_case("File Scope"))
    });
    let add: Vec<String> = entries.iter().map(|e| format!("- {e}")).collect();
    match start {
        None => {
            lines.push(String::new());
            lines.push("## File Scope".into());
            lines.extend(add);
        }
        Some(s) => {
            let end = lines[s + 1..]
                .iter()
                .position(|l| l.starts_with("## "))
                .map(|i| s + 1 + i)
                .unwrap_or(lines.len());
            // After the section's last non-empty line, so blank separators stay below it.
            let mut at = end;
            while at > s + 1 && lines[at - 1].trim().is_empty() {
                at -= 1;
            }
            for (i, l) in add.into_iter().enumerate() {
                lines.insert(at + i, l);
            }
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn sample(id: &str) -> String {
        format!(
            "# Task: {id} — Draft chapter 12\n\n## Mission\nDraft chapter 12 from its brief.\n\n## Steps\n### Step 0: Preflight\nRead the brief.\n### Step 1: Draft the opening (depends: 0)\n### Step 2: Draft the ending\n\n## File Scope\n- manuscript/012-chapter/*.md\n\n## Acceptance Criteria\n- The brief's ending is reached.\n"
        )
    }

    #[test]
    fn a_complete_prompt_parses() {
        let p = validate("NB-001", &sample("NB-001")).unwrap();
        assert_eq!(p.title, "Draft chapter 12");
        assert_eq!(
            p.steps,
            ["Preflight", "Draft the opening", "Draft the ending"]
        );
        assert_eq!(p.file_scope, ["manuscript/012-chapter/*.md"]);
    }

    fn section_of(text: &str) -> String {
        match validate("NB-001", text).unwrap_err() {
            BoardError::PromptInvalid { section, .. } => section,
            e => panic!("unexpected {e}"),
        }
    }

    #[test]
    fn each_failure_names_its_section() {
        let good = sample("NB-001");
        assert_eq!(
            section_of(&good.replace("# Task: NB-001", "# Plan: NB-001")),
            "# Task"
        );
        assert_eq!(section_of(&sample("NB-002")), "# Task");
        assert_eq!(
            section_of(&good.replace(" — Draft chapter 12", "")),
            "# Task"
        );
        assert_eq!(
            section_of(&good.replace(
                "## Mission\nDraft chapter 12 from its brief.\n",
                "## Mission\n\n"
            )),
            "## Mission"
        );
        assert_eq!(
            section_of(&good.replace("## Mission", "## Goal")),
            "## Mission"
        );
        assert_eq!(
            section_of(&good.replace("### Step 0: Preflight", "### Step 1: Preflight")),
            "## Steps"
        );
        assert_eq!(
            section_of(&good.replace("### Step 2:", "### Step 3:")),
            "## Steps"
        );
        assert_eq!(
            section_of(&good.replace("### Step 2: Draft the ending", "### Step 2:")),
            "## Steps"
        );
        assert_eq!(
            section_of(&good.replace("### Step 2: Draft", "### Later: Draft")),
            "## Steps"
        );
        assert_eq!(
            section_of(&good.replace("## File Scope", "## Files")),
            "## File Scope"
        );
        assert_eq!(
            section_of(&good.replace("- manuscript/012-chapter/*.md", "- /etc/passwd")),
            "## File Scope"
        );
        assert_eq!(
            section_of(&good.replace("- manuscript/012-chapter/*.md", "- ../x.md")),
            "## File Scope"
        );
        assert_eq!(
            section_of(&good.replace("- manuscript/012-chapter/*.md", "nothing listed")),
            "## File Scope"
        );
        assert_eq!(
            section_of(&good.replace(
                "## Acceptance Criteria\n- The brief's ending is reached.\n",
                "## Acceptance Criteria\n"
            )),
            "## Acceptance Criteria"
        );
        assert_eq!(section_of(""), "# Task");
    }

    #[test]
    fn file_scope_entries_are_appended_inside_the_section() {
        let out = add_file_scope(&sample("NB-001"), &["notes/flett.md".into()]);
        validate("NB-001", &out).unwrap();
        let p = validate("NB-001", &out).unwrap();
        assert_eq!(
            p.file_scope,
            ["manuscript/012-chapter/*.md", "notes/flett.md"]
        );
        assert!(out.contains("- notes/flett.md\n\n## Acceptance Criteria"));
    }
}
