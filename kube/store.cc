#include "kube/store.h"

#include <algorithm>
#include <mutex>
#include <string>
#include <utility>

#include "api/json_read.h"
#include "api/meta.h"

namespace kc::kube {
using api::MetaString;

std::string ObjectKey(const Json& object) {
  const std::string ns = MetaString(object, "namespace");
  const std::string name = MetaString(object, "name");
  return ns.empty() ? name : ns + "/" + name;
}

std::string ObjectResourceVersion(const Json& object) {
  return MetaString(object, "resourceVersion");
}

std::vector<std::string> NamespaceIndexFunc(const Json& object) {
  return {MetaString(object, "namespace")};
}

std::vector<std::string> LabelIndexFunc(const Json& object) {
  std::vector<std::string> out;
  const Json* labels = api::Field(api::Object(object, "metadata"), "labels");
  if (labels == nullptr || !labels->is_object()) return out;
  for (const auto& [k, v] : labels->items()) {
    if (v.is_string()) out.push_back(k + "=" + v.get<std::string>());
  }
  return out;
}

std::vector<std::string> OwnerUidIndexFunc(const Json& object) {
  std::vector<std::string> out;
  api::ReadList(api::Object(object, "metadata"), "ownerReferences", &out,
                [](const Json& ref, std::string* uid) { api::Read(ref, "uid", uid); });
  std::erase(out, std::string());
  return out;
}

std::string PackObject(const Json& object) {
  std::string out;
  Json::to_cbor(object, nlohmann::detail::output_adapter<char>(out));
  out.shrink_to_fit();
  return out;
}

Json UnpackObject(const std::string& packed) {
  return Json::from_cbor(packed, /*strict=*/true, /*allow_exceptions=*/false);
}

Store::Store(StoreOptions options) : options_(std::move(options)) {
  indexers_[kNamespaceIndex] = NamespaceIndexFunc;
  if (options_.label_keys.empty()) {
    indexers_[kLabelIndex] = LabelIndexFunc;
  } else {
    indexers_[kLabelIndex] = [keys = options_.label_keys](const Json& object) {
      std::vector<std::string> out;
      const Json* labels = api::Field(api::Object(object, "metadata"), "labels");
      if (labels == nullptr || !labels->is_object()) return out;
      for (const std::string& k : keys) {
        auto v = labels->find(k);
        if (v != labels->end() && v->is_string()) out.push_back(k + "=" + v->get<std::string>());
      }
      return out;
    };
  }
  indexers_[kOwnerIndex] = OwnerUidIndexFunc;
}

Status Store::AddIndex(const std::string& name, IndexFunc fn) {
  std::unique_lock<std::shared_mutex> l(mu_);
  if (indexers_.count(name) != 0) {
    return InvalidArgumentError("index \"" + name + "\" already exists; pick another name");
  }
  if (!fn) return InvalidArgumentError("index \"" + name + "\" has no function");
  auto& index = indices_[name];
  for (const auto& [key, packed] : items_) {
    for (const std::string& v : fn(UnpackObject(packed))) index[v].insert(key);
  }
  indexers_[name] = std::move(fn);
  return OkStatus();
}

void Store::IndexLocked(const std::string& key, const Json& object) {
  for (const auto& [name, fn] : indexers_) {
    auto& index = indices_[name];
    for (const std::string& v : fn(object)) index[v].insert(key);
  }
}

void Store::UnindexLocked(const std::string& key, const Json& object) {
  for (const auto& [name, fn] : indexers_) {
    auto& index = indices_[name];
    for (const std::string& v : fn(object)) {
      auto it = index.find(v);
      if (it == index.end()) continue;
      it->second.erase(key);
      if (it->second.empty()) index.erase(it);
    }
  }
}

std::optional<Json> Store::Get(const std::string& key) const {
  std::shared_lock<std::shared_mutex> l(mu_);
  auto it = items_.find(key);
  if (it == items_.end()) return std::nullopt;
  return UnpackObject(it->second);
}

std::vector<Json> Store::List() const {
  std::shared_lock<std::shared_mutex> l(mu_);
  std::vector<Json> out;
  out.reserve(items_.size());
  for (const auto& [key, packed] : items_) out.push_back(UnpackObject(packed));
  return out;
}

std::vector<std::string> Store::ListKeys() const {
  std::shared_lock<std::shared_mutex> l(mu_);
  std::vector<std::string> out;
  out.reserve(items_.size());
  for (const auto& [key, packed] : items_) out.push_back(key);
  return out;
}

size_t Store::size() const {
  std::shared_lock<std::shared_mutex> l(mu_);
  return items_.size();
}

bool Store::LabelIndexed(const std::string& value) const {
  if (options_.label_keys.empty()) return true;
  const std::string key = value.substr(0, value.find('='));
  return std::find(options_.label_keys.begin(), options_.label_keys.end(), key) !=
         options_.label_keys.end();
}

std::vector<Json> Store::ByIndex(const std::string& name, const std::string& value) const {
  std::shared_lock<std::shared_mutex> l(mu_);
  std::vector<Json> out;
  if (name == kLabelIndex && !LabelIndexed(value)) {
    for (const auto& [key, packed] : items_) {
      Json object = UnpackObject(packed);
      const std::vector<std::string> values = LabelIndexFunc(object);
      if (std::find(values.begin(), values.end(), value) != values.end()) {
        out.push_back(std::move(object));
      }
    }
    return out;
  }
  auto index = indices_.find(name);
  if (index == indices_.end()) return out;
  auto keys = index->second.find(value);
  if (keys == index->second.end()) return out;
  out.reserve(keys->second.size());
  for (const std::string& key : keys->second) out.push_back(UnpackObject(items_.at(key)));
  return out;
}

std::vector<std::string> Store::IndexValues(const std::string& name) const {
  std::shared_lock<std::shared_mutex> l(mu_);
  std::vector<std::string> out;
  auto index = indices_.find(name);
  if (index == indices_.end()) return out;
  for (const auto& [value, keys] : index->second) out.push_back(value);
  return out;
}

std::optional<Json> Store::Upsert(const Json& object) {
  const std::string key = ObjectKey(object);
  std::string packed = PackObject(object);
  std::unique_lock<std::shared_mutex> l(mu_);
  std::optional<Json> previous;
  auto it = items_.find(key);
  if (it != items_.end()) {
    previous = UnpackObject(it->second);
    UnindexLocked(key, *previous);
    it->second = std::move(packed);
  } else {
    items_.emplace(key, std::move(packed));
  }
  IndexLocked(key, object);
  return previous;
}

std::optional<Json> Store::Remove(const std::string& key) {
  std::unique_lock<std::shared_mutex> l(mu_);
  auto it = items_.find(key);
  if (it == items_.end()) return std::nullopt;
  Json previous = UnpackObject(it->second);
  items_.erase(it);
  UnindexLocked(key, previous);
  return previous;
}

}  // namespace kc::kube
