// The admission webhooks through the real kube-apiserver (the serving
// half): the real kernelcache-operator binary creates its certificate Secret,
// writes the CA into the caBundle of the webhook configurations named on its
// command line, and serves HTTPS on 127.0.0.1; the API server calls it (URL
// clientConfig, so the serving cert carries the IP SAN 127.0.0.1) when pods
// are created. Every test's namespace holds a KernelCache "vllm" selecting
// app=vllm; pods carrying that label get the gate (operator/webhook/mutate.h).
//
// Isolation: every test has its own pod namespace, operator namespace and
// webhook configurations (whose namespaceSelector picks only its pod
// namespace), and its own operator process. Waits poll; nothing sleeps.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "base/base64.h"
#include "kube/config.h"
#include "kube/rest_client.h"
#include "operator/testing/http_get.h"
#include "operator/testing/https_client.h"
#include "operator/webhook/certs.h"
#include "operator/webhook/trust.h"
#include "testing/eventually.h"
#include "tests/cluster/local_cluster.h"
#include "tests/operator/operator_process.h"

namespace kc::optest {
namespace {

using Json = nlohmann::json;
using namespace std::chrono_literals;
using kc::testutil::Eventually;
namespace res = kube::resources;

const kube::Resource kSa{"", "v1", "serviceaccounts", "ServiceAccount", true};
const kube::Resource kKernelCaches{"kernelcache.io", "v1alpha1", "kernelcaches", "KernelCache",
                                   true};
const kube::Resource kDeployments{"apps", "v1", "deployments", "Deployment", true};

class WebhookIntegrationTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto c = SharedLocalCluster();
    if (!c.ok()) return;
    Status s = (*c)->ApplyCrd(std::string(KC_SOURCE_DIR) + "/crds/kernelcache.kernelcache.io.yaml",
                              "kernelcaches.kernelcache.io");
    if (!s.ok()) crd_error_ = s.ToString();
  }

  void SetUp() override {
    auto c = SharedLocalCluster();
    ASSERT_TRUE(c.ok()) << c.status();
    cluster_ = *c;
    ASSERT_TRUE(crd_error_.empty()) << crd_error_;
    auto cfg = kube::LoadKubeconfig(cluster_->kubeconfig_path());
    ASSERT_TRUE(cfg.ok()) << cfg.status();
    cfg->qps = 0;  // no client-side throttling: the pod loops measure the server
    auto client = kube::NewClient(*cfg);
    ASSERT_TRUE(client.ok()) << client.status();
    client_ = std::move(*client);
    name_ = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    for (char& ch : name_) ch = static_cast<char>(std::tolower(ch));
    name_ = name_.substr(0, 30) + "-" + std::to_string(::getpid() % 100000);
    ns_ = "wh-" + name_;
    op_ns_ = "whop-" + name_;
    config_ = "kc-wh-" + name_;
    log_dir_ = cluster_->dir() + "/operator-logs";
    std::filesystem::create_directories(log_dir_);
    for (const std::string& n : {ns_, op_ns_}) {
      ASSERT_TRUE(client_->Create(res::kNamespaces, "", {{"metadata", {{"name", n}}}}).ok());
    }
    ASSERT_TRUE(Eventually([&] { return client_->Get(kSa, ns_, "default").ok(); }, 60s));
    // Before the webhook configurations exist (a Fail policy with no
    // operator would deny it).
    auto kc = client_->Create(kKernelCaches, ns_, KernelCache("vllm", "vllm"));
    ASSERT_TRUE(kc.ok()) << kc.status();
    port_ = FreePort();
  }

  static Json KernelCache(const std::string& name, const std::string& app) {
    return {{"apiVersion", "kernelcache.io/v1alpha1"},
            {"kind", "KernelCache"},
            {"metadata", {{"name", name}}},
            {"spec",
             {{"podSelector", {{"matchLabels", {{"app", app}}}}},
              {"image", "kc.local/vllm:1"},
              {"warmup", {{"command", {"python3", "/app/warmup.py"}}}},
              {"storage", {{"size", "1Gi"}}}}}};
  }

  void TearDown() override {
    if (op_ && HasFailure()) std::cerr << "---- operator log ----\n" << op_->Log();
    op_.reset();
    if (client_ == nullptr) return;
    (void)client_->Delete(res::kMutatingWebhookConfigurations, "", config_);
    (void)client_->Delete(res::kValidatingWebhookConfigurations, "", config_);
    (void)client_->Delete(res::kNamespaces, "", ns_);
    (void)client_->Delete(res::kNamespaces, "", op_ns_);
  }

