package vault

import udiff "github.com/aymanbagabas/go-udiff"

// merge3 re-plans a write on a file that someone else changed meanwhile:
// base is what the write read, ours what it wants to write, theirs what the
// file holds now. Both sides' changes are kept when they touch different
// lines (two insertions at one place keep ours first); it reports false
// when they change the same lines, and then nothing is merged.
func merge3(base, ours, theirs []byte) ([]byte, bool) {
	b := string(base)
	x := udiff.Lines(b, string(ours))
	y := udiff.Lines(b, string(theirs))
	edits, ok := udiff.Merge(x, y)
	if !ok {
		return nil, false
	}
	out, err := udiff.Apply(b, edits)
	if err != nil {
		return nil, false
	}
	return []byte(out), true
}
