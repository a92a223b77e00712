#include "core/resolve_answer.h"

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>

#include "core/enum_name.h"
#include "core/manifest.h"

namespace kc::core {
namespace {

using Json = nlohmann::json;

}  // namespace

StatusOr<ResolveState> ParseResolveState(std::string_view name) {
  return ParseEnumName<ResolveState>(name, kResolveStates, ResolveStateName);
}

std::string ResolveAnswerToJson(const ResolveAnswer& a) {
  Json j = {{"fingerprint", a.fingerprint},
            {"state", std::string(ResolveStateName(a.state))},
            {"directory", a.directory},
            {"manifestDigest", a.manifest_digest},
            {"message", a.message}};
  if (!(a.final && a.fingerprint.empty())) {
    j["node"] = {{"gpuProduct", a.node.gpu_product},
                 {"computeCapability", a.node.compute_capability},
                 {"driver", a.node.driver_version},
                 {"cudaDriver", a.node.cuda_driver_version},
                 {"arch", a.node.arch}};
  }
  if (a.final) j["final"] = true;
  if (a.start_cold) j["startCold"] = true;
  // A reason read without final/startCold is kept too (the decoder reads it
  // whatever the flags; found by fuzz/resolve_answer.cc).
  if (a.final || a.start_cold || !a.reason.empty()) j["reason"] = a.reason;
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

StatusOr<ResolveAnswer> ParseResolveAnswer(std::string_view body) {
  auto j = Json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgumentError("resolve answer is not a JSON object");
  }
  ResolveAnswer a;
  auto str = [&j](const char* key, std::string* out, bool required) -> Status {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
      if (required) {
        return InvalidArgumentError(std::string("resolve answer has no \"") + key + "\"");
      }
      return OkStatus();
    }
    if (!it->is_string()) {
      return InvalidArgumentError(std::string("resolve answer field \"") + key +
                                  "\" is not a string");
    }
    *out = it->get<std::string>();
    return OkStatus();
  };
  KC_RETURN_IF_ERROR(str("fingerprint", &a.fingerprint, true));
  std::string state;
  KC_RETURN_IF_ERROR(str("state", &state, true));
  KC_RETURN_IF_ERROR(str("directory", &a.directory, false));
  KC_RETURN_IF_ERROR(str("manifestDigest", &a.manifest_digest, false));
  KC_RETURN_IF_ERROR(str("message", &a.message, false));
  KC_RETURN_IF_ERROR(str("reason", &a.reason, false));
  if (auto it = j.find("final"); it != j.end() && !it->is_null()) {
    if (!it->is_boolean()) {
      return InvalidArgumentError("resolve answer field \"final\" is not a boolean");
    }
    a.final = it->get<bool>();
  }
  if (auto it = j.find("startCold"); it != j.end() && !it->is_null()) {
    if (!it->is_boolean()) {
      return InvalidArgumentError("resolve answer field \"startCold\" is not a boolean");
    }
    a.start_cold = it->get<bool>();
  }
  auto parsed = ParseResolveState(state);
  if (!parsed.ok()) return parsed.status().WithContext("resolve answer state");
  a.state = *parsed;
  if (a.final && a.fingerprint.empty()) return a;  // no fingerprint for this node at all
  if (!IsFingerprintId(a.fingerprint)) {
    return InvalidArgumentError("resolve answer fingerprint \"" + a.fingerprint +
                                "\" is not a 16-hex-digit fingerprint id");
  }
  if (a.directory.empty()) a.directory = "v1/" + a.fingerprint;
  if (auto it = j.find("node"); it != j.end() && it->is_object()) {
    auto facts = ParseNodeFacts(it->dump());
    if (!facts.ok()) return facts.status().WithContext("resolve answer \"node\"");
    a.node = *facts;
  } else if (!a.final) {
    return InvalidArgumentError("resolve answer has no \"node\" object");
  }
  return a;
}

StatusOr<ResolveUrl> ParseResolveUrl(std::string_view s) {
  constexpr std::string_view kScheme = "http://";
  if (!s.starts_with(kScheme)) {
    return InvalidArgumentError("resolve URL \"" + std::string(s) +
                                "\" must start with http:// (the operator's in-cluster service)");
  }
  const std::string whole(s);
  s.remove_prefix(kScheme.size());
  ResolveUrl u;
  auto slash = s.find('/');
  std::string_view authority = s.substr(0, slash);
  if (slash != std::string_view::npos) u.prefix = std::string(s.substr(slash));
  while (!u.prefix.empty() && u.prefix.back() == '/') u.prefix.pop_back();
  // The endpoint's own URL is accepted as well as its base.
  constexpr std::string_view kEndpoint = "/v1/resolve";
  if (std::string_view(u.prefix).ends_with(kEndpoint)) {
    u.prefix.resize(u.prefix.size() - kEndpoint.size());
    while (!u.prefix.empty() && u.prefix.back() == '/') u.prefix.pop_back();
  }
  if (authority.starts_with('[')) {  // [IPv6] or [IPv6]:port
    const auto close = authority.find(']');
    if (close == std::string_view::npos) {
      return InvalidArgumentError("resolve URL \"" + whole + "\": unclosed '[' in the host");
    }
    std::string_view rest = authority.substr(close + 1);
    if (!rest.empty() && !rest.starts_with(':')) {
      return InvalidArgumentError("resolve URL \"" + whole + "\": want [address]:port");
    }
    if (!rest.empty()) u.port = std::string(rest.substr(1));
    authority = authority.substr(1, close - 1);
  } else if (auto colon = authority.rfind(':'); colon != std::string_view::npos) {
    u.port = std::string(authority.substr(colon + 1));
    authority = authority.substr(0, colon);
  }
  u.host = std::string(authority);
  if (u.host.empty() || u.port.empty()) {
    return InvalidArgumentError("resolve URL \"" + whole + "\" has no host or port");
  }
  if (!std::all_of(u.port.begin(), u.port.end(), [](char c) { return c >= '0' && c <= '9'; }) ||
      u.port.size() > 5 || std::stoi(u.port) == 0 || std::stoi(u.port) > 65535) {
    return InvalidArgumentError("resolve URL \"" + whole + "\": port \"" + u.port +
                                "\" is not a number in 1..65535");
  }
  return u;
}

}  // namespace kc::core
