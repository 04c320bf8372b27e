-- Where each cluster's agent answers round-trip probes (issue 14): an agent
-- sends its probe address with every observations batch and is told its
-- peers' in the answer, so agents measure the round trip between clusters
-- themselves. One row per (estate, cluster): the latest address wins.
-- `submitter` is who registered it (the principal's subject), for people
-- reading the table; `updated_at` lets the server leave out agents that
-- stopped reporting.
CREATE TABLE agent_probes (
    estate_id TEXT NOT NULL REFERENCES estates(id) ON DELETE CASCADE,
    cluster TEXT NOT NULL,
    address TEXT NOT NULL,
    submitter TEXT NOT NULL,
    updated_at BIGINT NOT NULL,
    PRIMARY KEY (estate_id, cluster)
);
