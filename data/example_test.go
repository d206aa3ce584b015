package data_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gotrain/gotrain/data"
)

func ExampleNewTensor() {
	x := data.NewTensor([]int{2, 3}, []float64{1, 2, 3, 4, 5, 6})
	fmt.Println(x.Shape, x.Len(), x.Dim(1))
	fmt.Println(x)
	fmt.Println(x.Row(1))
	fmt.Println(x.Reshape(3, -1).Shape)
	// Output:
	// [2 3] 6 3
	// [[1 2 3]
	//  [4 5 6]]
	// [4 5 6]
	// [3 2]
}

func ExampleZeros() {
	fmt.Println(data.Zeros(2, 2))
	fmt.Println(data.NewTensor(nil, []float64{0.6931471805599453}))
	// Output:
	// [[0 0]
	//  [0 0]]
	// 0.693147
}

func ExampleTensor_Scale() {
	pixels := data.NewTensor([]int{3}, []float64{0, 51, 255})
	fmt.Println(pixels.Scale(1.0 / 255))
	// Output:
	// [  0 0.2   1]
}

func ExampleTensor_String() {
	long := data.Zeros(20)
	for i := range long.Data {
		long.Data[i] = float64(i)
	}
	fmt.Println(long)
	// Output:
	// [ 0  1  2 ... 17 18 19]
}

func ExampleRandomNormal() {
	x := data.RandomNormal(7, 2, 3)
	for _, v := range x.Data {
		fmt.Printf(" %.4f", v)
	}
	fmt.Println()
	fmt.Println(data.RandomNormal(7, 2, 3).Data[0] == x.Data[0]) // same seed, same values
	// Output:
	// -0.0601 0.4494 0.2680 -0.0563 -0.5612 0.5234
	// true
}

func ExampleRandomUniform() {
	x := data.RandomUniform(1, -1, 1, 4)
	for _, v := range x.Data {
		fmt.Printf(" %.4f", v)
	}
	fmt.Println()
	// Output:
	// 0.5466 -0.7349 0.5686 0.6801
}

func ExampleRandomInts() {
	fmt.Println(data.RandomInts(8, 2, 10))
	// Output:
	// [1 0 1 1 0 1 0 1 1 1]
}

func ExampleFromTensorSlices() {
	features := data.NewTensor([]int{3, 2}, []float64{1, 2, 3, 4, 5, 6})
	labels := data.NewTensor([]int{3}, []float64{0, 1, 0})
	ds := data.FromTensorSlices(features, labels)
	fmt.Println(ds.Cardinality(), ds.ElementSpec())
	for it := ds.Iter(); it.Next(); {
		x, y := it.Value()[0], it.Value()[1]
		fmt.Println(x, y)
	}
	// Output:
	// 3 [[2] []]
	// [1 2] 0
	// [3 4] 1
	// [5 6] 0
}

func ExampleDataset_Batch() {
	x := data.NewTensor([]int{5}, []float64{0, 1, 2, 3, 4})
	ds := data.FromTensorSlices(x)
	for it := ds.Batch(2).Iter(); it.Next(); {
		fmt.Print(" ", it.Value()[0])
	}
	fmt.Println()
	for it := ds.Batch(2, data.DropRemainder()).Iter(); it.Next(); {
		fmt.Print(" ", it.Value()[0])
	}
	fmt.Println()
	fmt.Println(ds.Batch(2).ElementSpec(), ds.Batch(2, data.DropRemainder()).ElementSpec())
	// Output:
	//  [0 1] [2 3] [4]
	//  [0 1] [2 3]
	// [[-1]] [[2]]
}

func ExampleDataset_Shuffle() {
	x := data.NewTensor([]int{6}, []float64{0, 1, 2, 3, 4, 5})
	ds := data.FromTensorSlices(x).Shuffle(6, 42).Batch(6)
	for epoch := range 2 {
		it := ds.Iter()
		it.Next()
		fmt.Println(epoch, it.Value()[0])
		it.Close()
	}
	// Output:
	// 0 [2 0 1 4 3 5]
	// 1 [1 3 0 2 4 5]
}

