package main

import (
	"strings"
	"testing"
)

func TestMLPFlops(t *testing.T) {
	tests := []struct {
		dims []int
		want float64
	}{
		// One layer: forward x·W and the weights' gradient; no input gradient.
		{[]int{3, 2}, 2 * 2 * 3 * 2},
		// The MLP: 3 products for each layer but the first, which has 2.
		{[]int{784, 512, 512, 10}, 2 * (2*784*512 + 3*512*512 + 3*512*10)},
		{[]int{10, 16, 2}, 2 * (2*10*16 + 3*16*2)},
	}
	for _, tt := range tests {
		if got := mlpFlops(tt.dims); got != tt.want {
			t.Errorf("mlpFlops(%v) = %v, want %v", tt.dims, got, tt.want)
		}
	}
}

func TestParseDims(t *testing.T) {
	tests := []struct {
		in      string
		want    []int
		wantErr string
	}{
		{"784,512,10", []int{784, 512, 10}, ""},
		{" 4, 2 ", []int{4, 2}, ""},
		{"4", nil, "want at least two widths"},
		{"4,0", nil, "want positive integers"},
		{"4,x", nil, "want positive integers"},
		{"", nil, "want positive integers"},
	}
	for _, tt := range tests {
		got, err := parseDims(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseDims(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || len(got) != len(tt.want) {
			t.Errorf("parseDims(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("parseDims(%q) = %v, want %v", tt.in, got, tt.want)
				break
			}
		}
	}
}