  // Our webhook configurations, scoped to this test's pod namespace, with
  // the settings the chart uses (caBundle left to the operator).
  void CreateConfigs(const std::string& failure_policy) {
    const std::string base = "https://127.0.0.1:" + std::to_string(port_);
    Json scope = {{"matchLabels", {{"kubernetes.io/metadata.name", ns_}}}};
    Json skip_opt_out = Json::array(
        {{{"name", "not-opted-out"},
          {"expression",
           "!has(object.metadata.labels) || !('kernelcache.io/inject' in object.metadata.labels)"
           " || object.metadata.labels['kernelcache.io/inject'] != 'false'"}}});
    Json mutating = {{"apiVersion", "admissionregistration.k8s.io/v1"},
                     {"kind", "MutatingWebhookConfiguration"},
                     {"metadata", {{"name", config_}}},
                     {"webhooks",
                      {{{"name", "pods.kernelcache.io"},
                        {"clientConfig", {{"url", base + "/mutate-pods"}}},
                        {"rules",
                         {{{"operations", {"CREATE"}},
                           {"apiGroups", {""}},
                           {"apiVersions", {"v1"}},
                           {"resources", {"pods"}}}}},
                        {"namespaceSelector", scope},
                        {"matchConditions", skip_opt_out},
                        {"failurePolicy", failure_policy},
                        {"sideEffects", "None"},
                        {"timeoutSeconds", 5},
                        {"reinvocationPolicy", "IfNeeded"},
                        {"admissionReviewVersions", {"v1"}}}}}};
    Json validating = {{"apiVersion", "admissionregistration.k8s.io/v1"},
                       {"kind", "ValidatingWebhookConfiguration"},
                       {"metadata", {{"name", config_}}},
                       {"webhooks",
                        {{{"name", "kernelcaches.kernelcache.io"},
                          {"clientConfig", {{"url", base + "/validate-kernelcaches"}}},
                          {"rules",
                           {{{"operations", {"CREATE", "UPDATE"}},
                             {"apiGroups", {"kernelcache.io"}},
                             {"apiVersions", {"v1alpha1"}},
                             {"resources", {"kernelcaches"}}}}},
                          {"namespaceSelector", scope},
                          {"failurePolicy", failure_policy},
                          {"sideEffects", "None"},
                          {"timeoutSeconds", 5},
                          {"admissionReviewVersions", {"v1"}}}}}};
    auto m = client_->Create(res::kMutatingWebhookConfigurations, "", mutating);
    ASSERT_TRUE(m.ok()) << m.status();
    auto v = client_->Create(res::kValidatingWebhookConfigurations, "", validating);
    ASSERT_TRUE(v.ok()) << v.status();
  }

  void StartOperator(const std::vector<std::string>& extra = {}) {
    op_ = StartProcess(port_, "webhook", extra);
  }
  // `http_port`, when given, receives the port of /healthz, /readyz.
  std::unique_ptr<OperatorProcess> StartProcess(int webhook_port, const std::string& tag,
                                                const std::vector<std::string>& extra,
                                                int* http_port = nullptr) {
    const int http = FreePort();
    if (http_port != nullptr) *http_port = http;
    auto op = std::make_unique<OperatorProcess>(KC_OPERATOR_BINARY,
                                                log_dir_ + "/" + name_ + "-" + tag + ".log");
    std::vector<std::string> args = {"--kubeconfig=" + cluster_->kubeconfig_path(),
                                     "--namespaces=" + ns_,
                                     "--http-port=" + std::to_string(http),
                                     "--bind-address=127.0.0.1",
                                     "--identity=" + tag,
                                     "--leader-election-namespace=" + op_ns_,
                                     "--webhook-port=" + std::to_string(webhook_port),
                                     "--webhook-namespace=" + op_ns_,
                                     "--webhook-cert-ips=127.0.0.1",
                                     "--webhook-mutating-config=" + config_,
                                     "--webhook-validating-config=" + config_,
                                     "--webhook-cert-check-interval=1s",
                                     "--log-level=debug"};
    args.insert(args.end(), extra.begin(), extra.end());
    Status s = op->Start(args);
    EXPECT_TRUE(s.ok()) << s;
    return op;
  }

