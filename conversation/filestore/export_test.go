//go:build unix

package filestore

// SetWriteFault makes writes of new files and of the unmapped journal fail with the error f returns
// for their path (nil: written); SetWriteFault(nil) ends it.
func SetWriteFault(f func(path string) error) {
	if f == nil {
		writeFault.Store(nil)
		return
	}
	writeFault.Store(&f)
}
