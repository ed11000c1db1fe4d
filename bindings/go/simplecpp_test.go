package simplecpp

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// lcg gives reproducible test data that covers each type's whole range.
type lcg uint32

func (r *lcg) next() uint32 {
	*r = *r*1664525 + 1013904223
	return uint32(*r >> 8)
}

func randomUint8(r *lcg, n int) []uint8 {
	out := make([]uint8, n)
	for i := range out {
		out[i] = uint8(r.next())
	}
	return out
}

func randomInt8(r *lcg, n int) []int8 {
	out := make([]int8, n)
	for i := range out {
		out[i] = int8(r.next())
	}
	return out
}

func mustTensor[T Element](t *testing.T, data []T, dims []int64) *Tensor {
	t.Helper()
	tensor, err := NewTensor(data, dims)
	if err != nil {
		t.Fatalf("NewTensor(%v): %v", dims, err)
	}
	return tensor
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// checkInt32 compares a result tensor with the reference, element by element.
func checkInt32(t *testing.T, what string, got *Tensor, wantDims []int64, want []int32) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s: no output", what)
	}
	if !reflect.DeepEqual(got.Dims(), wantDims) {
		t.Fatalf("%s: dims %v, want %v", what, got.Dims(), wantDims)
	}
	values, err := got.Int32s()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for i := range want {
		if values[i] != want[i] {
			t.Fatalf("%s: element %d is %d, want %d", what, i, values[i], want[i])
		}
	}
}

// The ConvInteger case: uint8 x [1,C,H,W], int8 w [M,C,KH,KW], scalar x zero point, one w zero
// point per output channel, asymmetric pads and a row stride.
const (
	convC, convH, convW         = 2, 5, 6
	convM, convKH, convKW       = 3, 3, 2
	convStrideH, convStrideW    = 2, 1
	convPadTop, convPadLeft     = 1, 0
	convPadBottom, convPadRight = 1, 1
	convOutH                    = (convH+convPadTop+convPadBottom-convKH)/convStrideH + 1
	convOutW                    = (convW+convPadLeft+convPadRight-convKW)/convStrideW + 1
)

type convCase struct {
	x   []uint8
	w   []int8
	xzp uint8
	wzp []int8
}

func newConvCase() convCase {
	r := lcg(7)
	return convCase{
		x:   randomUint8(&r, convC*convH*convW),
		w:   randomInt8(&r, convM*convC*convKH*convKW),
		xzp: 131,
		wzp: []int8{-3, 5, 17},
	}
}

func (c convCase) attrs() *Attributes {
	return NewAttributes().
		SetInts("pads", convPadTop, convPadLeft, convPadBottom, convPadRight).
		SetInts("strides", convStrideH, convStrideW).
		SetInt("group", 1)
}

// reference is ConvInteger by definition: taps in the padding hold the x zero point, so they add
// nothing and are skipped.
func (c convCase) reference() []int32 {
	out := make([]int32, convM*convOutH*convOutW)
	for m := 0; m < convM; m++ {
		for oh := 0; oh < convOutH; oh++ {
			for ow := 0; ow < convOutW; ow++ {
				var acc int32
				for ch := 0; ch < convC; ch++ {
					for kh := 0; kh < convKH; kh++ {
						for kw := 0; kw < convKW; kw++ {
							ih := oh*convStrideH - convPadTop + kh
							iw := ow*convStrideW - convPadLeft + kw
							if ih < 0 || ih >= convH || iw < 0 || iw >= convW {
								continue
							}
							xv := int32(c.x[(ch*convH+ih)*convW+iw]) - int32(c.xzp)
							wv := int32(c.w[((m*convC+ch)*convKH+kh)*convKW+kw]) - int32(c.wzp[m])
							acc += xv * wv
						}
					}
				}
				out[(m*convOutH+oh)*convOutW+ow] = acc
			}
		}
	}
	return out
}

var convOutDims = []int64{1, convM, convOutH, convOutW}

// The MatMulInteger case: uint8 A [M,K], int8 B [K,N], scalar a zero point, one b zero point per
// column.
const mmM, mmK, mmN = 4, 7, 5

type matMulCase struct {
	a   []uint8
	b   []int8
	azp uint8
	bzp []int8
}

func newMatMulCase() matMulCase {
	r := lcg(11)
	return matMulCase{
		a:   randomUint8(&r, mmM*mmK),
		b:   randomInt8(&r, mmK*mmN),
		azp: 7,
		bzp: []int8{1, -9, 0, 33, -128},
	}
}

