-- Observation batch ids are per submitter (issue 15): the key was (estate,
-- batch id), so one agent reusing another's id — ids are often predictable,
-- e.g. "<cluster>/<tick>" — was refused with 409, and could block another
-- agent's batches. Now it is (estate, submitter, batch id), the submitter
-- being the principal's subject (`token:<id>`, or a user name).
--
-- Rows recorded before this migration are kept with submitter '' (who sent
-- them was never stored); such a row answers to every submitter, as before,
-- so the retry of a batch sent just before the upgrade is not applied twice.
--
-- The DEFAULT fills the existing rows and is then dropped, so every insert
-- must name its submitter (as on SQLite).
ALTER TABLE observation_batches ADD COLUMN submitter TEXT NOT NULL DEFAULT '';
ALTER TABLE observation_batches ALTER COLUMN submitter DROP DEFAULT;
ALTER TABLE observation_batches DROP CONSTRAINT observation_batches_pkey;
ALTER TABLE observation_batches ADD PRIMARY KEY (estate_id, submitter, batch_id);
