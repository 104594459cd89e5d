//! HTML to readable text for `web_fetch`, on `html2text` (html5ever's parser, so entities,
//! unclosed tags and misnesting are read as a browser reads them). Before rendering, the
//! elements a reader never sees as text — scripts, styles, navigation, forms, the head — are
//! cut from the tree. Headings become `#` lines, list items `- ` lines, quotes `> ` lines,
//! links their text (the URLs are not listed), images their alt text in brackets; tables are
//! read cell by cell in document order, so layout tables keep their reading order. Lines are
//! not wrapped: the reader is a model, and the fetch caps the length.

use std::cell::{Cell, RefCell};

use html2text::render::{TaggedLine, TextDecorator};
use html2text::{Element, Handle};
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};

/// Elements cut from the tree with everything inside them.
const DROP_ELEMENTS: &[&str] = &[
    "script", "style", "nav", "noscript", "template", "svg", "head", "iframe", "form", "button",
    "select", "canvas",
];

/// Render width: wide enough that no paragraph is wrapped.
const WIDTH: usize = 1_000_000;

/// Deepest tag nesting given to the tree builder. Its scope checks walk the open elements, so
/// its cost grows with size × depth; a page nested deeper than this (Blink's parser stops
/// nesting at 512 too) is read as plain text by the linear tokenizer pass instead.
const MAX_DEPTH: usize = 512;

/// Text rendered at most (in collapsed characters); `web_fetch` returns far less, and the
/// rest of a long page is cut from the tree before rendering.
const MAX_TEXT_CHARS: usize = 80_000;

const HTML_NS: &str = "http://www.w3.org/1999/xhtml";

/// Convert HTML to readable text: returns `(title, text)`.
pub fn html_to_text(html: &str) -> (Option<String>, String) {
    let scan = scan(html);
    let title = Some(collapse_whitespace(&scan.title.borrow())).filter(|t| !t.is_empty());
    if scan.max_depth.get() > MAX_DEPTH {
        return (title, tidy(&scan.text.borrow()));
    }
    let config = html2text::config::with_decorator(Readable)
        .link_footnotes(false)
        .no_table_borders()
        .raw_mode(true);
    let Ok(dom) = config.parse_html(html.as_bytes()) else {
        // Parsing reads from a byte slice, which cannot fail; keep the text rather than panic.
        return (title, tidy(&scan.text.borrow()));
    };
    prune(&dom.document);
    let text = config
        .dom_to_render_tree(&dom)
        .and_then(|tree| config.render_to_string(tree, WIDTH))
        // An empty document has no render tree: it has no text either.
        .unwrap_or_default();
    (title, tidy(&text))
}

/// What one tokenizer pass learns: the title, the deepest tag nesting, and the page's text
/// (used when the page is too deep for the tree builder).
#[derive(Default)]
struct Scan {
    open: RefCell<Vec<html5ever::LocalName>>,
    max_depth: Cell<usize>,
    /// Inside an element whose text is not shown (script, style, the title…): its name.
    hidden: RefCell<Option<html5ever::LocalName>>,
    in_title: Cell<bool>,
    title: RefCell<String>,
    text: RefCell<String>,
}

/// Elements that never hold content, and those whose end tag may be left out: neither makes
/// the tree deeper as the tree builder reads them.
const NOT_NESTING: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source",
    "track", "wbr", "p", "li", "dt", "dd", "tr", "td", "th", "tbody", "thead", "tfoot", "option",
    "optgroup", "colgroup", "caption", "rb", "rt", "rp", "html", "body", "head",
];

impl TokenSink for Scan {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        match token {
            Token::TagToken(tag) => {
                let name: &str = &tag.name;
                let mut hidden = self.hidden.borrow_mut();
                if hidden.is_some() {
                    if tag.kind == TagKind::EndTag && hidden.as_ref() == Some(&tag.name) {
                        *hidden = None;
                        self.in_title.set(false);
                    }
                    return TokenSinkResult::Continue;
                }
                let too_deep = self.max_depth.get() > MAX_DEPTH;
                if tag.kind == TagKind::EndTag {
                    let mut open = self.open.borrow_mut();
                    // Once too deep the depth is known: stop tracking (this search is bounded).
                    if let Some(i) = open
                        .iter()
                        .rposition(|n| *n == tag.name)
                        .filter(|_| !too_deep)
                    {
                        open.truncate(i);
                    }
                    if !NOT_NESTING.contains(&name) && name != "span" && name != "a" {
                        self.text.borrow_mut().push('\n');
                    }
                    return TokenSinkResult::Continue;
                }
                let raw = match name {
                    "title" | "textarea" => Some(RawKind::Rcdata),
                    "style" | "xmp" | "iframe" | "noembed" | "noframes" => Some(RawKind::Rawtext),
                    "script" => Some(RawKind::ScriptData),
                    _ => None,
                };
                // The head is cut from the tree, but its title is read here.
                if raw.is_some() || (DROP_ELEMENTS.contains(&name) && name != "head") {
                    if !tag.self_closing {
                        *hidden = Some(tag.name.clone());
                        self.in_title
                            .set(name == "title" && self.title.borrow().is_empty());
                    }
                    return raw.map_or(TokenSinkResult::Continue, TokenSinkResult::RawData);
                }
                if name == "br" || NOT_NESTING.contains(&name) {
                    self.text.borrow_mut().push('\n');
                }
                if !tag.self_closing && !NOT_NESTING.contains(&name) && !too_deep {
                    let mut open = self.open.borrow_mut();
                    open.push(tag.name.clone());
                    self.max_depth.set(self.max_depth.get().max(open.len()));
                }
            }
            Token::CharacterTokens(t) => {
                if self.in_title.get() {
                    self.title.borrow_mut().push_str(&t);
                } else if self.hidden.borrow().is_none() {
                    self.text.borrow_mut().push_str(&t);
                }
            }
            _ => {}
        }
        TokenSinkResult::Continue
    }
}

