#include "kube/watch_decoder.h"

#include <string>

namespace kc::kube {
namespace {

constexpr size_t kShownPrefix = 120;

std::string Shown(std::string_view line) {
  if (line.size() <= kShownPrefix) return std::string(line);
  return std::string(line.substr(0, kShownPrefix)) + "...";
}

std::string_view TrimLine(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
    line.remove_suffix(1);
  }
  while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  return line;
}

}  // namespace

bool ParseWatchEventType(std::string_view s, WatchEvent::Type* type) {
  if (s == "ADDED") {
    *type = WatchEvent::Type::kAdded;
  } else if (s == "MODIFIED") {
    *type = WatchEvent::Type::kModified;
  } else if (s == "DELETED") {
    *type = WatchEvent::Type::kDeleted;
  } else if (s == "BOOKMARK") {
    *type = WatchEvent::Type::kBookmark;
  } else if (s == "ERROR") {
    *type = WatchEvent::Type::kError;
  } else {
    return false;
  }
  return true;
}

std::string_view WatchEventTypeName(WatchEvent::Type type) {
  switch (type) {
    case WatchEvent::Type::kAdded:
      return "ADDED";
    case WatchEvent::Type::kModified:
      return "MODIFIED";
    case WatchEvent::Type::kDeleted:
      return "DELETED";
    case WatchEvent::Type::kBookmark:
      return "BOOKMARK";
    case WatchEvent::Type::kError:
      return "ERROR";
  }
  return "UNKNOWN";
}

StatusOr<WatchEvent> DecodeWatchLine(std::string_view line) {
  Json j = Json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return InvalidArgumentError("watch event is not valid JSON: " + Shown(line));
  }
  if (!j.is_object()) {
    return InvalidArgumentError("watch event is not a JSON object: " + Shown(line));
  }
  auto type_it = j.find("type");
  if (type_it == j.end() || !type_it->is_string()) {
    return InvalidArgumentError("watch event has no string field \"type\": " + Shown(line));
  }
  WatchEvent event;
  if (!ParseWatchEventType(type_it->get_ref<const std::string&>(), &event.type)) {
    return InvalidArgumentError(
        "watch event has unknown type \"" + type_it->get_ref<const std::string&>() +
        "\" (want ADDED, MODIFIED, DELETED, BOOKMARK or ERROR): " + Shown(line));
  }
  auto object_it = j.find("object");
  if (object_it == j.end() || !object_it->is_object()) {
    return InvalidArgumentError("watch event has no object field \"object\": " + Shown(line));
  }
  event.object = std::move(*object_it);
  return event;
}

Status WatchErrorToStatus(const Json& status) {
  int64_t code = 0;
  std::string reason;
  std::string message = "watch ERROR event";
  if (status.is_object()) {
    if (auto it = status.find("code"); it != status.end() && it->is_number_integer()) {
      code = it->get<int64_t>();
    }
    if (auto it = status.find("reason"); it != status.end() && it->is_string()) {
      reason = it->get<std::string>();
    }
    if (auto it = status.find("message"); it != status.end() && it->is_string()) {
      message = it->get<std::string>();
    }
  }
  if (code == 410 || reason == "Expired" || reason == "Gone") return GoneError(message);
  if (code >= 500 || reason == "Timeout" || reason == "ServerTimeout") {
    return UnavailableError(message);
  }
  return {StatusCode::kUnknown, message};
}

Status WatchDecoder::DecodeOne(std::string_view line, std::vector<WatchEvent>* out) {
  ++line_number_;
  line = TrimLine(line);
  if (line.empty()) return OkStatus();
  auto event = DecodeWatchLine(line);
  if (!event.ok()) {
    return event.status().WithContext("watch stream line " + std::to_string(line_number_));
  }
  out->push_back(std::move(event).value());
  return OkStatus();
}

Status WatchDecoder::Feed(std::string_view chunk, std::vector<WatchEvent>* out) {
  Status first_error;
  while (!chunk.empty()) {
    const size_t nl = chunk.find('\n');
    if (nl == std::string_view::npos) {
      partial_.append(chunk);
      break;
    }
    Status s;
    if (partial_.empty()) {
      s = DecodeOne(chunk.substr(0, nl), out);
    } else {
      partial_.append(chunk.substr(0, nl));
      s = DecodeOne(partial_, out);
      partial_.clear();
    }
    chunk.remove_prefix(nl + 1);
    if (!s.ok() && first_error.ok()) first_error = s;
  }
  return first_error;
}

Status WatchDecoder::Finish(std::vector<WatchEvent>* out) {
  if (partial_.empty()) return OkStatus();
  std::string rest;
  rest.swap(partial_);
  return DecodeOne(rest, out);
}

}  // namespace kc::kube
