// Tests for graph/ops/tensor_constant.cc: Constant (every value_* form), ConstantOfShape,
// Range (float / int types, negative delta, empty) and Dropout (inference, masks, training mode).
#include <doctest/doctest.h>

#include <cmath>

#include "graph/op_test_util.h"
#include "graph/ops/tensor_test_util.h"

namespace simplecpp {
namespace {

using tensor_test::CheckSame;
using tensor_test::ErrorCodeOf;
using tensor_test::Pattern;
using testing::AttrFloat;
using testing::AttrFloats;
using testing::AttrInt;
using testing::AttrInts;
using testing::AttrString;
using testing::AttrTensor;
using testing::Bool;
using testing::F32;
using testing::I32;
using testing::I64;
using testing::RunNode;
using testing::RunNodeOptions;

TEST_CASE("Constant: every value form") {
  const Tensor t = Pattern(DType::kInt8, {2, 3});
  CheckSame(RunNode("Constant", {}, {AttrTensor("value", t)})[0], t);
  CheckSame(RunNode("Constant", {}, {AttrFloat("value_float", 1.5f)})[0], F32({}, {1.5f}));
  CheckSame(RunNode("Constant", {}, {AttrFloats("value_floats", {1, 2})})[0], F32({2}, {1, 2}));
  CheckSame(RunNode("Constant", {}, {AttrInt("value_int", -7)})[0], I64({}, {-7}));
  CheckSame(RunNode("Constant", {}, {AttrInts("value_ints", {4, 5, 6})})[0], I64({3}, {4, 5, 6}));
  auto s = RunNode("Constant", {}, {AttrString("value_string", "hi")});
  CHECK(s[0].dtype() == DType::kString);
  CHECK(s[0].dims() == Dims{});
  CHECK(s[0].strings() == std::vector<std::string>{"hi"});
  graph::Attribute strings;
  strings.name = "value_strings";
  strings.kind = graph::AttrKind::kStrings;
  strings.strings = {"a", "", "c"};
  auto ss = RunNode("Constant", {}, {strings});
  CHECK(ss[0].dims() == Dims{3});
  CHECK(ss[0].strings() == strings.strings);
  // Zero or two values, and an undensified sparse value.
  CHECK(ErrorCodeOf([&] { RunNode("Constant", {}, {}); }) == static_cast<int>(ErrorCode::kInvalidModel));
  CHECK(ErrorCodeOf([&] { RunNode("Constant", {}, {AttrInt("value_int", 1), AttrFloat("value_float", 1)}); }) ==
        static_cast<int>(ErrorCode::kInvalidModel));
  graph::Attribute sparse;
  sparse.name = "sparse_value";
  sparse.kind = graph::AttrKind::kSparseTensor;
  CHECK(ErrorCodeOf([&] { RunNode("Constant", {}, {sparse}); }) == static_cast<int>(ErrorCode::kUnsupported));
}

TEST_CASE("ConstantOfShape: default, typed values, scalar and empty shapes") {
  CheckSame(RunNode("ConstantOfShape", {I64({2}, {2, 3})})[0], F32({2, 3}, std::vector<float>(6, 0.0f)));
  CheckSame(RunNode("ConstantOfShape", {I64({1}, {3})}, {AttrTensor("value", I32({1}, {7}))})[0],
            I32({3}, {7, 7, 7}));
  CheckSame(RunNode("ConstantOfShape", {I64({0}, {})}, {AttrTensor("value", I64({1}, {-2}))})[0],
            I64({}, {-2}));
  CheckSame(RunNode("ConstantOfShape", {I64({2}, {0, 4})}, {AttrTensor("value", F32({1}, {1}))})[0],
            F32({0, 4}, {}));
  const Tensor h = Pattern(DType::kFloat16, {1});
  auto out = RunNode("ConstantOfShape", {I64({1}, {5})}, {AttrTensor("value", h)});
  CHECK(out[0].dtype() == DType::kFloat16);
  for (int i = 0; i < 5; ++i) CHECK(out[0].data<uint16_t>()[i] == h.data<uint16_t>()[0]);
  CHECK(ErrorCodeOf([&] { RunNode("ConstantOfShape", {I64({1}, {-1})}); }) != 0);
  CHECK(ErrorCodeOf([&] { RunNode("ConstantOfShape", {I64({1}, {2})}, {AttrTensor("value", F32({2}, {1, 2}))}); }) != 0);
}

TEST_CASE("Range: float and integer types, negative delta, empty, errors") {
  CheckSame(RunNode("Range", {F32({}, {1}), F32({}, {5}), F32({}, {1.5f})})[0], F32({3}, {1, 2.5f, 4}));
  CheckSame(RunNode("Range", {I32({}, {10}), I32({}, {4}), I32({}, {-3})})[0], I32({2}, {10, 7}));
  CheckSame(RunNode("Range", {I64({}, {0}), I64({}, {0}), I64({}, {1})})[0], I64({0}, {}));
  CheckSame(RunNode("Range", {I64({}, {5}), I64({}, {0}), I64({}, {1})})[0], I64({0}, {}));
  CheckSame(RunNode("Range", {I64({}, {-3}), I64({}, {4}), I64({}, {3})})[0], I64({3}, {-3, 0, 3}));
  auto d = RunNode("Range", {Tensor::FromVector<double>(DType::kFloat64, {}, {0.0}),
                             Tensor::FromVector<double>(DType::kFloat64, {}, {1.0}),
                             Tensor::FromVector<double>(DType::kFloat64, {}, {0.25})});
  CHECK(d[0].dims() == Dims{4});
  CHECK(d[0].data<double>()[3] == 0.75);
  RunNodeOptions constant;
  constant.constant_inputs = {0, 1, 2};
  CheckSame(RunNode("Range", {I64({}, {0}), I64({}, {3}), I64({}, {1})}, {}, constant)[0], I64({3}, {0, 1, 2}));
  CHECK(ErrorCodeOf([&] { RunNode("Range", {I64({}, {0}), I64({}, {3}), I64({}, {0})}); }) != 0);
  CHECK(ErrorCodeOf([&] { RunNode("Range", {F32({}, {0}), I64({}, {3}), I64({}, {1})}); }) != 0);
}

TEST_CASE("Dropout: inference is the identity, masks are all true") {
  const Tensor x = Pattern(DType::kFloat32, {3, 4});
  CheckSame(RunNode("Dropout", {x})[0], x);
  RunNodeOptions two;
  two.num_outputs = 2;
  auto out = RunNode("Dropout", {x, F32({}, {0.3f})}, {}, two);
  CheckSame(out[0], x);
  CheckSame(out[1], testing::Bool({3, 4}, std::vector<bool>(12, true)));
  // training_mode false, and training with ratio 0: still the identity.
  CheckSame(RunNode("Dropout", {x, F32({}, {0.5f}), Bool({}, {false})}, {}, two)[0], x);
  CheckSame(RunNode("Dropout", {x, F32({}, {0.0f}), Bool({}, {true})}, {}, two)[1],
            testing::Bool({3, 4}, std::vector<bool>(12, true)));
  CHECK(ErrorCodeOf([&] { RunNode("Dropout", {x, F32({}, {0.5f}), Bool({}, {true})}); }) ==
        static_cast<int>(ErrorCode::kUnsupported));
  // Opset 7: the mask has the input's type.
  RunNodeOptions o7;
  o7.opset = 7;
  o7.num_outputs = 2;
  auto old = RunNode("Dropout", {x}, {AttrFloat("ratio", 0.2f)}, o7);
  CheckSame(old[0], x);
  CheckSame(old[1], F32({3, 4}, std::vector<float>(12, 1.0f)));
}

}  // namespace
}  // namespace simplecpp
