#include "core/spec_sections.h"

#include <algorithm>
#include <cctype>

#include "base/duration.h"
#include "base/strings.h"
#include "core/consume.h"
#include "core/validate.h"

namespace kc::core {
namespace {

bool IsLower(char c) { return c >= 'a' && c <= 'z'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// Label value: empty, or <= 63 of [A-Za-z0-9_.-] beginning and ending alnum.
bool ValidLabelValue(std::string_view v) {
  if (v.empty()) return true;
  if (v.size() > 63 || !IsAlnum(v.front()) || !IsAlnum(v.back())) return false;
  return std::all_of(v.begin(), v.end(),
                     [](char c) { return IsAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

// Label key: [prefix/]name; name is a non-empty label value; prefix a DNS
// subdomain of <= 253.
bool ValidLabelKey(std::string_view k) {
  const size_t slash = k.find('/');
  std::string_view name = k;
  if (slash != std::string_view::npos) {
    std::string_view prefix = k.substr(0, slash);
    name = k.substr(slash + 1);
    if (prefix.empty() || prefix.size() > 253) return false;
    for (char c : prefix) {
      if (!IsLower(c) && !IsDigit(c) && c != '-' && c != '.') return false;
    }
  }
  return !name.empty() && ValidLabelValue(name);
}

// DNS-1123 subdomain (claim names).
bool ValidDnsSubdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  if (!(IsLower(s.front()) || IsDigit(s.front())) || !(IsLower(s.back()) || IsDigit(s.back()))) {
    return false;
  }
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return IsLower(c) || IsDigit(c) || c == '-' || c == '.'; });
}

bool ValidEnvName(std::string_view s) {
  if (s.empty() || IsDigit(s.front())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return IsAlnum(c) || c == '_' || c == '-' || c == '.'; });
}

// Concatenation without temporaries.

std::string Idx(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }

// The string at `key` of a free-form object, `def` when absent; a value of
// another type is reported (these objects skip the typed decoder).
std::string StrField(const Json& j, const char* key, const std::string& def,
                     const std::string& path, std::vector<std::string>* errors) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return def;
  if (!it->is_string()) {
    errors->emplace_back(path + "." + key + ": expected a string");
    return def;
  }
  return it->get<std::string>();
}

template <typename T>
void CheckRange(const std::string& path, T v, T lo, T hi, std::vector<std::string>* errors) {
  if (v < lo || v > hi) {
    errors->emplace_back(path + ": " + std::to_string(v) + " is out of range; use " +
                         std::to_string(lo) + " to " + std::to_string(hi));
  }
}

// spec.warmup.podAnnotations: Kubernetes annotation keys (a qualified name
// with an optional DNS prefix, like label keys), at most 256 KiB in all, and
// none under kernelcache.io/ (the operator's own).
void CheckPodAnnotations(const std::map<std::string, std::string>& annotations,
                         std::vector<std::string>* errors) {
  size_t bytes = 0;
  for (const auto& [k, v] : annotations) {
    const std::string p = "spec.warmup.podAnnotations." + k;
    bytes += k.size() + v.size();
    if (!ValidLabelKey(k)) {
      errors->push_back(p +
                        ": not a valid annotation key (an optional DNS prefix and '/', then "
                        "up to 63 letters, digits, '-', '_', '.')");
    } else if (k.starts_with("kernelcache.io/")) {
      errors->push_back(p + ": the kernelcache.io/ prefix is the operator's own; use another");
    }
  }
  if (bytes > 262144) {
    errors->push_back(
        "spec.warmup.podAnnotations: more than 256 KiB in all (the API server's "
        "limit); keep large data in the image");
  }
}

// spec.warmup.env: named, valid, not one the operator sets, value or
// valueFrom.
void CheckWarmupEnv(const std::vector<Json>& env, std::vector<std::string>* errors) {
  const auto& reserved = ReservedEnvNames();
  for (size_t i = 0; i < env.size(); ++i) {
    const std::string p = Idx("spec.warmup.env", i);
    const Json& e = env[i];
    if (!e.contains("name") || !e["name"].is_string()) {
      errors->emplace_back(p + ".name: required");
      continue;
    }
    const std::string name = e["name"].get<std::string>();
    if (!ValidEnvName(name)) {
      errors->emplace_back(
          StrCat({p, ".name: \"", name, "\" is not a valid environment variable name"}));
    } else if (std::find(reserved.begin(), reserved.end(), name) != reserved.end()) {
      errors->emplace_back(StrCat({p, ".name: ", name}) +
                           " is set by the operator (the cache view at /var/run/kernelcache/view); "
                           "remove it");
    }
    if (e.contains("value") && e.contains("valueFrom")) {
      errors->emplace_back(p + ": set value or valueFrom, not both");
    }
  }
}

// spec.warmup.resources: an object of limits/requests/claims; a GPU count
// other than 1 is a warning (a warmup always gets one).
void CheckWarmupResources(const Json& resources, SpecReport* r) {
  if (!resources.is_object()) {
    r->errors.emplace_back("spec.warmup.resources: must be an object with limits/requests");
    return;
  }
  for (const auto& [k, v] : resources.items()) {
    if (k != "limits" && k != "requests" && k != "claims") {
      r->errors.emplace_back("spec.warmup.resources." + k +
                             ": unknown; use limits, requests or claims");
    }
  }
  for (const char* part : {"limits", "requests"}) {
    if (!resources.contains(part)) continue;
    const Json& m = resources[part];
    if (!m.is_object()) {
      r->errors.emplace_back(std::string("spec.warmup.resources.") + part + ": must be a map");
      continue;
    }
    if (!m.contains("nvidia.com/gpu")) continue;
    const Json& g = m["nvidia.com/gpu"];
    const bool one = (g.is_string() && g.get<std::string>() == "1") ||
                     (g.is_number_integer() && g.get<int64_t>() == 1);
    if (!one) {
      r->warnings.emplace_back(std::string("spec.warmup.resources.") + part +
                               ".nvidia.com/gpu: a warmup always uses exactly one GPU; the "
                               "value is replaced by 1");
    }
  }
}

// The server form: the section's own checks, an inline template's, and the
// command form's fields left empty (the template says all of it).
void CheckServerForm(const WarmupSpec& w, std::vector<std::string>* errors) {
  for (auto& e : CheckServer(*w.server)) errors->push_back(std::move(e));
  if (!w.server->pod_template.is_null() && w.server->workload_ref.empty()) {
    for (auto& e : CheckServerTemplate(*w.server, "spec.warmup.server.template")) {
      errors->push_back(std::move(e));
    }
  }
  const std::pair<const char*, bool> unused[] = {{"command", !w.command.empty()},
                                                 {"args", !w.args.empty()},
                                                 {"env", !w.env.empty()},
                                                 {"shapes", !w.shapes.empty()},
                                                 {"resources", !w.resources.empty()}};
  for (const auto& [field, set] : unused) {
    if (set) {
      errors->push_back(std::string("spec.warmup.") + field +
                        ": the server form takes it from the pod template; remove it");
    }
  }
}

}  // namespace

