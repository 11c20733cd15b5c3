package teamstore

import (
	"context"
	"errors"
	"time"
)

// ErrLeaseLost: the caller does not hold the lease (another owner holds it,
// it expired, or it was released).
var ErrLeaseLost = errors.New("lease not held")

// Leases coordinates the replicas of a team server that share one database
// (PostgreSQL): who serves each vault, which replicas are alive and where,
// and news of new versions. The embedded SQLite store has no replicas and
// does not implement it.
//
// # Guarantees
//
//   - At most one owner holds a vault's lease at any time of the callers'
//     clock: a lease is held from its acquisition until ExpiresAt, and only
//     its owner renews or releases it. A lease whose ExpiresAt is at or
//     before the caller's time is free to take.
//   - Every change of hands gives the lease a new Epoch, larger than every
//     epoch any lease had before; renewing, or the same owner acquiring it
//     again, keeps the epoch. An owner that sees its epoch unchanged knows
//     nobody else held the vault in between (a fencing token).
//   - Every method is atomic; times come from the caller (tests drive the
//     clock); stored with microsecond precision, returned in UTC.
//   - Notify is delivered to every listener of the database, including the
//     sender's own; a listener that may have missed notes (its connection
//     was lost) receives a note with Missed set before any later note.
type Leases interface {
	// AcquireLease takes the vault's lease for owner until at+ttl when it is
	// free, expired at at, or already owner's (then it is renewed). It
	// returns the lease as it now stands and whether owner holds it; when
	// another owner holds it, that owner's lease is returned.
	AcquireLease(ctx context.Context, project, owner, advertise string, at time.Time, ttl time.Duration) (Lease, bool, error)
	// RenewLease extends owner's lease to at+ttl (never shortening it);
	// ErrLeaseLost when owner does not hold it at at.
	RenewLease(ctx context.Context, project, owner string, at time.Time, ttl time.Duration) (Lease, error)
	// ReleaseLease gives up owner's lease; ErrLeaseLost when owner does not
	// hold it (expired leases still held by owner are released).
	ReleaseLease(ctx context.Context, project, owner string) error
	// Lease is the vault's lease, live or expired; ErrNotFound when there
	// is none.
	Lease(ctx context.Context, project string) (Lease, error)
	// Leases lists every lease, live or expired, by project.
	Leases(ctx context.Context) ([]Lease, error)

	// Heartbeat records that the replica is alive at advertise until
	// at+ttl (its first heartbeat sets StartedAt), and removes the rows of
	// replicas whose last heartbeat expired more than ReplicaRowsKept
	// before at (killed, they never left).
	Heartbeat(ctx context.Context, replica, advertise string, at time.Time, ttl time.Duration) error
	// Replicas lists the replicas alive at at, by id.
	Replicas(ctx context.Context, at time.Time) ([]Replica, error)
	// Leave removes a replica and releases every lease it holds (a clean
	// shutdown); it says how many leases it released.
	Leave(ctx context.Context, replica string) (int, error)

	// Notify tells every listener that a project has a new version.
	Notify(ctx context.Context, n VersionNote) error
	// Listen delivers the notes sent from now on until ctx ends, then
	// closes the channel.
	Listen(ctx context.Context) (<-chan VersionNote, error)
}

// ReplicaRowsKept is how long the row of a replica that stopped without
// leaving (killed) stays after its last heartbeat expired: long enough to
// look into what happened to it, short enough that the table does not grow
// by a row at every crash.
const ReplicaRowsKept = 24 * time.Hour

// Lease is one vault's lease.
type Lease struct {
	Project   string
	Owner     string // the replica id holding it
	Advertise string // where the owner takes forwarded requests
	// Epoch grows every time the lease changes hands.
	Epoch      int64
	AcquiredAt time.Time // when Owner took it
	RenewedAt  time.Time
	ExpiresAt  time.Time
}

// Live says the lease is still held at a time.
func (l Lease) Live(at time.Time) bool { return l.ExpiresAt.After(at) }

// Replica is one team-server process sharing the database.
type Replica struct {
	ID        string
	Advertise string
	StartedAt time.Time
	SeenAt    time.Time
	ExpiresAt time.Time
}

// VersionNote says that a project has a new version.
type VersionNote struct {
	Project string
	Version string // the backend's version id (a git commit)
	From    string // the replica that made it
	// Missed, on a note from Listen, says notes may have been lost (the
	// listener's connection broke); the other fields are empty.
	Missed bool
}
