package simplecpp

/*
#include <simplecpp/simplecpp_c.h>
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// Element is a Go type with a matching simplecpp element type. A Go bool is one byte holding 0
// or 1, as the library's bool elements are.
type Element interface {
	float32 | int8 | uint8 | int32 | int64 | bool
}

// dtypeOf maps a Go element type to its DType.
func dtypeOf[T Element]() DType {
	var zero T
	switch any(zero).(type) {
	case float32:
		return Float32
	case int8:
		return Int8
	case uint8:
		return Uint8
	case int32:
		return Int32
	case bool:
		return Bool
	default:
		return Int64
	}
}

// Tensor is a dense tensor held by the library (a copy of the data it was made from). Free it
// when done; outputs of Run and RunOp are new tensors owned by the caller.
type Tensor struct {
	p *C.sc_tensor
}

// wrapTensor takes ownership of a tensor the library made.
func wrapTensor(p *C.sc_tensor) *Tensor {
	t := &Tensor{p: p}
	runtime.SetFinalizer(t, (*Tensor).Free)
	return t
}

// NewTensor copies data into a new tensor of shape dims (len(data) must be their product; no
// dims is a scalar).
func NewTensor[T Element](data []T, dims []int64) (*Tensor, error) {
	var zero T
	size := len(data) * int(unsafe.Sizeof(zero))
	var ptr unsafe.Pointer
	if len(data) > 0 {
		ptr = unsafe.Pointer(&data[0])
	}
	var p *C.sc_tensor
	err := statusError(C.sc_tensor_create(C.int32_t(dtypeOf[T]()), dimsPtr(dims),
		C.int64_t(len(dims)), ptr, C.size_t(size), &p))
	runtime.KeepAlive(data)
	if err != nil {
		return nil, err
	}
	return wrapTensor(p), nil
}

// Free releases the tensor's memory now; later calls are no-ops.
func (t *Tensor) Free() {
	if t == nil || t.p == nil {
		return
	}
	C.sc_tensor_free(t.p)
	t.p = nil
	runtime.SetFinalizer(t, nil)
}

// Dtype is the element type (Undefined once freed).
func (t *Tensor) Dtype() DType {
	if t == nil || t.p == nil {
		return Undefined
	}
	d := DType(C.sc_tensor_dtype(t.p))
	runtime.KeepAlive(t)
	return d
}

// Dims is the shape ([] for a scalar, nil once freed).
func (t *Tensor) Dims() []int64 {
	if t == nil || t.p == nil {
		return nil
	}
	dims := make([]int64, int(C.sc_tensor_rank(t.p)))
	// sc_tensor_dims fails only on a NULL tensor or a short buffer, neither possible here.
	_ = statusError(C.sc_tensor_dims(t.p, dimsPtr(dims), C.int64_t(len(dims))))
	runtime.KeepAlive(t)
	return dims
}

// copyOut copies the tensor's data into a new slice, checking that T is its element type.
func copyOut[T Element](t *Tensor) ([]T, error) {
	if t == nil || t.p == nil {
		return nil, argError("tensor is freed")
	}
	want := dtypeOf[T]()
	if got := t.Dtype(); got != want {
		return nil, argError("tensor holds %v, not %v", got, want)
	}
	var zero T
	bytes := int(C.sc_tensor_byte_size(t.p))
	out := make([]T, bytes/int(unsafe.Sizeof(zero)))
	if len(out) > 0 {
		err := statusError(C.sc_tensor_copy_data(t.p, unsafe.Pointer(&out[0]), C.size_t(bytes)))
		if err != nil {
			return nil, err
		}
	}
	runtime.KeepAlive(t)
	return out, nil
}

// Float32s copies out a float32 tensor's elements (row-major).
func (t *Tensor) Float32s() ([]float32, error) { return copyOut[float32](t) }

// Int8s copies out an int8 tensor's elements.
func (t *Tensor) Int8s() ([]int8, error) { return copyOut[int8](t) }

// Uint8s copies out a uint8 tensor's elements.
func (t *Tensor) Uint8s() ([]uint8, error) { return copyOut[uint8](t) }

// Int32s copies out an int32 tensor's elements.
func (t *Tensor) Int32s() ([]int32, error) { return copyOut[int32](t) }

// Int64s copies out an int64 tensor's elements.
func (t *Tensor) Int64s() ([]int64, error) { return copyOut[int64](t) }

// Bools copies out a bool tensor's elements.
func (t *Tensor) Bools() ([]bool, error) { return copyOut[bool](t) }

// tensorPtrs lists C handles for a call; nil entries (omitted optional inputs) stay NULL. A freed
// tensor is refused rather than passed as NULL, which C would read as "omitted".
func tensorPtrs(tensors []*Tensor) ([]*C.sc_tensor, error) {
	out := make([]*C.sc_tensor, len(tensors))
	for i, t := range tensors {
		if t == nil {
			continue
		}
		if t.p == nil {
			return nil, argError("input %d is a freed tensor", i)
		}
		out[i] = t.p
	}
	return out, nil
}

// wrapTensors takes ownership of the tensors the library wrote into out.
func wrapTensors(out []*C.sc_tensor) []*Tensor {
	tensors := make([]*Tensor, len(out))
	for i, p := range out {
		if p != nil {
			tensors[i] = wrapTensor(p)
		}
	}
	return tensors
}
