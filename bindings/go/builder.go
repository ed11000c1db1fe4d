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

// GraphBuilder builds a graph in code. Each value's dtype is known as soon as its node is added,
// and its dims when they follow from known dims (ValueType, ValueDims). A failed call returns an
// *Error naming the node and op and leaves the builder as it was. Free it when done; models built
// from it do not need it.
type GraphBuilder struct {
	p *C.sc_graph_builder
}

func wrapBuilder(p *C.sc_graph_builder) *GraphBuilder {
	b := &GraphBuilder{p: p}
	runtime.SetFinalizer(b, (*GraphBuilder).Free)
	return b
}

// NewGraphBuilder imports ai.onnx at opset (0: the library's default).
func NewGraphBuilder(opset int64) (*GraphBuilder, error) {
	var p *C.sc_graph_builder
	if err := statusError(C.sc_builder_create(C.int64_t(opset), &p)); err != nil {
		return nil, err
	}
	return wrapBuilder(p), nil
}

// NewSubgraph is a builder for an If/Loop/Scan body that sees b's values; pass it to
// Attributes.SetGraph.
func (b *GraphBuilder) NewSubgraph(graphName string) (*GraphBuilder, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	cname := C.CString(graphName)
	defer C.free(unsafe.Pointer(cname))
	var p *C.sc_graph_builder
	err := statusError(C.sc_builder_create_subgraph(b.p, cname, &p))
	runtime.KeepAlive(b)
	if err != nil {
		return nil, err
	}
	return wrapBuilder(p), nil
}

// Free releases the builder; later calls are no-ops.
func (b *GraphBuilder) Free() {
	if b == nil || b.p == nil {
		return
	}
	C.sc_builder_free(b.p)
	b.p = nil
	runtime.SetFinalizer(b, nil)
}

func (b *GraphBuilder) check() error {
	if b == nil || b.p == nil {
		return argError("graph builder is freed")
	}
	return nil
}

// ImportOpset imports another domain ("com.microsoft", 1).
func (b *GraphBuilder) ImportOpset(domain string, version int64) error {
	if err := b.check(); err != nil {
		return err
	}
	cdomain := C.CString(domain)
	defer C.free(unsafe.Pointer(cdomain))
	err := statusError(C.sc_builder_import_opset(b.p, cdomain, C.int64_t(version)))
	runtime.KeepAlive(b)
	return err
}

// AddInput adds a graph input of shape dims (-1 for an unknown dim; no dims is a scalar).
// dimNames is nil, or one name per dim ("" for an unnamed dim).
func (b *GraphBuilder) AddInput(name string, dtype DType, dims []int64, dimNames []string) error {
	if err := b.check(); err != nil {
		return err
	}
	if dimNames != nil && len(dimNames) != len(dims) {
		return argError("input '%s': %d dim names for %d dims", name, len(dimNames), len(dims))
	}
	return b.addInput(name, dtype, dims, int64(len(dims)), dimNames)
}

// AddInputUnranked adds a graph input whose rank is unknown.
func (b *GraphBuilder) AddInputUnranked(name string, dtype DType) error {
	if err := b.check(); err != nil {
		return err
	}
	return b.addInput(name, dtype, nil, -1, nil)
}

func (b *GraphBuilder) addInput(name string, dtype DType, dims []int64, rank int64,
	dimNames []string) error {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var cnames cStrings
	if dimNames != nil {
		cnames = newCStrings(dimNames)
		defer cnames.free()
	}
	err := statusError(C.sc_builder_add_input(b.p, cname, C.int32_t(dtype), dimsPtr(dims),
		C.int64_t(rank), cnames.ptr()))
	runtime.KeepAlive(b)
	return err
}

