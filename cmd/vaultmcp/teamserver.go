package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/cmdline"
	"github.com/vaultmcp/vaultmcp/internal/gitx"
	"github.com/vaultmcp/vaultmcp/internal/oauth"
	"github.com/vaultmcp/vaultmcp/internal/teamserver"
	"github.com/vaultmcp/vaultmcp/internal/teamstore"
)

const teamUsage = `Usage:
  vaultmcp team-server --data DIR [--listen ADDR] [--tls-cert FILE --tls-key FILE] [--insecure-http]
                       [--lang en|pt] [--rate-limit N] [--rate-burst N] [--public-url URL]
                       [--oauth-issuer URL --oauth-audience AUD]
                       [--db postgres://... [--advertise URL] [--lease-ttl D]]
                                                       serve the REST API and MCP at /projects/NAME/mcp
  vaultmcp team-server project add --data DIR [--from VAULT_DIR] [--remote GIT_URL [--branch B]] NAME
                                                       create a project (prints its id)
  vaultmcp team-server project list --data DIR
  vaultmcp team-server project remove --data DIR NAME  with every replica stopped; its vault kept in DIR/removed/
  vaultmcp team-server key add --data DIR [--project P]... [--read-only] [--expires WHEN] NAME
                                                       create an API key (printed once)
  vaultmcp team-server key list --data DIR
  vaultmcp team-server key rotate --data DIR [--expires WHEN] NAME
                                                       a new secret for the key (printed once; the old one refused)
  vaultmcp team-server key revoke --data DIR NAME
  vaultmcp team-server audit --data DIR [--project P] [--key NAME] [--since WHEN] [--limit N] [--json]
                                                       the audit log, newest first
  vaultmcp team-server backup --data DIR --to NEW_DIR  a copy of the data directory, made while the server runs

Every command also takes --db URL (default $VAULTMCP_DB): the metadata in PostgreSQL (postgres://...)
instead of SQLite in DIR; DIR still holds the vaults (with --db, this replica's clones). Replicas sharing
one --db serve any project from any replica; a project added with --remote keeps its vault in that git
remote, pushed before each write is answered. Health: /healthz, /readyz; metrics: /metrics.
--data defaults to $VAULTMCP_DATA. The server listens on ` + teamserver.DefaultListen + ` unless --listen says otherwise;
an address that is not loopback needs --tls-cert/--tls-key, or --insecure-http behind a proxy that terminates TLS.
`

