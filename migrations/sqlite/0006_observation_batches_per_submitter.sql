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
-- SQLite cannot change a primary key in place: the table is rebuilt, its
-- rows copied, and the new one takes the old name.
CREATE TABLE observation_batches_v6 (
    estate_id TEXT NOT NULL REFERENCES estates(id) ON DELETE CASCADE,
    submitter TEXT NOT NULL,
    batch_id TEXT NOT NULL,
    -- SHA-256 of the batch body: the same id with another body is refused.
    body_digest TEXT NOT NULL,
    -- The estate version the batch produced, and how many observations.
    version BIGINT NOT NULL,
    applied BIGINT NOT NULL,
    received_at BIGINT NOT NULL,
    PRIMARY KEY (estate_id, submitter, batch_id)
);
INSERT INTO observation_batches_v6 (estate_id, submitter, batch_id, body_digest, version, applied, received_at)
    SELECT estate_id, '', batch_id, body_digest, version, applied, received_at FROM observation_batches;
DROP TABLE observation_batches;
ALTER TABLE observation_batches_v6 RENAME TO observation_batches;
