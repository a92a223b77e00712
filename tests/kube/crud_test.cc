// CRUD, merge patch, server-side apply, delete preconditions, list paging and
// error mapping on ConfigMaps, against the real local control plane.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "kube/http_transport.h"
#include "tests/kube/kube_test_util.h"

namespace kc::kube {
namespace {

using resources::kConfigMaps;
using testing::ClusterClient;
using testing::UniqueName;

static auto* const kEnv = ::testing::AddGlobalTestEnvironment(new LocalClusterEnvironment());

constexpr char kNs[] = "kube-crud-test";

class CrudTest : public testing::ClusterTest<kNs> {};

Json ConfigMap(const std::string& name, Json data, Json labels = Json::object()) {
  return Json{{"metadata", {{"name", name}, {"labels", std::move(labels)}}},
              {"data", std::move(data)}};
}

TEST_F(CrudTest, CreateGetUpdateConflictDelete) {
  const std::string name = UniqueName("crud");
  auto created = client_->Create(kConfigMaps, kNs, ConfigMap(name, {{"a", "1"}}));
  ASSERT_TRUE(created.ok()) << created.status();
  const std::string uid = (*created)["metadata"]["uid"];
  const std::string rv1 = (*created)["metadata"]["resourceVersion"];

  auto again = client_->Create(kConfigMaps, kNs, ConfigMap(name, {{"a", "2"}}));
  EXPECT_TRUE(IsAlreadyExists(again.status())) << again.status();

  auto got = client_->Get(kConfigMaps, kNs, name);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ((*got)["data"]["a"], "1");
  EXPECT_EQ((*got)["metadata"]["uid"], uid);

  Json updated_obj = *got;
  updated_obj["data"]["a"] = "2";
  auto updated = client_->Update(kConfigMaps, kNs, updated_obj);
  ASSERT_TRUE(updated.ok()) << updated.status();
  EXPECT_EQ((*updated)["data"]["a"], "2");
  EXPECT_NE((*updated)["metadata"]["resourceVersion"], rv1);

  // The same object again carries the stale resourceVersion: Conflict.
  updated_obj["data"]["a"] = "3";
  auto stale = client_->Update(kConfigMaps, kNs, updated_obj);
  EXPECT_TRUE(IsConflict(stale.status())) << stale.status();

  // Delete with a UID precondition that does not match: Conflict, still there.
  DeleteOptions wrong_uid;
  wrong_uid.precondition_uid = "00000000-0000-0000-0000-000000000000";
  Status s = client_->Delete(kConfigMaps, kNs, name, wrong_uid);
  EXPECT_TRUE(IsConflict(s)) << s;
  EXPECT_NE(s.message().find("UID in the precondition"), std::string::npos) << s;
  EXPECT_TRUE(client_->Get(kConfigMaps, kNs, name).ok());

  DeleteOptions right_uid;
  right_uid.precondition_uid = uid;
  right_uid.propagation = PropagationPolicy::kBackground;
  s = client_->Delete(kConfigMaps, kNs, name, right_uid);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_TRUE(IsNotFound(client_->Get(kConfigMaps, kNs, name).status()));
  EXPECT_TRUE(IsNotFound(client_->Delete(kConfigMaps, kNs, name)));
}

TEST_F(CrudTest, MergePatchAndServerSideApply) {
  const std::string name = UniqueName("patch");
  ASSERT_TRUE(client_->Create(kConfigMaps, kNs, ConfigMap(name, {{"a", "1"}, {"b", "1"}})).ok());

  // Merge patch: set one key, delete another (null), keep the rest.
  auto patched = client_->Patch(kConfigMaps, kNs, name, PatchType::kMerge,
                                Json{{"data", {{"a", "2"}, {"b", nullptr}, {"c", "3"}}}});
  ASSERT_TRUE(patched.ok()) << patched.status();
  EXPECT_EQ((*patched)["data"], (Json{{"a", "2"}, {"c", "3"}}));

  // JSON patch with a failing test op: the server refuses.
  auto json_patch =
      client_->Patch(kConfigMaps, kNs, name, PatchType::kJsonPatch,
                     Json::array({{{"op", "test"}, {"path", "/data/a"}, {"value", "x"}},
                                  {{"op", "remove"}, {"path", "/data/a"}}}));
  EXPECT_FALSE(json_patch.ok());

  // Server-side apply by manager "alpha" takes ownership of data.owned.
  PatchOptions alpha;
  alpha.field_manager = "alpha";
  auto applied = client_->Patch(kConfigMaps, kNs, name, PatchType::kApply,
                                Json{{"data", {{"owned", "by-alpha"}}}}, alpha);
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_EQ((*applied)["data"]["owned"], "by-alpha");
  EXPECT_EQ((*applied)["data"]["a"], "2");  // fields of other managers stay
  bool alpha_listed = false;
  for (const auto& mf : (*applied)["metadata"]["managedFields"]) {
    if (mf["manager"] == "alpha" && mf["operation"] == "Apply") alpha_listed = true;
  }
  EXPECT_TRUE(alpha_listed) << (*applied)["metadata"]["managedFields"].dump();

  // Manager "beta" applying a different value conflicts without force...
  PatchOptions beta;
  beta.field_manager = "beta";
  auto conflict = client_->Patch(kConfigMaps, kNs, name, PatchType::kApply,
                                 Json{{"data", {{"owned", "by-beta"}}}}, beta);
  EXPECT_TRUE(IsConflict(conflict.status())) << conflict.status();
  EXPECT_NE(conflict.status().message().find("alpha"), std::string::npos) << conflict.status();
  // ...and wins with force.
  beta.force = true;
  auto forced = client_->Patch(kConfigMaps, kNs, name, PatchType::kApply,
                               Json{{"data", {{"owned", "by-beta"}}}}, beta);
  ASSERT_TRUE(forced.ok()) << forced.status();
  EXPECT_EQ((*forced)["data"]["owned"], "by-beta");

  EXPECT_TRUE(IsNotFound(client_
                             ->Patch(kConfigMaps, kNs, "does-not-exist", PatchType::kMerge,
                                     Json{{"data", {{"a", "1"}}}})
                             .status()));
  EXPECT_TRUE(client_->Delete(kConfigMaps, kNs, name).ok());
}

TEST_F(CrudTest, ListWithLabelSelectorAndPagination) {
  const std::string run = UniqueName("list");
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(client_
                    ->Create(kConfigMaps, kNs,
                             ConfigMap(run + "-" + std::to_string(i), {{"i", std::to_string(i)}},
                                       {{"run", run}, {"parity", i % 2 ? "odd" : "even"}}))
                    .ok());
  }
  ASSERT_TRUE(
      client_->Create(kConfigMaps, kNs, ConfigMap(run + "-other", {}, {{"run", "x"}})).ok());

