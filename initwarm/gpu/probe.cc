#include "initwarm/gpu/probe.h"

#include <sys/utsname.h>

#include <array>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "initwarm/gpu/dl_library.h"

namespace kc::initwarm {
namespace {

// NVML and libcuda ABI, declared here so no CUDA headers are needed.
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
constexpr nvmlReturn_t kNvmlNotSupported = 3;
constexpr nvmlReturn_t kNvmlNotFound = 6;
constexpr unsigned kNvmlDeviceMigEnable = 1;
struct NvmlDeviceAttributes {
  unsigned int multiprocessorCount;
  unsigned int sharedCopyEngineCount;
  unsigned int sharedDecoderCount;
  unsigned int sharedEncoderCount;
  unsigned int sharedJpegCount;
  unsigned int sharedOfaCount;
  unsigned int gpuInstanceSliceCount;
  unsigned int computeInstanceSliceCount;
  unsigned long long memorySizeMB;
};
using NvmlInitFn = nvmlReturn_t (*)();
using NvmlShutdownFn = nvmlReturn_t (*)();
using NvmlErrorStringFn = const char* (*)(nvmlReturn_t);
using NvmlDriverVersionFn = nvmlReturn_t (*)(char*, unsigned int);
using NvmlCountFn = nvmlReturn_t (*)(unsigned int*);
using NvmlHandleByIndexFn = nvmlReturn_t (*)(unsigned int, nvmlDevice_t*);
using NvmlNameFn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);
using NvmlCcFn = nvmlReturn_t (*)(nvmlDevice_t, int*, int*);
using NvmlMigModeFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, unsigned int*);
using NvmlMaxMigFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);
using NvmlMigHandleFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlDevice_t*);
using NvmlAttributesFn = nvmlReturn_t (*)(nvmlDevice_t, NvmlDeviceAttributes*);
using CuDriverGetVersionFn = int (*)(int*);

constexpr std::string_view kNoGpu = "no NVIDIA GPU visible: ";

class NvmlProber : public Prober {
 public:
  StatusOr<ProbeResult> Probe() override {
    auto nvml = DlLibrary::Open("libnvidia-ml.so.1");
    if (!nvml.ok()) {
      return UnavailableError(std::string(kNoGpu) + nvml.status().message() +
                              " (is the NVIDIA driver mounted into this container?)");
    }
    lib_ = std::move(*nvml);
    KC_ASSIGN_OR_RETURN(auto init, lib_->Symbol<NvmlInitFn>("nvmlInit_v2"));
    KC_ASSIGN_OR_RETURN(error_string_, lib_->Symbol<NvmlErrorStringFn>("nvmlErrorString"));
    KC_ASSIGN_OR_RETURN(auto shutdown, lib_->Symbol<NvmlShutdownFn>("nvmlShutdown"));
    if (nvmlReturn_t r = init(); r != kNvmlSuccess) {
      return UnavailableError(std::string(kNoGpu) + "nvmlInit_v2 failed: " + Err(r));
    }
    auto result = ProbeInitialised();
    shutdown();
    return result;
  }

 private:
  std::string Err(nvmlReturn_t r) const {
    const char* s = error_string_ ? error_string_(r) : nullptr;
    return std::string(s ? s : "unknown NVML error") + " (" + std::to_string(r) + ")";
  }

