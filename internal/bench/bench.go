package bench

import "log/slog"

// Options configure a bench run.
type Options struct {
	// Vault is a vault folder to measure (read only: writes are measured on
	// a copy); empty for none.
	Vault string
	// Sizes are the note counts of the generated vaults to measure.
	Sizes []int
	// Queries is the number of search queries per vault; 0 means 200.
	Queries int
	// Lang is the profile language ("en" or "pt"); empty means "en".
	Lang string
	// Exe is the vaultmcp executable measured over stdio MCP; empty skips
	// the stdio figures (and reports that).
	Exe string
	// OutDir keeps the generated vaults (reused by the next run with the
	// same size and seed); empty means a temporary folder removed at the end.
	OutDir string
	// Seed of the generated vaults and of the queries; 0 means 1.
	Seed uint64
	// FreshTrials, Writes: number of freshness trials and of write+commit
	// operations; 0 means 10 and 20.
	FreshTrials, Writes int
	// Rg is the ripgrep executable; empty means "rg" looked up on PATH.
	Rg string
	// Logger receives progress (one line per phase); nil discards it.
	Logger *slog.Logger
	// MemoryLimit stops the run once this process's resident memory passes
	// it: OnMemoryLimit then receives the figures measured so far and should
	// end the process (a vault operation that runs away with memory cannot
	// be interrupted). 0 means half of the machine's memory when it is
	// known; below 0, or without OnMemoryLimit, there is no limit.
	MemoryLimit   int64
	OnMemoryLimit func(partial *Report, err error)
}

// Report is the outcome of a run.
type Report struct {
	Machine Machine       `json:"machine"`
	Queries int           `json:"queries_per_vault"`
	Vaults  []VaultReport `json:"vaults"`
}

// Machine describes where the figures were measured.
type Machine struct {
	OS          string `json:"os"`
	Arch        string `json:"arch"`
	CPUs        int    `json:"cpus"`
	CPU         string `json:"cpu,omitempty"`
	MemoryBytes int64  `json:"memory_bytes,omitempty"`
	Go          string `json:"go"`
	Ripgrep     string `json:"ripgrep,omitempty"` // version line; empty when not installed
}

// VaultReport holds the figures of one vault. Durations are milliseconds.
type VaultReport struct {
	Name      string    `json:"name"`
	Path      string    `json:"path"`
	Generated *GenStats `json:"generated,omitempty"`
	// GenerateMs is the time the generator took (0 when reused or not generated).
	GenerateMs float64 `json:"generate_ms,omitempty"`
	Notes      int     `json:"notes"`
	Files      int     `json:"files"`
	Unindexed  int     `json:"unindexed"`
	Bytes      int64   `json:"bytes"` // of the notes (.md files) on disk

	InProcess InProcess `json:"in_process"`
	Stdio     *Stdio    `json:"stdio,omitempty"`
	// StdioNote says why the stdio figures are missing.
	StdioNote string `json:"stdio_note,omitempty"`
	Rg        *Dist  `json:"rg,omitempty"`
	// RgNote says why the rg figures are missing ("rg not installed").
	RgNote string  `json:"rg_note,omitempty"`
	Writes *Writes `json:"writes,omitempty"`
	// Peer is another server measured on the same vault and queries
	// (--peer), for a side-by-side row.
	Peer *PeerReport `json:"peer,omitempty"`
	// Problems lists what could not be measured and why.
	Problems []string `json:"problems,omitempty"`
}

// InProcess are the figures of the vault service inside this process.
type InProcess struct {
	// ColdStartMs: vault.Open to the first search answered (Ready included).
	ColdStartMs float64 `json:"cold_start_ms"`
	// IndexMs: vault.Open to Ready.
	IndexMs     float64 `json:"index_ms"`
	NotesPerSec float64 `json:"notes_per_sec"`
	// HeapBytes is the live Go heap after indexing (after a GC).
	HeapBytes uint64 `json:"heap_bytes"`
	Search    Dist   `json:"search"`
}

// Stdio are the figures of a real vaultmcp process over stdio MCP.
type Stdio struct {
	// HandshakeMs: exec start to the initialize answer read.
	HandshakeMs float64 `json:"handshake_ms"`
	// FirstSearchMs: exec start to the first vault_search answer read.
	FirstSearchMs float64 `json:"first_search_ms"`
	// FirstSearchAgainMs is FirstSearchMs of a second first start (an
	// empty cache folder again) made right after the first process exited:
	// on a small virtual machine a process's fresh memory costs much more
	// when no process freed memory just before (the host took it back),
	// and FirstSearchMs, the bench's first child, is that cold case; this
	// one finds the memory the first process freed. 0 when it failed (see
	// Problems).
	FirstSearchAgainMs float64 `json:"first_search_again_ms,omitempty"`
	// Search: vault_search round trips of a minimal client, from writing
	// the tools/call frame to having read the whole answer frame and decoded
	// its JSON-RPC envelope (id, error, result.isError): what the server
	// costs a client, the client's own parsing of the answer aside. Timed
	// once the server has written its index snapshot (the steady state).
	Search Dist `json:"search"`
	// AnswerBytes is the mean size of a search answer frame.
	AnswerBytes int `json:"answer_bytes"`
	// SearchGoSDK: the same queries on the same process through the go-sdk
	// client's session.CallTool, which also decodes the whole answer into
	// Go values (the structured content into maps). Nil when that failed
	// (see Problems).
	SearchGoSDK *Dist `json:"search_go_sdk,omitempty"`
	// PeakRSSBytes is the child's peak resident set size (VmHWM).
	PeakRSSBytes int64 `json:"peak_rss_bytes"`
	// The process above starts with an empty cache folder, so it indexes
	// every note and writes the index snapshot; Warm is a second process
	// started on that snapshot (nil when none was written, see Problems).
	Warm *WarmStart `json:"warm,omitempty"`
}

// WarmStart are the figures of a vaultmcp process that starts from the
// index snapshot of an earlier one (no note changed in between).
type WarmStart struct {
	// SnapshotBytes is the size of the snapshot file.
	SnapshotBytes int64 `json:"snapshot_bytes"`
	// SnapshotMs: exec start of the first process to its snapshot file
	// written.
	SnapshotMs    float64 `json:"snapshot_ms"`
	HandshakeMs   float64 `json:"handshake_ms"`
	FirstSearchMs float64 `json:"first_search_ms"`
	PeakRSSBytes  int64   `json:"peak_rss_bytes"`
}

// Writes are the figures measured on a git copy of the vault.
type Writes struct {
	// Freshness: an external os.WriteFile of a note with a new word until a
	// search finds it (polled every 2 ms).
	Freshness Dist `json:"freshness"`
	// WriteCommit: vault_write_note creating a note, committed to git.
	WriteCommit Dist `json:"write_commit"`
	Move        Move `json:"move"`
}

// Move is the rename of the most linked note.
type Move struct {
	From           string  `json:"from"`
	To             string  `json:"to"`
	Backlinks      int     `json:"backlinks"`
	LinksRewritten int     `json:"links_rewritten"`
	NotesRewritten int     `json:"notes_rewritten"`
	Ms             float64 `json:"ms"`
	Committed      bool    `json:"committed"`
	// Warnings are the move's (why it was not committed, when it was not).
	Warnings []string `json:"warnings,omitempty"`
}
