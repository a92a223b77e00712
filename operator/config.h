// Config: the operator program's settings, from flags and an optional YAML
// config file.
//
// Precedence: built-in defaults < the YAML file named by --config < flags.
// Flags are "--name=value" or "--name value"; a boolean flag given alone
// ("--leader-elect") means true. YAML keys are the flag names without the
// leading dashes ("leader-elect: false", "namespaces: [a, b]").
//
// The flags are declared once (config.cc) with the one flag layer of both
// programs (base/flags.h), which parses them and generates Usage().
// Every problem is an InvalidArgument naming the flag or key and the fix
// ("--workers: 0 is out of range 1..64"); unknown flags and unknown keys are
// errors, not ignored. The program prints the message and exits non-zero.
//
// Ports: --http-port serves every endpoint on one port (default 8080).
// --metrics-port, --health-port and --resolve-port move one endpoint group
// to its own port; equal ports share one listener. Port 0 means "any free
// port" (tests).
// Pure apart from reading the config file (ParseConfig takes the file
// reader and the environment as arguments so tests need no files).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/flags.h"
#include "base/status.h"
#include "core/security_context.h"
#include "operator/decide/types.h"

namespace kc::op {

// Each default is stated once: as the initial value of its Config field
// below, which the flag declarations (config.cc) bind to and --help shows.
// Those Decide's Settings share are named in operator/decide/types.h.
// The PriorityClass the chart ships (charts/kernelcache/templates/
// priorityclass.yaml): warmup pods may preempt model pods on a full pool.
inline constexpr char kDefaultWarmupPriorityClass[] = "kernelcache-warmup";

struct Config {
  // --help / -h: print Usage() and exit 0; nothing else is parsed or checked.
  bool help = false;
  std::string config_file;  // --config
  // Cluster access: --kubeconfig PATH, else in-cluster when running in a
  // pod, else $KUBECONFIG / ~/.kube/config.
  std::string kubeconfig;
  bool in_cluster = false;  // --in-cluster: require the in-cluster config
  // Namespaces to watch; empty = all namespaces (--namespaces=a,b or "all").
  std::vector<std::string> namespaces;
  int workers = 4;  // --workers, 1..64
  // Client-side rate limit of API requests (token bucket; 0 = none). Events
  // have a bucket of their own of the same size. bench/scale: 20/40 held a
  // 200-KernelCache sync to 20 requests a second (docs/benchmarks.md).
  int kube_api_qps = 50;     // --kube-api-qps, 0..100000
  int kube_api_burst = 100;  // --kube-api-burst, 1..100000
  // Leader election (Lease in coordination.k8s.io).
  bool leader_elect = true;                            // --leader-elect
  std::string lease_name = "kernelcache-operator";     // --leader-election-id
  std::string lease_namespace = "kernelcache-system";  // --leader-election-namespace
  std::string identity;                                // --identity; default $POD_NAME or host_pid
  std::chrono::seconds lease_duration{15};             // --lease-duration
  std::chrono::seconds renew_deadline{10};             // --renew-deadline
  std::chrono::seconds retry_period{2};                // --retry-period
  // HTTP endpoints.
  std::string bind_address = "0.0.0.0";  // --bind-address
  int http_port = 8080;                  // --http-port: default for all groups
  std::optional<int> metrics_port;       // --metrics-port: /metrics
  std::optional<int> health_port;        // --health-port: /healthz /readyz
  std::optional<int> resolve_port;       // --resolve-port: /v1/resolve
  std::optional<int> misses_port;        // --misses-port: POST /v1/misses (the miss channel)
  // Warmup Jobs.
  std::string initwarm_image = kDefaultInitwarmImage;       // --initwarm-image
  std::string image_pull_policy = kDefaultImagePullPolicy;  // --image-pull-policy
  std::string warmup_service_account;                       // --warmup-service-account
  std::string service_account_name;  // --service-account-name: the operator's own
  std::chrono::seconds retry_base = kDefaultWarmupRetryBase;         // --warmup-retry-base
  std::chrono::seconds retry_cap = kDefaultWarmupRetryCap;           // --warmup-retry-cap
  std::chrono::seconds pvc_binding_grace = kDefaultPvcBindingGrace;  // --pvc-binding-grace
  // --warmup-priority-class: priorityClassName of warmup pods; "" = none.
  std::string warmup_priority_class = kDefaultWarmupPriorityClass;
  // --warmup-unschedulable-grace
  std::chrono::seconds warmup_unschedulable_grace = kDefaultWarmupUnschedulableGrace;
  // Logging.
  std::string log_format = "json";  // --log-format: json | text
  std::string log_level = "info";   // --log-level: debug | info | warn | error
  // Informer resync (a full re-reconcile of every KernelCache).
  std::chrono::seconds resync_period{600};  // --resync-period; 0 = never
  // Admission webhooks over HTTPS (docs/webhook-serving.md). Port 0: off.
  int webhook_port = 0;                                           // --webhook-port
  std::string webhook_namespace = "kernelcache-system";           // --webhook-namespace
  std::string webhook_service_name = "kernelcache-webhook";       // --webhook-service-name
  std::string webhook_cert_secret = "kernelcache-webhook-tls";    // --webhook-cert-secret
  bool webhook_cert_secret_external = false;                      // --webhook-cert-secret-external
  std::string webhook_mutating_config = "kernelcache-webhook";    // --webhook-mutating-config
  std::string webhook_validating_config = "kernelcache-webhook";  // --webhook-validating-config
  std::vector<std::string> webhook_cert_ips;                      // --webhook-cert-ips
  std::chrono::seconds webhook_ca_lifetime{87600LL * 3600};       // --webhook-ca-lifetime (10y)
  std::chrono::seconds webhook_cert_lifetime{2160LL * 3600};      // --webhook-cert-lifetime (90d)
  std::chrono::seconds webhook_cert_check_interval{10};           // --webhook-cert-check-interval
  // The resolve endpoint's base URL (http://host[:port]; initwarm appends
  // /v1/resolve) injected into pods; empty: derived from the operator
  // Service (--resolve-service-name) in --webhook-namespace.
  std::string resolve_url;                                    // --resolve-url
  std::string resolve_service_name = "kernelcache-operator";  // --resolve-service-name
  // The base URL pods reach /v1/resolve under.
  std::string ResolveUrl() const;
  // The miss channel's base URL as pods reach it (--misses-url); empty: the
  // resolve URL when both share a port, else the resolve URL's host at
  // --misses-port (the chart's Service serves it under the same number).
  std::string misses_url;  // --misses-url
  std::string MissesUrl() const;
  // The miss watcher's own uid (core::MissWatcherSecurity).
  int miss_watcher_uid = static_cast<int>(core::kDefaultMissWatcherUid);  // --miss-watcher-uid

  int MetricsPort() const { return metrics_port.value_or(http_port); }
  int HealthPort() const { return health_port.value_or(http_port); }
  int ResolvePort() const { return resolve_port.value_or(http_port); }
  int MissesPort() const { return misses_port.value_or(ResolvePort()); }
  // Distinct ports in use, each with the endpoint groups it serves
  // ("metrics", "health", "resolve", "misses").
  std::map<int, std::set<std::string>> Listeners() const;
};

using FileReader = std::function<StatusOr<std::string>(const std::string& path)>;

// `args` excludes argv[0]. Returns the validated config, or InvalidArgument
// naming the offending flag/key. "--help" (or "-h") anywhere returns a
// Config with help = true (the caller prints Usage() and exits 0).
StatusOr<Config> ParseConfig(const std::vector<std::string>& args, const FileReader& read_file,
                             const EnvLookup& getenv);

// Production helper for ParseConfig's file reader (the environment's is
// kc::ProcessEnv, base/flags.h).
StatusOr<std::string> ReadWholeFile(const std::string& path);

std::string Usage();

}  // namespace kc::op