  StatusOr<ProbeResult> ProbeInitialised() {
    KC_ASSIGN_OR_RETURN(auto driver_version,
                        lib_->Symbol<NvmlDriverVersionFn>("nvmlSystemGetDriverVersion"));
    KC_ASSIGN_OR_RETURN(auto count_fn, lib_->Symbol<NvmlCountFn>("nvmlDeviceGetCount_v2"));
    KC_ASSIGN_OR_RETURN(auto handle_fn,
                        lib_->Symbol<NvmlHandleByIndexFn>("nvmlDeviceGetHandleByIndex_v2"));
    KC_ASSIGN_OR_RETURN(auto name_fn, lib_->Symbol<NvmlNameFn>("nvmlDeviceGetName"));
    KC_ASSIGN_OR_RETURN(auto cc_fn, lib_->Symbol<NvmlCcFn>("nvmlDeviceGetCudaComputeCapability"));
    // MIG entry points are absent from old drivers; MIG is then off.
    auto mig_mode_fn = lib_->Symbol<NvmlMigModeFn>("nvmlDeviceGetMigMode");

    std::array<char, 96> buf{};
    if (nvmlReturn_t r = driver_version(buf.data(), buf.size()); r != kNvmlSuccess) {
      return UnavailableError("nvmlSystemGetDriverVersion failed: " + Err(r));
    }
    std::string driver(buf.data());

    unsigned count = 0;
    if (nvmlReturn_t r = count_fn(&count); r != kNvmlSuccess) {
      return UnavailableError(std::string(kNoGpu) + "nvmlDeviceGetCount_v2 failed: " + Err(r));
    }
    std::vector<GpuDevice> devices;
    for (unsigned i = 0; i < count; ++i) {
      nvmlDevice_t dev = nullptr;
      if (nvmlReturn_t r = handle_fn(i, &dev); r != kNvmlSuccess) {
        return UnavailableError("nvmlDeviceGetHandleByIndex_v2(" + std::to_string(i) +
                                ") failed: " + Err(r));
      }
      GpuDevice d;
      buf.fill(0);
      if (nvmlReturn_t r = name_fn(dev, buf.data(), buf.size()); r != kNvmlSuccess) {
        return UnavailableError("nvmlDeviceGetName(" + std::to_string(i) + ") failed: " + Err(r));
      }
      d.nvml_name = buf.data();
      if (nvmlReturn_t r = cc_fn(dev, &d.cc_major, &d.cc_minor); r != kNvmlSuccess) {
        return UnavailableError("nvmlDeviceGetCudaComputeCapability(" + std::to_string(i) +
                                ") failed: " + Err(r));
      }
      unsigned current = 0;
      unsigned pending = 0;
      if (mig_mode_fn.ok() && (*mig_mode_fn)(dev, &current, &pending) == kNvmlSuccess &&
          current == kNvmlDeviceMigEnable) {
        KC_ASSIGN_OR_RETURN(auto profiles, MigProfiles(dev, i));
        for (auto& p : profiles) {
          GpuDevice m = d;
          m.mig_profile = std::move(p);
          devices.push_back(std::move(m));
        }
        continue;
      }
      devices.push_back(std::move(d));
    }

    int cuda_version = 0;
    auto cuda = DlLibrary::Open("libcuda.so.1");
    if (!cuda.ok()) {
      return UnavailableError(std::string(kNoGpu) + cuda.status().message() +
                              " (NVML answered but libcuda did not: is the driver's "
                              "compute library mounted?)");
    }
    KC_ASSIGN_OR_RETURN(auto get_version,
                        (*cuda)->Symbol<CuDriverGetVersionFn>("cuDriverGetVersion"));
    if (int r = get_version(&cuda_version); r != 0) {
      return UnavailableError("cuDriverGetVersion failed with CUresult " + std::to_string(r));
    }
    utsname u{};
    uname(&u);
    KC_ASSIGN_OR_RETURN(auto facts, NodeFactsFromDevices(devices, driver, cuda_version, u.machine));
    return ProbeResult{std::move(facts), "nvml"};
  }

  // Profiles of the MIG devices that exist on a GPU in MIG mode.
  StatusOr<std::vector<std::string>> MigProfiles(nvmlDevice_t dev, unsigned index) {
    KC_ASSIGN_OR_RETURN(auto max_fn, lib_->Symbol<NvmlMaxMigFn>("nvmlDeviceGetMaxMigDeviceCount"));
    KC_ASSIGN_OR_RETURN(auto mig_fn,
                        lib_->Symbol<NvmlMigHandleFn>("nvmlDeviceGetMigDeviceHandleByIndex"));
    KC_ASSIGN_OR_RETURN(auto attr_fn, lib_->Symbol<NvmlAttributesFn>("nvmlDeviceGetAttributes_v2"));
    unsigned max = 0;
    if (nvmlReturn_t r = max_fn(dev, &max); r != kNvmlSuccess) {
      return UnavailableError("nvmlDeviceGetMaxMigDeviceCount(" + std::to_string(index) +
                              ") failed: " + Err(r));
    }
    std::vector<std::string> out;
    for (unsigned j = 0; j < max; ++j) {
      nvmlDevice_t mig = nullptr;
      nvmlReturn_t r = mig_fn(dev, j, &mig);
      if (r == kNvmlNotFound || r == kNvmlNotSupported) continue;  // slot not populated
      if (r != kNvmlSuccess) {
        return UnavailableError("nvmlDeviceGetMigDeviceHandleByIndex failed: " + Err(r));
      }
      NvmlDeviceAttributes a{};
      if (r = attr_fn(mig, &a); r != kNvmlSuccess) {
        return UnavailableError("nvmlDeviceGetAttributes_v2 failed: " + Err(r));
      }
      out.push_back(
          MigProfileName(a.gpuInstanceSliceCount, a.computeInstanceSliceCount, a.memorySizeMB));
    }
    return out;
  }

  std::unique_ptr<DlLibrary> lib_;
  NvmlErrorStringFn error_string_ = nullptr;
};

}  // namespace

std::unique_ptr<Prober> NewNvmlProber() { return std::make_unique<NvmlProber>(); }

std::string KubeArch(std::string_view m) {
  if (m == "x86_64") return "amd64";
  if (m == "aarch64" || m == "arm64") return "arm64";
  if (m == "ppc64le") return "ppc64le";
  return std::string(m);
}

