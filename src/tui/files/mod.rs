//! The Files pane's model: the lazy tree, the preview of the selected file, the marks on
//! files agents changed, and the list of every project path (for the finder).

pub mod finder;
pub mod markdown;
pub mod tree;

use std::collections::HashSet;
use std::sync::Arc;

use crate::tui::action::Ticket;
use markdown::PreviewDoc;
use tree::FileTree;

#[derive(Clone, Debug, Default)]
pub struct FilePreview {
    pub path: String,
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
    pub all_paths: Option<Arc<Vec<String>>>,
    pub walk_ticket: Option<Ticket>,
    /// A path the finder chose, revealed once its folders are listed.
    pub reveal: Option<String>,
}

impl FilesState {
    /// Does this folder contain a changed file (for the mark on folders)?
    pub fn dir_has_changes(&self, dir: &str) -> bool {
        let prefix = format!("{dir}/");
        self.changed.iter().any(|p| p.starts_with(&prefix))
    }
}

/// The folders above `path`, outermost first, starting with the root ("").
pub fn ancestors(path: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut acc = String::new();
    let parts: Vec<&str> = path.split('/').collect();
    for part in parts.iter().take(parts.len().saturating_sub(1)) {
        if !acc.is_empty() {
            acc.push('/');
        }
        acc.push_str(part);
        out.push(acc.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn ancestors_outermost_first() {
        assert_eq!(super::ancestors("a/b/c.md"), ["", "a", "a/b"]);
        assert_eq!(super::ancestors("c.md"), [""]);
    }
}
