package nn_test

import (
	"fmt"

	"github.com/gotrain/gotrain/data"
	"github.com/gotrain/gotrain/graph"
	"github.com/gotrain/gotrain/nn"
	"github.com/gotrain/gotrain/strategy"
)

func ExampleGRU() {
	s := strategy.NewOneDevice()
	defer s.Close()
	var gru *nn.GRULayer
	s.Scope(func() {
		gru = nn.GRU(16, nn.ReturnSequences())
		gru.Build([]int{1, 10, 8}) // or built on the first Call
	})
	fmt.Println(gru.Name(), gru.Kernel().Shape(), gru.RecurrentKernel().Shape(), gru.Bias().Shape(), gru.OutputShape([]int{32, 10, 8}))
	// Output: gru [8 48] [16 48] [2 48] [32 10 16]
}

func ExampleLSTM() {
	s := strategy.NewOneDevice()
	defer s.Close()
	var lstm *nn.LSTMLayer
	s.Scope(func() {
		lstm = nn.LSTM(4, nn.Named("encoder"))
		lstm.Build([]int{1, 10, 3})
	})
	// The forget gate's bias starts at 1 (Keras's unit_forget_bias).
	fmt.Println(lstm.Name(), lstm.Kernel().Shape(), lstm.OutputShape([]int{32, 10, 3}), lstm.Bias().Value())
	// Output: encoder [3 16] [32 4] [0 0 0 0 1 1 1 1 0 0 0 0 0 0 0 0]
}

// A mask leaves the state alone at padded steps: the second sequence, one
// real step and two of padding, ends in the state the first sequence, that
// step alone, ends in.
func ExampleGRULayer_CallWithState() {
	s := strategy.NewOneDevice(strategy.WithDType(graph.Float64), strategy.WithSeed(3))
	defer s.Close()
	var gru *nn.GRULayer
	s.Scope(func() { gru = nn.GRU(2) })
	final := func(ctx *strategy.ReplicaContext, x, mask *nn.Tensor) *nn.Tensor {
		_, states := gru.CallWithState(ctx, x, mask, nil, false)
		return states[0]
	}
	one := data.NewTensor([]int{1, 1, 1}, []float64{0.5})
	padded := data.NewTensor([]int{1, 3, 1}, []float64{0.5, 9, -9})
	fmt.Printf("%.6f\n", s.Run(final, one, data.NewTensor([]int{1, 1}, []float64{1})).Values()[0].Data)
	fmt.Printf("%.6f\n", s.Run(final, padded, data.NewTensor([]int{1, 3}, []float64{1, 0, 0})).Values()[0].Data)
	// Output:
	// [0.104840 -0.216678]
	// [0.104840 -0.216678]
}

func ExampleBidirectional() {
	s := strategy.NewOneDevice()
	defer s.Close()
	var bi *nn.BidirectionalLayer
	s.Scope(func() {
		bi = nn.Bidirectional(nn.LSTM(8, nn.ReturnSequences()))
		bi.Build([]int{1, 20, 4})
	})
	for _, v := range bi.Variables() {
		fmt.Println(v.Name(), v.Shape())
	}
	fmt.Println(bi.Merge(), bi.OutputShape([]int{32, 20, 4}))
	// Output:
	// bidirectional/forward_lstm/kernel [4 32]
	// bidirectional/forward_lstm/recurrent_kernel [8 32]
	// bidirectional/forward_lstm/bias [32]
	// bidirectional/backward_lstm/kernel [4 32]
	// bidirectional/backward_lstm/recurrent_kernel [8 32]
	// bidirectional/backward_lstm/bias [32]
	// concat [32 20 16]
}
