"""bindings/python/simplecpp.py against NumPy: single-op models written here (an ONNX encoder of a
few lines), the model description, errors, threads, and a built-in model against the CLI's own
outputs for the same input. Run by ctest (python_binding) with SIMPLECPP_LIB and SIMPLECPP_CLI
set; exits non-zero on the first failure."""
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "bindings", "python"))
import simplecpp  # noqa: E402


# ---- a minimal protobuf / ONNX writer ----
def _varint(v):
    out = bytearray()
    v &= (1 << 64) - 1
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def _field(num, payload):  # length-delimited
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def _int_field(num, v):
    return _varint(num << 3) + _varint(v)


def _value_info(name, elem_type, dims):
    shape = b"".join(_field(1, _field(2, d.encode()) if isinstance(d, str) else _int_field(1, d))
                     for d in dims)
    tensor_type = _int_field(1, elem_type) + _field(2, shape)
    return _field(1, name.encode()) + _field(2, _field(1, tensor_type))


def _attr_int(name, v):
    return _field(1, name.encode()) + _int_field(3, v) + _int_field(20, 2)  # type INT


def _model(op, inputs, outputs, attrs=b"", opset=17, initializers=b""):
    """inputs / outputs: [(name, elem_type, dims)]; one node op(inputs) -> outputs."""
    node = b"".join(_field(1, n.encode()) for n, _, _ in inputs)
    node += b"".join(_field(2, n.encode()) for n, _, _ in outputs)
    node += _field(4, op.encode()) + attrs
    graph = _field(1, node) + _field(2, b"g") + initializers
    graph += b"".join(_field(11, _value_info(*v)) for v in inputs)
    graph += b"".join(_field(12, _value_info(*v)) for v in outputs)
    opset_id = _field(1, b"") + _int_field(2, opset)
    return _int_field(1, 8) + _field(7, graph) + _field(8, opset_id)


failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)


rng = np.random.default_rng(7)

# Add with broadcasting, symbolic batch dim in the declared input.
m = simplecpp.load_bytes(_model("Add", [("x", 1, ["batch", 3]), ("y", 1, [3])], [("z", 1, ["batch", 3])]))
check([v.name for v in m.inputs] == ["x", "y"], "input names")
check(m.inputs[0].dims == [-1, 3] and m.inputs[0].dim_names == ["batch", ""], "symbolic dims")
check(m.inputs[0].dtype is np.float32 and m.inputs[0].kind == "tensor", "input dtype")
x = rng.standard_normal((5, 3), dtype=np.float32)
y = rng.standard_normal(3, dtype=np.float32)
check(np.array_equal(m.run({"x": x, "y": y})["z"], x + y), "Add == numpy")

# Relu: float32, empty, one element, an odd size.
m = simplecpp.load_bytes(_model("Relu", [("x", 1, ["n"])], [("y", 1, ["n"])]))
for n in (0, 1, 1001):
    x = rng.standard_normal(n, dtype=np.float32)
    check(np.array_equal(m.run({"x": x})["y"], np.maximum(x, 0)), "Relu n=%d" % n)

# MatMul float64 and int32 (exact), several threads give the same bits.
for elem, dt in ((11, np.float64), (6, np.int32)):
    m = simplecpp.load_bytes(_model("MatMul", [("a", elem, [4, 7]), ("b", elem, [7, 5])],
                                    [("c", elem, [4, 5])]))
    a = (rng.standard_normal((4, 7)) * 10).astype(dt)
    b = (rng.standard_normal((7, 5)) * 10).astype(dt)
    got = m.run({"a": a, "b": b})["c"]
    want = a @ b
    check(got.dtype == dt and np.allclose(got, want, rtol=1e-12, atol=0), "MatMul %s" % dt)
    check(np.array_equal(m.session(threads=3).run({"a": a, "b": b})["c"], got), "threads")

# Softmax along axis 1.
m = simplecpp.load_bytes(_model("Softmax", [("x", 1, [2, 9])], [("y", 1, [2, 9])],
                                attrs=_field(5, _attr_int("axis", 1))))
x = rng.standard_normal((2, 9), dtype=np.float32)
e = np.exp(x - x.max(axis=1, keepdims=True))
check(np.allclose(m.run({"x": x})["y"], e / e.sum(axis=1, keepdims=True), rtol=1e-6, atol=1e-7),
      "Softmax")

# MatMulInteger with a per-column zero point of b (uint8 x int8 -> int32), exact.
m = simplecpp.load_bytes(_model("MatMulInteger",
                                [("a", 2, [3, 6]), ("b", 3, [6, 4]), ("az", 2, []), ("bz", 3, [4])],
                                [("y", 6, [3, 4])]))
a = rng.integers(0, 256, (3, 6), dtype=np.uint8)
b = rng.integers(-128, 128, (6, 4), dtype=np.int8)
az = np.array(131, np.uint8)
bz = np.array([-3, 0, 5, 127], np.int8)
want = (a.astype(np.int32) - 131) @ (b.astype(np.int32) - bz.astype(np.int32))
check(np.array_equal(m.run({"a": a, "b": b, "az": az, "bz": bz})["y"], want), "MatMulInteger")

# Errors carry the C API's code and a message.
try:
    m.run({"a": a})
    check(False, "missing input raises")
except simplecpp.Error as e:
    check(e.code == 1 and "b" in str(e), "missing input: code 1, names it (%s)" % e)
try:
    simplecpp.load_bytes(b"not a model")
    check(False, "bad bytes raise")
