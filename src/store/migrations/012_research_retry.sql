-- fn_research_retry (src/tools/fusion/research.rs; fusion-notes §3.2): a failed or cancelled
-- research run is started again as a new run that names the run it retries.
ALTER TABLE nbook_research_run ADD COLUMN retry_of TEXT;  -- the id of the run this one retries (RR-…)
