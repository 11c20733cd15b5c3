package jsonx

import (
	"encoding/json"
	"testing"
)

func TestMarshal(t *testing.T) {
	v := map[string]any{"text": "<a href=\"x\">&</a>\n", "n": 1}
	got, err := Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"n":1,"text":"<a href=\"x\">&</a>\n"}`; string(got) != want {
		t.Errorf("Marshal = %s, want %s", got, want)
	}
	var back map[string]any
	if err := json.Unmarshal(got, &back); err != nil || back["text"] != v["text"] {
		t.Errorf("round trip: %v %v", back, err)
	}
	if _, err := Marshal(func() {}); err == nil {
		t.Error("a func encoded")
	}
}
