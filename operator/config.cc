#include "operator/config.h"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "core/resolve_answer.h"

namespace kc::op {
namespace {

// Concatenation without temporaries (clang-tidy
// performance-inefficient-string-concatenation inside loops).
template <typename... Parts>
std::string Cat(const Parts&... parts) {
  std::string s;
  (s.append(parts), ...);
  return s;
}

constexpr char kUsageLine[] = "Usage: kernelcache-operator [flags]";
constexpr char kUsageSummary[] =
    "Flags are also accepted as keys of the YAML file given by --config.";

// The flags, declared once, bound to `c`'s fields; their defaults are
// those fields' initial values (config.h).
void DeclareFlags(FlagSet& f, Config& c) {
  f.String("config", &c.config_file, "YAML config file (keys = flag names)");
  f.String("kubeconfig", &c.kubeconfig, "kubeconfig file")
      .DefaultText("in-cluster, then $KUBECONFIG");
  f.Bool("in-cluster", &c.in_cluster, "require the in-cluster service account config");
  f.List("namespaces", &c.namespaces, "namespaces to watch, comma separated, or \"all\"")
      .DefaultText("all");
  f.Int("workers", &c.workers, 1, 64, "concurrent reconciles");
  f.Int("kube-api-qps", &c.kube_api_qps, 0, 100000,
        "API requests per second (client-side limit; Events have their own); 0 = unlimited");
  f.Int("kube-api-burst", &c.kube_api_burst, 1, 100000, "API requests allowed in a burst");
  f.Bool("leader-elect", &c.leader_elect, "use a Lease so only one replica reconciles");
  f.String("leader-election-id", &c.lease_name, "Lease name");
  f.String("leader-election-namespace", &c.lease_namespace, "Lease namespace");
  f.String("identity", &c.identity, "leader election identity")
      .DefaultText("$POD_NAME or host_pid");
  f.Duration("lease-duration", &c.lease_duration, kFlagDurations, "Lease duration");
  f.Duration("renew-deadline", &c.renew_deadline, kFlagDurations,
             "leader gives up after failing to renew this long");
  f.Duration("retry-period", &c.retry_period, kFlagDurations, "interval between Lease attempts");
  f.String("bind-address", &c.bind_address, "address the HTTP listeners bind");
  f.Int("http-port", &c.http_port, 0, 65535, "port for every endpoint unless moved; 0 = any");
  f.Int("metrics-port", &c.metrics_port, 0, 65535, "port for /metrics").DefaultText("--http-port");
  f.Int("health-port", &c.health_port, 0, 65535, "port for /healthz and /readyz")
      .DefaultText("--http-port");
  f.Int("resolve-port", &c.resolve_port, 0, 65535, "port for /v1/resolve")
      .DefaultText("--http-port");
  f.Int("misses-port", &c.misses_port, 0, 65535,
        "port for POST /v1/misses (the miss channel: its own listener, so a report flood "
        "never delays /v1/resolve or the probes)")
      .DefaultText("--resolve-port");
  f.String("misses-url", &c.misses_url,
           "the miss channel's base URL injected into miss watchers, http://host[:port]")
      .DefaultText("the resolve URL, at --misses-port when that differs");
  f.Int("miss-watcher-uid", &c.miss_watcher_uid, 1, 2147483647,
        "the miss watcher's own uid (never the app's: a pod stating it does not harvest)");
  f.String("initwarm-image", &c.initwarm_image, "image of initwarm prepare/seal/gc in warmup Jobs");
  f.String("image-pull-policy", &c.image_pull_policy, "pull policy of the initwarm image");
  f.String("warmup-service-account", &c.warmup_service_account, "service account of warmup pods")
      .DefaultText("default");
  f.String("service-account-name", &c.service_account_name,
           "the operator's own ServiceAccount (the chart: the pod's spec.serviceAccountName); "
           "a server-form warmup template naming it is refused")
      .Env("KC_SERVICE_ACCOUNT");
  f.Duration("warmup-retry-base", &c.retry_base, kFlagDurations,
             "first retry delay after a failed warmup");
  f.Duration("warmup-retry-cap", &c.retry_cap, kFlagDurations, "longest retry delay");
  f.Duration("pvc-binding-grace", &c.pvc_binding_grace, kFlagDurations,
             "time a created PVC may stay Pending");
  f.String("warmup-priority-class", &c.warmup_priority_class,
           "PriorityClass of warmup pods, so they may preempt model pods on a full GPU pool; "
           "\"\" = none")
      .DefaultText(Cat(std::string(kDefaultWarmupPriorityClass), ", which the chart creates"));
  f.Duration("warmup-unschedulable-grace", &c.warmup_unschedulable_grace, kFlagDurations,
             "a warmup pod unschedulable this long is reported (condition WarmupUnschedulable, "
             "a Warning Event) and onTimeout: StartCold pods start cold at once");
  f.String("log-format", &c.log_format, "json | text");
  f.String("log-level", &c.log_level, "debug | info | warn | error");
  f.Duration("resync-period", &c.resync_period, kFlagDurations,
             "re-reconcile everything this often; 0 = never");
  f.Int("webhook-port", &c.webhook_port, 0, 65535, "HTTPS port of the admission webhooks; 0 = off");
  f.String("webhook-namespace", &c.webhook_namespace,
           "namespace of the webhook Service and cert Secret");
  f.String("webhook-service-name", &c.webhook_service_name,
           "Service whose DNS names the serving cert carries");
  f.String("webhook-cert-secret", &c.webhook_cert_secret,
           "Secret holding ca.crt, tls.crt, tls.key");
  f.Bool("webhook-cert-secret-external", &c.webhook_cert_secret_external,
         "the Secret is issued by cert-manager: only read it, never write caBundle");
  f.String("webhook-mutating-config", &c.webhook_mutating_config,
           "MutatingWebhookConfiguration whose caBundle the operator writes");
  f.String("webhook-validating-config", &c.webhook_validating_config,
           "ValidatingWebhookConfiguration whose caBundle the operator writes");
  f.List("webhook-cert-ips", &c.webhook_cert_ips, "IP SANs of the serving cert, comma separated");
  f.Duration("webhook-ca-lifetime", &c.webhook_ca_lifetime, kFlagDurations,
             "lifetime of the generated CA");
  f.Duration("webhook-cert-lifetime", &c.webhook_cert_lifetime, kFlagDurations,
             "lifetime of the serving cert, renewed with a third left");
  f.Duration("webhook-cert-check-interval", &c.webhook_cert_check_interval, kFlagDurations,
             "how often the Secret and caBundles are checked");
  f.String("resolve-url", &c.resolve_url,
           "the resolve endpoint's base URL injected into pods, http://host[:port]")
      .DefaultText("http://<resolve-service-name>.<webhook-namespace>.svc");
  f.String("resolve-service-name", &c.resolve_service_name, "Service in front of /v1/resolve");
}

bool IsDnsLabel(const std::string& s) {
  if (s.empty() || s.size() > 63) return false;
  for (char c : s) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '-')) {
      return false;
    }
  }
  return s.front() != '-' && s.back() != '-';
}

