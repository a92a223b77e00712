// UTF-8 safe truncation of messages (Events, conditions, failure summaries).
//
// A cut in the middle of a multi-byte character leaves invalid UTF-8, which
// nlohmann::json refuses to serialise (type_error 316): one user's
// termination message could then stop every status write. Cut here instead.
// Pure.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace kc {

// `s` when it has at most `max_bytes` bytes; otherwise its longest prefix
// that ends on a character boundary and leaves room for "...", plus "...".
// The result never exceeds max_bytes (for max_bytes >= 3).
std::string TruncateUtf8(std::string_view s, size_t max_bytes);

// Whether `s` is well-formed UTF-8 (no overlong forms, no surrogates, at most
// U+10FFFF): what nlohmann::json can serialise without replacing bytes.
bool IsValidUtf8(std::string_view s);

}  // namespace kc
