// Tolerant JSON readers (kube/types views, the admission webhook): a
// missing field, or one of an unexpected type, leaves the default in place.
// Nothing throws. Header-only; users link nlohmann_json themselves.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kc::json_get {

using Json = nlohmann::json;

inline const Json* Field(const Json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

inline void Read(const Json& j, const char* key, std::string* out) {
  const Json* v = Field(j, key);
  if (v != nullptr && v->is_string()) *out = v->get<std::string>();
}

inline void Read(const Json& j, const char* key, int64_t* out) {
  const Json* v = Field(j, key);
  if (v != nullptr && v->is_number_integer()) *out = v->get<int64_t>();
}

inline void Read(const Json& j, const char* key, int* out) {
  const Json* v = Field(j, key);
  if (v == nullptr || !v->is_number_integer()) return;
  if (v->is_number_unsigned()) {
    if (v->get<uint64_t>() <= static_cast<uint64_t>(INT32_MAX)) *out = v->get<int>();
  } else if (v->get<int64_t>() >= INT32_MIN && v->get<int64_t>() <= INT32_MAX) {
    *out = v->get<int>();  // out of int range: the default stays, as for a wrong type
  }
}

inline void Read(const Json& j, const char* key, bool* out) {
  const Json* v = Field(j, key);
  if (v != nullptr && v->is_boolean()) *out = v->get<bool>();
}

// A map of strings; quantities (which may be numbers) become their text.
inline void Read(const Json& j, const char* key, std::map<std::string, std::string>* out) {
  const Json* v = Field(j, key);
  if (v == nullptr || !v->is_object()) return;
  for (const auto& [k, val] : v->items()) {
    if (val.is_string()) {
      (*out)[k] = val.get<std::string>();
    } else if (val.is_number()) {
      (*out)[k] = val.dump();
    }
  }
}

inline void Read(const Json& j, const char* key, std::vector<std::string>* out) {
  const Json* v = Field(j, key);
  if (v == nullptr || !v->is_array()) return;
  for (const auto& s : *v) {
    if (s.is_string()) out->push_back(s.get<std::string>());
  }
}

// A list of objects, each decoded by `decode(const Json&, T*)`.
template <typename T, typename F>
void ReadList(const Json& j, const char* key, std::vector<T>* out, F decode) {
  const Json* v = Field(j, key);
  if (v == nullptr || !v->is_array()) return;
  for (const auto& item : *v) {
    if (!item.is_object()) continue;
    T t;
    decode(item, &t);
    out->push_back(std::move(t));
  }
}

inline const Json& Object(const Json& j, const char* key) {
  static const Json kEmpty = Json::object();
  const Json* v = Field(j, key);
  return (v != nullptr && v->is_object()) ? *v : kEmpty;
}

}  // namespace kc::json_get