func runTeamServer(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "project":
			return runTeamProject(ctx, args[1:], stdout, stderr)
		case "key":
			return runTeamKey(ctx, args[1:], stdout, stderr)
		case "audit":
			return runTeamAudit(ctx, args[1:], stdout, stderr)
		case "backup":
			return runTeamBackup(ctx, args[1:], stdout, stderr)
		}
	}
	fs := newTeamFlagSet("team-server", stderr)
	data := dataFlag(fs)
	var l teamserver.Listen
	fs.StringVar(&l.Addr, "listen", teamserver.DefaultListen, "address to listen on")
	fs.StringVar(&l.TLSCert, "tls-cert", "", "TLS certificate (PEM)")
	fs.StringVar(&l.TLSKey, "tls-key", "", "TLS private key (PEM)")
	fs.BoolVar(&l.InsecureHTTP, "insecure-http", false, "allow plain HTTP on a non-loopback address (behind a TLS proxy)")
	lang := fs.String("lang", os.Getenv("VAULT_LANG"), "language of the MCP tools' output, of the REST API's refusals for a request without a known Accept-Language, and of every vault's new notes: en or pt (default $VAULT_LANG; unset: output in en, each project's notes in its own vault's language)")
	issuer := fs.String("oauth-issuer", os.Getenv("VAULTMCP_OAUTH_ISSUER"), "also accept JWT access tokens of this OAuth issuer (its JWKS from its metadata); needs --oauth-audience ($VAULTMCP_OAUTH_ISSUER)")
	audience := fs.String("oauth-audience", os.Getenv("VAULTMCP_OAUTH_AUDIENCE"), "the audience (aud) the tokens must carry, usually this server's public URL ($VAULTMCP_OAUTH_AUDIENCE)")
	rate := fs.Float64("rate-limit", teamserver.DefaultRateLimit, "requests per second allowed per key (0: no limit)")
	burst := fs.Int("rate-burst", teamserver.DefaultRateBurst, "requests a key may send at once")
	publicURL := fs.String("public-url", "", "the server's URL as clients reach it (behind a proxy), for the OAuth protected-resource metadata")
	advertise := fs.String("advertise", "", "with --db: the URL other replicas forward requests to (default: the address listened on)")
	leaseTTL := fs.Duration("lease-ttl", teamserver.DefaultLeaseTTL, "with --db: how long a vault lease lasts unless renewed (the longest a dead replica's vaults wait for another)")
	if len(args) > 0 && args[0] == "help" {
		args[0] = "-h"
	}
	pos, err := parseInterleaved(fs, args, stdout)
	if err != nil {
		return &exitError{2, err}
	}
	if len(pos) > 0 {
		fmt.Fprint(stderr, teamUsage)
		return &exitError{2, fmt.Errorf("team-server: unexpected argument %q", pos[0])}
	}
	if err := l.Check(); err != nil {
		return err
	}
	if *advertise != "" {
		if data.db == "" {
			return &exitError{2, errors.New("--advertise goes with --db postgres://... (replicas share a database; one server on SQLite has no other to be reached by)")}
		}
		if _, err := teamserver.CheckAdvertise(*advertise); err != nil {
			return &exitError{2, err}
		}
	}
	// Replicas forward to each other at the advertised URL; an address of
	// every interface names none of them. Told before the data directory
	// or the database is opened, as the other flag mistakes are.
	if data.db != "" && *advertise == "" {
		if host, _, err := net.SplitHostPort(l.Addr); err == nil {
			if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
				return &exitError{2, fmt.Errorf("--advertise is required with --db when --listen %s is every address: give the URL other replicas reach this one at (e.g. http://10.0.0.5:8787)", l.Addr)}
			}
		}
	}
	if data.db == "" {
		ttlSet := false
		fs.Visit(func(f *flag.Flag) { ttlSet = ttlSet || f.Name == "lease-ttl" })
		if ttlSet {
			return &exitError{2, errors.New("--lease-ttl goes with --db postgres://... (leases are how replicas sharing a database share the vaults; one server on SQLite holds every vault)")}
		}
	}
	if *leaseTTL < time.Second || *leaseTTL > 10*time.Minute {
		return &exitError{2, fmt.Errorf("--lease-ttl %v: must be between 1s and 10m", *leaseTTL)}
	}
	// NaN made every key's second request 429 for ever, a negative rate
	// meant no limit, and a burst under 1 was quietly replaced.
	if math.IsNaN(*rate) || math.IsInf(*rate, 0) || *rate < 0 {
		return &exitError{2, fmt.Errorf("--rate-limit %v: must be a number of requests per second, 0 or more (0: no limit)", *rate)}
	}
	if *burst < 1 {
		return &exitError{2, fmt.Errorf("--rate-burst %d: must be 1 or more (the requests a key may send at once)", *burst)}
	}
	// The language too is a flag mistake, told before the data directory
	// is made or opened.
	if err := (&Config{Lang: *lang}).checkLang(); err != nil {
		return &exitError{2, err}
	}
	d, err := openData(ctx, *data)
	if err != nil {
		return err
	}
	defer d.Close()
	// The shared checks: language, cache folder, log level (the data
	// directory stands for the vault folder).
	c := Config{Vault: d.Dir, Lang: *lang}
	if err := c.check(); err != nil {
		return err
	}
	log := logger(stderr, c.LogLevel)
	var verifier *oauth.Verifier
	switch {
	case *issuer != "" && *audience != "":
		if u, err := url.Parse(*issuer); err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname()))) {
			return &exitError{2, fmt.Errorf("--oauth-issuer %q: must be an https URL (http only on loopback)", *issuer)}
		}
		verifier = &oauth.Verifier{Issuer: *issuer, Audience: *audience}
		if err := verifier.Refresh(ctx); err != nil {
			log.Warn("the OAuth issuer's keys could not be fetched yet; tokens are refused until they can", "issuer", *issuer, "err", err)
		}
	case *issuer != "" || *audience != "":
		return &exitError{2, errors.New("--oauth-issuer and --oauth-audience go together")}
	}
	teamserver.SetVersion(version)
	srv, err := teamserver.New(ctx, teamserver.Config{
		Data: d, Lang: c.Lang, Logger: log, RateLimit: *rate, RateBurst: *burst,
		NoSnapshots: c.CacheDir == "", PublicURL: *publicURL, OAuth: verifier, CrashAt: os.Getenv("VAULTMCP_TEST_CRASH"),
		Advertise: *advertise, LeaseTTL: *leaseTTL,
	})
	if err != nil {
		return err
	}
	defer srv.Close()
	return srv.Serve(ctx, l)
}

