#include "core/gate_args.h"

#include <gtest/gtest.h>

namespace kc::core {
namespace {

GateArgs Args() {
  GateArgs a;
  a.root = "/var/cache/kernelcache";
  a.view = "/var/run/kernelcache/view";
  a.mode = "Copy";
  a.verify = "Checksums";
  a.timeout_seconds = 600;
  a.on_timeout = "StartCold";
  a.kernelcache = "llama";
  a.ns = EnvRef(gate_env::kNamespace);
  a.node = EnvRef(gate_env::kNodeName);
  return a;
}

TEST(GateArgs, EncodesEveryFieldAsAFlag) {
  struct Case {
    std::string name;
    GateArgs args;
    std::vector<std::string> want;
  };
  GateArgs with_url = Args();
  with_url.resolve_url = "http://kc-operator.kc-system.svc:8080";
  const std::vector<std::string> base = {"wait",
                                         "--root=/var/cache/kernelcache",
                                         "--view=/var/run/kernelcache/view",
                                         "--mode=Copy",
                                         "--verify=Checksums",
                                         "--timeout=600s",
                                         "--on-timeout=StartCold",
                                         "--kernelcache=llama",
                                         "--namespace=$(KC_NAMESPACE)",
                                         "--node=$(KC_NODE_NAME)"};
  std::vector<std::string> base_with_url = base;
  base_with_url.push_back("--resolve-url=http://kc-operator.kc-system.svc:8080");
  const std::vector<Case> cases = {
      {"no resolve URL: no flag", Args(), base},
      {"resolve URL", with_url, base_with_url},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(GateArgv(c.args), c.want) << c.name;
  }
}

TEST(GateArgs, EnvRefIsAKubeletReference) {
  EXPECT_EQ(EnvRef(gate_env::kNodeName), "$(KC_NODE_NAME)");
}

}  // namespace
}  // namespace kc::core