Status Validate(const Config& c) {
  for (const std::string& ns : c.namespaces) {
    if (!IsDnsLabel(ns)) {
      return InvalidArgumentError("--namespaces: \"" + ns +
                                  "\" is not a valid namespace name (lower-case DNS label)");
    }
  }
  if (c.log_format != "json" && c.log_format != "text") {
    return InvalidArgumentError("--log-format: \"" + c.log_format + "\" is not one of json, text");
  }
  if (c.log_level != "debug" && c.log_level != "info" && c.log_level != "warn" &&
      c.log_level != "error") {
    return InvalidArgumentError("--log-level: \"" + c.log_level +
                                "\" is not one of debug, info, warn, error");
  }
  if (c.in_cluster && !c.kubeconfig.empty()) {
    return InvalidArgumentError("--in-cluster and --kubeconfig exclude each other: pass one");
  }
  if (c.leader_elect) {
    if (!IsDnsLabel(c.lease_name)) {
      return InvalidArgumentError("--leader-election-id: \"" + c.lease_name +
                                  "\" is not a valid Lease name");
    }
    if (!IsDnsLabel(c.lease_namespace)) {
      return InvalidArgumentError("--leader-election-namespace: \"" + c.lease_namespace +
                                  "\" is not a valid namespace name");
    }
    if (c.lease_duration.count() <= 0 || c.renew_deadline.count() <= 0 ||
        c.retry_period.count() <= 0) {
      return InvalidArgumentError(
          "--lease-duration, --renew-deadline and --retry-period must be positive");
    }
    if (c.renew_deadline >= c.lease_duration) {
      return InvalidArgumentError("--renew-deadline (" + std::to_string(c.renew_deadline.count()) +
                                  "s) must be shorter than --lease-duration (" +
                                  std::to_string(c.lease_duration.count()) + "s)");
    }
    if (c.retry_period >= c.renew_deadline) {
      return InvalidArgumentError("--retry-period must be shorter than --renew-deadline");
    }
  }
  if (c.initwarm_image.empty()) {
    return InvalidArgumentError("--initwarm-image: empty; name the initwarm image");
  }
  if (c.image_pull_policy != "Always" && c.image_pull_policy != "IfNotPresent" &&
      c.image_pull_policy != "Never") {
    return InvalidArgumentError("--image-pull-policy: \"" + c.image_pull_policy +
                                "\" is not one of Always, IfNotPresent, Never");
  }
  if (c.retry_base.count() <= 0 || c.retry_cap < c.retry_base) {
    return InvalidArgumentError(
        "--warmup-retry-base must be positive and not above --warmup-retry-cap");
  }
  if (!c.warmup_priority_class.empty()) {
    const std::string& p = c.warmup_priority_class;
    const bool ok = p.size() <= 253 &&
                    std::all_of(p.begin(), p.end(),
                                [](char ch) {
                                  return std::islower(static_cast<unsigned char>(ch)) ||
                                         std::isdigit(static_cast<unsigned char>(ch)) ||
                                         ch == '-' || ch == '.';
                                }) &&
                    p.front() != '-' && p.front() != '.' && p.back() != '-' && p.back() != '.';
    if (!ok) {
      return InvalidArgumentError("--warmup-priority-class: \"" + p.substr(0, 64) +
                                  "\" is not a PriorityClass name (lower-case letters, digits, "
                                  "'-', '.'); \"\" for none");
    }
  }
  if (c.warmup_unschedulable_grace.count() <= 0) {
    return InvalidArgumentError("--warmup-unschedulable-grace: must be positive");
  }
  if (c.resync_period.count() < 0) {
    return InvalidArgumentError("--resync-period: must not be negative");
  }
  if (!c.resolve_url.empty()) {
    // Every gate the webhook injects would fail on it: refuse it at start.
    if (auto u = core::ParseResolveUrl(c.resolve_url); !u.ok()) {
      return u.status().WithContext("--resolve-url");
    }
  }
  if (!c.misses_url.empty()) {
    if (auto u = core::ParseResolveUrl(c.misses_url); !u.ok()) {
      return u.status().WithContext("--misses-url");
    }
  }
  if (c.webhook_port != 0) {
    if (!IsDnsLabel(c.webhook_namespace)) {
      return InvalidArgumentError("--webhook-namespace: \"" + c.webhook_namespace +
                                  "\" is not a valid namespace name");
    }
    if (!IsDnsLabel(c.webhook_service_name)) {
      return InvalidArgumentError("--webhook-service-name: \"" + c.webhook_service_name +
                                  "\" is not a valid Service name");
    }
    if (c.Listeners().count(c.webhook_port)) {
      return InvalidArgumentError("--webhook-port: " + std::to_string(c.webhook_port) +
                                  " is also an HTTP port; HTTPS needs its own");
    }
    if (c.webhook_cert_secret.empty()) {
      return InvalidArgumentError("--webhook-cert-secret: empty; name the Secret");
    }
    if (c.webhook_cert_lifetime < std::chrono::seconds(30) ||
        c.webhook_ca_lifetime < c.webhook_cert_lifetime) {
      return InvalidArgumentError(
          "--webhook-cert-lifetime must be at least 30s and not above --webhook-ca-lifetime");
    }
    if (c.webhook_cert_check_interval.count() <= 0) {
      return InvalidArgumentError("--webhook-cert-check-interval: must be positive");
    }
  }
  return OkStatus();
}

