//! Review verdicts (Fusion's reviewer: APPROVE | REVISE | RETHINK | UNAVAILABLE) and how a
//! reviewer's answer is read: the first word of its first non-empty line, any case, with
//! markdown emphasis and trailing punctuation ignored (`**REVISE**:` reads as REVISE). An
//! answer without a verdict there reads as UNAVAILABLE — never as an approval.

use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Verdict {
    Approve,
    Revise,
    Rethink,
    Unavailable,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Approve => "APPROVE",
            Verdict::Revise => "REVISE",
            Verdict::Rethink => "RETHINK",
            Verdict::Unavailable => "UNAVAILABLE",
        }
    }

    /// The task-log outcome a verdict is recorded under (lowercase).
    pub fn outcome(self) -> &'static str {
        match self {
            Verdict::Approve => "approve",
            Verdict::Revise => "revise",
            Verdict::Rethink => "rethink",
            Verdict::Unavailable => "unavailable",
        }
    }
}

/// The verdict and the notes after it (the rest of the answer, trimmed).
pub fn parse(answer: &str) -> (Verdict, String) {
    let mut lines = answer.lines().skip_while(|l| l.trim().is_empty());
    let Some(first) = lines.next() else {
        return (Verdict::Unavailable, String::new());
    };
    let trimmed = first.trim();
    let word: String = trimmed
        .trim_start_matches(['*', '_', '#', '`', ' '])
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect();
    let verdict = match word.to_ascii_uppercase().as_str() {
        "APPROVE" | "APPROVED" => Verdict::Approve,
        "REVISE" => Verdict::Revise,
        "RETHINK" => Verdict::Rethink,
        _ => return (Verdict::Unavailable, answer.trim().to_string()),
    };
    // What follows the verdict word on its line, then the other lines.
    let after = trimmed
        .trim_start_matches(['*', '_', '#', '`', ' '])
        .get(word.len()..)
        .unwrap_or("")
        .trim_start_matches(['*', '_', '`', ':', '.', '-', '—', ' '])
        .trim();
    let rest: Vec<&str> = lines.collect();
    let mut notes = after.to_string();
    let tail = rest.join("\n");
    let tail = tail.trim();
    if !tail.is_empty() {
        if !notes.is_empty() {
            notes.push('\n');
        }
        notes.push_str(tail);
    }
    (verdict, notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_first_word_of_the_first_line() {
        assert_eq!(parse("APPROVE\nGood.").0, Verdict::Approve);
        assert_eq!(
            parse("\n**REVISE**: tighten step 2\nand the ending"),
            (
                Verdict::Revise,
                "tighten step 2\nand the ending".to_string()
            )
        );
        assert_eq!(parse("rethink — wrong POV").0, Verdict::Rethink);
        assert_eq!(parse("UNAVAILABLE").0, Verdict::Unavailable);
    }

    #[test]
    fn an_answer_without_a_verdict_is_unavailable_never_an_approval() {
        assert_eq!(parse("").0, Verdict::Unavailable);
        assert_eq!(parse("Looks fine to me, APPROVE").0, Verdict::Unavailable);
        assert_eq!(parse("Approvingly yours").0, Verdict::Unavailable);
    }
}
