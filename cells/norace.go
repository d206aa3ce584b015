//go:build !race

package cells

const raceEnabled = false
