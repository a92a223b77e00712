#include "core/fingerprint.h"

#include <array>
#include <cctype>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/canonical_json.h"

namespace kc::core {
namespace {

using Labels = std::map<std::string, std::string>;

std::optional<std::string> Get(const Labels& l, std::string_view key) {
  auto it = l.find(std::string(key));
  if (it == l.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

bool AllDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

Status Missing(std::string_view what, std::string_view label) {
  return InvalidArgumentError("node label " + std::string(label) + " is missing or empty (" +
                              std::string(what) +
                              "); install NVIDIA GPU Feature Discovery (or the GPU Operator) "
                              "so the node carries its GPU labels");
}

Status Malformed(std::string_view label, std::string_view value, std::string_view want) {
  return InvalidArgumentError("node label " + std::string(label) + "=\"" + std::string(value) +
                              "\" is malformed: want " + std::string(want));
}

StatusOr<std::string> ReadDriver(const Labels& l, std::vector<std::string_view>* used) {
  if (auto full = Get(l, labels::kDriverFull)) {
    used->push_back(labels::kDriverFull);
    return *full;
  }
  const std::array<std::array<std::string_view, 3>, 2> sets = {{
      {labels::kDriverMajor, labels::kDriverMinor, labels::kDriverRevision},
      {labels::kOldDriverMajor, labels::kOldDriverMinor, labels::kOldDriverRev},
  }};
  for (const auto& set : sets) {
    auto major = Get(l, set[0]);
    auto minor = Get(l, set[1]);
    if (!major || !minor) continue;
    if (!AllDigits(*major)) return Malformed(set[0], *major, "digits, e.g. 580");
    if (!AllDigits(*minor)) return Malformed(set[1], *minor, "digits, e.g. 159");
    used->push_back(set[0]);
    used->push_back(set[1]);
    std::string v = *major + "." + *minor;
    if (auto rev = Get(l, set[2])) {
      used->push_back(set[2]);
      v += "." + *rev;
    }
    return v;
  }
  return Missing("NVIDIA driver version", labels::kDriverFull);
}

StatusOr<std::string> ReadCuda(const Labels& l, std::vector<std::string_view>* used) {
  if (auto full = Get(l, labels::kRuntimeFull)) {
    used->push_back(labels::kRuntimeFull);
    return *full;
  }
  const std::array<std::array<std::string_view, 2>, 2> sets = {{
      {labels::kRuntimeMajor, labels::kRuntimeMinor},
      {labels::kOldRuntimeMajor, labels::kOldRuntimeMinor},
  }};
  for (const auto& set : sets) {
    auto major = Get(l, set[0]);
    auto minor = Get(l, set[1]);
    if (!major || !minor) continue;
    if (!AllDigits(*major)) return Malformed(set[0], *major, "digits, e.g. 13");
    if (!AllDigits(*minor)) return Malformed(set[1], *minor, "digits, e.g. 0");
    used->push_back(set[0]);
    used->push_back(set[1]);
    return *major + "." + *minor;
  }
  return Missing("CUDA driver API version", labels::kRuntimeFull);
}

StatusOr<NodeFacts> Read(const Labels& l, std::vector<std::string_view>* used) {
  NodeFacts f;
  auto product = Get(l, labels::kGpuProduct);
  if (!product) return Missing("GPU product", labels::kGpuProduct);
  used->push_back(labels::kGpuProduct);
  f.gpu_product = *product;
  constexpr std::string_view kShared = "-SHARED";
  if (f.gpu_product.size() > kShared.size() && f.gpu_product.ends_with(kShared)) {
    f.gpu_product.resize(f.gpu_product.size() - kShared.size());
  }
  auto major = Get(l, labels::kComputeMajor);
  if (!major) return Missing("compute capability", labels::kComputeMajor);
  auto minor = Get(l, labels::kComputeMinor);
  if (!minor) return Missing("compute capability", labels::kComputeMinor);
  if (!AllDigits(*major)) return Malformed(labels::kComputeMajor, *major, "digits, e.g. 9");
  if (!AllDigits(*minor)) return Malformed(labels::kComputeMinor, *minor, "digits, e.g. 0");
  used->push_back(labels::kComputeMajor);
  used->push_back(labels::kComputeMinor);
  f.compute_capability = *major + "." + *minor;
  KC_ASSIGN_OR_RETURN(f.driver_version, ReadDriver(l, used));
  KC_ASSIGN_OR_RETURN(f.cuda_driver_version, ReadCuda(l, used));
  auto arch = Get(l, labels::kArch);
  if (!arch) return Missing("CPU architecture", labels::kArch);
  used->push_back(labels::kArch);
  f.arch = *arch;
  return f;
}

}  // namespace

StatusOr<NodeFacts> NodeFactsFromLabels(const Labels& labels) {
  std::vector<std::string_view> used;
  return Read(labels, &used);
}

Labels FingerprintLabels(const Labels& labels) {
  std::vector<std::string_view> used;
  Labels out;
  if (!Read(labels, &used).ok()) return out;
  for (auto key : used) out.emplace(std::string(key), labels.at(std::string(key)));
  return out;
}

std::string GfdProductName(std::string_view nvml_name, std::string_view mig_profile) {
  std::string out;
  out.reserve(nvml_name.size() + mig_profile.size() + 5);
  for (char c : nvml_name) out.push_back(c == ' ' ? '-' : c);
  if (!mig_profile.empty()) {
    out += "-MIG-";
    out += mig_profile;
  }
  return out;
}

std::string CanonicalJson(const NodeFacts& node, const RuntimeFacts& runtime) {
  // nlohmann::json objects are std::map-backed: keys come out sorted.
  nlohmann::json j;
  j["node"] = {{"arch", node.arch},
               {"computeCapability", node.compute_capability},
               {"cudaDriver", node.cuda_driver_version},
               {"driver", node.driver_version},
               {"gpuProduct", node.gpu_product}};
  j["runtime"] = {{"env", runtime.env}, {"image", runtime.image}, {"versions", runtime.runtime}};
  PutUnlessDefault(j["runtime"], "gpus", runtime.gpus, int64_t{1});
  PutUnlessDefault(j["runtime"], "parallel", runtime.parallel, {});
  PutUnlessDefault(j["runtime"], "server", runtime.server, std::string());
  j["schema"] = runtime.schema_version;
  return j.dump();
}

Fingerprint ComputeFingerprint(const NodeFacts& node, const RuntimeFacts& runtime) {
  Fingerprint f;
  f.canonical_json = CanonicalJson(node, runtime);
  f.sha256 = Sha256Hex(f.canonical_json);
  f.id = f.sha256.substr(0, 16);
  return f;
}

bool IsFingerprintId(std::string_view id) {
  if (id.size() != 16) return false;
  for (char c : id) {
    if (!std::isdigit(static_cast<unsigned char>(c)) && (c < 'a' || c > 'f')) return false;
  }
  return true;
}

}  // namespace kc::core