SpecReport CheckPodSelector(const api::LabelSelector& s) {
  SpecReport r;
  auto* errors = &r.errors;
  if (s.empty()) {
    errors->emplace_back(
        "spec.podSelector: empty; it would gate every pod in the namespace. Set matchLabels, "
        "e.g. {app: llama}");
  }
  for (const auto& [k, v] : s.match_labels) {
    if (!ValidLabelKey(k)) {
      errors->emplace_back("spec.podSelector.matchLabels: \"" + k +
                           "\" is not a valid label key ([prefix/]name, name <= 63 characters of "
                           "letters, digits, '-', '_', '.')");
    }
    if (!ValidLabelValue(v)) {
      errors->emplace_back(StrCat({"spec.podSelector.matchLabels.", k, ": \"", v}) +
                           "\" is not a valid label value (<= 63 characters of letters, digits, "
                           "'-', '_', '.', beginning and ending with a letter or digit)");
    }
  }
  for (size_t i = 0; i < s.match_expressions.size(); ++i) {
    const auto& r = s.match_expressions[i];
    const std::string p = Idx("spec.podSelector.matchExpressions", i);
    if (!ValidLabelKey(r.key)) {
      errors->emplace_back(p + ".key: \"" + r.key + "\" is not a valid label key");
    }
    if (r.op == "In" || r.op == "NotIn") {
      if (r.values.empty()) {
        errors->emplace_back(p + ".values: operator " + r.op + " needs at least one value");
      }
    } else if (r.op == "Exists" || r.op == "DoesNotExist") {
      if (!r.values.empty()) {
        errors->emplace_back(p + ".values: operator " + r.op + " takes no values; remove them");
      }
    } else {
      errors->emplace_back(p + ".operator: \"" + r.op +
                           "\" is not one of In, NotIn, Exists, DoesNotExist");
    }
    for (const auto& v : r.values) {
      if (!ValidLabelValue(v)) {
        errors->emplace_back(StrCat({p, ".values: \"", v, "\" is not a valid label value"}));
      }
    }
  }
  return r;
}

