// MappedFile (simplecpp/io/mapped_file.h): POSIX mmap with a read() fallback, and whole-file
// helpers shared by the ONNX, TensorProto and .npy readers and writers.
#include "simplecpp/io/mapped_file.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include "core/aligned_buffer.h"
#include "simplecpp/error.h"

#if defined(__unix__) || defined(__APPLE__) || defined(__EMSCRIPTEN__)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define SIMPLECPP_HAVE_POSIX_FILES 1
#endif

namespace simplecpp::io {
namespace {

[[noreturn]] void ThrowIo(const std::string& path, const std::string& what) {
  throw Error(ErrorCode::kIo, path + ": " + what);
}

}  // namespace

std::shared_ptr<const MappedFile> MappedFile::Open(const std::string& path, int64_t max_bytes) {
  std::shared_ptr<MappedFile> f(new MappedFile());
  f->path_ = path;
#ifdef SIMPLECPP_HAVE_POSIX_FILES
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) ThrowIo(path, std::string("cannot open: ") + std::strerror(errno));
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) ThrowIo(path, std::string("cannot stat: ") + std::strerror(errno));
  if (!S_ISREG(st.st_mode)) ThrowIo(path, "not a regular file");
  if (st.st_size < 0) ThrowIo(path, "negative file size");
  if (static_cast<int64_t>(st.st_size) > max_bytes) {
    throw Error(ErrorCode::kLimitExceeded, path + ": file has " + std::to_string(st.st_size) +
                                               " bytes, more than the limit of " +
                                               std::to_string(max_bytes));
  }
  const size_t size = static_cast<size_t>(st.st_size);
  f->size_ = size;
  if (size == 0) return f;
#ifndef __EMSCRIPTEN__
  void* p = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (p != MAP_FAILED) {
    f->data_ = static_cast<const char*>(p);
    f->mapped_ = true;
    return f;
  }
#endif
  // Fallback: one read into an aligned buffer.
  f->buffer_ = core::AllocateBuffer(size);
  if (f->buffer_ == nullptr) {
    throw Error(ErrorCode::kLimitExceeded, path + ": out of memory reading the file");
  }
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(fd, static_cast<char*>(f->buffer_) + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) ThrowIo(path, std::string("read failed: ") + std::strerror(errno));
    if (n == 0) ThrowIo(path, "file shrank while reading");
    done += static_cast<size_t>(n);
  }
  f->data_ = static_cast<const char*>(f->buffer_);
  return f;
#else
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) ThrowIo(path, "cannot open");
  const std::streamoff end = in.tellg();
  if (end < 0) ThrowIo(path, "cannot determine the file size");
  if (static_cast<int64_t>(end) > max_bytes) {
    throw Error(ErrorCode::kLimitExceeded, path + ": file is larger than the limit");
  }
  const size_t size = static_cast<size_t>(end);
  f->size_ = size;
  if (size == 0) return f;
  f->buffer_ = core::AllocateBuffer(size);
  if (f->buffer_ == nullptr) throw Error(ErrorCode::kLimitExceeded, path + ": out of memory");
  in.seekg(0);
  if (!in.read(static_cast<char*>(f->buffer_), static_cast<std::streamsize>(size))) {
    ThrowIo(path, "read failed");
  }
  f->data_ = static_cast<const char*>(f->buffer_);
  return f;
#endif
}

MappedFile::~MappedFile() {
#ifdef SIMPLECPP_HAVE_POSIX_FILES
  if (mapped_) ::munmap(const_cast<char*>(data_), size_);
#endif
  core::FreeBuffer(buffer_);
}

void MappedFile::ReleasePages(const void* begin, size_t bytes) const {
#if defined(SIMPLECPP_HAVE_POSIX_FILES) && !defined(__EMSCRIPTEN__)
  if (!mapped_ || bytes == 0) return;
  const auto first = reinterpret_cast<uintptr_t>(begin);
  const auto base = reinterpret_cast<uintptr_t>(data_);
  if (first < base || first - base > size_ || bytes > size_ - (first - base)) return;
  const long page_size = ::sysconf(_SC_PAGESIZE);
  if (page_size <= 0) return;
  const auto page = static_cast<uintptr_t>(page_size);
  // Whole pages only: the pages at either end may hold bytes of neighbouring tensors.
  const uintptr_t lo = (first + page - 1) / page * page;
  const uintptr_t hi = (first + bytes) / page * page;
  // MAP_PRIVATE, PROT_READ and never written: MADV_DONTNEED drops the pages, and a later access
  // reads them from the file again.
  if (hi > lo) ::madvise(reinterpret_cast<void*>(lo), hi - lo, MADV_DONTNEED);
#else
  (void)begin;
  (void)bytes;
#endif
}

std::string ReadFileToString(const std::string& path) {
  std::shared_ptr<const MappedFile> f = MappedFile::Open(path);
  return std::string(f->data(), f->size());
}

void WriteStringToFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) ThrowIo(path, "cannot open for writing");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.flush();
  if (!out) ThrowIo(path, "write failed");
}

}  // namespace simplecpp::io
