//! Incremental `text/event-stream` parsing.

/// One server-sent event: its `event:` name (empty when none) and its joined `data:` lines.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SseEvent {
    pub event: String,
    pub data: String,
}

/// Incremental `text/event-stream` parser: bytes in, complete events out. Handles LF, CRLF and
/// CR line ends split anywhere, comments, multi-line data and UTF-8 split across chunks.
#[derive(Debug, Default)]
pub struct SseParser {
    buf: Vec<u8>,
    event: String,
    data: String,
    has_data: bool,
}

impl SseParser {
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) {
        self.buf.extend_from_slice(bytes);
        let mut start = 0;
        while let Some(off) = self.buf[start..]
            .iter()
            .position(|b| *b == b'\n' || *b == b'\r')
        {
            let end = start + off;
            let next = if self.buf[end] == b'\r' {
                match self.buf.get(end + 1) {
                    Some(b'\n') => end + 2,
                    Some(_) => end + 1,
                    None => break, // a CR at the end: wait to see whether LF follows
                }
            } else {
                end + 1
            };
            let line = String::from_utf8_lossy(&self.buf[start..end]).into_owned();
            self.line(&line, out);
            start = next;
        }
        self.buf.drain(..start);
    }

    /// The body ended: a last line or event without its blank line still counts.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        if !self.buf.is_empty() {
            let rest = std::mem::take(&mut self.buf);
            let line = String::from_utf8_lossy(&rest);
            self.line(line.trim_end_matches('\r'), out);
        }
        self.line("", out);
    }

    fn line(&mut self, line: &str, out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            if self.has_data {
                out.push(SseEvent {
                    event: std::mem::take(&mut self.event),
                    data: std::mem::take(&mut self.data),
                });
            }
            self.event.clear();
            self.data.clear();
            self.has_data = false;
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = value.to_string(),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
        let mut p = SseParser::default();
        let mut out = Vec::new();
        for c in chunks {
            p.push(c, &mut out);
        }
        p.finish(&mut out);
        out
    }

    #[test]
    fn sse_lines_split_anywhere() {
        let text = b"event: a\r\ndata: one\r\ndata:two\r\n\r\n: comment\n\ndata: {\"x\":\"\xc3\xa9\"}\n\ndata: tail";
        let whole = parse_all(&[text]);
        for cut in 0..text.len() {
            assert_eq!(
                parse_all(&[&text[..cut], &text[cut..]]),
                whole,
                "cut at {cut}"
            );
        }
        assert_eq!(whole.len(), 3);
        assert_eq!(
            whole[0],
            SseEvent {
                event: "a".into(),
                data: "one\ntwo".into()
            }
        );
        assert_eq!(whole[1].data, "{\"x\":\"é\"}");
        assert_eq!(whole[2].data, "tail");
        assert_eq!(parse_all(&[b"data: x\r", b"\rdata: y\r\r"]).len(), 2);
    }
}
