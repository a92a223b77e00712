// webhook_bench: admission latency of the operator's webhook server, as the
// API server sees it: POST /mutate-pods with realistic AdmissionReview pod
// bodies over loopback TLS, on keep-alive connections, open loop at a fixed
// rate (each request has a scheduled send time; latency counts from it, so a
// stall shows up in the tail instead of slowing the sender). The server runs
// in a forked child (the operator's HttpServer, routes and review code), so
// its RSS and CPU are its own.
//
//   webhook_bench [--rps 200] [--seconds 30] [--connections 4]
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "operator/serving/handlers.h"
#include "operator/serving/http_server.h"
#include "operator/testing/https_client.h"
#include "operator/webhook/certs.h"

namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

long StatusKib(pid_t pid, const char* field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) return std::atol(line.c_str() + std::string(field).size());
  }
  return -1;
}

double CpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string s((std::istreambuf_iterator<char>(in)), {});
  const size_t close = s.rfind(')');
  if (close == std::string::npos) return -1;
  std::vector<std::string> f;
  size_t pos = close + 2;
  while (pos < s.size()) {
    size_t sp = s.find(' ', pos);
    if (sp == std::string::npos) sp = s.size();
    f.push_back(s.substr(pos, sp - pos));
    pos = sp + 1;
  }
  // Fields after ')': state(0) ... utime(11) stime(12).
  if (f.size() < 13) return -1;
  return (std::atof(f[11].c_str()) + std::atof(f[12].c_str())) / sysconf(_SC_CLK_TCK);
}

