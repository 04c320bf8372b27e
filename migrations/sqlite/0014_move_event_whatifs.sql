-- Applied moves held to a saved what-if (issue 36 item 1,
-- docs/outcomes.md): a move no advice snapshot recommended and no planned
-- review named, which a what-if saved within the lookback contained, has
-- basis 'whatif'; scenario names the what-if (saved what-ifs may be
-- edited or deleted since: the name is kept as it was, and prediction
-- holds what the what-if predicted for the move, advised_at when it was
-- saved). NULL for every other basis.
ALTER TABLE move_events ADD COLUMN scenario TEXT;