SpecReport CheckNodes(const std::map<std::string, std::string>& node_selector,
                      const std::vector<Json>& tolerations) {
  SpecReport r;
  auto& errors = r.errors;
  if (node_selector.empty()) {
    errors.emplace_back(
        "spec.nodeSelector: empty; it must select the GPU nodes, e.g. "
        "{nvidia.com/gpu.present: \"true\"}");
  }
  for (const auto& [k, v] : node_selector) {
    if (!ValidLabelKey(k) || !ValidLabelValue(v)) {
      errors.emplace_back("spec.nodeSelector." + k + ": not a valid label key/value pair");
    }
  }
  for (size_t i = 0; i < tolerations.size(); ++i) {
    const Json& t = tolerations[i];
    const std::string tp = Idx("spec.tolerations", i);
    const std::string op = StrField(t, "operator", "Equal", tp, &errors);
    if (op != "Equal" && op != "Exists") {
      errors.emplace_back(StrCat({tp, ".operator: \"", op, "\" is not one of Exists, Equal"}));
    }
    if (op == "Exists" && !StrField(t, "value", "", tp, &errors).empty()) {
      errors.emplace_back(Idx("spec.tolerations", i) +
                          ".value: must be empty with operator Exists; remove it");
    }
  }
  return r;
}

SpecReport CheckImage(const std::string& image) {
  SpecReport r;
  if (image.empty()) {
    r.errors.emplace_back("spec.image: required; the model image the warmup runs in");
  } else if (std::any_of(image.begin(), image.end(),
                         [](char c) { return std::isspace(static_cast<unsigned char>(c)); })) {
    r.errors.emplace_back("spec.image: \"" + image + "\" contains whitespace");
  } else if (!ImagePinned(image)) {
    r.image_not_pinned = "spec.image: \"" + image +
                         "\" is not pinned by digest; a moved tag silently changes the compiled "
                         "kernels. Use name@sha256:<digest>";
    r.warnings.push_back(r.image_not_pinned);
  }
  return r;
}

SpecReport CheckRuntime(const std::map<std::string, std::string>& runtime) {
  SpecReport r;
  for (const auto& [k, v] : runtime) {
    const bool key_ok = !k.empty() && k.size() <= 63 && std::all_of(k.begin(), k.end(), [](char c) {
      return IsLower(c) || IsDigit(c) || c == '-' || c == '_' || c == '.';
    });
    if (!key_ok) {
      r.errors.emplace_back("spec.runtime: key \"" + k +
                            "\" must be a lower-case framework name such as pytorch, triton, vllm");
    }
    if (v.empty()) {
      r.errors.emplace_back("spec.runtime." + k +
                            ": empty version; give the version, e.g. \"2.11.0\"");
    }
  }
  return r;
}

SpecReport CheckWarmup(const WarmupSpec& w) {
  SpecReport r;
  auto& errors = r.errors;
  if (w.server) {
    CheckServerForm(w, &errors);
  } else if (w.command.empty() || w.command[0].empty()) {
    errors.emplace_back(
        "spec.warmup.command: required; the warmup program in the model image, e.g. "
        "[python3, /app/warmup.py] (or spec.warmup.server: the model's own server)");
  }
  CheckWarmupEnv(w.env, &errors);
  if (Json(w.shapes).dump(-1, ' ', false, Json::error_handler_t::replace).size() > 32768) {
    errors.emplace_back(
        "spec.warmup.shapes: more than 32 KiB as JSON; pass a file in the image and its path "
        "in args instead");
  }
  CheckWarmupResources(w.resources, &r);
  CheckRange<int64_t>("spec.warmup.activeDeadlineSeconds", w.active_deadline_seconds, 60, 86400,
                      &errors);
  CheckRange<int32_t>("spec.warmup.backoffLimit", w.backoff_limit, 0, 10, &errors);
  CheckPodAnnotations(w.pod_annotations, &errors);
  CheckRange<int32_t>("spec.warmup.convergence.maxPasses", w.convergence.max_passes, 0,
                      kMaxMaxPasses, &errors);
  return r;
}

SpecReport CheckStorage(const StorageSpec& st) {
  SpecReport r;
  auto& errors = r.errors;
  if (st.size.empty() == st.existing_claim.empty()) {
    errors.emplace_back(
        "spec.storage: set exactly one of size (the operator creates a ReadWriteMany claim) and "
        "existingClaim (a ReadWriteMany claim you made)");
  }
  if (!st.size.empty()) {
    auto bytes = api::ParseQuantityBytes(st.size);
    if (!bytes.ok()) {
      errors.emplace_back("spec.storage.size: " + bytes.status().message());
    } else if (*bytes < 1048576) {
      errors.emplace_back("spec.storage.size: \"" + st.size +
                          "\" is below 1Mi; kernel caches need at least a few hundred Mi");
    }
  }
  if (!st.existing_claim.empty() && !ValidDnsSubdomain(st.existing_claim)) {
    errors.emplace_back("spec.storage.existingClaim: \"" + st.existing_claim +
                        "\" is not a valid claim name (lower-case letters, digits, '-', '.')");
  }
  if (!st.existing_claim.empty() && !st.storage_class_name.empty()) {
    errors.emplace_back(
        "spec.storage.storageClassName: applies only with size; an existing claim already has "
        "its class. Remove it");
  }
  return r;
}

