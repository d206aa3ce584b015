package graph

import (
	"fmt"
	"slices"
)

// The table lookup and its gradient.
var (
	opGather     = newOp() // rows of a table picked by ids
	opScatterAdd = newOp() // Gather's gradient: dy rows summed into table rows
)

func init() {
	defineOps(map[opKind]opDef{
		opGather:     {name: "gather", cpu: cpu(gatherKernel, gatherKernel), grad: gatherGrad},
		opScatterAdd: {name: "scatter_add", cpu: cpu(scatterAddKernel, scatterAddKernel), backward: true},
	})
}

// Gather returns the rows of table [v,d] picked by ids (any shape, holding
// row indices as values): shape ids.shape + [d]. The gradient with respect
// to table sums each dy row into the row it was read from; ids get none. An
// id that is not a row index makes Run return an error wrapping *IndexError.
// It panics with an error wrapping ErrShape if table is not a matrix.
func Gather(table, ids *Node) *Node {
	const op = "gather"
	g := graphOf(op, table, ids)
	if len(table.shape) != 2 {
		panic(shapeErr(g, op, fmt.Sprintf("want a table [rows, width], got %v", table.shape)))
	}
	return g.add(opGather, append(slices.Clone(ids.shape), table.shape[1]), table, ids)
}

// IndexError is the error Run returns (wrapped) when Gather meets an id that
// is not a row of its table.
type IndexError struct {
	Pos   int     // position in ids
	Value float64 // the id
	Rows  int     // the table's rows
}

func (e *IndexError) Error() string {
	return fmt.Sprintf("graph: ids[%d]: want an index in [0,%d), got %v", e.Pos, e.Rows, e.Value)
}

func gatherGrad(n, dy *Node) []*Node {
	return []*Node{n.g.add(opScatterAdd, n.in[0].shape, n.in[1], dy), nil}
}

func gatherKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	table, ids, d := in[0], in[1], n.in[0].shape[1]
	rows := n.in[0].shape[0]
	return func() {
		for i, id := range ids {
			k := rowIndex(id, i, rows)
			copy(out[i*d:(i+1)*d], table[k*d:(k+1)*d])
		}
	}
}

func scatterAddKernel[T Float](n *Node, in [][]T, out []T, _ map[int][]int) func() {
	ids, dy, d, rows := in[0], in[1], n.shape[1], n.shape[0]
	return func() {
		clear(out)
		for i, id := range ids {
			k := rowIndex(id, i, rows)
			row := out[k*d : (k+1)*d]
			for j, v := range dy[i*d : (i+1)*d] {
				row[j] += v
			}
		}
	}
}

// rowIndex returns id as a row index of a table of rows rows, or panics with
// an *IndexError.
func rowIndex[T Float](id T, pos, rows int) int {
	k := int(id)
	if T(k) != id || k < 0 || k >= rows {
		panic(&IndexError{Pos: pos, Value: float64(id), Rows: rows})
	}
	return k
}
