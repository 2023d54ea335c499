//go:build unix && !linux

package filestore

import "os"

func readDirNames(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.Readdirnames(-1)
}

const noAtime = 0 // O_NOATIME is Linux's
