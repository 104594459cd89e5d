//! Background jobs (a workflow run, a background `invoke_agent`, a background `bash`, a
//! research run): one
//! durable JSON file per job in `.nbook/agent/jobs/<id>.json`, rewritten atomically (fsynced),
//! with the live cancellation token kept in memory. Start, status changes, the end and
//! delivery are written at once; progress and detail reports are coalesced — written at most
//! every [`PROGRESS_INTERVAL`], the last one by a timer — while subscribers see every one.
//! After a crash a job file holds at worst slightly older progress, never a lost end. Jobs that were running or waiting
//! when the last process stopped are `interrupted` on open — never silently resumed.
//!
//! The store only records; whoever runs the job (the agent host, the workflow runner, bash)
//! reports progress and the end through it, and watches the job's token to stop when cancelled.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;

use super::session_log::now_rfc3339;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    Workflow,
    InvokeAgent,
    Bash,
    /// A research run (`fn_research_run`): search, fetch, synthesis.
    Research,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobStatus {
    Running,
    Waiting,
    Completed,
    Failed,
    Cancelled,
    Interrupted,
}

impl JobStatus {
    pub const ALL: [JobStatus; 6] = [
        JobStatus::Running,
        JobStatus::Waiting,
        JobStatus::Completed,
        JobStatus::Failed,
        JobStatus::Cancelled,
        JobStatus::Interrupted,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Running => "running",
            JobStatus::Waiting => "waiting",
            JobStatus::Completed => "completed",
            JobStatus::Failed => "failed",
            JobStatus::Cancelled => "cancelled",
            JobStatus::Interrupted => "interrupted",
        }
    }
    pub fn parse(s: &str) -> Option<JobStatus> {
        JobStatus::ALL.into_iter().find(|x| x.as_str() == s)
    }
    pub fn is_final(self) -> bool {
        !matches!(self, JobStatus::Running | JobStatus::Waiting)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeliveryStatus {
    NotRequired,
    Pending,
    Accepted,
    Failed,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobProgress {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    pub done: u64,
    pub total: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobSnapshot {
    pub job_id: String,
    pub kind: JobKind,
    pub title: String,
    pub owner_session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin_tool_call_id: Option<String>,
    pub status: JobStatus,
    pub created_at: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    /// What the job runs: `{workflowKey}`, `{sessionId}` or `{command}`.
    #[serde(rename = "ref")]
    pub reference: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<JobProgress>,
    pub delivery_status: DeliveryStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delivery_error: Option<String>,
}

/// The file on disk.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobRecord {
    pub schema_version: u32,
    pub snapshot: JobSnapshot,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// Kind-specific detail (a workflow's log lines, a bash command's output…).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<Value>,
}

#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error("no job with id '{0}'; list_jobs shows the jobs of this session")]
    Unknown(String),
    #[error("job {0} belongs to another session; only its owner may cancel it")]
    NotOwner(String),
    #[error("job {id} is already {status}")]
    Finished { id: String, status: &'static str },
    #[error("cannot write job file {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// What a job's runner is told when it starts.
#[derive(Clone, Debug)]
pub struct JobStart {
    pub kind: JobKind,
    pub title: String,
    pub owner_session_id: Option<String>,
    pub origin_tool_call_id: Option<String>,
    pub reference: Value,
    pub preview: Option<String>,
}

/// Progress and detail of one job reach its file at most this often.
pub const PROGRESS_INTERVAL: Duration = Duration::from_millis(200);

struct Live {
    record: JobRecord,
    cancel: CancellationToken,
    /// When the file was last written (`None`: not by this process).
    written_at: Option<Instant>,
    /// The record holds a coalesced change the file does not have yet.
    dirty: bool,
    /// A timer will write the dirty record.
    flush_scheduled: bool,
}

impl Live {
    fn loaded(record: JobRecord) -> Live {
        Live {
            record,
            cancel: CancellationToken::new(),
            written_at: None,
            dirty: false,
            flush_scheduled: false,
        }
    }
}

type Jobs = Mutex<BTreeMap<u64, Live>>;

pub struct JobStore {
    dir: PathBuf,
    jobs: Arc<Jobs>,
    events: broadcast::Sender<JobSnapshot>,
    /// Job files written by this store (coalescing is measured by it).
    writes: Arc<AtomicU64>,
}

/// Whether a change must reach the disk at once or may wait for the next write.
#[derive(Clone, Copy, PartialEq)]
enum Durability {
    Now,
    Coalesced,
}

impl JobStore {
    /// Load every job file; running or waiting ones become `interrupted` (and are rewritten).
    /// Unreadable files are skipped with a warning: one bad file must not hide the others.
    pub fn open(dir: &Path, recover: bool) -> JobStore {
        let mut jobs = BTreeMap::new();
        if let Ok(entries) = std::fs::read_dir(dir) {
            for e in entries.flatten() {
                let path = e.path();
                let Some(n) = job_number(&path) else { continue };
                let record: JobRecord = match std::fs::read(&path)
                    .map_err(|e| e.to_string())
                    .and_then(|b| serde_json::from_slice(&b).map_err(|e| e.to_string()))
                {
                    Ok(r) => r,
                    Err(e) => {
                        tracing::warn!("skipping job file {}: {e}", path.display());
                        continue;
                    }
                };
                let mut live = Live::loaded(record);
                if recover && !live.record.snapshot.status.is_final() {
                    live.record.snapshot.status = JobStatus::Interrupted;
                    live.record.snapshot.ended_at = Some(now_rfc3339());
                    live.record.snapshot.error =
                        Some("the program stopped while this job ran; start it again if it is still needed".into());
                    if let Err(e) = write_record(dir, &live.record) {
                        tracing::warn!("{e}");
                    }
                }
                jobs.insert(n, live);
            }
        }
        let (events, _) = broadcast::channel(1024);
        JobStore {
            dir: dir.to_path_buf(),
            jobs: Arc::new(Mutex::new(jobs)),
            events,
            writes: Arc::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Live>> {
        lock(&self.jobs)
    }

    /// Changes to any job (the TUI's Jobs view follows this).
    pub fn subscribe(&self) -> broadcast::Receiver<JobSnapshot> {
        self.events.subscribe()
    }

    /// Record a new running job; returns its id and the token its runner must watch.
    pub fn start(&self, s: JobStart) -> Result<(String, CancellationToken), JobError> {
        let mut jobs = self.lock();
        let mut n = jobs.keys().next_back().copied().unwrap_or(0) + 1;
        // Another process may have written job files since we loaded: never overwrite one.
        while self.dir.join(format!("job-{n}.json")).exists() {
            n += 1;
        }
        let id = format!("job-{n}");
        let record = JobRecord {
            schema_version: 1,
            snapshot: JobSnapshot {
                job_id: id.clone(),
                kind: s.kind,
                title: s.title,
                delivery_status: if s.owner_session_id.is_some() {
                    DeliveryStatus::Pending
                } else {
                    DeliveryStatus::NotRequired
                },
                owner_session_id: s.owner_session_id,
                origin_tool_call_id: s.origin_tool_call_id,
                status: JobStatus::Running,
                created_at: now_rfc3339(),
                ended_at: None,
                reference: s.reference,
                preview: s.preview,
                error: None,
                progress: None,
                delivery_error: None,
            },
            result: None,
            detail: None,
        };
        write_record(&self.dir, &record)?;
        self.writes.fetch_add(1, Ordering::Relaxed);
        let cancel = CancellationToken::new();
        let snap = record.snapshot.clone();
        jobs.insert(
            n,
            Live {
                record,
                cancel: cancel.clone(),
                written_at: Some(Instant::now()),
                dirty: false,
                flush_scheduled: false,
            },
        );
        drop(jobs);
        let _ = self.events.send(snap);
        Ok((id, cancel))
    }

    /// Change a job and persist it: at once, or (`Coalesced`) when the last write is at
    /// least [`PROGRESS_INTERVAL`] old, else by a timer. Changes to a finished job are
    /// ignored (a late progress report after a cancel must not resurrect it), except delivery
    /// bookkeeping.
    fn update(
        &self,
        id: &str,
        durability: Durability,
        f: impl FnOnce(&mut JobRecord),
    ) -> Result<JobSnapshot, JobError> {
        let mut jobs = self.lock();
        let n = job_number_of(id).ok_or_else(|| JobError::Unknown(id.to_string()))?;
        let live = jobs
            .get_mut(&n)
            .ok_or_else(|| JobError::Unknown(id.to_string()))?;
        let mut next = live.record.clone();
        f(&mut next);
        let due = live
            .written_at
            .map(|t| t + PROGRESS_INTERVAL)
            .filter(|due| durability == Durability::Coalesced && *due > Instant::now());
        match due {
            Some(due) => {
                live.dirty = true;
                if !live.flush_scheduled {
                    live.flush_scheduled = self.flush_at(n, due);
                }
                if !live.flush_scheduled {
                    // No timer to be had: write now rather than leave the change unwritten.
                    write_record(&self.dir, &next)?;
                    self.writes.fetch_add(1, Ordering::Relaxed);
                    live.written_at = Some(Instant::now());
                    live.dirty = false;
                }
            }
            None => {
                write_record(&self.dir, &next)?;
                self.writes.fetch_add(1, Ordering::Relaxed);
                live.written_at = Some(Instant::now());
                live.dirty = false;
            }
        }
        live.record = next;
        let snap = live.record.snapshot.clone();
        drop(jobs);
        let _ = self.events.send(snap.clone());
        Ok(snap)
    }

    /// Write job `n`'s record at `due` if it is still dirty then. False when no timer can be
    /// set (the shared runtime would not start).
    fn flush_at(&self, n: u64, due: Instant) -> bool {
        let Ok(rt) = crate::net::runtime::handle() else {
            return false;
        };
        let (jobs, dir, writes): (Weak<Jobs>, PathBuf, Arc<AtomicU64>) = (
            Arc::downgrade(&self.jobs),
            self.dir.clone(),
            self.writes.clone(),
        );
        rt.spawn(async move {
            tokio::time::sleep_until(due.into()).await;
            let Some(jobs) = jobs.upgrade() else { return };
            let mut jobs = lock(&jobs);
            if let Some(live) = jobs.get_mut(&n) {
                live.flush_scheduled = false;
                flush(&dir, live, &writes);
            }
        });
        true
    }

    /// The number of job files this store has written.
    pub fn disk_writes(&self) -> u64 {
        self.writes.load(Ordering::Relaxed)
    }

    pub fn progress(&self, id: &str, progress: JobProgress) -> Result<(), JobError> {
        self.update(id, Durability::Coalesced, |r| {
            if !r.snapshot.status.is_final() {
                r.snapshot.progress = Some(progress);
            }
        })
        .map(|_| ())
    }

    /// Running ⇄ waiting (a workflow asking the author).
    pub fn set_waiting(&self, id: &str, waiting: bool) -> Result<(), JobError> {
        let target = if waiting {
            JobStatus::Waiting
        } else {
            JobStatus::Running
        };
        if self.get(id).is_some_and(|r| r.snapshot.status == target) {
            return Ok(());
        }
        self.update(id, Durability::Now, |r| {
            if !r.snapshot.status.is_final() {
                r.snapshot.status = if waiting {
                    JobStatus::Waiting
                } else {
                    JobStatus::Running
                };
            }
        })
        .map(|_| ())
    }

    pub fn set_detail(&self, id: &str, detail: Value) -> Result<(), JobError> {
        self.update(id, Durability::Coalesced, |r| r.detail = Some(detail))
            .map(|_| ())
    }

    /// The job ended. A job already cancelled stays cancelled whatever its runner reports.
    /// A failure is kept as its text: the job file is where the runner's error is shown.
    pub fn finish<E: std::fmt::Display>(
        &self,
        id: &str,
        outcome: Result<Value, E>,
    ) -> Result<JobSnapshot, JobError> {
        let cancelled = self.token(id).is_some_and(|t| t.is_cancelled());
        self.update(id, Durability::Now, |r| {
            if r.snapshot.status.is_final() {
                return;
            }
            r.snapshot.ended_at = Some(now_rfc3339());
            match outcome {
                _ if cancelled => {
                    r.snapshot.status = JobStatus::Cancelled;
                    r.snapshot.error = Some("cancelled".into());
                }
                Ok(v) => {
                    r.snapshot.status = JobStatus::Completed;
                    r.result = Some(v);
                }
                Err(e) => {
                    r.snapshot.status = JobStatus::Failed;
                    r.snapshot.error = Some(e.to_string());
                }
            }
        })
    }

    pub fn set_delivery(
        &self,
        id: &str,
        status: DeliveryStatus,
        error: Option<String>,
    ) -> Result<(), JobError> {
        self.update(id, Durability::Now, |r| {
            r.snapshot.delivery_status = status;
            r.snapshot.delivery_error = error;
        })
        .map(|_| ())
    }

    /// Ask a job to stop. `owner` None = the author (may cancel anything).
    pub fn cancel(&self, id: &str, owner: Option<&str>) -> Result<JobSnapshot, JobError> {
        let (token, snap) = {
            let jobs = self.lock();
            let live = job_number_of(id)
                .and_then(|n| jobs.get(&n))
                .ok_or_else(|| JobError::Unknown(id.to_string()))?;
            (live.cancel.clone(), live.record.snapshot.clone())
        };
        if let Some(o) = owner {
            if snap.owner_session_id.as_deref() != Some(o) {
                return Err(JobError::NotOwner(id.to_string()));
            }
        }
        if snap.status.is_final() {
            return Err(JobError::Finished {
                id: id.to_string(),
                status: snap.status.as_str(),
            });
        }
        token.cancel();
        Ok(snap)
    }

    pub fn token(&self, id: &str) -> Option<CancellationToken> {
        let jobs = self.lock();
        job_number_of(id)
            .and_then(|n| jobs.get(&n))
            .map(|l| l.cancel.clone())
    }

    pub fn get(&self, id: &str) -> Option<JobRecord> {
        let jobs = self.lock();
        job_number_of(id)
            .and_then(|n| jobs.get(&n))
            .map(|l| l.record.clone())
    }

    /// Snapshots, newest first; `owner` filters to one session's jobs.
    pub fn list(&self, owner: Option<&str>, status: Option<JobStatus>) -> Vec<JobSnapshot> {
        self.lock()
            .values()
            .rev()
            .map(|l| l.record.snapshot.clone())
            .filter(|s| owner.is_none() || s.owner_session_id.as_deref() == owner)
            .filter(|s| status.is_none_or(|st| s.status == st))
            .collect()
    }
}

impl Drop for JobStore {
    /// Write what the timers have not written yet.
    fn drop(&mut self) {
        let mut jobs = self.lock();
        for live in jobs.values_mut() {
            flush(&self.dir, live, &self.writes);
        }
    }
}

fn lock(jobs: &Jobs) -> std::sync::MutexGuard<'_, BTreeMap<u64, Live>> {
    jobs.lock().unwrap_or_else(|e| e.into_inner())
}

/// Write a job's record if it holds a change its file does not have.
fn flush(dir: &Path, live: &mut Live, writes: &AtomicU64) {
    if !live.dirty {
        return;
    }
    match write_record(dir, &live.record) {
        Ok(()) => {
            writes.fetch_add(1, Ordering::Relaxed);
            live.dirty = false;
            live.written_at = Some(Instant::now());
        }
        // Kept dirty: the next write of this job carries the change.
        Err(e) => tracing::warn!("{e}"),
    }
}

fn job_number(path: &Path) -> Option<u64> {
    let name = path.file_name()?.to_str()?;
    job_number_of(name.strip_suffix(".json")?)
}

fn job_number_of(id: &str) -> Option<u64> {
    id.strip_prefix("job-")?.parse().ok()
}

fn write_record(dir: &Path, record: &JobRecord) -> Result<(), JobError> {
    let path = dir.join(format!("{}.json", record.snapshot.job_id));
    let io = |source| JobError::Io {
        path: path.display().to_string(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(io)?;
    let bytes = serde_json::to_vec_pretty(record).map_err(|e| io(std::io::Error::other(e)))?;
    crate::workspace::atomic::atomic_write(&path, &bytes).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn start(store: &JobStore, owner: Option<&str>) -> (String, CancellationToken) {
        store
            .start(JobStart {
                kind: JobKind::Bash,
                title: "sleep".into(),
                owner_session_id: owner.map(str::to_string),
                origin_tool_call_id: None,
                reference: serde_json::json!({"command": "sleep 1"}),
                preview: None,
            })
            .expect("start")
    }

    #[test]
    fn a_job_is_a_file_that_survives_and_running_jobs_are_interrupted_on_open() {
        let dir = tempfile::tempdir().expect("tmp");
        let store = JobStore::open(dir.path(), true);
        let (a, _) = start(&store, Some("1"));
        let (b, _) = start(&store, Some("1"));
        store
            .finish(&b, Ok::<_, JobError>(serde_json::json!({"ok": true})))
            .expect("finish");
        assert!(dir.path().join(format!("{a}.json")).exists());
        let reopened = JobStore::open(dir.path(), true);
        assert_eq!(
            reopened.get(&a).expect("a").snapshot.status,
            JobStatus::Interrupted
        );
        let done = reopened.get(&b).expect("b");
        assert_eq!(done.snapshot.status, JobStatus::Completed);
        assert_eq!(done.result, Some(serde_json::json!({"ok": true})));
        // A new job never reuses an id.
        let (c, _) = start(&reopened, None);
        assert_eq!(c, "job-3");
    }

    #[test]
    fn cancel_is_for_the_owner_and_a_cancelled_job_stays_cancelled() {
        let dir = tempfile::tempdir().expect("tmp");
        let store = JobStore::open(dir.path(), true);
        let (id, token) = start(&store, Some("1"));
        assert!(matches!(
            store.cancel(&id, Some("2")),
            Err(JobError::NotOwner(_))
        ));
        store.cancel(&id, Some("1")).expect("cancel");
        assert!(token.is_cancelled());
        let snap = store
            .finish(&id, Ok::<_, JobError>(Value::Null))
            .expect("finish");
        assert_eq!(snap.status, JobStatus::Cancelled);
        assert!(matches!(
            store.cancel(&id, None),
            Err(JobError::Finished { .. })
        ));
        assert!(matches!(
            store.cancel("job-99", None),
            Err(JobError::Unknown(_))
        ));
        assert_eq!(store.list(Some("1"), Some(JobStatus::Cancelled)).len(), 1);
        assert!(store.list(Some("2"), None).is_empty());
    }

    fn on_disk(dir: &Path, id: &str) -> JobRecord {
        serde_json::from_slice(&std::fs::read(dir.join(format!("{id}.json"))).expect("read"))
            .expect("parse")
    }

    #[test]
    fn progress_is_coalesced_and_transitions_are_written_at_once() {
        let dir = tempfile::tempdir().expect("tmp");
        let store = JobStore::open(dir.path(), true);
        let mut events = store.subscribe();
        let (id, _) = start(&store, Some("1"));
        let started = store.disk_writes();
        for done in 1..=100 {
            let p = JobProgress {
                phase: None,
                done,
                total: 100,
            };
            store.progress(&id, p).expect("progress");
        }
        // Subscribers and readers see every report; the file gets at most a few.
        let mut seen = 0;
        while events.try_recv().is_ok() {
            seen += 1;
        }
        assert_eq!(seen, 101, "start + 100 reports");
        assert_eq!(store.get(&id).unwrap().snapshot.progress.unwrap().done, 100);
        assert!(
            store.disk_writes() - started <= 2,
            "{}",
            store.disk_writes()
        );
        // The last report reaches the file by the timer.
        std::thread::sleep(PROGRESS_INTERVAL * 3);
        assert_eq!(
            on_disk(dir.path(), &id).snapshot.progress.unwrap().done,
            100
        );
        // A status change is on disk when the call returns, progress with it.
        let p = JobProgress {
            phase: Some("last".into()),
            done: 7,
            total: 7,
        };
        store.progress(&id, p).expect("progress");
        store.set_waiting(&id, true).expect("waiting");
        let file = on_disk(dir.path(), &id);
        assert_eq!(file.snapshot.status, JobStatus::Waiting);
        assert_eq!(
            file.snapshot.progress.unwrap().phase.as_deref(),
            Some("last")
        );
        // So is the end, and nothing written later undoes it.
        store
            .finish(&id, Ok::<_, JobError>(Value::Null))
            .expect("finish");
        let p = JobProgress {
            phase: None,
            done: 1,
            total: 1,
        };
        store.progress(&id, p).expect("late progress");
        assert_eq!(
            on_disk(dir.path(), &id).snapshot.status,
            JobStatus::Completed
        );
        std::thread::sleep(PROGRESS_INTERVAL * 2);
        let file = on_disk(dir.path(), &id);
        assert_eq!(file.snapshot.status, JobStatus::Completed);
        assert_eq!(file.snapshot.progress.unwrap().done, 7);
        // A store dropped with a report still waiting writes it.
        let (other, _) = start(&store, None);
        store
            .set_detail(&other, serde_json::json!({"log": ["x"]}))
            .expect("detail");
        drop(store);
        assert_eq!(
            on_disk(dir.path(), &other).detail,
            Some(serde_json::json!({"log": ["x"]}))
        );
    }

    #[test]
    fn a_corrupt_job_file_is_skipped() {
        let dir = tempfile::tempdir().expect("tmp");
        std::fs::write(dir.path().join("job-1.json"), b"{not json").expect("write");
        let store = JobStore::open(dir.path(), true);
        assert!(store.list(None, None).is_empty());
        let (id, _) = start(&store, None);
        assert_eq!(id, "job-2");
    }
}
