package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/mcpserver"
	"github.com/vaultmcp/vaultmcp/internal/vault"
)

func runServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var c Config
	fs := newFlagSet("serve", stderr)
	c.common(fs)
	httpAddr := fs.String("http", "", "serve MCP over Streamable HTTP on ADDR (e.g. 127.0.0.1:8765) instead of stdio")
	apiKey := fs.String("api-key", os.Getenv("VAULTMCP_API_KEY"), "key required from HTTP clients (X-API-Key or Authorization: Bearer); required off loopback (default $VAULTMCP_API_KEY)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return &exitError{2, err}
	}
	if len(pos) > 0 {
		return &exitError{2, fmt.Errorf("serve: unexpected argument %q", pos[0])}
	}
	if r, ok := remoteFromEnv(); ok {
		return runRemote(ctx, c, r, *httpAddr, *apiKey, stdin, stdout, stderr)
	}
	if err := c.check(); err != nil {
		return err
	}
	log := logger(stderr, c.LogLevel)
	svc, err := vault.Open(ctx, vault.Options{Dir: c.Vault, Lang: c.Lang, Logger: log, Watch: true, AutoPush: c.AutoPush, ReadOnly: c.ReadOnly, CacheDir: c.CacheDir})
	if err != nil {
		return err
	}
	defer svc.Close()
	opts := mcpserver.Options{Lang: c.Lang, ReadOnly: c.ReadOnly, Version: version, Logger: log}
	if *httpAddr == "" {
		server := mcpserver.New(svc, opts)
		t := &mcp.IOTransport{Reader: nopCloser{stdin}, Writer: nopWriteCloser{stdout}}
		err := server.Run(ctx, t)
		if err != nil && (ctx.Err() != nil || errors.Is(err, io.EOF)) {
			return nil
		}
		return err
	}
	return serveHTTP(ctx, *httpAddr, *apiKey, svc, opts, stderr)
}

type nopCloser struct{ io.Reader }

func (nopCloser) Close() error { return nil }

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// serveHTTP serves MCP over Streamable HTTP at /mcp. Off loopback a key is
// required; the SDK's DNS-rebinding protection stays on.
func serveHTTP(ctx context.Context, addr, key string, svc api.Backend, opts mcpserver.Options, stderr io.Writer) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %q: %w", addr, err)
	}
	if !isLoopback(host) && key == "" {
		return fmt.Errorf("--http %q is not a loopback address: set --api-key or VAULTMCP_API_KEY", addr)
	}
	server := mcpserver.New(svc, opts)
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{Logger: opts.Logger})
	mux := http.NewServeMux()
	mux.Handle("/mcp", requireKey(key, handler))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	opts.Logger.Info("serving MCP over Streamable HTTP", "url", "http://"+ln.Addr().String()+"/mcp")
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// requireKey checks X-API-Key or Authorization: Bearer in constant time.
func requireKey(key string, next http.Handler) http.Handler {
	if key == "" {
		return next
	}
	want := []byte(key)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("X-API-Key")
		if got == "" {
			if a := r.Header.Get("Authorization"); strings.HasPrefix(a, "Bearer ") {
				got = strings.TrimPrefix(a, "Bearer ")
			}
		}
		if subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":{"code":"unauthorized","message":"missing or wrong API key"}}`)
			return
		}
		next.ServeHTTP(w, r)
	})
}
