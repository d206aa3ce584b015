package session

import (
	"cmp"
	"fmt"
	"reflect"
	"sort"

	"github.com/traefik/yaegi/interp"
)

// shimPath is the import path of the compiled helpers that rewritten cells
// call. The leading underscore keeps it out of every user namespace.
const shimPath = "gotrain.internal/_gotrain"

// shimSymbols are compiled, reflection-based stand-ins for generic standard
// library functions that yaegi v0.16.1 cannot run. They take any because the
// interpreter cannot instantiate compiled generics; each one checks its
// argument and panics with a session-prefixed message on misuse, as the real
// function would fail to compile.
var shimSymbols = interp.Exports{
	shimPath + "/_gotrain": {
		"Sort":           reflect.ValueOf(shimSort),
		"SortFunc":       reflect.ValueOf(shimSortFunc),
		"SortStableFunc": reflect.ValueOf(shimSortStableFunc),
		"IsSorted":       reflect.ValueOf(shimIsSorted),
		"Reverse":        reflect.ValueOf(shimReverse),
		"Equal":          reflect.ValueOf(shimEqual),
		"IndexFunc":      reflect.ValueOf(shimIndexFunc),
		"ContainsFunc":   reflect.ValueOf(func(s, f any) bool { return shimIndexFunc(s, f) >= 0 }),
		"Clear":          reflect.ValueOf(shimClear),
		"Empty":          reflect.ValueOf(shimEmpty),
	},
}

// preludeSource declares the generic helpers whose results must keep their
// static type (min, slices.Max, maps.Keys...), so they are interpreted
// generics rather than compiled shims. yaegi infers type arguments only from
// plain []E and map[K]V parameters, not from ~[]E constraints, which is why
// these differ in shape from the standard library's. It cannot infer V
// from map[K]V at all, so maps.Keys, maps.Values and maps.Clone are
// rewritten in place instead (see rewriter.mapsCall).
const preludeSource = `
import _gotrain "` + shimPath + `"

type _gotrain_ordered interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64 | ~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr | ~float32 | ~float64 | ~string
}

func _gotrain_min[T _gotrain_ordered](x T, ys ...T) T {
	for _, y := range ys {
		if y < x {
			x = y
		}
	}
	return x
}

func _gotrain_max[T _gotrain_ordered](x T, ys ...T) T {
	for _, y := range ys {
		if y > x {
			x = y
		}
	}
	return x
}

func _gotrain_slices_Min[E _gotrain_ordered](s []E) E {
	if len(s) == 0 {
		_gotrain.Empty("slices.Min")
	}
	return _gotrain_min(s[0], s[1:]...)
}

func _gotrain_slices_Max[E _gotrain_ordered](s []E) E {
	if len(s) == 0 {
		_gotrain.Empty("slices.Max")
	}
	return _gotrain_max(s[0], s[1:]...)
}

func _gotrain_slices_Clone[E any](s []E) []E {
	if s == nil {
		return nil
	}
	return append([]E{}, s...)
}

func _gotrain_slices_Sorted[E _gotrain_ordered](s []E) []E {
	c := append([]E{}, s...)
	_gotrain.Sort(c)
	return c
}
`

// shimNames maps "path.Name" to the identifier a call is rewritten to.
var shimNames = map[string]string{
	"slices.Sort":           "_gotrain.Sort",
	"slices.SortFunc":       "_gotrain.SortFunc",
	"slices.SortStableFunc": "_gotrain.SortStableFunc",
	"slices.IsSorted":       "_gotrain.IsSorted",
	"slices.Reverse":        "_gotrain.Reverse",
	"slices.Equal":          "_gotrain.Equal",
	"slices.IndexFunc":      "_gotrain.IndexFunc",
	"slices.ContainsFunc":   "_gotrain.ContainsFunc",
	"slices.Min":            "_gotrain_slices_Min",
	"slices.Max":            "_gotrain_slices_Max",
	"slices.Clone":          "_gotrain_slices_Clone",
	"slices.Sorted":         "_gotrain_slices_Sorted",
	"slices.Collect":        "_gotrain_slices_Clone",
}

