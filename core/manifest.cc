#include "core/manifest.h"

#include <algorithm>
#include <ctime>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <set>

#include "api/time.h"
#include "core/json_bounds.h"
#include "core/layout.h"

namespace kc::core {
namespace {

using json = nlohmann::json;

std::string Join(const std::string& where, const std::string& key) {
  if (where.empty()) return key;
  std::string out = where;
  out += '.';
  out += key;
  return out;
}

Status FieldError(const std::string& field, const std::string& why) {
  return InvalidArgumentError("manifest field " + field + ": " + why);
}

Status CheckKeys(const json& obj, const std::string& where,
                 std::initializer_list<std::string_view> allowed) {
  for (const auto& [k, v] : obj.items()) {
    if (std::find(allowed.begin(), allowed.end(), k) == allowed.end()) {
      return FieldError(Join(where, k),
                        "unknown field (schema " + std::to_string(kManifestSchemaVersion) + ")");
    }
  }
  return OkStatus();
}

StatusOr<const json*> Need(const json& obj, const std::string& where, const std::string& key) {
  auto it = obj.find(key);
  if (it == obj.end()) {
    return FieldError(where.empty() ? key : where + "." + key, "missing");
  }
  return &*it;
}

StatusOr<std::string> NeedString(const json& obj, const std::string& where,
                                 const std::string& key) {
  KC_ASSIGN_OR_RETURN(const json* v, Need(obj, where, key));
  if (!v->is_string()) {
    return FieldError(where.empty() ? key : where + "." + key, "want a string");
  }
  return v->get<std::string>();
}

StatusOr<std::uint64_t> NeedUint(const json& obj, const std::string& where,
                                 const std::string& key) {
  KC_ASSIGN_OR_RETURN(const json* v, Need(obj, where, key));
  if (!v->is_number_unsigned() && !(v->is_number_integer() && v->get<std::int64_t>() >= 0)) {
    return FieldError(where.empty() ? key : where + "." + key, "want a non-negative integer");
  }
  return v->get<std::uint64_t>();
}

StatusOr<std::map<std::string, std::string>> StringMap(const json& v, const std::string& where) {
  if (!v.is_object()) return FieldError(where, "want an object of strings");
  std::map<std::string, std::string> out;
  for (const auto& [k, val] : v.items()) {
    if (!val.is_string()) return FieldError(Join(where, k), "want a string");
    out[k] = val.get<std::string>();
  }
  return out;
}

json NodeJson(const NodeFacts& n) {
  return json{{"arch", n.arch},
              {"computeCapability", n.compute_capability},
              {"cudaDriver", n.cuda_driver_version},
              {"driver", n.driver_version},
              {"gpuProduct", n.gpu_product}};
}

json RuntimeJson(const RuntimeFacts& r) {
  json j{{"env", r.env}, {"image", r.image}, {"schema", r.schema_version}, {"versions", r.runtime}};
  // The server form's inputs, only when set (as in the fingerprint).
  if (r.gpus != 1) j["gpus"] = r.gpus;
  if (!r.parallel.empty()) j["parallel"] = r.parallel;
  if (!r.server.empty()) j["server"] = r.server;
  return j;
}

// {"tensor": 4, "pipeline": 2}: whole numbers 1..1024.
StatusOr<std::map<std::string, int64_t>> ParallelMap(const json& v, const std::string& where) {
  if (!v.is_object()) return FieldError(where, "want an object of whole numbers");
  std::map<std::string, int64_t> out;
  for (const auto& [k, n] : v.items()) {
    if (!n.is_number_unsigned() || n.get<std::uint64_t>() < 1 || n.get<std::uint64_t>() > 1024) {
      return FieldError(where + "." + k, "want a whole number 1..1024");
    }
    out[k] = n.get<int64_t>();
  }
  return out;
}

StatusOr<NodeFacts> NodeFromJson(const json& v, const std::string& where) {
  if (!v.is_object()) return FieldError(where, "want an object");
  KC_RETURN_IF_ERROR(
      CheckKeys(v, where, {"arch", "computeCapability", "cudaDriver", "driver", "gpuProduct"}));
  NodeFacts n;
  KC_ASSIGN_OR_RETURN(n.arch, NeedString(v, where, "arch"));
  KC_ASSIGN_OR_RETURN(n.compute_capability, NeedString(v, where, "computeCapability"));
  KC_ASSIGN_OR_RETURN(n.cuda_driver_version, NeedString(v, where, "cudaDriver"));
  KC_ASSIGN_OR_RETURN(n.driver_version, NeedString(v, where, "driver"));
  KC_ASSIGN_OR_RETURN(n.gpu_product, NeedString(v, where, "gpuProduct"));
  return n;
}

StatusOr<RuntimeFacts> RuntimeFromJson(const json& v, const std::string& where) {
  if (!v.is_object()) return FieldError(where, "want an object");
  KC_RETURN_IF_ERROR(
      CheckKeys(v, where, {"env", "gpus", "image", "parallel", "schema", "server", "versions"}));
  RuntimeFacts r;
  KC_ASSIGN_OR_RETURN(r.image, NeedString(v, where, "image"));
  if (auto it = v.find("versions"); it != v.end()) {
    KC_ASSIGN_OR_RETURN(r.runtime, StringMap(*it, where + ".versions"));
  }
  if (auto it = v.find("env"); it != v.end()) {
    KC_ASSIGN_OR_RETURN(r.env, StringMap(*it, where + ".env"));
  }
  if (v.contains("schema")) {
    KC_ASSIGN_OR_RETURN(std::uint64_t s, NeedUint(v, where, "schema"));
    r.schema_version = static_cast<int>(s);
  }
  if (v.contains("gpus")) {
    KC_ASSIGN_OR_RETURN(std::uint64_t g, NeedUint(v, where, "gpus"));
    if (g > 1024) return FieldError(where + ".gpus", "want a whole number 0..1024");
    r.gpus = static_cast<int64_t>(g);
  }
  if (auto it = v.find("parallel"); it != v.end()) {
    KC_ASSIGN_OR_RETURN(r.parallel, ParallelMap(*it, where + ".parallel"));
  }
  if (v.contains("server")) {
    KC_ASSIGN_OR_RETURN(r.server, NeedString(v, where, "server"));
    if (!IsSha256Hex(r.server)) return FieldError(where + ".server", "want a sha256 hex digest");
  }
  return r;
}

StatusOr<json> ParseJson(std::string_view text, std::string_view what) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return InvalidArgumentError(std::string(what) + " is not valid JSON");
  }
  return j;
}

}  // namespace

