//! Widgets more than one pane draws with: wrapping styled lines to a width, the Markdown-ish
//! preview document, the prose diff (word-level, unified or side by side), and the two forms (answering a question, starting a
//! session), and the selection step of overlay lists. They know nothing of which pane uses them.

pub mod diff;
pub mod forms;
pub mod markdown;
pub mod prose_diff;
pub mod select;
pub mod wrap;
