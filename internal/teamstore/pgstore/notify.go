package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vaultmcp/vaultmcp/internal/teamstore"
)

// versionChannel is the LISTEN/NOTIFY channel of new versions.
const versionChannel = "vaultmcp_versions"

// maxPayload is PostgreSQL's limit on a notification payload (8000 bytes,
// less one).
const maxPayload = 7999

// note is the payload of a notification.
type note struct {
	Project string `json:"p"`
	Version string `json:"v"`
	From    string `json:"f,omitempty"`
}

// Notify sends the note with pg_notify; PostgreSQL delivers it to every
// listening session of the database, in the order of the commits.
func (s *Store) Notify(ctx context.Context, n teamstore.VersionNote) error {
	if n.Project == "" {
		return fmt.Errorf("version note: empty project")
	}
	b, err := json.Marshal(note{Project: n.Project, Version: n.Version, From: n.From})
	if err != nil {
		return err
	}
	if len(b) > maxPayload {
		return fmt.Errorf("version note of project %q: %d bytes, more than the %d a notification carries", n.Project, len(b), maxPayload)
	}
	_, err = s.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, versionChannel, string(b))
	return err
}

// Reconnection pauses of a listener whose connection broke.
const (
	listenRetryMin = 50 * time.Millisecond
	listenRetryMax = 5 * time.Second
)

// Listen opens a connection of its own (not one of the pool's), runs LISTEN
// on it before returning, so every note sent after Listen returns is
// delivered, and then forwards the notes until ctx ends or the store
// closes. A broken connection is opened again, with growing pauses; the
// first note after it is Missed, since notes sent meanwhile are lost.
func (s *Store) Listen(ctx context.Context) (<-chan teamstore.VersionNote, error) {
	conn, err := s.listenConn(ctx)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.stopped, cancel)
	out := make(chan teamstore.VersionNote, 64)
	s.listeners.Add(1)
	go func() {
		defer s.listeners.Done()
		defer stop()
		defer cancel()
		defer close(out)
		defer func() {
			if conn != nil {
				conn.Close(context.Background())
			}
		}()
		pause := listenRetryMin
		for {
			if conn == nil {
				select {
				case <-ctx.Done():
					return
				case <-time.After(pause):
				}
				pause = min(2*pause, listenRetryMax)
				if conn, err = s.listenConn(ctx); err != nil {
					conn = nil
					continue
				}
				pause = listenRetryMin
				if !send(ctx, out, teamstore.VersionNote{Missed: true}) {
					return
				}
			}
			n, err := conn.WaitForNotification(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				conn.Close(context.Background())
				conn = nil
				continue
			}
			var p note
			if n.Channel != versionChannel || json.Unmarshal([]byte(n.Payload), &p) != nil || p.Project == "" {
				continue // not ours
			}
			if !send(ctx, out, teamstore.VersionNote{Project: p.Project, Version: p.Version, From: p.From}) {
				return
			}
		}
	}()
	return out, nil
}

func send(ctx context.Context, out chan<- teamstore.VersionNote, n teamstore.VersionNote) bool {
	select {
	case out <- n:
		return true
	case <-ctx.Done():
		return false
	}
}

// listenConn connects with the pool's settings and listens.
func (s *Store) listenConn(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig)
	if err != nil {
		return nil, fmt.Errorf("listening for versions: %w", err)
	}
	if _, err := conn.Exec(ctx, `LISTEN `+versionChannel); err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("listening for versions: %w", err)
	}
	return conn, nil
}
