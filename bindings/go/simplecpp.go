// Package simplecpp runs ONNX models from Go through simplecpp's C API (libsimplecpp_c).
//
//	model, err := simplecpp.Load("model.onnx")
//	session, err := simplecpp.NewSession(model, 0)
//	x, err := simplecpp.NewTensor([]float32{1, 2, 3}, []int64{1, 3})
//	outputs, err := session.Run(map[string]*simplecpp.Tensor{"x": x})
//	y, err := outputs["y"].Float32s()
//
// Every object holding C memory has a Close or Free method; call it when done. A finalizer frees
// what was forgotten, but only when the garbage collector gets to it, and the collector does not
// see C memory, so relying on it can hold far more memory than expected.
//
// Errors from the library are *Error values carrying the C API's code and message.
package simplecpp

// The library directory is left to the caller (CGO_LDFLAGS=-L<prefix>/lib): a build tree and an
// install prefix keep it in different places. See README.md.

/*
#cgo CFLAGS: -I${SRCDIR}/../../simplecpp/include
#cgo LDFLAGS: -lsimplecpp_c
#include <stdlib.h>
#include <simplecpp/simplecpp_c.h>
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Code is an SC_ERR_* number of the C API.
type Code int32

const (
	CodeInvalidArgument Code = C.SC_ERR_INVALID_ARGUMENT
	CodeInvalidModel    Code = C.SC_ERR_INVALID_MODEL
	CodeUnsupported     Code = C.SC_ERR_UNSUPPORTED
	CodeRuntime         Code = C.SC_ERR_RUNTIME
	CodeLimitExceeded   Code = C.SC_ERR_LIMIT_EXCEEDED
	CodeIO              Code = C.SC_ERR_IO
	CodeInternal        Code = C.SC_ERR_INTERNAL
)

// Error is a failed call: the C API's status code and its message, which names what was wrong
// and where (node, op, shapes, limit).
type Error struct {
	Code    Code
	Message string
}

func (e *Error) Error() string { return e.Message }

// statusError turns a C status into an *Error (nil for success) and frees the status.
func statusError(s *C.sc_status) error {
	if s == nil {
		return nil
	}
	err := &Error{Code: Code(C.sc_status_code(s)), Message: C.GoString(C.sc_status_message(s))}
	C.sc_status_free(s)
	return err
}

// argError is an error found on the Go side, before any C call, with the code C would have used.
func argError(format string, args ...interface{}) error {
	return &Error{Code: CodeInvalidArgument, Message: fmt.Sprintf(format, args...)}
}

// DType is an element type, numbered as ONNX's TensorProto does.
type DType int32

const (
	Undefined DType = 0
	Float32   DType = 1
	Uint8     DType = 2
	Int8      DType = 3
	Uint16    DType = 4
	Int16     DType = 5
	Int32     DType = 6
	Int64     DType = 7
	String    DType = 8
	Bool      DType = 9
	Float16   DType = 10
	Float64   DType = 11
	Uint32    DType = 12
	Uint64    DType = 13
	BFloat16  DType = 16
)

var dtypeNames = map[DType]string{
	Undefined: "undefined", Float32: "float32", Uint8: "uint8", Int8: "int8", Uint16: "uint16",
	Int16: "int16", Int32: "int32", Int64: "int64", String: "string", Bool: "bool",
	Float16: "float16", Float64: "float64", Uint32: "uint32", Uint64: "uint64", BFloat16: "bfloat16",
}

func (d DType) String() string {
	if name, ok := dtypeNames[d]; ok {
		return name
	}
	return fmt.Sprintf("dtype(%d)", int32(d))
}

// cStrings holds C copies of Go strings for one call; free releases them all.
type cStrings []*C.char

func newCStrings(values []string) cStrings {
	out := make(cStrings, len(values))
	for i, v := range values {
		out[i] = C.CString(v)
	}
	return out
}

// ptr is the array's first element, or nil for an empty array (C is told the count anyway).
func (s cStrings) ptr() **C.char {
	if len(s) == 0 {
		return nil
	}
	return &s[0]
}

func (s cStrings) free() {
	for _, p := range s {
		C.free(unsafe.Pointer(p))
	}
}

// dimsPtr passes a dims slice to C; int64 and C's int64_t have the same layout.
func dimsPtr(dims []int64) *C.int64_t {
	if len(dims) == 0 {
		return nil
	}
	return (*C.int64_t)(unsafe.Pointer(&dims[0]))
}
