//! The composer: the draft being written to the selected session, its border saying whether
//! Enter prompts (idle) or steers (running), and the height it takes.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Widget};

use super::key;
use crate::engine::SessionInfo;
use crate::tui::action::Command;
use crate::tui::app::AppState;
use crate::tui::approvals::cut;
use crate::tui::chrome::put_line;
use crate::tui::keymap::Context;
use crate::tui::sessions::is_busy;

/// The composer box (or its resting state) for the selected session.
pub fn draw_composer(app: &AppState, info: &SessionInfo, area: Rect, buf: &mut Buffer) {
    let t = &app.theme;
    let s = &app.sessions;
    let busy = is_busy(info.state);
    let title = if s.composing {
        let send = key(app, Command::Send, Context::Composer);
        if busy {
            let follow = key(app, Command::SendFollowup, Context::Composer);
            format!(" ✎ s{} · {send} steer · {follow} follow-up ", info.id)
        } else {
            let nl = key(app, Command::Newline, Context::Composer);
            format!(" ✎ s{} · {send} prompt · {nl} new line ", info.id)
        }
    } else {
        format!(" Message to session {} ", info.id)
    };
    let block = Block::bordered()
        .border_type(if s.composing {
            BorderType::Thick
        } else {
            BorderType::Plain
        })
        .border_style(if s.composing {
            t.border_focused
        } else {
            t.border
        })
        .title(Line::from(title).style(if s.composing {
            t.title_focused
        } else {
            t.title
        }));
    let inside = block.inner(area);
    block.render(area, buf);
    if inside.height == 0 {
        return;
    }
    let draft = s.drafts.get(&info.id);
    if s.composing {
        if let Some(d) = draft {
            d.render(inside, buf);
        }
        return;
    }
    let text = match draft.map(crate::tui::input::text_of) {
        Some(d) if !d.trim().is_empty() => {
            format!(
                "{} (draft — {} continues)",
                cut(&d, 200),
                key(app, Command::Compose, Context::Sessions)
            )
        }
        _ if busy => format!(
            "{} to steer the run (or queue a follow-up)",
            key(app, Command::Compose, Context::Sessions)
        ),
        _ => format!(
            "{} to write a prompt",
            key(app, Command::Compose, Context::Sessions)
        ),
    };
    put_line(buf, inside, 0, &Line::from(Span::styled(text, t.dim)));
}

/// Rows the composer takes for the selected session.
pub fn composer_height(app: &AppState) -> u16 {
    let lines = app
        .sessions
        .draft()
        .filter(|_| app.sessions.composing)
        .map_or(1, |d| d.lines().len());
    lines.clamp(1, 6) as u16 + 2
}
