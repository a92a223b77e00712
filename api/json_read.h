// The one set of tolerant JSON readers (Kubernetes objects, the KernelCache
// resource, the admission webhook).
//
// Two faces over one implementation:
// - Error-reporting readers (ReadString, ReadInt, ...): `path` names the
//   object `j` ("spec.warmup"); a field of the wrong type leaves `*out` as
//   it was and appends "path.key: what" to `errors` (when non-null).
// - Silent readers (Read, ReadList, Field, Object): the same with no error
//   sink; a missing or mistyped field leaves the default in place.
// A JSON null is treated as absent. Nothing throws.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/time.h"

namespace kc::api {

using Json = nlohmann::json;
using FieldErrors = std::vector<std::string>;

// Appends "path: what" to errors (when non-null).
void AddFieldError(FieldErrors* errors, const std::string& path, const std::string& what);
// "path.key" ("key" when path is empty).
std::string JoinPath(const std::string& path, std::string_view key);

// The field `key` of object `j` (which may be null); nullptr when `j` is not
// an object or the field is missing.
const Json* Field(const Json& j, std::string_view key);

void ReadString(const Json& j, std::string_view key, const std::string& path, FieldErrors* errors,
                std::string* out);
// A whole number that fits [min, max]: a float, a string or a value out of
// range is an error, not a silent truncation. True when *out was set.
bool ReadInteger(const Json& j, std::string_view key, const std::string& path, FieldErrors* errors,
                 int64_t min, int64_t max, int64_t* out);
template <typename Int>
void ReadInt(const Json& j, std::string_view key, const std::string& path, FieldErrors* errors,
             Int* out) {
  static_assert(std::numeric_limits<Int>::is_signed && sizeof(Int) <= sizeof(int64_t));
  int64_t v = 0;
  if (ReadInteger(j, key, path, errors, std::numeric_limits<Int>::min(),
                  std::numeric_limits<Int>::max(), &v)) {
    *out = static_cast<Int>(v);
  }
}
void ReadBool(const Json& j, std::string_view key, const std::string& path, FieldErrors* errors,
              bool* out);
// Replaces *out; items that are not strings are reported and skipped.
void ReadStringList(const Json& j, std::string_view key, const std::string& path,
                    FieldErrors* errors, std::vector<std::string>* out);
// Replaces *out; values that are not strings are reported and skipped, except
// that with `numbers_as_text` a number becomes its text (quantities such as
// capacity "cpu": 8).
void ReadStringMap(const Json& j, std::string_view key, const std::string& path,
                   FieldErrors* errors, std::map<std::string, std::string>* out,
                   bool numbers_as_text = false);
// Replaces *out; items that are not objects are reported and skipped.
void ReadObjectList(const Json& j, std::string_view key, const std::string& path,
                    FieldErrors* errors, std::vector<Json>* out);
// An RFC 3339 time (api/time.h); malformed is an error and leaves *out.
void ReadTime(const Json& j, std::string_view key, const std::string& path, FieldErrors* errors,
              std::optional<Time>* out);
// The object at `key`, or an empty object (reported when present and not one).
const Json& ReadObject(const Json& j, std::string_view key, const std::string& path,
                       FieldErrors* errors);

// Silent readers.
inline void Read(const Json& j, std::string_view key, std::string* out) {
  ReadString(j, key, "", nullptr, out);
}
inline void Read(const Json& j, std::string_view key, int64_t* out) {
  ReadInt(j, key, "", nullptr, out);
}
inline void Read(const Json& j, std::string_view key, int* out) {
  ReadInt(j, key, "", nullptr, out);
}
inline void Read(const Json& j, std::string_view key, bool* out) {
  ReadBool(j, key, "", nullptr, out);
}
// A map of strings; quantities (which may be numbers) become their text.
inline void Read(const Json& j, std::string_view key, std::map<std::string, std::string>* out) {
  ReadStringMap(j, key, "", nullptr, out, /*numbers_as_text=*/true);
}
inline void Read(const Json& j, std::string_view key, std::vector<std::string>* out) {
  ReadStringList(j, key, "", nullptr, out);
}
inline void Read(const Json& j, std::string_view key, std::optional<Time>* out) {
  ReadTime(j, key, "", nullptr, out);
}
inline const Json& Object(const Json& j, std::string_view key) {
  return ReadObject(j, key, "", nullptr);
}
// A list of objects, each decoded by `decode(const Json&, T*)`; items that
// are not objects are skipped.
template <typename T, typename F>
void ReadList(const Json& j, std::string_view key, std::vector<T>* out, F decode) {
  const Json* v = Field(j, key);
  if (v == nullptr || !v->is_array()) return;  // null too
  for (const auto& item : *v) {
    if (!item.is_object()) continue;
    T t;
    decode(item, &t);
    out->push_back(std::move(t));
  }
}

}  // namespace kc::api
