#include "operator/testing/objects.h"

#include <utility>

#include "base/base64.h"

namespace kc::op::fixtures {

Labels GpuLabels(const std::string& product, const std::string& driver,
                 const std::string& compute_major) {
  return {{"nvidia.com/gpu.present", "true"},
          {"nvidia.com/gpu.product", product},
          {"nvidia.com/gpu.compute.major", compute_major},
          {"nvidia.com/gpu.compute.minor", "0"},
          {"nvidia.com/cuda.driver-version.full", driver},
          {"nvidia.com/cuda.runtime-version.full", "13.0"},
          {"nvidia.com/cuda.runtime-version.major", "13"},
          {"nvidia.com/cuda.runtime-version.minor", "0"},
          {"kubernetes.io/arch", "amd64"}};
}

NodeView GpuNodeView(const std::string& name, Labels labels) {
  NodeView n;
  n.name = name;
  n.labels = std::move(labels);
  n.gpu_allocatable = 8;
  return n;
}

nlohmann::json GpuNodeJson(const std::string& name, const Labels& labels) {
  using Json = nlohmann::json;
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"labels", labels}}},
          {"status",
           {{"allocatable", {{"nvidia.com/gpu", "8"}}},
            {"conditions", Json::array({{{"type", "Ready"}, {"status", "True"}}})}}}};
}

namespace {

std::string Base64Url(const std::string& s) {
  std::string out = EncodeBase64(s);
  for (char& c : out) c = c == '+' ? '-' : c == '/' ? '_' : c;
  while (!out.empty() && out.back() == '=') out.pop_back();
  return out;
}

}  // namespace

nlohmann::json PodTokenClaims(const std::string& ns, const std::string& pod, const std::string& uid,
                              std::int64_t exp) {
  return {{"aud", {"https://kubernetes.default.svc", "kernelcache.io"}},
          {"exp", exp},
          {"iss", "https://kubernetes.default.svc"},
          {"kubernetes.io",
           {{"namespace", ns},
            {"pod", {{"name", pod}, {"uid", uid}}},
            {"serviceaccount", {{"name", "default"}, {"uid", "sa-uid"}}}}},
          {"sub", "system:serviceaccount:" + ns + ":default"}};
}

std::string PodTokenJwt(const nlohmann::json& claims) {
  return Base64Url(R"({"alg":"RS256"})") + "." + Base64Url(claims.dump()) + ".c2lnbmF0dXJl";
}

}  // namespace kc::op::fixtures
