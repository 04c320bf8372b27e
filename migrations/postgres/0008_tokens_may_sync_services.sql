-- An agent token an administrator allows to re-sync its cluster's services
-- from the Kubernetes API (`berth agent --kubernetes`, issue 14): 1 =
-- allowed. Off for every existing token: an agent token otherwise only
-- posts measured facts, so one stolen from a cluster cannot rewrite the
-- estate's services.
ALTER TABLE tokens ADD COLUMN may_sync_services BIGINT NOT NULL DEFAULT 0;
