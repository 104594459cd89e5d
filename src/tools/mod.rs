//! Tool implementations, one file per group, and `register_all`, the list of built-ins.
//! [`registry`] builds the registry the composition root (`src/cli`) hands to the engine.

pub mod agents;
pub mod apply_patch;
pub mod bash;
pub mod collab;
pub mod content_edit;
pub mod control;
pub mod files;
pub mod fusion;
pub mod partial;
pub mod patch;
pub mod plot_read;
pub mod plot_write;
pub mod preview_diff;
pub mod read_window;
pub mod research;
pub mod revert;
pub mod sql;
pub mod story_author;
pub mod subject_memory;
pub mod tasks;
pub mod web;
pub mod workflows;
pub mod world;

use std::sync::Arc;

use crate::engine::registry::Registry;

/// A built-in tool the registry refused (its argument schema does not compile): a bug in
/// nbook, reported with the registry's message.
#[derive(Debug, thiserror::Error)]
#[error("cannot register the built-in tools: {0}")]
pub struct RegisterError(#[from] crate::engine::registry::RegistryError);

/// A registry of every built-in tool, for the engine's `open` (the engine does not know the
/// tools; the composition root gives them to it).
///
/// Built once per process and shared: generating 46 argument schemas and compiling their
/// validators took a few milliseconds of every open (`tui/open_to_listed_frame` +19 %), and
/// tests and benches open many engines. The built-in tools never change while nbook runs.
pub fn registry() -> Result<Registry, RegisterError> {
    static BUILT: std::sync::OnceLock<Registry> = std::sync::OnceLock::new();
    if let Some(r) = BUILT.get() {
        return Ok(r.clone());
    }
    let mut registry = Registry::default();
    register_all(&mut registry)?;
    Ok(BUILT.get_or_init(|| registry).clone())
}

/// Register every built-in tool.
pub fn register_all(registry: &mut Registry) -> Result<(), RegisterError> {
    registry.register(Arc::new(files::Read))?;
    registry.register(Arc::new(files::Write))?;
    registry.register(Arc::new(files::Edit))?;
    registry.register(Arc::new(apply_patch::ApplyPatch))?;
    registry.register(Arc::new(bash::Bash))?;
    registry.register(Arc::new(plot_read::GetStoryTree))?;
    registry.register(Arc::new(plot_read::GetStoryThread))?;
    registry.register(Arc::new(plot_read::GetStorySceneContext))?;
    registry.register(Arc::new(plot_read::GetStoryChapter))?;
    registry.register(Arc::new(plot_read::GetChapterWriterBrief))?;
    registry.register(Arc::new(plot_read::GetStoryPromise))?;
    registry.register(Arc::new(plot_read::GetStoryDecision))?;
    registry.register(Arc::new(plot_write::SaveStoryAct))?;
    registry.register(Arc::new(plot_write::SaveStoryChapter))?;
    registry.register(Arc::new(plot_write::SaveStoryThread))?;
    registry.register(Arc::new(plot_write::SaveStoryScene))?;
    registry.register(Arc::new(plot_write::SaveStoryPromise))?;
    registry.register(Arc::new(plot_write::SavePromiseBeat))?;
    registry.register(Arc::new(plot_write::SaveStoryDecision))?;
    registry.register(Arc::new(story_author::DeleteStoryNode))?;
    registry.register(Arc::new(revert::RevertChange))?;
    registry.register(Arc::new(world::ExecuteWorld))?;
    registry.register(Arc::new(world::GetSceneWorldContext))?;
    registry.register(Arc::new(sql::ExecuteSql))?;
    registry.register(Arc::new(tasks::TaskCreate))?;
    registry.register(Arc::new(tasks::TaskSetStatus))?;
    registry.register(Arc::new(control::ReportResult))?;
    registry.register(Arc::new(control::SwitchMode))?;
    registry.register(Arc::new(agents::GetAgentProfile))?;
    registry.register(Arc::new(agents::GetSession))?;
    registry.register(Arc::new(collab::CreateAgent))?;
    registry.register(Arc::new(collab::InvokeAgent))?;
    registry.register(Arc::new(collab::GetAgent))?;
    registry.register(Arc::new(collab::DetachAgent))?;
    registry.register(Arc::new(collab::RequestUserInput))?;
    registry.register(Arc::new(web::WebFetch))?;
    registry.register(Arc::new(web::WebSearch))?;
    registry.register(Arc::new(research::NovelRankings))?;
    registry.register(Arc::new(research::NovelBookDetail))?;
    registry.register(Arc::new(subject_memory::SubjectEventAppend))?;
    registry.register(Arc::new(subject_memory::SubjectMemoryUpdate))?;
    registry.register(Arc::new(subject_memory::SubjectRagSearch))?;
    registry.register(Arc::new(workflows::ListWorkflows))?;
    registry.register(Arc::new(workflows::RunWorkflow))?;
    registry.register(Arc::new(workflows::ListJobs))?;
    registry.register(Arc::new(workflows::GetJob))?;
    registry.register(Arc::new(workflows::CancelJob))?;
    registry.register(Arc::new(fusion::tasks::TaskCreate))?;
    registry.register(Arc::new(fusion::tasks::TaskList))?;
    registry.register(Arc::new(fusion::tasks::TaskSearch))?;
    registry.register(Arc::new(fusion::tasks::TaskShow))?;
    registry.register(Arc::new(fusion::tasks::TaskUpdate))?;
    registry.register(Arc::new(fusion::tasks::TaskAddDep))?;
    registry.register(Arc::new(fusion::tasks::TaskDone))?;
    registry.register(Arc::new(fusion::tasks::TaskLog))?;
    registry.register(Arc::new(fusion::tasks::TaskLogsRead))?;
    registry.register(Arc::new(fusion::tasks::TaskPromptWrite))?;
    registry.register(Arc::new(fusion::tasks::TaskPromote))?;
    registry.register(Arc::new(fusion::tasks::TaskFileScopeAdd))?;
    registry.register(Arc::new(fusion::tasks::TaskMove))?;
    registry.register(Arc::new(fusion::tasks::TaskPause))?;
    registry.register(Arc::new(fusion::tasks::TaskSteer))?;
    registry.register(Arc::new(fusion::tasks::TaskApprovePlan))?;
    registry.register(Arc::new(fusion::tasks::TaskRejectPlan))?;
    registry.register(Arc::new(fusion::review::ReviewSpec))?;
    registry.register(Arc::new(fusion::docs::TaskDocumentWrite))?;
    registry.register(Arc::new(fusion::docs::TaskDocumentRead))?;
    registry.register(Arc::new(fusion::docs::GoalList))?;
    registry.register(Arc::new(fusion::docs::GoalShow))?;
    registry.register(Arc::new(fusion::goals::GoalCreate))?;
    registry.register(Arc::new(fusion::goals::GoalArchive))?;
    registry.register(Arc::new(fusion::agents::ListAgents))?;
    registry.register(Arc::new(fusion::agents::DelegateTask))?;
    registry.register(Arc::new(fusion::agents::SpawnAgent))?;
    registry.register(Arc::new(fusion::agents::AskQuestion))?;
    registry.register(Arc::new(fusion::agents::HeartbeatDone))?;
    registry.register(Arc::new(fusion::durable_agents::AgentCreate))?;
    registry.register(Arc::new(fusion::durable_agents::AgentDelete))?;
    registry.register(Arc::new(fusion::durable_agents::GetAgentConfig))?;
    registry.register(Arc::new(fusion::durable_agents::UpdateAgentConfig))?;
    registry.register(Arc::new(fusion::durable_agents::UpdateIdentity))?;
    registry.register(Arc::new(fusion::mailbox::SendMessage))?;
    registry.register(Arc::new(fusion::mailbox::ReadMessages))?;
    registry.register(Arc::new(fusion::mailbox::PostRoomMessage))?;
    registry.register(Arc::new(fusion::mailbox::RoomCreate))?;
    registry.register(Arc::new(fusion::mailbox::RoomAddMembers))?;
    registry.register(Arc::new(fusion::merge::MergeTaskDraft))?;
    registry.register(Arc::new(fusion::merge::ReportBuildFailure))?;
    registry.register(Arc::new(fusion::series::AcquireRepoWorktree))?;
    registry.register(Arc::new(fusion::memory::MemorySearch))?;
    registry.register(Arc::new(fusion::memory::MemoryGet))?;
    registry.register(Arc::new(fusion::memory::MemoryAppend))?;
    registry.register(Arc::new(fusion::artifacts::ArtifactRegister))?;
    registry.register(Arc::new(fusion::artifacts::ArtifactList))?;
    registry.register(Arc::new(fusion::artifacts::ArtifactView))?;
    registry.register(Arc::new(fusion::web::FnWebFetch))?;
    registry.register(Arc::new(fusion::workflows::WorkflowList))?;
    registry.register(Arc::new(fusion::workflows::WorkflowGet))?;
    registry.register(Arc::new(fusion::workflows::WorkflowValidate))?;
    registry.register(Arc::new(fusion::workflows::WorkflowSelect))?;
    registry.register(Arc::new(fusion::workflows::WorkflowCreate))?;
    registry.register(Arc::new(fusion::workflows::WorkflowUpdate))?;
    registry.register(Arc::new(fusion::workflows::WorkflowDelete))?;
    registry.register(Arc::new(fusion::workflows::WorkflowSettings))?;
    registry.register(Arc::new(fusion::workflows::TraitList))?;
    registry.register(Arc::new(fusion::research::ResearchRun))?;
    registry.register(Arc::new(fusion::research::ResearchList))?;
    registry.register(Arc::new(fusion::research::ResearchGet))?;
    registry.register(Arc::new(fusion::research::ResearchCancel))?;
    registry.register(Arc::new(fusion::research::ResearchRetry))?;
    registry.register(Arc::new(fusion::evaluations::AgentRate))?;
    registry.register(Arc::new(fusion::evaluations::ReadEvaluations))?;
    registry.register(Arc::new(fusion::evaluations::ReflectOnPerformance))?;
    Ok(())
}
