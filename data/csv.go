package data

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// CSVOptions configures ReadCSV. The zero value reads comma-separated
// numbers without a header, keeping every column.
type CSVOptions struct {
	Header  bool  // the first record names the columns and is skipped
	Comma   rune  // field delimiter; 0 means ','
	Comment rune  // lines starting with it are ignored; 0 means none
	Columns []int // columns to keep, by index from 0, in this order; nil keeps all
}

// ReadCSV reads a table of numbers into a tensor of shape [rows, columns].
// Every record must have as many fields as the first one, and every kept
// field must parse as a float64 (surrounding spaces allowed; NaN and Inf
// accepted). Malformed input gives a *FormatError naming the line and
// column.
func ReadCSV(r io.Reader, opts CSVOptions) (Tensor, error) { return readCSV(r, "", opts) }

// LoadCSV reads the CSV file at path; see ReadCSV.
func LoadCSV(path string, opts CSVOptions) (Tensor, error) {
	return loadFile(path, "csv", func(r io.Reader, name string) (Tensor, error) { return readCSV(r, name, opts) })
}

func readCSV(r io.Reader, name string, opts CSVOptions) (Tensor, error) {
	cr := csv.NewReader(r)
	if opts.Comma != 0 {
		cr.Comma = opts.Comma
	}
	cr.Comment = opts.Comment
	cr.ReuseRecord = true
	bad := func(line, col int, want, got string, err error) (Tensor, error) {
		return Tensor{}, &FormatError{Format: "csv", File: name, Offset: -1, Line: line, Column: col, Want: want, Got: got, Err: err}
	}
	var cols []int
	var data []float64
	rows := 0
	width := -1
	for first := true; ; first = false {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				want := "well-formed CSV"
				if errors.Is(pe.Err, csv.ErrFieldCount) {
					want = fmt.Sprintf("%d fields like the first record", width)
				}
				return bad(pe.Line, pe.Column, want, "a malformed record", pe.Err)
			}
			return Tensor{}, fmt.Errorf("data: csv: %s: %w", nameOr(name), err)
		}
		if first {
			width = len(rec)
			cols = opts.Columns
			if cols == nil {
				cols = make([]int, width)
				for i := range cols {
					cols[i] = i
				}
			}
			for _, c := range cols {
				if c < 0 || c >= width {
					line, _ := cr.FieldPos(0)
					return bad(line, 1, fmt.Sprintf("column %d to exist", c), fmt.Sprintf("%d columns", width), nil)
				}
			}
			if opts.Header {
				continue
			}
		}
		for _, c := range cols {
			f := strings.TrimSpace(rec[c])
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				line, col := cr.FieldPos(c)
				return bad(line, col, "a number", strconv.Quote(rec[c]), nil)
			}
			data = append(data, v)
		}
		rows++
	}
	return Tensor{Shape: []int{rows, len(cols)}, Data: data}, nil
}

func nameOr(name string) string {
	if name == "" {
		return "input"
	}
	return name
}

// WriteCSV writes a tensor of rank 1 or 2 as CSV, one row per line, with
// header as the first record unless it is nil. Values use the shortest
// form that reads back exactly.
func WriteCSV(w io.Writer, t Tensor, header []string) error {
	if len(t.Data) != t.Len() {
		return fmt.Errorf("data: csv: shape %v wants %d values, got %d", t.Shape, t.Len(), len(t.Data))
	}
	var rows, cols int
	switch len(t.Shape) {
	case 1:
		rows, cols = t.Shape[0], 1
	case 2:
		rows, cols = t.Shape[0], t.Shape[1]
	default:
		return fmt.Errorf("data: csv: want a tensor of rank 1 or 2, got shape %v", t.Shape)
	}
	if header != nil && len(header) != cols {
		return fmt.Errorf("data: csv: want %d header names, got %d", cols, len(header))
	}
	cw := csv.NewWriter(w)
	if header != nil {
		cw.Write(header)
	}
	rec := make([]string, cols)
	for i := range rows {
		for j := range cols {
			rec[j] = strconv.FormatFloat(t.Data[i*cols+j], 'g', -1, 64)
		}
		cw.Write(rec)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("data: csv: %w", err)
	}
	return nil
}
