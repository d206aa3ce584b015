package nn

import "io"

// FailingTempFile is a temporary checkpoint file whose writes fail after
// Limit bytes, to test that a failed save leaves the previous file intact.
type FailingTempFile struct {
	TempFile interface {
		io.Writer
		Sync() error
		Close() error
		Name() string
	}
	Limit   int
	written int
}

func (f *FailingTempFile) Write(p []byte) (int, error) {
	if f.written+len(p) > f.Limit {
		n, _ := f.TempFile.Write(p[:f.Limit-f.written])
		f.written += n
		return n, io.ErrShortWrite
	}
	n, err := f.TempFile.Write(p)
	f.written += n
	return n, err
}

func (f *FailingTempFile) Sync() error  { return f.TempFile.Sync() }
func (f *FailingTempFile) Close() error { return f.TempFile.Close() }
func (f *FailingTempFile) Name() string { return f.TempFile.Name() }

// FailSavesAfter makes SaveCheckpoint's writes fail after limit bytes until
// the returned function is called.
func FailSavesAfter(limit int) (restore func()) {
	prev := createTemp
	createTemp = func(dir, pattern string) (tempFile, error) {
		f, err := prev(dir, pattern)
		if err != nil {
			return nil, err
		}
		return &FailingTempFile{TempFile: f, Limit: limit}, nil
	}
	return func() { createTemp = prev }
}