  ListOptions page;
  page.label_selector = "run=" + run;
  page.limit = 2;
  auto first = client_->List(kConfigMaps, kNs, page);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(first->items.size(), 2u);
  EXPECT_FALSE(first->continue_token.empty());
  EXPECT_FALSE(first->resource_version.empty());
  EXPECT_EQ(first->items[0]["kind"], "ConfigMap");
  EXPECT_EQ(first->items[0]["apiVersion"], "v1");

  auto all = ListAll(*client_, kConfigMaps, kNs, page);
  ASSERT_TRUE(all.ok()) << all.status();
  std::set<std::string> names;
  for (const auto& item : all->items) names.insert(item["metadata"]["name"]);
  EXPECT_EQ(names.size(), 5u);
  EXPECT_EQ(names.count(run + "-other"), 0u);

  ListOptions odd;
  odd.label_selector = "run=" + run + ",parity in (odd)";
  auto odds = client_->List(kConfigMaps, kNs, odd);
  ASSERT_TRUE(odds.ok()) << odds.status();
  EXPECT_EQ(odds->items.size(), 2u);

  ListOptions by_field;
  by_field.field_selector = "metadata.name=" + run + "-3";
  auto one = client_->List(kConfigMaps, kNs, by_field);
  ASSERT_TRUE(one.ok()) << one.status();
  ASSERT_EQ(one->items.size(), 1u);
  EXPECT_EQ(one->items[0]["data"]["i"], "3");

