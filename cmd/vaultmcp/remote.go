package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/vaultmcp/vaultmcp/internal/api"
	"github.com/vaultmcp/vaultmcp/internal/cmdline"
	"github.com/vaultmcp/vaultmcp/internal/mcphttp"
	"github.com/vaultmcp/vaultmcp/internal/mcpserver"
	"github.com/vaultmcp/vaultmcp/internal/teamclient"
)

// Remote mode: with TEAM_VAULT_URL (or TEAM_VAULT_API_KEY) set, serve is
// an MCP server whose tools talk to a team server (internal/teamclient).

// remoteConfig is what the environment says of remote mode.
type remoteConfig struct {
	URL, Key, Project string
	ReadOnly          bool
	// readOnlyErr refuses a TEAM_VAULT_READ_ONLY that is neither yes nor
	// no: taking it for no would offer the writes it meant to forbid.
	readOnlyErr error
}

const remoteUsage = "remote mode needs TEAM_VAULT_URL (the team server, e.g. https://vault.example.com) and TEAM_VAULT_API_KEY " +
	"(optional: TEAM_VAULT_PROJECT_ID, the default project; TEAM_VAULT_READ_ONLY=1)"

// remoteVars names the variable of each setting of teamclient.Config.
var remoteVars = map[string]string{"URL": "TEAM_VAULT_URL", "APIKey": "TEAM_VAULT_API_KEY", "Project": "TEAM_VAULT_PROJECT_ID"}

// connectWait bounds the check of the key at start: the MCP handshake
// must not wait for a server that does not answer.
const connectWait = 5 * time.Second

// remoteFromEnv reads remote mode's variables; it is on when
// TEAM_VAULT_URL or TEAM_VAULT_API_KEY is set.
func remoteFromEnv() (remoteConfig, bool) {
	r := remoteConfig{
		URL:     strings.TrimSpace(os.Getenv("TEAM_VAULT_URL")),
		Key:     strings.TrimSpace(os.Getenv("TEAM_VAULT_API_KEY")),
		Project: strings.TrimSpace(os.Getenv("TEAM_VAULT_PROJECT_ID")),
	}
	r.ReadOnly, r.readOnlyErr = yesNo("TEAM_VAULT_READ_ONLY", os.Getenv("TEAM_VAULT_READ_ONLY"))
	return r, cmdline.Remote(os.Getenv)
}

func runRemote(ctx context.Context, c Config, r remoteConfig, httpAddr, httpKey string, hc httpConfig, stdin io.Reader, stdout, stderr io.Writer) error {
	if r.URL == "" || r.Key == "" {
		return errors.New(remoteUsage)
	}
	if r.readOnlyErr != nil {
		return r.readOnlyErr
	}
	var hopts mcphttp.Options
	if httpAddr != "" {
		var err error
		if hopts, err = hc.options(); err != nil {
			return &exitError{2, err}
		}
	}
	if err := c.checkLang(); err != nil {
		return err
	}
	if err := c.checkEnv(); err != nil {
		return err
	}
	log := logger(stderr, c.LogLevel)
	if c.Vault != "" {
		// Said once at start: a client configured with both (an old
		// VAULT_PATH, a --vault left in the command) would otherwise
		// search the team's vault believing it searched its own.
		log.Warn("the local vault is not used: TEAM_VAULT_URL is set, so the tools serve the team server's project", "vault", c.Vault)
	}
	client, err := teamclient.New(teamclient.Config{URL: r.URL, APIKey: r.Key, Project: r.Project, CacheDir: c.CacheDir, Lang: c.Lang, Logger: log})
	if err != nil {
		var ce *teamclient.ConfigError
		if errors.As(err, &ce) {
			return fmt.Errorf("%s: %w", remoteVars[ce.Setting], err)
		}
		return err
	}
	defer client.Close()
	if !teamclient.IsLoopback(client.URL()) && strings.HasPrefix(client.URL(), "http://") {
		log.Warn("TEAM_VAULT_URL is plain http to another machine: the API key travels unencrypted; use https")
	}
	readOnly := c.ReadOnly || r.ReadOnly
	cctx, cancel := context.WithTimeout(ctx, connectWait)
	id, err := client.Connect(cctx)
	cancel()
	var noAPI *teamclient.NoAPIError
	var cert *tls.CertificateVerificationError
	if errors.As(err, &noAPI) || errors.As(err, &cert) {
		// The server answered, but not as a team server (a wrong URL), or
		// with a certificate this machine does not trust: no tool call
		// could get past either.
		return fmt.Errorf("TEAM_VAULT_URL: %w", err)
	}
	if err != nil && api.CodeOf(err) == teamclient.CodeUnauthorized {
		// The server answered, and the key is not one it knows (or it was
		// revoked): no later call can succeed until the setting changes,
		// so say so now rather than serve tools that all fail.
		return fmt.Errorf("TEAM_VAULT_API_KEY: the team server at %s refused the key: %w", client.URL(), err)
	}
	if err != nil {
		log.Warn("team server not reachable at start; the tools will try again", "url", client.URL(), "read_only", readOnly, "project", client.DefaultProject(), "err", err)
	} else {
		if id.ReadOnly && !readOnly {
			readOnly = true
		}
		// Whether the project's server has the extension endpoints is
		// unknown when the default project could not be asked about.
		ext := "unknown"
		if id.ExtensionsKnown {
			ext = strconv.FormatBool(id.Extensions)
		}
		log.Info("connected to the team server", "url", client.URL(), "read_only", readOnly, "project", id.DefaultProject,
			"key", id.Name, "key_read_only", id.ReadOnly, "extensions", ext)
	}
	opts := mcpserver.Options{Lang: c.Lang, ReadOnly: readOnly, Version: version, Logger: log}
	if httpAddr != "" {
		return serveHTTP(ctx, httpAddr, httpKey, hopts, client, opts)
	}
	return serveStdio(ctx, mcpserver.New(client, opts), stdin, stdout, log)
}
