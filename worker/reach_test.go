package worker

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestIssue31RanksOfferedNoLoopback: the addresses %workers -np offers its
// ranks. A rank on another host gets this machine's address on the route
// to that host, never a loopback address (whoever listens there on the
// rank's host would answer first) nor another interface's; ranks on this
// machine alone get loopback.
func TestIssue31RanksOfferedNoLoopback(t *testing.T) {
	hosts := map[string][]net.IP{
		"localhost": {net.ParseIP("127.0.0.1")},
		"me":        {net.ParseIP("10.0.0.1")},
		"b":         {net.ParseIP("10.0.0.2")},
		"c":         {net.ParseIP("fd00::3"), net.ParseIP("10.0.0.3")},
		"far":       {net.ParseIP("192.168.9.9")},
		"nowhere":   {net.ParseIP("203.0.113.1")},
	}
	lookup := func(h string) ([]net.IP, error) {
		if ips, ok := hosts[h]; ok {
			return slices.Clone(ips), nil
		}
		return nil, errors.New("no such host")
	}
	isLocal := func(ip net.IP) bool { return ip.IsLoopback() || ip.Equal(net.ParseIP("10.0.0.1")) }
	route := func(ip net.IP) (net.IP, error) {
		switch {
		case ip.To4() == nil:
			return nil, errors.New("no IPv6 route")
		case ip.Equal(net.ParseIP("192.168.9.9")):
			return net.ParseIP("192.168.9.1"), nil
		case ip.Equal(net.ParseIP("203.0.113.1")):
			return nil, errors.New("network is unreachable")
		}
		return net.ParseIP("10.0.0.1"), nil
	}
	for _, tc := range []struct {
		hosts []string
		want  string // the offered addresses, or the error's words
	}{
		{nil, ""},
		{[]string{"localhost", "me"}, ""},
		{[]string{"me", "b"}, "10.0.0.1"},
		{[]string{"localhost", "b", "c"}, "10.0.0.1"},
		{[]string{"b", "far"}, "10.0.0.1 192.168.9.1"},
		{[]string{"b", "unknown"}, "host unknown does not resolve here"},
		{[]string{"nowhere"}, "no route from this machine"},
	} {
		got, err := reachFrom(tc.hosts, lookup, isLocal, route)
		s := err
		if err == nil {
			var list []string
			for _, ip := range got {
				if ip.IsLoopback() {
					t.Errorf("%v: offered loopback %s", tc.hosts, ip)
				}
				list = append(list, ip.String())
			}
			if g := strings.Join(list, " "); g != tc.want {
				t.Errorf("%v: offered %q, want %q", tc.hosts, g, tc.want)
			}
		} else if tc.want == "" || !strings.Contains(s.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.hosts, err, tc.want)
		}
	}
}

// TestIssue31HostNames: the hosts %workers -np reads from --host and
// --hostfile, slots and comments left out.
func TestIssue31HostNames(t *testing.T) {
	file := filepath.Join(t.TempDir(), "hosts")
	os.WriteFile(file, []byte("# the cluster\nnode1 slots=2\n\n  node2:4 max_slots=8 # the big one\n"), 0o600)
	got, err := mpiSpec{hosts: "a:2, b", hostfile: file}.hostNames()
	if want := []string{"a", "b", "node1", "node2"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("hostNames = %q, %v; want %q", got, err, want)
	}
	listen, offer, err := mpiSpec{}.addresses()
	if err != nil || listen != "127.0.0.1" || len(offer) != 1 || !offer[0].IsLoopback() {
		t.Errorf("this machine alone: listen %s, offer %v, %v; want loopback", listen, offer, err)
	}
	listen, offer, err = mpiSpec{address: "10.1.2.3"}.addresses()
	if err != nil || listen != "10.1.2.3" || connectList(offer, 5) != "tcp:10.1.2.3:5" {
		t.Errorf("--address 10.1.2.3: listen %s, offer %v, %v", listen, offer, err)
	}
}