  Json Secret() {
    auto s = client_->Get(res::kSecrets, op_ns_, "kernelcache-webhook-tls");
    return s.ok() ? *s : Json();
  }
  std::string SecretPem(const char* key) {
    Json s = Secret();
    if (!s.is_object() || !s.contains("data") || !s["data"].contains(key)) return "";
    auto d = kc::DecodeBase64(s["data"][key].get<std::string>());
    return d.ok() ? *d : "";
  }
  // The serial the webhook port presents to a client trusting the Secret's
  // CA (or the CAs of `trust`); "" when the handshake fails.
  std::string ServedSerial() { return ServedSerialOn(port_); }
  std::string ServedSerialOn(int port, const std::string& trust = "") {
    op::HttpsClientOptions o;
    o.ca_pem = trust.empty() ? SecretPem(webhook::kCaKey) : trust;
    o.timeout = 2s;
    if (o.ca_pem.empty()) return "";
    auto conn = op::HttpsConnection::Connect("127.0.0.1", port, o);
    return conn.ok() ? (*conn)->PeerSerialHex() : "";
  }
  // The decoded caBundle of the first entry of our configuration of kind `r`.
  std::string ConfigBundle(const kube::Resource& r = res::kMutatingWebhookConfigurations) {
    auto cfg = client_->Get(r, "", config_);
    if (!cfg.ok()) return "";
    const Json& cc = (*cfg)["webhooks"][0]["clientConfig"];
    if (!cc.contains("caBundle")) return "";
    auto d = kc::DecodeBase64(cc["caBundle"].get<std::string>());
    return d.ok() ? *d : "";
  }
  static bool Ready(int http_port) {
    auto r = op::HttpGet("127.0.0.1", http_port, "/readyz");
    return r.ok() && r->status == 200;
  }
  static size_t Count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  }

  Json Pod(const std::string& name, const std::map<std::string, std::string>& labels) {
    Json l = Json::object();
    for (const auto& [k, v] : labels) l[k] = v;
    return {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", name}, {"labels", l}}},
            {"spec", {{"containers", {{{"name", "app"}, {"image", "kc.local/none:1"}}}}}}};
  }
  // The gate is in: the annotation names the KernelCache and the first init
  // container is kernelcache-wait.
  static bool Injected(const Json& pod) {
    const Json& meta = pod["metadata"];
    const Json& spec = pod["spec"];
    return meta.contains("annotations") &&
           meta["annotations"].value("kernelcache.io/injected", "") == "vllm" &&
           spec.contains("initContainers") && spec["initContainers"].is_array() &&
           !spec["initContainers"].empty() &&
           spec["initContainers"][0].value("name", "") == "kernelcache-wait";
  }
  // Creates pods until one arrives mutated: the API server has picked up the
  // caBundle and the operator serves the certificate.
  bool WaitUntilMutating() {
    int i = 0;
    return Eventually(
        [&] {
          auto p = client_->Create(res::kPods, ns_,
                                   Pod("probe-" + std::to_string(i++), {{"app", "vllm"}}));
          return p.ok() && Injected(*p);
        },
        90s, 500ms);
  }

  static inline std::string crd_error_;
  LocalCluster* cluster_ = nullptr;
  std::unique_ptr<kube::Client> client_;
  std::unique_ptr<OperatorProcess> op_;
  std::string name_, ns_, op_ns_, config_, log_dir_;
  int port_ = 0;
};

TEST_F(WebhookIntegrationTest, OperatorWritesCaBundleAndTheApiServerMutatesThroughTls) {
  CreateConfigs("Ignore");
  StartOperator();
  // The Secret, and the CA in every entry of both named configurations.
  ASSERT_TRUE(Eventually(
      [&] {
        const std::string ca = SecretPem(webhook::kCaKey);
        if (ca.empty()) return false;
        const std::string bundle = kc::EncodeBase64(ca);
        for (const auto* r :
             {&res::kMutatingWebhookConfigurations, &res::kValidatingWebhookConfigurations}) {
          auto cfg = client_->Get(*r, "", config_);
          if (!cfg.ok()) return false;
          for (const Json& h : (*cfg)["webhooks"]) {
            if (h["clientConfig"].value("caBundle", "") != bundle) return false;
          }
        }
        return true;
      },
      60s))
      << "caBundle never written";
  Json secret = Secret();
  EXPECT_EQ(secret["type"], "kubernetes.io/tls");
  auto info = webhook::ParseCert(SecretPem(webhook::kCertKey));
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->ips, std::vector<std::string>{"127.0.0.1"});
  EXPECT_EQ(info->dns_names, webhook::ServiceDnsNames("kernelcache-webhook", op_ns_));
  ASSERT_TRUE(WaitUntilMutating()) << "no pod was ever mutated";
  EXPECT_EQ(ServedSerial(), info->serial_hex);

  auto labelled = client_->Create(res::kPods, ns_, Pod("labelled", {{"app", "vllm"}}));
  ASSERT_TRUE(labelled.ok()) << labelled.status();
  EXPECT_TRUE(Injected(*labelled)) << labelled->dump();
  // What the API stored, not only what the create answered.
  auto stored = client_->Get(res::kPods, ns_, "labelled");
  ASSERT_TRUE(stored.ok());
  EXPECT_TRUE(Injected(*stored));

  auto plain = client_->Create(res::kPods, ns_, Pod("plain", {{"app", "x"}}));
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_FALSE(Injected(*plain)) << plain->dump();
  EXPECT_FALSE((*plain)["metadata"].contains("annotations")) << plain->dump();

  // The matchCondition keeps opted-out pods away from the webhook.
  auto opted_out = client_->Create(
      res::kPods, ns_, Pod("opted-out", {{"app", "vllm"}, {"kernelcache.io/inject", "false"}}));
  ASSERT_TRUE(opted_out.ok()) << opted_out.status();
  EXPECT_FALSE(Injected(*opted_out));

  EXPECT_NE(op_->Log().find("webhook caBundle written"), std::string::npos);

  // What the round trip costs a pod create, through the real API server:
  // pods the webhook is called for against pods the matchCondition skips
  // (printed for docs/webhook-serving.md; timing is not asserted).
  std::vector<double> called, skipped;
  for (int i = 0; i < 40; ++i) {
    for (bool call : {true, false}) {
      std::map<std::string, std::string> labels = {{"app", "vllm"}};
      if (!call) labels["kernelcache.io/inject"] = "false";
      const auto t0 = std::chrono::steady_clock::now();
      auto p = client_->Create(res::kPods, ns_,
                               Pod((call ? "called-" : "skipped-") + std::to_string(i), labels));
      (call ? called : skipped)
          .push_back(
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                  .count());
      EXPECT_TRUE(p.ok() && Injected(*p) == call) << p.status();
    }
  }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::cerr << "pod create median: " << median(called) << " ms with the webhook called, "
            << median(skipped) << " ms skipped by the matchCondition\n";
}

