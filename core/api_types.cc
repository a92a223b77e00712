#include "core/api_types.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <limits>

#include "base/numbers.h"
#include "core/cache_env.h"

namespace kc::core {
namespace {

using Errors = std::vector<std::string>;

void Err(Errors* errors, const std::string& path, const std::string& what) {
  if (errors != nullptr) errors->push_back(path + ": " + what);
}

std::string Join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

void ReadString(const Json& j, std::string_view key, const std::string& path, Errors* errors,
                std::string* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  if (!it->is_string()) return Err(errors, Join(path, key), "expected a string");
  *out = it->get<std::string>();
}

// An integer that fits Int: a float, a string or a value beyond Int's range
// is an error, not a silent truncation.
template <typename Int>
void ReadInt(const Json& j, std::string_view key, const std::string& path, Errors* errors,
             Int* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  if (!it->is_number_integer()) return Err(errors, Join(path, key), "expected an integer");
  constexpr auto kMin = std::numeric_limits<Int>::min();
  constexpr auto kMax = std::numeric_limits<Int>::max();
  const std::string range =
      " is out of range " + std::to_string(kMin) + ".." + std::to_string(kMax);
  if (it->is_number_unsigned()) {
    const uint64_t v = it->get<uint64_t>();
    if (v > static_cast<uint64_t>(kMax))
      return Err(errors, Join(path, key), std::to_string(v) + range);
    *out = static_cast<Int>(v);
    return;
  }
  const int64_t v = it->get<int64_t>();
  if (v < kMin || v > kMax) return Err(errors, Join(path, key), std::to_string(v) + range);
  *out = static_cast<Int>(v);
}

void ReadBool(const Json& j, std::string_view key, const std::string& path, Errors* errors,
              bool* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  if (!it->is_boolean()) return Err(errors, Join(path, key), "expected true or false");
  *out = it->get<bool>();
}

void ReadStringList(const Json& j, std::string_view key, const std::string& path, Errors* errors,
                    std::vector<std::string>* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  const std::string p = Join(path, key);
  if (!it->is_array()) return Err(errors, p, "expected a list of strings");
  out->clear();
  for (size_t i = 0; i < it->size(); ++i) {
    const Json& v = (*it)[i];
    if (!v.is_string()) {
      Err(errors, p + "[" + std::to_string(i) + "]", "expected a string");
      continue;
    }
    out->push_back(v.get<std::string>());
  }
}

void ReadStringMap(const Json& j, std::string_view key, const std::string& path, Errors* errors,
                   std::map<std::string, std::string>* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  const std::string p = Join(path, key);
  if (!it->is_object()) return Err(errors, p, "expected a map of strings");
  out->clear();
  for (const auto& [k, v] : it->items()) {
    if (!v.is_string()) {
      std::string field = p;
      field += ".";
      field += k;
      Err(errors, field, "expected a string (quote numbers and booleans)");
      continue;
    }
    (*out)[k] = v.get<std::string>();
  }
}

void ReadObjectList(const Json& j, std::string_view key, const std::string& path, Errors* errors,
                    std::vector<Json>* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  const std::string p = Join(path, key);
  if (!it->is_array()) return Err(errors, p, "expected a list of objects");
  out->clear();
  for (size_t i = 0; i < it->size(); ++i) {
    if (!(*it)[i].is_object()) {
      Err(errors, p + "[" + std::to_string(i) + "]", "expected an object");
      continue;
    }
    out->push_back((*it)[i]);
  }
}

void ReadTime(const Json& j, std::string_view key, const std::string& path, Errors* errors,
              std::optional<Time>* out) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return;
  if (!it->is_string()) return Err(errors, Join(path, key), "expected an RFC 3339 time");
  auto t = ParseTime(it->get<std::string>());
  if (!t.ok()) return Err(errors, Join(path, key), t.status().message());
  *out = *t;
}

const Json& Sub(const Json& j, std::string_view key, const std::string& path, Errors* errors) {
  static const Json kEmpty = Json::object();
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return kEmpty;
  if (!it->is_object()) {
    Err(errors, Join(path, key), "expected an object");
    return kEmpty;
  }
  return *it;
}

void PutTime(Json& j, const char* key, const std::optional<Time>& t) {
  if (t) j[key] = FormatTime(*t);
}

bool StartsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

}  // namespace

