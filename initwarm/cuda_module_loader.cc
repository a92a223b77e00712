#include "initwarm/cuda_module_loader.h"

#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

#include "initwarm/dl_library.h"

namespace kc::initwarm {
namespace {

// CUDA driver ABI, declared here so no CUDA headers are needed.
using CUresult = int;
using CUdevice = int;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
constexpr CUresult kCudaSuccess = 0;
constexpr CUresult kCudaNoDevice = 100;
using CuInitFn = CUresult (*)(unsigned int);
using CuDeviceGetCountFn = CUresult (*)(int*);
using CuDeviceGetFn = CUresult (*)(CUdevice*, int);
using CuPrimaryCtxRetainFn = CUresult (*)(CUcontext*, CUdevice);
using CuPrimaryCtxReleaseFn = CUresult (*)(CUdevice);
using CuCtxSetCurrentFn = CUresult (*)(CUcontext);
using CuModuleLoadDataFn = CUresult (*)(CUmodule*, const void*);
using CuModuleUnloadFn = CUresult (*)(CUmodule);
using CuGetErrorFn = CUresult (*)(CUresult, const char**);

class CudaModuleLoader : public ModuleLoader {
 public:
  static StatusOr<std::unique_ptr<ModuleLoader>> Create() {
    auto lib = DlLibrary::Open("libcuda.so.1");
    if (!lib.ok()) {
      return UnavailableError("no NVIDIA GPU visible: " + lib.status().message());
    }
    std::unique_ptr<CudaModuleLoader> l(new CudaModuleLoader(std::move(*lib)));
    KC_RETURN_IF_ERROR(l->Init());
    return std::unique_ptr<ModuleLoader>(std::move(l));
  }

  ~CudaModuleLoader() override {
    if (ctx_ != nullptr && release_ != nullptr) release_(device_);
  }

  Status LoadCubin(std::string_view image, std::string_view name) override {
    if (image.empty()) {
      return FailedPreconditionError(std::string(name) + ": empty module image");
    }
    if (CUresult r = set_current_(ctx_); r != kCudaSuccess) {
      return InternalError("cuCtxSetCurrent: " + Describe(r));
    }
    if (Status s = CheckCudaElfImage(image); !s.ok()) {
      return FailedPreconditionError(
          std::string(name) +
          ": CUDA_ERROR_INVALID_IMAGE (checked before loading): " + s.message());
    }
    // A private, NUL-terminated, malloc-aligned copy: PTX must end in NUL
    // and the driver reads ELF headers in place.
    std::string copy(image);
    CUmodule mod = nullptr;
    CUresult r = load_(&mod, copy.data());
    if (r != kCudaSuccess) {
      return FailedPreconditionError(std::string(name) + ": " + Describe(r));
    }
    if (CUresult u = unload_(mod); u != kCudaSuccess) {
      return InternalError(std::string(name) + ": cuModuleUnload: " + Describe(u));
    }
    return OkStatus();
  }

 private:
  explicit CudaModuleLoader(std::unique_ptr<DlLibrary> lib) : lib_(std::move(lib)) {}

