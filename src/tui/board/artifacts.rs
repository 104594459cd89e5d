//! The Artifacts view of the Board pane (`A`, again or `Esc` back to the board): the book's
//! registered artifacts (maps, covers, character sheets…), newest first, on the left; the
//! selected one on the right — its metadata, the text of a text artifact, and an image drawn
//! with `ratatui-image` when the terminal speaks an image protocol (kitty, iTerm2, sixel).
//! Elsewhere, and in tests, an image shows its plain facts instead: type, size, pixel size and
//! the managed path.
//!
//! Reads go through the engine's read model in the Board's blocking jobs (the list, then the
//! payload of the selected artifact, tagged so a stale answer is dropped); the image is decoded
//! in that job, off the UI task. Which protocol the terminal speaks is read from the
//! environment (`NBOOK_IMAGES` = `off | kitty | iterm2 | sixel` overrides): the terminal is
//! never queried, so no reply can reach the key reader.

use std::sync::{Arc, Mutex};

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::StatefulWidget;
use ratatui_image::picker::{Picker, ProtocolType};
use ratatui_image::protocol::StatefulProtocol;
use ratatui_image::StatefulImage;

use crate::engine::read::{human_size, Artifact, ArtifactPayload as Payload};
use crate::engine::Engine;
use crate::tui::action::{Command, Effect, Ticket};
use crate::tui::app::AppState;
use crate::tui::board::jobs::BoardJob;
use crate::tui::chrome::put_line;
use crate::tui::files::tree::window_offset;
use crate::tui::widgets::wrap::{draw_top_down, fit_width, Cut};

/// Most artifacts the view lists.
pub const LIST_LIMIT: usize = 500;

/// A decoded image ready for the terminal's protocol; shared so the job result can be cloned
/// and the draw can resize it.
#[derive(Clone)]
pub struct ImageHandle(pub Arc<Mutex<StatefulProtocol>>);

impl std::fmt::Debug for ImageHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ImageHandle")
    }
}

