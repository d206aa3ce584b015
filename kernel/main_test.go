package kernel_test

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// zmq4 v0.17.0: a PUB socket's Close never closes its writer, so the
		// writer goroutine stays parked on its condition variable for the
		// life of the process, one per kernel. Nothing here can reach it;
		// see the BUG note in doc.go.
		goleak.IgnoreAnyFunction("github.com/go-zeromq/zmq4.(*pubMWriter).run"),
	)
}
