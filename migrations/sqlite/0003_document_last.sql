-- The estate document moves to the end of its row (SQLite only).
--
-- SQLite stores a row's columns in order and spills what does not fit in a
-- page into a chain of overflow pages, which can only be walked from the
-- start. The document (1.4 MB for 1,000 services, 7 MB for 5,000) sat before
-- content_digest, policy, policy_digest and the times, so every read of an
-- estate's summary — which every request makes, to key the caches — walked
-- hundreds to thousands of pages. With the document last, the summary and
-- the policy are read from the row's first page.
--
-- PostgreSQL keeps large values out of line (TOAST), so its schema needs no
-- such change and keeps its column order.
--
-- SQLite cannot reorder columns; a column added is added last. The DEFAULT
-- is what ADD COLUMN ... NOT NULL requires; every insert names the document.
ALTER TABLE estates ADD COLUMN document_last TEXT NOT NULL DEFAULT '';
UPDATE estates SET document_last = document;
ALTER TABLE estates DROP COLUMN document;
ALTER TABLE estates RENAME COLUMN document_last TO document;
