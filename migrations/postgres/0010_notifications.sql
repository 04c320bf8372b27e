-- Notification channels and their deliveries (docs/notifications.md).

-- A channel an administrator configured: where recommendations are sent
-- and which are worth sending. kind: 'webhook' (signed, Standard Webhooks
-- and Berth-Signature headers), 'slack' or 'teams' (incoming webhooks,
-- whose URL is their credential). A webhook channel's secret is sealed
-- like a decider's, with "channel:" + name as associated data.
CREATE TABLE notification_channels (
    name TEXT PRIMARY KEY NOT NULL,
    kind TEXT NOT NULL,
    url TEXT NOT NULL,
    -- A move is sent when its gain (points) is at least this ...
    min_gain DOUBLE PRECISION NOT NULL,
    -- ... and its confidence class is this one or better.
    min_confidence TEXT NOT NULL,
    -- 1 or 0: portable across both backends through sqlx's Any driver.
    enabled BIGINT NOT NULL,
    secret_ciphertext TEXT,
    secret_fingerprint TEXT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL
);

-- One recommendation to send to one channel. The unique key is the
-- deduplication: a recommendation (its identity) is sent once per estate
-- version to each channel, however many passes or snapshots see it.
CREATE TABLE notification_deliveries (
    id BIGSERIAL PRIMARY KEY,
    channel TEXT NOT NULL REFERENCES notification_channels(name) ON DELETE CASCADE,
    estate_id TEXT NOT NULL REFERENCES estates(id) ON DELETE CASCADE,
    identity TEXT NOT NULL,
    estate_version BIGINT NOT NULL,
    -- The Standard Webhooks message id, the same on every attempt, so a
    -- receiver can drop a repeat.
    message_id TEXT NOT NULL,
    -- The exact body sent on every attempt.
    body TEXT NOT NULL,
    -- 'pending' (to be sent at next_attempt_at), 'delivered' or 'failed'
    -- (given up).
    status TEXT NOT NULL,
    attempts BIGINT NOT NULL,
    created_at BIGINT NOT NULL,
    next_attempt_at BIGINT,
    last_attempt_at BIGINT,
    -- The HTTP status of the last reply; NULL when there was none.
    last_status BIGINT,
    last_error TEXT NOT NULL,
    delivered_at BIGINT,
    UNIQUE (channel, estate_id, identity, estate_version)
);
CREATE INDEX notification_deliveries_due ON notification_deliveries (status, next_attempt_at);

-- Per channel and estate, the estate version and policy whose advice was
-- last looked at for that channel, so each is looked at once; a channel
-- created or changed later starts with none and catches up.
CREATE TABLE notification_cursors (
    channel TEXT NOT NULL REFERENCES notification_channels(name) ON DELETE CASCADE,
    estate_id TEXT NOT NULL REFERENCES estates(id) ON DELETE CASCADE,
    estate_version BIGINT NOT NULL,
    policy_digest TEXT NOT NULL,
    PRIMARY KEY (channel, estate_id)
);
