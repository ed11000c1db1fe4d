"""simplecpp from Python: ctypes over the C API (libsimplecpp_c.so) and NumPy arrays in and out.

    import numpy as np
    import simplecpp
    model = simplecpp.load("model.onnx")            # or simplecpp.load_bytes(data)
    print(model.inputs)                               # [ValueInfo(name, dtype, dims, dim_names)]
    outputs = model.run({"x": np.zeros((1, 3, 32, 32), np.float32)})   # {name: ndarray}

    y, = simplecpp.run_op("Softmax", [np.ones((2, 3), np.float32)], {"axis": 1})  # one node

    b = simplecpp.GraphBuilder(opset=17)                 # a graph built in code
    x = b.add_input("x", np.float32, [None, 4])          # None: unknown dim
    y, = b.add_node("Relu", [x])
    b.add_output(y)
    b.value_type(y)                                      # (np.float32, [-1, 4])
    model = b.build()                                    # b.to_onnx() gives the ONNX bytes

No build step: the library is found through $SIMPLECPP_LIB, next to a build tree of this
repository (build/lib), or on the loader's path. Errors raise simplecpp.Error with the C API's
code and message.
"""
import ctypes
import ctypes.util
import os
from collections import namedtuple

import numpy as np

# ONNX TensorProto element types <-> NumPy dtypes (bfloat16 and the float8 types have no NumPy
# dtype and are refused by name).
_DTYPES = {
    1: np.float32, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16, 6: np.int32, 7: np.int64,
    9: np.bool_, 10: np.float16, 11: np.float64, 12: np.uint32, 13: np.uint64,
}
_CODES = {np.dtype(v): k for k, v in _DTYPES.items()}

ValueInfo = namedtuple("ValueInfo", "name dtype dims dim_names kind")


