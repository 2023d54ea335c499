package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"strings"
	"time"
)

// Cipher encrypts secrets as Fernet tokens, compatible with the reference's
// cipher: the Fernet key is the SHA-256 digest of the secret key.
type Cipher struct {
	signKey, encKey []byte
	// previous are ciphers of earlier keys, tried in order after this one
	// when decrypting (the reference's previous_secret_keys, MultiFernet).
	previous []*Cipher
}

// NewCipher returns the cipher for secretKey.
func NewCipher(secretKey string) *Cipher {
	sum := sha256.Sum256([]byte(secretKey))
	return &Cipher{signKey: sum[:16], encKey: sum[16:]}
}

// WithPrevious returns a cipher that encrypts with c's key and decrypts
// with it, then with each of keys in order: after a key rotation, values
// saved under an old key stay readable. Blank keys and repeats are
// dropped.
func (c *Cipher) WithPrevious(keys ...string) *Cipher {
	n := &Cipher{signKey: c.signKey, encKey: c.encKey}
	seen := map[string]bool{}
	for _, k := range keys {
		p := NewCipher(k)
		id := string(p.signKey) + string(p.encKey)
		if strings.TrimSpace(k) == "" || seen[id] || (hmac.Equal(p.signKey, c.signKey) && hmac.Equal(p.encKey, c.encKey)) {
			continue
		}
		seen[id] = true
		n.previous = append(n.previous, p)
	}
	return n
}

// HasPrevious reports whether c decrypts with earlier keys too.
func (c *Cipher) HasPrevious() bool { return len(c.previous) > 0 }

// IsCurrent reports whether token decrypts with c's own key, not only with
// a previous one.
func (c *Cipher) IsCurrent(token string) bool {
	_, err := c.decryptOwn(token)
	return err == nil
}

// ErrInvalidToken is returned when a token is malformed or was not made with
// this cipher's key.
var ErrInvalidToken = errors.New("secret: invalid Fernet token")

// EncryptString returns the Fernet token of plaintext.
func (c *Cipher) EncryptString(plaintext string) (string, error) {
	iv := make([]byte, aes.BlockSize)
	if _, err := rand.Read(iv); err != nil {
		return "", err
	}
	return c.encrypt([]byte(plaintext), iv, time.Now()), nil
}

func (c *Cipher) encrypt(msg, iv []byte, now time.Time) string {
	pad := aes.BlockSize - len(msg)%aes.BlockSize
	padded := make([]byte, len(msg)+pad)
	copy(padded, msg)
	for i := len(msg); i < len(padded); i++ {
		padded[i] = byte(pad)
	}
	block, _ := aes.NewCipher(c.encKey)
	tok := make([]byte, 0, 1+8+16+len(padded)+32)
	tok = append(tok, 0x80)
	tok = binary.BigEndian.AppendUint64(tok, uint64(now.Unix()))
	tok = append(tok, iv...)
	ct := make([]byte, len(padded))
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(ct, padded)
	tok = append(tok, ct...)
	mac := hmac.New(sha256.New, c.signKey)
	mac.Write(tok)
	tok = mac.Sum(tok)
	return base64.URLEncoding.EncodeToString(tok)
}

// DecryptString returns the plaintext of a Fernet token made with c's key
// or one of its previous keys.
func (c *Cipher) DecryptString(token string) (string, error) {
	pt, err := c.decryptOwn(token)
	for _, p := range c.previous {
		if err == nil {
			break
		}
		pt, err = p.decryptOwn(token)
	}
	return pt, err
}

func (c *Cipher) decryptOwn(token string) (string, error) {
	raw, err := base64.URLEncoding.DecodeString(token)
	if err != nil {
		return "", ErrInvalidToken
	}
	if len(raw) < 1+8+16+16+32 || raw[0] != 0x80 || (len(raw)-1-8-16-32)%aes.BlockSize != 0 {
		return "", ErrInvalidToken
	}
	body, sig := raw[:len(raw)-32], raw[len(raw)-32:]
	mac := hmac.New(sha256.New, c.signKey)
	mac.Write(body)
	if !hmac.Equal(mac.Sum(nil), sig) {
		return "", ErrInvalidToken
	}
	iv, ct := body[9:25], body[25:]
	block, _ := aes.NewCipher(c.encKey)
	pt := make([]byte, len(ct))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(pt, ct)
	pad := int(pt[len(pt)-1])
	if pad == 0 || pad > aes.BlockSize {
		return "", ErrInvalidToken
	}
	for _, b := range pt[len(pt)-pad:] {
		if int(b) != pad {
			return "", ErrInvalidToken
		}
	}
	return string(pt[:len(pt)-pad]), nil
}

// Encrypt returns s as an exposed token, which encodes as the token itself.
// The zero secret stays zero.
func (c *Cipher) Encrypt(s String) (String, error) {
	if s.value == "" {
		return s, nil
	}
	tok, err := c.EncryptString(s.value)
	if err != nil {
		return String{}, err
	}
	return String{value: tok, exposed: true}, nil
}

// Decrypt returns the plaintext secret of a token read from disk. Values
// that are not tokens are returned unchanged, as the reference does.
func (c *Cipher) Decrypt(s String) (String, error) {
	if !s.IsToken() {
		return s, nil
	}
	pt, err := c.DecryptString(s.value)
	if err != nil {
		return String{}, err
	}
	return String{value: pt}, nil
}
