// Fuzz target: the in-cluster config loader (kube/config.h,
// LoadInClusterConfig and LoadDefault's in-cluster branch). Input: NUL-
// separated parts KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT, then
// the token, ca.crt and namespace files of a scratch service-account
// directory (a missing part: variable unset / file absent). Properties: no
// crash, no exception; a config that loads has an https server, the token
// file and a namespace.
#include <cstddef>
#include <cstdint>
#include <filesystem>

#include "fuzz/util.h"
#include "kube/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using kc::fuzz::Check;
  const auto parts = kc::fuzz::Split(kc::fuzz::AsText(data, size), '\0', 5);
  const std::filesystem::path dir = kc::fuzz::ScratchDir() / "serviceaccount";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const char* files[] = {"token", "ca.crt", "namespace"};
  for (size_t i = 0; i < 3; ++i) {
    if (parts.size() > i + 2) kc::fuzz::WriteFile(dir / files[i], parts[i + 2]);
  }
  kc::kube::InClusterOptions options;
  options.dir = dir.string();
  options.getenv = [&parts](const char* name) -> const char* {
    const std::string_view n(name);
    if (n == "KUBERNETES_SERVICE_HOST") return parts[0].c_str();
    if (n == "KUBERNETES_SERVICE_PORT" && parts.size() > 1) return parts[1].c_str();
    return nullptr;
  };
  auto config = kc::kube::LoadInClusterConfig(options);
  if (config.ok()) {
    Check(config->server.rfind("https://", 0) == 0);
    Check(config->token_file == options.dir + "/token");
    Check(!config->default_namespace.empty());
  }
  (void)kc::kube::InClusterAvailable(options);
  kc::kube::DefaultConfigOptions defaults;
  defaults.in_cluster = options;
  defaults.home = (kc::fuzz::ScratchDir() / "home").string();
  (void)kc::kube::LoadDefault(defaults);
  return 0;
}
