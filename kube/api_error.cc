#include "kube/api_error.h"

#include <algorithm>
#include <string>

namespace kc::kube {
namespace {

StatusCode CodeFor(std::string_view reason, int http_code) {
  if (reason == "NotFound") return StatusCode::kNotFound;
  if (reason == "AlreadyExists") return StatusCode::kAlreadyExists;
  if (reason == "Conflict") return StatusCode::kConflict;
  if (reason == "Gone" || reason == "Expired") return StatusCode::kGone;
  if (reason == "Invalid" || reason == "BadRequest" || reason == "MethodNotAllowed" ||
      reason == "NotAcceptable" || reason == "RequestEntityTooLarge" ||
      reason == "UnsupportedMediaType") {
    return StatusCode::kInvalidArgument;
  }
  if (reason == "Forbidden") return StatusCode::kPermissionDenied;
  if (reason == "Unauthorized") return StatusCode::kUnauthenticated;
  if (reason == "TooManyRequests" || reason == "ServerTimeout" || reason == "Timeout" ||
      reason == "ServiceUnavailable" || reason == "InternalError") {
    return StatusCode::kUnavailable;
  }
  switch (http_code) {
    case 400:
    case 405:
    case 406:
    case 413:
    case 415:
    case 422:
      return StatusCode::kInvalidArgument;
    case 401:
      return StatusCode::kUnauthenticated;
    case 403:
      return StatusCode::kPermissionDenied;
    case 404:
      return StatusCode::kNotFound;
    case 409:
      return StatusCode::kConflict;
    case 410:
      return StatusCode::kGone;
    case 429:
      return StatusCode::kUnavailable;
    default:
      break;
  }
  if (http_code >= 500 && http_code <= 599) return StatusCode::kUnavailable;
  return StatusCode::kUnknown;
}

std::string Shorten(std::string_view s, size_t max = 300) {
  size_t n = std::min(max, s.size());
  // Never cut a UTF-8 character: the message may end up in a JSON body.
  while (n > 0 && n < s.size() && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  std::string out(s.substr(0, n));
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ' || out.back() == '\r')) {
    out.pop_back();
  }
  if (s.size() > max) out += "...";
  return out;
}

std::string StringField(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it != j.end() && it->is_string()) return it->get<std::string>();
  return {};
}

}  // namespace

Status StatusFromApiStatus(const nlohmann::json& api_status, int http_code,
                           std::string_view context) {
  int code = http_code;
  if (api_status.is_object()) {
    auto it = api_status.find("code");
    if (it != api_status.end() && it->is_number_integer()) code = it->get<int>();
  }
  const std::string reason = api_status.is_object() ? StringField(api_status, "reason") : "";
  std::string message = api_status.is_object() ? StringField(api_status, "message") : "";
  if (message.empty()) {
    message = "HTTP " + std::to_string(code) + (reason.empty() ? "" : " " + reason);
  }
  if (api_status.is_object()) {
    auto details = api_status.find("details");
    if (details != api_status.end() && details->is_object()) {
      auto causes = details->find("causes");
      if (causes != details->end() && causes->is_array() && !causes->empty()) {
        message += " [causes:";
        bool first = true;
        for (const auto& cause : *causes) {
          if (!cause.is_object()) continue;
          message += first ? " " : "; ";
          first = false;
          const std::string field = StringField(cause, "field");
          message += field.empty() ? "<object>" : field;
          message += ": " + StringField(cause, "message");
        }
        message += "]";
      }
    }
  }
  std::string full(context);
  if (!full.empty()) full += ": ";
  full += message;
  return Status(CodeFor(reason, code), std::move(full));
}

Status StatusFromResponse(const HttpResponse& response, std::string_view context) {
  if (response.status >= 200 && response.status <= 299) return OkStatus();
  nlohmann::json body = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_object() && body.value("kind", "") == "Status") {
    return StatusFromApiStatus(body, response.status, context);
  }
  nlohmann::json synthetic = {{"code", response.status}};
  std::string text = Shorten(response.body);
  synthetic["message"] =
      "HTTP " + std::to_string(response.status) + (text.empty() ? "" : ": " + text);
  return StatusFromApiStatus(synthetic, response.status, context);
}

}  // namespace kc::kube
