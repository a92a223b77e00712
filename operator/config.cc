#include "operator/config.h"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "base/numbers.h"
#include "core/api_types.h"

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

enum class Kind { kString, kInt, kBool, kDuration, kList, kPort, kOptPort };

struct Flag {
  const char* name;
  Kind kind;
  std::string help;
  std::function<Status(Config&, const std::string&)> set;
};

StatusOr<int64_t> ParseInt(const std::string& where, const std::string& v) {
  return ParseInt64(v, where);
}

StatusOr<bool> ParseBool(const std::string& where, const std::string& v) {
  if (v == "true" || v == "1" || v == "on" || v == "yes") return true;
  if (v == "false" || v == "0" || v == "off" || v == "no") return false;
  return InvalidArgumentError(where + ": \"" + v.substr(0, 64) +
                              "\" is not a boolean (use true or false)");
}

// "90", "45s", "5m", "1h30m" -> seconds, at most core::kMaxDuration (so
// no clock arithmetic on it can overflow). The Go-style form is
// core::ParseDuration, the one parser of durations.
StatusOr<std::chrono::seconds> ParseSeconds(const std::string& where, const std::string& v) {
  if (v.empty()) return InvalidArgumentError(where + ": empty duration (use e.g. 30s, 5m, 1h)");
  if (std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    KC_ASSIGN_OR_RETURN(int64_t n, ParseInt64(v, where, 0, core::kMaxDuration.count()));
    return std::chrono::seconds(n);
  }
  auto d = core::ParseDuration(v);
  if (d.ok()) return *d;
  if (d.status().message().find("too long") != std::string::npos) {
    return InvalidArgumentError(where + ": " + d.status().message());
  }
  return InvalidArgumentError(Cat(where, ": \"", v.substr(0, 64),
                                  "\" is not a duration (units h, m, s; e.g. 30s, 5m, 1h30m)"));
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

Status SetPort(const std::string& where, const std::string& v, int* out) {
  KC_ASSIGN_OR_RETURN(int64_t n, ParseInt(where, v));
  if (n < 0 || n > 65535) {
    return InvalidArgumentError(where + ": " + v + " is out of range 0..65535");
  }
  *out = static_cast<int>(n);
  return OkStatus();
}

std::vector<std::string> SplitList(const std::string& v) {
  std::vector<std::string> out;
  std::stringstream ss(v);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t b = item.find_first_not_of(" \t");
    size_t e = item.find_last_not_of(" \t");
    if (b == std::string::npos) continue;
    out.push_back(item.substr(b, e - b + 1));
  }
  return out;
}

using Setter = std::function<Status(Config&, const std::string&)>;

Setter Str(std::string Config::*field) {
  return [field](Config& c, const std::string& v) {
    c.*field = v;
    return OkStatus();
  };
}
Setter Bool(bool Config::*field, const char* name) {
  return [field, name](Config& c, const std::string& v) -> Status {
    KC_ASSIGN_OR_RETURN(c.*field, ParseBool(std::string("--") + name, v));
    return OkStatus();
  };
}
Setter Secs(std::chrono::seconds Config::*field, const char* name) {
  return [field, name](Config& c, const std::string& v) -> Status {
    KC_ASSIGN_OR_RETURN(c.*field, ParseSeconds(std::string("--") + name, v));
    return OkStatus();
  };
}
Setter OptPort(std::optional<int> Config::*field, const char* name) {
  return [field, name](Config& c, const std::string& v) -> Status {
    int p = 0;
    KC_RETURN_IF_ERROR(SetPort(std::string("--") + name, v, &p));
    c.*field = p;
    return OkStatus();
  };
}

