// Field numbers of the ONNX protobuf schema (onnx.proto3), for protozero's reader and writer.
// Written from the published schema; only the messages and fields this library reads or writes
// are listed. Everything else is skipped as an unknown field.
#pragma once

#include <cstdint>

namespace simplecpp::onnx::fields {

using Tag = uint32_t;

namespace model {  // ModelProto
constexpr Tag kIrVersion = 1;        // int64
constexpr Tag kProducerName = 2;     // string
constexpr Tag kProducerVersion = 3;  // string
constexpr Tag kDomain = 4;           // string
constexpr Tag kModelVersion = 5;     // int64
constexpr Tag kDocString = 6;        // string
constexpr Tag kGraph = 7;            // GraphProto
constexpr Tag kOpsetImport = 8;      // repeated OperatorSetIdProto
constexpr Tag kMetadataProps = 14;   // repeated StringStringEntryProto
constexpr Tag kTrainingInfo = 20;    // repeated TrainingInfoProto (ignored)
constexpr Tag kFunctions = 25;       // repeated FunctionProto
}  // namespace model

namespace opset {  // OperatorSetIdProto
constexpr Tag kDomain = 1;   // string
constexpr Tag kVersion = 2;  // int64
}  // namespace opset

namespace entry {  // StringStringEntryProto
constexpr Tag kKey = 1;    // string
constexpr Tag kValue = 2;  // string
}  // namespace entry

namespace graph {  // GraphProto
constexpr Tag kNode = 1;                     // repeated NodeProto
constexpr Tag kName = 2;                     // string
constexpr Tag kInitializer = 5;              // repeated TensorProto
constexpr Tag kDocString = 10;               // string
constexpr Tag kInput = 11;                   // repeated ValueInfoProto
constexpr Tag kOutput = 12;                  // repeated ValueInfoProto
constexpr Tag kValueInfo = 13;               // repeated ValueInfoProto
constexpr Tag kQuantizationAnnotation = 14;  // repeated TensorAnnotation (ignored)
constexpr Tag kSparseInitializer = 15;       // repeated SparseTensorProto
constexpr Tag kMetadataProps = 16;           // repeated StringStringEntryProto (ignored)
}  // namespace graph

namespace node {  // NodeProto
constexpr Tag kInput = 1;      // repeated string
constexpr Tag kOutput = 2;     // repeated string
constexpr Tag kName = 3;       // string
constexpr Tag kOpType = 4;     // string
constexpr Tag kAttribute = 5;  // repeated AttributeProto
constexpr Tag kDocString = 6;  // string
constexpr Tag kDomain = 7;     // string
constexpr Tag kOverload = 8;   // string (ignored)
}  // namespace node

namespace attribute {  // AttributeProto
constexpr Tag kName = 1;            // string
constexpr Tag kF = 2;               // float
constexpr Tag kI = 3;               // int64
constexpr Tag kS = 4;               // bytes
constexpr Tag kT = 5;               // TensorProto
constexpr Tag kG = 6;               // GraphProto
constexpr Tag kFloats = 7;          // repeated float
constexpr Tag kInts = 8;            // repeated int64
constexpr Tag kStrings = 9;         // repeated bytes
constexpr Tag kTensors = 10;        // repeated TensorProto
constexpr Tag kGraphs = 11;         // repeated GraphProto
constexpr Tag kDocString = 13;      // string
constexpr Tag kTp = 14;             // TypeProto
constexpr Tag kTypeProtos = 15;     // repeated TypeProto
constexpr Tag kType = 20;           // AttributeType enum
constexpr Tag kRefAttrName = 21;    // string
constexpr Tag kSparseTensor = 22;   // SparseTensorProto
constexpr Tag kSparseTensors = 23;  // repeated SparseTensorProto
}  // namespace attribute

namespace tensor {  // TensorProto
constexpr Tag kDims = 1;            // repeated int64
constexpr Tag kDataType = 2;        // int32 (DataType enum)
constexpr Tag kSegment = 3;         // Segment (refused)
constexpr Tag kFloatData = 4;       // repeated float
constexpr Tag kInt32Data = 5;       // repeated int32
constexpr Tag kStringData = 6;      // repeated bytes
constexpr Tag kInt64Data = 7;       // repeated int64
constexpr Tag kName = 8;            // string
constexpr Tag kRawData = 9;         // bytes
constexpr Tag kDoubleData = 10;     // repeated double
constexpr Tag kUint64Data = 11;     // repeated uint64
constexpr Tag kDocString = 12;      // string
constexpr Tag kExternalData = 13;   // repeated StringStringEntryProto
constexpr Tag kDataLocation = 14;   // DataLocation enum: DEFAULT = 0, EXTERNAL = 1
constexpr Tag kMetadataProps = 16;  // repeated StringStringEntryProto (ignored)
constexpr int32_t kLocationDefault = 0;
constexpr int32_t kLocationExternal = 1;
}  // namespace tensor

namespace sparse_tensor {  // SparseTensorProto
constexpr Tag kValues = 1;   // TensorProto, shape [NNZ]
constexpr Tag kIndices = 2;  // TensorProto (int64), shape [NNZ] (linear) or [NNZ, rank]
constexpr Tag kDims = 3;     // repeated int64: the dense shape
}  // namespace sparse_tensor

namespace value_info {  // ValueInfoProto
constexpr Tag kName = 1;       // string
constexpr Tag kType = 2;       // TypeProto
constexpr Tag kDocString = 3;  // string
}  // namespace value_info

namespace type {  // TypeProto
constexpr Tag kTensorType = 1;        // TypeProto.Tensor
constexpr Tag kSequenceType = 4;      // TypeProto.Sequence
constexpr Tag kMapType = 5;           // TypeProto.Map
constexpr Tag kDenotation = 6;        // string (ignored)
constexpr Tag kOpaqueType = 7;        // TypeProto.Opaque (read as an unknown type)
constexpr Tag kSparseTensorType = 8;  // TypeProto.SparseTensor
constexpr Tag kOptionalType = 9;      // TypeProto.Optional
}  // namespace type

namespace tensor_type {  // TypeProto.Tensor and TypeProto.SparseTensor
constexpr Tag kElemType = 1;  // int32 (DataType enum)
constexpr Tag kShape = 2;     // TensorShapeProto
}  // namespace tensor_type

namespace elem_type {  // TypeProto.Sequence and TypeProto.Optional
constexpr Tag kElemType = 1;  // TypeProto
}  // namespace elem_type

namespace map_type {  // TypeProto.Map
constexpr Tag kKeyType = 1;    // int32 (DataType enum)
constexpr Tag kValueType = 2;  // TypeProto
}  // namespace map_type

namespace shape {  // TensorShapeProto
constexpr Tag kDim = 1;  // repeated Dimension
}  // namespace shape

namespace dimension {  // TensorShapeProto.Dimension
constexpr Tag kDimValue = 1;   // int64
constexpr Tag kDimParam = 2;   // string
constexpr Tag kDenotation = 3; // string (ignored)
}  // namespace dimension

namespace function {  // FunctionProto
constexpr Tag kName = 1;            // string
constexpr Tag kInput = 4;           // repeated string
constexpr Tag kOutput = 5;          // repeated string
constexpr Tag kAttribute = 6;       // repeated string (attributes without defaults)
constexpr Tag kNode = 7;            // repeated NodeProto
constexpr Tag kDocString = 8;       // string (ignored)
constexpr Tag kOpsetImport = 9;     // repeated OperatorSetIdProto
constexpr Tag kDomain = 10;         // string
constexpr Tag kAttributeProto = 11; // repeated AttributeProto (attributes with defaults)
constexpr Tag kValueInfo = 12;      // repeated ValueInfoProto (ignored)
constexpr Tag kOverload = 13;       // string (ignored)
}  // namespace function

}  // namespace simplecpp::onnx::fields
