#include "operator/decide/server_identity.h"

#include <gtest/gtest.h>

namespace kc::op::decide {
namespace {

core::KernelCacheSpec ServerSpec(const std::string& service_account) {
  core::KernelCacheSpec spec;
  core::ServerSpec server;
  server.pod_template = {{"spec", {{"containers", {{{"name", "server"}, {"image", "llm"}}}}}}};
  if (!service_account.empty()) {
    server.pod_template["spec"]["serviceAccountName"] = service_account;
  }
  spec.warmup.server = server;
  return spec;
}

TEST(ServerIdentity, NeverTheOperatorsNamespaceOrServiceAccount) {
  Settings ours;
  ours.operator_namespace = "kernelcache-system";
  ours.operator_service_account = "kernelcache";
  core::KernelCacheSpec command_form;
  command_form.warmup.command = {"python", "warm.py"};
  struct Case {
    const char* name;
    core::KernelCacheSpec spec;
    std::string ns;
    Settings settings;
    const char* says;  // "" = accepted
  };
  const std::vector<Case> cases = {
      {"a server warmup in a model namespace", ServerSpec("llama-server"), "ml", ours, ""},
      {"no account named", ServerSpec(""), "ml", ours, ""},
      {"in the operator's namespace", ServerSpec(""), "kernelcache-system", ours,
       "does not run in the operator's own namespace \"kernelcache-system\""},
      {"in the operator's namespace under another account", ServerSpec("llama-server"),
       "kernelcache-system", ours, "operator's own namespace"},
      {"the operator's account named", ServerSpec("kernelcache"), "ml", ours,
       "\"kernelcache\" is the operator's ServiceAccount's name"},
      {"the command form in the operator's namespace", command_form, "kernelcache-system", ours,
       ""},
      {"the operator's identity not known", ServerSpec("kernelcache"), "kernelcache-system",
       Settings{}, ""},
  };
  for (const Case& c : cases) {
    auto problem = ServerIdentityProblem(c.spec, c.ns, c.settings);
    if (std::string(c.says).empty()) {
      EXPECT_FALSE(problem.has_value()) << c.name << ": " << problem.value_or("");
      continue;
    }
    ASSERT_TRUE(problem.has_value()) << c.name;
    EXPECT_NE(problem->find(c.says), std::string::npos) << c.name << ": " << *problem;
    EXPECT_EQ(problem->rfind("spec.warmup.server", 0), 0u) << c.name << ": names the field";
  }
}

}  // namespace
}  // namespace kc::op::decide