// newTeamFlagSet is newFlagSet for the team server's commands: their usage
// is the team server's overview, then the flags of the command at hand, on
// the flag set's output (stdout when asked for with -h, see
// parseInterleaved).
func newTeamFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := newFlagSet(name, stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "%s\nFlags of %s:\n", teamUsage, fs.Name())
		fs.PrintDefaults()
	}
	return fs
}

// adminGroup begins a group of admin commands (team-server project, key:
// cmds lists them): no command is a usage error, help shows the usage, and
// a command gets its flag set, with the data directory's flags.
func adminGroup(args []string, stdout, stderr io.Writer, group, cmds string) (*flag.FlagSet, *dataFlags, error) {
	if len(args) == 0 {
		fmt.Fprint(stderr, teamUsage)
		return nil, nil, &exitError{2, fmt.Errorf("team-server %s: %s", group, cmds)}
	}
	if cmdline.IsHelp(args[0]) || args[0] == "help" {
		fmt.Fprint(stdout, teamUsage)
		return nil, nil, errHelp
	}
	fs := newTeamFlagSet("team-server "+group+" "+args[0], stderr)
	return fs, dataFlag(fs), nil
}

// adminArgs parses the flags of an admin command (anywhere among args)
// and its positional arguments: exactly one NAME, of what ("project",
// "key"), or none when what is "". A mistake is a usage error naming the
// command.
func adminArgs(fs *flag.FlagSet, args []string, stdout io.Writer, what string) (string, error) {
	pos, err := parseInterleaved(fs, args, stdout)
	switch {
	case err != nil:
		return "", &exitError{2, err}
	case what == "" && len(pos) > 0:
		return "", &exitError{2, fmt.Errorf("%s: unexpected argument %q", fs.Name(), pos[0])}
	case what == "":
		return "", nil
	case len(pos) != 1:
		return "", &exitError{2, fmt.Errorf("%s: give exactly one %s NAME", fs.Name(), what)}
	}
	return pos[0], nil
}

// dataFlags are where the team server keeps its data: --data and --db.
type dataFlags struct{ dir, db string }

func dataFlag(fs *flag.FlagSet) *dataFlags {
	f := &dataFlags{}
	fs.StringVar(&f.dir, "data", os.Getenv("VAULTMCP_DATA"), "data directory: the vaults and the database (default $VAULTMCP_DATA)")
	secretFlag(fs, &f.db, "db", "VAULTMCP_DB", "metadata database: a postgres:// URL (default $VAULTMCP_DB; none: SQLite in the data directory)")
	return f
}

func openData(ctx context.Context, f dataFlags) (*teamserver.Data, error) {
	if f.dir == "" {
		return nil, &exitError{2, errors.New("team-server: no data directory: pass --data DIR or set VAULTMCP_DATA")}
	}
	return teamserver.OpenDataDB(ctx, f.dir, f.db, nil)
}

