package teamserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Timeouts of the HTTP server. A write can take seconds (a move rewriting
// thousands of links, a commit in a 100k-note vault) and a search may wait
// for a first index build, so reads and writes get minutes, not seconds.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 2 * time.Minute
	writeTimeout      = 3 * time.Minute
	idleTimeout       = 2 * time.Minute
	// ShutdownGrace is how long a shutdown waits for requests in flight
	// (writes are finished whatever their clients do).
	ShutdownGrace = time.Minute
)

// Listen says where and how the server listens.
type Listen struct {
	Addr string
	// TLSCert and TLSKey are PEM files; both or neither.
	TLSCert, TLSKey string
	// InsecureHTTP allows plain HTTP on a non-loopback address (behind a
	// proxy that terminates TLS).
	InsecureHTTP bool
	// OnListen, when set, is told the address listened on.
	OnListen func(net.Addr)
}

// DefaultListen is the loopback address served when none is given.
const DefaultListen = "127.0.0.1:8787"

// Check validates the listen settings: a non-loopback address needs TLS or
// an explicit InsecureHTTP.
func (l Listen) Check() error {
	host, _, err := net.SplitHostPort(l.Addr)
	if err != nil {
		return fmt.Errorf("--listen %q: %w", l.Addr, err)
	}
	if (l.TLSCert == "") != (l.TLSKey == "") {
		return errors.New("--tls-cert and --tls-key go together")
	}
	if l.TLSCert == "" && !l.InsecureHTTP && !isLoopback(host) {
		return fmt.Errorf("--listen %q is not a loopback address: give --tls-cert and --tls-key, or --insecure-http behind a proxy that terminates TLS", l.Addr)
	}
	return nil
}

// advertiseURL is where other replicas reach this one: the --advertise URL,
// else the address listened on (which must then be one address, not all).
func advertiseURL(given, scheme string, addr net.Addr) (string, error) {
	if given != "" {
		return CheckAdvertise(given)
	}
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "", err
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return "", fmt.Errorf("--advertise: required when listening on every address (%s): give the URL other replicas reach this one at", addr)
	}
	return scheme + "://" + net.JoinHostPort(host, port), nil
}

// CheckAdvertise validates an --advertise URL: http or https, a host, no
// path, query or credentials. It returns it without a trailing slash.
func CheckAdvertise(u string) (string, error) {
	p, err := url.Parse(u)
	if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" || p.User != nil || p.RawQuery != "" || p.Fragment != "" || strings.Trim(p.Path, "/") != "" {
		return "", fmt.Errorf("--advertise %q: give an http:// or https:// URL of this replica, host and port only (e.g. http://10.0.0.5:8787)", u)
	}
	return strings.TrimRight(u, "/"), nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Serve serves the API until ctx ends, then shuts down gracefully: no new
// connection is taken, requests in flight (writes above all) are finished,
// and the vaults are closed.
func (s *Server) Serve(ctx context.Context, l Listen) error {
	if err := l.Check(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", l.Addr)
	if err != nil {
		return err
	}
	scheme := "http"
	if l.TLSCert != "" {
		scheme = "https"
	}
	if s.rep != nil {
		adv, err := advertiseURL(s.cfg.Advertise, scheme, ln.Addr())
		if err != nil {
			ln.Close()
			return err
		}
		s.rep.start(adv)
	}
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	// Long-lived MCP event streams end when the shutdown starts; every
	// other request is finished.
	srv.RegisterOnShutdown(s.stopOnce)
	s.log.Info("team server listening", "url", scheme+"://"+ln.Addr().String())
	if l.OnListen != nil {
		l.OnListen(ln.Addr())
	}
	done := make(chan error, 1)
	go func() {
		<-ctx.Done()
		s.log.Info("shutting down: finishing the requests in flight")
		shut, cancel := context.WithTimeout(context.Background(), ShutdownGrace)
		defer cancel()
		done <- srv.Shutdown(shut)
	}()
	if l.TLSCert != "" {
		err = srv.ServeTLS(ln, l.TLSCert, l.TLSKey)
	} else {
		err = srv.Serve(ln)
	}
	if !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	if err := <-done; err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}
