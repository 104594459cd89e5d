//! What the call running on this thread committed to the project database, collected for the
//! change history (`store::history`).
//!
//! The engine runs every tool call on one blocking-pool thread and clears this collector just
//! before the call and takes it just after. The places that commit a recorded change to
//! project.sqlite (`plot::txn` commits, the world and SQL writes applying their changeset, a
//! revert) add the changeset they committed here — after the commit, so a rolled-back write is
//! never recorded as applied. Why a thread-local and not a field of the tool's output: the
//! domain services below the tools must not know about the history, and a tool cannot forget
//! to pass the record along.

use std::cell::RefCell;

use super::changeset::Changeset;

/// Everything one call committed: its changesets in commit order, and the history entry it
/// reverted when the call was a revert.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Applied {
    pub changesets: Vec<Changeset>,
    pub reverts: Option<i64>,
}

thread_local! {
    static APPLIED: RefCell<Applied> = RefCell::new(Applied::default());
}

/// Forget whatever an earlier call on this thread left (the engine calls it before a call).
pub fn clear() {
    APPLIED.with(|a| *a.borrow_mut() = Applied::default());
}

/// A committed change to project.sqlite. Empty changesets are skipped.
pub fn committed(cs: Changeset) {
    if cs.is_empty() {
        return;
    }
    APPLIED.with(|a| a.borrow_mut().changesets.push(cs));
}

/// The running call reverted history entry `id`.
pub fn reverted(id: i64) {
    APPLIED.with(|a| a.borrow_mut().reverts = Some(id));
}

/// What was collected since [`clear`], leaving the collector empty.
pub fn take() -> Applied {
    APPLIED.with(|a| std::mem::take(&mut *a.borrow_mut()))
}
