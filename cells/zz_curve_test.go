package cells_test

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"sort"
	"strconv"
	"testing"
	"time"
)

func TestZZCurve(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("ZZ_CELLS"))
	if n == 0 {
		t.Skip("ZZ_CELLS unset")
	}
	s := newSession(t)
	s.want("import (\n\t\"encoding/csv\"\n\t\"fmt\"\n\t\"strconv\"\n\t\"strings\"\n\t\"time\"\n)\n", "")
	var times []float64
	for i := 1; i <= n; i++ {
		if i == n-100 {
			f, _ := os.Create("/tmp/zz.prof")
			pprof.StartCPUProfile(f)
			defer pprof.StopCPUProfile()
		}
		t0 := time.Now()
		c, err := s.c.Compile(context.Background(), fmt.Sprintf("c%d := %d", i, i))
		if err != nil {
			t.Fatal(err)
		}
		c.Run()
		times = append(times, float64(time.Since(t0).Microseconds())/1000)
		if i%250 == 0 || i == 20 {
			w := append([]float64(nil), times[i-20:i]...)
			sort.Float64s(w)
			t.Logf("cell %d: p50 %.0f ms", i, w[10])
		}
	}
}