func ExampleDataset_Repeat() {
	x := data.NewTensor([]int{2}, []float64{7, 8})
	ds := data.FromTensorSlices(x).Repeat(-1).Take(5)
	fmt.Println(ds.Cardinality())
	for it := ds.Iter(); it.Next(); {
		fmt.Print(" ", it.Value()[0])
	}
	fmt.Println()
	// Output:
	// 5
	//  7 8 7 8 7
}

func ExampleDataset_Skip() {
	x := data.NewTensor([]int{5}, []float64{0, 1, 2, 3, 4})
	for it := data.FromTensorSlices(x).Skip(3).Iter(); it.Next(); {
		fmt.Print(" ", it.Value()[0])
	}
	fmt.Println()
	// Output:
	//  3 4
}

func ExampleDataset_Shard() {
	x := data.NewTensor([]int{7}, []float64{0, 1, 2, 3, 4, 5, 6})
	for id := range 2 {
		ds := data.FromTensorSlices(x).Shard(2, id)
		fmt.Print("pipeline ", id, ":")
		for it := ds.Iter(); it.Next(); {
			fmt.Print(" ", it.Value()[0])
		}
		fmt.Println()
	}
	// Output:
	// pipeline 0: 0 2 4 6
	// pipeline 1: 1 3 5
}

func ExampleDataset_Map() {
	images := data.NewTensor([]int{2, 2, 2}, []float64{0, 255, 51, 102, 255, 0, 0, 0})
	ds := data.FromTensorSlices(images).Map(func(e []data.Tensor) []data.Tensor {
		return []data.Tensor{e[0].Reshape(-1).Scale(1.0 / 255)}
	})
	fmt.Println(ds.ElementSpec())
	for it := ds.Iter(); it.Next(); {
		fmt.Println(it.Value()[0])
	}
	// Output:
	// [[4]]
	// [  0   1 0.2 0.4]
	// [1 0 0 0]
}

func ExampleDataset_Prefetch() {
	x := data.RandomNormal(1, 100, 3)
	ds := data.FromTensorSlices(x).Batch(32).Prefetch(2)
	it := ds.Iter()
	defer it.Close() // stops the prefetch goroutine if the loop breaks early
	sum := 0.0
	for it.Next() {
		for _, v := range it.Value()[0].Data {
			sum += v
		}
	}
	fmt.Printf("%.4f %v\n", sum, it.Err())
	// Output:
	// -6.3851 <nil>
}

func ExampleFromFunc() {
	squares := data.FromFunc(4, func(i int) []data.Tensor {
		return []data.Tensor{data.NewTensor(nil, []float64{float64(i * i)})}
	})
	for it := squares.Batch(4).Iter(); it.Next(); {
		fmt.Println(it.Value()[0])
	}
	// Output:
	// [0 1 4 9]
}

func ExampleInputContext_PerReplicaBatchSize() {
	ctx := data.InputContext{NumInputPipelines: 1, NumReplicasInSync: 4}
	fmt.Println(ctx.PerReplicaBatchSize(64))
	fmt.Println(ctx.PerReplicaBatchSize(30))
	// Output:
	// 16 <nil>
	// 0 data: global batch 30 not divisible by 4 replicas
}

func ExampleReadIDX() {
	// A gzip-compressed IDX file of two unsigned-byte labels.
	var file bytes.Buffer
	gz := gzip.NewWriter(&file)
	gz.Write([]byte{0, 0, 0x08, 1, 0, 0, 0, 2, 7, 3})
	gz.Close()
	labels, err := data.ReadIDX(&file)
	fmt.Println(labels.Shape, labels, err)

	_, err = data.ReadIDX(strings.NewReader("\x00\x00\x08\x01\x00\x00\x00\x05\x01"))
	fmt.Println(err)
	// Output:
	// [2] [7 3] <nil>
	// data: idx: offset 8: want 5 bytes of data for shape [5], got 1 byte before end of input
}

func ExampleReadCSV() {
	csv := "sepal,petal,class\n5.1,1.4,0\n6.2,4.5,1\n"
	x, err := data.ReadCSV(strings.NewReader(csv), data.CSVOptions{Header: true, Columns: []int{0, 1}})
	fmt.Println(x, err)
	// Output:
	// [[5.1 1.4]
	//  [6.2 4.5]] <nil>
}