const std::vector<Flag>& Flags() {
  static const std::vector<Flag> flags = {
      {"config", Kind::kString, "YAML config file (keys = flag names)", Str(&Config::config_file)},
      {"kubeconfig", Kind::kString, "kubeconfig file (default: in-cluster, then $KUBECONFIG)",
       Str(&Config::kubeconfig)},
      {"in-cluster", Kind::kBool, "require the in-cluster service account config",
       Bool(&Config::in_cluster, "in-cluster")},
      {"namespaces", Kind::kList, "namespaces to watch, comma separated, or \"all\" (default all)",
       [](Config& c, const std::string& v) {
         auto list = SplitList(v);
         if (list.size() == 1 && list[0] == "all") list.clear();
         c.namespaces = list;
         return OkStatus();
       }},
      {"workers", Kind::kInt, "concurrent reconciles, 1..64 (default 2)",
       [](Config& c, const std::string& v) -> Status {
         KC_ASSIGN_OR_RETURN(int64_t n, ParseInt("--workers", v));
         if (n < 1 || n > 64)
           return InvalidArgumentError("--workers: " + v + " is out of range 1..64");
         c.workers = static_cast<int>(n);
         return OkStatus();
       }},
      {"leader-elect", Kind::kBool, "use a Lease so only one replica reconciles (default true)",
       Bool(&Config::leader_elect, "leader-elect")},
      {"leader-election-id", Kind::kString, "Lease name (default kernelcache-operator)",
       Str(&Config::lease_name)},
      {"leader-election-namespace", Kind::kString, "Lease namespace (default kernelcache-system)",
       Str(&Config::lease_namespace)},
      {"identity", Kind::kString, "leader election identity (default $POD_NAME or host_pid)",
       Str(&Config::identity)},
      {"lease-duration", Kind::kDuration, "Lease duration (default 15s)",
       Secs(&Config::lease_duration, "lease-duration")},
      {"renew-deadline", Kind::kDuration, "leader gives up after failing to renew this long (10s)",
       Secs(&Config::renew_deadline, "renew-deadline")},
      {"retry-period", Kind::kDuration, "interval between Lease attempts (default 2s)",
       Secs(&Config::retry_period, "retry-period")},
      {"bind-address", Kind::kString, "address the HTTP listeners bind (default 0.0.0.0)",
       Str(&Config::bind_address)},
      {"http-port", Kind::kPort, "port for every endpoint unless moved (default 8080; 0 = any)",
       [](Config& c, const std::string& v) { return SetPort("--http-port", v, &c.http_port); }},
      {"metrics-port", Kind::kOptPort, "port for /metrics",
       OptPort(&Config::metrics_port, "metrics-port")},
      {"health-port", Kind::kOptPort, "port for /healthz and /readyz",
       OptPort(&Config::health_port, "health-port")},
      {"resolve-port", Kind::kOptPort, "port for /v1/resolve",
       OptPort(&Config::resolve_port, "resolve-port")},
      {"initwarm-image", Kind::kString, "image of initwarm prepare/seal/gc in warmup Jobs",
       Str(&Config::initwarm_image)},
      {"image-pull-policy", Kind::kString, "pull policy of the initwarm image (IfNotPresent)",
       Str(&Config::image_pull_policy)},
      {"warmup-service-account", Kind::kString, "service account of warmup pods (default: default)",
       Str(&Config::warmup_service_account)},
      {"warmup-retry-base", Kind::kDuration, "first retry delay after a failed warmup (30s)",
       Secs(&Config::retry_base, "warmup-retry-base")},
      {"warmup-retry-cap", Kind::kDuration, "longest retry delay (1h)",
       Secs(&Config::retry_cap, "warmup-retry-cap")},
      {"pvc-binding-grace", Kind::kDuration, "time a created PVC may stay Pending (2m)",
       Secs(&Config::pvc_binding_grace, "pvc-binding-grace")},
      {"warmup-priority-class", Kind::kString,
       Cat("PriorityClass of warmup pods, so they may preempt model pods on a full GPU pool; "
           "\"\" = none (default ",
           std::string(kDefaultWarmupPriorityClass), ", which the chart creates)"),
       Str(&Config::warmup_priority_class)},
      {"warmup-unschedulable-grace", Kind::kDuration,
       Cat("a warmup pod unschedulable this long is reported (condition WarmupUnschedulable, "
           "a Warning Event) and onTimeout: StartCold pods start cold at once (default ",
           std::to_string(kDefaultWarmupUnschedulableGrace.count()), "s)"),
       Secs(&Config::warmup_unschedulable_grace, "warmup-unschedulable-grace")},
      {"log-format", Kind::kString, "json | text (default json)", Str(&Config::log_format)},
      {"log-level", Kind::kString, "debug | info | warn | error (default info)",
       Str(&Config::log_level)},
      {"resync-period", Kind::kDuration, "re-reconcile everything this often; 0 = never (10m)",
       Secs(&Config::resync_period, "resync-period")},
      {"webhook-port", Kind::kPort, "HTTPS port of the admission webhooks (default 0 = off)",
       [](Config& c, const std::string& v) {
         return SetPort("--webhook-port", v, &c.webhook_port);
       }},
      {"webhook-namespace", Kind::kString,
       "namespace of the webhook Service and cert Secret (kernelcache-system)",
       Str(&Config::webhook_namespace)},
      {"webhook-service-name", Kind::kString,
       "Service whose DNS names the serving cert carries (kernelcache-webhook)",
       Str(&Config::webhook_service_name)},
      {"webhook-cert-secret", Kind::kString,
       "Secret holding ca.crt, tls.crt, tls.key (kernelcache-webhook-tls)",
       Str(&Config::webhook_cert_secret)},
      {"webhook-cert-secret-external", Kind::kBool,
       "the Secret is issued by cert-manager: only read it, never write caBundle (false)",
       Bool(&Config::webhook_cert_secret_external, "webhook-cert-secret-external")},
      {"webhook-mutating-config", Kind::kString,
       "MutatingWebhookConfiguration whose caBundle the operator writes (kernelcache-webhook)",
       Str(&Config::webhook_mutating_config)},
      {"webhook-validating-config", Kind::kString,
       "ValidatingWebhookConfiguration whose caBundle the operator writes (kernelcache-webhook)",
       Str(&Config::webhook_validating_config)},
      {"webhook-cert-ips", Kind::kList, "IP SANs of the serving cert, comma separated (none)",
       [](Config& c, const std::string& v) {
         c.webhook_cert_ips = SplitList(v);
         return OkStatus();
       }},
      {"webhook-ca-lifetime", Kind::kDuration, "lifetime of the generated CA (87600h = 10y)",
       Secs(&Config::webhook_ca_lifetime, "webhook-ca-lifetime")},
      {"webhook-cert-lifetime", Kind::kDuration,
       "lifetime of the serving cert, renewed with a third left (2160h = 90d)",
       Secs(&Config::webhook_cert_lifetime, "webhook-cert-lifetime")},
      {"webhook-cert-check-interval", Kind::kDuration,
       "how often the Secret and caBundles are checked (10s)",
       Secs(&Config::webhook_cert_check_interval, "webhook-cert-check-interval")},
      {"resolve-url", Kind::kString,
       "the resolve endpoint's base URL injected into pods, http://host[:port] (default "
       "http://<resolve-service-name>.<ns>.svc)",
       Str(&Config::resolve_url)},
      {"resolve-service-name", Kind::kString,
       "Service in front of /v1/resolve (kernelcache-operator)",
       Str(&Config::resolve_service_name)},
  };
  return flags;
}

