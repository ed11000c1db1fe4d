// SharedFn<R(Args...)>: a copyable callable wrapper whose copies share one immutable callable,
// held by a shared_ptr. It is what RunFn and OpFactory are (graph/op.h).
//
// Why not std::function: a std::function copy clones the callable, so every lambda stored in one
// instantiates clone, destroy and target code beside its body (for the ops' run lambdas about
// 0.1 MB of the WebAssembly package), and copying a prepared step's RunFn copies its captured
// plan. Here a copy is a reference count, and a lambda costs its body, one call trampoline and
// its shared_ptr control block. The callable is only ever called through a const reference (ops
// and their RunFns are immutable and shared by concurrent sessions), so lambdas must not be
// `mutable`; calling an empty SharedFn is a bug (the executor never does).
#pragma once

#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>

namespace simplecpp::graph {

template <typename Signature>
class SharedFn;

template <typename R, typename... Args>
class SharedFn<R(Args...)> {
 public:
  SharedFn() = default;
  SharedFn(std::nullptr_t) {}  // NOLINT(google-explicit-constructor): like std::function
  template <typename F, typename D = std::decay_t<F>,
            typename = std::enable_if_t<!std::is_same_v<D, SharedFn> &&
                                        std::is_invocable_r_v<R, const D&, Args...>>>
  SharedFn(F&& f)  // NOLINT(google-explicit-constructor): lambdas convert implicitly
      : callable_(std::make_shared<const D>(std::forward<F>(f))), call_(&Call<D>) {}

  R operator()(Args... args) const { return call_(callable_.get(), std::forward<Args>(args)...); }
  explicit operator bool() const { return callable_ != nullptr; }
  friend bool operator==(const SharedFn& f, std::nullptr_t) { return !f; }
  friend bool operator!=(const SharedFn& f, std::nullptr_t) { return static_cast<bool>(f); }

 private:
  template <typename D>
  static R Call(const void* callable, Args... args) {
    return (*static_cast<const D*>(callable))(std::forward<Args>(args)...);
  }

  std::shared_ptr<const void> callable_;
  R (*call_)(const void*, Args...) = nullptr;
};

}  // namespace simplecpp::graph
