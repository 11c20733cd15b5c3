-- Replicas sharing the database: vault leases, the replicas alive, and the
-- epoch (fencing token) a lease gets each time it changes hands.

CREATE SEQUENCE vault_lease_epoch;

CREATE TABLE vault_leases (
	project_id  TEXT COLLATE "C" PRIMARY KEY REFERENCES projects (id),
	owner       TEXT COLLATE "C" NOT NULL,
	advertise   TEXT NOT NULL,
	epoch       BIGINT NOT NULL,
	acquired_at TIMESTAMPTZ NOT NULL,
	renewed_at  TIMESTAMPTZ NOT NULL,
	expires_at  TIMESTAMPTZ NOT NULL
);

CREATE INDEX vault_leases_owner ON vault_leases (owner);

CREATE TABLE replicas (
	id         TEXT COLLATE "C" PRIMARY KEY,
	advertise  TEXT NOT NULL,
	started_at TIMESTAMPTZ NOT NULL,
	seen_at    TIMESTAMPTZ NOT NULL,
	expires_at TIMESTAMPTZ NOT NULL
);
