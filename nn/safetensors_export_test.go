package nn

// ParseSafetensors parses a whole safetensors file held in b (for the fuzz
// test, which needs no file on disk).
func ParseSafetensors(path string, b []byte) ([]SafetensorsEntry, map[string]string, error) {
	return parseSafetensors(path, b)
}
