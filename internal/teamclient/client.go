package teamclient

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/vault"
)

// The reliability rules (DESIGN.md section 7, "Remote client").
const (
	CallBudget     = 45 * time.Second // all the requests of one tool call
	AttemptTimeout = 20 * time.Second // one attempt, never past the budget
	MinAttempt     = 2 * time.Second  // no attempt starts with less budget left
	MaxAttempts    = 3
	MaxJitter      = 250 * time.Millisecond
	MaxRetryAfter  = 10 * time.Second
	// inUsePause is the pause before asking again about a write whose
	// first request is still running, when the server gives no Retry-After.
	inUsePause = time.Second
	// maxAnswer bounds an answer's body: a note is at most 10 MiB, a graph
	// or a list of a large vault a few more.
	maxAnswer = 64 << 20
)

// pauses are the waits before the second and the third attempt.
var pauses = [MaxAttempts - 1]time.Duration{time.Second, 3 * time.Second}

// Config configures a Client.
type Config struct {
	// URL is the team server's base URL (http or https), e.g.
	// https://vault.example.com; the API is under URL/api/.
	URL string
	// APIKey is sent as X-API-Key on every request, and nowhere else.
	APIKey string
	// Project is the default project (id or name) of calls that name none.
	Project string
	// CacheDir holds the local mirrors of projects on servers without the
	// extension endpoints; "" keeps them in a temporary folder removed by
	// Close.
	CacheDir string
	// Lang is the language of the client's tool output (en, the default,
	// or pt): the profile of the mirrors' index, and the Accept-Language of
	// every request, in which a team server words its warnings and
	// refusals.
	Lang   string
	Logger *slog.Logger
	// Clock is the time of budgets, timeouts and pauses; nil is the system
	// clock.
	Clock Clock
	// Jitter returns the random part of a pause; nil is uniform in
	// [0, MaxJitter].
	Jitter func() time.Duration
	// Transport sends the requests; nil is a clone of
	// http.DefaultTransport.
	Transport http.RoundTripper
}

// Client is the remote backend.
type Client struct {
	base     string // scheme://host[:port][/path], no trailing slash
	key      string
	http     *http.Client
	clock    Clock
	jitter   func() time.Duration
	log      *slog.Logger
	cacheDir string
	tempDir  bool // cacheDir is ours, removed by Close
	lang     string
	// refuse makes the refusals the client decides itself by the local
	// rules (on a plain server), in the language of lang.
	refuse vault.Refusals

	mu          sync.Mutex
	project     string          // default project; may be chosen by Connect
	ext         map[string]bool // project -> has the extension endpoints
	mirrors     map[string]*mirror
	mirrorLocks map[string]*sync.Mutex
	closed      bool
}

var (
	_ api.WriteBackend = (*Client)(nil)
	_ api.Learner      = (*Client)(nil)
	_ api.Team         = (*Client)(nil)
)

// ParseURL checks a team server URL: http or https, a host, no credentials,
// query or fragment. It returns the base URL without a trailing slash.
func ParseURL(raw string) (string, error) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil {
		if !strings.Contains(raw, "://") {
			// A host and port (127.0.0.1:8787) lack only the scheme.
			return "", fmt.Errorf("%q: use an http:// or https:// URL", raw)
		}
		return "", fmt.Errorf("%q is not a URL", raw)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("%q: use an http:// or https:// URL", raw)
	case u.Host == "" || u.Hostname() == "":
		return "", fmt.Errorf("%q: no host", raw)
	case u.User != nil:
		return "", errors.New("the URL must not carry credentials; the key goes in TEAM_VAULT_API_KEY")
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return "", fmt.Errorf("%q: no query or fragment (the API paths are added to it)", raw)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u.String(), nil
}

