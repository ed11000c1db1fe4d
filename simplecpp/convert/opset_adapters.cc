// Node rewrites for the opset upgrade (opset_adapters.h). Each follows the ONNX version
// converter's adapter for the same change: attributes that became inputs turn into initializers
// (int64 for indices and sizes, the data's element type for Clip bounds and Pad's fill value),
// Upsample / Resize-10 become Resize-11 with the coordinate mapping they always had (asymmetric,
// nearest index by floor), which is not Resize-11's default, and the 2-D-coercing Softmax family
// keeps its meaning at 13 through Flatten / Reshape when the axis is not the last; Split-18's
// num_outputs, GridSample-20's renamed modes and RoiAlign-16's old coordinate mapping are written
// out.
#include "simplecpp/convert/opset_adapters.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kernels/float16/float16.h"
#include "simplecpp/convert/convert_util.h"
#include "simplecpp/error.h"

namespace simplecpp::convert::detail {

namespace {

// Removes and returns the attribute `name`, if the node has it.
std::optional<graph::Attribute> TakeAttribute(graph::Node* n, const std::string& name) {
  for (auto it = n->attributes.begin(); it != n->attributes.end(); ++it) {
    if (it->name == name) {
      graph::Attribute a = std::move(*it);
      n->attributes.erase(it);
      return a;
    }
  }
  return std::nullopt;
}

void SetStringAttribute(graph::Node* n, const std::string& name, const std::string& value) {
  TakeAttribute(n, name);
  graph::Attribute a;
  a.name = name;
  a.kind = graph::AttrKind::kString;
  a.s = value;
  n->attributes.push_back(std::move(a));
}

std::string BaseName(const graph::Node& n) {
  return !n.name.empty() ? n.name : !n.outputs.empty() ? n.outputs[0] : n.op_type;
}

// Adds `t` as an initializer named after the node and `suffix`; returns the name.
std::string AddInitializer(const graph::Node& n, const std::string& suffix, Tensor t,
                           AdapterContext* c) {
  const std::string name = UniqueName(BaseName(n) + suffix, c->taken);
  c->graph->initializers.emplace_back(name, std::move(t));
  return name;
}

Tensor Int64Vector(const std::vector<int64_t>& v) {
  return Tensor::FromVector<int64_t>(DType::kInt64, {static_cast<int64_t>(v.size())}, v);
}

// A scalar of `dtype` holding `v` (an attribute's float value given to an input of type T).
Tensor TypedScalar(DType dtype, double v, const graph::Node& n) {
  switch (dtype) {
    case DType::kFloat32:
      return Tensor::FromVector<float>(dtype, {}, {static_cast<float>(v)});
    case DType::kFloat64:
      return Tensor::FromVector<double>(dtype, {}, {v});
    case DType::kFloat16:
      return Tensor::FromVector<uint16_t>(dtype, {},
                                          {kernels::FloatToHalfBits(static_cast<float>(v))});
    case DType::kInt8:
      return Tensor::FromVector<int8_t>(dtype, {}, {static_cast<int8_t>(v)});
    case DType::kUInt8:
      return Tensor::FromVector<uint8_t>(dtype, {}, {static_cast<uint8_t>(v)});
    case DType::kInt16:
      return Tensor::FromVector<int16_t>(dtype, {}, {static_cast<int16_t>(v)});
    case DType::kUInt16:
      return Tensor::FromVector<uint16_t>(dtype, {}, {static_cast<uint16_t>(v)});
    case DType::kInt32:
      return Tensor::FromVector<int32_t>(dtype, {}, {static_cast<int32_t>(v)});
    case DType::kUInt32:
      return Tensor::FromVector<uint32_t>(dtype, {}, {static_cast<uint32_t>(v)});
    case DType::kInt64:
      return Tensor::FromVector<int64_t>(dtype, {}, {static_cast<int64_t>(v)});
    case DType::kUInt64:
      return Tensor::FromVector<uint64_t>(dtype, {}, {static_cast<uint64_t>(v)});
    default:
      throw Error(ErrorCode::kUnsupported, n.Describe() +
                                               ": cannot write its attribute value as a " +
                                               DTypeName(dtype) + " input for the opset upgrade");
  }
}

[[noreturn]] void Refuse(const graph::Node& n, const std::string& why) {
  throw Error(ErrorCode::kUnsupported, "opset upgrade: " + n.Describe() + ": " + why);
}

}  // namespace

bool ClipAttributesToInputs(graph::Node* n, AdapterContext* c) {
  std::optional<graph::Attribute> lo = TakeAttribute(n, "min"), hi = TakeAttribute(n, "max");
  if (!lo && !hi) return false;  // no bounds: Clip-11 without the optional inputs is the same
  if (n->inputs.empty()) Refuse(*n, "Clip without an input");
  const DType t = c->dtype_of(n->inputs[0]);
  n->inputs.resize(1);
  n->inputs.push_back(lo ? AddInitializer(*n, "_min", TypedScalar(t, lo->f, *n), c)
                         : std::string());
  if (hi) n->inputs.push_back(AddInitializer(*n, "_max", TypedScalar(t, hi->f, *n), c));
  return true;
}

bool PadAttributesToInputs(graph::Node* n, AdapterContext* c) {
  std::optional<graph::Attribute> pads = TakeAttribute(n, "pads");
  std::optional<graph::Attribute> value = TakeAttribute(n, "value");
  if (!pads) Refuse(*n, "Pad-2 without its required 'pads' attribute");
  if (n->inputs.size() != 1) Refuse(*n, "Pad-2 takes one input");
  n->inputs.push_back(AddInitializer(*n, "_pads", Int64Vector(pads->ints), c));
  const graph::Attribute* mode = n->FindAttribute("mode");
  if ((!mode || mode->s == "constant") && value && value->f != 0.0f) {
    n->inputs.push_back(
        AddInitializer(*n, "_value", TypedScalar(c->dtype_of(n->inputs[0]), value->f, *n), c));
  }
  return true;
}

bool SliceAttributesToInputs(graph::Node* n, AdapterContext* c) {
  std::optional<graph::Attribute> starts = TakeAttribute(n, "starts"),
                                  ends = TakeAttribute(n, "ends");
  std::optional<graph::Attribute> axes = TakeAttribute(n, "axes");
  if (!starts || !ends) Refuse(*n, "Slice-1 without its required 'starts' / 'ends' attributes");
  if (n->inputs.size() != 1) Refuse(*n, "Slice-1 takes one input");
  n->inputs.push_back(AddInitializer(*n, "_starts", Int64Vector(starts->ints), c));
  n->inputs.push_back(AddInitializer(*n, "_ends", Int64Vector(ends->ints), c));
  if (axes) n->inputs.push_back(AddInitializer(*n, "_axes", Int64Vector(axes->ints), c));
  return true;
}

bool TopKAttributeToInput(graph::Node* n, AdapterContext* c) {
  std::optional<graph::Attribute> k = TakeAttribute(n, "k");
  if (!k) Refuse(*n, "TopK-1 without its required 'k' attribute");
  if (n->inputs.size() != 1) Refuse(*n, "TopK-1 takes one input");
  n->inputs.push_back(AddInitializer(*n, "_k", Int64Vector({k->i}), c));
  return true;
}

bool UpsampleToResize(graph::Node* n, AdapterContext* c) {
  std::optional<graph::Attribute> mode = TakeAttribute(n, "mode");
  std::optional<graph::Attribute> scales_attr = TakeAttribute(n, "scales");
  std::string m = mode ? mode->s : "nearest";
  if (m == "bilinear" || m == "trilinear") m = "linear";  // the pre-7 spellings of linear
  if (m != "nearest" && m != "linear") {
    Refuse(*n, "Upsample mode '" + m + "' has no Resize equivalent");
  }
  if (n->inputs.empty()) Refuse(*n, "Upsample without an input");
  std::string scales;
  if (scales_attr) {  // Upsample-7: scales as an attribute
    scales = AddInitializer(*n, "_scales",
                            Tensor::FromVector<float>(
                                DType::kFloat32, {static_cast<int64_t>(scales_attr->floats.size())},
                                scales_attr->floats),
                            c);
  } else if (n->inputs.size() == 2 && !n->inputs[1].empty()) {
    scales = n->inputs[1];
  } else {
    Refuse(*n, "Upsample without scales");
  }
  // Resize-11 requires roi; an empty one is read only by tf_crop_and_resize.
  const std::string roi = AddInitializer(*n, "_roi", Tensor(DType::kFloat32, {0}), c);
  n->op_type = "Resize";
  n->inputs = {n->inputs[0], roi, scales};
  n->attributes.clear();
  SetStringAttribute(n, "mode", m);
  SetStringAttribute(n, "coordinate_transformation_mode", "asymmetric");
  if (m == "nearest") SetStringAttribute(n, "nearest_mode", "floor");
  return true;
}

bool ResizeAddRoi(graph::Node* n, AdapterContext* c) {
  if (n->inputs.size() != 2) Refuse(*n, "Resize-10 takes two inputs (X, scales)");
  const std::string roi = AddInitializer(*n, "_roi", Tensor(DType::kFloat32, {0}), c);
  n->inputs = {n->inputs[0], roi, n->inputs[1]};
  const graph::Attribute* mode = n->FindAttribute("mode");
  SetStringAttribute(n, "coordinate_transformation_mode", "asymmetric");
  if (!mode || mode->s == "nearest") SetStringAttribute(n, "nearest_mode", "floor");
  return true;
}

bool BatchNormDropSpatial(graph::Node* n, AdapterContext*) {
  std::optional<graph::Attribute> spatial = TakeAttribute(n, "spatial");
  if (!spatial) return false;
  if (spatial->i == 0) {
    Refuse(*n, "BatchNormalization with spatial=0 (per-activation statistics) has no opset-9 form");
  }
  return true;
}

bool DropoutDropMask(graph::Node* n, AdapterContext* c) {
  if (n->outputs.size() < 2 || n->outputs[1].empty()) return false;
  if (c->used.count(n->outputs[1])) {
    Refuse(*n,
           "its mask output '" + n->outputs[1] + "' is read, and Dropout-10 makes the mask bool");
  }
  const std::string mask = n->outputs[1];
  n->outputs.resize(1);
  std::vector<graph::ValueInfo> kept;
  for (graph::ValueInfo& v : c->graph->value_info) {
    if (v.name != mask) kept.push_back(std::move(v));
  }
  c->graph->value_info = std::move(kept);
  return true;
}

bool DropoutRatioToInput(graph::Node* n, AdapterContext* c) {
  std::optional<graph::Attribute> ratio = TakeAttribute(n, "ratio");
  if (!ratio) return false;  // the default ratio (0.5) is Dropout-12's default too
  if (n->inputs.size() != 1) Refuse(*n, "Dropout-10 takes one input");
  // ratio's type T1 is free of the data's: float32 serves any data type.
  n->inputs.push_back(
      AddInitializer(*n, "_ratio", Tensor::FromVector<float>(DType::kFloat32, {}, {ratio->f}), c));
  return true;
}

bool AxesAttributeToInput(graph::Node* n, AdapterContext* c) {
  std::optional<graph::Attribute> axes = TakeAttribute(n, "axes");
  if (!axes)
    return false;  // no axes: every size-1 axis (Squeeze) / every axis (ReduceSum), as before
  if (n->inputs.size() != 1) Refuse(*n, n->op_type + "-11 takes one input");
  n->inputs.push_back(AddInitializer(*n, "_axes", Int64Vector(axes->ints), c));
  return true;
}

bool SplitAttributeToInput(graph::Node* n, AdapterContext* c) {
  std::optional<graph::Attribute> split = TakeAttribute(n, "split");
  if (!split) return false;  // equal parts, as before
  if (n->inputs.size() != 1) Refuse(*n, "Split-11 takes one input");
  n->inputs.push_back(AddInitializer(*n, "_split", Int64Vector(split->ints), c));
  return true;
}

// Softmax, LogSoftmax and Hardmax before 13 flatten the input to 2-D at `axis` (default 1) and
// normalize each row; from 13 they normalize along `axis` alone (default -1). The same when the
// axis is the last one; otherwise Flatten -> op(axis 1) -> Reshape back to the input's shape.
bool SoftmaxCoercedToAxis(graph::Node* n, AdapterContext* c) {
  if (n->inputs.size() != 1 || n->outputs.size() != 1) {
    Refuse(*n, "expected one input and one output");
  }
  std::optional<graph::Attribute> axis_attr = TakeAttribute(n, "axis");
  const int64_t axis = axis_attr ? axis_attr->i : 1;
  const int64_t rank = c->rank_of(n->inputs[0]);
  if (axis == -1 || (rank > 0 && axis == rank - 1)) {
    n->attributes.push_back(IntAttr("axis", -1));
    return !axis_attr || axis_attr->i != -1;
  }
  const std::string x = n->inputs[0], y = n->outputs[0];
  const std::string flat = UniqueName(BaseName(*n) + "_flat", c->taken);
  const std::string rows = UniqueName(BaseName(*n) + "_rows", c->taken);
  const std::string shape = UniqueName(BaseName(*n) + "_shape", c->taken);
  c->before.push_back(MakeNode("Flatten", UniqueName(BaseName(*n) + "_flatten", c->taken), {x},
                               {flat}, {IntAttr("axis", axis)}));
  n->inputs[0] = flat;
  n->outputs[0] = rows;
  n->attributes.push_back(IntAttr("axis", 1));
  c->after.push_back(
      MakeNode("Shape", UniqueName(BaseName(*n) + "_shape_of", c->taken), {x}, {shape}));
  c->after.push_back(
      MakeNode("Reshape", UniqueName(BaseName(*n) + "_unflatten", c->taken), {rows, shape}, {y}));
  return true;
}

bool ResizeCheckMode13(graph::Node* n, AdapterContext*) {
  const graph::Attribute* ct = n->FindAttribute("coordinate_transformation_mode");
  if (ct && ct->s == "tf_half_pixel_for_nn") {
    Refuse(*n, "coordinate_transformation_mode tf_half_pixel_for_nn was removed at opset 13");
  }
  return false;
}

// Split-18 takes the number of parts from `num_outputs` when no `split` input is given (the
// schema wants one of the two); before 18 the number of outputs said it.
bool SplitAddNumOutputs(graph::Node* n, AdapterContext*) {
  if (n->inputs.size() > 1 && !n->inputs[1].empty()) return false;
  n->attributes.push_back(IntAttr("num_outputs", static_cast<int64_t>(n->outputs.size())));
  return true;
}

// GridSample-20 renames the interpolation modes (bilinear -> linear, bicubic -> cubic).
bool GridSampleRenameModes(graph::Node* n, AdapterContext*) {
  std::optional<graph::Attribute> mode = TakeAttribute(n, "mode");
  const std::string m = mode ? mode->s : "bilinear";
  SetStringAttribute(n, "mode", m == "bilinear" ? "linear" : m == "bicubic" ? "cubic" : m);
  return true;
}

// RoiAlign-16 adds coordinate_transformation_mode with default half_pixel; RoiAlign-10 always
// mapped coordinates the output_half_pixel way, so that is written out.
bool RoiAlignKeepOutputHalfPixel(graph::Node* n, AdapterContext*) {
  if (n->FindAttribute("coordinate_transformation_mode")) return false;
  SetStringAttribute(n, "coordinate_transformation_mode", "output_half_pixel");
  return true;
}

bool NoAdapter(graph::Node* n, AdapterContext*) {
  Refuse(*n, "the op changed form and this upgrade has no adapter for it");
}

}  // namespace simplecpp::convert::detail