func runTeamProject(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, data, err := adminGroup(args, stdout, stderr, "project", "add, list or remove")
	if err != nil {
		return err
	}
	switch args[0] {
	case "add":
		from := fs.String("from", "", "import this vault folder (a git repository is cloned with its history)")
		remote := fs.String("remote", "", "the git remote that keeps the vault (https://, ssh://, user@host:path, a path): cloned when its branch has commits, else the new vault is pushed to it; credentials from git's credential helpers or SSH agent")
		branch := fs.String("branch", "", "with --remote: the branch (default: the remote's default branch, else main)")
		name, err := adminArgs(fs, args[1:], stdout, "project")
		if err != nil {
			return err
		}
		// An empty --from or --remote (a script's unset variable) is not
		// taken for no flag: the project would start empty, or keep its
		// vault here, where an import or a remote was meant.
		var empty string
		fs.Visit(func(f *flag.Flag) {
			if (f.Name == "from" || f.Name == "remote") && f.Value.String() == "" && empty == "" {
				empty = f.Name
			}
		})
		if empty != "" {
			return &exitError{2, fmt.Errorf("--%s is empty (leave it out for none)", empty)}
		}
		d, err := openData(ctx, *data)
		if err != nil {
			return err
		}
		defer d.Close()
		p, warnings, err := d.CreateProject(ctx, teamserver.ProjectSpec{Name: name, From: *from, Remote: *remote, Branch: *branch})
		for _, w := range warnings {
			fmt.Fprintln(stderr, "warning: "+w)
		}
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, p.ID)
		return nil
	case "remove":
		name, err := adminArgs(fs, args[1:], stdout, "project")
		if err != nil {
			return err
		}
		d, err := openData(ctx, *data)
		if err != nil {
			return err
		}
		defer d.Close()
		p, moved, err := d.RemoveProject(ctx, name)
		if errors.Is(err, teamstore.ErrNotFound) {
			return fmt.Errorf("no project %q", name)
		}
		if err != nil {
			return err
		}
		switch {
		case moved != "":
			fmt.Fprintf(stdout, "removed project %s; its vault is kept in %s (delete that folder when it is no longer needed)\n", p.Name, moved)
		case p.Remote != "":
			fmt.Fprintf(stdout, "removed project %s; its vault stays in its git remote %s\n", p.Name, gitx.RedactURL(p.Remote))
		default:
			fmt.Fprintf(stdout, "removed project %s (it had no vault folder here)\n", p.Name)
		}
		return nil
	case "list":
		if _, err := adminArgs(fs, args[1:], stdout, ""); err != nil {
			return err
		}
		d, err := openData(ctx, *data)
		if err != nil {
			return err
		}
		defer d.Close()
		ps, err := d.Store.Projects(ctx)
		if err != nil {
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tID\tCREATED\tREMOTE")
		for _, p := range ps {
			remote := "-"
			if p.Remote != "" {
				remote = gitx.RedactURL(p.Remote) + " (" + p.Branch + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", p.Name, p.ID, p.CreatedAt.Format(time.RFC3339), remote)
		}
		return tw.Flush()
	}
	return &exitError{2, fmt.Errorf("team-server project: unknown command %q (add, list or remove)", args[0])}
}

func runTeamKey(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, data, err := adminGroup(args, stdout, stderr, "key", "add, list, rotate or revoke")
	if err != nil {
		return err
	}
	switch args[0] {
	case "add":
		var projects projectList
		fs.Var(&projects, "project", "limit the key to this project (name or id; repeatable; default every project)")
		readOnly := fs.Bool("read-only", false, "the key may only read")
		expires := fs.String("expires", "", "the key is refused from then on: a duration from now (90d, 12h), a date (2027-03-01, UTC) or RFC 3339; default never")
		name, err := adminArgs(fs, args[1:], stdout, "key")
		if err != nil {
			return err
		}
		d, err := openData(ctx, *data)
		if err != nil {
			return err
		}
		defer d.Close()
		var until time.Time
		if *expires != "" {
			if until, err = parseExpiry(*expires, d.Now()); err != nil {
				return &exitError{2, err}
			}
		}
		secret, _, err := d.AddKeyUntil(ctx, name, projects, *readOnly, until)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, secret)
		fmt.Fprintln(stderr, "This key is shown once; only its hash is stored.")
		return nil
	case "list":
		if _, err := adminArgs(fs, args[1:], stdout, ""); err != nil {
			return err
		}
		d, err := openData(ctx, *data)
		if err != nil {
			return err
		}
		defer d.Close()
		return listKeys(ctx, d, stdout)
	case "rotate":
		expires := fs.String("expires", "", "its new expiry: never, a duration from now (90d, 12h), a date (2027-03-01, UTC) or RFC 3339; default: the one it has")
		name, err := adminArgs(fs, args[1:], stdout, "key")
		if err != nil {
			return err
		}
		d, err := openData(ctx, *data)
		if err != nil {
			return err
		}
		defer d.Close()
		var until *time.Time
		if *expires != "" {
			t, err := parseExpiry(*expires, d.Now())
			if err != nil {
				return &exitError{2, err}
			}
			until = &t
		}
		secret, _, err := d.RotateKey(ctx, name, until)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, secret)
		fmt.Fprintln(stderr, "This key is shown once; only its hash is stored. The old secret is refused from now on.")
		return nil
	case "revoke":
		name, err := adminArgs(fs, args[1:], stdout, "key")
		if err != nil {
			return err
		}
		d, err := openData(ctx, *data)
		if err != nil {
			return err
		}
		defer d.Close()
		if err := d.RevokeKey(ctx, name); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "revoked %s\n", name)
		return nil
	}
	return &exitError{2, fmt.Errorf("team-server key: unknown command %q (add, list, rotate or revoke)", args[0])}
}

