// A value of an ONNX graph: a tensor, a sequence of tensors, or an empty optional ("none").
// An optional that holds something is represented by what it holds (a tensor or a sequence): the
// graph's declared type says whether a value is optional. Copies are shallow, like Tensor's.
//
//   simplecpp::Value t = tensor;                                    // a tensor
//   auto s = simplecpp::Value::Sequence(DType::kFloat32, {a, b});   // sequence<float32> of 2
//   auto n = simplecpp::Value::None();                              // empty optional
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "simplecpp/dtype.h"
#include "simplecpp/error.h"
#include "simplecpp/tensor.h"

namespace simplecpp {

enum class ValueKind { kUndefined, kTensor, kSequence, kNone };

class Value {
 public:
  Value() = default;  // undefined: no value at all
  Value(Tensor tensor)  // NOLINT(google-explicit-constructor): a tensor is a value
      : kind_(tensor.defined() ? ValueKind::kTensor : ValueKind::kUndefined),
        tensor_(std::move(tensor)) {}
  // A sequence whose elements all have dtype `elem_dtype` (throws Error(kInvalidArgument) when
  // one does not). Elements may differ in shape.
  static Value Sequence(DType elem_dtype, std::vector<Tensor> elements) {
    for (size_t i = 0; i < elements.size(); ++i) {
      if (elements[i].dtype() != elem_dtype) {
        throw Error(ErrorCode::kInvalidArgument,
                    "sequence<" + DTypeName(elem_dtype) + ">: element " + std::to_string(i) +
                        " has dtype " + DTypeName(elements[i].dtype()));
      }
    }
    Value v;
    v.kind_ = ValueKind::kSequence;
    v.elem_dtype_ = elem_dtype;
    v.sequence_ = std::make_shared<const std::vector<Tensor>>(std::move(elements));
    return v;
  }
  // An optional without a value.
  static Value None() {
    Value v;
    v.kind_ = ValueKind::kNone;
    return v;
  }

  ValueKind kind() const { return kind_; }
  bool defined() const { return kind_ != ValueKind::kUndefined; }
  bool is_tensor() const { return kind_ == ValueKind::kTensor; }
  bool is_sequence() const { return kind_ == ValueKind::kSequence; }
  bool is_none() const { return kind_ == ValueKind::kNone; }

  // The tensor; throws Error(kInvalidArgument) when the value is not a tensor.
  const Tensor& tensor() const {
    if (!is_tensor()) throw Error(ErrorCode::kInvalidArgument, "expected a tensor, got " + Describe());
    return tensor_;
  }
  // The elements; throws Error(kInvalidArgument) when the value is not a sequence.
  const std::vector<Tensor>& sequence() const {
    if (!is_sequence()) {
      throw Error(ErrorCode::kInvalidArgument, "expected a sequence, got " + Describe());
    }
    return *sequence_;
  }
  // Tensor dtype, sequence element dtype; kUndefined for none / undefined.
  DType dtype() const {
    return is_tensor() ? tensor_.dtype() : is_sequence() ? elem_dtype_ : DType::kUndefined;
  }

  // "tensor float32[2,3]", "sequence<int64> of 3", "none", "undefined".
  std::string Describe() const {
    switch (kind_) {
      case ValueKind::kTensor: return "tensor " + DTypeName(tensor_.dtype()) + DimsToString(tensor_.dims());
      case ValueKind::kSequence:
        return "sequence<" + DTypeName(elem_dtype_) + "> of " + std::to_string(sequence_->size());
      case ValueKind::kNone: return "none";
      case ValueKind::kUndefined: break;
    }
    return "undefined";
  }

 private:
  ValueKind kind_ = ValueKind::kUndefined;
  Tensor tensor_;
  DType elem_dtype_ = DType::kUndefined;
  std::shared_ptr<const std::vector<Tensor>> sequence_;
};

}  // namespace simplecpp
