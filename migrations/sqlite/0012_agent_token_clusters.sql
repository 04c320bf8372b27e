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

UPDATE tokens SET clusters = (
    SELECT json_group_array(c) FROM (
        SELECT DISTINCT c FROM (
            SELECT p.cluster AS c FROM agent_probes p
             WHERE p.estate_id = tokens.estate_id
               AND p.submitter = 'token:' || tokens.id
            UNION
            SELECT json_extract(j.value, '$.id') AS c
              FROM estates e, json_each(e.document, '$.clusters') j
             WHERE e.id = tokens.estate_id
               AND (substr(COALESCE(json_extract(j.value, '$.cpu_free.source'), ''), 1,
                           length('token:' || tokens.id || ' (')) = 'token:' || tokens.id || ' ('
                 OR substr(COALESCE(json_extract(j.value, '$.memory_free_gib.source'), ''), 1,
                           length('token:' || tokens.id || ' (')) = 'token:' || tokens.id || ' (')
        ) WHERE c IS NOT NULL ORDER BY c
    )
)
WHERE role = 'agent';
