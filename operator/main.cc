// kernelcache-operator: the program. Parses flags (operator/config.h), sets
// up logging, the API client, the controller, the HTTP endpoints and leader
// election, and shuts down gracefully on SIGTERM/SIGINT: stop the workers
// (draining the queue), release the Lease, stop the informers and the HTTP
// listeners, exit 0. Losing leadership (not asked to stop) exits 1 so the
// pod restarts as a follower, as controller-runtime does.
// Exit codes: 0 ok, 1 runtime failure, 2 bad configuration.
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>
#include <stop_token>
#include <thread>

#include "kube/config.h"
#include "kube/leader_election.h"
#include "kube/rest_client.h"
#include "operator/config.h"
#include "operator/controller/controller.h"
#include "operator/controller/heap.h"
#include "operator/serving/cert_controller.h"
#include "operator/serving/handlers.h"
#include "operator/serving/http_server.h"
#include "operator/serving/logging.h"
#include "operator/serving/metrics.h"
#include "operator/webhook/mutate.h"
#include "operator/wiring.h"

namespace kc::op {
namespace {

// The admission webhooks: an HTTPS listener, its routes, and the
// certificate controller that feeds it (docs/webhook-serving.md).
struct Webhooks {
  std::unique_ptr<HttpServer> server;
  std::unique_ptr<webhook::EventQueue> events;
  std::unique_ptr<webhook::CertController> certs;
  std::jthread cert_thread;