TEST_F(WebhookIntegrationTest, OperatorDownIgnoreAdmitsUnmutatedFailDenies) {
  CreateConfigs("Ignore");
  StartOperator();
  ASSERT_TRUE(WaitUntilMutating()) << "no pod was ever mutated";
  op_->Kill(SIGKILL);

  auto ignored = client_->Create(res::kPods, ns_, Pod("while-down", {{"app", "vllm"}}));
  ASSERT_TRUE(ignored.ok()) << "Ignore must admit: " << ignored.status();
  EXPECT_FALSE(Injected(*ignored));

  auto patched = client_->Patch(
      res::kMutatingWebhookConfigurations, "", config_, kube::PatchType::kJsonPatch,
      Json::array({{{"op", "replace"}, {"path", "/webhooks/0/failurePolicy"}, {"value", "Fail"}}}));
  ASSERT_TRUE(patched.ok()) << patched.status();
  // The API server picks the change up from its watch; until then pods are
  // still admitted.
  Status denied = OkStatus();
  int i = 0;
  ASSERT_TRUE(Eventually(
      [&] {
        auto p =
            client_->Create(res::kPods, ns_, Pod("fail-" + std::to_string(i++), {{"app", "vllm"}}));
        if (p.ok()) return false;
        denied = p.status();
        return true;
      },
      30s, 200ms))
      << "Fail never denied a pod";
  EXPECT_NE(denied.message().find("failed calling webhook"), std::string::npos) << denied;
  EXPECT_NE(denied.message().find("pods.kernelcache.io"), std::string::npos) << denied;
  // An opted-out pod never reaches the webhook, so it is admitted even now.
  auto opted_out =
      client_->Create(res::kPods, ns_, Pod("opted-out-down", {{"kernelcache.io/inject", "false"}}));
  EXPECT_TRUE(opted_out.ok()) << opted_out.status();
}

TEST_F(WebhookIntegrationTest, ServingCertRotatesUnderLoadWithZeroFailedAdmissions) {
  // Fail: a failed call would deny the pod, so every failure is visible.
  CreateConfigs("Fail");
  // 30 s lifetime (plus 3 s backdating): renewed with 11 s left, every ~22 s.
  StartOperator({"--webhook-cert-lifetime=30s"});
  ASSERT_TRUE(WaitUntilMutating()) << "no pod was ever mutated";
  const std::string first = ServedSerial();
  ASSERT_FALSE(first.empty());

  int created = 0, failed = 0, unmutated = 0;
  std::string first_error;
  std::string rotated_to;
  int after_rotation = 0;
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  // Pods go in one after another until the served serial changed and 30 more
  // went through on the new certificate.
  while (std::chrono::steady_clock::now() < deadline && after_rotation < 30) {
    auto p = client_->Create(res::kPods, ns_,
                             Pod("load-" + std::to_string(created + failed), {{"app", "vllm"}}));
    if (!p.ok()) {
      ++failed;
      if (first_error.empty()) first_error = p.status().ToString();
    } else {
      ++created;
      if (!Injected(*p)) ++unmutated;
    }
    if (rotated_to.empty()) {
      const std::string now = ServedSerial();
      if (!now.empty() && now != first) rotated_to = now;
    } else {
      ++after_rotation;
    }
  }
  EXPECT_FALSE(rotated_to.empty()) << "the serving certificate never rotated";
  EXPECT_EQ(failed, 0) << first_error;
  EXPECT_EQ(unmutated, 0);
  EXPECT_GT(created, 30);
  // The Secret holds the new serial; the CA (and so caBundle) did not change.
  auto info = webhook::ParseCert(SecretPem(webhook::kCertKey));
  ASSERT_TRUE(info.ok());
  EXPECT_NE(info->serial_hex, first);
  EXPECT_NE(op_->Log().find("webhook certificate RenewServing"), std::string::npos)
      << "no renewal logged";
  std::cerr << "rotation: " << created << " pods admitted, " << failed << " failed, serial "
            << first << " -> " << rotated_to << "\n";
}

