package main

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
)

type safeCounter struct {
	mu     sync.Mutex
	counts map[string]int
}

func (c *safeCounter) inc(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.counts[key]++
}

func (c *safeCounter) snapshot() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for k, v := range c.counts {
		out = append(out, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(out)
	return out
}

var ops atomic.Int64

var wg sync.WaitGroup

var rw sync.RWMutex

func main() {
	c := safeCounter{counts: map[string]int{}}
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				c.inc([]string{"red", "green", "blue"}[(id+j)%3])
				ops.Add(1)
			}
		}(i)
	}
	wg.Wait()
	fmt.Println(c.snapshot(), ops.Load())
	shared := map[int]int{}
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rw.Lock()
			shared[i%4] += i
			rw.Unlock()
		}()
	}
	wg.Wait()
	rw.RLock()
	fmt.Println(shared)
	rw.RUnlock()
}
