package simplecpp

/*
#include <stdlib.h>
#include <simplecpp/simplecpp_c.h>
*/
import "C"

import (
	"runtime"
	"sync"
	"unsafe"
)

// Model is a loaded, immutable model; it may be shared by any number of sessions and goroutines.
type Model struct {
	p *C.sc_model
}

// ValueInfo describes a model input or output as the model declares it.
type ValueInfo struct {
	Name string
	// Kind is ValueTensor, ValueSequence or ValueOptional.
	Kind int32
	// DType is the element type (for a sequence or optional, its elements'); Undefined when the
	// model does not declare it.
	DType DType
	// Dims is nil when the model declares no shape; -1 marks an unknown or symbolic dim.
	Dims []int64
	// DimNames has one entry per dim: the symbolic name, or "" for a number or unnamed dim.
	DimNames []string
}

// Kinds of model values (ValueInfo.Kind).
const (
	ValueTensor   = C.SC_VALUE_TENSOR
	ValueSequence = C.SC_VALUE_SEQUENCE
	ValueOptional = C.SC_VALUE_OPTIONAL
)

func wrapModel(p *C.sc_model) *Model {
	m := &Model{p: p}
	runtime.SetFinalizer(m, (*Model).Close)
	return m
}

// Load reads an ONNX model file.
func Load(path string) (*Model, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var p *C.sc_model
	if err := statusError(C.sc_model_load(cpath, &p)); err != nil {
		return nil, err
	}
	return wrapModel(p), nil
}

// LoadBytes reads an ONNX model from memory (the bytes are not kept).
func LoadBytes(data []byte) (*Model, error) {
	var ptr unsafe.Pointer
	if len(data) > 0 {
		ptr = unsafe.Pointer(&data[0])
	}
	var p *C.sc_model
	err := statusError(C.sc_model_load_bytes(ptr, C.size_t(len(data)), &p))
	runtime.KeepAlive(data)
	if err != nil {
		return nil, err
	}
	return wrapModel(p), nil
}

// Close releases the model; sessions made from it keep working (they hold their own reference).
func (m *Model) Close() {
	if m == nil || m.p == nil {
		return
	}
	C.sc_model_free(m.p)
	m.p = nil
	runtime.SetFinalizer(m, nil)
}

// Inputs describes the model's inputs in declaration order.
func (m *Model) Inputs() ([]ValueInfo, error) { return m.describe(true) }

// Outputs describes the model's outputs in declaration order.
func (m *Model) Outputs() ([]ValueInfo, error) { return m.describe(false) }

func (m *Model) describe(inputs bool) ([]ValueInfo, error) {
	if m == nil || m.p == nil {
		return nil, argError("model is closed")
	}
	defer runtime.KeepAlive(m)
	var count C.int64_t
	var err error
	if inputs {
		err = statusError(C.sc_model_input_count(m.p, &count))
	} else {
		err = statusError(C.sc_model_output_count(m.p, &count))
	}
	if err != nil {
		return nil, err
	}
	infos := make([]ValueInfo, int(count))
	for i := range infos {
		if infos[i], err = m.describeOne(inputs, C.int64_t(i)); err != nil {
			return nil, err
		}
	}
	return infos, nil
}

// describeOne reads one input or output; the two families of C accessors take the same arguments.
func (m *Model) describeOne(input bool, index C.int64_t) (ValueInfo, error) {
	var info ValueInfo
	var name *C.char
	var kind, dtype C.int32_t
	var rank C.int64_t
	var err error
	if input {
		err = statusError(C.sc_model_input_name(m.p, index, &name))
	} else {
		err = statusError(C.sc_model_output_name(m.p, index, &name))
	}
	if err != nil {
		return info, err
	}
	if input {
		err = statusError(C.sc_model_input_type(m.p, index, &kind, &dtype, &rank))
	} else {
		err = statusError(C.sc_model_output_type(m.p, index, &kind, &dtype, &rank))
	}
	if err != nil {
		return info, err
	}
	info.Name, info.Kind, info.DType = C.GoString(name), int32(kind), DType(dtype)
	if rank < 0 {
		return info, nil
	}
	info.Dims = make([]int64, int(rank))
	if input {
		err = statusError(C.sc_model_input_dims(m.p, index, dimsPtr(info.Dims), rank))
	} else {
		err = statusError(C.sc_model_output_dims(m.p, index, dimsPtr(info.Dims), rank))
	}
	if err != nil {
		return info, err
	}
	info.DimNames = make([]string, int(rank))
	for d := range info.DimNames {
		var dimName *C.char
		if input {
			err = statusError(C.sc_model_input_dim_name(m.p, index, C.int64_t(d), &dimName))
		} else {
			err = statusError(C.sc_model_output_dim_name(m.p, index, C.int64_t(d), &dimName))
		}
		if err != nil {
			return info, err
		}
		info.DimNames[d] = C.GoString(dimName)
	}
	return info, nil
}

// Session runs a model. It owns scratch memory and prepared kernels, so it runs one call at a
// time: concurrent Run calls on one Session wait for each other (use a Session per goroutine to
// run in parallel).
type Session struct {
	mu      sync.Mutex
	p       *C.sc_session
	outputs []string
}

// NewSession prepares model for running; threads 0 means one per core, 1 runs on the caller.
func NewSession(model *Model, threads int) (*Session, error) {
	if model == nil || model.p == nil {
		return nil, argError("model is closed")
	}
	outs, err := model.Outputs()
	if err != nil {
		return nil, err
	}
	var p *C.sc_session
	err = statusError(C.sc_session_create(model.p, C.int32_t(threads), &p))
	runtime.KeepAlive(model)
	if err != nil {
		return nil, err
	}
	s := &Session{p: p, outputs: make([]string, len(outs))}
	for i, o := range outs {
		s.outputs[i] = o.Name
	}
	runtime.SetFinalizer(s, (*Session).Close)
	return s, nil
}

// Close releases the session; later calls are no-ops.
func (s *Session) Close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p == nil {
		return
	}
	C.sc_session_free(s.p)
	s.p = nil
	runtime.SetFinalizer(s, nil)
}

// Run runs the model on inputs (by input name) and returns every model output by name, as new
// tensors for the caller to free.
func (s *Session) Run(inputs map[string]*Tensor) (map[string]*Tensor, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p == nil {
		return nil, argError("session is closed")
	}
	names := make([]string, 0, len(inputs))
	values := make([]*Tensor, 0, len(inputs))
	for name, t := range inputs {
		if t == nil || t.p == nil {
			return nil, argError("input '%s' is nil or a freed tensor", name)
		}
		names = append(names, name)
		values = append(values, t)
	}
	ptrs, err := tensorPtrs(values)
	if err != nil {
		return nil, err
	}
	cin := newCStrings(names)
	defer cin.free()
	cout := newCStrings(s.outputs)
	defer cout.free()
	out := make([]*C.sc_tensor, len(s.outputs))
	var inPtr **C.sc_tensor
	if len(ptrs) > 0 {
		inPtr = &ptrs[0]
	}
	var outPtr **C.sc_tensor
	if len(out) > 0 {
		outPtr = &out[0]
	}
	err = statusError(C.sc_session_run(s.p, cin.ptr(), inPtr, C.int64_t(len(ptrs)), cout.ptr(),
		C.int64_t(len(out)), outPtr))
	runtime.KeepAlive(values)
	if err != nil {
		return nil, err
	}
	result := make(map[string]*Tensor, len(out))
	for i, t := range wrapTensors(out) {
		result[s.outputs[i]] = t
	}
	return result, nil
}