TEST_F(WebhookIntegrationTest, AFollowerServesTheCertificateTheLeaderWrote) {
  CreateConfigs("Ignore");
  StartOperator();
  ASSERT_TRUE(WaitUntilMutating()) << "no pod was ever mutated";
  const int follower_port = FreePort();
  auto follower = StartProcess(follower_port, "follower", {"--webhook-cert-lifetime=30s"});
  // The follower loads the leader's Secret (its own lifetime flag is not
  // applied: only the leader writes).
  const std::string serial = webhook::ParseCert(SecretPem(webhook::kCertKey))->serial_hex;
  EXPECT_TRUE(Eventually([&] { return ServedSerialOn(follower_port) == serial; }, 30s))
      << follower->Log();
  EXPECT_NE(follower->Log().find("webhook serving certificate loaded"), std::string::npos);
  EXPECT_EQ(follower->Log().find("webhook certificate "), std::string::npos) << follower->Log();
  EXPECT_EQ(webhook::ParseCert(SecretPem(webhook::kCertKey))->serial_hex, serial);
}

// A Deployment whose template matches: the controller-manager's ReplicaSet
// creates the pods, and each arrives with the gate, the volumes and the
// cache-view environment (the claim read-only: the CRD's default mode is
// Copy, which writes only to the emptyDir); a
// Deployment that matches nothing is untouched.
TEST_F(WebhookIntegrationTest, DeploymentPodsArriveGatedAndOthersUntouched) {
  CreateConfigs("Fail");
  int http_port = 0;
  op_ = StartProcess(port_, "webhook", {}, &http_port);
  ASSERT_TRUE(WaitUntilMutating()) << "no pod was ever mutated";
  auto deployment = [](const std::string& name, const std::string& app) {
    Json server = {{"name", "server"}, {"image", "kc.local/vllm:1"}};
    server["env"] = Json::array({{{"name", "MY_SETTING"}, {"value", "1"}}});
    server["resources"]["limits"]["nvidia.com/gpu"] = "1";
    Json d = {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}};
    d["metadata"]["name"] = name;
    d["spec"]["replicas"] = 2;
    d["spec"]["selector"]["matchLabels"]["app"] = app;
    d["spec"]["template"]["metadata"]["labels"]["app"] = app;
    d["spec"]["template"]["spec"]["containers"] = Json::array({server});
    return d;
  };
  ASSERT_TRUE(client_->Create(kDeployments, ns_, deployment("model", "vllm")).ok());
  ASSERT_TRUE(client_->Create(kDeployments, ns_, deployment("other", "other")).ok());
  // The ReplicaSet's pods of one app (the probe pods carry app=vllm too, but
  // no owner).
  auto pods_of = [&](const std::string& app) {
    std::vector<Json> out;
    kube::ListOptions o;
    o.label_selector = "app=" + app;
    auto list = client_->List(res::kPods, ns_, o);
    if (!list.ok()) return out;
    for (const Json& p : list->items) {
      if (p["metadata"].contains("ownerReferences")) out.push_back(p);
    }
    return out;
  };
  ASSERT_TRUE(Eventually([&] { return pods_of("vllm").size() >= 2; }, 60s)) << "no ReplicaSet pods";
  ASSERT_TRUE(Eventually([&] { return pods_of("other").size() >= 2; }, 60s));

  size_t model_pods = 0;
  for (const Json& pod : pods_of("vllm")) {
    ++model_pods;
    ASSERT_TRUE(Injected(pod)) << pod.dump(2);
    const Json& spec = pod["spec"];
    const Json& gate = spec["initContainers"][0];
    EXPECT_EQ(gate["command"][0].get<std::string>().find("initwarm") != std::string::npos ||
                  (gate.contains("args") && gate["args"][0] == "wait"),
              true)
        << gate.dump(2);
    const std::string gate_text = gate.dump();
    EXPECT_NE(gate_text.find("spec.nodeName"), std::string::npos) << "node from the downward API";
    EXPECT_NE(gate_text.find("vllm"), std::string::npos) << "the KernelCache's name";
    // Volumes: the operator's claim and the view emptyDir.
    bool claim = false, view = false;
    std::string claim_volume;
    for (const Json& v : spec["volumes"]) {
      if (v.contains("persistentVolumeClaim")) {
        claim = true;
        claim_volume = v["name"];
        EXPECT_EQ(v["persistentVolumeClaim"]["claimName"], "vllm-cache") << v.dump();
      }
      if (v.contains("emptyDir")) view = true;
    }
    EXPECT_TRUE(claim && view) << spec["volumes"].dump(2);
    // The app container: its own env kept, the view variables added, the
    // claim mounted read-only (Shared), the view at /var/run/kernelcache.
    const Json& app = spec["containers"][0];
    std::map<std::string, std::string> env;
    for (const Json& e : app["env"]) env[e["name"]] = e.value("value", "");
    EXPECT_EQ(env["MY_SETTING"], "1");
    EXPECT_EQ(env.count("TRITON_CACHE_DIR"), 1u) << app["env"].dump(2);
    EXPECT_EQ(env["TRITON_CACHE_DIR"].rfind("/var/run/kernelcache", 0), 0u)
        << env["TRITON_CACHE_DIR"];
    bool ro_claim = false, view_mount = false;
    for (const Json& m : app["volumeMounts"]) {
      if (m["name"] == claim_volume) ro_claim = m.value("readOnly", false);
      if (m["mountPath"] == "/var/run/kernelcache") view_mount = true;
    }
    EXPECT_TRUE(ro_claim) << app["volumeMounts"].dump(2);
    EXPECT_TRUE(view_mount) << app["volumeMounts"].dump(2);
    if (model_pods == 1) std::cerr << "mutated Deployment pod spec:\n" << spec.dump(2) << "\n";
  }
  EXPECT_EQ(model_pods, 2u);
  // Parity: the Deployment runs the warmed image (no annotation); a pod of
  // another image is gated with the annotation, the KernelCache gets a
  // ParityMismatch Event and the replica counts it.
  for (const Json& pod : pods_of("vllm")) {
    EXPECT_FALSE(pod["metadata"]["annotations"].contains("kernelcache.io/parity-mismatch"))
        << pod["metadata"].dump(2);
  }
  auto drifted = client_->Create(res::kPods, ns_, Pod("drifted", {{"app", "vllm"}}));
  ASSERT_TRUE(drifted.ok()) << drifted.status();
  ASSERT_TRUE(Injected(*drifted)) << drifted->dump(2);
  EXPECT_EQ((*drifted)["metadata"]["annotations"].value("kernelcache.io/parity-mismatch", ""),
            "image: no container runs the warmed image kc.local/vllm:1 (app runs kc.local/none:1)");
  EXPECT_TRUE(Eventually(
      [&] {
        kube::ListOptions o;
        o.field_selector = "reason=ParityMismatch,involvedObject.name=vllm";
        auto events = client_->List(res::kEvents, ns_, o);
        return events.ok() && !events->items.empty() &&
               events->items[0].value("message", "").find("kc.local/none:1") != std::string::npos;
      },
      30s))
      << "no ParityMismatch Event on the KernelCache";
  auto metrics = op::HttpGet("127.0.0.1", http_port, "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_NE(metrics->body.find("kernelcache_parity_mismatches_total{kernelcache=\"vllm\""),
            std::string::npos)
      << metrics->body;
  for (const Json& pod : pods_of("other")) {
    EXPECT_FALSE(pod["spec"].contains("initContainers")) << pod.dump(2);
    EXPECT_FALSE(pod["metadata"].contains("annotations") &&
                 pod["metadata"]["annotations"].contains("kernelcache.io/injected"));
  }
}

