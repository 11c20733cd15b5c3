package vaultfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"
)

// Code is a stable error code a client can tell apart. It is the first word of
// every error message of this package.
type Code string

// The codes of DESIGN.md section 3, plus ALREADY_EXISTS for writes that never
// overwrite, and two for failures that are not about the path itself.
const (
	CodeInvalidPath      Code = "INVALID_PATH"
	CodePathEscape       Code = "PATH_ESCAPE"
	CodeHiddenSegment    Code = "HIDDEN_SEGMENT"
	CodeProtectedPath    Code = "PROTECTED_PATH"
	CodeSymlinkEscape    Code = "SYMLINK_ESCAPE"
	CodeNotANote         Code = "NOT_A_NOTE"
	CodeInvalidExtension Code = "INVALID_EXTENSION"
	CodeNotFound         Code = "NOT_FOUND"
	CodeTooLarge         Code = "TOO_LARGE"
	// CodeAlreadyExists: a create or a move would replace an existing file;
	// those never overwrite.
	CodeAlreadyExists Code = "ALREADY_EXISTS"
	// CodePermissionDenied: the file exists but the operating system refuses
	// to let this process read it.
	CodePermissionDenied Code = "PERMISSION_DENIED"
	// CodeIO: any other failure of the file system (I/O error, vault closed).
	CodeIO Code = "IO_ERROR"
)

// maxShownPath bounds how much of an offending input an error message echoes.
const maxShownPath = 200

// Error is a refused or failed path operation. Its message is one line,
//
//	CODE: path "<path>": reason
//
// where <path> is the vault-relative path (or, when the input could not be
// cleaned, the input itself) with control, invisible and bidirectional
// characters escaped as strconv.Quote does. The message never contains the
// vault's absolute directory: the Vault methods redact it, and Err never
// carries a path (only the bare operating-system error, such as an Errno).
type Error struct {
	Code   Code
	Path   string
	Reason string
	Err    error
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: path %s: %s", e.Code, QuotePath(e.Path), escapeUnprintable(e.Reason))
}

// Detail is the error's text without its code and the word "path": the
// quoted path and the reason, for a message that names its field itself
// ("path: \"../x.md\": '..' climbs out of the vault").
func (e *Error) Detail() string { return QuotePath(e.Path) + ": " + escapeUnprintable(e.Reason) }

// ErrorCode returns the stable code (internal/api.CodeOf reads it).
func (e *Error) ErrorCode() string { return string(e.Code) }

// Unwrap returns the cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// CodeOf returns the code of the first *Error in err's chain, or "" when
// there is none.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func newErr(code Code, path, format string, args ...any) *Error {
	return &Error{Code: code, Path: path, Reason: fmt.Sprintf(format, args...)}
}

// QuotePath renders a possibly hostile path for a one-line message: double
// quoted like strconv.Quote, with every control, invisible or bidirectional
// character (mustEscape) and invalid byte escaped, and cut after 200
// characters.
func QuotePath(p string) string {
	head, cut := cutRunes(p, maxShownPath)
	if cut {
		return `"` + escape(head, true) + `"… (truncated)`
	}
	return `"` + escape(p, true) + `"`
}

// DisplayPath escapes like QuotePath, without the quotes (quotes and
// backslashes are left alone): for lists of paths.
func DisplayPath(p string) string {
	head, cut := cutRunes(p, maxShownPath)
	if cut {
		return escape(head, false) + "…"
	}
	return escape(p, false)
}

// cutRunes returns the first n runes of s and whether anything was cut.
func cutRunes(s string, n int) (string, bool) {
	count := 0
	for i := range s {
		if count == n {
			return s[:i], true
		}
		count++
	}
	return s, false
}

// mustEscape reports runes that are never shown raw: what strconv.Quote
// escapes (not printable) and every character Clean refuses as invisible.
func mustEscape(r rune) bool {
	return r == utf8.RuneError || !strconv.IsPrint(r) || isInvisible(r)
}

func escapeUnprintable(s string) string { return escape(s, false) }

// escape writes s with mustEscape runes as \xNN, \uNNNN or \UNNNNNNNN
// escapes (and, inside quotes, '"' and '\\' escaped too).
func escape(s string, quoted bool) string {
	plain := true
	for _, r := range s {
		if mustEscape(r) || quoted && (r == '"' || r == '\\') {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case quoted && (r == '"' || r == '\\'):
			b.WriteByte('\\')
			b.WriteRune(r)
		case !mustEscape(r):
			b.WriteString(s[i : i+size])
		case r < 0x80:
			q := strconv.QuoteRune(r) // '\n', '\x1b'
			b.WriteString(q[1 : len(q)-1])
		case r <= 0xFFFF:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		i += size
	}
	return b.String()
}

// errPathEscapesText is the message of os.Root's unexported "path escapes
// from parent" error. TestRootEscapeDetection pins it.
const errPathEscapesText = "path escapes from parent"

// bareCause strips the path-carrying wrappers of the os package (whose paths
// may be absolute) and returns the operating-system error inside.
func bareCause(err error) error {
	for {
		switch e := err.(type) {
		case *fs.PathError:
			err = e.Err
		case *os.LinkError:
			err = e.Err
		case *os.SyscallError:
			err = e.Err
		default:
			return err
		}
	}
}

func isEscape(err error) bool {
	c := bareCause(err)
	return c != nil && c.Error() == errPathEscapesText
}

// fromOS turns an error of an os.Root operation on rel into an *Error.
func fromOS(rel string, err error) *Error {
	cause := bareCause(err)
	e := &Error{Path: rel, Err: cause}
	switch {
	case isEscape(err):
		e.Code, e.Reason = CodeSymlinkEscape, "a symbolic link on the way leads outside the vault"
	case errors.Is(err, fs.ErrNotExist):
		e.Code, e.Reason = CodeNotFound, "no such note or folder"
	case errors.Is(err, fs.ErrExist):
		e.Code, e.Reason = CodeAlreadyExists, "a file or folder of that name already exists"
	case errors.Is(err, syscall.ENOTDIR):
		e.Code, e.Reason = CodeNotFound, "a component of the path is a file, not a folder"
	case errors.Is(err, fs.ErrPermission):
		e.Code, e.Reason = CodePermissionDenied, "permission denied"
	case errors.Is(err, syscall.ELOOP):
		e.Code, e.Reason = CodeNotANote, "too many levels of symbolic links"
	case errors.Is(err, syscall.ENAMETOOLONG):
		e.Code, e.Reason = CodeInvalidPath, "path too long for the file system"
	case errors.Is(err, fs.ErrClosed):
		e.Code, e.Reason = CodeIO, "the vault is closed"
	default:
		e.Code, e.Reason = CodeIO, "file system error: "+cause.Error()
	}
	return e
}
