package teamstore

import (
	"strings"
	"testing"
	"testing/fstest"
)

// Migrations come in number order whatever their names; a gap, a missing
// number or a file not named NNNN_name.sql is refused, naming the file.
func TestReadMigrations(t *testing.T) {
	ok := fstest.MapFS{
		"m/0002_two.sql":  {Data: []byte("B")},
		"m/0001_one.sql":  {Data: []byte("A")},
		"m/0003_th_r.sql": {Data: []byte("C")},
	}
	ms, err := ReadMigrations(ok, "m")
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 3 || ms[0] != (Migration{1, "one", "A"}) || ms[1] != (Migration{2, "two", "B"}) || ms[2] != (Migration{3, "th_r", "C"}) {
		t.Errorf("ReadMigrations = %+v", ms)
	}
	for name, files := range map[string]fstest.MapFS{
		"0003_gap.sql":  {"m/0001_a.sql": {}, "m/0003_gap.sql": {}},
		"x_name.sql":    {"m/x_name.sql": {}},
		"0001.sql":      {"m/0001.sql": {}},
		"0002_b.sql":    {"m/0002_b.sql": {}},
		"0001_a.txt":    {"m/0001_a.txt": {}},
		"0000_zero.sql": {"m/0000_zero.sql": {}},
	} {
		_, err := ReadMigrations(files, "m")
		if err == nil || !strings.Contains(err.Error(), strings.TrimSuffix(strings.TrimSuffix(name, ".sql"), ".txt")) {
			t.Errorf("%s: %v, want refused naming it", name, err)
		}
	}
}