except simplecpp.Error as e:
    check(e.code == 2, "bad bytes: SC_ERR_INVALID_MODEL (%d: %s)" % (e.code, e))

# run_op against NumPy.
x = rng.standard_normal((3, 5)).astype(np.float32)
y, = simplecpp.run_op("Softmax", [x], {"axis": 1}, opset=13)
e = np.exp(x - x.max(axis=1, keepdims=True))
check(np.allclose(y, e / e.sum(axis=1, keepdims=True), rtol=1e-6, atol=1e-7), "run_op Softmax")
y, = simplecpp.run_op("Transpose", [x], {"perm": [1, 0]})
check(np.array_equal(y, x.T), "run_op Transpose")
parts = simplecpp.run_op("Split", [x], {"axis": 1}, num_outputs=5, opset=13)
check(len(parts) == 5 and all(np.array_equal(p, x[:, i:i + 1]) for i, p in enumerate(parts)),
      "run_op Split: five outputs")
y, = simplecpp.run_op("Clip", [x, None, np.float32(0.5)], opset=13)
check(np.array_equal(y, np.minimum(x, np.float32(0.5))), "run_op Clip with an omitted input")
a = rng.integers(0, 256, (4, 6), dtype=np.uint8)
b = rng.integers(-128, 128, (6, 3), dtype=np.int8)
b_zp = np.array([1, -3, 7], np.int8)
y, = simplecpp.run_op("MatMulInteger", [a, b, np.uint8(128), b_zp], opset=10)
want = (a.astype(np.int32) - 128) @ (b.astype(np.int32) - b_zp.astype(np.int32))
check(y.dtype == np.int32 and np.array_equal(y, want), "run_op MatMulInteger, per-column b zero point")
try:
    simplecpp.run_op("NoSuchOp", [x])
    check(False, "unknown op raises")
except simplecpp.Error as err:
    check(err.code == 3 and "NoSuchOp" in str(err), "unknown op: SC_ERR_UNSUPPORTED (%s)" % err)

# The graph builder: inferred types, build, run, export and reload.
gb = simplecpp.GraphBuilder(opset=17)
xin = gb.add_input("x", np.float32, ["batch", 5])
w_arr = rng.standard_normal((5, 2)).astype(np.float32)
w = gb.add_initializer("w", w_arr)
mm, = gb.add_node("MatMul", [xin, w])
out, = gb.add_node("Relu", [mm], name="relu")
check(gb.value_type(out) == (np.float32, [-1, 2]), "builder value_type: %s" % (gb.value_type(out),))
gb.add_output(out)
try:
    gb.add_node("Softmax", [xin], {"axis": 1.5})
    check(False, "float axis raises")
except simplecpp.Error as err:
    check("Softmax" in str(err) and "axis" in str(err), "builder: wrong attribute type named (%s)" % err)
got = gb.build().run({"x": x})[out]
check(np.allclose(got, np.maximum(x @ w_arr, 0), rtol=1e-5, atol=1e-6), "builder: MatMul + Relu vs NumPy")
reloaded = simplecpp.load_bytes(gb.to_onnx()).run({"x": x})[out]
check(np.array_equal(got, reloaded), "builder: build() == load_bytes(to_onnx())")
check(got.shape == (3, 2) and (got >= 0).all(), "builder: output shape and Relu")

# A built-in model: the same input through the CLI and through Python, same bits.
cli = os.environ.get("SIMPLECPP_CLI")
if cli:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "cnn.onnx")
        subprocess.run([cli, "export-builtin", "cnn", path], check=True, stdout=subprocess.DEVNULL)
        m = simplecpp.load(path)
        inp = m.inputs[0]
        x = rng.standard_normal(inp.dims, dtype=np.float32)
        np.save(os.path.join(tmp, "x.npy"), x)
        subprocess.run([cli, "run", path, "--input", "%s=%s" % (inp.name, os.path.join(tmp, "x.npy")),
                        "--output-dir", tmp], check=True, stdout=subprocess.DEVNULL)
        want = np.load(os.path.join(tmp, "output_0.npy"))
        got = m.run({inp.name: x})[m.outputs[0].name]
        check(np.array_equal(got, want), "builtin cnn: Python == CLI")
    # Greedy decoding: the same tokens as the CLI's generate (--tokens: steps after the prefill).
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "llama.onnx")
        subprocess.run([cli, "export-builtin", "llama-tiny-msft", path], check=True,
                       stdout=subprocess.DEVNULL)
        out = subprocess.run([cli, "generate", path, "--prompt", "5,17,3", "--tokens", "4"],
                             check=True, stdout=subprocess.PIPE, text=True).stdout
        want = [int(t) for t in out.split("generated:")[1].split()[0].split(",")]
        decoder = simplecpp.load(path).decoder()
        tokens, prefill_ms, decode_ms = decoder.generate([5, 17, 3], max_tokens=5)
        check(tokens == want, "decoder: Python tokens %s == CLI %s" % (tokens, want))
        check(prefill_ms > 0 and decode_ms > 0, "decoder: timings")
        stopped, _, _ = decoder.generate([5, 17, 3], max_tokens=5, stop_token=want[0])
        check(stopped == want[:1], "decoder: stop_token ends generation")
        try:
            decoder.generate([decoder.vocab_size])
            check(False, "decoder: a token outside the vocabulary raises")
        except simplecpp.Error as e:
            check(e.code == 1 and "outside the vocabulary" in str(e), "decoder: error %s" % e)
else:
    print("SIMPLECPP_CLI not set: the built-in model checks are skipped")

print("python binding: %d failure(s)" % failures)
sys.exit(1 if failures else 0)