// IsLoopback reports whether the base URL's host is this machine (where
// plain http is fine).
func IsLoopback(base string) bool {
	u, err := url.Parse(base)
	if err != nil {
		return false
	}
	h := u.Hostname()
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// ConfigError is a setting of Config that New refuses.
type ConfigError struct {
	Setting string // URL, APIKey or Project
	Err     error
}

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// New returns a client of the server at cfg.URL. It sends nothing: Connect
// (or the first call) does. A refused setting is a *ConfigError.
func New(cfg Config) (*Client, error) {
	base, err := ParseURL(cfg.URL)
	if err != nil {
		return nil, &ConfigError{"URL", err}
	}
	key := strings.TrimSpace(cfg.APIKey)
	if key == "" {
		return nil, &ConfigError{"APIKey", errors.New("no API key")}
	}
	if strings.IndexFunc(key, func(r rune) bool { return r <= ' ' || r == 0x7f || r > unicode.MaxASCII }) >= 0 {
		return nil, &ConfigError{"APIKey", errors.New("the API key must be printable ASCII without spaces")}
	}
	if cfg.Project != "" {
		if err := checkProject(cfg.Project); err != nil {
			var ae *api.Error
			if errors.As(err, &ae) {
				err = errors.New(ae.Message)
			}
			return nil, &ConfigError{"Project", err}
		}
	}
	c := &Client{
		base:        base,
		key:         key,
		clock:       cfg.Clock,
		jitter:      cfg.Jitter,
		log:         cfg.Logger,
		cacheDir:    cfg.CacheDir,
		lang:        cfg.Lang,
		project:     cfg.Project,
		ext:         make(map[string]bool),
		mirrors:     make(map[string]*mirror),
		mirrorLocks: make(map[string]*sync.Mutex),
	}
	if c.clock == nil {
		c.clock = SystemClock{}
	}
	if c.jitter == nil {
		c.jitter = randomJitter
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.lang == "" {
		c.lang = "en"
	}
	c.refuse = vault.RefusalsFor(c.lang)
	rt := cfg.Transport
	if rt == nil {
		rt = http.DefaultTransport.(*http.Transport).Clone()
	}
	c.http = &http.Client{
		Transport: rt,
		// A redirect could carry X-API-Key to another host (Go drops only
		// Authorization and cookies): never follow one.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return c, nil
}

// URL is the server's base URL.
func (c *Client) URL() string { return c.base }

// DefaultProject is the project of calls that name none ("" when none).
func (c *Client) DefaultProject() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.project
}

// Close closes the mirrors (and removes them when they live in a
// temporary folder).
func (c *Client) Close() error {
	c.mu.Lock()
	c.closed = true
	ms := c.mirrors
	c.mirrors = map[string]*mirror{}
	c.mu.Unlock()
	var first error
	for _, m := range ms {
		if err := m.close(); err != nil && first == nil {
			first = err
		}
	}
	if c.tempDir {
		os.RemoveAll(c.cacheDir)
	}
	c.http.CloseIdleConnections()
	return first
}

func randomJitter() time.Duration {
	n, err := rand.Int(rand.Reader, big.NewInt(int64(MaxJitter)+1))
	if err != nil {
		return 0
	}
	return time.Duration(n.Int64())
}

// newKey returns a random (version 4) UUID, the Idempotency-Key of a write.
func newKey() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// checkProject validates a project reference (an id or a name).
func checkProject(p string) error {
	switch {
	case strings.TrimSpace(p) == "":
		return api.Invalid("project", "must not be empty")
	case len(p) > 128:
		return api.Invalid("project", "at most 128 characters (a project's id or name)")
	case strings.ContainsAny(p, `/\?#%`) || strings.IndexFunc(p, func(r rune) bool { return r < ' ' || r == 0x7f || unicode.IsSpace(r) }) >= 0:
		return api.Invalid("project", "%q is not a project id or name", p)
	}
	return nil
}

var errBudget = errors.New("budget spent")
var errAttemptTimeout = errors.New("attempt timed out")

// call is one tool call: its budget, its idempotency key and its project.
type call struct {
	c      *Client
	parent context.Context
	ctx    context.Context // ends at the budget or with parent
	cancel context.CancelCauseFunc
	stop   func() bool
	// deadline is the end of the budget on c.clock.
	deadline time.Time
	// key is the Idempotency-Key of the call's write, made on first use.
	key string
}

func (c *Client) begin(ctx context.Context) *call {
	bctx, cancel := context.WithCancelCause(ctx)
	cl := &call{c: c, parent: ctx, ctx: bctx, cancel: cancel, deadline: c.clock.Now().Add(CallBudget)}
	cl.stop = c.clock.AfterFunc(CallBudget, func() { cancel(errBudget) })
	return cl
}

func (cl *call) end() {
	cl.stop()
	cl.cancel(nil)
}

// project is the project of a call, resolved: its reference and whether
// its server has the extension endpoints.
type project struct {
	ref string
	ext bool
}

// projectRef is the project a call names, else the default; with neither,
// the only project the key may use, if it has exactly one.
func (cl *call) projectRef() (string, error) {
	if p := api.ProjectFrom(cl.parent); p != "" {
		return p, checkProject(p)
	}
	if p := cl.c.DefaultProject(); p != "" {
		return p, nil
	}
	list, err := cl.projects()
	if err != nil {
		return "", err
	}
	switch len(list.Projects) {
	case 1:
		p := list.Projects[0].ID
		cl.c.mu.Lock()
		if cl.c.project == "" {
			cl.c.project = p
		}
		cl.c.mu.Unlock()
		return p, nil
	case 0:
		return "", &api.Error{Code: CodeForbidden, Message: "the key may use no project of this server"}
	}
	names := make([]string, 0, len(list.Projects))
	for _, p := range list.Projects {
		names = append(names, p.Name)
	}
	return "", api.Invalid("project", "no default project (TEAM_VAULT_PROJECT_ID) and the key may use %d: %s; name one", len(names), strings.Join(names, ", "))
}

// resolve is the call's project, with its server's kind asked once.
func (cl *call) resolve() (project, error) {
	ref, err := cl.projectRef()
	if err != nil {
		return project{}, err
	}
	ext, err := cl.extensions(ref)
	var e *api.Error
	if err != nil && api.ProjectFrom(cl.parent) == "" && errors.As(err, &e) && (e.Code == api.CodeNotFound || e.Code == CodeForbidden) {
		// The agent named no project and never saw the setting that did:
		// say it, and what the agent can do instead.
		ne := *e
		ne.Message += fmt.Sprintf("; %q is the default project (TEAM_VAULT_PROJECT_ID): pass project, one that vault_projects lists", ref)
		return project{}, &ne
	}
	return project{ref: ref, ext: ext}, err
}

// run runs one tool call of the backend on its project.
func run[Out any](ctx context.Context, c *Client, f func(cl *call, p project) (*Out, error)) (*Out, error) {
	cl := c.begin(ctx)
	defer cl.end()
	p, err := cl.resolve()
	if err != nil {
		return nil, err
	}
	return f(cl, p)
}
