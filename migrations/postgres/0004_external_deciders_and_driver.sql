-- External deciders (SPEC §9) and the advice driver's state (SPEC §11).

-- A registered external decider. Its secret is never stored in clear: the
-- ciphertext columns hold "v1:" + base64(nonce || ChaCha20-Poly1305
-- ciphertext) under a key that lives outside the database (environment or
-- key file), with the decider's name as associated data so a ciphertext
-- cannot be moved to another decider's row. The fingerprint is what the
-- API shows instead of the secret.
CREATE TABLE deciders (
    name TEXT PRIMARY KEY NOT NULL,
    url TEXT NOT NULL,
    timeout_ms BIGINT NOT NULL,
    -- 1 or 0: portable across both backends through sqlx's Any driver.
    enabled BIGINT NOT NULL,
    -- The driver runs the decider on every estate this often; NULL: only
    -- when someone asks.
    interval_s BIGINT,
    secret_ciphertext TEXT,
    secret_fingerprint TEXT,
    -- The secret before the last rotation, still sent (a second signature)
    -- until previous_expires_at, so a decider can switch without a gap.
    previous_ciphertext TEXT,
    previous_fingerprint TEXT,
    previous_expires_at BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- Every run of an external decider, by a person or by the driver, with
-- the estate version and policy it ran against, so pages show history.
CREATE TABLE decider_runs (
    id BIGSERIAL PRIMARY KEY,
    estate_id TEXT NOT NULL REFERENCES estates(id) ON DELETE CASCADE,
    decider TEXT NOT NULL,
    estate_version BIGINT NOT NULL,
    content_digest TEXT NOT NULL,
    policy_digest TEXT NOT NULL,
    -- 'ok', 'deferred' (429/503: try later) or 'failed'.
    outcome TEXT NOT NULL,
    -- 'driver' or the name of the person or token that asked.
    started_by TEXT NOT NULL,
    started_at BIGINT NOT NULL,
    run_time_ms BIGINT NOT NULL,
    -- The decider's entry of the comparison (proposals, accepted, refused
    -- with reasons, gain), as JSON.
    entry TEXT NOT NULL
);
CREATE INDEX decider_runs_by_estate ON decider_runs (estate_id, decider, started_at);

-- The driver's advice snapshots: the baseline advice for an estate at one
-- version and policy.
CREATE TABLE advice_snapshots (
    id BIGSERIAL PRIMARY KEY,
    estate_id TEXT NOT NULL REFERENCES estates(id) ON DELETE CASCADE,
    estate_version BIGINT NOT NULL,
    content_digest TEXT NOT NULL,
    policy_digest TEXT NOT NULL,
    evaluated_at BIGINT NOT NULL,
    moves BIGINT NOT NULL,
    result TEXT NOT NULL
);
CREATE INDEX advice_snapshots_by_estate ON advice_snapshots (estate_id, evaluated_at);

-- Per-subject backoff, shared by every replica (whichever runs the next
-- pass must honour it). subject: "estate:ID" or "decider:NAME@ID".
CREATE TABLE driver_backoff (
    subject TEXT PRIMARY KEY NOT NULL,
    -- 'deferred' or 'failed': the last outcome.
    kind TEXT NOT NULL,
    attempts BIGINT NOT NULL,
    until_at BIGINT NOT NULL,
    last_error TEXT NOT NULL
);

-- One row per pass, whoever ran it: the health surface reads the newest,
-- and the replica test reads them all to prove passes never overlap.
CREATE TABLE driver_passes (
    id BIGSERIAL PRIMARY KEY,
    replica TEXT NOT NULL,
    -- Milliseconds: passes can be shorter than a second.
    started_ms BIGINT NOT NULL,
    finished_ms BIGINT NOT NULL,
    backlog BIGINT NOT NULL,
    evaluated BIGINT NOT NULL,
    deferred BIGINT NOT NULL,
    failed BIGINT NOT NULL,
    held_back BIGINT NOT NULL
);
