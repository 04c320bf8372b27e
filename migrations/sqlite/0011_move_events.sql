-- Applied moves (issue 36, docs/outcomes.md).

-- One estate write that changed the cluster of at least one service: a
-- Kubernetes import or an agent's re-sync, or an estate upload.
-- before_document is the estate document
-- as it was just before the write, which the outcome of its moves is
-- measured against (the estates table keeps only the newest document).
CREATE TABLE estate_moves (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    estate_id TEXT NOT NULL REFERENCES estates(id) ON DELETE CASCADE,
    -- The version the write made.
    estate_version BIGINT NOT NULL,
    moved_at BIGINT NOT NULL,
    -- 'kubernetes_import' (a write under the estate lock: an import or
    -- an agent's re-sync; fact updates and observations never move a
    -- service) or 'estate_upload' (the document replaced).
    noticed_by TEXT NOT NULL,
    before_document TEXT NOT NULL
);
CREATE INDEX estate_moves_by_estate ON estate_moves (estate_id, id);

-- One service whose cluster the write changed, and what Berth had said
-- of it when the write happened (attributed in the write's transaction):
-- 'advised' (a recommendation in an advice snapshot within the
-- lookback; snapshot_id and advised_at name it), 'planned' (a planned
-- review of it) or 'unadvised'. identity is the recommendation's
-- (berth_engine::review::identity: a compound step's names every
-- member), or the move's own for an unadvised one. prediction is the JSON
-- of the advice's step as it was (gain, terms, confidence, deciding
-- facts), kept here because snapshots are pruned; NULL for a move judged
-- by the model alone.
CREATE TABLE move_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    move_id BIGINT NOT NULL REFERENCES estate_moves(id) ON DELETE CASCADE,
    estate_id TEXT NOT NULL REFERENCES estates(id) ON DELETE CASCADE,
    service TEXT NOT NULL,
    from_cluster TEXT NOT NULL,
    to_cluster TEXT NOT NULL,
    basis TEXT NOT NULL,
    identity TEXT NOT NULL,
    -- No foreign key: snapshots are pruned, the event is kept.
    snapshot_id BIGINT,
    advised_at BIGINT,
    prediction TEXT
);
CREATE INDEX move_events_by_estate ON move_events (estate_id, id);
