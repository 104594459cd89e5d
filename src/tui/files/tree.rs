//! The lazy project tree: folders are listed only when opened (by a background job), and a
//! flattened list of visible rows is rebuilt only when a folder opens, closes or reloads, so
//! drawing touches just the rows on screen. `.git` is never shown; dot-folders such as
//! `.nbook` are shown dimmed and closed. Entries are keyed by their real names (bytes, not
//! lossy UTF-8), so names that print alike stay distinct.

use std::collections::HashMap;
use std::ffi::OsString;

use crate::tui::action::Ticket;
use crate::tui::files::relpath::RelPath;

/// One entry of a folder listing, as the background job returns it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntry {
    pub name: OsString,
    pub is_dir: bool,
}

#[derive(Clone, Debug)]
pub struct Node {
    pub name: OsString,
    /// Project-relative path with `/` separators; "" for the root.
    pub path: RelPath,
    pub is_dir: bool,
    pub depth: u16,
    pub parent: Option<usize>,
    /// `None` until the folder was listed.
    pub children: Option<Vec<usize>>,
    pub expanded: bool,
    /// The ticket of the listing in flight, if any (older results are dropped).
    pub loading: Option<Ticket>,
    /// A dot-file or dot-folder (drawn dimmed).
    pub hidden: bool,
}

/// What opening a row needs.
#[derive(Debug, PartialEq, Eq)]
pub enum Open {
    /// A folder that must be listed first (its path).
    Load(RelPath),
    /// A folder opened or closed from what is already known.
    Toggled,
    /// A file: preview it.
    File(RelPath),
    Nothing,
}

#[derive(Clone, Debug)]
pub struct FileTree {
    nodes: Vec<Node>,
    by_path: HashMap<RelPath, usize>,
    rows: Vec<usize>,
    pub selected: usize,
    pub offset: usize,
}

impl Default for FileTree {
    fn default() -> Self {
        FileTree::new()
    }
}

fn sort_key(n: &Node) -> (bool, String, OsString) {
    (
        !n.is_dir,
        n.name.to_string_lossy().to_lowercase(),
        n.name.clone(),
    )
}

impl FileTree {
    pub fn new() -> FileTree {
        let root = Node {
            name: OsString::new(),
            path: RelPath::root(),
            is_dir: true,
            depth: 0,
            parent: None,
            children: None,
            expanded: true,
            loading: None,
            hidden: false,
        };
        let mut by_path = HashMap::new();
        by_path.insert(RelPath::root(), 0);
        FileTree {
            nodes: vec![root],
            by_path,
            rows: Vec::new(),
            selected: 0,
            offset: 0,
        }
    }

    pub fn rows(&self) -> &[usize] {
        &self.rows
    }

    pub fn node(&self, id: usize) -> Option<&Node> {
        self.nodes.get(id)
    }

    pub fn node_by_path(&self, path: impl Into<RelPath>) -> Option<&Node> {
        self.by_path
            .get(&path.into())
            .and_then(|i| self.nodes.get(*i))
    }

    pub fn root_loaded(&self) -> bool {
        self.nodes[0].children.is_some()
    }

    pub fn selected_node(&self) -> Option<&Node> {
        self.rows
            .get(self.selected)
            .and_then(|i| self.nodes.get(*i))
    }

    /// Remember that a listing of `dir` is in flight under `ticket`.
    pub fn mark_loading(&mut self, dir: impl Into<RelPath>, ticket: Ticket) {
        if let Some(&i) = self.by_path.get(&dir.into()) {
            self.nodes[i].loading = Some(ticket);
        }
    }

    /// Is `dir` a known, listed folder?
    pub fn is_listed(&self, dir: impl Into<RelPath>) -> bool {
        self.node_by_path(dir).is_some_and(|n| n.children.is_some())
    }

