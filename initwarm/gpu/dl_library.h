// DlLibrary: a shared library opened with dlopen, and typed symbol lookup.
// Used to reach NVML and libcuda at run time without a CUDA toolkit at build
// time. Internal to initwarm's GPU-facing code.
#pragma once

#include <memory>
#include <string>

#include "base/status.h"

namespace kc::initwarm {

class DlLibrary {
 public:
  // Opens `soname` (RTLD_NOW | RTLD_LOCAL). Unavailable, naming the library
  // and dlerror(), when it cannot be opened.
  static StatusOr<std::unique_ptr<DlLibrary>> Open(const std::string& soname);
  ~DlLibrary();
  DlLibrary(const DlLibrary&) = delete;
  DlLibrary& operator=(const DlLibrary&) = delete;

  // Looks up `name` and casts it to the function pointer type Fn.
  template <typename Fn>
  StatusOr<Fn> Symbol(const std::string& name) const {
    KC_ASSIGN_OR_RETURN(void* p, RawSymbol(name));
    return reinterpret_cast<Fn>(p);  // NOLINT(cppcoreguidelines-pro-type-reinterpret-cast)
  }

  const std::string& soname() const { return soname_; }

 private:
  DlLibrary(std::string soname, void* handle) : soname_(std::move(soname)), handle_(handle) {}
  StatusOr<void*> RawSymbol(const std::string& name) const;
  std::string soname_;
  void* handle_;
};

}  // namespace kc::initwarm
