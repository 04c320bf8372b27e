-- A session started by signing in with an API token remembers the token,
-- so revoking the token ends the session too (not 12 hours later).
ALTER TABLE sessions ADD COLUMN token_id TEXT;

-- Observation batches already applied, by the id the agent gave them: a
-- retry of the same batch is answered from here instead of applied twice.
-- Written in the same transaction as the estate change it records.
CREATE TABLE observation_batches (
    estate_id TEXT NOT NULL REFERENCES estates(id) ON DELETE CASCADE,
    batch_id TEXT NOT NULL,
    -- SHA-256 of the batch body: the same id with another body is refused.
    body_digest TEXT NOT NULL,
    -- The estate version the batch produced, and how many observations.
    version BIGINT NOT NULL,
    applied BIGINT NOT NULL,
    received_at BIGINT NOT NULL,
    PRIMARY KEY (estate_id, batch_id)
);
