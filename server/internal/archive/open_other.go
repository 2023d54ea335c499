//go:build !unix

package archive

import "os"

const openFlags = os.O_RDONLY
