#include "kube/config.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

namespace kc::kube {
namespace {

namespace fs = std::filesystem;

const char kCaPem[] = "-----BEGIN CERTIFICATE-----\nQ0E=\n-----END CERTIFICATE-----\n";
const char kCertPem[] = "-----BEGIN CERTIFICATE-----\nQ0VSVA==\n-----END CERTIFICATE-----\n";
const char kKeyPem[] = "-----BEGIN PRIVATE KEY-----\nS0VZ\n-----END PRIVATE KEY-----\n";

std::string B64(const std::string& s) {
  static const char* t = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < s.size(); i += 3) {
    uint32_t n = (uint8_t(s[i]) << 16) | (uint8_t(s[i + 1]) << 8) | uint8_t(s[i + 2]);
    out += {t[n >> 18], t[(n >> 12) & 63], t[(n >> 6) & 63], t[n & 63]};
  }
  if (i + 1 == s.size()) {
    uint32_t n = uint8_t(s[i]) << 16;
    out += {t[n >> 18], t[(n >> 12) & 63], '=', '='};
  } else if (i + 2 == s.size()) {
    uint32_t n = (uint8_t(s[i]) << 16) | (uint8_t(s[i + 1]) << 8);
    out += {t[n >> 18], t[(n >> 12) & 63], t[(n >> 6) & 63], '='};
  }
  return out;
}

class ConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kc-config-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "pki");
    Write("pki/ca.crt", kCaPem);
    Write("pki/admin.crt", kCertPem);
    Write("pki/admin.key", kKeyPem);
    Write("token", "file-token\n");
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& rel, const std::string& content) {
    fs::path p = dir_ / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << content;
    return p.string();
  }

  fs::path dir_;
};

// A kubeconfig with two contexts: "data" (inline PEM) and "files" (relative
// file paths and a token file).
std::string GoodKubeconfig() {
  return "apiVersion: v1\nkind: Config\ncurrent-context: data\n"
         "clusters:\n"
         "- name: c-data\n  cluster:\n    server: https://127.0.0.1:6443/\n"
         "    certificate-authority-data: " +
         B64(kCaPem) +
         "\n"
         "- name: c-files\n  cluster:\n    server: https://10.0.0.1:443\n"
         "    certificate-authority: pki/ca.crt\n"
         "users:\n"
         "- name: u-data\n  user:\n    client-certificate-data: " +
         B64(kCertPem) +
         "\n"
         "    client-key-data: " +
         B64(kKeyPem) +
         "\n"
         "- name: u-files\n  user:\n    client-certificate: pki/admin.crt\n"
         "    client-key: pki/admin.key\n    tokenFile: token\n"
         "contexts:\n"
         "- name: data\n  context: {cluster: c-data, user: u-data}\n"
         "- name: files\n  context: {cluster: c-files, user: u-files, namespace: team-a}\n";
}

TEST_F(ConfigTest, CurrentContextWithInlineData) {
  auto config = LoadKubeconfig(Write("kubeconfig", GoodKubeconfig()));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->server, "https://127.0.0.1:6443");
  EXPECT_EQ(config->ca_pem, kCaPem);
  EXPECT_EQ(config->client_cert_pem, kCertPem);
  EXPECT_EQ(config->client_key_pem, kKeyPem);
  EXPECT_TRUE(config->token_file.empty());
  EXPECT_EQ(config->default_namespace, "");
}

TEST_F(ConfigTest, NamedContextWithRelativeFiles) {
  auto config = LoadKubeconfig(Write("sub/../kubeconfig", GoodKubeconfig()), "files");
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->server, "https://10.0.0.1:443");
  EXPECT_EQ(config->ca_pem, kCaPem);
  EXPECT_EQ(config->client_cert_pem, kCertPem);
  EXPECT_EQ(config->client_key_pem, kKeyPem);
  EXPECT_EQ(fs::path(config->token_file), fs::path(dir_ / "sub/../token"));
  EXPECT_EQ(config->default_namespace, "team-a");
}

// Fuzzer regression (fuzz/kubeconfig.cc): a list entry that is a scalar
// ("- a.crt" under clusters) made yaml-cpp throw YAML::BadSubscript out of
// ParseKubeconfig (operator[] on a scalar); now an error naming the entry.
TEST_F(ConfigTest, ScalarListEntryIsAnErrorNotAThrow) {
  for (const char* yaml : {
           "current-context: x\nclusters:\n- a.crt\n- name: c\n  cluster: {server: 'https://h:1'}\n"
           "users: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: "
           "u}}]\n",
           "current-context: x\ncontexts: [7]\n",
           "current-context: x\nusers: [{name: u, user: {token: t}}]\n"
           "contexts: [{name: x, context: {cluster: c, user: u}}]\nclusters: [[c]]\n",
       }) {
    auto config = ParseKubeconfig(yaml, (dir_ / "kubeconfig").string());
    ASSERT_FALSE(config.ok()) << yaml;
    EXPECT_NE(config.status().message().find("must be a map"), std::string::npos)
        << config.status();
  }
}