// Applies the YAML file's keys through the flag declarations.
Status ApplyYaml(const std::string& path, const std::string& text, FlagSet& flags) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError("config file " + path + ": not valid YAML: " + e.what());
  }
  if (root.IsNull()) return OkStatus();
  if (!root.IsMap()) {
    return InvalidArgumentError("config file " + path + ": expected a mapping of flag names");
  }
  for (const auto& kv : root) {
    std::string key;
    try {
      key = kv.first.as<std::string>();
    } catch (const YAML::Exception&) {
      return InvalidArgumentError("config file " + path + ": a key is not a string");
    }
    const FlagSet::Flag* flag = flags.Find(key);
    if (flag == nullptr || key == "config") {
      return InvalidArgumentError(Cat("config file ", path, ": unknown key \"", key,
                                      "\" (keys are the flag names; see --help)"));
    }
    std::string value;
    try {
      if (kv.second.IsSequence()) {
        if (flag->kind() != FlagSet::Kind::kList) {
          return InvalidArgumentError(
              Cat("config file ", path, ": key \"", key, "\" takes a single value, not a list"));
        }
        for (const auto& item : kv.second) {
          if (!value.empty()) value += ",";
          value += item.as<std::string>();
        }
      } else if (kv.second.IsScalar()) {
        value = kv.second.as<std::string>();
      } else {
        return InvalidArgumentError(Cat("config file ", path, ": key \"", key,
                                        "\" must be a scalar",
                                        flag->kind() == FlagSet::Kind::kList ? " or a list" : ""));
      }
    } catch (const YAML::Exception& e) {
      return InvalidArgumentError(Cat("config file ", path, ": key \"", key, "\": ", e.what()));
    }
    Status s = flags.Set(key, value);
    if (!s.ok()) return s.WithContext("config file " + path);
  }
  return OkStatus();
}

