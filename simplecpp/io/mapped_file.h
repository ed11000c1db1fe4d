// Read-only access to a whole file: memory-mapped where the platform allows it (POSIX mmap),
// otherwise read once into an aligned buffer. Model loading borrows tensor bytes from it, so the
// mapping lives as long as any tensor that points into it (hold it through a shared_ptr).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace simplecpp::io {

class MappedFile {
 public:
  // Opens and maps (or reads) a regular file. Throws Error(kIo) when it cannot, and
  // Error(kLimitExceeded) when it is larger than max_bytes.
  static std::shared_ptr<const MappedFile> Open(const std::string& path,
                                                int64_t max_bytes = INT64_MAX);

  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const char* data() const { return data_; }
  size_t size() const { return size_; }
  bool mapped() const { return mapped_; }  // false: the bytes were read into a buffer
  const std::string& path() const { return path_; }
  // Gives back the memory of the whole pages inside [begin, begin + bytes) when the file is
  // mapped (a hint, not a change: a later read of those bytes faults them in from the file again,
  // with the same contents). For bytes that were read once at load (copied or repacked) and are
  // not needed while running. Ranges outside the mapping, and the read fallback, are left alone.
  void ReleasePages(const void* begin, size_t bytes) const;

 private:
  MappedFile() = default;
  const char* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
  void* buffer_ = nullptr;  // the read fallback's buffer (64-byte aligned)
  std::string path_;
};

// Reads a whole file into a string. Throws Error(kIo).
std::string ReadFileToString(const std::string& path);
// Writes bytes to a file, replacing it. Throws Error(kIo).
void WriteStringToFile(const std::string& path, const std::string& bytes);

}  // namespace simplecpp::io