TEST_F(ConfigTest, TokenAndInsecure) {
  auto config = ParseKubeconfig(
      "current-context: x\nclusters: [{name: c, cluster: {server: 'https://h:1', "
      "insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: abc}}]\n"
      "contexts: [{name: x, context: {cluster: c, user: u}}]\n",
      (dir_ / "k").string());
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->bearer_token, "abc");
  EXPECT_TRUE(config->insecure_skip_tls_verify);
  EXPECT_TRUE(config->ca_pem.empty());
}

struct BadCase {
  const char* name;
  std::string yaml;
  std::string context;
  std::vector<std::string> message_has;
};

TEST_F(ConfigTest, BrokenConfigsNameFileFieldAndFix) {
  const std::string ok_cluster = "clusters: [{name: c, cluster: {server: 'https://h:1'}}]\n";
  const std::string ok_ctx = "contexts: [{name: x, context: {cluster: c, user: u}}]\n";
  const std::string ok_user = "users: [{name: u, user: {token: t}}]\n";
  const BadCase cases[] = {
      {"not_yaml", "clusters: [\n  - {", "", {"not valid YAML at line"}},
      {"not_a_map", "- a\n- b\n", "", {"not a kubeconfig"}},
      {"no_current_context",
       ok_cluster + ok_user + ok_ctx,
       "",
       {"current-context: not set", "kubectl config use-context"}},
      {"unknown_context",
       "current-context: nope\n" + ok_cluster + ok_user + ok_ctx,
       "",
       {"current-context: no entry named \"nope\" in contexts", "use one of: \"x\""}},
      {"unknown_context_flag",
       ok_cluster + ok_user + ok_ctx,
       "other",
       {"--context: no entry named \"other\""}},
      {"unknown_cluster",
       "current-context: x\n" + ok_cluster + ok_user +
           "contexts: [{name: x, context: {cluster: zz, user: u}}]\n",
       "",
       {"contexts[0].context.cluster: no entry named \"zz\" in clusters"}},
      {"no_server",
       "current-context: x\nclusters: [{name: c, cluster: {}}]\n" + ok_user + ok_ctx,
       "",
       {"clusters[0].cluster.server: missing", "https://HOST:PORT"}},
      {"bad_server",
       "current-context: x\nclusters: [{name: c, cluster: {server: 'h:1'}}]\n" + ok_user + ok_ctx,
       "",
       {"clusters[0].cluster.server: \"h:1\" is not an http(s) URL"}},
      {"bad_ca_base64",
       "current-context: x\nclusters: [{name: c, cluster: {server: 'https://h:1', "
       "certificate-authority-data: 'not*base64'}}]\n" +
           ok_user + ok_ctx,
       "",
       {"clusters[0].cluster.certificate-authority-data: not valid base64"}},
      {"ca_not_pem",
       "current-context: x\nclusters: [{name: c, cluster: {server: 'https://h:1', "
       "certificate-authority-data: '" +
           B64("hello") + "'}}]\n" + ok_user + ok_ctx,
       "",
       {"certificate-authority-data: does not hold PEM data"}},
      {"ca_file_missing",
       "current-context: x\nclusters: [{name: c, cluster: {server: 'https://h:1', "
       "certificate-authority: missing.crt}}]\n" +
           ok_user + ok_ctx,
       "",
       {"clusters[0].cluster.certificate-authority: cannot read file", "missing.crt"}},
      {"cert_without_key",
       "current-context: x\n" + ok_cluster + "users: [{name: u, user: {client-certificate-data: '" +
           B64(kCertPem) + "'}}]\n" + ok_ctx,
       "",
       {"users[0].user.client-key-data: missing", "add client-key"}},
      {"key_data_not_base64",
       "current-context: x\n" + ok_cluster +
           "users: [{name: other, user: {}}, {name: u, user: {client-certificate-data: '" +
           B64(kCertPem) + "', client-key-data: '%%%'}}]\n" + ok_ctx,
       "",
       {"users[1].user.client-key-data: not valid base64"}},
      {"key_is_a_cert",
       "current-context: x\n" + ok_cluster + "users: [{name: u, user: {client-certificate-data: '" +
           B64(kCertPem) + "', client-key-data: '" + B64(kCertPem) + "'}}]\n" + ok_ctx,
       "",
       {"users[0].user.client-key-data: does not hold PEM data", "PRIVATE KEY"}},
      {"exec_plugin",
       "current-context: x\n" + ok_cluster + "users: [{name: u, user: {exec: {command: aws}}}]\n" +
           ok_ctx,
       "",
       {"users[0].user.exec: credential plugins are not supported"}},
      {"token_file_missing",
       "current-context: x\n" + ok_cluster + "users: [{name: u, user: {tokenFile: nope}}]\n" +
           ok_ctx,
       "",
       {"users[0].user.tokenFile: file", "does not exist"}},
      {"no_users_list",
       "current-context: x\n" + ok_cluster + ok_ctx,
       "",
       {"users: missing, but contexts[0].context.user refers to \"u\""}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = Write(std::string(c.name) + ".kubeconfig", c.yaml);
    auto config = LoadKubeconfig(path, c.context);
    ASSERT_FALSE(config.ok());
    EXPECT_EQ(config.status().code(), StatusCode::kInvalidArgument) << config.status();
    EXPECT_NE(config.status().message().find("kubeconfig \"" + path + "\""), std::string::npos)
        << config.status();
    for (const auto& part : c.message_has) {
      EXPECT_NE(config.status().message().find(part), std::string::npos)
          << config.status() << "\n  lacks: " << part;
    }
  }
}

TEST_F(ConfigTest, MissingFileIsNotFound) {
  auto config = LoadKubeconfig((dir_ / "nope").string());
  EXPECT_TRUE(IsNotFound(config.status())) << config.status();
  EXPECT_NE(config.status().message().find("nope"), std::string::npos);
}

InClusterOptions FakeEnv(const fs::path& dir, std::map<std::string, std::string>* env) {
  InClusterOptions options;
  options.dir = dir.string();
  options.getenv = [env](const char* name) -> const char* {
    auto it = env->find(name);
    return it == env->end() ? nullptr : it->second.c_str();
  };
  return options;
}

TEST_F(ConfigTest, InCluster) {
  Write("sa/token", "sa-token\n");
  Write("sa/ca.crt", kCaPem);
  Write("sa/namespace", "kernelcache-system\n");
  std::map<std::string, std::string> env = {{"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
                                            {"KUBERNETES_SERVICE_PORT", "443"}};
  auto config = LoadInClusterConfig(FakeEnv(dir_ / "sa", &env));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->server, "https://10.96.0.1:443");
  EXPECT_EQ(config->token_file, (dir_ / "sa/token").string());
  EXPECT_EQ(config->ca_pem, kCaPem);
  EXPECT_EQ(config->default_namespace, "kernelcache-system");

  env["KUBERNETES_SERVICE_HOST"] = "fd00::1";
  config = LoadInClusterConfig(FakeEnv(dir_ / "sa", &env));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->server, "https://[fd00::1]:443");
}

