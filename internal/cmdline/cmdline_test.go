package cmdline

import (
	"slices"
	"testing"
)

func TestCommand(t *testing.T) {
	for _, tt := range []struct {
		args []string
		cmd  string
		rest []string
	}{
		{nil, "serve", nil},
		{[]string{"serve", "--vault", "v"}, "serve", []string{"--vault", "v"}},
		{[]string{"--vault", "v"}, "serve", []string{"--vault", "v"}},
		{[]string{"search", "q"}, "search", []string{"q"}},
		{[]string{"--help"}, "--help", []string{}},
		{[]string{"-h", "x"}, "-h", []string{"x"}},
		{[]string{"--version"}, "--version", []string{}},
		{[]string{"-"}, "serve", []string{"-"}},
		{[]string{""}, "serve", []string{""}},
	} {
		cmd, rest := Command(tt.args)
		if cmd != tt.cmd || !slices.Equal(rest, tt.rest) {
			t.Errorf("Command(%q) = %q, %q; want %q, %q", tt.args, cmd, rest, tt.cmd, tt.rest)
		}
	}
}

func TestRemoteAndHugePages(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, tt := range []struct {
		env  func(string) string
		want bool
	}{
		{env(), false},
		{env("TEAM_VAULT_URL", "  "), false},
		{env("TEAM_VAULT_URL", "http://127.0.0.1:8080"), true},
		{env("TEAM_VAULT_API_KEY", "k"), true},
	} {
		if got := Remote(tt.env); got != tt.want {
			t.Errorf("Remote = %v, want %v", got, tt.want)
		}
	}
	for _, tt := range []struct {
		v      string
		on, ok bool
	}{
		{"", true, true}, {" ON ", true, true}, {"off", false, true}, {"Off", false, true}, {"maybe", false, false},
	} {
		on, err := HugePages(env("VAULTMCP_HUGEPAGES", tt.v))
		if on != tt.on || (err == nil) != tt.ok {
			t.Errorf("HugePages(%q) = %v, %v", tt.v, on, err)
		}
	}
}