class Error(RuntimeError):
    """A failed simplecpp call: .code is the C API's SC_ERR_* number."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def _find_library():
    env = os.environ.get("SIMPLECPP_LIB")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    local = os.path.join(here, "..", "..", "build", "lib", "libsimplecpp_c.so")
    if os.path.exists(local):
        return local
    found = ctypes.util.find_library("simplecpp_c")
    if found:
        return found
    raise OSError("libsimplecpp_c.so not found: build the repository (cmake --build build) or set "
                  "SIMPLECPP_LIB to its path")


_lib = ctypes.CDLL(_find_library())
_p = ctypes.c_void_p
_i64 = ctypes.c_int64
_i32 = ctypes.c_int32


def _fn(name, restype, *argtypes):
    f = getattr(_lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


_status_code = _fn("sc_status_code", _i32, _p)
_status_message = _fn("sc_status_message", ctypes.c_char_p, _p)
_status_free = _fn("sc_status_free", None, _p)
_model_load = _fn("sc_model_load", _p, ctypes.c_char_p, ctypes.POINTER(_p))
_model_load_bytes = _fn("sc_model_load_bytes", _p, ctypes.c_char_p, ctypes.c_size_t,
                        ctypes.POINTER(_p))
_model_free = _fn("sc_model_free", None, _p)
_counts = {True: _fn("sc_model_input_count", _p, _p, ctypes.POINTER(_i64)),
           False: _fn("sc_model_output_count", _p, _p, ctypes.POINTER(_i64))}
_names = {True: _fn("sc_model_input_name", _p, _p, _i64, ctypes.POINTER(ctypes.c_char_p)),
          False: _fn("sc_model_output_name", _p, _p, _i64, ctypes.POINTER(ctypes.c_char_p))}
_types = {flag: _fn("sc_model_%s_type" % ("input" if flag else "output"), _p, _p, _i64,
                    ctypes.POINTER(_i32), ctypes.POINTER(_i32), ctypes.POINTER(_i64))
          for flag in (True, False)}
_dims = {flag: _fn("sc_model_%s_dims" % ("input" if flag else "output"), _p, _p, _i64,
                   ctypes.POINTER(_i64), _i64) for flag in (True, False)}
_dim_names = {flag: _fn("sc_model_%s_dim_name" % ("input" if flag else "output"), _p, _p, _i64,
                        _i64, ctypes.POINTER(ctypes.c_char_p)) for flag in (True, False)}
_session_create = _fn("sc_session_create", _p, _p, _i32, ctypes.POINTER(_p))
_session_free = _fn("sc_session_free", None, _p)
_tensor_create = _fn("sc_tensor_create", _p, _i32, ctypes.POINTER(_i64), _i64, _p,
                     ctypes.c_size_t, ctypes.POINTER(_p))
_tensor_free = _fn("sc_tensor_free", None, _p)
_tensor_dtype = _fn("sc_tensor_dtype", _i32, _p)
_tensor_rank = _fn("sc_tensor_rank", _i64, _p)
_tensor_dims = _fn("sc_tensor_dims", _p, _p, ctypes.POINTER(_i64), _i64)
_tensor_byte_size = _fn("sc_tensor_byte_size", ctypes.c_size_t, _p)
_tensor_copy_data = _fn("sc_tensor_copy_data", _p, _p, _p, ctypes.c_size_t)
_session_run = _fn("sc_session_run", _p, _p, ctypes.POINTER(ctypes.c_char_p), ctypes.POINTER(_p),
                   _i64, ctypes.POINTER(ctypes.c_char_p), _i64, ctypes.POINTER(_p))

_decoder_create = _fn("sc_decoder_create", _p, _p, _i32, ctypes.POINTER(_p))
_decoder_free = _fn("sc_decoder_free", None, _p)
_decoder_vocab_size = _fn("sc_decoder_vocab_size", _p, _p, ctypes.POINTER(_i64))
_decoder_generate = _fn("sc_decoder_generate", _p, _p, ctypes.POINTER(_i64), _i64, _i64, _i64, _i32,
                        ctypes.POINTER(_i64), ctypes.POINTER(_i64),
                        ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_double))

_builder_create = _fn("sc_builder_create", _p, _i64, ctypes.POINTER(_p))
_builder_free = _fn("sc_builder_free", None, _p)
_builder_import_opset = _fn("sc_builder_import_opset", _p, _p, ctypes.c_char_p, _i64)
_builder_add_input = _fn("sc_builder_add_input", _p, _p, ctypes.c_char_p, _i32,
                         ctypes.POINTER(_i64), _i64, ctypes.POINTER(ctypes.c_char_p))
_builder_add_initializer = _fn("sc_builder_add_initializer", _p, _p, ctypes.c_char_p, _p)
_builder_add_node = _fn("sc_builder_add_node", _p, _p, ctypes.c_char_p, ctypes.c_char_p,
                        ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), _i64, _p, _i64,
                        ctypes.POINTER(ctypes.c_char_p))
_builder_add_output = _fn("sc_builder_add_output", _p, _p, ctypes.c_char_p)
_builder_value_type = _fn("sc_builder_value_type", _p, _p, ctypes.c_char_p, ctypes.POINTER(_i32),
                          ctypes.POINTER(_i64))
_builder_value_dims = _fn("sc_builder_value_dims", _p, _p, ctypes.c_char_p, ctypes.POINTER(_i64),
                          _i64)
_builder_build = _fn("sc_builder_build", _p, _p, _p, ctypes.POINTER(_p))
_builder_to_onnx = _fn("sc_builder_to_onnx", _p, _p, ctypes.POINTER(_p),
                       ctypes.POINTER(ctypes.c_size_t))
_buffer_free = _fn("sc_buffer_free", None, _p)
_attributes_create = _fn("sc_attributes_create", _p, ctypes.POINTER(_p))
_attributes_free = _fn("sc_attributes_free", None, _p)
_attr_int = _fn("sc_attributes_set_int", _p, _p, ctypes.c_char_p, _i64)
_attr_float = _fn("sc_attributes_set_float", _p, _p, ctypes.c_char_p, ctypes.c_float)
_attr_string = _fn("sc_attributes_set_string", _p, _p, ctypes.c_char_p, ctypes.c_char_p)
_attr_ints = _fn("sc_attributes_set_ints", _p, _p, ctypes.c_char_p, ctypes.POINTER(_i64), _i64)
_attr_floats = _fn("sc_attributes_set_floats", _p, _p, ctypes.c_char_p,
                   ctypes.POINTER(ctypes.c_float), _i64)
_attr_strings = _fn("sc_attributes_set_strings", _p, _p, ctypes.c_char_p,
                    ctypes.POINTER(ctypes.c_char_p), _i64)
_attr_tensor = _fn("sc_attributes_set_tensor", _p, _p, ctypes.c_char_p, _p)
_run_op = _fn("sc_run_op", _p, ctypes.c_char_p, ctypes.c_char_p, _i64, ctypes.POINTER(_p), _i64, _p,
              _i64, ctypes.POINTER(_p))

DEFAULT_OPSET = 21


def _check(status):
    if status:
        code = _status_code(status)
        message = _status_message(status).decode("utf-8", "replace")
        _status_free(status)
        raise Error(code, message)


def _to_tensor(name, array):
    array = np.require(array, requirements="C")  # keeps 0-d arrays 0-d
    code = _CODES.get(array.dtype)
    if code is None:
        raise Error(1, "input '%s': NumPy dtype %s has no simplecpp dtype" % (name, array.dtype))
    dims = (_i64 * max(array.ndim, 1))(*array.shape)
    out = _p()
    _check(_tensor_create(code, dims, array.ndim, array.ctypes.data_as(_p), array.nbytes,
                          ctypes.byref(out)))
    return out


def _from_tensor(tensor):
    code = _tensor_dtype(tensor)
    if code not in _DTYPES:
        raise Error(3, "an output of ONNX dtype %d has no NumPy dtype" % code)
    rank = _tensor_rank(tensor)
    dims = (_i64 * max(rank, 1))()
    _check(_tensor_dims(tensor, dims, rank))
    array = np.empty(tuple(dims[i] for i in range(rank)), dtype=_DTYPES[code])
    _check(_tensor_copy_data(tensor, array.ctypes.data_as(_p), array.nbytes))
    return array


class Model:
    """A loaded model: .inputs / .outputs (ValueInfo), .session(threads), .run(feeds)."""

    def __init__(self, handle):
        self._h = handle
        self.inputs = self._describe(True)
        self.outputs = self._describe(False)
        self._default_session = None

    def _describe(self, is_input):
        n = _i64()
        _check(_counts[is_input](self._h, ctypes.byref(n)))
        values = []
        for i in range(n.value):
            name = ctypes.c_char_p()
            _check(_names[is_input](self._h, i, ctypes.byref(name)))
            kind, code, rank = _i32(), _i32(), _i64()
            _check(_types[is_input](self._h, i, ctypes.byref(kind), ctypes.byref(code),
                                    ctypes.byref(rank)))
            dims = dim_names = None
            if rank.value >= 0:
                buf = (_i64 * max(rank.value, 1))()
                _check(_dims[is_input](self._h, i, buf, rank.value))
                dims = [buf[d] for d in range(rank.value)]
                dim_names = []
                for d in range(rank.value):
                    dn = ctypes.c_char_p()
                    _check(_dim_names[is_input](self._h, i, d, ctypes.byref(dn)))
                    dim_names.append(dn.value.decode())
            kind_name = ("tensor", "sequence", "optional")[kind.value]
            values.append(ValueInfo(name.value.decode(), _DTYPES.get(code.value), dims,
                                    dim_names, kind_name))
        return values

    def session(self, threads=1):
        return Session(self, threads)

    def decoder(self, threads=1):
        return Decoder(self, threads)

    def run(self, feeds, output_names=None):
        """Runs on a session of one thread kept by the model; feeds: {name: array-like}."""
        if self._default_session is None:
            self._default_session = Session(self, 1)
        return self._default_session.run(feeds, output_names)

    def close(self):
        if self._default_session is not None:
            self._default_session.close()
            self._default_session = None
        if self._h:
            _model_free(self._h)
            self._h = None

    def __del__(self):
        self.close()


class Session:
    """Runs a model; threads: intra-op threads (0: one per core). Results do not depend on it."""

    def __init__(self, model, threads=1):
        self._model = model  # the model must outlive the session
        self._h = _p()
        _check(_session_create(model._h, threads, ctypes.byref(self._h)))

    def run(self, feeds, output_names=None):
        names = list(output_names) if output_names else [v.name for v in self._model.outputs]
        in_names = list(feeds.keys())
        tensors = []
        outs = (_p * max(len(names), 1))()
        try:
            for name in in_names:
                tensors.append(_to_tensor(name, np.asarray(feeds[name])))
            c_in_names = (ctypes.c_char_p * max(len(in_names), 1))(*[n.encode() for n in in_names])
            c_in = (_p * max(len(tensors), 1))(*tensors)
            c_out_names = (ctypes.c_char_p * max(len(names), 1))(*[n.encode() for n in names])
            _check(_session_run(self._h, c_in_names, c_in, len(in_names), c_out_names, len(names),
                                outs))
            return {name: _from_tensor(outs[i]) for i, name in enumerate(names)}
        finally:
            for t in tensors:
                _tensor_free(t)
            for i in range(len(names)):
                if outs[i]:
                    _tensor_free(outs[i])

    def close(self):
        if self._h:
            _session_free(self._h)
            self._h = None

    def __del__(self):
        self.close()


class Decoder:
    """Greedy decoding with a KV cache, for a decoder with onnxruntime-genai's names
    (input_ids, past_key_values.N.key|value, logits, present.N.key|value). .vocab_size;
    .generate(prompt, max_tokens=16, stop_token=-1, warmup=False) -> (tokens, prefill_ms, decode_ms).
    """

    def __init__(self, model, threads=1):
        self._model = model  # the model must outlive the decoder
        self._h = _p()
        _check(_decoder_create(model._h, threads, ctypes.byref(self._h)))
        vocab = _i64()
        _check(_decoder_vocab_size(self._h, ctypes.byref(vocab)))
        self.vocab_size = vocab.value

    def generate(self, prompt, max_tokens=16, stop_token=-1, warmup=False):
        """Tokens generated after `prompt` (the prefill's token included), ending after stop_token."""
        ids = [int(t) for t in prompt]
        c_prompt = (_i64 * max(len(ids), 1))(*ids)
        out = (_i64 * max(int(max_tokens), 1))()
        count, prefill, decode = _i64(), ctypes.c_double(), ctypes.c_double()
        _check(_decoder_generate(self._h, c_prompt, len(ids), int(max_tokens), int(stop_token),
                                 1 if warmup else 0, out, ctypes.byref(count), ctypes.byref(prefill),
                                 ctypes.byref(decode)))
        return [out[i] for i in range(count.value)], prefill.value, decode.value

    def close(self):
        if self._h:
            _decoder_free(self._h)
            self._h = None

    def __del__(self):
        self.close()


def load(path):
    """Loads an ONNX model file."""
    h = _p()
    _check(_model_load(os.fsencode(path), ctypes.byref(h)))
    return Model(h)


def load_bytes(data):
    """Loads an ONNX model from bytes."""
    data = bytes(data)
    h = _p()
    _check(_model_load_bytes(data, len(data), ctypes.byref(h)))
    return Model(h)


def _attributes(attributes):
    """{name: value} -> an sc_attributes handle (the caller frees it). int, float, str, lists of
    them (by the first element's type; an empty list is ints), and NumPy arrays (tensors)."""
    h = _p()
    _check(_attributes_create(ctypes.byref(h)))
    try:
        for name, value in (attributes or {}).items():
            key = name.encode()
            if isinstance(value, np.ndarray):
                t = _to_tensor(name, value)
                try:
                    _check(_attr_tensor(h, key, t))
                finally:
                    _tensor_free(t)
            elif isinstance(value, (bool, int, np.integer)):
                _check(_attr_int(h, key, int(value)))
            elif isinstance(value, (float, np.floating)):
                _check(_attr_float(h, key, float(value)))
            elif isinstance(value, str):
                _check(_attr_string(h, key, value.encode()))
            elif isinstance(value, (list, tuple)):
                if value and isinstance(value[0], str):
                    arr = (ctypes.c_char_p * len(value))(*[v.encode() for v in value])
                    _check(_attr_strings(h, key, arr, len(value)))
                elif value and isinstance(value[0], (float, np.floating)):
                    arr = (ctypes.c_float * len(value))(*value)
                    _check(_attr_floats(h, key, arr, len(value)))
                else:
                    arr = (_i64 * max(len(value), 1))(*[int(v) for v in value])
                    _check(_attr_ints(h, key, arr, len(value)))
            else:
                raise Error(1, "attribute '%s': %s values are not attributes" % (name, type(value)))
    except BaseException:
        _attributes_free(h)
        raise
    return h


def run_op(op_type, inputs, attributes=None, num_outputs=1, domain="", opset=DEFAULT_OPSET):
    """Runs one node (inputs: arrays, None for an omitted optional input); returns its outputs as
    a list of arrays. The prepared node is cached per thread by the library."""
    tensors = []
    outs = (_p * num_outputs)()
    attrs = _attributes(attributes)
    try:
        for i, a in enumerate(inputs):
            tensors.append(None if a is None else _to_tensor("input %d" % i, np.asarray(a)))
        c_in = (_p * max(len(tensors), 1))(*tensors)
        _check(_run_op(domain.encode(), op_type.encode(), opset, c_in, len(tensors), attrs,
                       num_outputs, outs))
        return [_from_tensor(outs[k]) for k in range(num_outputs)]
    finally:
        _attributes_free(attrs)
        for t in tensors:
            if t:
                _tensor_free(t)
        for k in range(num_outputs):
            if outs[k]:
                _tensor_free(outs[k])


class GraphBuilder:
    """A graph built in code. Every value's dtype and dims are known as soon as its node is added
    (value_type); a wrong call raises Error naming the node and op. build() gives a Model,
    to_onnx() the ONNX bytes."""

    def __init__(self, opset=DEFAULT_OPSET):
        self._h = _p()
        _check(_builder_create(opset, ctypes.byref(self._h)))

    def import_opset(self, domain, version):
        _check(_builder_import_opset(self._h, domain.encode(), version))

    def add_input(self, name, dtype, dims):
        """dims: ints, None or -1 for an unknown dim, a str for a symbolic one; None: unknown rank."""
        code = _CODES.get(np.dtype(dtype))
        if code is None:
            raise Error(1, "input '%s': NumPy dtype %s has no simplecpp dtype" % (name, dtype))
        if dims is None:
            _check(_builder_add_input(self._h, name.encode(), code, None, -1, None))
            return name
        c_dims = (_i64 * max(len(dims), 1))(*[d if isinstance(d, int) else -1 for d in dims])
        c_names = (ctypes.c_char_p * max(len(dims), 1))(
            *[d.encode() if isinstance(d, str) else None for d in dims])
        _check(_builder_add_input(self._h, name.encode(), code, c_dims, len(dims), c_names))
        return name

    def add_initializer(self, name, array):
        t = _to_tensor(name, np.asarray(array))
        try:
            _check(_builder_add_initializer(self._h, name.encode(), t))
        finally:
            _tensor_free(t)
        return name

    def add_node(self, op_type, inputs, attributes=None, num_outputs=1, domain="", name=None):
        """Returns the output names (a list of num_outputs)."""
        attrs = _attributes(attributes)
        try:
            c_in = (ctypes.c_char_p * max(len(inputs), 1))(*[(i or "").encode() for i in inputs])
            out = (ctypes.c_char_p * num_outputs)()
            _check(_builder_add_node(self._h, domain.encode(), op_type.encode(),
                                     name.encode() if name else None, c_in, len(inputs), attrs,
                                     num_outputs, out))
            return [out[k].decode() for k in range(num_outputs)]
        finally:
            _attributes_free(attrs)

    def add_output(self, name):
        _check(_builder_add_output(self._h, name.encode()))

    def value_type(self, name):
        """(NumPy dtype or None, dims with -1 where unknown, or None when the rank is unknown)."""
        code, rank = _i32(), _i64()
        _check(_builder_value_type(self._h, name.encode(), ctypes.byref(code), ctypes.byref(rank)))
        if rank.value < 0:
            return _DTYPES.get(code.value), None
        buf = (_i64 * max(rank.value, 1))()
        _check(_builder_value_dims(self._h, name.encode(), buf, rank.value))
        return _DTYPES.get(code.value), [buf[d] for d in range(rank.value)]

    def build(self):
        h = _p()
        _check(_builder_build(self._h, None, ctypes.byref(h)))
        return Model(h)

    def to_onnx(self):
        data, size = _p(), ctypes.c_size_t()
        _check(_builder_to_onnx(self._h, ctypes.byref(data), ctypes.byref(size)))
        try:
            return ctypes.string_at(data, size.value)
        finally:
            _buffer_free(data)

    def close(self):
        if self._h:
            _builder_free(self._h)
            self._h = None

    def __del__(self):
        self.close()
