-- The optimum within the move cap that berth-solver (HiGHS) proved for an
-- advice snapshot, computed in the background after the driver stored it
-- (issue 33; docs/advice.md §6b). One row per snapshot, only when proven;
-- deleted with its snapshot. Costs are points (estate cost + copy cost).
CREATE TABLE advice_proofs (
    snapshot_id BIGINT PRIMARY KEY REFERENCES advice_snapshots(id) ON DELETE CASCADE,
    estate_id TEXT NOT NULL REFERENCES estates(id) ON DELETE CASCADE,
    estate_version BIGINT NOT NULL,
    policy_digest TEXT NOT NULL,
    -- The snapshot's evaluation time, and when the proof was finished
    -- (unix seconds).
    evaluated_at BIGINT NOT NULL,
    computed_at BIGINT NOT NULL,
    max_moves BIGINT NOT NULL,
    cost_before DOUBLE PRECISION NOT NULL,
    advice_cost DOUBLE PRECISION NOT NULL,
    optimum_cost DOUBLE PRECISION NOT NULL,
    solve_ms BIGINT NOT NULL
);
CREATE INDEX advice_proofs_by_estate ON advice_proofs (estate_id, estate_version);
