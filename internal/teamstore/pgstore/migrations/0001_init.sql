-- Team server metadata, first schema: the tables of the SQLite store, in
-- PostgreSQL types. Names and paths compare byte by byte (COLLATE "C"), so
-- lists come in the same order as from SQLite whatever the database's
-- locale.

CREATE TABLE projects (
	id         TEXT COLLATE "C" PRIMARY KEY,
	name       TEXT COLLATE "C" NOT NULL UNIQUE,
	created_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE api_keys (
	id           TEXT COLLATE "C" PRIMARY KEY,
	name         TEXT COLLATE "C" NOT NULL,
	hash         BYTEA NOT NULL UNIQUE,
	read_only    BOOLEAN NOT NULL DEFAULT FALSE,
	created_at   TIMESTAMPTZ NOT NULL,
	last_used_at TIMESTAMPTZ,
	revoked_at   TIMESTAMPTZ
);

-- A name is unique among active keys; a revoked key keeps its name for the
-- audit log and frees it for a new key.
CREATE UNIQUE INDEX api_keys_active_name ON api_keys (name) WHERE revoked_at IS NULL;

CREATE TABLE api_key_projects (
	key_id     TEXT COLLATE "C" NOT NULL REFERENCES api_keys (id),
	project_id TEXT COLLATE "C" NOT NULL REFERENCES projects (id),
	PRIMARY KEY (key_id, project_id)
);

-- One row per file id; deleted_at set makes it a tombstone. A path is held by
-- at most one row, so a create on a tombstoned path revives the same id.
CREATE TABLE files (
	project_id TEXT COLLATE "C" NOT NULL REFERENCES projects (id),
	id         TEXT COLLATE "C" NOT NULL,
	path       TEXT COLLATE "C" NOT NULL,
	created_at TIMESTAMPTZ NOT NULL,
	updated_at TIMESTAMPTZ NOT NULL,
	deleted_at TIMESTAMPTZ,
	PRIMARY KEY (project_id, id),
	UNIQUE (project_id, path)
);

CREATE TABLE versions (
	project_id TEXT COLLATE "C" NOT NULL,
	file_id    TEXT COLLATE "C" NOT NULL,
	number     INTEGER NOT NULL,
	path       TEXT NOT NULL,
	hash       TEXT NOT NULL,
	version_id TEXT NOT NULL,
	message    TEXT NOT NULL,
	created_at TIMESTAMPTZ NOT NULL,
	PRIMARY KEY (project_id, file_id, number),
	FOREIGN KEY (project_id, file_id) REFERENCES files (project_id, id) ON DELETE CASCADE
);

CREATE TABLE idempotency (
	key_id      TEXT COLLATE "C" NOT NULL,
	idem_key    TEXT COLLATE "C" NOT NULL,
	fingerprint TEXT NOT NULL,
	project_id  TEXT NOT NULL,
	operation   TEXT NOT NULL,
	target      TEXT NOT NULL,
	token       TEXT NOT NULL,
	state       TEXT NOT NULL CHECK (state IN ('running', 'done')),
	owner       TEXT NOT NULL,
	created_at  TIMESTAMPTZ NOT NULL,
	expires_at  TIMESTAMPTZ NOT NULL,
	status      INTEGER,
	header      TEXT,
	body        BYTEA,
	PRIMARY KEY (key_id, idem_key)
);

CREATE INDEX idempotency_expires ON idempotency (expires_at);
CREATE INDEX idempotency_running ON idempotency (created_at) WHERE state = 'running';

CREATE TABLE audit (
	id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	at          TIMESTAMPTZ NOT NULL,
	key_id      TEXT NOT NULL,
	key_name    TEXT NOT NULL,
	project_id  TEXT COLLATE "C" NOT NULL,
	operation   TEXT NOT NULL,
	paths       TEXT NOT NULL,
	version     TEXT NOT NULL,
	idem_key    TEXT NOT NULL,
	result      TEXT NOT NULL
);

CREATE INDEX audit_project ON audit (project_id, id);

-- The audit log is append-only: updates, deletes and truncation are refused
-- by the database itself.
CREATE FUNCTION audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'the audit log is append-only' USING ERRCODE = 'insufficient_privilege';
END
$$;

CREATE TRIGGER audit_no_update BEFORE UPDATE OR DELETE ON audit
	FOR EACH ROW EXECUTE FUNCTION audit_append_only();

CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON audit
	FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only();
