package gpt_test

import (
	"fmt"
	"strings"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/models/gpt"
	"github.com/gotrain/gotrain/strategy"
)

func ExampleTrain() {
	text := strings.Repeat("the quick brown fox jumps over the lazy dog. ", 40)
	vocab := data.NewCharVocab(text)
	ids, _ := vocab.Encode(text)
	cfg := gpt.Config{Vocab: vocab.Size(), Context: 8, Layers: 1, Heads: 2, Width: 16}
	sch := gpt.DefaultSchedule(200)
	sch.Batch, sch.EvalEvery, sch.EvalIters = 4, 100, 5

	st := strategy.NewMirrored(strategy.WithReplicas(2), strategy.WithDType(graph.Float64))
	defer st.Close()
	var first float64
	res, err := gpt.Train(st, cfg, ids, sch, func(e gpt.Eval) {
		if e.Iter == 0 {
			first = e.ValLoss
		}
		fmt.Println("estimate after", e.Iter, "iterations")
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Params, "params; validation loss fell:", res.Last.ValLoss < first-0.5)
	// Output:
	// estimate after 0 iterations
	// estimate after 100 iterations
	// estimate after 200 iterations
	// 3696 params; validation loss fell: true
}