std::string FormatTime(Time t) {
  const std::time_t tt =
      std::chrono::system_clock::to_time_t(std::chrono::time_point_cast<std::chrono::seconds>(t));
  std::tm tm{};
  gmtime_r(&tt, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

StatusOr<Time> ParseTime(std::string_view s) {
  auto bad = [&] {
    return InvalidArgumentError("malformed time \"" + std::string(s) +
                                "\": want RFC 3339, e.g. 2026-12-02T09:33:17Z");
  };
  if (s.size() < 20) return bad();
  std::tm tm{};
  int year = 0, mon = 0, day = 0, hour = 0, min = 0, sec = 0;
  const std::string str(s);
  if (std::sscanf(str.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &year, &mon, &day, &hour, &min, &sec) !=
          6 ||
      str[4] != '-' || str[7] != '-' || (str[10] != 'T' && str[10] != 't') || str[13] != ':' ||
      str[16] != ':') {
    return bad();
  }
  if (mon < 1 || mon > 12 || day < 1 || day > 31 || hour > 23 || min > 59 || sec > 60) {
    return bad();
  }
  size_t pos = 19;
  if (pos < str.size() && str[pos] == '.') {
    ++pos;
    const size_t start = pos;
    while (pos < str.size() && std::isdigit(static_cast<unsigned char>(str[pos]))) ++pos;
    if (pos == start) return bad();
  }
  int offset_seconds = 0;
  if (pos < str.size() && (str[pos] == 'Z' || str[pos] == 'z')) {
    ++pos;
  } else if (pos + 6 == str.size() && (str[pos] == '+' || str[pos] == '-') && str[pos + 3] == ':') {
    int oh = 0, om = 0;
    if (std::sscanf(str.c_str() + pos + 1, "%2d:%2d", &oh, &om) != 2) return bad();
    offset_seconds = (oh * 3600 + om * 60) * (str[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return bad();
  }
  if (pos != str.size()) return bad();
  tm.tm_year = year - 1900;
  tm.tm_mon = mon - 1;
  tm.tm_mday = day;
  tm.tm_hour = hour;
  tm.tm_min = min;
  tm.tm_sec = sec;
  // The clock counts nanoseconds in an int64 (years 1678 to 2262): a time
  // outside kMinYear..kMaxYear would overflow it, or later arithmetic on it.
  if (year < kMinYear || year > kMaxYear) {
    return InvalidArgumentError("time \"" + std::string(s) + "\" is out of range: want a year " +
                                std::to_string(kMinYear) + " to " + std::to_string(kMaxYear));
  }
  const std::time_t tt = timegm(&tm);
  return std::chrono::system_clock::from_time_t(tt - offset_seconds);
}

StatusOr<int64_t> ParseQuantityBytes(std::string_view q) {
  auto bad = [&] {
    return InvalidArgumentError("malformed quantity \"" + std::string(q.substr(0, 64)) +
                                (q.size() > 64 ? "..." : "") +
                                "\": want a number with an optional suffix Ki Mi Gi Ti Pi Ei "
                                "or k M G T P E, e.g. 20Gi");
  };
  auto too_large = [&] {
    return InvalidArgumentError("quantity \"" + std::string(q.substr(0, 64)) +
                                (q.size() > 64 ? "..." : "") +
                                "\" is too large: at most 8Ei (9223372036854775807 bytes)");
  };
  size_t i = 0;
  while (i < q.size() && std::isdigit(static_cast<unsigned char>(q[i]))) ++i;
  if (i == 0) return bad();
  const std::string_view whole = q.substr(0, i);
  std::string_view fraction;
  if (i < q.size() && q[i] == '.') {
    ++i;
    const size_t start = i;
    while (i < q.size() && std::isdigit(static_cast<unsigned char>(q[i]))) ++i;
    if (i == start) return bad();
    fraction = q.substr(start, i - start);
  }
  const std::string_view suffix = q.substr(i);
  static const std::pair<std::string_view, int64_t> kSuffixes[] = {
      {"", 1},
      {"Ki", int64_t{1} << 10},
      {"Mi", int64_t{1} << 20},
      {"Gi", int64_t{1} << 30},
      {"Ti", int64_t{1} << 40},
      {"Pi", int64_t{1} << 50},
      {"Ei", int64_t{1} << 60},
      {"k", 1000},
      {"M", 1000000},
      {"G", 1000000000},
      {"T", 1000000000000},
      {"P", 1000000000000000},
      {"E", 1000000000000000000},
  };
  const auto* unit = std::find_if(std::begin(kSuffixes), std::end(kSuffixes),
                                  [&](const auto& p) { return p.first == suffix; });
  if (unit == std::end(kSuffixes)) return bad();
  const int64_t mult = unit->second;
  // Exact integer arithmetic: whole * mult + ceil(0.fraction * mult).
  int64_t bytes = 0;
  for (char c : whole) {
    if (!CheckedMul(bytes, 10, &bytes) || !CheckedAdd(bytes, c - '0', &bytes)) return too_large();
  }
  if (!CheckedMul(bytes, mult, &bytes)) return too_large();
  // The fraction's first 18 digits are exact in int64; any later non-zero
  // digit only rounds up (ceil), which the remainder test below covers.
  const std::string_view head = fraction.substr(0, 18);
  const bool tail_nonzero =
      fraction.size() > 18 && fraction.substr(18).find_first_not_of('0') != std::string_view::npos;
  __int128 num = 0, den = 1;
  for (char c : head) {
    num = num * 10 + (c - '0');
    den *= 10;
  }
  const __int128 scaled = num * mult;
  int64_t frac = static_cast<int64_t>(scaled / den);
  if (scaled % den != 0 || tail_nonzero) ++frac;
  if (!CheckedAdd(bytes, frac, &bytes)) return too_large();
  return bytes;
}

std::string FormatBytes(int64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes);
  static const char* kUnits[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  double v = static_cast<double>(bytes);
  int unit = -1;
  while (v >= 1024.0 && unit < 5) {
    v /= 1024.0;
    ++unit;
  }
  char buf[32];
  const double rounded = std::round(v * 10.0) / 10.0;
  if (rounded == std::floor(rounded)) {
    std::snprintf(buf, sizeof(buf), "%.0f%s", rounded, kUnits[unit]);
  } else {
    std::snprintf(buf, sizeof(buf), "%.1f%s", rounded, kUnits[unit]);
  }
  return buf;
}

bool SelectorMatches(const LabelSelector& selector,
                     const std::map<std::string, std::string>& labels) {
  for (const auto& [k, v] : selector.match_labels) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  for (const auto& req : selector.match_expressions) {
    auto it = labels.find(req.key);
    const bool has = it != labels.end();
    const bool in =
        has && std::find(req.values.begin(), req.values.end(), it->second) != req.values.end();
    if (req.op == "In") {
      if (!in) return false;
    } else if (req.op == "NotIn") {
      if (in) return false;
    } else if (req.op == "Exists") {
      if (!has) return false;
    } else if (req.op == "DoesNotExist") {
      if (has) return false;
    } else {
      return false;
    }
  }
  return true;
}

ObjectMeta MetadataFromJson(const Json& m, std::vector<std::string>* errors) {
  ObjectMeta meta;
  if (!m.is_object()) return meta;
  const std::string p = "metadata";
  ReadString(m, "name", p, errors, &meta.name);
  ReadString(m, "namespace", p, errors, &meta.namespace_);
  ReadString(m, "uid", p, errors, &meta.uid);
  ReadString(m, "resourceVersion", p, errors, &meta.resource_version);
  ReadInt(m, "generation", p, errors, &meta.generation);
  ReadTime(m, "creationTimestamp", p, errors, &meta.creation_timestamp);
  ReadTime(m, "deletionTimestamp", p, errors, &meta.deletion_timestamp);
  ReadStringList(m, "finalizers", p, errors, &meta.finalizers);
  ReadStringMap(m, "labels", p, errors, &meta.labels);
  ReadStringMap(m, "annotations", p, errors, &meta.annotations);
  return meta;
}

Json MetadataToJson(const ObjectMeta& meta) {
  Json m = Json::object();
  if (!meta.name.empty()) m["name"] = meta.name;
  if (!meta.namespace_.empty()) m["namespace"] = meta.namespace_;
  if (!meta.uid.empty()) m["uid"] = meta.uid;
  if (!meta.resource_version.empty()) m["resourceVersion"] = meta.resource_version;
  if (meta.generation != 0) m["generation"] = meta.generation;
  PutTime(m, "creationTimestamp", meta.creation_timestamp);
  PutTime(m, "deletionTimestamp", meta.deletion_timestamp);
  if (!meta.finalizers.empty()) m["finalizers"] = meta.finalizers;
  if (!meta.labels.empty()) m["labels"] = meta.labels;
  if (!meta.annotations.empty()) m["annotations"] = meta.annotations;
  return m;
}

KernelCacheSpec SpecFromJson(const Json& s, std::vector<std::string>* errors) {
  KernelCacheSpec spec;
  if (!s.is_object()) {
    Err(errors, "spec", "expected an object");
    return spec;
  }
  const std::string p = "spec";
  const Json& ps = Sub(s, "podSelector", p, errors);
  ReadStringMap(ps, "matchLabels", "spec.podSelector", errors, &spec.pod_selector.match_labels);
  std::vector<Json> exprs;
  ReadObjectList(ps, "matchExpressions", "spec.podSelector", errors, &exprs);
  for (size_t i = 0; i < exprs.size(); ++i) {
    const std::string ep = "spec.podSelector.matchExpressions[" + std::to_string(i) + "]";
    LabelSelectorRequirement r;
    ReadString(exprs[i], "key", ep, errors, &r.key);
    ReadString(exprs[i], "operator", ep, errors, &r.op);
    ReadStringList(exprs[i], "values", ep, errors, &r.values);
    spec.pod_selector.match_expressions.push_back(std::move(r));
  }
  ReadStringMap(s, "nodeSelector", p, errors, &spec.node_selector);
  ReadObjectList(s, "tolerations", p, errors, &spec.tolerations);
  ReadString(s, "image", p, errors, &spec.image);
  ReadStringMap(s, "runtime", p, errors, &spec.runtime);

  const std::string wp = "spec.warmup";
  const Json& w = Sub(s, "warmup", p, errors);
  ReadStringList(w, "command", wp, errors, &spec.warmup.command);
  ReadStringList(w, "args", wp, errors, &spec.warmup.args);
  ReadObjectList(w, "env", wp, errors, &spec.warmup.env);
  ReadObjectList(w, "shapes", wp, errors, &spec.warmup.shapes);
  if (auto it = w.find("resources"); it != w.end() && !it->is_null()) {
    if (it->is_object()) {
      spec.warmup.resources = *it;
    } else {
      Err(errors, wp + ".resources", "expected an object");
    }
  }
  ReadInt(w, "activeDeadlineSeconds", wp, errors, &spec.warmup.active_deadline_seconds);
  ReadInt(w, "backoffLimit", wp, errors, &spec.warmup.backoff_limit);

  const std::string sp = "spec.storage";
  const Json& st = Sub(s, "storage", p, errors);
  ReadString(st, "storageClassName", sp, errors, &spec.storage.storage_class_name);
  ReadString(st, "size", sp, errors, &spec.storage.size);
  ReadString(st, "existingClaim", sp, errors, &spec.storage.existing_claim);
  ReadBool(st, "shareExistingClaim", sp, errors, &spec.storage.share_existing_claim);

  const std::string cp = "spec.consume";
  const Json& c = Sub(s, "consume", p, errors);
  ReadString(c, "mode", cp, errors, &spec.consume.mode);
  ReadInt(c, "waitTimeoutSeconds", cp, errors, &spec.consume.wait_timeout_seconds);
  ReadString(c, "onTimeout", cp, errors, &spec.consume.on_timeout);
  ReadString(c, "verify", cp, errors, &spec.consume.verify);

  const std::string rp = "spec.retention";
  const Json& r = Sub(s, "retention", p, errors);
  ReadString(r, "staleAfter", rp, errors, &spec.retention.stale_after);
  ReadString(r, "absentAfter", rp, errors, &spec.retention.absent_after);
  ReadString(r, "maxBytes", rp, errors, &spec.retention.max_bytes);
  ReadString(r, "purgeSchedule", rp, errors, &spec.retention.purge_schedule);

  const std::string scp = "spec.securityContext";
  const Json& sc = Sub(s, "securityContext", p, errors);
  for (auto [key, field] : {std::pair{"fsGroup", &spec.security_context.fs_group},
                            std::pair{"runAsUser", &spec.security_context.run_as_user}}) {
    auto it = sc.find(key);
    if (it == sc.end() || it->is_null()) continue;
    int64_t v = 0;
    Errors local;
    ReadInt(sc, key, scp, &local, &v);
    if (local.empty()) {
      *field = v;
    } else if (errors != nullptr) {
      errors->insert(errors->end(), local.begin(), local.end());
    }
  }
  return spec;
}

Json SpecToJson(const KernelCacheSpec& spec) {
  Json s = Json::object();
  Json ps = Json::object();
  if (!spec.pod_selector.match_labels.empty()) {
    ps["matchLabels"] = spec.pod_selector.match_labels;
  }
  if (!spec.pod_selector.match_expressions.empty()) {
    Json exprs = Json::array();
    for (const auto& r : spec.pod_selector.match_expressions) {
      Json e = {{"key", r.key}, {"operator", r.op}};
      if (!r.values.empty()) e["values"] = r.values;
      exprs.push_back(std::move(e));
    }
    ps["matchExpressions"] = std::move(exprs);
  }
  s["podSelector"] = std::move(ps);
  if (!spec.node_selector.empty()) s["nodeSelector"] = spec.node_selector;
  if (!spec.tolerations.empty()) s["tolerations"] = spec.tolerations;
  s["image"] = spec.image;
  if (!spec.runtime.empty()) s["runtime"] = spec.runtime;
  Json w = Json::object();
  w["command"] = spec.warmup.command;
  if (!spec.warmup.args.empty()) w["args"] = spec.warmup.args;
  if (!spec.warmup.env.empty()) w["env"] = spec.warmup.env;
  if (!spec.warmup.shapes.empty()) w["shapes"] = spec.warmup.shapes;
  if (!spec.warmup.resources.empty()) w["resources"] = spec.warmup.resources;
  w["activeDeadlineSeconds"] = spec.warmup.active_deadline_seconds;
  w["backoffLimit"] = spec.warmup.backoff_limit;
  s["warmup"] = std::move(w);
  Json st = Json::object();
  if (!spec.storage.storage_class_name.empty()) {
    st["storageClassName"] = spec.storage.storage_class_name;
  }
  if (!spec.storage.size.empty()) st["size"] = spec.storage.size;
  if (!spec.storage.existing_claim.empty()) st["existingClaim"] = spec.storage.existing_claim;
  if (spec.storage.share_existing_claim) st["shareExistingClaim"] = true;
  s["storage"] = std::move(st);
  s["consume"] = {{"mode", spec.consume.mode},
                  {"waitTimeoutSeconds", spec.consume.wait_timeout_seconds},
                  {"onTimeout", spec.consume.on_timeout},
                  {"verify", spec.consume.verify}};
  Json r = {{"staleAfter", spec.retention.stale_after},
            {"absentAfter", spec.retention.absent_after}};
  if (!spec.retention.max_bytes.empty()) r["maxBytes"] = spec.retention.max_bytes;
  if (!spec.retention.purge_schedule.empty()) r["purgeSchedule"] = spec.retention.purge_schedule;
  s["retention"] = std::move(r);
  Json sc = Json::object();
  if (spec.security_context.fs_group) sc["fsGroup"] = *spec.security_context.fs_group;
  if (spec.security_context.run_as_user) sc["runAsUser"] = *spec.security_context.run_as_user;
  if (!sc.empty()) s["securityContext"] = std::move(sc);
  return s;
}

KernelCacheStatus StatusFromJson(const Json& s, std::vector<std::string>* errors) {
  KernelCacheStatus st;
  if (!s.is_object()) return st;
  const std::string p = "status";
  ReadInt(s, "observedGeneration", p, errors, &st.observed_generation);
  ReadString(s, "phase", p, errors, &st.phase);
  ReadInt(s, "readyFingerprints", p, errors, &st.ready_fingerprints);
  ReadInt(s, "totalFingerprints", p, errors, &st.total_fingerprints);
  ReadString(s, "ready", p, errors, &st.ready);
  ReadInt(s, "totalBytes", p, errors, &st.total_bytes);
  ReadString(s, "size", p, errors, &st.size);
  ReadString(s, "claimName", p, errors, &st.claim_name);
  std::vector<Json> conds;
  ReadObjectList(s, "conditions", p, errors, &conds);
  for (size_t i = 0; i < conds.size(); ++i) {
    const std::string cp = "status.conditions[" + std::to_string(i) + "]";
    Condition c;
    ReadString(conds[i], "type", cp, errors, &c.type);
    ReadString(conds[i], "status", cp, errors, &c.status);
    ReadString(conds[i], "reason", cp, errors, &c.reason);
    ReadString(conds[i], "message", cp, errors, &c.message);
    ReadInt(conds[i], "observedGeneration", cp, errors, &c.observed_generation);
    std::optional<Time> t;
    ReadTime(conds[i], "lastTransitionTime", cp, errors, &t);
    if (t) c.last_transition_time = *t;
    st.conditions.push_back(std::move(c));
  }
  std::vector<Json> fps;
  ReadObjectList(s, "fingerprints", p, errors, &fps);
  for (size_t i = 0; i < fps.size(); ++i) {
    const std::string fp = "status.fingerprints[" + std::to_string(i) + "]";
    const Json& j = fps[i];
    FingerprintStatus f;
    ReadString(j, "id", fp, errors, &f.id);
    ReadString(j, "gpuProduct", fp, errors, &f.gpu_product);
    ReadString(j, "computeCapability", fp, errors, &f.compute_capability);
    ReadString(j, "driver", fp, errors, &f.driver);
    ReadString(j, "cudaDriver", fp, errors, &f.cuda_driver);
    ReadString(j, "arch", fp, errors, &f.arch);
    ReadInt(j, "nodes", fp, errors, &f.nodes);
    ReadString(j, "state", fp, errors, &f.state);
    ReadString(j, "job", fp, errors, &f.job);
    ReadInt(j, "bytes", fp, errors, &f.bytes);
    ReadInt(j, "files", fp, errors, &f.files);
    ReadString(j, "manifestDigest", fp, errors, &f.manifest_digest);
    ReadTime(j, "readyAt", fp, errors, &f.ready_at);
    ReadTime(j, "staleSince", fp, errors, &f.stale_since);
    ReadTime(j, "absentSince", fp, errors, &f.absent_since);
    ReadStringList(j, "lastNodes", fp, errors, &f.last_nodes);
    ReadInt(j, "failures", fp, errors, &f.failures);
    ReadString(j, "lastFailure", fp, errors, &f.last_failure);
    ReadTime(j, "lastFailureTime", fp, errors, &f.last_failure_time);
    ReadInt(j, "warmGeneration", fp, errors, &f.warm_generation);
    ReadString(j, "jobUid", fp, errors, &f.job_uid);
    ReadTime(j, "lastTransitionTime", fp, errors, &f.last_transition_time);
    st.fingerprints.push_back(std::move(f));
  }
  return st;
}

Json StatusToJson(const KernelCacheStatus& st) {
  Json s = Json::object();
  s["observedGeneration"] = st.observed_generation;
  Json conds = Json::array();
  for (const auto& c : st.conditions) {
    conds.push_back({{"type", c.type},
                     {"status", c.status},
                     {"reason", c.reason},
                     {"message", c.message},
                     {"observedGeneration", c.observed_generation},
                     {"lastTransitionTime", FormatTime(c.last_transition_time)}});
  }
  s["conditions"] = std::move(conds);
  if (!st.phase.empty()) s["phase"] = st.phase;
  s["readyFingerprints"] = st.ready_fingerprints;
  s["totalFingerprints"] = st.total_fingerprints;
  if (!st.ready.empty()) s["ready"] = st.ready;
  s["totalBytes"] = st.total_bytes;
  if (!st.size.empty()) s["size"] = st.size;
  if (!st.claim_name.empty()) s["claimName"] = st.claim_name;
  Json fps = Json::array();
  for (const auto& f : st.fingerprints) {
    Json j = {{"id", f.id},
              {"gpuProduct", f.gpu_product},
              {"computeCapability", f.compute_capability},
              {"driver", f.driver},
              {"cudaDriver", f.cuda_driver},
              {"arch", f.arch},
              {"nodes", f.nodes},
              {"state", f.state},
              {"bytes", f.bytes},
              {"files", f.files},
              {"failures", f.failures}};
    if (!f.job.empty()) j["job"] = f.job;
    if (!f.manifest_digest.empty()) j["manifestDigest"] = f.manifest_digest;
    PutTime(j, "readyAt", f.ready_at);
    PutTime(j, "staleSince", f.stale_since);
    PutTime(j, "absentSince", f.absent_since);
    if (!f.last_nodes.empty()) j["lastNodes"] = f.last_nodes;
    if (!f.last_failure.empty()) j["lastFailure"] = f.last_failure;
    PutTime(j, "lastFailureTime", f.last_failure_time);
    if (f.warm_generation != 0) j["warmGeneration"] = f.warm_generation;
    if (!f.job_uid.empty()) j["jobUid"] = f.job_uid;
    PutTime(j, "lastTransitionTime", f.last_transition_time);
    fps.push_back(std::move(j));
  }
  s["fingerprints"] = std::move(fps);
  return s;
}

KernelCache KernelCacheFromJson(const Json& j, std::vector<std::string>* errors) {
  KernelCache kc;
  if (!j.is_object()) {
    Err(errors, "(object)", "expected a JSON object");
    return kc;
  }
  if (auto it = j.find("metadata"); it != j.end()) kc.metadata = MetadataFromJson(*it, errors);
  if (auto it = j.find("spec"); it != j.end() && !it->is_null()) {
    kc.spec = SpecFromJson(*it, errors);
  } else {
    Err(errors, "spec", "missing: a KernelCache needs a spec");
  }
  // Status is ours: a malformed one is reset, not reported as a spec error.
  if (auto it = j.find("status"); it != j.end()) kc.status = StatusFromJson(*it, nullptr);
  return kc;
}

Json KernelCacheToJson(const KernelCache& kc) {
  return {{"apiVersion", kApiVersion},
          {"kind", kKind},
          {"metadata", MetadataToJson(kc.metadata)},
          {"spec", SpecToJson(kc.spec)},
          {"status", StatusToJson(kc.status)}};
}

RuntimeFacts RuntimeFactsFor(const KernelCacheSpec& spec) {
  RuntimeFacts r;
  r.image = spec.image;
  r.runtime = spec.runtime;
  static const std::string_view kPrefixes[] = {"TRITON_", "TORCH",   "PYTORCH_", "VLLM_",
                                               "CUDA_",   "NVIDIA_", "XLA_"};
  for (const auto& e : spec.warmup.env) {
    if (!e.contains("name") || !e["name"].is_string()) continue;
    if (!e.contains("value") || !e["value"].is_string()) continue;  // valueFrom: not literal
    const std::string name = e["name"].get<std::string>();
    if (IsCacheViewEnv(name)) continue;
    for (auto p : kPrefixes) {
      if (StartsWith(name, p)) {
        r.env[name] = e["value"].get<std::string>();
        break;
      }
    }
  }
  return r;
}

std::string ClaimName(const KernelCache& kc) {
  if (!kc.spec.storage.existing_claim.empty()) return kc.spec.storage.existing_claim;
  return kc.metadata.name + "-cache";
}

const Condition* FindCondition(const std::vector<Condition>& conditions, std::string_view type) {
  for (const auto& c : conditions) {
    if (c.type == type) return &c;
  }
  return nullptr;
}

}  // namespace kc::core
