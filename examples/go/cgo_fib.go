// cgo_fib.go — a Go program built with cgo (tests/e2e/go_cgo.sh): four
// goroutines, each computing fib(30) in Go and then calling C for a loop.
// A cgo program is linked dynamically, so the agent loads into it; its Go
// runtime finds the auxiliary vector past the environment's NULL, and Go's
// linker writes .debug_aranges for the C part only.
package main

/*
static int cwork(int n)
{
	volatile int s = 0;
	for (int i = 0; i < n; i++)
		s += i % 7;
	return s;
}
*/
import "C"

import (
	"fmt"
	"os"
	"sync"
)

func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

func main() {
	var wg sync.WaitGroup
	res := make([]int, 4)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res[i] = fib(30) + int(C.cwork(10000000))
		}(i)
	}
	wg.Wait()
	fmt.Println(res, len(os.Environ()) > 0)
	os.Exit(5)
}
