// RFC 6902 JSON Patch: the difference between two JSON documents as a
// list of add/remove/replace operations, and applying such a list. Paths
// are RFC 6901 JSON Pointers ("~" is written "~0", "/" is "~1", so the
// annotation key kernelcache.io/injected is "/metadata/annotations/
// kernelcache.io~1injected").
//
// Diff(a, b) is exact: Apply(a, Diff(a, b)) == b for every pair. Arrays
// keep their common prefix and suffix; a middle of equal length is
// diffed element by element, any other middle is removed and re-added, so
// inserting one element at the front of a list is one "add" at index 0.
// Pure, total: nothing throws.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "base/status.h"

namespace kc::webhook {

using Json = nlohmann::json;

// One reference token of a JSON Pointer, escaped ("a/b~c" -> "a~1b~0c").
std::string EscapePointerToken(std::string_view token);
// The inverse; InvalidArgument for "~" not followed by 0 or 1.
StatusOr<std::string> UnescapePointerToken(std::string_view token);

// The patch (a JSON array, empty when a == b) turning `from` into `to`.
Json Diff(const Json& from, const Json& to);

// Applies `patch` (add, remove, replace, test; RFC 6902 semantics) to a
// copy of `doc`. InvalidArgument naming the operation for a malformed
// patch, a missing path or a failed test.
StatusOr<Json> ApplyPatch(const Json& doc, const Json& patch);

}  // namespace kc::webhook
