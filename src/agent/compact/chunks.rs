//! The transcript as the summariser reads it, packed into chunks of bounded size (a message
//! too big for one chunk is cut into labelled pieces).

use super::*;

/// The transcript as the summarizer reads it.
pub(super) fn render(m: &Message) -> String {
    match m {
        Message::User { text } => format!("[user]\n{text}\n"),
        Message::Assistant { text, tool_calls } => {
            let mut s = format!("[assistant]\n{text}\n");
            for c in tool_calls {
                s.push_str(&format!(
                    "[tool call {} {}] {}\n",
                    c.name, c.id, c.arguments
                ));
            }
            s
        }
        Message::ToolResult {
            call_id,
            content,
            is_error,
        } => format!(
            "[tool result {call_id}{}]\n{content}\n",
            if *is_error { " (error)" } else { "" }
        ),
    }
}

pub(super) struct Chunk {
    /// Index of the first item (message or summary) with text in this chunk.
    pub(super) first: usize,
    pub(super) text: String,
}

/// Pack items into chunks of at most `room` bytes, in order; an item longer than `room` is cut
/// into labelled pieces, one chunk each.
pub(super) fn pack(items: impl Iterator<Item = (usize, String)>, room: usize) -> Vec<Chunk> {
    let mut out: Vec<Chunk> = Vec::new();
    let mut cur: Option<Chunk> = None;
    for (i, text) in items {
        if text.len() > room {
            out.extend(cur.take());
            let pieces = cut_pieces(&text, room - PIECE_LABEL_BYTES);
            let n = pieces.len();
            for (j, p) in pieces.into_iter().enumerate() {
                out.push(Chunk {
                    first: i,
                    text: format!("[piece {} of {n} of one long message]\n{p}", j + 1),
                });
            }
            continue;
        }
        match &mut cur {
            Some(c) if c.text.len() + text.len() <= room => c.text.push_str(&text),
            _ => {
                out.extend(cur.take());
                cur = Some(Chunk { first: i, text });
            }
        }
    }
    out.extend(cur);
    out
}

/// Cut `s` into pieces of at most `max` bytes (`max` >= 4), on char boundaries, preferring a
/// line break, then a space, in the last quarter of each piece.
pub(super) fn cut_pieces(s: &str, max: usize) -> Vec<&str> {
    let max = max.max(4);
    let mut out = Vec::new();
    let mut rest = s;
    while rest.len() > max {
        let mut end = max;
        while !rest.is_char_boundary(end) {
            end -= 1;
        }
        let floor = end - end / 4;
        let head = &rest[..end];
        let cut = head
            .rfind('\n')
            .filter(|&p| p >= floor)
            .or_else(|| head.rfind(' ').filter(|&p| p >= floor))
            .map(|p| p + 1)
            .unwrap_or(end);
        let (a, b) = rest.split_at(cut);
        out.push(a);
        rest = b;
    }
    if !rest.is_empty() || out.is_empty() {
        out.push(rest);
    }
    out
}
