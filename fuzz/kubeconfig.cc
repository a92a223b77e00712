// Fuzz target: the kubeconfig loader (kube/config.h). Input: the
// kubeconfig's text, written to a file in a scratch directory that also
// holds pki/ca.crt, pki/admin.crt, pki/admin.key and token (relative paths
// resolve against it), loaded with LoadKubeconfig for the current context
// and parsed with ParseKubeconfig for the context "files". Property: no crash, no exception; a
// config that loads names a server.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

#include "fuzz/util.h"
#include "kube/config.h"

namespace {

const std::string& KubeconfigPath() {
  static const std::string path = [] {
    const auto& dir = kc::fuzz::ScratchDir();
    std::filesystem::create_directories(dir / "pki");
    kc::fuzz::WriteFile(dir / "pki/ca.crt",
                        "-----BEGIN CERTIFICATE-----\nQ0E=\n-----END CERTIFICATE-----\n");
    kc::fuzz::WriteFile(dir / "pki/admin.crt",
                        "-----BEGIN CERTIFICATE-----\nQ0VSVA==\n-----END CERTIFICATE-----\n");
    kc::fuzz::WriteFile(dir / "pki/admin.key",
                        "-----BEGIN PRIVATE KEY-----\nS0VZ\n-----END PRIVATE KEY-----\n");
    kc::fuzz::WriteFile(dir / "token", "file-token\n");
    return (dir / "kubeconfig").string();
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string yaml(kc::fuzz::AsText(data, size));
  const std::string& path = KubeconfigPath();
  kc::fuzz::WriteFile(path, yaml);
  auto loaded = kc::kube::LoadKubeconfig(path);
  if (loaded.ok()) kc::fuzz::Check(!loaded->server.empty());
  (void)kc::kube::ParseKubeconfig(yaml, path, "files");
  return 0;
}
