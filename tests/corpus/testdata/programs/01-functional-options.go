package main

import (
	"fmt"
	"time"
)

type server struct {
	host    string
	port    int
	timeout time.Duration
	tls     bool
}

func (s *server) String() string {
	scheme := "http"
	if s.tls {
		scheme = "https"
	}
	return fmt.Sprintf("%s://%s:%d (timeout %v)", scheme, s.host, s.port, s.timeout)
}

type option func(*server)

func withPort(p int) option { return func(s *server) { s.port = p } }

func withTimeout(d time.Duration) option { return func(s *server) { s.timeout = d } }

func withTLS() option { return func(s *server) { s.tls = true } }

func newServer(host string, opts ...option) *server {
	s := &server{host: host, port: 80, timeout: 30 * time.Second}
	for _, o := range opts {
		o(s)
	}
	return s
}

func main() {
	fmt.Println(newServer("localhost"))
	fmt.Println(newServer("example.com", withTLS(), withPort(8443)))
	custom := []option{withTimeout(1500 * time.Millisecond)}
	custom = append(custom, withPort(9000))
	s := newServer("10.0.0.1", custom...)
	fmt.Println(s.port, s.timeout, s.tls)
	fmt.Println(s)
}
