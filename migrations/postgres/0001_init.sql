-- Berth's schema (PostgreSQL). The SQLite twin is ../sqlite/0001_init.sql;
-- they are kept apart so that each backend can evolve with its own types,
-- and are identical today: portable types only, times as Unix seconds
-- (BIGINT), so the server reads rows the same way from either.

-- An estate is stored whole, as its canonical estate file: the engine needs
-- the whole estate for every answer, and storing it as one row makes every
-- change (an import, a batch of facts) a single atomic write that can never
-- leave a mix of old and new.
CREATE TABLE estates (
    id TEXT PRIMARY KEY NOT NULL,
    name TEXT NOT NULL,
    -- Bumped by every change to the document; results name it.
    version BIGINT NOT NULL,
    document TEXT NOT NULL,
    -- The engine's content digest of the document (export::version).
    content_digest TEXT NOT NULL,
    -- The full policy, defaults included, as JSON; and its digest.
    policy TEXT NOT NULL,
    policy_digest TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE scenarios (
    estate_id TEXT NOT NULL REFERENCES estates(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    body TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    updated_by TEXT NOT NULL,
    PRIMARY KEY (estate_id, name)
);

CREATE TABLE users (
    name TEXT PRIMARY KEY NOT NULL,
    role TEXT NOT NULL,
    -- Argon2id PHC string; the password itself is never stored.
    password_hash TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE TABLE tokens (
    id TEXT PRIMARY KEY NOT NULL,
    -- SHA-256 of the token; tokens carry 256 random bits, so a fast hash
    -- is enough (there is nothing to brute-force) and lookups stay cheap.
    hash TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    role TEXT NOT NULL,
    -- When set, the token may touch this estate only.
    estate_id TEXT,
    created_at BIGINT NOT NULL,
    created_by TEXT NOT NULL,
    revoked_at BIGINT
);

CREATE TABLE sessions (
    -- SHA-256 of the session id held in the browser's cookie.
    id_hash TEXT PRIMARY KEY NOT NULL,
    subject TEXT NOT NULL,
    role TEXT NOT NULL,
    estate_id TEXT,
    csrf TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL
);

-- One-off facts about this installation (e.g. that the sample was seeded,
-- so deleting it does not bring it back at the next start).
CREATE TABLE settings (
    key TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);
