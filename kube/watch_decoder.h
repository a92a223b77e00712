// WatchDecoder: incremental decoding of a Kubernetes watch stream.
//
// A watch response body is a sequence of JSON objects, one per line:
//   {"type":"ADDED","object":{...}}\n{"type":"BOOKMARK","object":{...}}\n
// The transport may hand it over in arbitrary chunks: an event split across
// chunks, several events in one chunk, a trailing partial line.
//
// Contract:
// - Feed(chunk, out) appends every event completed by `chunk` to `*out`, in
//   order, and keeps a trailing partial line for the next Feed. Blank lines
//   (and a trailing '\r') are ignored.
// - A malformed line (not JSON, no known "type", no "object" object) is
//   dropped; the other lines of the chunk are still decoded into `*out`, and
//   Feed returns InvalidArgument naming the first bad line's number (1-based
//   over the whole stream) and showing a prefix of it.
// - Finish(out) decodes what is left when the stream ends (a last line
//   without '\n').
// - DecodeWatchLine() decodes one complete line (for a transport that
//   already splits lines). ERROR events are returned as kError with the
//   metav1.Status in `object`; WatchErrorToStatus() maps it to a Status
//   (410 Gone / reason Expired -> Gone).
//
// Pure; not thread-safe (one decoder per stream).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "kube/client.h"

namespace kc::kube {

// "ADDED" -> kAdded etc.; false for an unknown type.
bool ParseWatchEventType(std::string_view s, WatchEvent::Type* type);
std::string_view WatchEventTypeName(WatchEvent::Type type);

StatusOr<WatchEvent> DecodeWatchLine(std::string_view line);

// The Status an ERROR event stands for: code 410 (or reason "Expired" /
// "Gone") -> Gone, 5xx / reason "Timeout" -> Unavailable, anything else ->
// Unknown; the message is the server's.
Status WatchErrorToStatus(const Json& status);

class WatchDecoder {
 public:
  Status Feed(std::string_view chunk, std::vector<WatchEvent>* out);
  Status Finish(std::vector<WatchEvent>* out);
  // Bytes of an incomplete line waiting for more input.
  size_t buffered() const { return partial_.size(); }

 private:
  Status DecodeOne(std::string_view line, std::vector<WatchEvent>* out);

  std::string partial_;
  int64_t line_number_ = 0;
};

}  // namespace kc::kube
