#include "core/warmup_plan.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <nlohmann/json.hpp>
#include <set>

#include "base/utf8.h"

namespace kc::core {
namespace {

using Json = nlohmann::json;

constexpr std::array<std::string_view, 5> kMethods = {"GET", "POST", "PUT", "PATCH", "DELETE"};
// Set by the driver's HTTP client from the body and the server address.
constexpr std::array<std::string_view, 3> kReservedHeaders = {"host", "content-length",
                                                              "transfer-encoding"};

Status Bad(const std::string& field, std::string_view want) {
  return InvalidArgumentError(std::string(kWarmupRequestsEnv) + field + ": " + std::string(want));
}

std::string Lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// RFC 9110 token characters.
bool IsToken(std::string_view s) {
  constexpr std::string_view kExtra = "!#$%&'*+-.^_`|~";
  return !s.empty() && std::all_of(s.begin(), s.end(), [&](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 ||
           kExtra.find(c) != std::string_view::npos;
  });
}

// A request target: no whitespace, no control characters.
bool IsPathText(std::string_view s) {
  return std::none_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u <= 0x20 || u == 0x7f;
  });
}

bool HasLineBreakOrNul(std::string_view s) {
  return s.find_first_of(std::string_view("\r\n\0", 3)) != std::string_view::npos;
}

// The optional string field `key` of `entry` into *out ("" when absent).
Status OptionalString(const Json& entry, const char* key, const std::string& where,
                      size_t max_bytes, std::string* out) {
  auto it = entry.find(key);
  if (it == entry.end()) return Status();
  if (!it->is_string()) return Bad(where + "." + key, "must be a string");
  *out = it->get<std::string>();
  if (out->size() > max_bytes) {
    return Bad(where + "." + key, "has more than " + std::to_string(max_bytes) + " bytes");
  }
  return Status();
}

Status ParseHeaders(const Json& entry, const std::string& where,
                    std::map<std::string, std::string>* out) {
  auto it = entry.find("headers");
  if (it == entry.end()) return Status();
  if (!it->is_object()) return Bad(where + ".headers", "must be an object of strings");
  std::set<std::string> seen;
  for (const auto& [name, value] : it->items()) {
    const std::string field = where + ".headers[\"" + TruncateUtf8(name, 64) + "\"]";
    if (!IsToken(name)) return Bad(field, "the name is not an HTTP token");
    const std::string lower = Lower(name);
    if (std::find(kReservedHeaders.begin(), kReservedHeaders.end(), lower) !=
        kReservedHeaders.end()) {
      return Bad(field, "is set by the driver, not by the plan");
    }
    if (!seen.insert(lower).second) {
      return Bad(field, "is listed twice (header names are case-insensitive)");
    }
    if (!value.is_string()) return Bad(field, "must be a string");
    const auto& text = value.get_ref<const std::string&>();
    if (HasLineBreakOrNul(text)) return Bad(field, "must not hold CR, LF or NUL");
    if (text.size() > kMaxWarmupHeaderBytes) {
      return Bad(field, "has more than " + std::to_string(kMaxWarmupHeaderBytes) + " bytes");
    }
    (*out)[name] = text;
  }
  return Status();
}

StatusOr<WarmupCall> ParseCall(const Json& entry, const std::string& where) {
  if (!entry.is_object()) return Bad(where, "must be an object");
  WarmupCall call;
  auto method = entry.find("method");
  if (method == entry.end() || !method->is_string() ||
      std::find(kMethods.begin(), kMethods.end(), method->get<std::string>()) == kMethods.end()) {
    return Bad(where + ".method", "must be one of GET, POST, PUT, PATCH, DELETE");
  }
  call.method = method->get<std::string>();
  auto path = entry.find("path");
  if (path == entry.end() || !path->is_string()) return Bad(where + ".path", "must be a string");
  call.path = path->get<std::string>();
  if (call.path.empty() || call.path[0] != '/') return Bad(where + ".path", "must start with '/'");
  if (!IsPathText(call.path)) {
    return Bad(where + ".path", "must not hold spaces, CR, LF or other control characters");
  }
  if (call.path.size() > kMaxWarmupPathBytes) {
    return Bad(where + ".path", "has more than " + std::to_string(kMaxWarmupPathBytes) + " bytes");
  }
  KC_RETURN_IF_ERROR(ParseHeaders(entry, where, &call.headers));
  KC_RETURN_IF_ERROR(OptionalString(entry, "body", where, kMaxWarmupBodyBytes, &call.body));
  KC_RETURN_IF_ERROR(OptionalString(entry, "label", where, kMaxWarmupLabelBytes, &call.label));
  if (HasLineBreakOrNul(call.label)) return Bad(where + ".label", "must not hold CR, LF or NUL");
  return call;
}

StatusOr<std::vector<WarmupCall>> ParseJson(std::string_view json) {
  const Json j = Json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_array()) {
    return Bad("", "not a JSON array (starts \"" + TruncateUtf8(json, 64) + "\")");
  }
  if (j.size() > kMaxWarmupCalls) {
    return Bad("", "has more than " + std::to_string(kMaxWarmupCalls) + " calls");
  }
  std::vector<WarmupCall> calls;
  calls.reserve(j.size());
  for (size_t i = 0; i < j.size(); ++i) {
    KC_ASSIGN_OR_RETURN(WarmupCall call, ParseCall(j[i], "[" + std::to_string(i) + "]"));
    calls.push_back(std::move(call));
  }
  return calls;
}

}  // namespace

std::string WarmupCallsToJson(const std::vector<WarmupCall>& calls) {
  Json out = Json::array();
  for (const WarmupCall& c : calls) {
    Json entry = {{"method", c.method}, {"path", c.path}};
    if (!c.headers.empty()) entry["headers"] = c.headers;
    if (!c.body.empty()) entry["body"] = c.body;
    if (!c.label.empty()) entry["label"] = c.label;
    out.push_back(std::move(entry));
  }
  return out.dump(-1, ' ', false, Json::error_handler_t::replace);
}

StatusOr<std::vector<WarmupCall>> ParseWarmupCalls(std::string_view json) {
  try {
    return ParseJson(json);
  } catch (const std::exception& e) {  // never expected: every access is type-checked first
    return Bad("", std::string("not a valid plan: ") + e.what());
  }
}

}  // namespace kc::core
