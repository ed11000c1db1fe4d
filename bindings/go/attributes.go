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

// Attributes are a node's attributes for GraphBuilder.AddNode and RunOp. They are plain Go values
// (nothing to free) turned into C attributes on each call that uses them; the setters chain:
//
//	attrs := simplecpp.NewAttributes().SetInts("pads", 1, 1, 1, 1).SetInt("group", 1)
//
// Setting a name again replaces its value. A value of the wrong type for the op is reported by
// the call that uses the attributes, naming the node and op.
type Attributes struct {
	items []attribute
}

type attribute struct {
	name string
	// set copies the value into C attributes.
	set func(a *C.sc_attributes, name *C.char) *C.sc_status
	// keep is what must stay alive while set runs (a tensor, a subgraph builder).
	keep interface{}
}

// NewAttributes is an empty attribute list.
func NewAttributes() *Attributes { return &Attributes{} }

func (a *Attributes) put(name string, keep interface{},
	set func(*C.sc_attributes, *C.char) *C.sc_status) *Attributes {
	item := attribute{name: name, set: set, keep: keep}
	for i := range a.items {
		if a.items[i].name == name {
			a.items[i] = item
			return a
		}
	}
	a.items = append(a.items, item)
	return a
}

// SetInt sets an int attribute.
func (a *Attributes) SetInt(name string, value int64) *Attributes {
	return a.put(name, nil, func(c *C.sc_attributes, n *C.char) *C.sc_status {
		return C.sc_attributes_set_int(c, n, C.int64_t(value))
	})
}

// SetFloat sets a float attribute.
func (a *Attributes) SetFloat(name string, value float32) *Attributes {
	return a.put(name, nil, func(c *C.sc_attributes, n *C.char) *C.sc_status {
		return C.sc_attributes_set_float(c, n, C.float(value))
	})
}

// SetString sets a string attribute.
func (a *Attributes) SetString(name string, value string) *Attributes {
	return a.put(name, nil, func(c *C.sc_attributes, n *C.char) *C.sc_status {
		cv := C.CString(value)
		defer C.free(unsafe.Pointer(cv))
		return C.sc_attributes_set_string(c, n, cv)
	})
}

// SetInts sets an ints attribute (the values are copied now).
func (a *Attributes) SetInts(name string, values ...int64) *Attributes {
	values = append([]int64(nil), values...)
	return a.put(name, nil, func(c *C.sc_attributes, n *C.char) *C.sc_status {
		return C.sc_attributes_set_ints(c, n, dimsPtr(values), C.int64_t(len(values)))
	})
}

// SetFloats sets a floats attribute (the values are copied now).
func (a *Attributes) SetFloats(name string, values ...float32) *Attributes {
	values = append([]float32(nil), values...)
	return a.put(name, nil, func(c *C.sc_attributes, n *C.char) *C.sc_status {
		var p *C.float
		if len(values) > 0 {
			p = (*C.float)(unsafe.Pointer(&values[0]))
		}
		return C.sc_attributes_set_floats(c, n, p, C.int64_t(len(values)))
	})
}

// SetStrings sets a strings attribute (the values are copied now).
func (a *Attributes) SetStrings(name string, values ...string) *Attributes {
	values = append([]string(nil), values...)
	return a.put(name, nil, func(c *C.sc_attributes, n *C.char) *C.sc_status {
		cv := newCStrings(values)
		defer cv.free()
		return C.sc_attributes_set_strings(c, n, cv.ptr(), C.int64_t(len(values)))
	})
}

// SetTensor sets a tensor attribute. The tensor is read when the attributes are used, so it must
// not be freed before then.
func (a *Attributes) SetTensor(name string, value *Tensor) *Attributes {
	return a.put(name, value, func(c *C.sc_attributes, n *C.char) *C.sc_status {
		if value == nil || value.p == nil {
			return nil // reported by toC
		}
		return C.sc_attributes_set_tensor(c, n, value.p)
	})
}

// SetGraph sets a graph attribute (an If/Loop/Scan body) to what body has built when the
// attributes are used; body comes from GraphBuilder.NewSubgraph and must not be freed before then.
func (a *Attributes) SetGraph(name string, body *GraphBuilder) *Attributes {
	return a.put(name, body, func(c *C.sc_attributes, n *C.char) *C.sc_status {
		if body == nil || body.p == nil {
			return nil // reported by toC
		}
		return C.sc_attributes_set_graph(c, n, body.p)
	})
}

// toC builds C attributes for one call (NULL for none); the caller frees them with
// freeAttributes.
func (a *Attributes) toC() (*C.sc_attributes, error) {
	if a == nil || len(a.items) == 0 {
		return nil, nil
	}
	for _, item := range a.items {
		switch v := item.keep.(type) {
		case *Tensor:
			if v == nil || v.p == nil {
				return nil, argError("attribute '%s': the tensor is nil or freed", item.name)
			}
		case *GraphBuilder:
			if v == nil || v.p == nil {
				return nil, argError("attribute '%s': the graph builder is nil or freed", item.name)
			}
		}
	}
	var c *C.sc_attributes
	if err := statusError(C.sc_attributes_create(&c)); err != nil {
		return nil, err
	}
	for _, item := range a.items {
		name := C.CString(item.name)
		err := statusError(item.set(c, name))
		C.free(unsafe.Pointer(name))
		runtime.KeepAlive(item.keep)
		if err != nil {
			C.sc_attributes_free(c)
			return nil, err
		}
	}
	return c, nil
}

func freeAttributes(c *C.sc_attributes) {
	if c != nil {
		C.sc_attributes_free(c)
	}
}
