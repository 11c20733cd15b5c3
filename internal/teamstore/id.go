package teamstore

import (
	"crypto/rand"
	"encoding/hex"
)

// NewID returns a random UUID (version 4) in its canonical text form, the
// shape of project and file ids.
func NewID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