  // All namespaces.
  auto everywhere = ListAll(*client_, kConfigMaps, "", page);
  ASSERT_TRUE(everywhere.ok()) << everywhere.status();
  EXPECT_EQ(everywhere->items.size(), 5u);
}

TEST_F(CrudTest, InvalidObjectCarriesFieldCauses) {
  auto bad = client_->Create(kConfigMaps, kNs, ConfigMap("Bad_Name", {{"k", "v"}}));
  ASSERT_EQ(bad.status().code(), StatusCode::kInvalidArgument) << bad.status();
  EXPECT_NE(bad.status().message().find("[causes: metadata.name: "), std::string::npos)
      << bad.status();
  EXPECT_NE(bad.status().message().find("create configmaps \"Bad_Name\""), std::string::npos)
      << bad.status();

  auto bad_key = client_->Create(kConfigMaps, kNs, ConfigMap(UniqueName("badkey"), {{"a b", "v"}}));
  ASSERT_EQ(bad_key.status().code(), StatusCode::kInvalidArgument) << bad_key.status();
  EXPECT_NE(bad_key.status().message().find("data[a b]"), std::string::npos) << bad_key.status();
}

TEST_F(CrudTest, ClusterScopedNodesList) {
  auto nodes = ListAll(*client_, resources::kNodes, "", {});
  ASSERT_TRUE(nodes.ok()) << nodes.status();
  for (const auto& n : nodes->items) EXPECT_EQ(n["kind"], "Node");
}

// The kubeconfig form with file paths (not inline data) works too.
TEST_F(CrudTest, KubeconfigWithFilePaths) {
  LocalCluster* cluster = LocalClusterEnvironment::cluster();
  const std::string path = cluster->dir() + "/kubeconfig-files-" + std::to_string(::getpid());
  std::ofstream(path) << "apiVersion: v1\nkind: Config\ncurrent-context: files\n"
                      << "clusters:\n- name: local\n  cluster:\n    server: " << cluster->server()
                      << "\n    certificate-authority: " << cluster->ca_file() << "\n"
                      << "users:\n- name: admin\n  user:\n    client-certificate: "
                      << cluster->client_cert_file()
                      << "\n    client-key: " << cluster->client_key_file() << "\n"
                      << "contexts:\n- name: files\n  context: {cluster: local, user: admin, "
                      << "namespace: " << kNs << "}\n";
  auto config = LoadKubeconfig(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->default_namespace, kNs);
  auto client = NewClient(*config);
  ASSERT_TRUE(client.ok()) << client.status();
  auto ns = (*client)->Get(resources::kNamespaces, "", kNs);
  EXPECT_TRUE(ns.ok()) << ns.status();
}

// TLS: a CA that did not sign the server certificate is refused (the system
// store is not a fallback); no client certificate means no admin rights.
TEST_F(CrudTest, TlsAndAuthenticationFailures) {
  LocalCluster* cluster = LocalClusterEnvironment::cluster();
  auto good = LoadKubeconfig(cluster->kubeconfig_path());
  ASSERT_TRUE(good.ok());

  ClusterConfig wrong_ca = *good;
  wrong_ca.ca_pem = good->client_cert_pem;  // a certificate, but not the CA
  wrong_ca.qps = 0;
  auto transport = HttpTransport::Create(wrong_ca);
  ASSERT_TRUE(transport.ok()) << transport.status();
  HttpRequest req;
  req.method = "GET";
  req.path = "/api/v1/namespaces";
  auto r = (*transport)->Do(req);
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << (r.ok() ? "got a response" : "");

  ClusterConfig anonymous = *good;
  anonymous.client_cert_pem.clear();
  anonymous.client_key_pem.clear();
  auto client = NewClient(anonymous);
  ASSERT_TRUE(client.ok()) << client.status();
  auto listed = (*client)->List(resources::kSecrets, "kube-system", {});
  EXPECT_TRUE(listed.status().code() == StatusCode::kPermissionDenied ||
              listed.status().code() == StatusCode::kUnauthenticated)
      << listed.status();

  ClusterConfig bad_key = *good;
  bad_key.client_key_pem = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";
  auto refused = HttpTransport::Create(bad_key);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalidArgument) << refused.status();
}