fn scan(html: &str) -> Scan {
    let tokenizer = Tokenizer::new(Scan::default(), TokenizerOpts::default());
    let input = BufferQueue::default();
    input.push_back(html.into());
    let _ = tokenizer.feed(&input);
    tokenizer.end();
    tokenizer.sink
}

/// The local name of an HTML element node (`None` for text, comments, SVG/MathML elements).
fn html_name(node: &Handle) -> Option<&str> {
    match &node.data {
        Element { name, .. } if &*name.ns == HTML_NS => Some(&name.local),
        _ => None,
    }
}

/// Cut the dropped elements out of the tree, and everything after the first
/// [`MAX_TEXT_CHARS`] characters of text. Walks in document order with an explicit path, so
/// the nesting depth never becomes recursion.
fn prune(root: &Handle) {
    root.children
        .borrow_mut()
        .retain(|c| !html_name(c).is_some_and(|n| DROP_ELEMENTS.contains(&n)));
    let mut path: Vec<(Handle, usize)> = vec![(root.clone(), 0)];
    let mut budget = MAX_TEXT_CHARS;
    while let Some((node, next)) = path.last_mut() {
        let child = node.children.borrow().get(*next).cloned();
        *next += 1;
        let Some(child) = child else {
            path.pop();
            continue;
        };
        let mut grandchildren = child.children.borrow_mut();
        grandchildren.retain(|c| !html_name(c).is_some_and(|n| DROP_ELEMENTS.contains(&n)));
        let is_leaf = grandchildren.is_empty();
        drop(grandchildren);
        if is_leaf && html_name(&child).is_none() {
            let len = text_len(&child);
            if len >= budget {
                // Keep this text, cut everything after it at every level.
                for (n, i) in &path {
                    n.children.borrow_mut().truncate(*i);
                }
                return;
            }
            budget -= len;
        } else if !is_leaf {
            path.push((child, 0));
        }
    }
}

/// Characters a text node adds once whitespace is collapsed (0 for other nodes).
fn text_len(node: &Handle) -> usize {
    let mut out = Vec::new();
    if node.serialize(&mut out).is_err() {
        return 0;
    }
    let s = String::from_utf8_lossy(&out);
    collapse_whitespace(&s).chars().count()
}