func (c matMulCase) reference() []int32 {
	out := make([]int32, mmM*mmN)
	for i := 0; i < mmM; i++ {
		for j := 0; j < mmN; j++ {
			var acc int32
			for k := 0; k < mmK; k++ {
				acc += (int32(c.a[i*mmK+k]) - int32(c.azp)) * (int32(c.b[k*mmN+j]) - int32(c.bzp[j]))
			}
			out[i*mmN+j] = acc
		}
	}
	return out
}

var mmOutDims = []int64{mmM, mmN}

// buildGraph makes one graph holding both cases: x and a are inputs, everything else is a
// constant. It returns the builder and the two output names.
func buildGraph(t *testing.T, conv convCase, mm matMulCase) (*GraphBuilder, string, string) {
	t.Helper()
	b, err := NewGraphBuilder(0)
	must(t, err)
	must(t, b.AddInput("x", Uint8, []int64{1, convC, convH, convW}, nil))
	must(t, b.AddInput("a", Uint8, []int64{mmM, mmK}, nil))
	constants := []struct {
		name  string
		value *Tensor
	}{
		{"w", mustTensor(t, conv.w, []int64{convM, convC, convKH, convKW})},
		{"x_zp", mustTensor(t, []uint8{conv.xzp}, nil)},
		{"w_zp", mustTensor(t, conv.wzp, []int64{convM})},
		{"b", mustTensor(t, mm.b, []int64{mmK, mmN})},
		{"a_zp", mustTensor(t, []uint8{mm.azp}, nil)},
		{"b_zp", mustTensor(t, mm.bzp, []int64{mmN})},
	}
	for _, c := range constants {
		must(t, b.AddInitializer(c.name, c.value))
		c.value.Free() // the builder holds a copy
	}
	convOut, err := b.AddNode("", "ConvInteger", "conv", []string{"x", "w", "x_zp", "w_zp"},
		conv.attrs(), 1)
	must(t, err)
	mmOut, err := b.AddNode("", "MatMulInteger", "", []string{"a", "b", "a_zp", "b_zp"}, nil, 1)
	must(t, err)
	must(t, b.AddOutput(convOut[0]))
	must(t, b.AddOutput(mmOut[0]))
	return b, convOut[0], mmOut[0]
}

// runModel runs a model built from buildGraph and checks both outputs against the references.
func runModel(t *testing.T, what string, model *Model, conv convCase, mm matMulCase,
	convName, mmName string) {
	t.Helper()
	session, err := NewSession(model, 1)
	must(t, err)
	defer session.Close()
	x := mustTensor(t, conv.x, []int64{1, convC, convH, convW})
	defer x.Free()
	a := mustTensor(t, mm.a, []int64{mmM, mmK})
	defer a.Free()
	outputs, err := session.Run(map[string]*Tensor{"x": x, "a": a})
	must(t, err)
	defer func() {
		for _, o := range outputs {
			o.Free()
		}
	}()
	checkInt32(t, what+" ConvInteger", outputs[convName], convOutDims, conv.reference())
	checkInt32(t, what+" MatMulInteger", outputs[mmName], mmOutDims, mm.reference())
}

func TestBuilderValueTypes(t *testing.T) {
	b, convOut, mmOut := buildGraph(t, newConvCase(), newMatMulCase())
	defer b.Free()
	for _, c := range []struct {
		name string
		dims []int64
	}{{convOut, convOutDims}, {mmOut, mmOutDims}} {
		dtype, rank, err := b.ValueType(c.name)
		must(t, err)
		if dtype != Int32 || rank != int64(len(c.dims)) {
			t.Errorf("%s: %v rank %d, want int32 rank %d", c.name, dtype, rank, len(c.dims))
		}
		dims, err := b.ValueDims(c.name)
		must(t, err)
		if !reflect.DeepEqual(dims, c.dims) {
			t.Errorf("%s: dims %v, want %v", c.name, dims, c.dims)
		}
	}
	if _, _, err := b.ValueType("no_such_value"); err == nil {
		t.Error("ValueType of an unknown name succeeded")
	}
}

func TestSessionMatchesReference(t *testing.T) {
	conv, mm := newConvCase(), newMatMulCase()
	b, convOut, mmOut := buildGraph(t, conv, mm)
	defer b.Free()
	model, err := b.Build()
	must(t, err)
	defer model.Close()
	runModel(t, "Build", model, conv, mm, convOut, mmOut)
}

