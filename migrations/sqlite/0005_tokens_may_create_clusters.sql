-- An agent token an administrator allows to create its own cluster record
-- on first report (issue 13): 1 = allowed. Off for every existing token.
ALTER TABLE tokens ADD COLUMN may_create_clusters BIGINT NOT NULL DEFAULT 0;