  Status Init() {
    KC_ASSIGN_OR_RETURN(auto init, lib_->Symbol<CuInitFn>("cuInit"));
    KC_ASSIGN_OR_RETURN(auto count, lib_->Symbol<CuDeviceGetCountFn>("cuDeviceGetCount"));
    KC_ASSIGN_OR_RETURN(auto get, lib_->Symbol<CuDeviceGetFn>("cuDeviceGet"));
    KC_ASSIGN_OR_RETURN(auto retain,
                        lib_->Symbol<CuPrimaryCtxRetainFn>("cuDevicePrimaryCtxRetain"));
    auto release = lib_->Symbol<CuPrimaryCtxReleaseFn>("cuDevicePrimaryCtxRelease_v2");
    if (!release.ok()) release = lib_->Symbol<CuPrimaryCtxReleaseFn>("cuDevicePrimaryCtxRelease");
    KC_ASSIGN_OR_RETURN(set_current_, lib_->Symbol<CuCtxSetCurrentFn>("cuCtxSetCurrent"));
    KC_ASSIGN_OR_RETURN(load_, lib_->Symbol<CuModuleLoadDataFn>("cuModuleLoadData"));
    KC_ASSIGN_OR_RETURN(unload_, lib_->Symbol<CuModuleUnloadFn>("cuModuleUnload"));
    KC_ASSIGN_OR_RETURN(error_name_, lib_->Symbol<CuGetErrorFn>("cuGetErrorName"));
    KC_ASSIGN_OR_RETURN(error_string_, lib_->Symbol<CuGetErrorFn>("cuGetErrorString"));
    // Eager loading makes cuModuleLoadData load every function now, so a
    // broken image fails here rather than at a later first launch. Only
    // this process is affected; an explicit setting is kept.
    setenv("CUDA_MODULE_LOADING", "EAGER", /*overwrite=*/0);
    if (CUresult r = init(0); r != kCudaSuccess) {
      return UnavailableError("no NVIDIA GPU visible: cuInit: " + Describe(r));
    }
    int n = 0;
    if (CUresult r = count(&n); r != kCudaSuccess || n == 0) {
      return UnavailableError("no NVIDIA GPU visible: cuDeviceGetCount: " +
                              (r != kCudaSuccess ? Describe(r) : std::string("0 devices")));
    }
    if (CUresult r = get(&device_, 0); r != kCudaSuccess) {
      return UnavailableError("cuDeviceGet(0): " + Describe(r));
    }
    if (CUresult r = retain(&ctx_, device_); r != kCudaSuccess) {
      return UnavailableError("cuDevicePrimaryCtxRetain: " + Describe(r));
    }
    if (release.ok()) release_ = *release;
    return OkStatus();
  }

  // "CUDA_ERROR_NO_BINARY_FOR_GPU: no kernel image is available for ..."
  std::string Describe(CUresult r) const {
    const char* name = nullptr;
    const char* text = nullptr;
    if (error_name_ == nullptr || error_name_(r, &name) != kCudaSuccess || name == nullptr) {
      name = r == kCudaNoDevice ? "CUDA_ERROR_NO_DEVICE" : nullptr;
    }
    if (error_string_ != nullptr) error_string_(r, &text);
    std::string out = name ? name : "CUresult " + std::to_string(r);
    if (text != nullptr) out += std::string(": ") + text;
    return out;
  }

