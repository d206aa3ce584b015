package worker_test

import (
	"fmt"

	"github.com/gotrain/gotrain/worker"
)

// ParseSize reads the sizes %limit memory and --memory-limit take.
func ExampleParseSize() {
	for _, s := range []string{"8GiB", "512MiB", "1.5GB", "10KiB"} {
		n, err := worker.ParseSize(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(s, n)
	}
	// Output:
	// 8GiB 8589934592
	// 512MiB 536870912
	// 1.5GB 1500000000
	// size "10KiB" is below 64MiB, less than the worker itself needs
}
