#include "operator/webhook/json_patch.h"

#include <algorithm>
#include <vector>

namespace kc::webhook {
namespace {

void DiffInto(const Json& from, const Json& to, const std::string& path, Json* ops) {
  if (from == to) return;
  if (from.is_object() && to.is_object()) {
    for (const auto& [key, value] : from.items()) {
      if (!to.contains(key)) {
        ops->push_back({{"op", "remove"}, {"path", path + "/" + EscapePointerToken(key)}});
      }
    }
    for (const auto& [key, value] : to.items()) {
      const std::string child = path + "/" + EscapePointerToken(key);
      auto it = from.find(key);
      if (it == from.end()) {
        ops->push_back({{"op", "add"}, {"path", child}, {"value", value}});
      } else {
        DiffInto(*it, value, child, ops);
      }
    }
    return;
  }
  if (from.is_array() && to.is_array()) {
    const size_t n = from.size(), m = to.size();
    size_t prefix = 0;
    while (prefix < n && prefix < m && from[prefix] == to[prefix]) ++prefix;
    size_t suffix = 0;
    while (suffix < n - prefix && suffix < m - prefix &&
           from[n - 1 - suffix] == to[m - 1 - suffix]) {
      ++suffix;
    }
    const size_t from_mid = n - prefix - suffix, to_mid = m - prefix - suffix;
    if (from_mid == to_mid) {
      for (size_t i = prefix; i < prefix + from_mid; ++i) {
        DiffInto(from[i], to[i], path + "/" + std::to_string(i), ops);
      }
      return;
    }
    // Remove the old middle from its end (indices stay valid), then insert
    // the new one in order.
    for (size_t i = prefix + from_mid; i > prefix; --i) {
      ops->push_back({{"op", "remove"}, {"path", path + "/" + std::to_string(i - 1)}});
    }
    for (size_t i = prefix; i < prefix + to_mid; ++i) {
      ops->push_back({{"op", "add"}, {"path", path + "/" + std::to_string(i)}, {"value", to[i]}});
    }
    return;
  }
  ops->push_back({{"op", "replace"}, {"path", path}, {"value", to}});
}

// A JSON Pointer split into unescaped tokens.
StatusOr<std::vector<std::string>> ParsePointer(std::string_view pointer) {
  std::vector<std::string> tokens;
  if (pointer.empty()) return tokens;
  if (pointer.front() != '/') {
    return InvalidArgumentError("path \"" + std::string(pointer.substr(0, 200)) +
                                "\" must be empty or start with \"/\"");
  }
  size_t start = 1;
  while (true) {
    const size_t end = pointer.find('/', start);
    const std::string_view raw =
        pointer.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
    auto token = UnescapePointerToken(raw);
    if (!token.ok()) return token.status();
    tokens.push_back(std::move(*token));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return tokens;
}

// An array index token: "0" or digits without a leading zero, below `limit`
// (inclusive when `allow_end`); "-" means the end when `allow_end`.
StatusOr<size_t> ArrayIndex(const std::string& token, size_t size, bool allow_end) {
  if (allow_end && token == "-") return size;
  const bool digits =
      !token.empty() && token.size() <= 18 &&
      std::all_of(token.begin(), token.end(), [](char c) { return c >= '0' && c <= '9'; });
  if (!digits || (token.size() > 1 && token[0] == '0')) {
    return InvalidArgumentError("\"" + token.substr(0, 64) + "\" is not an array index");
  }
  const size_t i = std::stoull(token);
  if (i > size || (i == size && !allow_end)) {
    return InvalidArgumentError("array index " + token + " is out of range (size " +
                                std::to_string(size) + ")");
  }
  return i;
}

// The parent container of the pointer's last token.
StatusOr<Json*> Parent(Json* doc, const std::vector<std::string>& tokens) {
  Json* cur = doc;
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    const std::string& t = tokens[i];
    if (cur->is_object()) {
      auto it = cur->find(t);
      if (it == cur->end()) return InvalidArgumentError("\"" + t.substr(0, 64) + "\" not found");
      cur = &*it;
    } else if (cur->is_array()) {
      auto idx = ArrayIndex(t, cur->size(), false);
      if (!idx.ok()) return idx.status();
      cur = &(*cur)[*idx];
    } else {
      return InvalidArgumentError("\"" + t.substr(0, 64) + "\" is inside a scalar");
    }
  }
  return cur;
}

Status ApplyOne(Json* doc, const Json& op) {
  if (!op.is_object()) return InvalidArgumentError("an operation must be an object");
  auto op_it = op.find("op");
  auto path_it = op.find("path");
  if (op_it == op.end() || !op_it->is_string()) {
    return InvalidArgumentError("an operation needs \"op\"");
  }
  if (path_it == op.end() || !path_it->is_string()) {
    return InvalidArgumentError("an operation needs \"path\"");
  }
  const std::string name = op_it->get<std::string>();
  const std::string path = path_it->get<std::string>();
  auto fail = [&](const Status& s) {
    return InvalidArgumentError(name + " " + path.substr(0, 200) + ": " + s.message());
  };
  auto value_it = op.find("value");
  const bool needs_value = name == "add" || name == "replace" || name == "test";
  if (needs_value && value_it == op.end()) return fail(InvalidArgumentError("needs \"value\""));
  if (name != "add" && name != "remove" && name != "replace" && name != "test") {
    return fail(InvalidArgumentError("unsupported operation"));
  }
  auto tokens = ParsePointer(path);
  if (!tokens.ok()) return fail(tokens.status());
  if (tokens->empty()) {  // the whole document
    if (name == "remove") return fail(InvalidArgumentError("cannot remove the document"));
    if (name == "test") {
      return *doc == *value_it ? OkStatus() : fail(InvalidArgumentError("test failed"));
    }
    *doc = *value_it;
    return OkStatus();
  }
  auto parent = Parent(doc, *tokens);
  if (!parent.ok()) return fail(parent.status());
  Json& p = **parent;
  const std::string& last = tokens->back();
  if (p.is_object()) {
    auto it = p.find(last);
    const bool exists = it != p.end();
    if (name == "add") {
      p[last] = *value_it;
    } else if (!exists) {
      return fail(InvalidArgumentError("\"" + last.substr(0, 64) + "\" not found"));
    } else if (name == "remove") {
      p.erase(it);
    } else if (name == "replace") {
      *it = *value_it;
    } else if (*it != *value_it) {
      return fail(InvalidArgumentError("test failed"));
    }
    return OkStatus();
  }
  if (p.is_array()) {
    auto idx = ArrayIndex(last, p.size(), name == "add");
    if (!idx.ok()) return fail(idx.status());
    if (name == "add") {
      p.insert(p.begin() + static_cast<std::ptrdiff_t>(*idx), *value_it);
    } else if (name == "remove") {
      p.erase(p.begin() + static_cast<std::ptrdiff_t>(*idx));
    } else if (name == "replace") {
      p[*idx] = *value_it;
    } else if (p[*idx] != *value_it) {
      return fail(InvalidArgumentError("test failed"));
    }
    return OkStatus();
  }
  return fail(InvalidArgumentError("the parent is a scalar"));
}

}  // namespace

std::string EscapePointerToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

StatusOr<std::string> UnescapePointerToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (size_t i = 0; i < token.size(); ++i) {
    if (token[i] != '~') {
      out += token[i];
      continue;
    }
    if (i + 1 < token.size() && (token[i + 1] == '0' || token[i + 1] == '1')) {
      out += token[i + 1] == '0' ? '~' : '/';
      ++i;
      continue;
    }
    return InvalidArgumentError("\"~\" must be followed by 0 or 1 in \"" +
                                std::string(token.substr(0, 64)) + "\"");
  }
  return out;
}

Json Diff(const Json& from, const Json& to) {
  Json ops = Json::array();
  DiffInto(from, to, "", &ops);
  return ops;
}

StatusOr<Json> ApplyPatch(const Json& doc, const Json& patch) {
  if (!patch.is_array()) return InvalidArgumentError("a JSON Patch must be an array");
  Json out = doc;
  for (size_t i = 0; i < patch.size(); ++i) {
    Status s = ApplyOne(&out, patch[i]);
    if (!s.ok()) {
      return InvalidArgumentError("operation " + std::to_string(i) + ": " + s.message());
    }
  }
  return out;
}

}  // namespace kc::webhook
