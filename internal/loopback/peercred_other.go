//go:build !linux

package loopback

import "net"

// peerUID is -1, unknown, where SO_PEERCRED is not: the socket's folder,
// which only the user can enter, and the token are the checks left.
func peerUID(*net.UnixConn) (int, error) { return -1, nil }
