//! Screen geometry, computed from the terminal size and the focused pane only, so `update`
//! (mouse hits, page sizes) and `view` agree. Left: the six panes stacked, the focused one
//! tallest (the Board a single line unless focused); right: the focused pane's detail (preview, transcript, approval request); bottom:
//! the status bar. Below 50 columns the detail is hidden; below 20×6 only a note is drawn.

use ratatui::layout::Rect;

use crate::tui::app::Pane;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Regions {
    pub panes: [Rect; 6],
    pub detail: Rect,
    pub status: Rect,
    pub too_small: bool,
}

impl Regions {
    /// Rows of list content inside a pane's border.
    pub fn list_height(&self, pane: Pane) -> usize {
        inner(self.panes[pane.index()]).height as usize
    }

    pub fn detail_inner(&self) -> Rect {
        inner(self.detail)
    }
}

/// The area inside a one-cell border (empty when there is no room).
pub fn inner(r: Rect) -> Rect {
    if r.width < 2 || r.height < 2 {
        return Rect::new(r.x, r.y, 0, 0);
    }
    Rect::new(r.x + 1, r.y + 1, r.width - 2, r.height - 2)
}

pub fn regions(width: u16, height: u16, focus: Pane) -> Regions {
    let zero = Rect::default();
    if width < 20 || height < 6 {
        return Regions {
            panes: [zero; 6],
            detail: zero,
            status: Rect::new(0, 0, width, height.min(1)),
            too_small: true,
        };
    }
    let body_h = height - 1;
    let status = Rect::new(0, body_h, width, 1);
    let (left_w, detail) = if width < 50 {
        (width, zero)
    } else {
        let left = if width >= 100 {
            (width * 35 / 100).clamp(36, 56)
        } else {
            width * 40 / 100
        };
        (left, Rect::new(left, 0, width - left, body_h))
    };
    let unfocused = ((body_h - body_h / 2) / 4).clamp(1, 8);
    // The Board (the sixth pane) is one squeezed line unless focused, taken from the focused
    // pane, so the other five keep their heights; focused, it takes a row from each of them.
    let (unfocused, focused, board) = if focus == Pane::Board {
        let u = unfocused.saturating_sub(1).max(1);
        (u, 0, body_h.saturating_sub(u * 5))
    } else {
        // No room for its line on the smallest screens: the focused pane keeps its row.
        let board = u16::from(body_h > unfocused * 4 + 1);
        (
            unfocused,
            body_h.saturating_sub(unfocused * 4 + board),
            board,
        )
    };
    let mut panes = [zero; 6];
    let mut y = 0;
    for p in Pane::ALL {
        let h = if p == Pane::Board {
            board
        } else if p == focus {
            focused
        } else {
            unfocused
        };
        panes[p.index()] = Rect::new(0, y, left_w, h);
        y += h;
    }
    Regions {
        panes,
        detail,
        status,
        too_small: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills_the_screen_at_common_sizes() {
        for (w, h) in [(80, 24), (120, 40), (200, 50), (50, 10), (20, 6)] {
            let r = regions(w, h, Pane::Files);
            let total: u16 = r.panes.iter().map(|p| p.height).sum();
            assert_eq!(total, h - 1, "{w}x{h}");
            assert!(r.panes[0].height >= r.panes[1].height);
        }
        for (w, h) in [(80, 24), (120, 40), (20, 6)] {
            let r = regions(w, h, Pane::Board);
            let total: u16 = r.panes.iter().map(|p| p.height).sum();
            assert_eq!(total, h - 1, "{w}x{h} with the Board focused");
        }
        for (w, h) in [(80, 24), (120, 40)] {
            assert_eq!(regions(w, h, Pane::Files).panes[5].height, 1, "{w}x{h}");
        }
        assert!(regions(10, 5, Pane::Files).too_small);
    }
}
