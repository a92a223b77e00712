#include "api/json_read.h"

namespace kc::api {

void AddFieldError(FieldErrors* errors, const std::string& path, const std::string& what) {
  if (errors != nullptr) errors->push_back(path + ": " + what);
}

std::string JoinPath(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

const Json* Field(const Json& j, std::string_view key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  return it == j.end() ? nullptr : &*it;
}

namespace {

// The field, unless it is missing or null (both mean "absent").
const Json* Present(const Json& j, std::string_view key) {
  const Json* v = Field(j, key);
  return v == nullptr || v->is_null() ? nullptr : v;
}

}  // namespace

void ReadString(const Json& j, std::string_view key, const std::string& path, FieldErrors* errors,
                std::string* out) {
  const Json* v = Present(j, key);
  if (v == nullptr) return;
  if (!v->is_string()) return AddFieldError(errors, JoinPath(path, key), "expected a string");
  *out = v->get<std::string>();
}

bool ReadInteger(const Json& j, std::string_view key, const std::string& path, FieldErrors* errors,
                 int64_t min, int64_t max, int64_t* out) {
  const Json* v = Present(j, key);
  if (v == nullptr) return false;
  if (!v->is_number_integer()) {
    AddFieldError(errors, JoinPath(path, key), "expected an integer");
    return false;
  }
  const std::string range = " is out of range " + std::to_string(min) + ".." + std::to_string(max);
  if (v->is_number_unsigned()) {
    const uint64_t u = v->get<uint64_t>();
    if (u > static_cast<uint64_t>(max)) {
      AddFieldError(errors, JoinPath(path, key), std::to_string(u) + range);
      return false;
    }
    *out = static_cast<int64_t>(u);
    return true;
  }
  const int64_t i = v->get<int64_t>();
  if (i < min || i > max) {
    AddFieldError(errors, JoinPath(path, key), std::to_string(i) + range);
    return false;
  }
  *out = i;
  return true;
}

void ReadBool(const Json& j, std::string_view key, const std::string& path, FieldErrors* errors,
              bool* out) {
  const Json* v = Present(j, key);
  if (v == nullptr) return;
  if (!v->is_boolean()) return AddFieldError(errors, JoinPath(path, key), "expected true or false");
  *out = v->get<bool>();
}

void ReadStringList(const Json& j, std::string_view key, const std::string& path,
                    FieldErrors* errors, std::vector<std::string>* out) {
  const Json* v = Present(j, key);
  if (v == nullptr) return;
  const std::string p = JoinPath(path, key);
  if (!v->is_array()) return AddFieldError(errors, p, "expected a list of strings");
  out->clear();
  for (size_t i = 0; i < v->size(); ++i) {
    const Json& s = (*v)[i];
    if (!s.is_string()) {
      AddFieldError(errors, p + "[" + std::to_string(i) + "]", "expected a string");
      continue;
    }
    out->push_back(s.get<std::string>());
  }
}

void ReadStringMap(const Json& j, std::string_view key, const std::string& path,
                   FieldErrors* errors, std::map<std::string, std::string>* out,
                   bool numbers_as_text) {
  const Json* v = Present(j, key);
  if (v == nullptr) return;
  const std::string p = JoinPath(path, key);
  if (!v->is_object()) return AddFieldError(errors, p, "expected a map of strings");
  out->clear();
  for (const auto& [k, val] : v->items()) {
    if (val.is_string()) {
      (*out)[k] = val.get<std::string>();
    } else if (numbers_as_text && val.is_number()) {
      (*out)[k] = val.dump();
    } else {
      AddFieldError(errors, p + "." + k, "expected a string (quote numbers and booleans)");
    }
  }
}

void ReadObjectList(const Json& j, std::string_view key, const std::string& path,
                    FieldErrors* errors, std::vector<Json>* out) {
  const Json* v = Present(j, key);
  if (v == nullptr) return;
  const std::string p = JoinPath(path, key);
  if (!v->is_array()) return AddFieldError(errors, p, "expected a list of objects");
  out->clear();
  for (size_t i = 0; i < v->size(); ++i) {
    if (!(*v)[i].is_object()) {
      AddFieldError(errors, p + "[" + std::to_string(i) + "]", "expected an object");
      continue;
    }
    out->push_back((*v)[i]);
  }
}

void ReadTime(const Json& j, std::string_view key, const std::string& path, FieldErrors* errors,
              std::optional<Time>* out) {
  const Json* v = Present(j, key);
  if (v == nullptr) return;
  if (!v->is_string())
    return AddFieldError(errors, JoinPath(path, key), "expected an RFC 3339 time");
  auto t = ParseTime(v->get<std::string>());
  if (!t.ok()) return AddFieldError(errors, JoinPath(path, key), t.status().message());
  *out = *t;
}

const Json& ReadObject(const Json& j, std::string_view key, const std::string& path,
                       FieldErrors* errors) {
  static const Json kEmpty = Json::object();
  const Json* v = Present(j, key);
  if (v == nullptr) return kEmpty;
  if (!v->is_object()) {
    AddFieldError(errors, JoinPath(path, key), "expected an object");
    return kEmpty;
  }
  return *v;
}

}  // namespace kc::api