// The validating webhook: a second KernelCache selecting the same pods is
// denied, and the denial names the first one and the field; a StorageClass
// that neither exists nor is named by a PersistentVolume is a warning.
TEST_F(WebhookIntegrationTest, AnOverlappingKernelCacheIsDeniedNamingTheOther) {
  CreateConfigs("Fail");
  StartOperator();
  ASSERT_TRUE(WaitUntilMutating()) << "no pod was ever mutated";
  Status denied = OkStatus();
  int i = 0;
  // Until the validating webhook answers, a create may still be admitted
  // (then it is removed and tried again under another name).
  ASSERT_TRUE(Eventually(
      [&] {
        const std::string name = "overlap-" + std::to_string(i++);
        auto kc = client_->Create(kKernelCaches, ns_, KernelCache(name, "vllm"));
        if (kc.ok()) {
          (void)client_->Delete(kKernelCaches, ns_, name);
          return false;
        }
        denied = kc.status();
        return true;
      },
      30s, 200ms))
      << "an overlapping KernelCache was admitted";
  EXPECT_NE(denied.message().find("\"vllm\""), std::string::npos) << denied;
  EXPECT_NE(denied.message().find("podSelector"), std::string::npos) << denied;
  // A KernelCache selecting other pods is admitted.
  auto other = client_->Create(kKernelCaches, ns_, KernelCache("disjoint", "other"));
  EXPECT_TRUE(other.ok()) << other.status();
  // One naming a StorageClass that does not exist is admitted with a
  // warning (kubectl's --warnings-as-errors turns it into a failed exit
  // whose message is the warning; the object is stored all the same).
  Json missing_class = KernelCache("missing-class", "third");
  missing_class["spec"]["storage"]["storageClassName"] = "no-such-class";
  std::string out;
  Status warned = cluster_->KubectlWithInput(
      {"--warnings-as-errors", "-n", ns_, "create", "-f", "-"}, missing_class.dump(), &out);
  EXPECT_FALSE(warned.ok()) << "no warning for a missing StorageClass: " << out;
  EXPECT_NE(warned.message().find("no-such-class"), std::string::npos) << warned;
  EXPECT_NE(warned.message().find("spec.storage.storageClassName"), std::string::npos) << warned;
  EXPECT_TRUE(client_->Get(kKernelCaches, ns_, "missing-class").ok());
  // A class no StorageClass has but a static PersistentVolume names (as
  // the demo's hostPath volume does) binds the claim: no warning.
  const std::string static_class = "kc-static-" + name_;
  Json pv = {{"metadata", {{"name", static_class}}},
             {"spec",
              {{"capacity", {{"storage", "1Gi"}}},
               {"accessModes", {"ReadWriteMany"}},
               {"persistentVolumeReclaimPolicy", "Retain"},
               {"storageClassName", static_class},
               {"hostPath", {{"path", "/tmp/" + static_class}}}}}};
  ASSERT_TRUE(client_->Create(res::kPersistentVolumes, "", pv).ok());
  Json static_volume = KernelCache("static-volume", "fourth");
  static_volume["spec"]["storage"]["storageClassName"] = static_class;
  Status quiet = cluster_->KubectlWithInput(
      {"--warnings-as-errors", "-n", ns_, "create", "-f", "-"}, static_volume.dump(), &out);
  (void)client_->Delete(res::kPersistentVolumes, "", static_class);
  EXPECT_TRUE(quiet.ok()) << "a warning although a PersistentVolume names the class: " << quiet
                          << " " << out;
}

