//! Files pane behaviour: moving in the tree, opening folders (listed by background jobs with
//! tickets), previewing the selected file, revealing a finder result, and reacting to files
//! agents changed (mark, reload the folder and the preview).

use std::sync::Arc;

use crate::tui::action::{Command, Effect, Ticket};
use crate::tui::app::{AppState, Pane};
use crate::tui::files::tree::{DirEntry, Open};
use crate::tui::files::{ancestors, FilePreview, RelPath};
use crate::tui::widgets::markdown::PreviewDoc;

impl AppState {
    /// List a folder in the background (a newer request for the same folder wins).
    pub(crate) fn load_dir(&mut self, dir: &RelPath) -> Vec<Effect> {
        let ticket = self.ticket();
        self.files.tree.mark_loading(dir, ticket);
        vec![Effect::LoadDir {
            ticket,
            dir: dir.clone(),
        }]
    }

    pub(crate) fn files_command(&mut self, cmd: Command) -> Vec<Effect> {
        let height = self.regions().list_height(Pane::Files);
        let page = height.max(1) as isize;
        let tree = &mut self.files.tree;
        match cmd {
            Command::Down => tree.move_by(1),
            Command::Up => tree.move_by(-1),
            Command::PageDown => tree.move_by(page),
            Command::PageUp => tree.move_by(-page),
            Command::Top => tree.selected = 0,
            Command::Bottom => tree.select_last(),
            Command::Expand => match tree.open_selected() {
                Open::Load(dir) => return self.load_dir(&dir),
                Open::File(_) | Open::Toggled | Open::Nothing => {}
            },
            Command::Collapse => tree.collapse_selected(),
            Command::DetailDown | Command::DetailUp => {
                if let Some(p) = &mut self.files.preview {
                    let max = p
                        .doc
                        .as_ref()
                        .map(|d| d.lines.len().saturating_sub(1))
                        .unwrap_or(0);
                    p.scroll = if cmd == Command::DetailDown {
                        (p.scroll + 3).min(max)
                    } else {
                        p.scroll.saturating_sub(3)
                    };
                }
                return Vec::new();
            }
            Command::Refresh => return self.refresh_files(),
            Command::EditFile => return self.edit_selected_file(),
            _ => return Vec::new(),
        }
        self.files.tree.scroll_into_view(height);
        self.preview_selected(false)
    }

    /// Preview the selected file if it is not already shown (or `force`).
    pub(crate) fn preview_selected(&mut self, force: bool) -> Vec<Effect> {
        let Some(node) = self.files.tree.selected_node() else {
            return Vec::new();
        };
        if node.is_dir {
            self.files.preview = None;
            return Vec::new();
        }
        let path = node.path.clone();
        if !force && self.files.preview.as_ref().is_some_and(|p| p.path == path) {
            return Vec::new();
        }
        self.load_preview(path)
    }

    fn load_preview(&mut self, path: RelPath) -> Vec<Effect> {
        let ticket = self.ticket();
        let keep_scroll = self
            .files
            .preview
            .as_ref()
            .filter(|p| p.path == path)
            .map(|p| p.scroll)
            .unwrap_or(0);
        let doc = self
            .files
            .preview
            .take()
            .filter(|p| p.path == path)
            .and_then(|p| p.doc);
        self.files.preview = Some(FilePreview {
            path: path.clone(),
            doc,
            error: None,
            loading: Some(ticket),
            scroll: keep_scroll,
        });
        vec![Effect::LoadPreview { ticket, path }]
    }

    fn refresh_files(&mut self) -> Vec<Effect> {
        let mut fx = Vec::new();
        let listed: Vec<RelPath> = ancestors(&RelPath::root())
            .into_iter()
            .chain(
                self.files
                    .tree
                    .rows()
                    .iter()
                    .filter_map(|&r| self.files.tree.node(r))
                    .filter(|n| n.is_dir && n.expanded && n.children.is_some())
                    .map(|n| n.path.clone()),
            )
            .collect();
        for dir in listed {
            fx.extend(self.load_dir(&dir));
        }
        let ticket = self.ticket();
        self.files.walk_ticket = Some(ticket);
        fx.push(Effect::WalkFiles { ticket });
        fx.extend(self.preview_selected(true));
        self.info("Reloading the project files…");
        fx
    }