    /// Apply a listing. Returns false when it is stale (a newer listing is in flight) or the
    /// folder is unknown. Known children keep their state (open folders stay open).
    pub fn apply_listing(
        &mut self,
        dir: impl Into<RelPath>,
        ticket: Ticket,
        entries: Vec<DirEntry>,
    ) -> bool {
        let dir = dir.into();
        let Some(&id) = self.by_path.get(&dir) else {
            return false;
        };
        if self.nodes[id].loading.is_some_and(|t| t != ticket) {
            return false;
        }
        self.nodes[id].loading = None;
        let old: HashMap<OsString, usize> = self.nodes[id]
            .children
            .iter()
            .flatten()
            .map(|&c| (self.nodes[c].name.clone(), c))
            .collect();
        let depth = self.nodes[id].depth + 1;
        let mut children = Vec::with_capacity(entries.len());
        for e in entries {
            if e.name.as_os_str() == ".git" || e.name.is_empty() {
                continue;
            }
            if let Some(&c) = old.get(&e.name) {
                if self.nodes[c].is_dir == e.is_dir {
                    children.push(c);
                    continue;
                }
            }
            let path = dir.join(&e.name);
            let c = self.nodes.len();
            self.nodes.push(Node {
                hidden: e.name.as_encoded_bytes().first() == Some(&b'.'),
                name: e.name,
                path: path.clone(),
                is_dir: e.is_dir,
                depth,
                parent: Some(id),
                children: None,
                expanded: false,
                loading: None,
            });
            self.by_path.insert(path, c);
            children.push(c);
        }
        // Paths of removed entries stop resolving (their nodes stay in the arena, unreachable).
        let kept: std::collections::HashSet<usize> = children.iter().copied().collect();
        for c in old.values() {
            if !kept.contains(c) {
                let path = self.nodes[*c].path.clone();
                if self.by_path.get(&path) == Some(c) {
                    self.by_path.remove(&path);
                }
            }
        }
        children.sort_by_key(|&c| sort_key(&self.nodes[c]));
        self.nodes[id].children = Some(children);
        self.rebuild_rows();
        true
    }

    /// Rebuild the visible rows, keeping the same node selected when it is still visible.
    pub fn rebuild_rows(&mut self) {
        let keep = self.rows.get(self.selected).copied();
        self.rows.clear();
        let mut stack: Vec<usize> = Vec::new();
        if let Some(children) = &self.nodes[0].children {
            stack.extend(children.iter().rev());
        }
        while let Some(id) = stack.pop() {
            self.rows.push(id);
            let n = &self.nodes[id];
            if n.is_dir && n.expanded {
                if let Some(children) = &n.children {
                    stack.extend(children.iter().rev());
                }
            }
        }
        if let Some(k) = keep {
            if let Some(pos) = self.rows.iter().position(|&r| r == k) {
                self.selected = pos;
            }
        }
        self.selected = self.selected.min(self.rows.len().saturating_sub(1));
    }

    /// Open the selected row: list/expand a folder, or report the file to preview.
    pub fn open_selected(&mut self) -> Open {
        let Some(&id) = self.rows.get(self.selected) else {
            return Open::Nothing;
        };
        let n = &mut self.nodes[id];
        if !n.is_dir {
            return Open::File(n.path.clone());
        }
        if n.expanded && n.children.is_some() {
            return Open::Nothing;
        }
        n.expanded = true;
        if n.children.is_none() {
            return Open::Load(n.path.clone());
        }
        self.rebuild_rows();
        Open::Toggled
    }

    /// Close the selected folder, or select the parent of the selected row.
    pub fn collapse_selected(&mut self) {
        let Some(&id) = self.rows.get(self.selected) else {
            return;
        };
        if self.nodes[id].is_dir && self.nodes[id].expanded {
            self.nodes[id].expanded = false;
            self.rebuild_rows();
            return;
        }
        if let Some(parent) = self.nodes[id].parent.filter(|&p| p != 0) {
            if let Some(pos) = self.rows.iter().position(|&r| r == parent) {
                self.selected = pos;
            }
        }
    }

