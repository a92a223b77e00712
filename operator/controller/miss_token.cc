#include "operator/controller/miss_token.h"

#include <algorithm>

#include "base/base64.h"
#include "core/miss_channel.h"

namespace kc::op {
namespace {

Status Refused(const std::string& why) {
  return UnauthenticatedError("the bearer token " + why +
                              ": send the pod's projected ServiceAccount token (audience " +
                              std::string(core::kMissTokenAudience) + ")");
}

// base64url (RFC 4648 section 5) without padding, as JWTs use it.
StatusOr<std::string> DecodeBase64Url(std::string_view in) {
  std::string s(in);
  for (char& c : s) {
    if (c == '+' || c == '/' || c == '=') return InvalidArgumentError("not base64url");
    if (c == '-') c = '+';
    if (c == '_') c = '/';
  }
  return DecodeBase64(s);
}

std::string StringAt(const Json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

StatusOr<TokenClaims> ClaimsOfMissToken(const std::string& token, Time now) {
  if (token.size() > kMaxMissTokenBytes) {
    return Refused("has " + std::to_string(token.size()) + " bytes (at most " +
                   std::to_string(kMaxMissTokenBytes) + ")");
  }
  const size_t a = token.find('.');
  const size_t b = a == std::string::npos ? a : token.find('.', a + 1);
  if (a == std::string::npos || b == std::string::npos ||
      token.find('.', b + 1) != std::string::npos || a == 0 || b == a + 1 ||
      b + 1 == token.size()) {
    return Refused("is not a JWT (three dot-separated parts)");
  }
  auto payload = DecodeBase64Url(std::string_view(token).substr(a + 1, b - a - 1));
  if (!payload.ok()) return Refused("has a payload that is not base64url");
  Json claims = Json::parse(*payload, nullptr, /*allow_exceptions=*/false);
  if (!claims.is_object()) return Refused("has a payload that is not a JSON object");

  bool audience = false;
  if (auto aud = claims.find("aud"); aud != claims.end()) {
    if (aud->is_string()) audience = *aud == core::kMissTokenAudience;
    if (aud->is_array()) {
      audience = std::any_of(aud->begin(), aud->end(), [](const Json& x) {
        return x.is_string() && x == core::kMissTokenAudience;
      });
    }
  }
  if (!audience) return Refused("is for another audience");

  auto exp = claims.find("exp");
  constexpr std::uint64_t kLatestExp = std::uint64_t{1} << 40;  // year ~36800
  if (exp == claims.end() || !exp->is_number_unsigned() || exp->get<std::uint64_t>() > kLatestExp) {
    return Refused("has no expiry (\"exp\": seconds since the epoch)");
  }
  const Time expires = Time{} + std::chrono::seconds(exp->get<std::uint64_t>());
  if (expires <= now) return Refused("has expired");

  const Json k8s = claims.value("kubernetes.io", Json::object());
  const Json pod = k8s.is_object() ? k8s.value("pod", Json::object()) : Json::object();
  TokenClaims out{StringAt(k8s, "namespace"), StringAt(pod, "name"), StringAt(pod, "uid"), expires};
  if (out.ns.empty() || out.pod.empty() || out.pod_uid.empty()) {
    return Refused("is not bound to a pod (\"kubernetes.io\".pod names none)");
  }
  return out;
}

}  // namespace kc::op
