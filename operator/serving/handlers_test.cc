#include "operator/serving/handlers.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <nlohmann/json.hpp>

#include "base/base64.h"
#include "kube/config.h"
#include "kube/resource.h"
#include "kube/testing/fake_client.h"
#include "operator/testing/https_client.h"
#include "operator/webhook/certs.h"
#include "testing/eventually.h"

namespace kc::webhook {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;

// An AdmissionReview of a pod in namespace "ml" with the given labels.
std::string Review(const Json& labels) {
  Json pod = {{"metadata", {{"name", "p"}, {"labels", labels}}}};
  pod["spec"]["containers"] = Json::array({{{"name", "c"}, {"image", "i"}}});
  Json request = {{"uid", "u-1"}, {"namespace", "ml"}, {"operation", "CREATE"}, {"object", pod}};
  request["kind"] = {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}};
  request["resource"] = {{"group", ""}, {"version", "v1"}, {"resource", "pods"}};
  return Json{
      {"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}, {"request", request}}
      .dump();
}

// A KernelCache in "ml" selecting app=vllm.
core::KernelCache VllmCache() {
  core::KernelCache kc;
  kc.metadata.name = "vllm";
  kc.metadata.namespace_ = "ml";
  kc.spec.pod_selector.match_labels = {{"app", "vllm"}};
  kc.spec.storage.size = "20Gi";
  return kc;
}

TEST(WebhookHandlersTest, RoutesCallTheReviewOverHttps) {
  const auto now = std::chrono::system_clock::now();
  auto ca = CreateCa("ca", now, std::chrono::hours(1));
  ASSERT_TRUE(ca.ok());
  auto serving = IssueServingCert(*ca, {{"localhost"}, {"127.0.0.1"}, std::chrono::hours(1)}, now);
  ASSERT_TRUE(serving.ok());
  auto server = op::HttpServer::ListenTls("127.0.0.1", 0);
  ASSERT_TRUE(server.ok());
  ASSERT_TRUE((*server)->SetCertificate(serving->cert_pem, serving->key_pem).ok());
  std::atomic<int> listed{0};
  WebhookDeps deps;
  deps.list = [&](const std::string& ns) {
    ++listed;
    return ns == "ml" ? std::vector<core::KernelCache>{VllmCache()}
                      : std::vector<core::KernelCache>();
  };
  RegisterWebhookHandlers(**server, deps);
  (*server)->Start();
  op::HttpsClientOptions o;
  o.ca_pem = ca->cert_pem;
  auto conn = op::HttpsConnection::Connect("127.0.0.1", (*server)->port(), o);
  ASSERT_TRUE(conn.ok()) << conn.status();

  auto garbage = (*conn)->Request("POST", kMutatePodsPath, "{not json");
  ASSERT_TRUE(garbage.ok());
  EXPECT_EQ(garbage->status, 400);
  EXPECT_NE(garbage->body.find("error"), std::string::npos);

  auto mutated = (*conn)->Request("POST", kMutatePodsPath, Review({{"app", "vllm"}}));
  ASSERT_TRUE(mutated.ok());
  EXPECT_EQ(mutated->status, 200);
  Json answer = Json::parse(mutated->body);
  EXPECT_EQ(answer["response"]["uid"], "u-1");
  EXPECT_EQ(answer["response"]["allowed"], true);
  EXPECT_EQ(answer["response"]["patchType"], "JSONPatch");
  auto patch = kc::DecodeBase64(answer["response"]["patch"].get<std::string>());
  ASSERT_TRUE(patch.ok());
  EXPECT_NE(patch->find("kernelcache-wait"), std::string::npos) << *patch;
  EXPECT_GE(listed.load(), 1);

  auto validated = (*conn)->Request("POST", kValidateKernelCachesPath, Review(Json::object()));
  ASSERT_TRUE(validated.ok());
  EXPECT_EQ(validated->status, 200);
  EXPECT_EQ(Json::parse(validated->body)["response"]["allowed"], true);

  auto get = (*conn)->Request("GET", kMutatePodsPath);
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(get->status, 405);
}

TEST(EventQueueTest, WritesInOrderOffTheCallersThreadAndDropsBeyondTheBound) {
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  std::vector<std::string> written;
  {
    EventQueue q([&](const WarningEvent& e) {
      std::unique_lock<std::mutex> l(mu);
      cv.wait(l, [&] { return release; });  // a slow API server
      written.push_back(e.kc_name);
    });
    // The writer holds the first; the queue takes kMaxPendingEvents more.
    for (size_t i = 0; i < EventQueue::kMaxPendingEvents + 5; ++i) {
      q.Push({"ns", "kc-" + std::to_string(i), "Reason", "message"});
    }
    EXPECT_GE(q.dropped(), 4u);
    EXPECT_LE(q.dropped(), 5u);
    {
      std::lock_guard<std::mutex> l(mu);
      release = true;
    }
    cv.notify_all();
  }  // the destructor writes what is queued
  ASSERT_GE(written.size(), EventQueue::kMaxPendingEvents);
  EXPECT_EQ(written[0], "kc-0");
  EXPECT_EQ(written[1], "kc-1");
}

// LookUpStorageClass against a fake API server: the StorageClass first, the
// PersistentVolumes only when it is NotFound, and an error is "unknown".
TEST(LookUpStorageClassTest, AsksForTheClassThenForAVolumeNamingIt) {
  auto pv = [](const std::string& name, const std::string& cls) {
    Json v = {{"metadata", {{"name", name}}}, {"spec", {{"capacity", {{"storage", "1Gi"}}}}}};
    if (!cls.empty()) v["spec"]["storageClassName"] = cls;
    return v;
  };
  struct Case {
    std::string name;
    bool class_exists;
    std::vector<Json> volumes;
    std::string failing;  // "verb resource" the fake refuses with Unavailable
    Known want_class;
    Known want_volume;
    bool lists_volumes;
  } cases[] = {
      {"class exists", true, {pv("a", "kc-jit")}, "", Known::kYes, Known::kUnknown, false},
      {"a static volume names it",
       false,
       {pv("a", "other"), pv("b", "kc-jit")},
       "",
       Known::kNo,
       Known::kYes,
       true},
      {"nothing names it",
       false,
       {pv("a", "other"), pv("b", "")},
       "",
       Known::kNo,
       Known::kNo,
       true},
      {"no volumes at all", false, {}, "", Known::kNo, Known::kNo, true},
      {"volumes cannot be listed",
       false,
       {},
       "list persistentvolumes",
       Known::kNo,
       Known::kUnknown,
       true},
      {"the class cannot be read",
       false,
       {},
       "get storageclasses.storage.k8s.io",
       Known::kUnknown,
       Known::kUnknown,
       false},
  };
  for (const Case& c : cases) {
    kube::FakeClient client;
    if (c.class_exists) {
      ASSERT_TRUE(client
                      .Create(kube::resources::kStorageClasses, "",
                              {{"metadata", {{"name", "kc-jit"}}}, {"provisioner", "x"}})
                      .ok());
    }
    for (const Json& v : c.volumes) {
      ASSERT_TRUE(client.Create(kube::resources::kPersistentVolumes, "", v).ok()) << c.name;
    }
    const std::string failing = c.failing;
    client.SetReactor([failing](const kube::FakeAction& a) {
      return a.verb + " " + a.resource == failing ? UnavailableError("refused") : OkStatus();
    });
    client.ClearActions();
    StorageClassFacts f = LookUpStorageClass(client, "kc-jit");
    EXPECT_EQ(f.class_exists, c.want_class) << c.name;
    EXPECT_EQ(f.volume_names_it, c.want_volume) << c.name;
    bool listed = false;
    for (const kube::FakeAction& a : client.Actions()) {
      listed = listed || (a.verb == "list" && a.resource == "persistentvolumes");
    }
    EXPECT_EQ(listed, c.lists_volumes) << c.name;
  }
}

}  // namespace
}  // namespace kc::webhook
