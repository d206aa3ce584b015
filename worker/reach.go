package worker

import (
	"bufio"
	"cmp"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
)

// addresses returns where the kernel listens for spec's ranks and the
// addresses it offers them (--connect): --address's; or, with no hosts
// given, or only this machine's, 127.0.0.1; or else, for each host, the
// address of this machine that its route to that host leaves from. A
// loopback address, or one that another host may also have (a container
// bridge's), is never offered to a rank on another host: whoever holds
// that address there would be the first to answer the rank.
func (s mpiSpec) addresses() (listen string, offer []net.IP, err error) {
	if s.address != "" {
		ip := net.ParseIP(s.address)
		if ip == nil {
			return "", nil, fmt.Errorf("%%workers --address %s: want an IP address of this machine that the hosts reach", s.address)
		}
		return s.address, []net.IP{ip}, nil
	}
	hosts, err := s.hostNames()
	if err != nil {
		return "", nil, err
	}
	offer, err = reachFrom(hosts, net.LookupIP, isLocalIP, routeFrom)
	if err != nil {
		return "", nil, err
	}
	switch {
	case offer == nil:
		return "127.0.0.1", []net.IP{net.IPv4(127, 0, 0, 1)}, nil
	case len(offer) == 1:
		return offer[0].String(), offer, nil
	}
	return "0.0.0.0", offer, nil
}

// hostNames is the hosts --host and --hostfile name.
func (s mpiSpec) hostNames() ([]string, error) {
	var names []string
	for _, h := range strings.Split(s.hosts, ",") {
		// --host a:2,b: a host's slots follow a colon.
		if h, _, _ = strings.Cut(strings.TrimSpace(h), ":"); h != "" {
			names = append(names, h)
		}
	}
	if s.hostfile == "" {
		return names, nil
	}
	f, err := os.Open(s.hostfile)
	if err != nil {
		return nil, fmt.Errorf("%%workers --hostfile: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		if fields := strings.Fields(line); len(fields) > 0 {
			h, _, _ := strings.Cut(fields[0], ":")
			names = append(names, h)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%%workers --hostfile %s: %w", s.hostfile, err)
	}
	return names, nil
}

// reachFrom returns, for hosts, the addresses of this machine to offer
// their ranks: for each host that is not this machine (by isLocal), the
// source address of route to it, once each, in order; nil when every host
// is this machine. A host that does not resolve is an error: which address
// reaches it cannot be told.
func reachFrom(hosts []string, lookup func(string) ([]net.IP, error), isLocal func(net.IP) bool, route func(net.IP) (net.IP, error)) ([]net.IP, error) {
	var offer []net.IP
	seen := map[string]bool{}
	for _, h := range hosts {
		ips, err := lookup(h)
		if err != nil || len(ips) == 0 {
			return nil, fmt.Errorf("%%workers -np: host %s does not resolve here (%v), so which address of this machine it reaches cannot be told: pass --address with the kernel's address on the hosts' network", h, err)
		}
		if isLocal(ips[0]) {
			continue
		}
		// IPv4 first: the kernel's wildcard listener is IPv4's.
		slices.SortStableFunc(ips, func(a, b net.IP) int {
			return cmp.Compare(boolInt(a.To4() == nil), boolInt(b.To4() == nil))
		})
		var src net.IP
		for _, ip := range ips {
			if src, err = route(ip); err == nil {
				break
			}
		}
		if src == nil || src.IsLoopback() || src.IsUnspecified() {
			return nil, fmt.Errorf("%%workers -np: host %s (%s): no route from this machine (%v): pass --address with the kernel's address on the hosts' network", h, ips[0], err)
		}
		if !seen[src.String()] {
			seen[src.String()] = true
			offer = append(offer, src)
		}
	}
	return offer, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// isLocalIP reports whether ip is this machine's: a loopback address or one
// of its interfaces'.
func isLocalIP(ip net.IP) bool {
	if ip.IsLoopback() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

// routeFrom is the address of this machine that its route to ip leaves
// from. Connecting a UDP socket sends nothing; it only picks the route.
func routeFrom(ip net.IP) (net.IP, error) {
	c, err := net.DialUDP("udp", nil, &net.UDPAddr{IP: ip, Port: 9})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.LocalAddr().(*net.UDPAddr).IP, nil
}
