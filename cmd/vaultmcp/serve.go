package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/gcpause"
	"github.com/vaultmcp/vaultmcp/internal/jsonrpcio"
	"github.com/vaultmcp/vaultmcp/internal/mcphttp"
	"github.com/vaultmcp/vaultmcp/internal/mcpserver"
	"github.com/vaultmcp/vaultmcp/internal/par"
	"github.com/vaultmcp/vaultmcp/internal/pollpipe"
	"github.com/vaultmcp/vaultmcp/internal/vault"
)

func runServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var c Config
	fs := newFlagSet("serve", stderr)
	c.common(fs)
	c.server(fs)
	httpAddr := fs.String("http", "", "serve MCP over Streamable HTTP on ADDR (e.g. 127.0.0.1:8765) instead of stdio")
	// The key from the environment is never shown as the flag's default
	// (see secretFlag).
	apiKey := new(string)
	secretFlag(fs, apiKey, "api-key", "VAULTMCP_API_KEY", "key required from HTTP clients (X-API-Key or Authorization: Bearer); required off loopback (default $VAULTMCP_API_KEY)")
	var hc httpConfig
	hc.flags(fs)
	pos, err := parseInterleaved(fs, args, stdout)
	if err != nil {
		return &exitError{2, err}
	}
	if len(pos) > 0 {
		return &exitError{2, fmt.Errorf("serve: unexpected argument %q", pos[0])}
	}
	if r, ok := remoteFromEnv(); ok {
		return runRemote(ctx, c, r, *httpAddr, *apiKey, hc, stdin, stdout, stderr)
	}
	if err := c.check(); err != nil {
		return err
	}
	var hopts mcphttp.Options
	if *httpAddr != "" {
		if hopts, err = hc.options(); err != nil {
			return &exitError{2, err}
		}
	}
	log := logger(stderr, c.LogLevel)
	svc, err := vault.Open(ctx, vault.Options{Dir: c.Vault, Lang: c.Lang, Logger: log, Watch: true, AutoPush: c.AutoPush, ReadOnly: c.ReadOnly, CacheDir: c.CacheDir,
		StateDir: c.StateDir, PauseGC: gcpause.DefaultLimit, SearchGate: par.NewGate(0)})
	if err != nil {
		return err
	}
	defer svc.Close()
	opts := mcpserver.Options{Lang: c.Lang, ReadOnly: c.ReadOnly, Version: version, Logger: log}
	if *httpAddr == "" {
		if f, ok := stdin.(*os.File); ok && isTerminal(f) {
			// A person who typed vaultmcp in a terminal: without this, log
			// lines and then nothing, as the server waits for frames.
			fmt.Fprintln(stderr, "vaultmcp: serving MCP over stdio: an MCP client (Claude Code, Codex, Cursor, …) starts this command and talks to it through stdin and stdout. To search from a terminal: vaultmcp search QUERY; vaultmcp --help lists the commands. Ctrl-D ends.")
		}
		return serveStdio(ctx, mcpserver.New(svc, opts), stdin, stdout, log)
	}
	return serveHTTP(ctx, *httpAddr, *apiKey, hopts, svc, opts)
}

// serveStdio serves MCP on stdin and stdout until the input ends. Our
// framing, not mcp.IOTransport: the SDK's ends the session on the first
// malformed frame. A pipe on stdin is read through the runtime's poller
// (see package pollpipe): a request handed from the reading goroutine to
// the SDK's then runs at once, instead of after the runtime takes back the
// processor of a thread blocked in read(2).
func serveStdio(ctx context.Context, server *mcp.Server, stdin io.Reader, stdout io.Writer, log *slog.Logger) error {
	if f, ok := stdin.(*os.File); ok {
		if polled, ok := pollpipe.Reopen(f); ok {
			defer polled.Close()
			stdin = polled
			log.Debug("stdin is a pipe: read through the poller")
		}
	}
	t := &jsonrpcio.Transport{Reader: stdin, Writer: stdout, Logger: log}
	err := server.Run(ctx, t)
	if err != nil && (ctx.Err() != nil || errors.Is(err, io.EOF)) {
		return nil
	}
	return err
}

// serveHTTP serves MCP over Streamable HTTP at /mcp with the protections
// of internal/mcphttp. Off loopback a key is required.
func serveHTTP(ctx context.Context, addr, key string, hopts mcphttp.Options, svc api.Backend, opts mcpserver.Options) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %q: %w", addr, err)
	}
	if !isLoopback(host) && key == "" {
		return fmt.Errorf("--http %q is not a loopback address: set --api-key or VAULTMCP_API_KEY", addr)
	}
	if key != "" {
		hopts.Verify = mcphttp.StaticKey(key)
	}
	hopts.Logger = opts.Logger
	server := mcpserver.New(svc, opts)
	handler, err := mcphttp.New(func(*http.Request) *mcp.Server { return server }, hopts)
	if err != nil {
		return err
	}
	defer handler.Close()
	// An event stream (GET) never ends by itself: it ends when the
	// shutdown starts, so that the shutdown does not wait for it. Every
	// other request is finished and answered.
	streams, endStreams := context.WithCancel(context.Background())
	defer endStreams()
	mux := http.NewServeMux()
	mux.Handle("/mcp", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			rctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			defer context.AfterFunc(streams, cancel)()
			r = r.WithContext(rctx)
		}
		handler.ServeHTTP(w, r)
	}))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	opts.Logger.Info("serving MCP over Streamable HTTP", "url", "http://"+ln.Addr().String()+"/mcp",
		"session_timeout", sessionTimeoutText(hopts.SessionIdleTimeout), "max_sessions", hopts.MaxSessions, "body_timeout", hopts.BodyTimeout)
	srv := mcphttp.NewServer(mux, opts.Logger)
	srv.RegisterOnShutdown(endStreams)
	done := make(chan error, 1)
	go func() {
		<-ctx.Done()
		opts.Logger.Info("shutting down: answering the requests in flight", "at_most", httpDrainTimeout)
		shut, cancel := context.WithTimeout(context.Background(), httpDrainTimeout)
		defer cancel()
		done <- srv.Shutdown(shut)
	}()
	// Serve returns as soon as the shutdown starts; the requests in flight
	// (a write committing, a search waiting for the first index) are
	// answered before the vault is closed and the process exits.
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	if err := <-done; err != nil {
		opts.Logger.Warn("requests still in flight were cut off at shutdown", "after", httpDrainTimeout, "err", err)
	}
	return nil
}

// httpDrainTimeout is how long, at most, serve --http waits at shutdown for
// the requests in flight to be answered: stdio's drain (the calls read
// before the input ended).
const httpDrainTimeout = jsonrpcio.DrainTimeout

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