func ExampleReadNPY() {
	var file bytes.Buffer
	data.WriteNPY(&file, data.NewTensor([]int{2, 2}, []float64{0.5, 1.5, 2.5, 3.5}))
	x, err := data.ReadNPY(&file)
	fmt.Println(x.Shape, x, err)
	// Output:
	// [2 2] [[0.5 1.5]
	//  [2.5 3.5]] <nil>
}

func ExampleTensor_Slice() {
	batch := data.NewTensor([]int{5, 2}, []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	// Split a global batch of 5 rows between two replicas: 3 and 2 rows.
	fmt.Println(batch.Slice(0, 3))
	fmt.Println(batch.Slice(3, 5).Shape)
	// Output:
	// [[0 1]
	//  [2 3]
	//  [4 5]]
	// [2 2]
}

func ExampleTensor_Scalar() {
	loss := data.NewTensor([]int{1}, []float64{0.6931471805599453})
	fmt.Printf("%.4f\n", loss.Scalar())
	// Output:
	// 0.6931
}

func ExampleDataset_Take() {
	ds := data.FromTensorSlices(data.RandomNormal(3, 1024, 4)).Batch(64).Take(3)
	fmt.Println(ds)
	// Output:
	// Dataset{elements: 3, shapes: [[64 4]]}
}

func ExampleIterator() {
	x := data.NewTensor([]int{4, 1}, []float64{1, 2, 3, 4})
	it := data.FromTensorSlices(x).Batch(3).Iter()
	defer it.Close()
	for it.Next() {
		b := it.Value()[0]
		keep := b.Clone() // Value is reused by the next Next
		fmt.Println(keep.Shape, keep.Data)
	}
	fmt.Println(it.Err())
	// Output:
	// [3 1] [1 2 3]
	// [1 1] [4]
	// <nil>
}

func ExampleDataset_IterAt() {
	x := data.NewTensor([]int{6}, []float64{0, 1, 2, 3, 4, 5})
	ds := data.FromTensorSlices(x).Shuffle(6, 7)
	it := ds.Iter()
	it.Next()
	it.Next()
	st := it.State() // kept in a checkpoint, say
	fmt.Println("continuing:", st.Position, "elements read")
	resumed, _ := data.FromTensorSlices(x).Shuffle(6, 7).IterAt(st)
	for resumed.Next() && it.Next() {
		fmt.Println(resumed.Value()[0].Data[0] == it.Value()[0].Data[0])
	}
	// Output:
	// continuing: 2 elements read
	// true
	// true
	// true
	// true
}

func ExampleWriteCSV() {
	x := data.NewTensor([]int{2, 2}, []float64{0.1, 2, 3e-9, -4})
	data.WriteCSV(os.Stdout, x, []string{"a", "b"})
	// Output:
	// a,b
	// 0.1,2
	// 3e-09,-4
}

func ExampleFormatError() {
	_, err := data.ReadNPY(strings.NewReader("\x93NUMPY\x01\x00\x06\x00{'a':}"))
	var fe *data.FormatError
	if errors.As(err, &fe) {
		fmt.Println(fe.Offset, fe.Want)
	}
	fmt.Println(errors.Is(err, data.ErrFormat))
	fmt.Println(err)
	// Output:
	// 11 key 'descr', 'fortran_order' or 'shape'
	// true
	// data: npy: offset 11: want key 'descr', 'fortran_order' or 'shape', got "a"
}

func ExampleLoadIDX() {
	dir, _ := os.MkdirTemp("", "mnist")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "train-images-idx3-ubyte")
	// Two 2×2 "images" of unsigned bytes.
	os.WriteFile(path, []byte{0, 0, 0x08, 3, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 2,
		0, 255, 255, 0, 51, 51, 51, 51}, 0o644)
	images, err := data.LoadIDX(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	x := images.Reshape(-1, 4).Scale(1.0 / 255)
	fmt.Println(x)
	// Output:
	// [[  0   1   1   0]
	//  [0.2 0.2 0.2 0.2]]
}
