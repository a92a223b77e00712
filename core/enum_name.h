// The parse half of core's enum codecs: each enum has a constexpr name
// function and an array of all its values; ParseEnumName finds the value
// whose name equals `name` exactly, else InvalidArgument quoting it (cut to
// 64 bytes) and listing the names: "\"Link\" is not one of Copy, Shared,
// SharedReadWrite". Callers put the field or flag in front. Pure.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "base/status.h"

namespace kc::core {

template <typename E, typename NameOf>
StatusOr<E> ParseEnumName(std::string_view name, std::span<const E> all, NameOf name_of) {
  std::string list;
  for (E e : all) {
    if (name_of(e) == name) return e;
    if (!list.empty()) list += ", ";
    list += name_of(e);
  }
  return InvalidArgumentError("\"" + std::string(name.substr(0, 64)) + "\" is not one of " + list);
}

}  // namespace kc::core