    pub(crate) fn dir_loaded(
        &mut self,
        ticket: Ticket,
        dir: RelPath,
        result: Result<Vec<DirEntry>, String>,
    ) -> Vec<Effect> {
        match result {
            Ok(entries) => {
                let first = !self.files.tree.root_loaded();
                if !self.files.tree.apply_listing(&dir, ticket, entries) {
                    return Vec::new();
                }
                let h = self.regions().list_height(Pane::Files);
                self.files.tree.scroll_into_view(h);
                let mut fx = Vec::new();
                if self.files.reveal.is_some() {
                    fx.extend(self.continue_reveal());
                } else if first {
                    fx.extend(self.preview_selected(false));
                }
                fx
            }
            Err(e) => {
                self.files.tree.mark_loading(&dir, 0);
                self.error(format!(
                    "Cannot list {}: {e}",
                    if dir.is_root() {
                        "the project".into()
                    } else {
                        dir.shown()
                    }
                ));
                Vec::new()
            }
        }
    }

    pub(crate) fn files_walked(&mut self, ticket: Ticket, paths: Arc<Vec<RelPath>>) -> Vec<Effect> {
        if self.files.walk_ticket != Some(ticket) {
            return Vec::new();
        }
        self.files.walk_ticket = None;
        self.files.all_paths = Some(paths);
        self.refilter_finder()
    }

    pub(crate) fn preview_loaded(
        &mut self,
        ticket: Ticket,
        path: RelPath,
        result: Result<PreviewDoc, String>,
    ) -> Vec<Effect> {
        let Some(p) = &mut self.files.preview else {
            return Vec::new();
        };
        if p.loading != Some(ticket) || p.path != path {
            return Vec::new();
        }
        p.loading = None;
        match result {
            Ok(doc) => {
                p.scroll = p.scroll.min(doc.lines.len().saturating_sub(1));
                p.doc = Some(doc);
                p.error = None;
            }
            Err(e) => {
                p.doc = None;
                p.error = Some(e);
            }
        }
        Vec::new()
    }

    /// Show `path` in the tree: list and open its folders, then select and preview it.
    pub(crate) fn reveal(&mut self, path: &RelPath) -> Vec<Effect> {
        self.focus = Pane::Files;
        self.files.reveal = Some(path.clone());
        self.continue_reveal()
    }

    fn continue_reveal(&mut self) -> Vec<Effect> {
        let Some(path) = self.files.reveal.clone() else {
            return Vec::new();
        };
        for dir in ancestors(&path) {
            if !self.files.tree.is_listed(&dir) {
                if self.files.tree.node_by_path(&dir).is_none() {
                    // The folder is not known (deleted since the walk?).
                    self.files.reveal = None;
                    self.error(format!("{path} is no longer in the project"));
                    return Vec::new();
                }
                if self
                    .files
                    .tree
                    .node_by_path(&dir)
                    .is_some_and(|n| n.loading.is_some())
                {
                    return Vec::new();
                }
                return self.load_dir(&dir);
            }
            if !dir.is_root() {
                self.files.tree.expand_path(&dir);
            }
        }
        self.files.reveal = None;
        if !self.files.tree.select_path(&path) {
            self.error(format!("{path} is no longer in the project"));
            return Vec::new();
        }
        let h = self.regions().list_height(Pane::Files);
        self.files.tree.scroll_into_view(h);
        self.preview_selected(false)
    }

    /// An agent changed files: mark them, reload their folders and the preview if shown.
    pub(crate) fn files_changed(&mut self, paths: Vec<String>) -> Vec<Effect> {
        let mut fx = Vec::new();
        let mut dirs: Vec<RelPath> = Vec::new();
        for p in &paths {
            let p = p.trim_start_matches("./").to_string();
            if p.starts_with("workspace/") {
                continue; // a sibling project
            }
            let rel = RelPath::from(p.as_str());
            let parent = rel.parent();
            if !dirs.contains(&parent) {
                dirs.push(parent);
            }
            if let Some(all) = &mut self.files.all_paths {
                if let Err(pos) = all.binary_search(&rel) {
                    Arc::make_mut(all).insert(pos, rel.clone());
                }
            }
            if self.files.preview.as_ref().is_some_and(|pr| pr.path == rel) {
                fx.extend(self.load_preview(rel.clone()));
            }
            self.files.changed.insert(p);
        }
        for d in dirs {
            // Reload the deepest listed folder on the way (new folders appear in their parent).
            let target = d
                .join("x".as_ref())
                .ancestors()
                .into_iter()
                .rev()
                .find(|a| self.files.tree.is_listed(a));
            if let Some(t) = target {
                fx.extend(self.load_dir(&t));
            }
        }
        fx
    }
}