    /// Mark a folder open (used while revealing a path); returns true if it needs a listing.
    pub fn expand_path(&mut self, dir: impl Into<RelPath>) -> bool {
        let Some(&id) = self.by_path.get(&dir.into()) else {
            return false;
        };
        self.nodes[id].expanded = true;
        let needs = self.nodes[id].children.is_none();
        self.rebuild_rows();
        needs
    }

    /// Select the row showing `path`, if visible.
    pub fn select_path(&mut self, path: impl Into<RelPath>) -> bool {
        let Some(&id) = self.by_path.get(&path.into()) else {
            return false;
        };
        match self.rows.iter().position(|&r| r == id) {
            Some(pos) => {
                self.selected = pos;
                true
            }
            None => false,
        }
    }

    /// Move the selection by `delta` rows (clamped).
    pub fn move_by(&mut self, delta: isize) {
        if self.rows.is_empty() {
            self.selected = 0;
            return;
        }
        let last = self.rows.len() - 1;
        self.selected = self.selected.saturating_add_signed(delta).min(last);
    }

    pub fn select_last(&mut self) {
        self.selected = self.rows.len().saturating_sub(1);
    }

    /// Keep the selection inside a window of `height` rows.
    pub fn scroll_into_view(&mut self, height: usize) {
        self.offset = window_offset(self.offset, self.selected, height, self.rows.len());
    }
}

/// The first visible row so that `selected` is on screen, moving as little as possible.
pub fn window_offset(offset: usize, selected: usize, height: usize, len: usize) -> usize {
    if height == 0 {
        return selected;
    }
    let mut off = offset.min(len.saturating_sub(height));
    if selected < off {
        off = selected;
    } else if selected >= off + height {
        off = selected + 1 - height;
    }
    off
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(name: &str, is_dir: bool) -> DirEntry {
        DirEntry {
            name: name.into(),
            is_dir,
        }
    }

    #[test]
    fn lazy_open_keeps_state_across_reload() {
        let mut t = FileTree::new();
        t.mark_loading("", 1);
        assert!(t.apply_listing(
            "",
            1,
            vec![
                e("b.md", false),
                e(".git", true),
                e("a", true),
                e(".nbook", true)
            ]
        ));
        let names: Vec<_> = t
            .rows()
            .iter()
            .map(|&r| t.node(r).unwrap().name.clone())
            .collect();
        assert_eq!(names, [".nbook", "a", "b.md"]);
        t.select_path("a");
        assert_eq!(t.open_selected(), Open::Load("a".into()));
        t.mark_loading("a", 2);
        // A stale listing is dropped.
        t.mark_loading("a", 3);
        assert!(!t.apply_listing("a", 2, vec![e("x", false)]));
        assert!(t.apply_listing("a", 3, vec![e("y.md", false)]));
        assert_eq!(t.rows().len(), 4);
        // Reload the root: "a" stays open.
        assert!(t.apply_listing("", 4, vec![e("a", true), e("c.md", false)]));
        let names: Vec<_> = t
            .rows()
            .iter()
            .map(|&r| t.node(r).unwrap().path.clone())
            .collect();
        assert_eq!(names, ["a", "a/y.md", "c.md"]);
        t.select_path("a/y.md");
        t.collapse_selected();
        assert_eq!(t.selected_node().unwrap().path, "a");
        t.collapse_selected();
        assert_eq!(t.rows().len(), 2);
    }

    #[test]
    fn window_keeps_selection_visible() {
        assert_eq!(window_offset(0, 15, 10, 100), 6);
        assert_eq!(window_offset(6, 3, 10, 100), 3);
        assert_eq!(window_offset(95, 99, 10, 100), 90);
        assert_eq!(window_offset(0, 0, 0, 0), 0);
    }
}