func sliceArg(fn string, s any) reflect.Value {
	v := reflect.ValueOf(s)
	if v.Kind() != reflect.Slice {
		panic(fmt.Errorf("session: %s: want a slice, got %T", fn, s))
	}
	return v
}

// less orders two values of one ordered kind the way cmp.Less does.
func less(a, b reflect.Value) bool {
	switch a.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return a.Int() < b.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return a.Uint() < b.Uint()
	case reflect.Float32, reflect.Float64:
		return cmp.Less(a.Float(), b.Float())
	case reflect.String:
		return a.String() < b.String()
	}
	panic(fmt.Errorf("session: slices.Sort: want ordered elements, got %s", a.Type()))
}

func shimSort(s any) {
	// The common element types take the compiled generic path; others fall
	// back to reflection.
	switch x := s.(type) {
	case []int:
		sort.Ints(x)
	case []float64:
		sort.Float64s(x)
	case []string:
		sort.Strings(x)
	default:
		v := sliceArg("slices.Sort", s)
		sort.SliceStable(s, func(i, j int) bool { return less(v.Index(i), v.Index(j)) })
	}
}

func shimIsSorted(s any) bool {
	v := sliceArg("slices.IsSorted", s)
	for i := 1; i < v.Len(); i++ {
		if less(v.Index(i), v.Index(i-1)) {
			return false
		}
	}
	return true
}

func cmpFunc(fn string, v reflect.Value, f any) func(i, j int) bool {
	fv := reflect.ValueOf(f)
	if fv.Kind() != reflect.Func || fv.Type().NumIn() != 2 || fv.Type().NumOut() != 1 {
		panic(fmt.Errorf("session: %s: want func(a, b E) int, got %T", fn, f))
	}
	return func(i, j int) bool {
		return fv.Call([]reflect.Value{v.Index(i), v.Index(j)})[0].Int() < 0
	}
}

func shimSortFunc(s, f any) {
	v := sliceArg("slices.SortFunc", s)
	sort.Slice(s, cmpFunc("slices.SortFunc", v, f))
}

func shimSortStableFunc(s, f any) {
	v := sliceArg("slices.SortStableFunc", s)
	sort.SliceStable(s, cmpFunc("slices.SortStableFunc", v, f))
}

func shimReverse(s any) {
	v := sliceArg("slices.Reverse", s)
	swap := reflect.Swapper(s)
	for i, j := 0, v.Len()-1; i < j; i, j = i+1, j-1 {
		swap(i, j)
	}
}

func shimEqual(a, b any) bool {
	va, vb := sliceArg("slices.Equal", a), sliceArg("slices.Equal", b)
	if va.Len() != vb.Len() {
		return false
	}
	for i := 0; i < va.Len(); i++ {
		if va.Index(i).Interface() != vb.Index(i).Interface() {
			return false
		}
	}
	return true
}

func shimIndexFunc(s, f any) int {
	v := sliceArg("slices.IndexFunc", s)
	fv := reflect.ValueOf(f)
	if fv.Kind() != reflect.Func || fv.Type().NumIn() != 1 || fv.Type().NumOut() != 1 {
		panic(fmt.Errorf("session: slices.IndexFunc: want func(E) bool, got %T", f))
	}
	for i := 0; i < v.Len(); i++ {
		if fv.Call([]reflect.Value{v.Index(i)})[0].Bool() {
			return i
		}
	}
	return -1
}

func shimClear(x any) {
	v := reflect.ValueOf(x)
	switch v.Kind() {
	case reflect.Map, reflect.Slice:
		v.Clear()
	default:
		panic(fmt.Errorf("session: clear: want a map or slice, got %T", x))
	}
}

// shimEmpty panics as slices.Max and slices.Min do on an empty slice.
func shimEmpty(fn string) {
	panic(fmt.Errorf("session: %s: empty list", fn))
}