func TestRunOpMatchesReference(t *testing.T) {
	conv, mm := newConvCase(), newMatMulCase()
	convInputs := []*Tensor{
		mustTensor(t, conv.x, []int64{1, convC, convH, convW}),
		mustTensor(t, conv.w, []int64{convM, convC, convKH, convKW}),
		mustTensor(t, []uint8{conv.xzp}, nil),
		mustTensor(t, conv.wzp, []int64{convM}),
	}
	mmInputs := []*Tensor{
		mustTensor(t, mm.a, []int64{mmM, mmK}),
		mustTensor(t, mm.b, []int64{mmK, mmN}),
		mustTensor(t, []uint8{mm.azp}, nil),
		mustTensor(t, mm.bzp, []int64{mmN}),
	}
	defer func() {
		for _, in := range append(convInputs, mmInputs...) {
			in.Free()
		}
	}()
	// Twice each: the second call takes the cached plan and must give the same bits.
	for round := 0; round < 2; round++ {
		y, err := RunOp("", "ConvInteger", 21, convInputs, conv.attrs(), 1)
		must(t, err)
		checkInt32(t, "RunOp ConvInteger", y[0], convOutDims, conv.reference())
		y[0].Free()
		y, err = RunOp("", "MatMulInteger", 21, mmInputs, nil, 1)
		must(t, err)
		checkInt32(t, "RunOp MatMulInteger", y[0], mmOutDims, mm.reference())
		y[0].Free()
	}
}

func TestErrorsNameTheOp(t *testing.T) {
	b, err := NewGraphBuilder(0)
	must(t, err)
	defer b.Free()
	must(t, b.AddInput("x", Float32, []int64{2, 3}, nil))

	_, err = b.AddNode("", "Relux", "", []string{"x"}, nil, 1)
	checkError(t, "unknown op", err, "Relux")

	attrs := NewAttributes().SetString("axis", "one") // Softmax's axis is an int
	_, err = b.AddNode("", "Softmax", "", []string{"x"}, attrs, 1)
	checkError(t, "wrong attribute type", err, "Softmax")

	x := mustTensor(t, []float32{1, 2, 3, 4, 5, 6}, []int64{2, 3})
	defer x.Free()
	_, err = RunOp("", "Relux", 21, []*Tensor{x}, nil, 1)
	checkError(t, "RunOp unknown op", err, "Relux")

	// A failed call leaves the builder as it was: it still builds and runs.
	y, err := b.AddNode("", "Relu", "", []string{"x"}, nil, 1)
	must(t, err)
	must(t, b.AddOutput(y[0]))
	model, err := b.Build()
	must(t, err)
	model.Close()
}

func checkError(t *testing.T, what string, err error, op string) {
	t.Helper()
	var scErr *Error
	if !errors.As(err, &scErr) {
		t.Fatalf("%s: got %v, want an *Error", what, err)
	}
	if scErr.Code == 0 || !strings.Contains(scErr.Message, op) {
		t.Errorf("%s: code %d message %q, want a code and a message naming %s", what,
			scErr.Code, scErr.Message, op)
	}
}

func TestONNXRoundTrip(t *testing.T) {
	conv, mm := newConvCase(), newMatMulCase()
	b, convOut, mmOut := buildGraph(t, conv, mm)
	defer b.Free()
	data, err := b.ToONNX()
	must(t, err)
	model, err := LoadBytes(data)
	must(t, err)
	defer model.Close()
	runModel(t, "ToONNX+LoadBytes", model, conv, mm, convOut, mmOut)
}

// A small model saved to a file and loaded back by path: its description, and a run.
func TestLoadFileAndDescribe(t *testing.T) {
	b, err := NewGraphBuilder(0)
	must(t, err)
	defer b.Free()
	must(t, b.AddInput("x", Float32, []int64{-1, 3}, []string{"batch", ""}))
	scale := mustTensor(t, []float32{0.5, -2, 4}, []int64{3})
	must(t, b.AddInitializer("scale", scale))
	scale.Free()
	y, err := b.AddNode("", "Mul", "scale_x", []string{"x", "scale"}, nil, 1)
	must(t, err)
	must(t, b.AddOutput(y[0]))
	path := filepath.Join(t.TempDir(), "mul.onnx")
	must(t, b.SaveONNX(path))

	model, err := Load(path)
	must(t, err)
	defer model.Close()
	inputs, err := model.Inputs()
	must(t, err)
	want := []ValueInfo{{Name: "x", Kind: ValueTensor, DType: Float32, Dims: []int64{-1, 3},
		DimNames: []string{"batch", ""}}}
	if !reflect.DeepEqual(inputs, want) {
		t.Errorf("Inputs() = %+v, want %+v", inputs, want)
	}
	outputs, err := model.Outputs()
	must(t, err)
	if len(outputs) != 1 || outputs[0].Name != y[0] || outputs[0].DType != Float32 {
		t.Errorf("Outputs() = %+v, want one float32 output %s", outputs, y[0])
	}

	session, err := NewSession(model, 0)
	must(t, err)
	defer session.Close()
	x := mustTensor(t, []float32{1, 2, 3, -1, -2, -3}, []int64{2, 3})
	defer x.Free()
	result, err := session.Run(map[string]*Tensor{"x": x})
	must(t, err)
	got, err := result[y[0]].Float32s()
	must(t, err)
	result[y[0]].Free()
	if wantY := []float32{0.5, -4, 12, -0.5, 4, -12}; !reflect.DeepEqual(got, wantY) {
		t.Errorf("y = %v, want %v", got, wantY)
	}
}

