// Package seal encrypts message payloads at rest with AES-256-GCM under the
// key of QUEEN_ENCRYPTION_KEY (64 hex characters, Queen's variable and
// format), and opens them with that key or a previous one
// (QUEEN_ENCRYPTION_KEY_PREVIOUS), so a key can be rotated without losing
// what the old one sealed.
//
// A sealed payload is
//
//	format  1 byte (1)
//	key id  4 bytes: the first 4 bytes of HMAC-SHA-256(key, "lethe key id")
//	nonce   12 random bytes
//	sealed  AES-256-GCM of the payload, its 16-byte tag last
//
// with format and key id as the additional authenticated data. Like Queen's,
// every payload gets a fresh random nonce and the key is used directly;
// unlike Queen's (a JSON object of base64 fields, a 16-byte IV), the bytes
// are binary and the nonce is GCM's standard 12 bytes. Random 96-bit nonces
// keep a key safe for 2^32 payloads (NIST SP 800-38D): rotate it before.
package seal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

const (
	format    = 1
	keyIDLen  = 4
	nonceLen  = 12
	tagLen    = 16
	headerLen = 1 + keyIDLen
	// Overhead is how many bytes sealing adds to a payload.
	Overhead = headerLen + nonceLen + tagLen
)

// Errors of Open. ErrNoKey and ErrUnknownKey mean the payload is intact but
// this server cannot open it; ErrDamaged means it is not a sealed payload
// or was changed after sealing.
var (
	ErrNoKey      = errors.New("no encryption key is configured (QUEEN_ENCRYPTION_KEY)")
	ErrUnknownKey = errors.New("sealed under a key this server does not hold (neither QUEEN_ENCRYPTION_KEY nor QUEEN_ENCRYPTION_KEY_PREVIOUS)")
	ErrDamaged    = errors.New("sealed payload is damaged or was altered")
)

// key is one AES-256 key with its id.
type key struct {
	id   [keyIDLen]byte
	aead cipher.AEAD
}

// Keys are the keys of one server: the current one seals, every one opens.
// A nil *Keys holds none: Seal and Open answer ErrNoKey.
type Keys struct {
	current *key
	byID    map[[keyIDLen]byte]*key
}

// ParseKeys reads the current key and the previous ones (comma-separated),
// each 64 hex characters. An empty current key means no encryption: nil,
// and then previous must be empty too.
func ParseKeys(current, previous string) (*Keys, error) {
	current = strings.TrimSpace(current)
	var olds []string
	for p := range strings.SplitSeq(previous, ",") {
		if p = strings.TrimSpace(p); p != "" {
			olds = append(olds, p)
		}
	}
	if current == "" {
		if len(olds) > 0 {
			return nil, errors.New("QUEEN_ENCRYPTION_KEY_PREVIOUS is set but QUEEN_ENCRYPTION_KEY is not: set the current key too")
		}
		return nil, nil
	}
	cur, err := newKey("QUEEN_ENCRYPTION_KEY", current)
	if err != nil {
		return nil, err
	}
	ks := &Keys{current: cur, byID: map[[keyIDLen]byte]*key{cur.id: cur}}
	for _, o := range olds {
		k, err := newKey("QUEEN_ENCRYPTION_KEY_PREVIOUS", o)
		if err != nil {
			return nil, err
		}
		if _, dup := ks.byID[k.id]; !dup {
			ks.byID[k.id] = k
		}
	}
	return ks, nil
}

func newKey(name, h string) (*key, error) {
	raw, err := hex.DecodeString(h)
	if err != nil || len(raw) != 32 {
		return nil, fmt.Errorf("%s must be 64 hexadecimal characters (a 256-bit key), got %d characters", name, len(h))
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	k := &key{aead: aead}
	mac := hmac.New(sha256.New, raw)
	mac.Write([]byte("lethe key id"))
	copy(k.id[:], mac.Sum(nil))
	return k, nil
}

// On says a current key is configured.
func (ks *Keys) On() bool { return ks != nil && ks.current != nil }

// KeyID is the current key's id in hex ("" without a key): what logs and
// errors name, never the key.
func (ks *Keys) KeyID() string {
	if !ks.On() {
		return ""
	}
	return hex.EncodeToString(ks.current.id[:])
}

// Seal encrypts plain under the current key, appending to dst.
func (ks *Keys) Seal(dst, plain []byte) ([]byte, error) {
	if !ks.On() {
		return nil, ErrNoKey
	}
	k := ks.current
	start := len(dst)
	dst = append(dst, format)
	dst = append(dst, k.id[:]...)
	nonce := make([]byte, nonceLen)
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("seal: nonce: %w", err)
	}
	dst = append(dst, nonce...)
	return k.aead.Seal(dst, nonce, plain, dst[start:start+headerLen]), nil
}

// Open decrypts a sealed payload with the key that sealed it.
func (ks *Keys) Open(sealed []byte) ([]byte, error) {
	if len(sealed) < Overhead || sealed[0] != format {
		return nil, ErrDamaged
	}
	if ks == nil || len(ks.byID) == 0 {
		return nil, ErrNoKey
	}
	k := ks.byID[[keyIDLen]byte(sealed[1:headerLen])]
	if k == nil {
		return nil, fmt.Errorf("%w: key id %x", ErrUnknownKey, sealed[1:headerLen])
	}
	nonce := sealed[headerLen : headerLen+nonceLen]
	plain, err := k.aead.Open(nil, nonce, sealed[headerLen+nonceLen:], sealed[:headerLen])
	if err != nil {
		return nil, ErrDamaged
	}
	return plain, nil
}

// PlainLen is the length of the payload a sealed one holds.
func PlainLen(sealed []byte) int { return max(len(sealed)-Overhead, 0) }
