// Package loopbacktest runs a test's workers as processes of the test binary
// joined by a loopback cluster, the way strategy's, gorgoniamodel's and models/gpt's
// multi-worker tests do, instead of one copy of that code per package.
//
// The test that starts the workers calls Run; the same test, run in each
// worker process, finds its Spec with Worker, joins the cluster, trains, and
// writes its result with Spec.Write:
//
//	func TestMultiWorker(t *testing.T) {
//		if spec, ok := loopbacktest.Worker(envWorker); ok {
//			c := spec.Join(t) // …train with strategy.WithCluster(c)…
//			spec.Write(result)
//			return
//		}
//		results, err := loopbacktest.Run[result](2, "TestMultiWorker", envWorker)
//	}
package loopbacktest

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/gotrain/gotrain/internal/loopback"
)

// Spec is what Run tells a worker process, in its environment variable as
// "RANK SIZE SOCKET OUT TOKEN".
type Spec struct {
	Rank, Size int
	Socket     string // the cluster's Unix socket
	Out        string // where the worker writes its result
	Token      []byte // the cluster's token (loopback.NewToken)
}

// Worker reports whether this process is a worker Run started with env,
// and its Spec.
func Worker(env string) (Spec, bool) {
	v := os.Getenv(env)
	if v == "" {
		return Spec{}, false
	}
	var s Spec
	var token string
	_, err := fmt.Sscan(v, &s.Rank, &s.Size, &s.Socket, &s.Out, &token)
	if err == nil {
		s.Token, err = loopback.ParseToken(token)
	}
	if err != nil {
		panic(fmt.Sprintf("loopbacktest: %s=%q: want RANK SIZE SOCKET OUT TOKEN: %v", env, v, err))
	}
	return s, true
}

// Join joins the worker's loopback cluster, waiting up to 30 s for the
// others, and closes it when t ends; it fails t if the cluster cannot be
// joined.
func (s Spec) Join(t testing.TB) *loopback.Cluster {
	t.Helper()
	c, err := loopback.Join(s.Socket, s.Rank, s.Size, s.Token, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Write writes v, as JSON, as the worker's result.
func (s Spec) Write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(s.Out, b, 0o644)
}

// Run starts size processes of this test binary running the tests that
// match test (a -test.run pattern), each with env set to its Spec, waits for
// all of them, and returns the result each wrote, in rank order. A worker
// that fails or writes nothing is an error with its output.
func Run[R any](size int, test, env string) ([]R, error) {
	dir, err := os.MkdirTemp("", "loopbacktest-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	token := hex.EncodeToString(loopback.NewToken())
	res := make([]R, size)
	errs := make([]error, size)
	var wg sync.WaitGroup
	for r := range size {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := filepath.Join(dir, fmt.Sprintf("out%d.json", r))
			cmd := exec.Command(os.Args[0], "-test.run="+test, "-test.count=1")
			cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d %d %s %s %s", env, r, size, filepath.Join(dir, "s"), out, token))
			if log, err := cmd.CombinedOutput(); err != nil {
				errs[r] = fmt.Errorf("worker %d: %v\n%s", r, err, log)
				return
			}
			b, err := os.ReadFile(out)
			if err == nil {
				err = json.Unmarshal(b, &res[r])
			}
			if err != nil {
				errs[r] = fmt.Errorf("worker %d: %v", r, err)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return res, nil
}
