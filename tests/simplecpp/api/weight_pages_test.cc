// Mapped weight pages given back after load (simplecpp/api/weight_pages.cc, MappedFile::ReleasePages):
// a blocked int4 weight repacked for MatMulNBits (fused) or dequantized to float32 (unfused) leaves
// its mapped bytes unread while running, so they must not stay resident; the results stay the
// same bits as the in-memory model's, and the bytes still read back right. Resident sizes come
// from /proc/self/smaps (Linux only).
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "simplecpp/builder.h"
#include "simplecpp/io/mapped_file.h"

namespace simplecpp {
namespace {

namespace fs = std::filesystem;

// Resident kilobytes of this process's mappings of `path` (-1 when none is found).
int64_t ResidentKbOfMapping(const std::string& path) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_mapping = false;
  int64_t kb = -1;
  while (std::getline(smaps, line)) {
    std::istringstream fields(line);
    std::string first;
    fields >> first;
    if (!first.empty() && first.back() == ':') {  // "Rss:   123 kB" and the other fields
      int64_t value = 0;
      if (in_mapping && first == "Rss:" && (fields >> value)) kb = (kb < 0 ? 0 : kb) + value;
      continue;
    }
    // A mapping's header: "start-end perms offset dev inode [path]".
    in_mapping = line.size() >= path.size() &&
                 line.compare(line.size() - path.size(), path.size(), path) == 0;
  }
  return kb;
}

TEST_CASE("MappedFile::ReleasePages keeps the bytes and ignores ranges outside the mapping") {
  const fs::path path = fs::temp_directory_path() / "simplecpp_release_pages_test.bin";
  std::string bytes(5 * 4096 + 123, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i * 7 + 3);
  { std::ofstream(path, std::ios::binary) << bytes; }
  {
    auto file = io::MappedFile::Open(path.string());
    REQUIRE(file->size() == bytes.size());
    file->ReleasePages(file->data() + 100, 3 * 4096);       // inner whole pages only
    file->ReleasePages(file->data() + 10, file->size());    // runs past the end: ignored
    file->ReleasePages(bytes.data(), 4096);                 // not in the mapping: ignored
    file->ReleasePages(file->data(), 0);
    CHECK(std::string(file->data(), file->size()) == bytes);
  }
  fs::remove(path);
}

#ifdef __linux__
TEST_CASE("a blocked int4 weight read once at load does not stay resident") {
  const int64_t k = 1024, n = 1024, block = 32;
  std::mt19937 rng(7);
  Tensor w(DType::kInt4, {k, n});
  auto* wb = static_cast<uint8_t*>(w.raw_data());
  for (size_t i = 0; i < w.byte_size(); ++i) wb[i] = static_cast<uint8_t>(rng());
  Tensor scale(DType::kFloat32, {k / block, n});
  for (int64_t i = 0; i < scale.num_elements(); ++i) scale.data<float>()[i] = 0.01f + 0.001f * (i % 7);
  Tensor a(DType::kFloat32, {2, k});
  for (int64_t i = 0; i < a.num_elements(); ++i) a.data<float>()[i] = static_cast<float>(i % 13) - 6.0f;

  GraphBuilder b(21);
  const std::string ai = b.AddInput("a", DType::kFloat32, {2, k});
  const std::string wf = b.AddNode("DequantizeLinear", {b.AddInitializer("w", w), b.AddInitializer("scale", scale)},
                                   {{"axis", 0}, {"block_size", block}});
  b.AddOutput(b.AddNode("MatMul", {ai, wf}, {}, NodeOptions{"", "mm", {"y"}}));
  const fs::path path = fs::temp_directory_path() / "simplecpp_weight_pages_test.onnx";
  b.SaveOnnx(path.string());
  const int64_t file_kb = static_cast<int64_t>(fs::file_size(path)) / 1024;
  REQUIRE(file_kb >= 512);

  for (bool fuse : {true, false}) {
    CAPTURE(fuse);
    LoadOptions options;
    options.fuse_quantized = fuse;
    const Tensor want = Session(b.Build(options)).Run({{"a", a}}).at("y");
    {
      const Model model = Model::Load(path.string(), options);
      const int64_t resident_kb = ResidentKbOfMapping(path.string());
      CAPTURE(resident_kb);
      CAPTURE(file_kb);
      // The protobuf framing and the pages the kernel maps around it, not the weights.
      if (resident_kb >= 0) CHECK(resident_kb * 4 < file_kb);
      const Tensor got = Session(model).Run({{"a", a}}).at("y");
      REQUIRE(got.byte_size() == want.byte_size());
      CHECK(std::memcmp(got.raw_data(), want.raw_data(), got.byte_size()) == 0);
    }
  }
  fs::remove(path);
}
#endif

}  // namespace
}  // namespace simplecpp
