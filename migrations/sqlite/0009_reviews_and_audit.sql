-- Review memory and the audit trail (issue 17, docs/reviews.md).

-- An operator's decision about one recommendation of an estate, by its
-- stable identity (berth_engine::review::identity): 'planned' (link:
-- where the change is tracked), 'dismissed' (reason required) or
-- 'snoozed' (until a time and/or a condition). basis is the JSON of
-- berth_engine::review::Basis: every deciding fact's value, class and
-- exact flip thresholds when the decision was taken, which later
-- evaluations compare against to tell whether it still holds. One row per
-- identity: a new decision replaces the last (the audit keeps them all).
CREATE TABLE reviews (
    estate_id TEXT NOT NULL REFERENCES estates(id) ON DELETE CASCADE,
    identity TEXT NOT NULL,
    kind TEXT NOT NULL,
    link TEXT NOT NULL,
    reason TEXT NOT NULL,
    until_at BIGINT,
    -- JSON of berth_engine::review::Condition, or NULL.
    ask_when TEXT,
    basis TEXT NOT NULL,
    -- The estate version and evaluation time the decision was taken at.
    estate_version BIGINT NOT NULL,
    evaluated_at BIGINT NOT NULL,
    decided_by TEXT NOT NULL,
    decided_at BIGINT NOT NULL,
    PRIMARY KEY (estate_id, identity)
);

-- Every decision and every policy change: who, when, what, why. No
-- foreign key: the trail outlives a deleted estate.
CREATE TABLE audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    estate_id TEXT NOT NULL,
    actor TEXT NOT NULL,
    at BIGINT NOT NULL,
    -- 'review.planned', 'review.dismissed', 'review.snoozed',
    -- 'review.cleared' or 'policy.changed'.
    action TEXT NOT NULL,
    -- The recommendation's identity, or 'policy'.
    subject TEXT NOT NULL,
    -- Why, in the actor's words (may be empty).
    reason TEXT NOT NULL,
    -- JSON: what changed (a review's decision; a policy's changed fields).
    detail TEXT NOT NULL
);
CREATE INDEX audit_by_estate ON audit (estate_id, id);
