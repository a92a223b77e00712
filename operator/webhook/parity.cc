#include "operator/webhook/parity.h"

#include <map>
#include <optional>

#include "base/strings.h"
#include "base/utf8.h"
#include "core/api_types.h"

namespace kc::webhook {
namespace {

using Json = nlohmann::json;

constexpr std::size_t kMaxParityText = 1024;

std::string Str(const Json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

// name -> literal value (nullopt: set from valueFrom, unknown here).
std::map<std::string, std::optional<std::string>> EnvOf(const Json& container) {
  std::map<std::string, std::optional<std::string>> out;
  auto it = container.find("env");
  if (it == container.end() || !it->is_array()) return out;
  for (const Json& e : *it) {
    const std::string name = Str(e, "name");
    if (name.empty()) continue;
    if (e.contains("value") && e["value"].is_string()) {
      out[name] = e["value"].get<std::string>();
    } else {
      out[name] = std::nullopt;
    }
  }
  return out;
}

bool HasEnvFrom(const Json& container) {
  auto it = container.find("envFrom");
  return it != container.end() && it->is_array() && !it->empty();
}

std::vector<std::string> Words(const Json& container, const char* key) {
  std::vector<std::string> out;
  auto it = container.find(key);
  if (it == container.end() || !it->is_array()) return out;
  for (const Json& w : *it) out.push_back(w.is_string() ? w.get<std::string>() : w.dump());
  return out;
}

std::string Quoted(const std::vector<std::string>& words) {
  return words.empty() ? "(the image's)" : "[" + StrJoin(words, " ") + "]";
}

// The server form: command, args and GPU count against the warmed template.
void ServerGaps(const Json& pod_spec, const Json& container, const core::ServingContainer& warmed,
                std::vector<ParityGap>* gaps) {
  const std::string cname = Str(container, "name");
  for (const auto& [key, want] :
       {std::pair<const char*, const std::vector<std::string>*>{"command", &warmed.command},
        {"args", &warmed.args}}) {
    const auto got = Words(container, key);
    if (got != *want) {
      gaps->push_back({ParityField::kCommand, std::string(key) + " of container " + cname + " is " +
                                                  Quoted(got) + ", the warmup ran " +
                                                  Quoted(*want)});
    }
  }
  auto gpus = core::PodGpus(pod_spec);
  if (gpus.ok() && *gpus != warmed.gpus) {
    gaps->push_back({ParityField::kGpus, "the pod asks for " + std::to_string(*gpus) +
                                             " nvidia.com/gpu, the warmup ran on " +
                                             std::to_string(warmed.gpus)});
  }
}

}  // namespace

std::string NormalizeImageRef(std::string_view ref) {
  std::string r(ref);
  std::string digest;
  if (auto at = r.find('@'); at != std::string::npos) {
    digest = r.substr(at);
    r = r.substr(0, at);
  }
  // The registry: a first component with a '.' or ':' or "localhost".
  const auto slash = r.find('/');
  const std::string first = slash == std::string::npos ? "" : r.substr(0, slash);
  const bool has_registry =
      !first.empty() && (first.find('.') != std::string::npos ||
                         first.find(':') != std::string::npos || first == "localhost");
  if (!has_registry) r = (slash == std::string::npos ? "docker.io/library/" : "docker.io/") + r;
  const auto last_slash = r.rfind('/');
  if (digest.empty() && r.find(':', last_slash) == std::string::npos) r += ":latest";
  return r + digest;
}

bool SameImage(std::string_view a, std::string_view b) {
  const auto da = a.find('@');
  const auto db = b.find('@');
  if (da != std::string_view::npos && db != std::string_view::npos) {
    return a.substr(da) == b.substr(db);
  }
  return NormalizeImageRef(a) == NormalizeImageRef(b);
}

std::vector<ParityGap> ParityGaps(const Json& pod_spec, const core::RuntimeFacts& warmed,
                                  const core::ServingContainer* server) {
  std::vector<ParityGap> gaps;
  auto it = pod_spec.is_object() ? pod_spec.find("containers") : pod_spec.end();
  if (!pod_spec.is_object() || it == pod_spec.end() || !it->is_array() || it->empty()) {
    return gaps;
  }
  const Json& containers = *it;
  if (warmed.image.empty()) return gaps;  // no spec.image: an invalid KernelCache, not compared
  const Json* serving = nullptr;
  for (const Json& c : containers) {
    if (c.is_object() && SameImage(Str(c, "image"), warmed.image)) {
      serving = &c;
      break;
    }
  }
  if (serving == nullptr) {
    std::vector<std::string> runs;
    for (const Json& c : containers) runs.push_back(Str(c, "name") + " runs " + Str(c, "image"));
    gaps.push_back({ParityField::kImage, "no container runs the warmed image " + warmed.image +
                                             " (" + StrJoin(runs, ", ") + ")"});
    serving = &containers[0];
  }
  if (!serving->is_object()) return gaps;
  const std::string cname = Str(*serving, "name");
  const auto env = EnvOf(*serving);
  for (const auto& [name, value] : warmed.env) {
    auto e = env.find(name);
    if (e == env.end()) {
      if (HasEnvFrom(*serving)) continue;  // may come from a ConfigMap or Secret
      gaps.push_back({ParityField::kEnv, StrCat({name, " is \"", value,
                                                 "\" in the warmup, unset in container ", cname})});
    } else if (e->second.has_value() && *e->second != value) {
      gaps.push_back({ParityField::kEnv, StrCat({name, " is \"", value, "\" in the warmup, \"",
                                                 *e->second, "\" in container ", cname})});
    }
  }
  for (const auto& [name, value] : env) {
    if (!core::IsFingerprintEnv(name) || warmed.env.count(name) > 0 || !value.has_value()) continue;
    gaps.push_back({ParityField::kEnv, StrCat({name, " is \"", *value, "\" in container ", cname,
                                               ", unset in the warmup"})});
  }
  if (server != nullptr) ServerGaps(pod_spec, *serving, *server, &gaps);
  return gaps;
}

std::string ParityText(const std::vector<ParityGap>& gaps) {
  std::vector<std::string> parts;
  parts.reserve(gaps.size());
  for (const ParityGap& g : gaps)
    parts.push_back(std::string(ParityFieldName(g.field)) + ": " + g.detail);
  return TruncateUtf8(StrJoin(parts, "; "), kMaxParityText);
}

}  // namespace kc::webhook