// runTeamAudit prints the audit log, newest first: a table, or one JSON
// object a line (--json).
func runTeamAudit(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newTeamFlagSet("team-server audit", stderr)
	data := dataFlag(fs)
	project := fs.String("project", "", "only the rows of this project (name or id; a removed project's by its id)")
	key := fs.String("key", "", "only the rows of the key of this name (a revoked key's too)")
	since := fs.String("since", "", "only the rows from this time on: RFC 3339 (2026-12-01T09:00:00Z), a date (2026-12-01, UTC) or a duration before now (24h, 7d)")
	limit := fs.Int("limit", 100, "at most this many rows, the newest")
	asJSON := fs.Bool("json", false, "one JSON object a line instead of a table")
	_, err := adminArgs(fs, args, stdout, "")
	if err != nil {
		return err
	}
	if *limit < 1 {
		return &exitError{2, fmt.Errorf("--limit %d: must be 1 or more", *limit)}
	}
	q := teamstore.AuditQuery{KeyName: *key, Limit: *limit}
	if *since != "" {
		if q.Since, err = parseSince(*since, time.Now()); err != nil {
			return &exitError{2, err}
		}
	}
	d, err := openData(ctx, *data)
	if err != nil {
		return err
	}
	defer d.Close()
	names, err := projectNames(ctx, d)
	if err != nil {
		return err
	}
	if *project != "" {
		p, err := d.Store.Project(ctx, *project)
		switch {
		case err == nil:
			q.Project = p.ID
		case errors.Is(err, teamstore.ErrNotFound) && teamserver.IsID(*project):
			q.Project = *project // a removed project's rows, by its id
		case errors.Is(err, teamstore.ErrNotFound):
			return &exitError{1, fmt.Errorf("--project %q: no such project (a removed project's rows are found by its id)", *project)}
		default:
			return err
		}
	}
	rows, err := d.Store.Audit(ctx, q)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		for _, r := range rows {
			if err := enc.Encode(auditJSON{At: r.At, Key: r.KeyName, KeyID: r.KeyID, Project: names[r.Project], ProjectID: r.Project,
				Operation: r.Operation, Paths: r.Paths, Version: r.Version, IdempotencyKey: r.IdempotencyKey, Result: r.Result}); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tKEY\tPROJECT\tOPERATION\tRESULT\tVERSION\tPATHS")
	for _, r := range rows {
		project := cmp.Or(names[r.Project], r.Project, "-")
		version := cmp.Or(r.Version, "-")
		if len(version) > 12 {
			version = version[:12]
		}
		paths := "-"
		if len(r.Paths) > 0 {
			paths = strings.Join(r.Paths, ", ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.At.UTC().Format(time.RFC3339), cmp.Or(r.KeyName, "-"), project,
			r.Operation, r.Result, version, paths)
	}
	return tw.Flush()
}

// runTeamBackup copies the data directory (team-server backup).
func runTeamBackup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newTeamFlagSet("team-server backup", stderr)
	data := dataFlag(fs)
	to := fs.String("to", "", "the backup: a folder that does not exist yet (or is empty), outside the data directory")
	if _, err := adminArgs(fs, args, stdout, ""); err != nil {
		return err
	}
	if *to == "" {
		return &exitError{2, errors.New("team-server backup: give the backup's folder with --to NEW_DIR")}
	}
	d, err := openData(ctx, *data)
	if err != nil {
		return err
	}
	defer d.Close()
	rep, err := d.Backup(ctx, *to)
	for _, w := range rep.Warnings {
		fmt.Fprintln(stderr, "warning: "+w)
	}
	if errors.Is(err, teamserver.ErrBackupStore) {
		return &exitError{2, fmt.Errorf("team-server backup: %w", err)}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "backed up to %s: the database and %d vault(s) (writes waited %s while the database was copied)", *to, len(rep.Vaults), rep.WritesHeld.Round(time.Millisecond))
	if len(rep.Remotes) > 0 {
		fmt.Fprintf(stdout, "; %d project(s) kept in a git remote (%s) are cloned from it again when a server starts on the backup", len(rep.Remotes), strings.Join(rep.Remotes, ", "))
	}
	fmt.Fprintln(stdout)
	return nil
}

// auditJSON is one audit row as `audit --json` prints it.
type auditJSON struct {
	At             time.Time `json:"at"`
	Key            string    `json:"key"`
	KeyID          string    `json:"keyId"`
	Project        string    `json:"project"`
	ProjectID      string    `json:"projectId"`
	Operation      string    `json:"operation"`
	Paths          []string  `json:"paths"`
	Version        string    `json:"version"`
	IdempotencyKey string    `json:"idempotencyKey"`
	Result         string    `json:"result"`
}

// parseExpiry reads --expires of key add and key rotate: "never" (the zero
// time) or a time ahead (see parseWhen).
func parseExpiry(v string, now time.Time) (time.Time, error) {
	if v == "never" {
		return time.Time{}, nil
	}
	if t, ok := parseWhen(v, now, 1); ok {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--expires %q: give never, a duration from now (90d, 12h), a date (2027-03-01) or a time (2027-03-01T09:00:00Z)", v)
}

// parseSince reads audit --since: a time back (see parseWhen).
func parseSince(v string, now time.Time) (time.Time, error) {
	if t, ok := parseWhen(v, now, -1); ok {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("--since %q: give a time (2026-12-01T09:00:00Z), a date (2026-12-01) or a duration before now (24h, 7d)", v)
}

// parseWhen reads a time given on the command line: RFC 3339, a date
// (midnight UTC), or a positive duration (Go's, or whole days: 90d) from
// now, ahead (dir 1) or back (dir -1).
func parseWhen(v string, now time.Time, dir time.Duration) (time.Time, bool) {
	for _, layout := range []string{time.RFC3339, time.DateOnly} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, true
		}
	}
	d, err := time.ParseDuration(v)
	if n, ok := strings.CutSuffix(v, "d"); ok {
		days, derr := strconv.Atoi(n)
		d, err = time.Duration(days)*24*time.Hour, derr
	}
	if err != nil || d <= 0 {
		return time.Time{}, false
	}
	return now.Add(dir * d), true
}

// projectList is the --project flag of key add: names or ids, repeated or
// separated by commas. An empty one is refused, not skipped: a key whose
// list ends up empty is a key for every project, so a script's unset
// variable (--project "$P") would widen the key it meant to narrow.
type projectList []string

func (l *projectList) String() string { return strings.Join(*l, ",") }

func (l *projectList) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			return fmt.Errorf("%q holds an empty project name (leave --project out for a key to every project)", v)
		}
		*l = append(*l, p)
	}
	return nil
}

