package worker

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"strings"
	"time"
)

// A worker and its kernel prove to each other that they hold the worker's
// secret without sending it: each sends a fresh nonce, and each answers
// with an HMAC-SHA256, under the secret, of both nonces, the credential's
// ID, the worker's rank and, over TLS, keying material exported from the
// TLS session (so a proof cannot be relayed into another connection). The
// kernel proves first, so a peer posing as the kernel gets nothing from
// the worker but a nonce; a peer posing as a worker gets no proof unless
// it names a worker the kernel waits for, and a proof of the kernel's
// tells it nothing about the secret. Before the proofs are checked, a
// frame is at most maxHello bytes.
//
// Over TCP the link is TLS 1.3: the kernel presents a self-signed
// certificate made for the link, and the worker accepts only the one whose
// SHA-256 fingerprint came with its credential.

// maxHello bounds every frame of the handshake, before the peer proved
// anything: a hello, a challenge and a proof are each under 300 bytes.
const maxHello = 4 << 10

// handshakeTimeout bounds the whole handshake on either side, so that a
// silent peer holds no slot.
const handshakeTimeout = 10 * time.Second

// Handshake frames, after the worker's hello (kindHello).
const (
	kindChallenge kind = 'c' // kernel to worker: challengeMsg, the kernel's proof
	kindProof     kind = 'a' // worker to kernel: proofMsg, the worker's proof
)

// Labels of the two proofs, so that one side's proof is never the other's.
const (
	kernelLabel = "gotrain worker link: kernel proof"
	workerLabel = "gotrain worker link: worker proof"
	exportLabel = "EXPORTER-gotrain-worker-link"
)

// errAuth wraps every error about a peer that did not prove it holds the
// credential.
var errAuth = errors.New("worker: authentication failed")

// credential is what a worker needs to reach its kernel: an ID that names
// it (not secret: it only says which secret to use), the secret, and, for
// a kernel that listens on TCP, the fingerprint of the kernel's
// certificate. It travels in TokenEnv as "ID.SECRET" or
// "ID.SECRET.FINGERPRINT", each part hex.
type credential struct {
	id     string
	secret []byte
	cert   []byte // the SHA-256 of the kernel's certificate (DER); nil without TLS
}

// newCredential makes a credential with a fresh random ID and secret;
// cert is the fingerprint of the kernel's certificate, or nil.
func newCredential(cert []byte) credential {
	var id [8]byte
	secret := make([]byte, 32)
	rand.Read(id[:])
	rand.Read(secret)
	return credential{id: hex.EncodeToString(id[:]), secret: secret, cert: cert}
}

func (c credential) String() string {
	s := c.id + "." + hex.EncodeToString(c.secret)
	if c.cert != nil {
		s += "." + hex.EncodeToString(c.cert)
	}
	return s
}

// parseCredential reads what credential.String wrote.
func parseCredential(s string) (credential, error) {
	parts := strings.Split(s, ".")
	bad := func(what string) (credential, error) {
		return credential{}, fmt.Errorf("worker: the credential in %s: %s; want ID.SECRET[.FINGERPRINT] in hex, as the kernel gives it", TokenEnv, what)
	}
	if len(parts) < 2 || len(parts) > 3 {
		return bad(fmt.Sprintf("%d parts", len(parts)))
	}
	var c credential
	var err error
	c.id = parts[0]
	if _, err := hex.DecodeString(c.id); err != nil || c.id == "" {
		return bad("the ID is not hex")
	}
	if c.secret, err = hex.DecodeString(parts[1]); err != nil || len(c.secret) < 16 {
		return bad("the secret is not 16 or more bytes of hex")
	}
	if len(parts) == 3 {
		if c.cert, err = hex.DecodeString(parts[2]); err != nil || len(c.cert) != sha256.Size {
			return bad("the fingerprint is not a SHA-256 in hex")
		}
	}
	return c, nil
}

type challengeMsg struct {
	Nonce []byte `json:"nonce"`
	Proof []byte `json:"proof"`
}

type proofMsg struct {
	Proof []byte `json:"proof"`
}

// prove is one side's proof: the HMAC, under secret, of label, the
// credential's ID, the rank, the worker's nonce, the kernel's nonce and
// the TLS session's exported keying material (empty without TLS).
func prove(secret []byte, label, id string, rank int, workerNonce, kernelNonce, exported []byte) []byte {
	m := hmac.New(sha256.New, secret)
	for _, b := range [][]byte{[]byte(label), []byte(id), binary.BigEndian.AppendUint64(nil, uint64(rank)), workerNonce, kernelNonce, exported} {
		// Each part behind its length, so no two lists of parts give one
		// message.
		m.Write(binary.BigEndian.AppendUint32(nil, uint32(len(b))))
		m.Write(b)
	}
	return m.Sum(nil)
}

// exported is the keying material both ends of conn derive from its TLS
// session, or nil when conn is not TLS.
func exported(conn net.Conn) ([]byte, error) {
	tc, ok := conn.(*tls.Conn)
	if !ok {
		return nil, nil
	}
	cs := tc.ConnectionState()
	return cs.ExportKeyingMaterial(exportLabel, nil, 32)
}

func nonce() []byte {
	b := make([]byte, 32)
	rand.Read(b)
	return b
}