fn collapse_whitespace(s: &str) -> String {
    s.split(|c: char| c.is_whitespace())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Trailing spaces (cell padding) cut, no-break spaces made plain, at most one blank line in
/// a row, none at the start or the end.
fn tidy(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut blank = false;
    for line in s.lines() {
        let line = line.replace('\u{a0}', " ");
        let line = line.trim_end();
        if line.trim_start().is_empty() {
            blank = !out.is_empty();
            continue;
        }
        if !out.is_empty() {
            out.push_str(if blank { "\n\n" } else { "\n" });
        }
        blank = false;
        out.push_str(line);
    }
    out
}

/// How markup is shown in the text: markdown-ish block prefixes, inline markup dropped.
#[derive(Clone, Copy)]
struct Readable;

impl TextDecorator for Readable {
    type Annotation = ();

    fn decorate_link_start(&mut self, _url: &str) -> (String, ()) {
        (String::new(), ())
    }
    fn decorate_link_end(&mut self) -> String {
        String::new()
    }
    fn decorate_em_start(&self) -> (String, ()) {
        (String::new(), ())
    }
    fn decorate_em_end(&self) -> String {
        String::new()
    }
    fn decorate_strong_start(&self) -> (String, ()) {
        (String::new(), ())
    }
    fn decorate_strong_end(&self) -> String {
        String::new()
    }
    fn decorate_strikeout_start(&self) -> (String, ()) {
        (String::new(), ())
    }
    fn decorate_strikeout_end(&self) -> String {
        String::new()
    }
    fn decorate_code_start(&self) -> (String, ()) {
        (String::new(), ())
    }
    fn decorate_code_end(&self) -> String {
        String::new()
    }
    fn decorate_preformat_first(&self) {}
    fn decorate_preformat_cont(&self) {}
    fn decorate_image(&mut self, _src: &str, title: &str) -> (String, ()) {
        (format!("[{title}]"), ())
    }
    fn header_prefix(&self, level: usize) -> String {
        "#".repeat(level) + " "
    }
    fn quote_prefix(&self) -> String {
        "> ".to_string()
    }
    fn unordered_item_prefix(&self) -> String {
        "- ".to_string()
    }
    fn ordered_item_prefix(&self, i: i64) -> String {
        format!("{i}. ")
    }
    fn make_subblock_decorator(&self) -> Self {
        *self
    }
    fn decorate_superscript_start(&self) -> (String, ()) {
        (String::new(), ())
    }
    fn decorate_superscript_end(&self) -> String {
        String::new()
    }
    fn finalise(&mut self, _urls: Vec<String>) -> Vec<TaggedLine<()>> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn html_becomes_text() {
        let (t, c) = html_to_text(
            "<html><head><title>A &amp; B</title><style>x{}</style></head><body><nav>menu</nav>\
             <h2>Head</h2><p>One&nbsp;two &#8212; &#x41;</p><script>evil()</script><ul><li>i1</li><li>i2</li></ul></body></html>",
        );
        assert_eq!(t.as_deref(), Some("A & B"));
        assert!(
            !c.contains("menu") && !c.contains("evil") && !c.contains("x{}"),
            "{c}"
        );
        assert!(c.contains("## Head"), "{c}");
        assert!(c.contains("One two — A"), "{c}");
        assert!(c.contains("- i1\n- i2"), "{c}");
    }

    #[test]
    fn links_are_their_text_and_blocks_keep_their_shape() {
        let (t, c) = html_to_text(
            "<title>\n  Spaced\n  title </title><p>See <a href='https://x.example/a'>the map</a> and \
             <em>the</em> <strong>notes</strong><sup>1</sup>.</p><ol><li>one</li><li>two</li></ol>\
             <blockquote>quoted</blockquote><pre>  kept\n    indent</pre><img alt='A salt pan' src='p.png'>\
             <table><tr><td>Born</td><td>1820</td></tr></table><p>unclosed <b>bold",
        );
        assert_eq!(t.as_deref(), Some("Spaced title"));
        // html2text writes a superscript digit as its Unicode superscript.
        assert!(c.contains("See the map and the notes¹."), "{c}");
        assert!(!c.contains("x.example"), "{c}");
        assert!(c.contains("1. one\n2. two"), "{c}");
        assert!(c.contains("> quoted"), "{c}");
        assert!(c.contains("  kept\n    indent"), "{c}");
        assert!(c.contains("[A salt pan]"), "{c}");
        assert!(c.contains("Born") && c.contains("1820"), "{c}");
        assert!(c.ends_with("unclosed bold"), "{c}");
        assert!(!c.contains("\n\n\n"), "{c}");
    }

    #[test]
    fn a_page_without_title_or_text_is_empty() {
        assert_eq!(html_to_text(""), (None, String::new()));
        assert_eq!(
            html_to_text("<html><head><title> </title><script>x()</script></head></html>"),
            (None, String::new())
        );
    }

    #[test]
    fn deep_nesting_is_read_without_overflowing_the_stack_or_the_clock() {
        // The stack of a tokio blocking thread: nesting depth must not become recursion depth.
        let handle = std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(|| {
                let nested = |depth: usize, text: &str| {
                    let mut html = "<table><tr><td>".repeat(depth);
                    html.push_str(text);
                    html.push_str(&"</td></tr></table>".repeat(depth));
                    html
                };
                let started = std::time::Instant::now();
                let mut deep = nested(20_000, "deep text");
                deep.push_str(&"<div>".repeat(20_000));
                deep.push_str("inner");
                let deep = html_to_text(&deep).1;
                let elapsed = started.elapsed();
                (
                    deep,
                    elapsed,
                    html_to_text(&nested(MAX_DEPTH, "laid out")).1,
                )
            })
            .expect("spawn");
        let (deep, elapsed, laid_out) = handle.join().expect("no stack overflow");
        assert!(
            deep.contains("deep text") && deep.contains("inner"),
            "{deep}"
        );
        // Linear, not quadratic (the tree builder alone takes minutes on this, unoptimised).
        assert!(elapsed < std::time::Duration::from_secs(15), "{elapsed:?}");
        assert_eq!(laid_out, "laid out");
    }

    #[test]
    fn a_long_page_is_cut_before_rendering() {
        let html = "<p>para text here</p>".repeat(50_000);
        let (_, text) = html_to_text(&html);
        let n = text.chars().count();
        assert!((MAX_TEXT_CHARS..MAX_TEXT_CHARS * 2).contains(&n), "{n}");
        assert!(
            text.ends_with("para text here"),
            "{}",
            &text[text.len() - 40..]
        );
    }
}