// A fresh install with two replicas, at the chart's check interval (10 s):
// a replica reports Ready only while a client trusting exactly the caBundle
// of the configuration completes a TLS handshake with it (so the webhook
// Service and `helm install --wait` never pick one that would make
// failurePolicy Ignore admit a pod ungated), and only one CA is ever created.
// Before the fix both were Ready ~1 s after start, up to 10 s before either
// served a certificate.
TEST_F(WebhookIntegrationTest, FreshReplicasAreReadyOnlyWhileTheCaBundleTrustsThem) {
  CreateConfigs("Ignore");
  struct Replica {
    std::string tag;
    int webhook_port = 0, http_port = 0;
    std::unique_ptr<OperatorProcess> op;
    bool ever_ready = false;
  };
  Replica replicas[2];
  replicas[0].tag = "replica-a";
  replicas[0].webhook_port = port_;
  replicas[1].tag = "replica-b";
  replicas[1].webhook_port = FreePort();
  const auto t0 = std::chrono::steady_clock::now();
  for (Replica& r : replicas) {
    r.op = StartProcess(r.webhook_port, r.tag, {"--webhook-cert-check-interval=10s"}, &r.http_port);
  }
  std::vector<std::string> violations;
  int ready_samples = 0;
  ASSERT_TRUE(Eventually(
      [&] {
        bool all = true;
        for (Replica& r : replicas) {
          if (!Ready(r.http_port)) {
            all = false;
            continue;
          }
          ++ready_samples;
          if (!r.ever_ready) {
            r.ever_ready = true;
            std::cerr << r.tag << " Ready after "
                      << std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::steady_clock::now() - t0)
                             .count()
                      << " ms\n";
          }
          const std::string bundle = ConfigBundle();
          if (bundle.empty() || ServedSerialOn(r.webhook_port, bundle).empty()) {
            violations.push_back(r.tag + " Ready while a client trusting caBundle (" +
                                 std::to_string(webhook::SplitPemCerts(bundle).size()) +
                                 " CAs) could not complete TLS with it");
          }
        }
        return all;
      },
      90s, 50ms))
      << "not both Ready: " << replicas[0].op->Log() << replicas[1].op->Log();
  EXPECT_GT(ready_samples, 0);
  EXPECT_TRUE(violations.empty()) << violations.size() << " violations, first: " << violations[0];
  // What `helm install --wait` does next: a model pod at once. The URL
  // clientConfig names replica-a.
  for (int i = 0; i < 5; ++i) {
    auto p = client_->Create(res::kPods, ns_,
                             Pod("right-after-" + std::to_string(i), {{"app", "vllm"}}));
    ASSERT_TRUE(p.ok()) << p.status();
    EXPECT_TRUE(Injected(*p)) << "admitted ungated right after both replicas were Ready";
  }
  // One CA for the install: no replica replaced another's certificate.
  const std::string logs = replicas[0].op->Log() + replicas[1].op->Log();
  EXPECT_EQ(Count(logs, "webhook certificate RecreateAll"), 1u) << logs;
  auto served = webhook::ParseCert(SecretPem(webhook::kCertKey));
  ASSERT_TRUE(served.ok()) << served.status();
  for (Replica& r : replicas)
    EXPECT_EQ(ServedSerialOn(r.webhook_port), served->serial_hex) << r.tag;
}

