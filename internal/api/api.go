// Package api holds the operations every vault backend offers and their
// request and result types. The local vault service (internal/vault), the
// team REST client and the MCP tools (internal/mcpserver) all speak it, so
// every tool works the same in local and in team mode.
package api

import (
	"context"
	"errors"
	"fmt"
)

// Backend is what the MCP tools need from a vault.
type Backend interface {
	Search(ctx context.Context, req SearchRequest) (*SearchResult, error)
	GetNote(ctx context.Context, req NoteRequest) (*Note, error)
	List(ctx context.Context, req ListRequest) (*ListResult, error)
	Backlinks(ctx context.Context, req BacklinksRequest) (*BacklinksResult, error)
	Graph(ctx context.Context, req GraphRequest) (*GraphResult, error)
	History(ctx context.Context, req HistoryRequest) (*HistoryResult, error)
}

// Limits shared by every backend.
const (
	DefaultSearchLimit = 6
	MaxSearchLimit     = 50
	MaxQueryChars      = 1024
	MaxQueryTerms      = 64
	MaxQuotedChars     = 8000
	NotePageChars      = 20000
	DefaultHistory     = 20
	MaxHistory         = 200
	DefaultGraphNodes  = 500
	MaxGraphNodes      = 5000
	// The link lists of an answer are bounded, whatever the vault holds: a
	// note with a million links, or linked to by millions, still gets an
	// answer of a few hundred kilobytes. Each list comes with its total.
	MaxNoteLinks     = 200   // Note.Links and Note.BrokenLinks, each
	MaxNoteProblems  = 20    // Note.Problems
	MaxBacklinkNotes = 200   // BacklinksResult.Backlinks
	MaxBacklinkLines = 20    // Backlink.Lines
	MaxGraphEdges    = 10000 // GraphResult.Edges
	// MaxListNotes is how many notes vault_list answers with (sorted by
	// path; ListResult.Total says how many passed the filters).
	MaxListNotes = 1000
)

// SearchRequest is the input of vault_search.
type SearchRequest struct {
	Query      string   `json:"query"`
	Limit      int      `json:"limit,omitempty"`
	Type       string   `json:"type,omitempty"`
	Folder     string   `json:"folder,omitempty"`
	Tags       []string `json:"tags,omitempty"`
	Status     string   `json:"status,omitempty"`
	IncludeRaw bool     `json:"include_raw,omitempty"`
	// Explain asks for each hit's explanation (SearchHit.Explain); without
	// it the hits carry none (the local vault and the team server compute
	// none; the MCP tool shows one only when asked).
	Explain bool `json:"explain,omitempty"`
}

// SearchHit is one ranked chunk.
type SearchHit struct {
	Path     string   `json:"path"`
	Line     int      `json:"line"`
	EndLine  int      `json:"end_line"`
	Title    string   `json:"title"`
	Headings []string `json:"headings,omitempty"`
	Score    float64  `json:"score"`
	ViaGraph bool     `json:"via_graph,omitempty"`
	// Fuzzy says the chunk matched only through misspelling expansion of
	// query words absent from the vault, not through any word as written.
	Fuzzy bool `json:"fuzzy,omitempty"`
	// Snippet is the chunk's lines as they are in the file now (re-validated
	// against the disk before quoting). Renderers prefix each line with "> "
	// and escape control characters; the backend returns them raw.
	Snippet   string `json:"snippet"`
	Truncated bool   `json:"snippet_truncated,omitempty"`
	// Explain says why the hit ranked (what matched where, how, and the
	// graph origin).
	Explain *HitExplanation `json:"explain,omitempty"`
}

// HitExplanation is why a search hit ranked.
type HitExplanation struct {
	// Terms are the query terms that matched the chunk, in query order.
	Terms []TermMatch `json:"terms,omitempty"`
	// TitlePhrase lists the pairs of query words found one after the other
	// in the note's title, file name or an alias ("front matter"), which
	// add a bonus to the note's first chunk.
	TitlePhrase []string `json:"title_phrase,omitempty"`
	// FullTitle says the query is the note's title, file name or an alias
	// (its words in order), which adds a bonus to the note's first chunk.
	FullTitle bool `json:"full_title,omitempty"`
	// GraphFrom is, for a hit found via graph expansion, the direct hit
	// whose score it inherited; GraphLink says how they are linked: "out"
	// (GraphFrom links to this note), "in" (this note links to GraphFrom)
	// or "both".
	GraphFrom string `json:"graph_from,omitempty"`
	GraphLink string `json:"graph_link,omitempty"`
}

