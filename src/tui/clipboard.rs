//! Copying to the clipboard through the terminal: OSC 52 (`ESC ] 52 ; c ; <base64> BEL`), which
//! works over ssh and inside tmux (wrapped for its passthrough) without a clipboard library or
//! a display server. `Y` picks what the focused view selects — the path in Files, the shown
//! writer brief in Story, the message under the transcript cursor, the preview of the selected
//! call in Approvals; `update` returns [`Effect::Clipboard`] with the text and the run loop
//! writes [`osc52`]'s bytes, so rendering stays a pure function of the state.

use crate::engine::PreviewBody;
use crate::tui::action::Effect;
use crate::tui::app::{AppState, Pane};
use crate::tui::approvals::Waiting;
use crate::tui::sessions::Entry;
use crate::tui::story::jobs::DetailDoc;

/// The most text sent: terminals drop longer OSC 52 payloads (xterm's default limit is
/// near 100 000 bytes of base64), so a longer text is refused with a message instead.
pub const MAX_COPY: usize = 74_000;

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Standard base64 with padding (RFC 4648 §4).
fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(B64[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The bytes that put `text` on the clipboard. `tmux`: nbook runs inside tmux, so the
/// sequence goes twice: plain, which tmux itself takes with `set-clipboard on` (a paste
/// buffer, and on to the outer terminal), and inside the DCS passthrough, which reaches the
/// outer terminal with `allow-passthrough on`. Setting the clipboard twice to one text is
/// harmless; either setting alone then works.
pub fn osc52(text: &str, tmux: bool) -> String {
    let seq = format!("\x1b]52;c;{}\x07", base64(text.as_bytes()));
    if tmux {
        format!("{seq}{}", crate::tui::notify::through_tmux(&seq))
    } else {
        seq
    }
}

/// A preview as text: diffs as unified diffs, a command or statement as itself, records and
/// egress requests as their JSON.
fn preview_text(body: &PreviewBody) -> String {
    match body {
        PreviewBody::Files { changes } => changes
            .iter()
            .map(|c| c.diff.trim_end().to_string())
            .collect::<Vec<_>>()
            .join("\n"),
        PreviewBody::Command { command, .. } => command.clone(),
        PreviewBody::Statement { sql, .. } => sql.clone(),
        PreviewBody::Text { text } => text.clone(),
        PreviewBody::Records { .. } | PreviewBody::Egress { .. } => {
            serde_json::to_string_pretty(body).unwrap_or_default()
        }
    }
}

/// A transcript entry as text: a message as written, a tool call as its name, arguments and
/// result.
fn entry_text(e: &Entry) -> String {
    match e {
        Entry::User(text) => text.clone(),
        Entry::Assistant { text, .. } => text.clone(),
        Entry::Tool {
            tool, args, result, ..
        } => {
            let mut out = format!(
                "{tool} {}",
                serde_json::to_string_pretty(args).unwrap_or_default()
            );
            if let Some(r) = result {
                out.push_str("\n\n");
                out.push_str(r);
            }
            out
        }
        Entry::Note(_, text) => text.clone(),
    }
}

impl AppState {
    /// What `Y` copies in the focused view, with what to call it in the receipt; `Err`: why
    /// there is nothing to copy.
    fn copy_target(&self) -> Result<(String, &'static str), String> {
        match self.focus {
            Pane::Files => self
                .files
                .tree
                .selected_node()
                .filter(|n| !n.path.to_string().is_empty())
                .map(|n| (n.path.to_string(), "the path"))
                .ok_or_else(|| "Nothing to copy: no file or folder is selected.".to_string()),
            Pane::Story => match self.story.shown_detail() {
                Some(Ok(doc)) => match doc.as_ref() {
                    DetailDoc::Brief { brief, .. } => {
                        Ok((brief.suggested_brief_markdown.clone(), "the writer brief"))
                    }
                    DetailDoc::Node(_) => Err(format!(
                        "Nothing to copy here: {} shows the chapter's writer brief, then Y copies it.",
                        self.key_label(crate::tui::action::Command::StoryBrief)
                    )),
                },
                _ => Err("Nothing to copy: the writer brief is not shown yet.".to_string()),
            },
            Pane::Sessions if self.sessions.in_transcript => self
                .sessions
                .transcript
                .as_ref()
                .and_then(|t| t.entries.get(self.sessions.cursor))
                .map(|e| (entry_text(e), "the message"))
                .ok_or_else(|| "Nothing to copy: no message is selected.".to_string()),
            Pane::Sessions => Err(format!(
                "Nothing to copy: {} goes into the transcript, then Y copies the selected message.",
                self.key_label(crate::tui::action::Command::OpenTranscript)
            )),
            Pane::Approvals => match self.approvals.selected_item() {
                Some(Waiting::Call(c)) => Ok((preview_text(&c.preview.body), "the preview")),
                Some(Waiting::Question(_)) => {
                    Err("Nothing to copy: a question has no preview.".to_string())
                }
                None => Err("Nothing to copy: no call is waiting.".to_string()),
            },
            Pane::World => Err("Nothing to copy in the World pane.".to_string()),
            Pane::Board => Err("Nothing to copy in the Board yet.".to_string()),
        }
    }

    fn key_label(&self, cmd: crate::tui::action::Command) -> String {
        self.keymap
            .key_for(cmd, &self.pane_contexts())
            .map(|k| k.notation())
            .unwrap_or_else(|| cmd.name().to_string())
    }

    /// `Y`: copy what the focused view selects, or say why nothing was copied.
    pub(crate) fn copy_selection(&mut self) -> Vec<Effect> {
        match self.copy_target() {
            Ok((text, _)) if text.len() > MAX_COPY => {
                self.error(format!(
                    "Not copied: {} KB is more than a terminal takes through OSC 52 ({} KB).",
                    text.len() / 1000,
                    MAX_COPY / 1000
                ));
                Vec::new()
            }
            Ok((text, what)) => {
                let n = text.chars().count();
                // Short, so the bar shows it whole beside the totals.
                self.info(format!(
                    "Copied {what} ({n} {})",
                    crate::text::noun(n, "character", "characters")
                ));
                vec![Effect::Clipboard(text)]
            }
            Err(why) => {
                self.info(why);
                Vec::new()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        for (plain, enc) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(plain.as_bytes()), enc, "{plain}");
        }
    }
}
