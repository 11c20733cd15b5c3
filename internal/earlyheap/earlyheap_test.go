package earlyheap

import "testing"

func TestWanted(t *testing.T) {
	for _, tt := range []struct {
		args []string
		env  map[string]string
		want bool
	}{
		{[]string{"vaultmcp", "serve", "--vault", "v"}, nil, true},
		{[]string{"vaultmcp", "serve"}, map[string]string{"VAULTMCP_HUGEPAGES": " ON "}, true},
		{[]string{"vaultmcp", "serve"}, map[string]string{"VAULTMCP_HUGEPAGES": "off"}, false},
		{[]string{"vaultmcp", "serve"}, map[string]string{"VAULTMCP_HUGEPAGES": "maybe"}, false},
		{[]string{"vaultmcp", "serve"}, map[string]string{"TEAM_VAULT_URL": "http://127.0.0.1:8080"}, false},
		{[]string{"vaultmcp"}, map[string]string{"TEAM_VAULT_API_KEY": "k"}, false}, // remote mode too
		{nil, nil, true},
		{[]string{"vaultmcp", "search", "--vault", "v", "q"}, nil, false},
		{[]string{"vaultmcp", "--vault", "v"}, nil, true}, // serve is the default command
		{[]string{"vaultmcp"}, nil, true},
		{[]string{"vaultmcp", "--help"}, nil, false},
		{[]string{"vaultmcp", "--version"}, nil, false},
		{[]string{"vaultmcp", "team-server", "--data", "d"}, nil, false},
		{[]string{"vaultmcp", "bench"}, nil, false},
		{[]string{"earlyheap.test", "-test.run", "serve"}, nil, false},
	} {
		if got := wanted(tt.args, func(k string) string { return tt.env[k] }); got != tt.want {
			t.Errorf("wanted(%q, %v) = %v, want %v", tt.args, tt.env, got, tt.want)
		}
	}
}