// projectNames maps the projects' ids to their names.
func projectNames(ctx context.Context, d *teamserver.Data) (map[string]string, error) {
	names := map[string]string{}
	ps, err := d.Store.Projects(ctx)
	for _, p := range ps {
		names[p.ID] = p.Name
	}
	return names, err
}

func listKeys(ctx context.Context, d *teamserver.Data, stdout io.Writer) error {
	now := d.Now()
	keys, err := d.Store.Keys(ctx)
	if err != nil {
		return err
	}
	names, _ := projectNames(ctx, d) // ids stand in for names it could not read
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSCOPE\tACCESS\tCREATED\tLAST USED\tSTATE\tEXPIRES")
	for _, k := range keys {
		scope := "all projects"
		if len(k.Projects) > 0 {
			var ps []string
			for _, id := range k.Projects {
				if n, ok := names[id]; ok {
					ps = append(ps, n)
				} else {
					ps = append(ps, id)
				}
			}
			scope = strings.Join(ps, ",")
		}
		access := "read-write"
		if k.ReadOnly {
			access = "read-only"
		}
		used := "never"
		if !k.LastUsedAt.IsZero() {
			used = k.LastUsedAt.Format(time.RFC3339)
		}
		state := "active"
		switch {
		case !k.RevokedAt.IsZero():
			state = "revoked " + k.RevokedAt.Format(time.RFC3339)
		case k.Expired(now):
			state = "expired"
		}
		expires := "never"
		if !k.ExpiresAt.IsZero() {
			expires = k.ExpiresAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.Name, scope, access, k.CreatedAt.Format(time.RFC3339), used, state, expires)
	}
	return tw.Flush()
}
