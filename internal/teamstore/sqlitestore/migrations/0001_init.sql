-- Team server metadata, first schema. Times are microseconds since the Unix
-- epoch (UTC).

CREATE TABLE projects (
	id         TEXT PRIMARY KEY,
	name       TEXT NOT NULL UNIQUE,
	created_at INTEGER NOT NULL
);

CREATE TABLE api_keys (
	id           TEXT PRIMARY KEY,
	name         TEXT NOT NULL,
	hash         BLOB NOT NULL UNIQUE,
	read_only    INTEGER NOT NULL DEFAULT 0,
	created_at   INTEGER NOT NULL,
	last_used_at INTEGER,
	revoked_at   INTEGER
);

-- A name is unique among active keys; a revoked key keeps its name for the
-- audit log and frees it for a new key.
CREATE UNIQUE INDEX api_keys_active_name ON api_keys (name) WHERE revoked_at IS NULL;

CREATE TABLE api_key_projects (
	key_id     TEXT NOT NULL REFERENCES api_keys (id),
	project_id TEXT NOT NULL REFERENCES projects (id),
	PRIMARY KEY (key_id, project_id)
);

-- One row per file id; deleted_at set makes it a tombstone. A path is held by
-- at most one row, so a create on a tombstoned path revives the same id.
CREATE TABLE files (
	project_id TEXT NOT NULL REFERENCES projects (id),
	id         TEXT NOT NULL,
	path       TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	updated_at INTEGER NOT NULL,
	deleted_at INTEGER,
	PRIMARY KEY (project_id, id),
	UNIQUE (project_id, path)
);

CREATE TABLE versions (
	project_id TEXT NOT NULL,
	file_id    TEXT NOT NULL,
	number     INTEGER NOT NULL,
	path       TEXT NOT NULL,
	hash       TEXT NOT NULL,
	version_id TEXT NOT NULL,
	message    TEXT NOT NULL,
	created_at INTEGER NOT NULL,
	PRIMARY KEY (project_id, file_id, number),
	FOREIGN KEY (project_id, file_id) REFERENCES files (project_id, id) ON DELETE CASCADE
);

CREATE TABLE idempotency (
	key_id      TEXT NOT NULL,
	idem_key    TEXT NOT NULL,
	fingerprint TEXT NOT NULL,
	project_id  TEXT NOT NULL,
	operation   TEXT NOT NULL,
	target      TEXT NOT NULL,
	token       TEXT NOT NULL,
	state       TEXT NOT NULL CHECK (state IN ('running', 'done')),
	owner       TEXT NOT NULL,
	created_at  INTEGER NOT NULL,
	expires_at  INTEGER NOT NULL,
	status      INTEGER,
	header      TEXT,
	body        BLOB,
	PRIMARY KEY (key_id, idem_key)
);

CREATE INDEX idempotency_expires ON idempotency (expires_at);
CREATE INDEX idempotency_state ON idempotency (state);

CREATE TABLE audit (
	id          INTEGER PRIMARY KEY AUTOINCREMENT,
	at          INTEGER NOT NULL,
	key_id      TEXT NOT NULL,
	key_name    TEXT NOT NULL,
	project_id  TEXT NOT NULL,
	operation   TEXT NOT NULL,
	paths       TEXT NOT NULL,
	version     TEXT NOT NULL,
	idem_key    TEXT NOT NULL,
	result      TEXT NOT NULL
);

CREATE INDEX audit_project ON audit (project_id, id);

-- The audit log is append-only.
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN
	SELECT RAISE(ABORT, 'the audit log is append-only');
END;

CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN
	SELECT RAISE(ABORT, 'the audit log is append-only');
END;
