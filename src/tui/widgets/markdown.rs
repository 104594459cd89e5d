//! The file preview document: a file's text split into lines, each classified once (when the
//! background job reads it) as frontmatter, heading, code, quote, list item or prose, so the
//! view only styles the lines on screen.

use ratatui::style::Style;
use ratatui::text::{Line, Span};

use crate::tui::theme::Theme;

/// Largest part of a file the preview reads.
pub const PREVIEW_MAX_BYTES: usize = 512 * 1024;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineKind {
    Frontmatter,
    Heading(u8),
    Fence,
    Code,
    Quote,
    List,
    Rule,
    Text,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PreviewDoc {
    pub lines: Vec<(LineKind, String)>,
    /// The file was longer than [`PREVIEW_MAX_BYTES`].
    pub truncated: bool,
    /// Not text: nothing to show but a note.
    pub binary: bool,
    pub bytes: u64,
}

impl PreviewDoc {
    /// Build a document from a file's bytes (possibly cut at the cap).
    pub fn from_bytes(bytes: &[u8], total: u64, markdown: bool) -> PreviewDoc {
        let head = &bytes[..bytes.len().min(8192)];
        if head.contains(&0) {
            return PreviewDoc {
                lines: Vec::new(),
                truncated: false,
                binary: true,
                bytes: total,
            };
        }
        let text = String::from_utf8_lossy(bytes);
        PreviewDoc {
            lines: classify(&text, markdown),
            truncated: (bytes.len() as u64) < total,
            binary: false,
            bytes: total,
        }
    }
}

/// Split and classify Markdown text. Frontmatter is a leading `---` … `---` block.
pub fn classify(text: &str, markdown: bool) -> Vec<(LineKind, String)> {
    let mut out = Vec::new();
    let mut in_front = false;
    let mut in_fence = false;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.replace('\t', "    ");
        let trimmed = line.trim_start();
        let kind = if !markdown {
            LineKind::Text
        } else if i == 0 && line.trim_end() == "---" {
            in_front = true;
            LineKind::Frontmatter
        } else if in_front {
            if line.trim_end() == "---" || line.trim_end() == "..." {
                in_front = false;
            }
            LineKind::Frontmatter
        } else if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            LineKind::Fence
        } else if in_fence {
            LineKind::Code
        } else if let Some(level) = heading_level(trimmed) {
            LineKind::Heading(level)
        } else if trimmed.starts_with('>') {
            LineKind::Quote
        } else if is_rule(trimmed) {
            LineKind::Rule
        } else if is_list(trimmed) {
            LineKind::List
        } else {
            LineKind::Text
        };
        out.push((kind, line));
    }
    out
}

fn heading_level(s: &str) -> Option<u8> {
    let hashes = s.bytes().take_while(|b| *b == b'#').count();
    let rest = &s[hashes..];
    let ok = (1..=6).contains(&hashes) && (rest.is_empty() || rest.starts_with([' ', '\t']));
    ok.then_some(hashes as u8)
}

fn is_rule(s: &str) -> bool {
    let t = s.trim_end();
    t.len() >= 3
        && (t.chars().all(|c| c == '-')
            || t.chars().all(|c| c == '*')
            || t.chars().all(|c| c == '_'))
}

fn is_list(s: &str) -> bool {
    if s.starts_with("- ") || s.starts_with("* ") || s.starts_with("+ ") {
        return true;
    }
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && (s[digits..].starts_with(". ") || s[digits..].starts_with(") "))
}

/// Style one preview line.
pub fn styled_line<'a>(kind: LineKind, text: &'a str, theme: &Theme) -> Line<'a> {
    let style: Style = match kind {
        LineKind::Frontmatter => theme.frontmatter,
        LineKind::Heading(1) => theme.heading,
        LineKind::Heading(_) => theme.heading2,
        LineKind::Fence | LineKind::Code => theme.code,
        LineKind::Quote => theme.quote,
        LineKind::Rule => theme.dim,
        LineKind::List => {
            let indent = text.len() - text.trim_start().len();
            let marker_end = text[indent..]
                .find(' ')
                .map(|p| indent + p + 1)
                .unwrap_or(text.len());
            return Line::from(vec![
                Span::styled(&text[..marker_end], theme.list_bullet),
                Span::styled(&text[marker_end..], theme.text),
            ]);
        }
        LineKind::Text => theme.text,
    };
    Line::from(Span::styled(text, style))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_frontmatter_headings_and_fences() {
        let doc = classify(
            "---\ntitle: x\n---\n# One\ntext\n```\n# not heading\n```\n- item\n> q\n",
            true,
        );
        let kinds: Vec<_> = doc.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            kinds,
            [
                LineKind::Frontmatter,
                LineKind::Frontmatter,
                LineKind::Frontmatter,
                LineKind::Heading(1),
                LineKind::Text,
                LineKind::Fence,
                LineKind::Code,
                LineKind::Fence,
                LineKind::List,
                LineKind::Quote
            ]
        );
        assert!(PreviewDoc::from_bytes(b"a\0b", 3, true).binary);
    }
}
