-- The clusters an agent token may write for (issue 37): a JSON array of
-- cluster ids, NULL for every other role. Every observation, capacity
-- figure, probe registration, cluster record and service re-sync an
-- agent token sends must concern one of them, or it is refused (403).
--
-- Existing agent tokens are scoped to the clusters they have already
-- been seen reporting for, which is what they were made for:
--  * the clusters they registered a probe address for (agent_probes,
--    submitter `token:<id>`), and
--  * the clusters whose free CPU or memory in the token's estate was last
--    reported by them (the fact's source is `token:<id> (<name>)`).
-- An agent token with no such evidence gets `[]`: it may write nothing
-- until an administrator replaces it with one that names its clusters
-- (its 403 says so). Guessing wider would leave exactly the hole this
-- closes: a token for one cluster writing for another.
ALTER TABLE tokens ADD COLUMN clusters TEXT;

UPDATE tokens t SET clusters = COALESCE((
    SELECT json_agg(s.c ORDER BY s.c)::text FROM (
        SELECT p.cluster AS c FROM agent_probes p
         WHERE p.estate_id = t.estate_id
           AND p.submitter = 'token:' || t.id
        UNION
        SELECT j ->> 'id' AS c
          FROM estates e,
               jsonb_array_elements(COALESCE(e.document::jsonb -> 'clusters', '[]'::jsonb)) j
         WHERE e.id = t.estate_id
           AND (starts_with(COALESCE(j -> 'cpu_free' ->> 'source', ''), 'token:' || t.id || ' (')
             OR starts_with(COALESCE(j -> 'memory_free_gib' ->> 'source', ''), 'token:' || t.id || ' ('))
    ) s WHERE s.c IS NOT NULL
), '[]')
WHERE t.role = 'agent';
