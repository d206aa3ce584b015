package main

import (
	"fmt"
	"sync"
)

type config struct {
	once   sync.Once
	values map[string]string
	loads  int
}

func (c *config) get(key string) string {
	c.once.Do(func() {
		c.loads++
		c.values = map[string]string{"env": "test", "region": "eu"}
	})
	return c.values[key]
}

var wg sync.WaitGroup

func main() {
	cfg := &config{}
	got := make([]string, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i] = cfg.get([]string{"env", "region"}[i%2])
		}()
	}
	wg.Wait()
	fmt.Println(got, cfg.loads)
	compute := sync.OnceValue(func() int {
		fmt.Println("computing once")
		return 6 * 7
	})
	fmt.Println(compute(), compute())
	pair := sync.OnceValues(func() (string, error) { return "ready", nil })
	s, err := pair()
	fmt.Println(s, err)
}
