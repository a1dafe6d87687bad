// SPDX-License-Identifier: GPL-2.0-or-later
// wl-go: wl-callers' 3:1 split in Go, for the call-graph tests.  Go's
// linker writes its CFI only as a compressed .debug_frame (no .eh_frame),
// and its leaf functions build no frame, so a frame-pointer walk skips
// their callers; the CFI walk does not.
//
//	wl-go [N]
//
// leaf() runs a dependent multiply-add chain; callerA() asks it for 3N
// steps and callerB() for N, 20 rounds.
package main

import (
	"os"
	"strconv"
)

//go:noinline
func leaf(n int, x uint64) uint64 {
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

//go:noinline
func callerA(n int, x uint64) uint64 { return leaf(3*n, x) + 1 }

//go:noinline
func callerB(n int, x uint64) uint64 { return leaf(n, x) + 2 }

func main() {
	n := 10000000
	if len(os.Args) > 1 {
		if v, err := strconv.Atoi(os.Args[1]); err == nil {
			n = v
		}
	}
	x := uint64(1)
	for r := 0; r < 20; r++ {
		x = callerA(n, x)
		x = callerB(n, x)
	}
	println(x)
}
