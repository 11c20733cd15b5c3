package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// A command's help goes to the stdout run was given, not to the process's:
// run's writers are the whole of its output.
func TestHelpGoesToRunsStdout(t *testing.T) {
	for _, args := range [][]string{
		{"search", "--help"},
		{"serve", "-h"},
		{"team-server", "key", "add", "NAME", "-h"},
	} {
		var out, errOut bytes.Buffer
		if err := run(context.Background(), args, strings.NewReader(""), &out, &errOut); err != nil {
			t.Errorf("%q: %v", args, err)
		}
		if !strings.HasPrefix(out.String(), "Usage:") {
			t.Errorf("%q: stdout %q, want the usage", args, out.String())
		}
		if errOut.Len() != 0 {
			t.Errorf("%q: stderr %q, want nothing", args, errOut.String())
		}
	}
}
