// JsonBounds: a linear scan of JSON text that refuses, before any parse,
// text whose parse would cost more than its reader allows: more bytes,
// deeper nesting or more values (objects, arrays, strings, numbers,
// literals; object keys count as values) than the bounds. It keeps no more
// than a few counters, so a hostile file costs a read and a scan, never a
// tree. It does not check that the text is JSON: the parser that follows
// does. Pure.
#pragma once

#include <cstddef>
#include <string_view>

#include "base/status.h"

namespace kc::core {

struct JsonBounds {
  std::size_t max_bytes = 0;
  int max_depth = 0;
  std::size_t max_values = 0;
};

// InvalidArgument "<what>: ..." naming the bound exceeded.
Status CheckJsonBounds(std::string_view text, const JsonBounds& bounds, std::string_view what);

}  // namespace kc::core
