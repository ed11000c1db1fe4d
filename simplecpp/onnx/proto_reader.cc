// Shared helpers of the ONNX readers (simplecpp/onnx/proto_reader.h): wire-type-checked field
// access on top of protozero, repeated scalars in both encodings, and error context.
#include "simplecpp/onnx/proto_reader.h"

#include <new>

#include <protozero/exception.hpp>

#include "simplecpp/onnx/proto_fields.h"

namespace simplecpp::onnx::internal {
namespace {

const char* WireTypeName(pbf_wire_type t) {
  switch (t) {
    case pbf_wire_type::varint: return "varint";
    case pbf_wire_type::fixed64: return "fixed64";
    case pbf_wire_type::length_delimited: return "length-delimited";
    case pbf_wire_type::fixed32: return "fixed32";
    default: return "unknown";
  }
}

template <typename T, typename Range>
void AppendRange(const Range& range, std::vector<T>* out) {
  for (auto it = range.begin(); it != range.end(); ++it) out->push_back(static_cast<T>(*it));
}

}  // namespace

void ThrowInvalid(const std::string& message) { throw Error(ErrorCode::kInvalidModel, message); }

void ExpectWireType(const pbf_reader& r, pbf_wire_type want, const char* what) {
  if (r.wire_type() != want) {
    ThrowInvalid(std::string("field ") + what + " (#" + std::to_string(r.tag()) + ") has wire type " +
                 WireTypeName(r.wire_type()) + ", expected " + WireTypeName(want));
  }
}

std::string ReadString(pbf_reader& r, const char* what) {
  ExpectWireType(r, pbf_wire_type::length_delimited, what);
  return r.get_string();
}

protozero::data_view ReadBytesView(pbf_reader& r, const char* what) {
  ExpectWireType(r, pbf_wire_type::length_delimited, what);
  return r.get_view();
}

pbf_reader ReadMessage(pbf_reader& r, const char* what) {
  ExpectWireType(r, pbf_wire_type::length_delimited, what);
  return r.get_message();
}

int64_t ReadInt64(pbf_reader& r, const char* what) {
  ExpectWireType(r, pbf_wire_type::varint, what);
  return r.get_int64();
}

int32_t ReadInt32(pbf_reader& r, const char* what) {
  ExpectWireType(r, pbf_wire_type::varint, what);
  return r.get_int32();
}

float ReadFloat(pbf_reader& r, const char* what) {
  ExpectWireType(r, pbf_wire_type::fixed32, what);
  return r.get_float();
}

void AppendInt64s(pbf_reader& r, const char* what, std::vector<int64_t>* out) {
  if (r.wire_type() == pbf_wire_type::length_delimited) {
    AppendRange(r.get_packed_int64(), out);
  } else {
    out->push_back(ReadInt64(r, what));
  }
}

void AppendInt32s(pbf_reader& r, const char* what, std::vector<int32_t>* out) {
  if (r.wire_type() == pbf_wire_type::length_delimited) {
    AppendRange(r.get_packed_int32(), out);
  } else {
    out->push_back(ReadInt32(r, what));
  }
}

void AppendUInt64s(pbf_reader& r, const char* what, std::vector<uint64_t>* out) {
  if (r.wire_type() == pbf_wire_type::length_delimited) {
    AppendRange(r.get_packed_uint64(), out);
  } else {
    ExpectWireType(r, pbf_wire_type::varint, what);
    out->push_back(r.get_uint64());
  }
}

void AppendFloats(pbf_reader& r, const char* what, std::vector<float>* out) {
  if (r.wire_type() == pbf_wire_type::length_delimited) {
    AppendRange(r.get_packed_float(), out);
  } else {
    out->push_back(ReadFloat(r, what));
  }
}

void AppendDoubles(pbf_reader& r, const char* what, std::vector<double>* out) {
  if (r.wire_type() == pbf_wire_type::length_delimited) {
    AppendRange(r.get_packed_double(), out);
  } else {
    ExpectWireType(r, pbf_wire_type::fixed64, what);
    out->push_back(r.get_double());
  }
}

std::string PeekStringField(pbf_reader msg, uint32_t tag) {
  std::string out;
  try {
    while (msg.next()) {
      if (msg.tag() == tag && msg.wire_type() == pbf_wire_type::length_delimited) {
        out = msg.get_string();
      } else {
        msg.skip();
      }
    }
  } catch (...) {
  }
  return out;
}

std::pair<std::string, std::string> ReadStringEntry(pbf_reader msg) {
  std::pair<std::string, std::string> kv;
  while (msg.next()) {
    switch (msg.tag()) {
      case fields::entry::kKey: kv.first = ReadString(msg, "key"); break;
      case fields::entry::kValue: kv.second = ReadString(msg, "value"); break;
      default: msg.skip();
    }
  }
  return kv;
}

void RethrowWithContext(const std::string& context) {
  try {
    throw;
  } catch (const Error& e) {
    throw Error(e.code(), context + ": " + e.what());
  } catch (const protozero::exception& e) {
    throw Error(ErrorCode::kInvalidModel, context + ": malformed protobuf (" + e.what() + ")");
  } catch (const std::bad_alloc&) {
    throw Error(ErrorCode::kLimitExceeded, context + ": out of memory");
  } catch (const std::length_error& e) {
    throw Error(ErrorCode::kLimitExceeded, context + ": too large (" + e.what() + ")");
  }
}

}  // namespace simplecpp::onnx::internal
