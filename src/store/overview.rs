//! Read-only summaries of the story and world tables for the Story and World panes.