std::string CudaDriverVersionString(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string MigProfileName(unsigned gpu_slices, unsigned compute_slices,
                           unsigned long long memory_mb) {
  unsigned long long gb = (memory_mb + 1023) / 1024;
  std::string g = std::to_string(gpu_slices) + "g." + std::to_string(gb) + "gb";
  if (compute_slices == 0 || compute_slices == gpu_slices) return g;
  return std::to_string(compute_slices) + "c." + g;
}

StatusOr<core::NodeFacts> NodeFactsFromDevices(const std::vector<GpuDevice>& devices,
                                               std::string_view driver_version,
                                               int cuda_driver_version,
                                               std::string_view uname_machine) {
  if (devices.empty()) {
    return UnavailableError(std::string(kNoGpu) +
                            "NVML reports 0 devices (is a GPU assigned to this container?)");
  }
  if (driver_version.empty()) return UnavailableError("NVML reported an empty driver version");
  if (cuda_driver_version <= 0) {
    return UnavailableError("cuDriverGetVersion reported " + std::to_string(cuda_driver_version));
  }
  core::NodeFacts f;
  const GpuDevice& first = devices.front();
  f.gpu_product = core::GfdProductName(first.nvml_name, first.mig_profile);
  f.compute_capability = std::to_string(first.cc_major) + "." + std::to_string(first.cc_minor);
  for (size_t i = 1; i < devices.size(); ++i) {
    const GpuDevice& d = devices[i];
    std::string product = core::GfdProductName(d.nvml_name, d.mig_profile);
    std::string cc = std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor);
    if (product != f.gpu_product || cc != f.compute_capability) {
      std::string msg = "this node has GPUs of different kinds (";
      msg += f.gpu_product;
      msg += " sm ";
      msg += f.compute_capability;
      msg += " and ";
      msg += product;
      msg += " sm ";
      msg += cc;
      msg +=
          "); a node must have one GPU kind to have one fingerprint: give the container "
          "GPUs of one kind (or, with MIG, use the single strategy)";
      return FailedPreconditionError(msg);
    }
  }
  f.driver_version = std::string(driver_version);
  f.cuda_driver_version = CudaDriverVersionString(cuda_driver_version);
  f.arch = KubeArch(uname_machine);
  return f;
}

std::map<std::string, std::string> NodeLabels(const core::NodeFacts& f) {
  namespace l = core::labels;
  std::map<std::string, std::string> out;
  auto put = [&out](std::string_view k, std::string v) {
    out.emplace(std::string(k), std::move(v));
  };
  put(l::kGpuProduct, f.gpu_product);
  auto dot = f.compute_capability.find('.');
  put(l::kComputeMajor, f.compute_capability.substr(0, dot));
  put(l::kComputeMinor, dot == std::string::npos ? "" : f.compute_capability.substr(dot + 1));
  put(l::kDriverFull, f.driver_version);
  std::vector<std::string> parts;
  std::stringstream ss(f.driver_version);
  for (std::string p; std::getline(ss, p, '.');) parts.push_back(p);
  if (parts.size() >= 2) {
    put(l::kDriverMajor, parts[0]);
    put(l::kDriverMinor, parts[1]);
    if (parts.size() >= 3) put(l::kDriverRevision, parts[2]);
  }
  put(l::kRuntimeFull, f.cuda_driver_version);
  auto cdot = f.cuda_driver_version.find('.');
  put(l::kRuntimeMajor, f.cuda_driver_version.substr(0, cdot));
  put(l::kRuntimeMinor, cdot == std::string::npos ? "" : f.cuda_driver_version.substr(cdot + 1));
  put(l::kArch, f.arch);
  return out;
}

std::string NodeFactsJson(const core::NodeFacts& f) {
  nlohmann::json j = {{"arch", f.arch},
                      {"computeCapability", f.compute_capability},
                      {"cudaDriver", f.cuda_driver_version},
                      {"driver", f.driver_version},
                      {"gpuProduct", f.gpu_product}};
  return j.dump();
}

StatusOr<core::NodeFacts> NodeFactsFromJson(std::string_view json) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgumentError("node facts are not a JSON object");
  }
  core::NodeFacts f;
  const std::array<std::pair<const char*, std::string*>, 5> fields = {{
      {"gpuProduct", &f.gpu_product},
      {"computeCapability", &f.compute_capability},
      {"driver", &f.driver_version},
      {"cudaDriver", &f.cuda_driver_version},
      {"arch", &f.arch},
  }};
  for (const auto& [key, out] : fields) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string() || it->get<std::string>().empty()) {
      return InvalidArgumentError(std::string("node facts field \"") + key +
                                  "\" is missing or not a non-empty string");
    }
    *out = it->get<std::string>();
  }
  return f;
}

}  // namespace kc::initwarm
