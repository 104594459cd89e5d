-- nbook's derived world data. NeuroBook ignores tables and indexes it does not know, and
-- everything here can be dropped and rebuilt from WorldSubject/WorldSlice/WorldPatch.
--
-- Per-subject checkpoints: the reduced state (and the persistent issues raised so far) of a
-- subject after all its patches with instant <= "instant". Before use a checkpoint is
-- validated against the live WorldPatch rows: the number of the subject's patches up to its
-- instant, the highest rowid among them and that patch's id must still match, so rows that
-- another program (NeuroBook) inserted or deleted are noticed.
CREATE TABLE IF NOT EXISTS "nbook_world_checkpoint" (
  "subjectId" TEXT NOT NULL,
  "instant" BIGINT NOT NULL,
  "subjectType" TEXT NOT NULL,
  "patchCount" INTEGER NOT NULL,
  "maxRowid" INTEGER NOT NULL,
  "maxPatchId" TEXT NOT NULL,
  "state" TEXT NOT NULL,
  "issues" TEXT NOT NULL,
  "origins" TEXT NOT NULL,
  PRIMARY KEY ("subjectId", "instant")
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS "nbook_world_meta" ("key" TEXT NOT NULL PRIMARY KEY, "value" TEXT NOT NULL);
-- Reading a slice's patches (slice.get, edit, delete, and the ON DELETE CASCADE from
-- WorldSlice) would otherwise scan every patch: NeuroBook's DDL has no index on sliceId.
CREATE INDEX IF NOT EXISTS "nbook_WorldPatch_sliceId_seq_idx" ON "WorldPatch"("sliceId", "seq");
