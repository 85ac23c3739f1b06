// Package aptrepo serves Debian package repositories on 127.0.0.1 for the
// test bed, as apt meets them: an archive layout (dists/SUITE/COMPONENT/
// binary-ARCH/Packages, with the suite's Release file), as Ubuntu's archive
// and ports archive are, or a flat one (`deb URL/ /`: Packages and Release
// at the top), as NVIDIA's CUDA repositories are. The indexes are written by
// Debian's own apt-ftparchive (apt-utils) and each Release file is signed
// into InRelease, clearsigned, with an OpenPGP key (Key) whose public keyring
// apt is given through signed-by. A repository signed with another key, or
// not at all, is refused by apt in its own words. The .deb files are built
// by dpkg-deb (BuildDeb).
package aptrepo

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"time"

	"github.com/ProtonMail/go-crypto/openpgp"
	"github.com/ProtonMail/go-crypto/openpgp/clearsign"
	"github.com/ProtonMail/go-crypto/openpgp/packet"
)

// Key is an OpenPGP signing key (EdDSA over Ed25519, an OpenPGP v4 key, which
// apt's gpgv and sqv both verify), made deterministically from its name:
// the same name gives the same key and keyring in every run, so images that
// carry its keyring stay the same.
type Key struct {
	entity *openpgp.Entity
}

// keyTime is the keys' creation time: fixed, for reproducible keys.
var keyTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// NewKey makes the key of name, e.g. "jetbake test archive".
func NewKey(name string) (*Key, error) {
	cfg := &packet.Config{Rand: seeded(name), Time: func() time.Time { return keyTime },
		Algorithm: packet.PubKeyAlgoEdDSA, DefaultHash: 0}
	e, err := openpgp.NewEntity(name, "jetbake test bed, not a real archive's key", "", cfg)
	if err != nil {
		return nil, fmt.Errorf("aptrepo: make the key %q: %w", name, err)
	}
	return &Key{entity: e}, nil
}

// Fingerprint is the key's fingerprint in upper-case hex, as apt names it.
func (k *Key) Fingerprint() string { return fmt.Sprintf("%X", k.entity.PrimaryKey.Fingerprint) }

// Keyring is the key's public keyring, binary (a .gpg file for signed-by).
func (k *Key) Keyring() ([]byte, error) {
	var b bytes.Buffer
	if err := k.entity.Serialize(&b); err != nil {
		return nil, fmt.Errorf("aptrepo: export the keyring: %w", err)
	}
	return b.Bytes(), nil
}

// ClearSign is data clearsigned with the key: an InRelease file of a
// Release file.
func (k *Key) ClearSign(data []byte) ([]byte, error) {
	var b bytes.Buffer
	cfg := &packet.Config{Time: func() time.Time { return keyTime }}
	w, err := clearsign.Encode(&b, k.entity.PrivateKey, cfg)
	if err != nil {
		return nil, fmt.Errorf("aptrepo: sign: %w", err)
	}
	if _, err := w.Write(data); err != nil {
		return nil, fmt.Errorf("aptrepo: sign: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("aptrepo: sign: %w", err)
	}
	return b.Bytes(), nil
}

// seeded is an endless deterministic byte stream of seed: SHA-256 in
// counter mode.
func seeded(seed string) io.Reader {
	return &counterStream{seed: []byte(seed)}
}

type counterStream struct {
	seed []byte
	n    uint64
	buf  []byte
}

func (s *counterStream) Read(p []byte) (int, error) {
	for len(s.buf) < len(p) {
		sum := sha256.Sum256(append(fmt.Appendf(nil, "%d:", s.n), s.seed...))
		s.n++
		s.buf = append(s.buf, sum[:]...)
	}
	n := copy(p, s.buf)
	s.buf = s.buf[n:]
	return n, nil
}