// AddInitializer adds a constant weight, copied from value (which may be freed afterwards).
func (b *GraphBuilder) AddInitializer(name string, value *Tensor) error {
	if err := b.check(); err != nil {
		return err
	}
	if value == nil || value.p == nil {
		return argError("initializer '%s': the tensor is nil or freed", name)
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	err := statusError(C.sc_builder_add_initializer(b.p, cname, value.p))
	runtime.KeepAlive(b)
	runtime.KeepAlive(value)
	return err
}

// AddNode adds a node and returns its numOutputs output names. domain "" is ai.onnx; name ""
// lets the builder name the node; inputs are value names ("" for an omitted optional input);
// attrs may be nil.
func (b *GraphBuilder) AddNode(domain, op, name string, inputs []string, attrs *Attributes,
	numOutputs int) ([]string, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	if numOutputs < 0 {
		return nil, argError("%s: numOutputs %d is negative", op, numOutputs)
	}
	cattrs, err := attrs.toC()
	if err != nil {
		return nil, err
	}
	defer freeAttributes(cattrs)
	var cdomain *C.char // NULL: ai.onnx
	if domain != "" {
		cdomain = C.CString(domain)
		defer C.free(unsafe.Pointer(cdomain))
	}
	cop := C.CString(op)
	defer C.free(unsafe.Pointer(cop))
	var cname *C.char // NULL: a generated name
	if name != "" {
		cname = C.CString(name)
		defer C.free(unsafe.Pointer(cname))
	}
	cinputs := newCStrings(inputs)
	defer cinputs.free()
	outNames := make([]*C.char, numOutputs)
	var outPtr **C.char
	if numOutputs > 0 {
		outPtr = &outNames[0]
	}
	err = statusError(C.sc_builder_add_node(b.p, cdomain, cop, cname, cinputs.ptr(),
		C.int64_t(len(inputs)), cattrs, C.int64_t(numOutputs), outPtr))
	if err != nil {
		return nil, err
	}
	// The names live in the builder: copy them before it can go away.
	names := make([]string, numOutputs)
	for i, p := range outNames {
		if p != nil {
			names[i] = C.GoString(p)
		}
	}
	runtime.KeepAlive(b)
	return names, nil
}

// AddOutput marks a value as a graph output (outputs keep the order of these calls).
func (b *GraphBuilder) AddOutput(valueName string) error {
	if err := b.check(); err != nil {
		return err
	}
	cname := C.CString(valueName)
	defer C.free(unsafe.Pointer(cname))
	err := statusError(C.sc_builder_add_output(b.p, cname))
	runtime.KeepAlive(b)
	return err
}

// ValueType is what is known of a value's type: its dtype and rank (-1 when unknown).
func (b *GraphBuilder) ValueType(valueName string) (DType, int64, error) {
	if err := b.check(); err != nil {
		return Undefined, -1, err
	}
	cname := C.CString(valueName)
	defer C.free(unsafe.Pointer(cname))
	var dtype C.int32_t
	var rank C.int64_t
	err := statusError(C.sc_builder_value_type(b.p, cname, &dtype, &rank))
	runtime.KeepAlive(b)
	if err != nil {
		return Undefined, -1, err
	}
	return DType(dtype), int64(rank), nil
}

// ValueDims is what is known of a value's dims: -1 for an unknown dim, nil when the rank is
// unknown.
func (b *GraphBuilder) ValueDims(valueName string) ([]int64, error) {
	_, rank, err := b.ValueType(valueName)
	if err != nil || rank < 0 {
		return nil, err
	}
	cname := C.CString(valueName)
	defer C.free(unsafe.Pointer(cname))
	dims := make([]int64, int(rank))
	err = statusError(C.sc_builder_value_dims(b.p, cname, dimsPtr(dims), C.int64_t(rank)))
	runtime.KeepAlive(b)
	if err != nil {
		return nil, err
	}
	return dims, nil
}

// Build makes the model: the same one Load gives for the graph. The builder may go on afterwards.
func (b *GraphBuilder) Build() (*Model, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	var p *C.sc_model
	err := statusError(C.sc_builder_build(b.p, nil, &p))
	runtime.KeepAlive(b)
	if err != nil {
		return nil, err
	}
	return wrapModel(p), nil
}

// ToONNX is the graph as ONNX ModelProto bytes.
func (b *GraphBuilder) ToONNX() ([]byte, error) {
	if err := b.check(); err != nil {
		return nil, err
	}
	var data unsafe.Pointer
	var size C.size_t
	err := statusError(C.sc_builder_to_onnx(b.p, &data, &size))
	runtime.KeepAlive(b)
	if err != nil {
		return nil, err
	}
	defer C.sc_buffer_free(data)
	// Copied through a slice view rather than C.GoBytes, whose C.int length caps it at 2 GiB.
	out := make([]byte, int(size))
	if size > 0 {
		copy(out, unsafe.Slice((*byte)(data), int(size)))
	}
	return out, nil
}

// SaveONNX writes the graph as an ONNX file.
func (b *GraphBuilder) SaveONNX(path string) error {
	if err := b.check(); err != nil {
		return err
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	err := statusError(C.sc_builder_save_onnx(b.p, cpath))
	runtime.KeepAlive(b)
	return err
}