impl PartialEq for ImageHandle {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// What the right-hand view shows of the selected artifact.
#[derive(Clone, Debug, PartialEq)]
pub enum Shown {
    Text(String, bool),
    /// An image: drawn when the terminal has a protocol, else its plain facts.
    Image(Option<ImageHandle>),
    /// Only the metadata (and why, when the payload could not be read).
    Facts(Option<String>),
}

#[derive(Debug, Default)]
pub struct ArtifactsView {
    pub items: Vec<Artifact>,
    pub selected: usize,
    pub offset: usize,
    pub loading: Option<Ticket>,
    pub error: Option<String>,
    pub shown: Option<(String, Shown)>,
    pub shown_ticket: Option<Ticket>,
    pub scroll: usize,
}

impl ArtifactsView {
    pub fn selected(&self) -> Option<&Artifact> {
        self.items.get(self.selected)
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ArtifactsJob {
    List,
    Show(Box<Artifact>),
}

#[derive(Clone, Debug, PartialEq)]
pub enum ArtifactsJobResult {
    Listed(Result<Vec<Artifact>, String>),
    Shown(String, Shown),
}

/// The image protocol of this terminal, from the environment; `None`: the plain fallback.
pub fn protocol_from_env(get: impl Fn(&str) -> Option<String>) -> Option<ProtocolType> {
    match get("NBOOK_IMAGES").as_deref() {
        Some("off") => return None,
        Some("kitty") => return Some(ProtocolType::Kitty),
        Some("iterm2") => return Some(ProtocolType::Iterm2),
        Some("sixel") => return Some(ProtocolType::Sixel),
        _ => {}
    }
    // Inside tmux or screen an image protocol only works with passthrough set up: plain.
    if get("TMUX").is_some() || get("TERM").is_some_and(|t| t.starts_with("screen")) {
        return None;
    }
    if get("KITTY_WINDOW_ID").is_some() || get("TERM").as_deref() == Some("xterm-kitty") {
        return Some(ProtocolType::Kitty);
    }
    if matches!(
        get("TERM_PROGRAM").as_deref(),
        Some("iTerm.app" | "WezTerm")
    ) {
        return Some(ProtocolType::Iterm2);
    }
    if get("TERM").is_some_and(|t| t.starts_with("foot") || t.contains("sixel")) {
        return Some(ProtocolType::Sixel);
    }
    None
}

/// Decode `bytes` for `proto` (cell size from the terminal's pixel size, else 8×16).
fn image_for(bytes: &[u8], proto: ProtocolType) -> Result<ImageHandle, String> {
    let img =
        image::load_from_memory(bytes).map_err(|e| format!("cannot decode the image: {e}"))?;
    let font = crossterm::terminal::window_size()
        .ok()
        .filter(|w| w.width > 0 && w.height > 0 && w.columns > 0 && w.rows > 0)
        .map(|w| (w.width / w.columns, w.height / w.rows))
        .unwrap_or((8, 16));
    let mut picker = Picker::from_fontsize(font);
    picker.set_protocol_type(proto);
    Ok(ImageHandle(Arc::new(Mutex::new(
        picker.new_resize_protocol(img),
    ))))
}

/// Run a job of the view (on the blocking pool).
pub fn run(engine: &Arc<Engine>, job: ArtifactsJob) -> ArtifactsJobResult {
    match job {
        ArtifactsJob::List => ArtifactsJobResult::Listed(
            engine
                .read()
                .artifacts(LIST_LIMIT)
                .map_err(|e| e.to_string()),
        ),
        ArtifactsJob::Show(a) => {
            let shown = match engine.read().artifact_payload(&a) {
                Payload::Text(t, cut) => Shown::Text(t, cut),
                Payload::Image(bytes) => match protocol_from_env(|k| std::env::var(k).ok()) {
                    None => Shown::Image(None),
                    Some(p) => match image_for(&bytes, p) {
                        Ok(h) => Shown::Image(Some(h)),
                        Err(e) => Shown::Facts(Some(e)),
                    },
                },
                Payload::None(why) => Shown::Facts(why),
            };
            ArtifactsJobResult::Shown(a.id.clone(), shown)
        }
    }
}

impl AppState {
    /// `A`: open the view (loading the list), or close it.
    pub(crate) fn artifacts_toggle(&mut self) -> Vec<Effect> {
        if self.board.artifacts.take().is_some() {
            return Vec::new();
        }
        self.board.artifacts = Some(ArtifactsView::default());
        self.artifacts_load()
    }

    fn artifacts_load(&mut self) -> Vec<Effect> {
        let ticket = self.ticket();
        let Some(v) = self.board.artifacts.as_mut() else {
            return Vec::new();
        };
        v.loading = Some(ticket);
        vec![Effect::BoardJob {
            ticket,
            job: BoardJob::Artifacts(ArtifactsJob::List),
        }]
    }

    fn artifacts_show(&mut self) -> Vec<Effect> {
        let ticket = self.ticket();
        let Some(v) = self.board.artifacts.as_mut() else {
            return Vec::new();
        };
        let Some(a) = v.selected().cloned() else {
            return Vec::new();
        };
        v.shown_ticket = Some(ticket);
        v.scroll = 0;
        vec![Effect::BoardJob {
            ticket,
            job: BoardJob::Artifacts(ArtifactsJob::Show(Box::new(a))),
        }]
    }

    /// The Board's commands while the view is open.
    pub(crate) fn artifacts_command(&mut self, cmd: Command, page: usize) -> Vec<Effect> {
        let Some(v) = self.board.artifacts.as_mut() else {
            return Vec::new();
        };
        let n = v.items.len();
        let before = v.selected;
        match cmd {
            Command::Down => v.selected = (v.selected + 1).min(n.saturating_sub(1)),
            Command::Up => v.selected = v.selected.saturating_sub(1),
            Command::PageDown => v.selected = (v.selected + page).min(n.saturating_sub(1)),
            Command::PageUp => v.selected = v.selected.saturating_sub(page),
            Command::Top => v.selected = 0,
            Command::Bottom => v.selected = n.saturating_sub(1),
            Command::DetailDown => v.scroll += 1,
            Command::DetailUp => v.scroll = v.scroll.saturating_sub(1),
            Command::Refresh => return self.artifacts_load(),
            Command::Collapse | Command::Cancel | Command::BoardArtifacts => {
                self.board.artifacts = None;
                return Vec::new();
            }
            _ => {
                self.info("The Artifacts view is open: A or Esc goes back to the board.");
                return Vec::new();
            }
        }
        v.offset = window_offset(v.offset, v.selected, page.max(1), n);
        if v.selected != before {
            return self.artifacts_show();
        }
        Vec::new()
    }

    pub(crate) fn artifacts_job_done(
        &mut self,
        ticket: Ticket,
        r: ArtifactsJobResult,
    ) -> Vec<Effect> {
        let Some(v) = self.board.artifacts.as_mut() else {
            return Vec::new();
        };
        match r {
            ArtifactsJobResult::Listed(r) => {
                if v.loading != Some(ticket) {
                    return Vec::new();
                }
                v.loading = None;
                match r {
                    Ok(items) => {
                        let keep = v.selected().map(|a| a.id.clone());
                        v.items = items;
                        v.error = None;
                        v.selected = keep
                            .and_then(|id| v.items.iter().position(|a| a.id == id))
                            .unwrap_or(0);
                        return self.artifacts_show();
                    }
                    Err(e) => v.error = Some(e),
                }
            }
            ArtifactsJobResult::Shown(id, shown) => {
                if v.shown_ticket != Some(ticket) {
                    return Vec::new();
                }
                v.shown_ticket = None;
                v.shown = Some((id, shown));
            }
        }
        Vec::new()
    }
}

// Drawing (pure functions of the state; an image's protocol resizes itself in its lock).

pub fn pane_title(v: &ArtifactsView) -> String {
    format!(" 6 Board · Artifacts ({}) ", v.items.len())
}

pub fn detail_title(v: &ArtifactsView) -> String {
    match v.selected() {
        Some(a) => format!(" {} · {} ", a.id, a.kind.as_str()),
        None => " Artifacts ".into(),
    }
}

fn list_line(a: &Artifact, w: usize) -> String {
    let size = human_size(a.size_bytes);
    let head = format!("{} {:<8} ", a.id, a.kind.as_str());
    let tail = format!("  {size}");
    let room = w.saturating_sub(head.chars().count() + tail.chars().count());
    format!("{head}{}{tail}", fit_width(&a.title, room, Cut::End))
}

pub fn draw_list(app: &AppState, v: &ArtifactsView, area: Rect, buf: &mut Buffer, focused: bool) {
    let t = &app.theme;
    if v.items.is_empty() {
        let (text, style): (String, Style) = match (&v.error, v.loading.is_some()) {
            (Some(e), _) => (e.clone(), t.status_error),
            (None, true) => ("loading the artifacts…".into(), t.dim),
            (None, false) => (
                "No artifacts yet. Agents register maps, covers and character sheets with fn_artifact_register; A or Esc goes back to the board.".into(),
                t.dim,
            ),
        };
        draw_top_down(area, buf, [(Line::from(Span::styled(text, style)), 2)]);
        return;
    }
    let h = area.height as usize;
    let off = window_offset(v.offset, v.selected, h, v.items.len());
    let sel = crate::tui::chrome::sel_style(app, focused);
    for (i, a) in v.items.iter().skip(off).take(h).enumerate() {
        let line = Line::from(list_line(a, area.width as usize));
        if off + i == v.selected {
            buf.set_style(Rect::new(area.x, area.y + i as u16, area.width, 1), sel);
            put_line(
                buf,
                area,
                i as u16,
                &crate::tui::chrome::select_line(line, sel),
            );
        } else {
            put_line(buf, area, i as u16, &line);
        }
    }
}

/// The metadata lines of an artifact: the plain fallback of an image, the head of the rest.
pub fn facts(a: &Artifact) -> Vec<String> {
    let mut out = vec![
        a.title.clone(),
        format!(
            "type {} · {} · {}",
            a.kind.as_str(),
            a.mime_type,
            human_size(a.size_bytes)
        ),
    ];
    if let Some((w, h)) = a.dimensions() {
        out.push(format!("{w}×{h} pixels"));
    }
    if let Some(u) = &a.uri {
        out.push(format!("path {u}"));
    }
    let mut by = format!("by {} ({})", a.author_id, a.author_type);
    if let Some(task) = &a.task_id {
        by.push_str(&format!(" · task {task}"));
    }
    // To the second: the stored time's fraction would only make the line longer.
    let when: String = a.created_at.chars().take(19).collect();
    by.push_str(&format!(" · {}", when.replace('T', " ")));
    out.push(by);
    if let Some(d) = &a.description {
        out.push(d.clone());
    }
    out
}

pub fn draw_detail(app: &AppState, v: &ArtifactsView, area: Rect, buf: &mut Buffer) {
    let th = &app.theme;
    let Some(a) = v.selected() else {
        return;
    };
    let mut lines: Vec<(Line<'static>, usize)> = facts(a)
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let st = if i == 0 { th.heading } else { th.dim };
            (Line::from(Span::styled(s, st)), 0)
        })
        .collect();
    lines.push((Line::default(), 0));
    let shown = v
        .shown
        .as_ref()
        .filter(|(id, _)| id == &a.id)
        .map(|(_, s)| s);
    match shown {
        None => lines.push((Line::from(Span::styled("loading…", th.dim)), 0)),
        Some(Shown::Text(text, cut)) => {
            lines.extend(text.lines().map(|l| (Line::from(l.to_string()), 0)));
            if *cut {
                lines.push((
                    Line::from(Span::styled("… (the first 20000 characters)", th.dim)),
                    0,
                ));
            }
        }
        Some(Shown::Image(Some(img))) => {
            let head = lines.len() as u16;
            draw_top_down(area, buf, lines);
            let rest = Rect::new(
                area.x,
                area.y + head.min(area.height),
                area.width,
                area.height.saturating_sub(head),
            );
            if let Ok(mut p) = img.0.lock() {
                StatefulImage::default().render(rest, buf, &mut *p);
            }
            return;
        }
        Some(Shown::Image(None)) => lines.push((
            Line::from(Span::styled(
                "This terminal shows no images here (kitty, iTerm2, WezTerm or a sixel terminal do; NBOOK_IMAGES=kitty|iterm2|sixel forces one).",
                th.dim,
            )),
            0,
        )),
        Some(Shown::Facts(why)) => {
            if let Some(w) = why {
                lines.push((Line::from(Span::styled(w.clone(), th.status_error)), 0));
            }
        }
    }
    let skip = v.scroll.min(lines.len().saturating_sub(1));
    draw_top_down(area, buf, lines.into_iter().skip(skip));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_protocol_comes_from_the_environment() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(protocol_from_env(env(&[("TERM", "xterm-256color")])), None);
        assert_eq!(
            protocol_from_env(env(&[("TERM", "xterm-kitty")])),
            Some(ProtocolType::Kitty)
        );
        assert_eq!(
            protocol_from_env(env(&[("TERM_PROGRAM", "WezTerm")])),
            Some(ProtocolType::Iterm2)
        );
        assert_eq!(
            protocol_from_env(env(&[("TERM", "xterm-kitty"), ("TMUX", "/tmp/t")])),
            None
        );
        assert_eq!(
            protocol_from_env(env(&[("NBOOK_IMAGES", "off"), ("TERM", "xterm-kitty")])),
            None
        );
        assert_eq!(
            protocol_from_env(env(&[("NBOOK_IMAGES", "sixel"), ("TMUX", "x")])),
            Some(ProtocolType::Sixel)
        );
    }
}