const Flag* FindFlag(const std::string& name) {
  for (const Flag& f : Flags()) {
    if (name == f.name) return &f;
  }
  return nullptr;
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

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

// Applies the YAML file's keys to `c`.
Status ApplyYaml(const std::string& path, const std::string& text, Config& c) {
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
    const Flag* flag = FindFlag(key);
    if (flag == nullptr || key == "config") {
      return InvalidArgumentError(Cat("config file ", path, ": unknown key \"", key,
                                      "\" (keys are the flag names; see --help)"));
    }
    std::string value;
    try {
      if (kv.second.IsSequence()) {
        if (flag->kind != Kind::kList) {
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
                                        flag->kind == Kind::kList ? " or a list" : ""));
      }
    } catch (const YAML::Exception& e) {
      return InvalidArgumentError(Cat("config file ", path, ": key \"", key, "\": ", e.what()));
    }
    Status s = flag->set(c, value);
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
  return out;
}

std::string Config::ResolveUrl() const {
  if (!resolve_url.empty()) return resolve_url;
  // The base URL: initwarm's resolve client appends /v1/resolve itself.
  return "http://" + resolve_service_name + "." + webhook_namespace + ".svc";
}

std::string Usage() {
  std::string u =
      "Usage: kernelcache-operator [flags]\n"
      "Flags (also accepted as keys of the YAML file given by --config):\n";
  for (const Flag& f : Flags()) {
    u += "  --" + std::string(f.name);
    u.append(f.kind == Kind::kBool ? "[=BOOL]" : "=VALUE");
    u += "\n      " + std::string(f.help) + "\n";
  }
  return u;
}

StatusOr<Config> ParseConfig(const std::vector<std::string>& args, const FileReader& read_file,
                             const EnvLookup& getenv) {
  // Pass 1: split into (flag, value) pairs, checking names.
  std::vector<std::pair<const Flag*, std::string>> given;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      Config help;
      help.help = true;
      return help;
    }
    if (a.rfind("--", 0) != 0 || a.size() == 2) {
      return InvalidArgumentError("unexpected argument \"" + a +
                                  "\": flags look like --name=value");
    }
    std::string name = a.substr(2);
    std::optional<std::string> value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const Flag* flag = FindFlag(name);
    if (flag == nullptr) {
      return InvalidArgumentError("unknown flag --" + name + " (see --help)");
    }
    if (!value) {
      if (flag->kind == Kind::kBool) {
        const bool next_is_bool = i + 1 < args.size() && ParseBool("", args[i + 1]).ok();
        value = next_is_bool ? args[++i] : "true";
      } else if (i + 1 < args.size()) {
        value = args[++i];
      } else {
        return InvalidArgumentError("--" + name + ": missing value");
      }
    }
    given.emplace_back(flag, *value);
  }

  Config c;
  // Pass 2: the config file, then the flags over it.
  for (const auto& [flag, value] : given) {
    if (std::string(flag->name) == "config") c.config_file = value;
  }
  if (!c.config_file.empty()) {
    StatusOr<std::string> text = read_file(c.config_file);
    if (!text.ok()) {
      return InvalidArgumentError("--config: cannot read " + c.config_file + ": " +
                                  text.status().message());
    }
    KC_RETURN_IF_ERROR(ApplyYaml(c.config_file, *text, c));
  }
  for (const auto& [flag, value] : given) {
    KC_RETURN_IF_ERROR(flag->set(c, Trim(value)));
  }
  if (c.identity.empty()) c.identity = DefaultIdentity(getenv);
  if (c.kubeconfig.empty() && !c.in_cluster) {
    // Leave empty: the program tries in-cluster, then $KUBECONFIG, then ~/.kube/config.
  }
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

std::optional<std::string> ProcessEnv(const std::string& name) {
  const char* v = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe)
  if (v == nullptr) return std::nullopt;
  return std::string(v);
}

}  // namespace kc::op
