#include "initwarm/gpu/dl_library.h"

#include <dlfcn.h>

namespace kc::initwarm {

StatusOr<std::unique_ptr<DlLibrary>> DlLibrary::Open(const std::string& soname) {
  void* h = dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr) {
    const char* err = dlerror();
    return UnavailableError("cannot load " + soname + ": " + (err ? err : "unknown dlopen error"));
  }
  return std::unique_ptr<DlLibrary>(new DlLibrary(soname, h));
}

DlLibrary::~DlLibrary() {
  // Driver libraries are never unloaded: libcuda and NVML keep threads and
  // atexit handlers that crash when their code is unmapped under them.
}

StatusOr<void*> DlLibrary::RawSymbol(const std::string& name) const {
  dlerror();
  void* p = dlsym(handle_, name.c_str());
  if (p == nullptr) {
    const char* err = dlerror();
    return UnavailableError(soname_ + " has no symbol " + name + " (" +
                            (err ? err : "null symbol") +
                            "); the NVIDIA driver is too old or incomplete");
  }
  return p;
}

}  // namespace kc::initwarm