// TermMatch is how one query term (as analyzed: lowercase, accents folded)
// matched a chunk: the fields of its best match ("title" with the file name
// and aliases, "heading", "link_text" for the text other notes use when they
// link to the note, "tags", "prose", "code"), and whether it matched as
// written ("exact"), only through its stem ("stem") or only as a misspelling
// of the vocabulary words As ("fuzzy").
type TermMatch struct {
	Term   string   `json:"term"`
	Fields []string `json:"fields"`
	Match  string   `json:"match"`
	As     []string `json:"as,omitempty"`
}

// SearchResult is the output of vault_search.
type SearchResult struct {
	Query       string      `json:"query"`
	Results     []SearchHit `json:"results"`
	Suggestions []string    `json:"suggestions,omitempty"`
	// RawMatches says, when nothing matched and the search left raw
	// captures out (no include_raw), that the query matches notes under
	// 01-raw/: the caller may search again with include_raw.
	RawMatches bool `json:"rawMatches,omitempty"`
	// Unindexed names files that could not be indexed (all of them; renderers
	// show the first 3).
	Unindexed []string `json:"unindexed,omitempty"`
}

// NoteRequest is the input of vault_get_note.
type NoteRequest struct {
	Path   string `json:"path"`
	Offset int    `json:"offset,omitempty"`
}

// NoteLink is one link of a note, resolved or broken.
type NoteLink struct {
	Target string `json:"target"`         // as written
	Path   string `json:"path,omitempty"` // resolved vault path; empty when broken
	Line   int    `json:"line"`
}

// Note is the output of vault_get_note.
type Note struct {
	Path  string `json:"path"`
	Title string `json:"title"`
	// Frontmatter is bounded: at most 32 keys, 512 characters a value, 4,000
	// in all; FrontmatterTruncated says when something was cut.
	Frontmatter          map[string]string `json:"frontmatter,omitempty"`
	FrontmatterTruncated bool              `json:"frontmatter_truncated,omitempty"`
	// Problems say why the frontmatter was ignored in whole or in part
	// (invalid YAML, over 64 KiB, YAML aliases, a duplicate key): the first
	// MaxNoteProblems, one line each.
	Problems []string `json:"problems,omitempty"`
	// Links are the first MaxNoteLinks links that resolve, in document
	// order, of LinksTotal; BrokenLinks the first MaxNoteLinks that do not,
	// of BrokenLinksTotal.
	Links            []NoteLink `json:"links,omitempty"`
	LinksTotal       int        `json:"links_total"`
	BrokenLinks      []NoteLink `json:"broken_links,omitempty"`
	BrokenLinksTotal int        `json:"broken_links_total"`
	// Content is the raw file text from Offset (in characters), at most
	// NotePageChars of it. NextOffset is 0 when this page reaches the end.
	Content    string `json:"content"`
	Offset     int    `json:"offset"`
	NextOffset int    `json:"next_offset,omitempty"`
	TotalChars int    `json:"total_chars"`
	// SHA256 of the whole file's bytes (hex), for expected_sha256 on writes.
	SHA256 string `json:"sha256"`
}

// ListRequest is the input of vault_list.
type ListRequest struct {
	Type   string   `json:"type,omitempty"`
	Tags   []string `json:"tags,omitempty"`
	Status string   `json:"status,omitempty"`
	Folder string   `json:"folder,omitempty"`
	// Limit, when above 0, asks for at most that many notes, the first by
	// path (Total still counts every note that passed), so that a backend
	// need not sort and describe all of them. A backend may answer more
	// (the team server's list answers all): a caller that needs the bound
	// cuts Notes itself. Not sent over the REST API.
	Limit int `json:"-"`
}

// NoteSummary is one line of vault_list.
type NoteSummary struct {
	Path   string   `json:"path"`
	Title  string   `json:"title"`
	Type   string   `json:"type,omitempty"`
	Status string   `json:"status,omitempty"`
	Tags   []string `json:"tags,omitempty"`
}

// ListResult is the output of vault_list, sorted by path: Total notes
// passed the filters, and Notes are all of them from a backend, the first
// MaxListNotes of them in the tool's answer.
type ListResult struct {
	Notes []NoteSummary `json:"notes"`
	Total int           `json:"total"`
}

// BacklinksRequest is the input of vault_backlinks.
type BacklinksRequest struct {
	Path string `json:"path"`
}

// Backlink is one note linking to the requested one (counted once however
// many links it has). Lines are the first MaxBacklinkLines of the LineCount
// distinct lines holding its links, ascending.
type Backlink struct {
	Path      string `json:"path"`
	Title     string `json:"title"`
	Lines     []int  `json:"lines"`
	LineCount int    `json:"line_count"`
}

// BacklinksResult is the output of vault_backlinks: Total notes link to
// Path, with Links links in all; Backlinks are the first MaxBacklinkNotes of
// those notes, sorted by path.
type BacklinksResult struct {
	Path      string     `json:"path"`
	Total     int        `json:"total"`
	Links     int        `json:"links"`
	Backlinks []Backlink `json:"backlinks"`
}