// A pod as a Deployment's ReplicaSet creates it: labels, owner reference,
// two containers with env, resources, probes and mounts, volumes.
Json ReviewBody(int i) {
  Json env = Json::array();
  for (int e = 0; e < 12; ++e) {
    env.push_back(
        {{"name", "SETTING_" + std::to_string(e)}, {"value", "value-" + std::to_string(e)}});
  }
  Json container = {
      {"name", "server"},
      {"image",
       "registry.example.com/llm/vllm@sha256:9f2c4b1a7e3d5c6b8a9f0e1d2c3b4a5f6e7d8c9b0a1f2e3"
       "d4c5b6a7f8e9d0c1b"},
      {"args", {"--model", "/models/llama-3-8b", "--tensor-parallel-size", "1", "--port", "8000"}},
      {"env", env},
      {"ports", {{{"containerPort", 8000}, {"name", "http"}, {"protocol", "TCP"}}}},
      {"resources",
       {{"limits", {{"nvidia.com/gpu", "1"}, {"memory", "64Gi"}}},
        {"requests", {{"cpu", "8"}, {"memory", "64Gi"}, {"nvidia.com/gpu", "1"}}}}},
      {"readinessProbe",
       {{"httpGet", {{"path", "/health"}, {"port", 8000}}}, {"periodSeconds", 5}}},
      {"volumeMounts",
       {{{"name", "models"}, {"mountPath", "/models"}, {"readOnly", true}},
        {{"name", "kube-api-access-x7k2p"},
         {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"},
         {"readOnly", true}}}},
      {"terminationMessagePath", "/dev/termination-log"},
      {"imagePullPolicy", "IfNotPresent"}};
  Json sidecar = {{"name", "metrics"},
                  {"image", "registry.example.com/obs/exporter:1.4.2"},
                  {"resources", {{"requests", {{"cpu", "50m"}, {"memory", "64Mi"}}}}}};
  const std::string name = "llama-7d9f8b6c5-" + std::to_string(10000 + i);
  Json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"generateName", "llama-7d9f8b6c5-"},
        {"namespace", "ml-serving"},
        {"labels", {{"app", "llama"}, {"pod-template-hash", "7d9f8b6c5"}, {"team", "inference"}}},
        {"ownerReferences",
         {{{"apiVersion", "apps/v1"},
           {"kind", "ReplicaSet"},
           {"name", "llama-7d9f8b6c5"},
           {"uid", "3f1c2d4e-5a6b-7c8d-9e0f-112233445566"},
           {"controller", true},
           {"blockOwnerDeletion", true}}}}}},
      {"spec",
       {{"containers", {container, sidecar}},
        {"volumes",
         {{{"name", "models"}, {"persistentVolumeClaim", {{"claimName", "models"}}}},
          {{"name", "kube-api-access-x7k2p"},
           {"projected", {{"sources", {{{"serviceAccountToken", {{"path", "token"}}}}}}}}}}},
        {"nodeSelector", {{"nvidia.com/gpu.product", "NVIDIA-H200"}}},
        {"tolerations",
         {{{"key", "nvidia.com/gpu"}, {"operator", "Exists"}, {"effect", "NoSchedule"}}}},
        {"serviceAccountName", "default"},
        {"restartPolicy", "Always"},
        {"terminationGracePeriodSeconds", 30}}}};
  return {{"apiVersion", "admission.k8s.io/v1"},
          {"kind", "AdmissionReview"},
          {"request",
           {{"uid", "705ab4f5-6393-11e8-b7cc-" + std::to_string(100000000000 + i)},
            {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
            {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
            {"requestKind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
            {"requestResource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
            {"name", name},
            {"namespace", "ml-serving"},
            {"operation", "CREATE"},
            {"userInfo",
             {{"username", "system:serviceaccount:kube-system:replicaset-controller"},
              {"groups", {"system:serviceaccounts", "system:authenticated"}}}},
            {"object", pod},
            {"oldObject", nullptr},
            {"dryRun", false},
            {"options", {{"apiVersion", "meta.k8s.io/v1"}, {"kind", "CreateOptions"}}}}}};
}

[[noreturn]] void RunServer(const kc::webhook::CertPair& serving, int ready_fd) {
  auto server = kc::op::HttpServer::ListenTls("127.0.0.1", 0);
  if (!server.ok() || !(*server)->SetCertificate(serving.cert_pem, serving.key_pem).ok()) _exit(3);
  kc::webhook::WebhookDeps deps;
  // One KernelCache selecting the pods (the operator's informer cache).
  kc::core::KernelCache llama;
  llama.metadata.name = "llama";
  llama.metadata.namespace_ = "ml-serving";
  llama.spec.pod_selector.match_labels = {{"app", "llama"}};
  llama.spec.storage.size = "20Gi";
  deps.list = [llama](const std::string& ns) {
    return ns == llama.metadata.namespace_ ? std::vector<kc::core::KernelCache>{llama}
                                           : std::vector<kc::core::KernelCache>();
  };
  deps.settings = {"ghcr.io/kernelcache/initwarm:0.1.0",
                   "http://kernelcache-operator.kernelcache-system.svc", "kernelcache-system",
                   "bench"};
  kc::webhook::RegisterWebhookHandlers(**server, deps);
  (*server)->Start();
  const int port = (*server)->port();
  if (write(ready_fd, &port, sizeof(port)) != sizeof(port)) _exit(4);
  close(ready_fd);
  pause();  // until SIGTERM
  _exit(0);
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t i = std::min(v.size() - 1, static_cast<size_t>(p / 100.0 * v.size()));
  return v[i];
}

}  // namespace

int main(int argc, char** argv) {
  int rps = 200, seconds = 30, connections = 4;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    const int v = std::atoi(argv[i + 1]);
    if (a == "--rps") rps = v;
    if (a == "--seconds") seconds = v;
    if (a == "--connections") connections = v;
  }
  if (rps <= 0 || seconds <= 0 || connections <= 0) {
    std::fprintf(stderr, "usage: webhook_bench [--rps N] [--seconds N] [--connections N]\n");
    return 2;
  }
  const auto now = std::chrono::system_clock::now();
  auto ca = kc::webhook::CreateCa("bench-ca", now, std::chrono::hours(24));
  auto serving = ca.ok() ? kc::webhook::IssueServingCert(*ca, {{"localhost"}, {"127.0.0.1"}}, now)
                         : kc::StatusOr<kc::webhook::CertPair>(ca.status());
  if (!serving.ok()) {
    std::fprintf(stderr, "certs: %s\n", serving.status().ToString().c_str());
    return 1;
  }
  int pipefd[2];
  if (pipe(pipefd) != 0) return 1;
  const pid_t child = fork();
  if (child == 0) {
    close(pipefd[0]);
    RunServer(*serving, pipefd[1]);
  }
  close(pipefd[1]);
  int port = 0;
  if (read(pipefd[0], &port, sizeof(port)) != sizeof(port)) {
    std::fprintf(stderr, "server did not start\n");
    return 1;
  }
  const long rss_start = StatusKib(child, "VmRSS:");

  // Bodies prepared up front (the client's cost is not the server's).
  const int total = rps * seconds;
  std::vector<std::string> bodies;
  bodies.reserve(256);
  for (int i = 0; i < 256; ++i) bodies.push_back(ReviewBody(i).dump());
  std::printf("body: %zu bytes (AdmissionReview of a 2-container Deployment pod)\n",
              bodies[0].size());

  kc::op::HttpsClientOptions co;
  co.ca_pem = ca->cert_pem;
  std::vector<std::unique_ptr<kc::op::HttpsConnection>> conns;
  for (int c = 0; c < connections; ++c) {
    auto conn = kc::op::HttpsConnection::Connect("127.0.0.1", port, co);
    if (!conn.ok()) {
      std::fprintf(stderr, "connect: %s\n", conn.status().ToString().c_str());
      kill(child, SIGTERM);
      return 1;
    }
    conns.push_back(std::move(*conn));
  }
  // Warm-up: 50 requests per connection, not measured.
  for (auto& c : conns) {
    for (int i = 0; i < 50; ++i) (void)c->Request("POST", "/mutate-pods", bodies[i % 256]);
  }
  const long rss_warm = StatusKib(child, "VmRSS:");
  const double cpu_before = CpuSeconds(child);

  const auto interval = std::chrono::nanoseconds(1000000000LL / rps);
  const auto t0 = Clock::now() + std::chrono::milliseconds(50);
  std::vector<std::vector<double>> lat(connections), service(connections);
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < connections; ++c) {
    threads.emplace_back([&, c] {
      for (int i = c; i < total; i += connections) {
        const auto scheduled = t0 + interval * i;
        std::this_thread::sleep_until(scheduled);
        const auto sent = Clock::now();
        auto r = conns[c]->Request("POST", "/mutate-pods", bodies[i % 256]);
        const auto done = Clock::now();
        if (!r.ok() || r->status != 200 || r->body.find("\"allowed\":true") == std::string::npos ||
            r->body.find("\"patch\":") == std::string::npos) {
          ++errors;
          continue;
        }
        lat[c].push_back(std::chrono::duration<double, std::milli>(done - scheduled).count());
        service[c].push_back(std::chrono::duration<double, std::milli>(done - sent).count());
      }
    });
  }
  for (auto& t : threads) t.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - t0).count();
  const double cpu = CpuSeconds(child) - cpu_before;
  const long rss_end = StatusKib(child, "VmRSS:");
  const long hwm = StatusKib(child, "VmHWM:");
  std::vector<double> all, all_service;
  for (int c = 0; c < connections; ++c) {
    all.insert(all.end(), lat[c].begin(), lat[c].end());
    all_service.insert(all_service.end(), service[c].begin(), service[c].end());
  }
  kill(child, SIGTERM);
  waitpid(child, nullptr, 0);

  std::printf(
      "load: %d requests at %d/s for %d s over %d keep-alive TLS connections; %.1f s, "
      "%.1f req/s achieved, %d errors\n",
      total, rps, seconds, connections, elapsed, all.size() / elapsed, errors.load());
  std::printf("latency from scheduled send (ms): p50 %.3f  p90 %.3f  p99 %.3f  max %.3f\n",
              Percentile(all, 50), Percentile(all, 90), Percentile(all, 99), Percentile(all, 100));
  std::printf("service time (ms):                p50 %.3f  p90 %.3f  p99 %.3f  max %.3f\n",
              Percentile(all_service, 50), Percentile(all_service, 90), Percentile(all_service, 99),
              Percentile(all_service, 100));
  std::printf(
      "server: RSS %ld KiB at start, %ld KiB after warm-up, %ld KiB after the run "
      "(peak %ld KiB); CPU %.2f s for the run (%.1f%% of one core)\n",
      rss_start, rss_warm, rss_end, hwm, cpu, 100.0 * cpu / elapsed);
  return errors.load() == 0 ? 0 : 1;
}