TEST_F(ConfigTest, InClusterErrors) {
  std::map<std::string, std::string> env;
  auto config = LoadInClusterConfig(FakeEnv(dir_ / "sa", &env));
  EXPECT_NE(config.status().message().find("KUBERNETES_SERVICE_HOST"), std::string::npos);
  env["KUBERNETES_SERVICE_HOST"] = "10.96.0.1";
  config = LoadInClusterConfig(FakeEnv(dir_ / "sa", &env));
  EXPECT_NE(config.status().message().find("sa/token\" is missing"), std::string::npos)
      << config.status();
  Write("sa/token", "t");
  config = LoadInClusterConfig(FakeEnv(dir_ / "sa", &env));
  EXPECT_NE(config.status().message().find("ca.crt"), std::string::npos) << config.status();
}

TEST_F(ConfigTest, LoadDefaultOrder) {
  const std::string kubeconfig = Write("kubeconfig", GoodKubeconfig());
  Write("home/.kube/config",
        "current-context: h\nclusters: [{name: c, cluster: {server: 'https://home:1'}}]\n"
        "users: [{name: u, user: {token: t}}]\ncontexts: [{name: h, context: {cluster: c, user: "
        "u}}]\n");
  Write("sa/token", "sa-token\n");
  Write("sa/ca.crt", kCaPem);
  std::map<std::string, std::string> env;
  DefaultConfigOptions options;
  options.in_cluster = FakeEnv(dir_ / "sa", &env);
  options.home = (dir_ / "home").string();

  // Nothing but ~/.kube/config.
  auto config = LoadDefault(options);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->server, "https://home:1");

  // In-cluster beats ~/.kube/config.
  env["KUBERNETES_SERVICE_HOST"] = "10.96.0.1";
  config = LoadDefault(options);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->server, "https://10.96.0.1:443");

  // $KUBECONFIG beats in-cluster; the first existing file wins.
  env["KUBECONFIG"] = (dir_ / "missing").string() + ":" + kubeconfig;
  config = LoadDefault(options);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->server, "https://127.0.0.1:6443");

  // The flag beats everything; --context applies to it.
  options.explicit_path = kubeconfig;
  options.context_name = "files";
  env["KUBECONFIG"] = (dir_ / "home/.kube/config").string();
  config = LoadDefault(options);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->server, "https://10.0.0.1:443");

  // $KUBECONFIG naming nothing is an error, not a silent fallback.
  options.explicit_path.clear();
  env["KUBECONFIG"] = (dir_ / "missing").string();
  config = LoadDefault(options);
  EXPECT_TRUE(IsNotFound(config.status())) << config.status();
}

}  // namespace
}  // namespace kc::kube