func TestTensorRoundTrip(t *testing.T) {
	i64 := mustTensor(t, []int64{1, -2, 3 << 40}, []int64{3})
	defer i64.Free()
	if i64.Dtype() != Int64 || !reflect.DeepEqual(i64.Dims(), []int64{3}) {
		t.Errorf("int64 tensor: %v %v", i64.Dtype(), i64.Dims())
	}
	got, err := i64.Int64s()
	must(t, err)
	if !reflect.DeepEqual(got, []int64{1, -2, 3 << 40}) {
		t.Errorf("Int64s() = %v", got)
	}
	if _, err := i64.Float32s(); err == nil {
		t.Error("Float32s() of an int64 tensor succeeded")
	}

	flags := mustTensor(t, []bool{true, false, true}, []int64{3})
	gotFlags, err := flags.Bools()
	must(t, err)
	flags.Free()
	if flags.Dtype() != Undefined || !reflect.DeepEqual(gotFlags, []bool{true, false, true}) {
		t.Errorf("bool tensor: Bools() = %v", gotFlags)
	}

	scalar := mustTensor(t, []int8{-5}, nil)
	if dims := scalar.Dims(); dims == nil || len(dims) != 0 {
		t.Errorf("scalar dims %v, want []", dims)
	}
	scalar.Free()
	scalar.Free() // a second Free is a no-op
	if _, err := scalar.Int8s(); err == nil {
		t.Error("Int8s() of a freed tensor succeeded")
	}

	_, err = NewTensor([]int32{1, 2, 3}, []int64{2, 2})
	var scErr *Error
	if !errors.As(err, &scErr) || scErr.Code != CodeInvalidArgument {
		t.Errorf("3 values for shape [2,2]: got %v, want an invalid-argument *Error", err)
	}
}

func TestLoadErrors(t *testing.T) {
	var scErr *Error
	if _, err := Load(filepath.Join(t.TempDir(), "missing.onnx")); !errors.As(err, &scErr) ||
		scErr.Code != CodeIO {
		t.Errorf("Load of a missing file: got %v, want an I/O *Error", err)
	}
	if _, err := LoadBytes([]byte("not a model")); !errors.As(err, &scErr) ||
		scErr.Code != CodeInvalidModel {
		t.Errorf("LoadBytes of garbage: got %v, want an invalid-model *Error", err)
	}
}

// An If node whose branches are subgraph builders reading the outer input: the graph attribute
// path (NewSubgraph, SetGraph).
func TestIfWithSubgraphs(t *testing.T) {
	b, err := NewGraphBuilder(0)
	must(t, err)
	defer b.Free()
	must(t, b.AddInput("cond", Bool, nil, nil))
	must(t, b.AddInput("x", Int32, []int64{3}, nil))
	branch := func(name, op string) *GraphBuilder {
		body, err := b.NewSubgraph(name)
		must(t, err)
		out, err := body.AddNode("", op, "", []string{"x"}, nil, 1)
		must(t, err)
		must(t, body.AddOutput(out[0]))
		return body
	}
	thenBody, elseBody := branch("then", "Neg"), branch("else", "Abs")
	defer thenBody.Free()
	defer elseBody.Free()
	attrs := NewAttributes().SetGraph("then_branch", thenBody).SetGraph("else_branch", elseBody)
	y, err := b.AddNode("", "If", "", []string{"cond"}, attrs, 1)
	must(t, err)
	must(t, b.AddOutput(y[0]))
	model, err := b.Build()
	must(t, err)
	defer model.Close()
	session, err := NewSession(model, 1)
	must(t, err)
	defer session.Close()
	x := mustTensor(t, []int32{-4, 0, 9}, []int64{3})
	defer x.Free()
	for _, c := range []struct {
		cond bool
		want []int32
	}{{true, []int32{4, 0, -9}}, {false, []int32{4, 0, 9}}} {
		cond := mustTensor(t, []bool{c.cond}, nil)
		out, err := session.Run(map[string]*Tensor{"cond": cond, "x": x})
		cond.Free()
		must(t, err)
		checkInt32(t, "If", out[y[0]], []int64{3}, c.want)
		out[y[0]].Free()
	}
}