  ~Webhooks() { Stop(); }
  void Stop() {
    if (cert_thread.joinable()) {
      cert_thread.request_stop();
      cert_thread.join();
    }
    if (server) server->Stop();
    events.reset();  // writes what is queued
  }
};

Status StartWebhooks(const Config& c, kube::Client& client, Controller& controller,
                     OperatorMetrics& metrics, const std::atomic<bool>& leading, const Logger& log,
                     Webhooks& w) {
  KC_ASSIGN_OR_RETURN(w.server, HttpServer::ListenTls(c.bind_address, c.webhook_port));
  w.events = std::make_unique<webhook::EventQueue>(
      [&controller, &metrics](const webhook::WarningEvent& e) {
        if (e.reason == webhook::kReasonParity)
          metrics.CountParityMismatch(e.kc_namespace, e.kc_name);
        if (auto kc = controller.KernelCacheObject(e.kc_namespace, e.kc_name)) {
          controller.events()->Emit(*kc, "Warning", e.reason, e.message);
        }
      });
  webhook::WebhookDeps deps;
  deps.list = [&controller](const std::string& ns) { return controller.KernelCachesIn(ns); };
  // A KernelCache naming a StorageClass that neither exists nor is named by
  // a PersistentVolume is admitted with a warning. KernelCache writes are
  // rare, so each asks the API server (no informer).
  deps.storage_class = [&client](const std::string& name) {
    return webhook::LookUpStorageClass(client, name);
  };
  deps.settings = InjectSettingsFrom(c);
  deps.events = w.events.get();
  webhook::RegisterWebhookHandlers(*w.server, std::move(deps));
  w.server->Start();

  HttpServer* server = w.server.get();
  w.certs = std::make_unique<webhook::CertController>(
      client, CertControllerOptionsFrom(c), log.With("logger", "webhook-certs"),
      [server](const webhook::CertPair& p) {
        return server->SetCertificate(p.cert_pem, p.key_pem);
      },
      [&controller](const kube::Json& secret, const std::string& reason, const std::string& msg) {
        controller.events()->Emit(secret, "Normal", reason, msg);
      });
  w.cert_thread = std::jthread([certs = w.certs.get(), &leading](const std::stop_token& stop) {
    certs->Run(stop, [&leading] { return leading.load(); });
  });
  log.Info("webhooks listening (HTTPS)",
           {{"address", c.bind_address},
            {"port", w.server->port()},
            {"secret", c.webhook_namespace + "/" + c.webhook_cert_secret},
            {"external", c.webhook_cert_secret_external}});
  return OkStatus();
}

StatusOr<kube::ClusterConfig> LoadCluster(const Config& c) {
  StatusOr<kube::ClusterConfig> cluster =
      c.in_cluster ? kube::LoadInClusterConfig() : kube::LoadDefault(c.kubeconfig);
  if (cluster.ok()) {
    cluster->qps = c.kube_api_qps;
    cluster->burst = c.kube_api_burst;
  }
  return cluster;
}

// The API client and the Events' own (its own token bucket, as client-go's
// broadcaster).
struct Clients {
  std::unique_ptr<kube::Client> api;
  std::unique_ptr<kube::Client> events;
  std::unique_ptr<kube::Client> reviews;  // the miss channel's TokenReviews
};

// Each request's wait for its client's token goes to `metrics`.
StatusOr<Clients> NewClients(const kube::ClusterConfig& cluster, OperatorMetrics& metrics) {
  auto observer = [&metrics](const char* client) {
    return [&metrics, client](const std::string& verb, kube::Clock::Duration waited) {
      metrics.ObserveRateLimiterWait(client, verb, std::chrono::duration<double>(waited).count());
    };
  };
  Clients out;
  KC_ASSIGN_OR_RETURN(out.api, kube::NewClient(cluster, observer("api")));
  KC_ASSIGN_OR_RETURN(out.events, kube::NewClient(cluster, observer("events")));
  KC_ASSIGN_OR_RETURN(out.reviews, kube::NewClient(cluster, observer("reviews")));
  return out;
}

// Blocks the shutdown signals in this and every later thread; one waiter
// thread takes them (WaitForShutdownSignal).
sigset_t BlockShutdownSignals() {
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  sigaddset(&sigs, SIGUSR1);  // internal: wakes the waiter at exit
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  return sigs;
}

std::jthread WaitForShutdownSignal(const sigset_t& sigs, std::stop_source& stop,
                                   const Logger& log) {
  return std::jthread([&stop, sigs, &log] {
    int sig = 0;
    sigwait(&sigs, &sig);
    if (sig != SIGUSR1) log.Info("signal received; shutting down", {{"signal", sig}});
    stop.request_stop();
  });
}

// The plain HTTP listeners, one per distinct port, each serving its groups.
StatusOr<std::vector<std::unique_ptr<HttpServer>>> StartListeners(
    const Config& c, Controller& controller, OperatorMetrics& metrics,
    const webhook::CertController* certs, const MissIntake* misses, BoundedWorkers* miss_workers,
    const Logger& log) {
  std::vector<std::unique_ptr<HttpServer>> servers;
  for (const auto& [port, groups] : c.Listeners()) {
    KC_ASSIGN_OR_RETURN(std::unique_ptr<HttpServer> server,
                        HttpServer::Listen(c.bind_address, port));
    RegisterHandlers(*server, groups, controller, metrics, certs, misses, miss_workers);
    server->Start();
    log.Info("listening", {{"address", c.bind_address},
                           {"port", server->port()},
                           {"endpoints", std::vector<std::string>(groups.begin(), groups.end())}});
    servers.push_back(std::move(server));
  }
  return servers;
}

// Runs the workers while this replica holds the Lease; returns the exit
// code: 0 when asked to stop, 1 when leadership was lost, 2 for a bad
// election config.
int RunElected(const Config& c, kube::Client& client, Controller& controller,
               OperatorMetrics& metrics, Webhooks& webhooks, std::atomic<bool>& leading,
               std::stop_source& stop, const Logger& log) {
  kube::LeaderElectionConfig le = LeaderElectionFrom(c);
  const Logger lelog = log.With("logger", "leader-election");
  le.on_error = [lelog](const Status& s) { lelog.Warn("lease", {{"error", s.ToString()}}); };
  // Join the election once the informer caches are synced: a leader
  // restarted under the same identity would otherwise renew its own Lease
  // at once and hold it through a full relist (21-33 s at 1,000 nodes) while
  // the synced standby waits; so the standby takes over when the Lease
  // expires, and on a small fleet the restarted replica still takes its own
  // Lease back as soon as it synced (bench/faults, docs/benchmarks.md).
  le.ready_to_lead = [&controller, lelog](const std::stop_token& token) {
    lelog.Info("waiting for informer caches before joining the election");
    if (!controller.WaitForSync(token, std::chrono::hours(24))) return false;
    lelog.Info("caches synced; joining the election");
    return true;
  };
  le.callbacks.on_started_leading = [&](const std::stop_token& token) {
    lelog.Info("became leader", {{"identity", c.identity}});
    metrics.SetLeader(c.lease_name, true);
    leading = true;
    // The certificates at once, not at the next check: on a fresh install
    // no replica can serve (or be Ready) before the leader writes them.
    if (webhooks.certs) webhooks.certs->Kick();
    std::stop_source both;
    std::stop_callback a(token, [&] { both.request_stop(); });
    std::stop_callback b(stop.get_token(), [&] { both.request_stop(); });
    controller.RunWorkers(both.get_token());
  };
  le.callbacks.on_stopped_leading = [&] {
    leading = false;
    metrics.SetLeader(c.lease_name, false);
    lelog.Info("stopped leading", {{"identity", c.identity}});
  };
  le.callbacks.on_new_leader = [&](const std::string& id) {
    lelog.Info("leader observed", {{"leader", id}});
  };
  metrics.SetLeader(c.lease_name, false);
  auto elector = kube::LeaderElector::Create(client, le);
  if (!elector.ok()) {
    log.Error("bad leader election config", {{"error", elector.status().ToString()}});
    return 2;
  }
  (*elector)->Run(stop.get_token());
  if (stop.stop_requested()) return 0;
  log.Error("leadership lost; exiting so a restart rejoins as a follower");
  return 1;
}

int Run(int argc, char** argv) {
  // Before any thread: 2 malloc arenas, and freed pages handed back every
  // 10 s (operator/controller/heap.h: a relist's high-water otherwise stays resident).
  LimitMallocArenas(2);
  std::vector<std::string> args(argv + 1, argv + argc);
  auto config = ParseConfig(args, ReadWholeFile, ProcessEnv);
  if (!config.ok()) {
    std::cerr << "kernelcache-operator: " << config.status().message() << "\n";
    return 2;
  }
  const Config& c = *config;
  if (c.help) {
    std::cout << Usage();
    return 0;
  }
  SetDefaultLogger(Logger(&std::cerr, c.log_format == "json", ParseLogLevel(c.log_level)));
  const Logger& log = DefaultLogger();
  const sigset_t sigs = BlockShutdownSignals();
  std::stop_source stop;

  auto cluster = LoadCluster(c);
  if (!cluster.ok()) {
    log.Error("cannot load cluster config", {{"error", cluster.status().ToString()}});
    return 2;
  }
  OperatorMetrics metrics;
  auto clients = NewClients(*cluster, metrics);
  if (!clients.ok()) {
    log.Error("cannot create API client", {{"error", clients.status().ToString()}});
    return 1;
  }
  kube::Client& client = *clients->api;

  HeapTrimmer trimmer(std::chrono::seconds(10));
  Controller controller(client, ControllerOptionsFrom(c, clients->events.get()), &metrics,
                        log.With("logger", "controller"));

  // The webhooks first: /readyz on the plain listeners asks their
  // certificate controller.
  std::atomic<bool> leading{!c.leader_elect};
  Webhooks webhooks;
  if (c.webhook_port != 0) {
    Status s = StartWebhooks(c, client, controller, metrics, leading, log, webhooks);
    if (!s.ok()) {
      log.Error("cannot start the webhooks", {{"error", s.ToString()}});
      return 1;
    }
  }
  // The miss channel: reviews on their own client and threads, at most
  // kMissReviewQueue reports waiting (more answer 429).
  TokenReviewCache reviews;
  const MissIntake misses = MissIntakeFor(
      controller, metrics, *clients->reviews, &reviews, [&leading] { return leading.load(); },
      log.With("logger", "misses"));
  BoundedWorkers miss_workers(kMissReviewThreads, kMissReviewQueue);
  auto servers =
      StartListeners(c, controller, metrics, webhooks.certs.get(), &misses, &miss_workers, log);
  if (!servers.ok()) {
    log.Error("cannot start HTTP listener", {{"error", servers.status().ToString()}});
    return 1;
  }
  std::jthread signal_thread = WaitForShutdownSignal(sigs, stop, log);

  log.Info("starting",
           {{"identity", c.identity},
            {"namespaces", c.namespaces.empty() ? std::vector<std::string>{"*"} : c.namespaces},
            {"workers", c.workers},
            {"leaderElect", c.leader_elect},
            {"server", cluster->server}});
  controller.StartInformers();
  int exit_code = 0;
  if (c.leader_elect) {
    exit_code = RunElected(c, client, controller, metrics, webhooks, leading, stop, log);
  } else {
    controller.RunWorkers(stop.get_token());
  }

  webhooks.Stop();
  controller.Stop();
  miss_workers.Stop();  // before the listeners: its jobs answer on them
  for (auto& s : *servers) s->Stop();
  log.Info("stopped", {{"exitCode", exit_code}});
  // The signal thread may still wait in sigwait: wake it.
  pthread_kill(signal_thread.native_handle(), SIGUSR1);
  return exit_code;
}

}  // namespace
}  // namespace kc::op

int main(int argc, char** argv) { return kc::op::Run(argc, argv); }
