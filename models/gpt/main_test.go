//go:build !cuda

package gpt_test

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { runTests(m, func(m *testing.M) { goleak.VerifyTestMain(m) }) }
