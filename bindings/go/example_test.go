package simplecpp_test

import (
	"fmt"

	"simplecpp"
)

// The example of docs/API.md ("Go"), kept compiling and running here.
func Example() {
	b, err := simplecpp.NewGraphBuilder(0) // ai.onnx at the default opset
	if err != nil {
		panic(err)
	}
	defer b.Free()
	if err := b.AddInput("x", simplecpp.Float32, []int64{-1, 4}, []string{"batch", ""}); err != nil {
		panic(err)
	}
	y, err := b.AddNode("", "Softmax", "", []string{"x"}, simplecpp.NewAttributes().SetInt("axis", 1), 1)
	if err != nil {
		panic(err)
	}
	if err := b.AddOutput(y[0]); err != nil {
		panic(err)
	}
	model, err := b.Build() // or simplecpp.Load("model.onnx")
	if err != nil {
		panic(err)
	}
	defer model.Close()
	session, err := simplecpp.NewSession(model, 0)
	if err != nil {
		panic(err)
	}
	defer session.Close()
	x, _ := simplecpp.NewTensor([]float32{1, 2, 3, 4}, []int64{1, 4})
	defer x.Free()
	outs, err := session.Run(map[string]*simplecpp.Tensor{"x": x})
	if err != nil {
		panic(err)
	}
	probs, _ := outs[y[0]].Float32s()
	outs[y[0]].Free()
	fmt.Printf("%.3f\n", probs)
	// Output: [0.032 0.087 0.237 0.644]
}