  std::unique_ptr<DlLibrary> lib_;
  CuCtxSetCurrentFn set_current_ = nullptr;
  CuModuleLoadDataFn load_ = nullptr;
  CuModuleUnloadFn unload_ = nullptr;
  CuGetErrorFn error_name_ = nullptr;
  CuGetErrorFn error_string_ = nullptr;
  CuPrimaryCtxReleaseFn release_ = nullptr;
  CUdevice device_ = 0;
  CUcontext ctx_ = nullptr;
};

template <typename T>
T ReadLe(std::string_view b, size_t off) {
  T v{};
  std::memcpy(&v, b.data() + off, sizeof(T));  // x86-64 and arm64 are little-endian
  return v;
}

// off + n*size <= total, without overflow.
bool Fits(uint64_t off, uint64_t n, uint64_t size, uint64_t total) {
  if (off > total) return false;
  if (size != 0 && n > (total - off) / size) return false;
  return true;
}

}  // namespace

Status CheckCudaElfImage(std::string_view b) {
  constexpr size_t kEhdr = 64;
  if (b.size() < 4 || std::memcmp(b.data(),
                                  "\x7f"
                                  "ELF",
                                  4) != 0)
    return OkStatus();
  const uint64_t total = b.size();
  if (b.size() < kEhdr) {
    return InvalidArgumentError("ELF image of " + std::to_string(total) +
                                " bytes is shorter than its 64-byte header");
  }
  if (b[4] != 2 || b[5] != 1) {
    return InvalidArgumentError("not a 64-bit little-endian ELF image (class " +
                                std::to_string(static_cast<int>(b[4])) + ", data " +
                                std::to_string(static_cast<int>(b[5])) + ")");
  }
  constexpr uint16_t kEmCuda = 190;
  if (auto m = ReadLe<uint16_t>(b, 18); m != kEmCuda) {
    return InvalidArgumentError("ELF machine " + std::to_string(m) + " is not EM_CUDA (190)");
  }
  const auto phoff = ReadLe<uint64_t>(b, 32);
  const auto shoff = ReadLe<uint64_t>(b, 40);
  const auto phentsize = ReadLe<uint16_t>(b, 54);
  const auto phnum = ReadLe<uint16_t>(b, 56);
  const auto shentsize = ReadLe<uint16_t>(b, 58);
  const auto shnum = ReadLe<uint16_t>(b, 60);
  const auto shstrndx = ReadLe<uint16_t>(b, 62);
  auto at = [&](const char* what, uint64_t off) {
    return std::string(what) + " at offset " + std::to_string(off) + " lies outside the " +
           std::to_string(total) + "-byte image";
  };
  if (shnum > 0) {
    if (shentsize != 64) {
      return InvalidArgumentError("section header size " + std::to_string(shentsize) +
                                  " is not 64");
    }
    if (!Fits(shoff, shnum, shentsize, total)) {
      return InvalidArgumentError(at("section header table", shoff));
    }
    if (shstrndx >= shnum) {
      return InvalidArgumentError("section name table index " + std::to_string(shstrndx) +
                                  " >= section count " + std::to_string(shnum));
    }
    constexpr uint32_t kShtNobits = 8;
    for (uint16_t i = 0; i < shnum; ++i) {
      const uint64_t h = shoff + uint64_t{i} * shentsize;
      const auto type = ReadLe<uint32_t>(b, h + 4);
      const auto off = ReadLe<uint64_t>(b, h + 24);
      const auto size = ReadLe<uint64_t>(b, h + 32);
      if (type != kShtNobits && !Fits(off, 1, size, total)) {
        return InvalidArgumentError(at(("section " + std::to_string(i)).c_str(), off) + " (size " +
                                    std::to_string(size) + ")");
      }
    }
  }
  if (phnum > 0) {
    if (phentsize != 56) {
      return InvalidArgumentError("program header size " + std::to_string(phentsize) +
                                  " is not 56");
    }
    if (!Fits(phoff, phnum, phentsize, total)) {
      return InvalidArgumentError(at("program header table", phoff));
    }
    for (uint16_t i = 0; i < phnum; ++i) {
      const uint64_t h = phoff + uint64_t{i} * phentsize;
      const auto off = ReadLe<uint64_t>(b, h + 8);
      const auto filesz = ReadLe<uint64_t>(b, h + 32);
      if (!Fits(off, 1, filesz, total)) {
        return InvalidArgumentError(at(("segment " + std::to_string(i)).c_str(), off) + " (size " +
                                    std::to_string(filesz) + ")");
      }
    }
  }
  return OkStatus();
}

namespace {

// --- crash isolation: the loads run in a child process -------------------
// Protocol over a socketpair. Request: u32 name length, u64 image length,
// name, image. Reply (also sent once after start-up): i32 StatusCode, u32
// message length, message.

bool WriteAll(int fd, const void* p, size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = send(fd, c, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= static_cast<size_t>(w);
  }
  return true;
}

bool ReadAll(int fd, void* p, size_t n) {
  char* c = static_cast<char*>(p);
  while (n > 0) {
    ssize_t r = read(fd, c, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return false;
    c += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

bool SendStatus(int fd, const Status& s) {
  auto code = static_cast<int32_t>(s.code());
  auto len = static_cast<uint32_t>(s.message().size());
  return WriteAll(fd, &code, sizeof(code)) && WriteAll(fd, &len, sizeof(len)) &&
         WriteAll(fd, s.message().data(), len);
}

std::optional<Status> ReadStatus(int fd) {
  int32_t code = 0;
  uint32_t len = 0;
  if (!ReadAll(fd, &code, sizeof(code)) || !ReadAll(fd, &len, sizeof(len))) return std::nullopt;
  std::string msg(len, '\0');
  if (!ReadAll(fd, msg.data(), len)) return std::nullopt;
  if (code == 0) return OkStatus();
  return Status(static_cast<StatusCode>(code), std::move(msg));
}

[[noreturn]] void ServeLoads(int fd) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  // The load test must write nothing: with CUDA_CACHE_PATH pointing into
  // the cache view (as in model pods), cuInit creates the ComputeCache
  // there, which turned the view path into a real directory on the H200
  // and made `initwarm wait` refuse to replace it.
  setenv("CUDA_CACHE_DISABLE", "1", /*overwrite=*/1);
  unsetenv("CUDA_CACHE_PATH");
  auto loader = CudaModuleLoader::Create();
  if (!SendStatus(fd, loader.status())) _exit(1);
  if (!loader.ok()) _exit(0);
  // Test hook: KC_LOADER_CRASH_AT=<n> makes this process die of SIGSEGV at
  // its n-th load (0-based), standing in for a driver crash. Unset in
  // production.
  const char* crash_env = std::getenv("KC_LOADER_CRASH_AT");
  const long crash_at = crash_env != nullptr ? std::strtol(crash_env, nullptr, 10) : -1;
  for (long served = 0;; ++served) {
    if (served == crash_at) raise(SIGSEGV);
    uint32_t name_len = 0;
    uint64_t image_len = 0;
    if (!ReadAll(fd, &name_len, sizeof(name_len)) || !ReadAll(fd, &image_len, sizeof(image_len))) {
      _exit(0);  // parent closed: done
    }
    std::string name(name_len, '\0');
    std::string image(image_len, '\0');
    if (!ReadAll(fd, name.data(), name_len) || !ReadAll(fd, image.data(), image_len)) _exit(1);
    if (!SendStatus(fd, (*loader)->LoadCubin(image, name))) _exit(1);
  }
}

std::string DescribeExit(int wstatus) {
  if (WIFSIGNALED(wstatus)) {
    return "killed by signal " + std::to_string(WTERMSIG(wstatus)) + " (" +
           strsignal(WTERMSIG(wstatus)) + ")";
  }
  if (WIFEXITED(wstatus)) return "exited with status " + std::to_string(WEXITSTATUS(wstatus));
  return "ended";
}

// A ModuleLoader whose CUDA work happens in a forked child, so a driver
// crash on a bad image fails that image instead of the whole process. The
// parent never initialises CUDA itself (so forking is safe); a crashed
// child is replaced on the next load.
class IsolatedModuleLoader : public ModuleLoader {
 public:
  static StatusOr<std::unique_ptr<ModuleLoader>> Create() {
    std::unique_ptr<IsolatedModuleLoader> l(new IsolatedModuleLoader());
    KC_RETURN_IF_ERROR(l->Start());
    return std::unique_ptr<ModuleLoader>(std::move(l));
  }
  ~IsolatedModuleLoader() override { Stop(); }

  Status LoadCubin(std::string_view image, std::string_view name) override {
    if (pid_ <= 0) KC_RETURN_IF_ERROR(Start());
    auto name_len = static_cast<uint32_t>(name.size());
    auto image_len = static_cast<uint64_t>(image.size());
    bool sent = WriteAll(fd_, &name_len, sizeof(name_len)) &&
                WriteAll(fd_, &image_len, sizeof(image_len)) &&
                WriteAll(fd_, name.data(), name.size()) &&
                WriteAll(fd_, image.data(), image.size());
    std::optional<Status> reply;
    if (sent) reply = ReadStatus(fd_);
    if (reply) return *reply;
    std::string how = Stop();
    return FailedPreconditionError(std::string(name) +
                                   ": CUDA driver crashed loading this image (loader process " +
                                   how + "); the file is corrupt or not a CUDA image");
  }

 private:
  IsolatedModuleLoader() = default;

  Status Start() {
    std::array<int, 2> sv{};
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv.data()) != 0) {
      return InternalError(std::string("socketpair: ") + strerror(errno));
    }
    pid_t pid = fork();
    if (pid < 0) {
      close(sv[0]);
      close(sv[1]);
      return InternalError(std::string("fork: ") + strerror(errno));
    }
    if (pid == 0) {
      close(sv[0]);
      ServeLoads(sv[1]);
    }
    close(sv[1]);
    fd_ = sv[0];
    pid_ = pid;
    std::optional<Status> hello = ReadStatus(fd_);
    if (!hello) {
      std::string how = Stop();
      return UnavailableError("CUDA module loader process " + how + " while starting");
    }
    if (!hello->ok()) {
      Stop();
      return *hello;
    }
    return OkStatus();
  }

  // Closes the channel and reaps the child; says how it ended.
  std::string Stop() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
    std::string how = "ended";
    if (pid_ > 0) {
      int wstatus = 0;
      while (waitpid(pid_, &wstatus, 0) < 0 && errno == EINTR) {
      }
      how = DescribeExit(wstatus);
    }
    pid_ = -1;
    return how;
  }

  int fd_ = -1;
  pid_t pid_ = -1;
};

}  // namespace

StatusOr<std::unique_ptr<ModuleLoader>> NewCudaModuleLoader() {
  return IsolatedModuleLoader::Create();
}
StatusOr<std::unique_ptr<ModuleLoader>> NewInProcessCudaModuleLoader() {
  return CudaModuleLoader::Create();
}

}  // namespace kc::initwarm
