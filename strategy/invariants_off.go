//go:build !invariants

package strategy

// invariants turns misuse that is tolerated in production, such as a second
// Close, into panics (go test -tags invariants).
const invariants = false