// GraphRequest is the input of vault_graph.
type GraphRequest struct {
	Folder        string   `json:"folder,omitempty"`
	Type          string   `json:"type,omitempty"`
	Tags          []string `json:"tags,omitempty"`
	Status        string   `json:"status,omitempty"`
	IncludeRaw    bool     `json:"include_raw,omitempty"`
	IncludeBroken bool     `json:"include_broken,omitempty"`
	MaxNodes      int      `json:"max_nodes,omitempty"`
}

// GraphNode is one note (or, with IncludeBroken, one missing target).
type GraphNode struct {
	Path      string `json:"path"`
	Title     string `json:"title,omitempty"`
	Type      string `json:"type,omitempty"`
	InDegree  int    `json:"in_degree"`
	OutDegree int    `json:"out_degree"`
	Broken    bool   `json:"broken,omitempty"`
}

// GraphEdge is one resolved (or broken) link between two nodes, counted once
// per ordered pair.
type GraphEdge struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Broken bool   `json:"broken,omitempty"`
}

// GraphResult is the output of vault_graph. NodeCount, EdgeCount and
// BrokenCount count the whole graph of the notes that pass the filters;
// with IncludeBroken, NodeCount and EdgeCount count the missing targets and
// the broken links too, and BrokenTargetCount says how many of the nodes
// are missing targets (NodeCount - BrokenTargetCount notes);
// Truncated says Nodes keeps only the best connected of them (MaxNodes).
// Edges are the first MaxGraphEdges (by source path, then link order) of
// the KeptEdgeCount edges between the nodes kept; EdgesTruncated says some
// were left out.
type GraphResult struct {
	NodeCount   int `json:"node_count"`
	EdgeCount   int `json:"edge_count"`
	BrokenCount int `json:"broken_count"`
	// BrokenTargetCount: with IncludeBroken, how many of NodeCount are
	// missing link targets rather than notes.
	BrokenTargetCount int         `json:"broken_target_count,omitempty"`
	Truncated         bool        `json:"truncated,omitempty"`
	KeptEdgeCount     int         `json:"kept_edge_count"`
	EdgesTruncated    bool        `json:"edges_truncated,omitempty"`
	Nodes             []GraphNode `json:"nodes"`
	Edges             []GraphEdge `json:"edges"`
}

// HistoryRequest is the input of vault_history.
type HistoryRequest struct {
	Path  string `json:"path"`
	Limit int    `json:"limit,omitempty"`
}

// Version is one recorded version of a note (a commit that touched it,
// locally). ID is opaque, as WriteResult.Version.
type Version struct {
	ID      string `json:"id"`
	Date    string `json:"date"` // RFC 3339
	Author  string `json:"author,omitempty"`
	Message string `json:"message"`
}

// HistoryResult is the output of vault_history, newest first.
type HistoryResult struct {
	Path     string    `json:"path"`
	Versions []Version `json:"versions"`
}

// Stable error codes a client can tell apart. Path errors use the codes of
// internal/vaultfs (INVALID_PATH, PATH_ESCAPE, ...).
const (
	CodeInvalidArgument = "INVALID_ARGUMENT"
	CodeNotFound        = "NOT_FOUND"
	CodeUnavailable     = "UNAVAILABLE"
	CodeInternal        = "INTERNAL"
)

// Error is a failure with a stable code and, for bad input, the field.
type Error struct {
	Code    string
	Field   string
	Message string
	// Uncertain says the write ended without a definite outcome: the change
	// may or may not have been applied (a connection lost after the request
	// was sent, say). A refusal is never uncertain.
	Uncertain bool
	Err       error
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s: %s", e.Code, e.Field, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

func (e *Error) Unwrap() error { return e.Err }

// Invalid reports bad input in one field.
func Invalid(field, format string, args ...any) error {
	return &Error{Code: CodeInvalidArgument, Field: field, Message: fmt.Sprintf(format, args...)}
}

// IsUncertain reports whether err, or an error it wraps, is an *Error
// marked Uncertain.
func IsUncertain(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Uncertain
}

// CodeOf returns the stable code of err: an *Error's code, or the code of any
// wrapped error that has a Code() method, or INTERNAL.
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	var c interface{ ErrorCode() string }
	if errors.As(err, &c) {
		return c.ErrorCode()
	}
	return CodeInternal
}

type progressKey struct{}

// ProgressFunc receives progress of long work (indexing): done of total.
type ProgressFunc func(done, total int, message string)

// WithProgress attaches a progress reporter to ctx.
func WithProgress(ctx context.Context, f ProgressFunc) context.Context {
	return context.WithValue(ctx, progressKey{}, f)
}

// Progress returns the reporter attached to ctx, or nil.
func Progress(ctx context.Context) ProgressFunc {
	f, _ := ctx.Value(progressKey{}).(ProgressFunc)
	return f
}