// linkCert makes the kernel's certificate for one listener: a fresh P-256
// key, self-signed, and its SHA-256 fingerprint, which the kernel hands the
// workers with their credential. Nobody checks its names or dates: the
// worker pins the fingerprint.
func linkCert() (tls.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("worker: the link's key: %w", err)
	}
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "gotrain kernel"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, nil, fmt.Errorf("worker: the link's certificate: %w", err)
	}
	sum := sha256.Sum256(der)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, sum[:], nil
}

// serverTLS is the kernel's TLS configuration for a listener with cert.
func serverTLS(cert tls.Certificate) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS13}
}

// clientTLS is the worker's TLS configuration: it accepts exactly the
// certificate whose SHA-256 is fingerprint.
func clientTLS(fingerprint []byte) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS13,
		// The certificate is self-signed and pinned: VerifyConnection
		// checks it instead of a chain and names.
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("the kernel presented no certificate")
			}
			sum := sha256.Sum256(cs.PeerCertificates[0].Raw)
			if !hmac.Equal(sum[:], fingerprint) {
				return fmt.Errorf("the peer's certificate is not the kernel's (SHA-256 %x…, want %x…)", sum[:8], fingerprint[:8])
			}
			return nil
		},
	}
}

// acceptLink runs the kernel's side of the handshake on a new connection:
// TLS first when tlsCfg is set, then the worker's hello, whose credential
// ID and rank secret looks up (false: nobody waits for it, and the peer is
// told nothing), the kernel's proof, and the worker's, checked in constant
// time. On error the caller closes conn.
func acceptLink(conn net.Conn, tlsCfg *tls.Config, secret func(h helloMsg) ([]byte, bool)) (*link, helloMsg, error) {
	conn.SetDeadline(time.Now().Add(handshakeTimeout))
	if tlsCfg != nil {
		tc := tls.Server(conn, tlsCfg)
		if err := tc.Handshake(); err != nil {
			return nil, helloMsg{}, fmt.Errorf("%w: TLS: %v", errAuth, err)
		}
		conn = tc
	}
	l := newLink(conn)
	var h helloMsg
	if err := l.readJSON(kindHello, maxHello, &h); err != nil {
		return nil, h, err
	}
	if len(h.Nonce) != 32 {
		return nil, h, fmt.Errorf("%w: a hello with a nonce of %d bytes, want 32", errAuth, len(h.Nonce))
	}
	key, ok := secret(h)
	if !ok {
		return nil, h, fmt.Errorf("%w: no worker of rank %d waits with ID %q", errAuth, h.Rank, h.ID)
	}
	x, err := exported(conn)
	if err != nil {
		return nil, h, fmt.Errorf("%w: TLS keying material: %v", errAuth, err)
	}
	kn := nonce()
	if err := l.sendJSON(kindChallenge, challengeMsg{Nonce: kn, Proof: prove(key, kernelLabel, h.ID, h.Rank, h.Nonce, kn, x)}); err != nil {
		return nil, h, err
	}
	var p proofMsg
	if err := l.readJSON(kindProof, maxHello, &p); err != nil {
		return nil, h, err
	}
	if !hmac.Equal(p.Proof, prove(key, workerLabel, h.ID, h.Rank, h.Nonce, kn, x)) {
		return nil, h, fmt.Errorf("%w: the worker's proof is wrong (it does not hold the secret)", errAuth)
	}
	conn.SetDeadline(time.Time{})
	return l, h, nil
}

// connectLink runs the worker's side of the handshake on conn, a
// connection to network: TLS with the pinned certificate over TCP, the
// hello, the check of the kernel's proof, and the worker's proof. On error
// the caller closes conn; the peer has learnt only the credential's ID and
// a nonce.
func connectLink(conn net.Conn, network string, cred credential, rank int) (*link, error) {
	conn.SetDeadline(time.Now().Add(handshakeTimeout))
	if network == "tcp" {
		if cred.cert == nil {
			return nil, fmt.Errorf("worker: a kernel on TCP needs its certificate's fingerprint in the credential (%s), which the kernel gives when it listens on TCP", TokenEnv)
		}
		tc := tls.Client(conn, clientTLS(cred.cert))
		if err := tc.Handshake(); err != nil {
			return nil, fmt.Errorf("%w: TLS: %v", errAuth, err)
		}
		conn = tc
	}
	l := newLink(conn)
	wn := nonce()
	h := helloMsg{ID: cred.id, Nonce: wn, PID: os.Getpid(), Rank: rank}
	if err := l.sendJSON(kindHello, h); err != nil {
		return nil, fmt.Errorf("worker: hello: %w", err)
	}
	var ch challengeMsg
	if err := l.readJSON(kindChallenge, maxHello, &ch); err != nil {
		return nil, err
	}
	x, err := exported(conn)
	if err != nil {
		return nil, fmt.Errorf("%w: TLS keying material: %v", errAuth, err)
	}
	if len(ch.Nonce) != 32 || !hmac.Equal(ch.Proof, prove(cred.secret, kernelLabel, cred.id, rank, wn, ch.Nonce, x)) {
		return nil, fmt.Errorf("%w: the peer did not prove it is the kernel (it does not hold the secret)", errAuth)
	}
	if err := l.sendJSON(kindProof, proofMsg{Proof: prove(cred.secret, workerLabel, cred.id, rank, wn, ch.Nonce, x)}); err != nil {
		return nil, fmt.Errorf("worker: proof: %w", err)
	}
	conn.SetDeadline(time.Time{})
	return l, nil
}
