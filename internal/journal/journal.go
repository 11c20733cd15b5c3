// Package journal keeps the commit records of multi-file vault writes, so
// that a write interrupted at any instant (kill -9, power loss) is finished
// or undone as a whole at the next start.
//
// # Guarantees
//
//   - A record is durable before Write returns: it is written to a
//     temporary file, fsynced, renamed into place and the folder fsynced. A
//     crash leaves either no record or a whole one, never a torn one (a
//     record that fails to parse is reported by Pending, not guessed at).
//   - Records live outside the vault (in the git directory, beside the write
//     lock), so they are never indexed, committed or seen in Obsidian.
//   - One file a write, named by the write's id: two writers (one of them
//     declared stuck by the write lock) never overwrite each other's record.
//
// The vault service writes a record once every new content is staged and
// synced (internal/vaultfs.Stage), then publishes the files, commits, and
// removes the record. Finding a record at start means the write was past
// its point of no return: it is rolled forward. No record means nothing was
// published, and the staged temporary files are rolled back (removed).
package journal

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Format is the version of the record layout; a record of another version
// is refused by Pending rather than misread.
const Format = 1

// Op is one file of a write.
type Op struct {
	// Kind is OpPut (Temp becomes Path) or OpRemove (Path is removed).
	Kind string `json:"kind"`
	Path string `json:"path"`
	// Temp is the staged file's vault-relative path (OpPut).
	Temp string `json:"temp,omitempty"`
	// Create publishes exclusively: Path must not exist.
	Create bool `json:"create,omitempty"`
	// Before is the SHA-256 of the bytes the write read at Path ("" when
	// there was no file), After that of the bytes it puts there ("" for a
	// removal). Recovery compares them with the file as it is found.
	Before string `json:"before,omitempty"`
	After  string `json:"after,omitempty"`
}

// Kinds of Op.
const (
	OpPut    = "put"
	OpRemove = "remove"
)

// Record is the commit record of one write.
type Record struct {
	Format  int       `json:"format"`
	ID      string    `json:"id"`
	Started time.Time `json:"started"`
	// Message is the commit message; Commit says whether to commit at all
	// (false in a vault that is not a git repository).
	Message string `json:"message"`
	Commit  bool   `json:"commit"`
	// Author, Email and IdempotencyKey are the write's metadata, for the
	// commit made by recovery.
	Author         string `json:"author,omitempty"`
	Email          string `json:"email,omitempty"`
	IdempotencyKey string `json:"idempotency_key,omitempty"`
	Ops            []Op   `json:"ops"`
}

// Paths lists every vault path the record touches.
func (r *Record) Paths() []string {
	out := make([]string, 0, len(r.Ops))
	for _, op := range r.Ops {
		out = append(out, op.Path)
	}
	return out
}

// Dir is a folder of records.
type Dir struct{ path string }

// Open returns the folder of records at path. The folder is made (0700) by
// the first Write, so a vault that is only read gets none.
func Open(path string) (*Dir, error) {
	if path == "" {
		return nil, fmt.Errorf("journal: no folder")
	}
	return &Dir{path: path}, nil
}

// Path is the folder's location.
func (d *Dir) Path() string { return d.path }

// NewID returns a fresh record id.
func NewID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return time.Now().UTC().Format("20060102T150405") + "-" + hex.EncodeToString(b[:])
}

const suffix = ".json"

func (d *Dir) file(id string) string { return filepath.Join(d.path, id+suffix) }

// Write makes r durable.
func (d *Dir) Write(r *Record) error {
	if r.ID == "" || strings.ContainsAny(r.ID, `/\.`) {
		return fmt.Errorf("journal: invalid record id %q", r.ID)
	}
	r.Format = Format
	data, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if _, err := os.Stat(d.path); errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(d.path, 0o700); err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		// The folder's own entry made durable too, the first time.
		if err := syncDir(filepath.Dir(d.path)); err != nil {
			return err
		}
	}
	tmp, err := os.CreateTemp(d.path, ".rec-*")
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), d.file(r.ID))
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("journal: writing the commit record: %w", err)
	}
	return syncDir(d.path)
}

// Remove deletes the record id (done, or rolled forward).
func (d *Dir) Remove(id string) error {
	if err := os.Remove(d.file(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("journal: %w", err)
	}
	return syncDir(d.path)
}

// Damaged is a record file that could not be read as a record.
type Damaged struct {
	File string
	Err  error
}

// Pending returns the records left in the folder, oldest first, and the
// files that are not valid records (left in place for a person to look at).
// Temporary files of an unfinished Write are removed: their record never
// made it.
func (d *Dir) Pending() ([]*Record, []Damaged, error) {
	entries, err := os.ReadDir(d.path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, nil
		}
		return nil, nil, fmt.Errorf("journal: %w", err)
	}
	var recs []*Record
	var bad []Damaged
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".rec-") {
			_ = os.Remove(filepath.Join(d.path, name))
			continue
		}
		if !strings.HasSuffix(name, suffix) || !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(d.path, name))
		var r Record
		if err == nil {
			err = json.Unmarshal(data, &r)
		}
		if err == nil && r.Format != Format {
			err = fmt.Errorf("record format %d, this build reads %d", r.Format, Format)
		}
		if err == nil && r.ID+suffix != name {
			err = fmt.Errorf("record id %q does not match its file name", r.ID)
		}
		if err != nil {
			bad = append(bad, Damaged{File: name, Err: err})
			continue
		}
		recs = append(recs, &r)
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].Started.Before(recs[j].Started) })
	return recs, bad, nil
}

func syncDir(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	defer f.Close()
	// Some file systems cannot fsync a folder (EINVAL); the rename is then
	// as durable as they make it.
	_ = f.Sync()
	return nil
}
