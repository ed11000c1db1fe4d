package simplecpp

/*
#include <stdlib.h>
#include <simplecpp/simplecpp_c.h>
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// RunOp runs one node eagerly: op of domain ("" is ai.onnx) at opset, on inputs (nil for an
// omitted optional input), returning numOutputs new tensors for the caller to free. The library
// caches the prepared node per OS thread, so repeated calls with the same op, attributes, dtypes
// and ranks cost one run; goroutines can move between threads, which costs a new preparation.
func RunOp(domain, op string, opset int64, inputs []*Tensor, attrs *Attributes,
	numOutputs int) ([]*Tensor, error) {
	if numOutputs < 0 {
		return nil, argError("%s: numOutputs %d is negative", op, numOutputs)
	}
	ptrs, err := tensorPtrs(inputs)
	if err != nil {
		return nil, err
	}
	cattrs, err := attrs.toC()
	if err != nil {
		return nil, err
	}
	defer freeAttributes(cattrs)
	cdomain := C.CString(domain)
	defer C.free(unsafe.Pointer(cdomain))
	cop := C.CString(op)
	defer C.free(unsafe.Pointer(cop))
	out := make([]*C.sc_tensor, numOutputs)
	var inPtr, outPtr **C.sc_tensor
	if len(ptrs) > 0 {
		inPtr = &ptrs[0]
	}
	if len(out) > 0 {
		outPtr = &out[0]
	}
	err = statusError(C.sc_run_op(cdomain, cop, C.int64_t(opset), inPtr, C.int64_t(len(ptrs)),
		cattrs, C.int64_t(numOutputs), outPtr))
	runtime.KeepAlive(inputs)
	if err != nil {
		return nil, err
	}
	return wrapTensors(out), nil
}
