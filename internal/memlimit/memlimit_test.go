package memlimit

import "testing"

func TestParse(t *testing.T) {
	const meminfo = "MemTotal:       16384 kB\nMemFree:         1024 kB\n"
	tests := []struct {
		name    string
		meminfo string
		cgroups []string
		want    uint64
	}{
		{"meminfo", meminfo, nil, 16 << 20},
		{"cgroup-smaller", meminfo, []string{"8388608\n"}, 8 << 20},
		{"cgroup-larger", meminfo, []string{"1073741824\n"}, 16 << 20},
		{"cgroup-max", meminfo, []string{"max\n"}, 16 << 20},
		{"cgroup-only", "", []string{"4096\n"}, 4096},
		{"nothing", "", nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parse(tt.meminfo, tt.cgroups); got != tt.want {
				t.Errorf("parse(%q, %q) = %d, want %d", tt.meminfo, tt.cgroups, got, tt.want)
			}
		})
	}
}

func TestFormat(t *testing.T) {
	tests := []struct {
		b    float64
		want string
	}{
		{0, "0 B"},
		{1023, "1023 B"},
		{1 << 43, "8 TiB"},
		{15.6 * (1 << 30), "15.6 GiB"},
	}
	for _, tt := range tests {
		if got := Format(tt.b); got != tt.want {
			t.Errorf("Format(%v) = %q, want %q", tt.b, got, tt.want)
		}
	}
}

func TestFits(t *testing.T) {
	if Bytes() == 0 {
		t.Skip("this machine's memory cannot be read")
	}
	if !Fits(1 << 20) {
		t.Errorf("Fits(1 MiB) = false with a limit of %s", Format(float64(Bytes())))
	}
	if Fits(Size([]int{1 << 50}, 8)) {
		t.Errorf("Fits(8 PiB) = true with a limit of %s", Format(float64(Bytes())))
	}
	if got, want := Size([]int{2, -1, 3}, 8), 0.0; got != want {
		t.Errorf("Size([2 -1 3], 8) = %v, want %v", got, want)
	}
}