// A CA rotation (the CA's key lost) with two replicas under failurePolicy
// Fail while pods are created one after another: the leader announces the
// next CA in caBundle before anything serves it, promotes it after the
// settle time, and the replicas reload; caBundle never stops trusting the
// old CA, no replica ever reports not Ready, and no pod is denied or
// admitted unmutated.
TEST_F(WebhookIntegrationTest, ACaRotationKeepsEveryReplicaTrustedAndReady) {
  CreateConfigs("Fail");
  int http_a = 0, http_b = 0;
  op_ = StartProcess(port_, "replica-a", {}, &http_a);
  const int port_b = FreePort();
  auto b = StartProcess(port_b, "replica-b", {}, &http_b);
  ASSERT_TRUE(WaitUntilMutating()) << "no pod was ever mutated";
  ASSERT_TRUE(Eventually([&] { return Ready(http_a) && Ready(http_b); }, 60s));
  const std::string old_ca = SecretPem(webhook::kCaKey);
  ASSERT_FALSE(old_ca.empty());
  ASSERT_TRUE(client_
                  ->Patch(res::kSecrets, op_ns_, "kernelcache-webhook-tls", kube::PatchType::kMerge,
                          {{"data", {{"ca.key", nullptr}}}})
                  .ok());

  int created = 0, failed = 0, unmutated = 0, not_ready = 0, untrusted_old = 0, after = 0;
  bool announced_before_promoted = false;
  std::string first_error, new_ca;
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  // Until both replicas serve a cert of the new CA, then 20 more pods.
  while (std::chrono::steady_clock::now() < deadline && after < 20) {
    auto p = client_->Create(res::kPods, ns_,
                             Pod("rot-" + std::to_string(created + failed), {{"app", "vllm"}}));
    if (!p.ok()) {
      ++failed;
      if (first_error.empty()) first_error = p.status().ToString();
    } else {
      ++created;
      if (!Injected(*p)) ++unmutated;
    }
    not_ready += !Ready(http_a) + !Ready(http_b);
    const std::string bundle = ConfigBundle();
    const auto cas = webhook::SplitPemCerts(bundle);
    if (std::find(cas.begin(), cas.end(), old_ca) == cas.end()) ++untrusted_old;
    const std::string secret_ca = SecretPem(webhook::kCaKey);
    if (secret_ca == old_ca && cas.size() >= 2) announced_before_promoted = true;
    if (new_ca.empty() && secret_ca != old_ca) new_ca = secret_ca;
    if (!new_ca.empty() && !ServedSerialOn(port_, new_ca).empty() &&
        !ServedSerialOn(port_b, new_ca).empty()) {
      ++after;
    }
  }
  ASSERT_FALSE(new_ca.empty()) << "the CA was never rotated\n" << op_->Log();
  EXPECT_EQ(after, 20) << "both replicas never served a cert of the new CA";
  EXPECT_TRUE(announced_before_promoted) << "the new CA was not in caBundle before the Secret";
  EXPECT_EQ(failed, 0) << first_error;
  EXPECT_EQ(unmutated, 0);
  EXPECT_EQ(not_ready, 0) << "a replica reported not Ready during the rotation";
  EXPECT_EQ(untrusted_old, 0) << "caBundle dropped the old CA during the rotation";
  EXPECT_EQ(ConfigBundle(), new_ca + old_ca);
  EXPECT_EQ(ConfigBundle(res::kValidatingWebhookConfigurations), new_ca + old_ca);
  const std::string logs = op_->Log() + b->Log();
  EXPECT_EQ(Count(logs, "next CA announced in caBundle"), 1u) << logs;
  EXPECT_EQ(Count(logs, "webhook certificate RecreateAll"), 2u) << "install + rotation";
  std::cerr << "CA rotation: " << created << " pods admitted, " << failed << " failed, "
            << unmutated << " unmutated\n";
}

}  // namespace
}  // namespace kc::optest
