package teamstore

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
)

// Unavailable reports whether err says that the metadata store could not
// be reached or could not serve at that moment — a connection refused,
// lost or timed out, a database starting up, shutting down or out of
// connections, a transaction aborted by a conflict with another — rather
// than that it refused the request: nothing of the request was done there,
// and the same request may be sent again. It looks at the error's chain
// only, naming no driver: net errors (a bare errno only when it is a
// network's), io.EOF and io.ErrUnexpectedEOF, and
// the SQLSTATE of a PostgreSQL error (classes 08, 53 and 57P, 40001 and
// 40P01).
func Unavailable(err error) bool {
	if err == nil || errors.Is(err, ErrNotFound) || errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.ETIMEDOUT) ||
		errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) {
		return true
	}
	// A net error, but not a bare errno: syscall.Errno has the methods
	// of net.Error, so a file system's refusal (ENOSPC, EACCES, ENOENT
	// under a vault's error) would pass for a network's, and a full disk
	// be answered "retry".
	var ne net.Error
	if errors.As(err, &ne) {
		if _, bare := ne.(syscall.Errno); !bare {
			return true
		}
	}
	var pe interface{ SQLState() string }
	if errors.As(err, &pe) {
		switch c := pe.SQLState(); {
		case strings.HasPrefix(c, "08"), strings.HasPrefix(c, "53"), strings.HasPrefix(c, "57P"), c == "40001", c == "40P01":
			return true
		}
	}
	return false
}