SpecReport CheckConsume(const ConsumeSpec& c) {
  SpecReport r;  // the mode, onTimeout and verify were decoded by SpecFromJson
  CheckRange<int64_t>("spec.consume.waitTimeoutSeconds", c.wait_timeout_seconds, 1, 86400,
                      &r.errors);
  return r;
}

SpecReport CheckSecurityContext(const SecuritySpec& sc) {
  SpecReport r;
  if (sc.fs_group) {
    CheckRange<int64_t>("spec.securityContext.fsGroup", *sc.fs_group, kMinSecurityId,
                        kMaxSecurityId, &r.errors);
  }
  if (sc.run_as_user) {
    CheckRange<int64_t>("spec.securityContext.runAsUser", *sc.run_as_user, kMinSecurityId,
                        kMaxSecurityId, &r.errors);
  }
  return r;
}

SpecReport CheckRetention(const RetentionSpec& ret) {
  SpecReport r;
  auto& errors = r.errors;
  if (auto d = ParseDuration(ret.stale_after); !d.ok()) {
    errors.emplace_back("spec.retention.staleAfter: " + d.status().message());
  }
  if (auto d = ParseDuration(ret.absent_after); !d.ok()) {
    errors.emplace_back("spec.retention.absentAfter: " + d.status().message());
  }
  if (!ret.max_bytes.empty()) {
    if (auto b = api::ParseQuantityBytes(ret.max_bytes); !b.ok()) {
      errors.emplace_back("spec.retention.maxBytes: " + b.status().message());
    }
  }
  if (!ret.purge_schedule.empty()) {
    auto d = ParseDuration(ret.purge_schedule);
    if (!d.ok()) {
      errors.emplace_back("spec.retention.purgeSchedule: " + d.status().message());
    } else if (*d < std::chrono::hours(1)) {
      errors.emplace_back("spec.retention.purgeSchedule: \"" + ret.purge_schedule +
                          "\" is shorter than 1h; every purge re-runs the warmup on a GPU. Use "
                          "e.g. 168h");
    }
  }
  return r;
}

SpecReport CheckHarvest(const HarvestSpec& h) {
  SpecReport r;
  auto& errors = r.errors;
  // The mode and the interval's syntax were decoded by SpecFromJson.
  if (h.interval < kMinHarvestInterval) {
    errors.emplace_back("spec.harvest.interval: \"" + FormatDuration(h.interval) +
                        "\" is shorter than " + FormatDuration(kMinHarvestInterval) +
                        "; every merge rewrites the cache. Use e.g. " +
                        FormatDuration(kDefaultHarvestInterval));
  }
  CheckRange<int64_t>("spec.harvest.maxFilesPerPod", h.max_files_per_pod, 1, kMaxHarvestFilesPerPod,
                      &errors);
  CheckRange<int64_t>("spec.harvest.maxFilesPerFingerprint", h.max_files_per_fingerprint, 1,
                      kMaxHarvestFilesPerFingerprint, &errors);
  for (auto [name, q] :
       {std::pair{"spec.harvest.maxBytesPerPod", &h.max_bytes_per_pod},
        std::pair{"spec.harvest.maxBytesPerFingerprint", &h.max_bytes_per_fingerprint}}) {
    auto b = api::ParseQuantityBytes(*q);
    if (!b.ok()) {
      errors.emplace_back(std::string(name) + ": " + b.status().message());
    } else if (*b < 1) {
      errors.emplace_back(std::string(name) + ": must be at least 1 byte (e.g. 256Mi)");
    }
  }
  return r;
}

HarvestCaps HarvestCapsOf(const HarvestSpec& h) {
  HarvestCaps c;
  auto clamp = [](int64_t v, int64_t hi, int64_t dflt) { return v < 1 || v > hi ? dflt : v; };
  c.max_files_per_pod =
      clamp(h.max_files_per_pod, kMaxHarvestFilesPerPod, kDefaultHarvestMaxFilesPerPod);
  c.max_files_per_fingerprint = clamp(h.max_files_per_fingerprint, kMaxHarvestFilesPerFingerprint,
                                      kDefaultHarvestMaxFilesPerFingerprint);
  if (auto b = api::ParseQuantityBytes(h.max_bytes_per_pod); b.ok() && *b > 0) {
    c.max_bytes_per_pod = *b;
  }
  if (auto b = api::ParseQuantityBytes(h.max_bytes_per_fingerprint); b.ok() && *b > 0) {
    c.max_bytes_per_fingerprint = *b;
  }
  return c;
}

}  // namespace kc::core