// Bearer tokens against the real server: a service-account token from the
// TokenRequest API authenticates as that account (which has no rights: 403
// naming it), from bearer_token and from token_file alike; a made-up token
// is 401.
TEST_F(CrudTest, BearerTokenAuthentication) {
  LocalCluster* cluster = LocalClusterEnvironment::cluster();
  auto admin = LoadKubeconfig(cluster->kubeconfig_path());
  ASSERT_TRUE(admin.ok());
  auto admin_transport = HttpTransport::Create(*admin);
  ASSERT_TRUE(admin_transport.ok()) << admin_transport.status();
  HttpRequest token_request;
  token_request.method = "POST";
  token_request.path = "/api/v1/namespaces/default/serviceaccounts/default/token";
  token_request.content_type = "application/json";
  token_request.body = Json{{"apiVersion", "authentication.k8s.io/v1"},
                            {"kind", "TokenRequest"},
                            {"spec", {{"expirationSeconds", 600}}}}
                           .dump();
  auto issued = (*admin_transport)->Do(token_request);
  ASSERT_TRUE(issued.ok()) << issued.status();
  ASSERT_EQ(issued->status, 201) << issued->body;
  const std::string token = Json::parse(issued->body)["status"]["token"];
  ASSERT_FALSE(token.empty());

  ClusterConfig as_sa = *admin;
  as_sa.client_cert_pem.clear();
  as_sa.client_key_pem.clear();
  as_sa.bearer_token = token;
  auto client = NewClient(as_sa);
  ASSERT_TRUE(client.ok()) << client.status();
  auto listed = (*client)->List(kConfigMaps, "kube-system", {});
  EXPECT_EQ(listed.status().code(), StatusCode::kPermissionDenied) << listed.status();
  EXPECT_NE(listed.status().message().find("system:serviceaccount:default:default"),
            std::string::npos)
      << listed.status();

  const std::string token_file = cluster->dir() + "/sa-token-" + std::to_string(::getpid());
  std::ofstream(token_file) << token << "\n";
  ClusterConfig from_file = as_sa;
  from_file.bearer_token.clear();
  from_file.token_file = token_file;
  auto file_client = NewClient(from_file);
  ASSERT_TRUE(file_client.ok()) << file_client.status();
  auto file_listed = (*file_client)->List(kConfigMaps, "kube-system", {});
  std::filesystem::remove(token_file);
  EXPECT_NE(file_listed.status().message().find("system:serviceaccount:default:default"),
            std::string::npos)
      << file_listed.status();

  ClusterConfig bogus = as_sa;
  bogus.bearer_token = "not-a-token";
  auto bogus_client = NewClient(bogus);
  ASSERT_TRUE(bogus_client.ok());
  auto refused = (*bogus_client)->List(kConfigMaps, "kube-system", {});
  EXPECT_EQ(refused.status().code(), StatusCode::kUnauthenticated) << refused.status();
}

}  // namespace
}  // namespace kc::kube
