//! The Files pane's model: the lazy tree, the preview of the selected file, the marks on
//! files agents changed, and the list of every project path (for the finder).

pub mod commands;
pub mod finder;
pub mod jobs;
pub mod relpath;
pub mod tree;
mod update;
pub mod view;

use std::collections::HashSet;
use std::sync::Arc;

use crate::tui::action::Ticket;
use crate::tui::widgets::markdown::PreviewDoc;
pub use relpath::RelPath;
use tree::FileTree;

#[derive(Clone, Debug, Default)]
pub struct FilePreview {
    pub path: RelPath,
    pub doc: Option<PreviewDoc>,
    pub error: Option<String>,
    pub loading: Option<Ticket>,
    /// First logical line shown.
    pub scroll: usize,
}

#[derive(Clone, Debug, Default)]
pub struct FilesState {
    pub tree: FileTree,
    pub preview: Option<FilePreview>,
    /// Project-relative paths an agent changed while the UI ran.
    pub changed: HashSet<String>,
    /// Every file path in the project (from the background walk), sorted.
    pub all_paths: Option<Arc<Vec<RelPath>>>,
    pub walk_ticket: Option<Ticket>,
    /// A path the finder chose, revealed once its folders are listed.
    pub reveal: Option<RelPath>,
}

impl FilesState {
    /// Does this folder contain a changed file (for the mark on folders)?
    pub fn dir_has_changes(&self, dir: &RelPath) -> bool {
        let Some(dir) = dir.to_str() else {
            return false; // agents cannot name files under a non-UTF-8 folder
        };
        let prefix = format!("{dir}/");
        self.changed.iter().any(|p| p.starts_with(&prefix))
    }

    /// Did an agent change this file?
    pub fn is_changed(&self, path: &RelPath) -> bool {
        path.to_str().is_some_and(|p| self.changed.contains(p))
    }
}

/// The folders above `path`, outermost first, starting with the root ("").
pub fn ancestors(path: &RelPath) -> Vec<RelPath> {
    path.ancestors()
}

#[cfg(test)]
mod tests {
    #[test]
    fn ancestors_outermost_first() {
        let a = |p: &str| super::ancestors(&p.into());
        assert_eq!(a("a/b/c.md"), ["", "a", "a/b"].map(super::RelPath::from));
        assert_eq!(a("c.md"), [super::RelPath::root()]);
    }
}