bool IsSha256Hex(std::string_view s) {
  if (s.size() != 64) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::string Rfc3339(std::int64_t unix_seconds) {
  return api::FormatTime(api::FromUnixSeconds(unix_seconds));
}

StatusOr<std::int64_t> ParseRfc3339(std::string_view s) {
  KC_ASSIGN_OR_RETURN(api::Time t, api::ParseTime(s));
  return api::ToUnixSeconds(t);
}

void FinalizeManifest(Manifest* m) {
  std::sort(m->files.begin(), m->files.end(),
            [](const ManifestFile& a, const ManifestFile& b) { return a.path < b.path; });
  std::sort(m->links.begin(), m->links.end(),
            [](const ManifestLink& a, const ManifestLink& b) { return a.path < b.path; });
  m->total_files = m->files.size();
  m->total_bytes = 0;
  for (const auto& f : m->files) m->total_bytes += f.size;
}

std::string ManifestToJson(const Manifest& m) {
  json j;
  j["schema"] = m.schema;
  json fp = {{"id", m.fingerprint_id}, {"sha256", m.fingerprint_sha256}};
  if (m.node) fp["node"] = NodeJson(*m.node);
  if (m.runtime) fp["runtime"] = RuntimeJson(*m.runtime);
  j["fingerprint"] = fp;
  j["frameworks"] = m.frameworks;
  json files = json::array();
  for (const auto& f : m.files) {
    files.push_back({{"path", f.path}, {"sha256", f.sha256}, {"size", f.size}});
  }
  j["files"] = std::move(files);
  if (!m.links.empty()) {
    json links = json::array();
    for (const auto& l : m.links) links.push_back({{"path", l.path}, {"target", l.target}});
    j["links"] = std::move(links);
  }
  j["totals"] = {{"bytes", m.total_bytes}, {"files", m.total_files}};
  j["createdAt"] = m.created_at;
  if (!m.producer_owner.empty() || !m.producer_host.empty()) {
    j["producer"] = {{"host", m.producer_host}, {"owner", m.producer_owner}};
  }
  return j.dump(2) + "\n";
}

Status CheckManifest(const Manifest& m) {
  if (m.schema != kManifestSchemaVersion) {
    return FieldError("schema", "version " + std::to_string(m.schema) +
                                    " is not known to this initwarm (knows " +
                                    std::to_string(kManifestSchemaVersion) +
                                    "); use an initwarm that matches the cache");
  }
  if (m.files.size() + m.links.size() > kMaxManifestEntries) {
    return FieldError("files", std::to_string(m.files.size()) + " files and " +
                                   std::to_string(m.links.size()) + " links, more than the " +
                                   std::to_string(kMaxManifestEntries) +
                                   " a cache may hold; warm fewer shapes per fingerprint");
  }
  if (!IsFingerprintId(m.fingerprint_id)) {
    return FieldError("fingerprint.id", "\"" + m.fingerprint_id + "\" is not 16 hex digits");
  }
  if (!m.fingerprint_sha256.empty()) {
    if (!IsSha256Hex(m.fingerprint_sha256)) {
      return FieldError("fingerprint.sha256", "want 64 lower-case hex digits");
    }
    if (m.fingerprint_sha256.compare(0, 16, m.fingerprint_id) != 0) {
      return FieldError("fingerprint.sha256", "does not start with fingerprint.id");
    }
  }
  if (m.node.has_value() != m.runtime.has_value()) {
    return FieldError("fingerprint", "node and runtime inputs must be given together");
  }
  if (m.node) {
    Fingerprint f = ComputeFingerprint(*m.node, *m.runtime);
    if (f.id != m.fingerprint_id) {
      return FieldError("fingerprint.id", "\"" + m.fingerprint_id +
                                              "\" does not match its own inputs (they give \"" +
                                              f.id + "\")");
    }
  }
  std::uint64_t bytes = 0;
  std::set<std::string_view> seen;
  for (size_t i = 0; i < m.files.size(); ++i) {
    const auto& f = m.files[i];
    std::string where = "files[" + std::to_string(i) + "]";
    if (Status s = CheckRelativePath(f.path); !s.ok())
      return FieldError(where + ".path", s.message());
    if (f.path == kManifestFileName || f.path == kReadyFileName) {
      return FieldError(where + ".path", "\"" + f.path + "\" is reserved");
    }
    if (i > 0 && !(m.files[i - 1].path < f.path)) {
      return FieldError(where + ".path", "\"" + f.path + "\" is out of order or duplicated");
    }
    if (!IsSha256Hex(f.sha256))
      return FieldError(where + ".sha256", "want 64 lower-case hex digits");
    bytes += f.size;
    seen.insert(f.path);
  }
  for (size_t i = 0; i < m.links.size(); ++i) {
    const auto& l = m.links[i];
    std::string where = "links[" + std::to_string(i) + "]";
    if (Status s = CheckSymlinkTarget(l.path, l.target); !s.ok()) {
      return FieldError(where, s.message());
    }
    if (seen.count(l.path)) return FieldError(where + ".path", "also listed as a file");
  }
  if (m.total_files != m.files.size()) {
    return FieldError("totals.files", std::to_string(m.total_files) + " but files has " +
                                          std::to_string(m.files.size()) + " entries");
  }
  if (m.total_bytes != bytes) {
    return FieldError("totals.bytes", std::to_string(m.total_bytes) +
                                          " but the file sizes add up to " + std::to_string(bytes));
  }
  if (!ParseRfc3339(m.created_at).ok()) {
    return FieldError("createdAt", "\"" + m.created_at + "\" is not RFC 3339 UTC");
  }
  return OkStatus();
}

StatusOr<Manifest> ParseManifest(std::string_view text) {
  // A file entry is an object of three keys and values (7), a link one of
  // two (5); the rest of a manifest holds a few hundred.
  constexpr std::size_t kOtherValues = 65536;
  KC_RETURN_IF_ERROR(CheckJsonBounds(
      text, {kMaxManifestBytes, kMaxManifestDepth, kMaxManifestEntries * 8 + kOtherValues},
      "manifest.json"));
  KC_ASSIGN_OR_RETURN(json j, ParseJson(text, "manifest.json"));
  if (!j.is_object()) return FieldError("(top level)", "want an object");
  KC_RETURN_IF_ERROR(CheckKeys(j, "",
                               {"schema", "fingerprint", "frameworks", "files", "links", "totals",
                                "createdAt", "producer"}));
  Manifest m;
  KC_ASSIGN_OR_RETURN(std::uint64_t schema, NeedUint(j, "", "schema"));
  m.schema = static_cast<int>(schema);
  if (m.schema != kManifestSchemaVersion) return CheckManifest(m);  // names the schema

  KC_ASSIGN_OR_RETURN(const json* fp, Need(j, "", "fingerprint"));
  if (!fp->is_object()) return FieldError("fingerprint", "want an object");
  KC_RETURN_IF_ERROR(CheckKeys(*fp, "fingerprint", {"id", "sha256", "node", "runtime"}));
  KC_ASSIGN_OR_RETURN(m.fingerprint_id, NeedString(*fp, "fingerprint", "id"));
  if (fp->contains("sha256")) {
    KC_ASSIGN_OR_RETURN(m.fingerprint_sha256, NeedString(*fp, "fingerprint", "sha256"));
  }
  if (auto it = fp->find("node"); it != fp->end()) {
    KC_ASSIGN_OR_RETURN(m.node, NodeFromJson(*it, "fingerprint.node"));
  }
  if (auto it = fp->find("runtime"); it != fp->end()) {
    KC_ASSIGN_OR_RETURN(m.runtime, RuntimeFromJson(*it, "fingerprint.runtime"));
  }
  if (auto it = j.find("frameworks"); it != j.end()) {
    KC_ASSIGN_OR_RETURN(m.frameworks, StringMap(*it, "frameworks"));
  }
  KC_ASSIGN_OR_RETURN(const json* files, Need(j, "", "files"));
  if (!files->is_array()) return FieldError("files", "want an array");
  m.files.reserve(files->size());
  for (size_t i = 0; i < files->size(); ++i) {
    const json& f = (*files)[i];
    std::string where = "files[" + std::to_string(i) + "]";
    if (!f.is_object()) return FieldError(where, "want an object");
    KC_RETURN_IF_ERROR(CheckKeys(f, where, {"path", "size", "sha256"}));
    ManifestFile mf;
    KC_ASSIGN_OR_RETURN(mf.path, NeedString(f, where, "path"));
    KC_ASSIGN_OR_RETURN(mf.size, NeedUint(f, where, "size"));
    KC_ASSIGN_OR_RETURN(mf.sha256, NeedString(f, where, "sha256"));
    m.files.push_back(std::move(mf));
  }
  if (auto it = j.find("links"); it != j.end()) {
    if (!it->is_array()) return FieldError("links", "want an array");
    for (size_t i = 0; i < it->size(); ++i) {
      const json& l = (*it)[i];
      std::string where = "links[" + std::to_string(i) + "]";
      if (!l.is_object()) return FieldError(where, "want an object");
      KC_RETURN_IF_ERROR(CheckKeys(l, where, {"path", "target"}));
      ManifestLink ml;
      KC_ASSIGN_OR_RETURN(ml.path, NeedString(l, where, "path"));
      KC_ASSIGN_OR_RETURN(ml.target, NeedString(l, where, "target"));
      m.links.push_back(std::move(ml));
    }
  }
  KC_ASSIGN_OR_RETURN(const json* totals, Need(j, "", "totals"));
  if (!totals->is_object()) return FieldError("totals", "want an object");
  KC_RETURN_IF_ERROR(CheckKeys(*totals, "totals", {"bytes", "files"}));
  KC_ASSIGN_OR_RETURN(m.total_bytes, NeedUint(*totals, "totals", "bytes"));
  KC_ASSIGN_OR_RETURN(m.total_files, NeedUint(*totals, "totals", "files"));
  KC_ASSIGN_OR_RETURN(m.created_at, NeedString(j, "", "createdAt"));
  if (auto it = j.find("producer"); it != j.end()) {
    if (!it->is_object()) return FieldError("producer", "want an object");
    KC_RETURN_IF_ERROR(CheckKeys(*it, "producer", {"host", "owner"}));
    if (it->contains("host")) {
      KC_ASSIGN_OR_RETURN(m.producer_host, NeedString(*it, "producer", "host"));
    }
    if (it->contains("owner")) {
      KC_ASSIGN_OR_RETURN(m.producer_owner, NeedString(*it, "producer", "owner"));
    }
  }
  KC_RETURN_IF_ERROR(CheckManifest(m));
  return m;
}

std::string NodeFactsToJson(const NodeFacts& n) { return NodeJson(n).dump(); }

StatusOr<NodeFacts> ParseNodeFacts(std::string_view text) {
  KC_ASSIGN_OR_RETURN(json j, ParseJson(text, "node facts"));
  return NodeFromJson(j, "node");
}

std::string RuntimeFactsToJson(const RuntimeFacts& r) { return RuntimeJson(r).dump(); }

StatusOr<RuntimeFacts> ParseRuntimeFacts(std::string_view text) {
  KC_ASSIGN_OR_RETURN(json j, ParseJson(text, "runtime facts"));
  return RuntimeFromJson(j, "runtime");
}

}  // namespace kc::core