std::string DefaultIdentity(const EnvLookup& getenv) {
  if (auto pod = getenv("POD_NAME"); pod && !pod->empty()) return *pod;
  char host[256] = {0};
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = 0;
  std::string h = host[0] ? host : "operator";
  return h + "_" + std::to_string(getpid());
}

}  // namespace

std::map<int, std::set<std::string>> Config::Listeners() const {
  std::map<int, std::set<std::string>> out;
  out[MetricsPort()].insert("metrics");
  out[HealthPort()].insert("health");
  out[ResolvePort()].insert("resolve");
  out[MissesPort()].insert("misses");
  return out;
}

std::string Config::MissesUrl() const {
  if (!misses_url.empty()) return misses_url;
  const std::string resolve = ResolveUrl();
  if (MissesPort() == ResolvePort()) return resolve;
  // The resolve URL's host (the Service, or its pinned address), at the
  // miss channel's port (the Service names it with the same number).
  auto u = core::ParseResolveUrl(resolve);  // validated by ParseConfig
  if (!u.ok()) return resolve;
  const std::string host = u->host.find(':') != std::string::npos ? "[" + u->host + "]" : u->host;
  return "http://" + host + ":" + std::to_string(MissesPort()) + u->prefix;
}

std::string Config::ResolveUrl() const {
  if (!resolve_url.empty()) return resolve_url;
  // The base URL: initwarm's resolve client appends /v1/resolve itself.
  return "http://" + resolve_service_name + "." + webhook_namespace + ".svc";
}

std::string Usage() {
  Config defaults;
  FlagSet flags(kUsageLine, kUsageSummary);
  DeclareFlags(flags, defaults);
  return flags.Help();
}

StatusOr<Config> ParseConfig(const std::vector<std::string>& args, const FileReader& read_file,
                             const EnvLookup& getenv) {
  Config c;
  FlagSet flags(kUsageLine, kUsageSummary);
  DeclareFlags(flags, c);
  // Pass 1: split into (flag, value) pairs, checking names.
  KC_ASSIGN_OR_RETURN(std::vector<FlagSet::Arg> given, flags.Split(args));
  if (flags.help_requested()) {
    Config help;
    help.help = true;
    return help;
  }
  // Pass 2: the config file, then the flags over it.
  for (const FlagSet::Arg& a : given) {
    if (a.flag->name() == "config") c.config_file = a.value;
  }
  if (!c.config_file.empty()) {
    StatusOr<std::string> text = read_file(c.config_file);
    if (!text.ok()) {
      return InvalidArgumentError("--config: cannot read " + c.config_file + ": " +
                                  text.status().message());
    }
    KC_RETURN_IF_ERROR(ApplyYaml(c.config_file, *text, flags));
  }
  KC_RETURN_IF_ERROR(flags.Apply(given));
  if (c.namespaces == std::vector<std::string>{"all"}) c.namespaces.clear();
  if (c.identity.empty()) c.identity = DefaultIdentity(getenv);
  // An empty kubeconfig without --in-cluster: the program tries in-cluster,
  // then $KUBECONFIG, then ~/.kube/config.
  KC_RETURN_IF_ERROR(Validate(c));
  return c;
}

StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFoundError("cannot open " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace kc::op
