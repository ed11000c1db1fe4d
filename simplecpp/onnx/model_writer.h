// graph::Model -> ONNX ModelProto bytes (protozero), for the built-in models and test fixtures.
#pragma once

#include <string>

#include "graph/ir.h"

namespace simplecpp::onnx {

std::string WriteModel(const graph::Model& model);
void WriteModelFile(const std::string& path, const graph::Model& model);

}  // namespace simplecpp::onnx
