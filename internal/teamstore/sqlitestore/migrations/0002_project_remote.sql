-- A project's git remote (its storage of record) and branch; empty for a
-- vault kept only in the data directory.

ALTER TABLE projects ADD COLUMN remote TEXT NOT NULL DEFAULT '';
ALTER TABLE projects ADD COLUMN branch TEXT NOT NULL DEFAULT '';
