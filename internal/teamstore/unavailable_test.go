package teamstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestUnavailable(t *testing.T) {
	for _, c := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{ErrNotFound, false},
		{fmt.Errorf("file: %w", ErrNotFound), false},
		{errors.New("some refusal"), false},
		{context.Canceled, false},
		{&pgconn.PgError{Code: "23505"}, false},                     // a unique violation: the request's own fault
		{fmt.Errorf("x: %w", &pgconn.PgError{Code: "57P03"}), true}, // starting up
		{&pgconn.PgError{Code: "57P01"}, true},                      // shut down by the administrator
		{&pgconn.PgError{Code: "08006"}, true},                      // connection failure
		{&pgconn.PgError{Code: "53300"}, true},                      // too many connections
		{&pgconn.PgError{Code: "40001"}, true},                      // serialization failure
		{io.ErrUnexpectedEOF, true},
		{fmt.Errorf("query: %w", io.EOF), true},
		{context.DeadlineExceeded, true},
		{&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, true},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{&net.OpError{Op: "read", Net: "tcp", Err: syscall.ETIMEDOUT}, true},
		// A file system's refusal is not the store's absence, though
		// syscall.Errno has net.Error's methods.
		{fmt.Errorf("write: %w", syscall.ENOSPC), false},
		{&fs.PathError{Op: "open", Path: "x", Err: syscall.EACCES}, false},
		{fmt.Errorf("stat: %w", syscall.ENOENT), false},
	} {
		if got := Unavailable(c.err); got != c.want {
			t.Errorf("Unavailable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
