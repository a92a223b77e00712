#include "operator/controller/node_index.h"

#include <mutex>
#include <utility>

#include "operator/decide/eligibility.h"
#include "operator/decide/views.h"

namespace kc::op {

void NodeIndex::Upsert(const Json& node) { Upsert(NodeViewFromJson(node)); }

void NodeIndex::Upsert(NodeView node) {
  std::unique_lock<std::shared_mutex> l(mu_);
  auto it = nodes_.find(node.name);
  if (it != nodes_.end()) {
    UnindexLocked(it->first, it->second);
    it->second = std::move(node);
  } else {
    std::string name = node.name;
    it = nodes_.emplace(std::move(name), std::move(node)).first;
  }
  IndexLocked(it->first, it->second);
}

std::optional<NodeView> NodeIndex::Remove(const std::string& name) {
  std::unique_lock<std::shared_mutex> l(mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return std::nullopt;
  UnindexLocked(it->first, it->second);
  NodeView removed = std::move(it->second);
  nodes_.erase(it);
  return removed;
}

void NodeIndex::IndexLocked(const std::string& name, const NodeView& node) {
  for (auto& [key, values] : by_key_) {
    if (const std::string* v = node.labels.Find(key)) values[*v].insert(name);
  }
}

void NodeIndex::UnindexLocked(const std::string& name, const NodeView& node) {
  for (auto& [key, values] : by_key_) {
    const std::string* v = node.labels.Find(key);
    if (v == nullptr) continue;
    auto it = values.find(*v);
    if (it == values.end()) continue;
    it->second.erase(name);
    if (it->second.empty()) values.erase(it);
  }
}

void NodeIndex::EnsureIndexed(const std::string& key) const {
  {
    std::shared_lock<std::shared_mutex> l(mu_);
    if (by_key_.count(key) != 0 || by_key_.size() >= kMaxIndexedKeys) return;
  }
  std::unique_lock<std::shared_mutex> l(mu_);
  if (by_key_.count(key) != 0 || by_key_.size() >= kMaxIndexedKeys) return;
  ValueIndex& values = by_key_[key];
  for (const auto& [name, node] : nodes_) {
    if (const std::string* v = node.labels.Find(key)) values[*v].insert(name);
  }
}

std::optional<NodeView> NodeIndex::Get(const std::string& name) const {
  std::shared_lock<std::shared_mutex> l(mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return std::nullopt;
  return it->second;
}

std::vector<NodeView> NodeIndex::Selected(
    const std::map<std::string, std::string>& selector) const {
  for (const auto& [k, v] : selector) EnsureIndexed(k);
  std::shared_lock<std::shared_mutex> l(mu_);
  std::vector<NodeView> out;
  const std::set<std::string_view>* rarest = nullptr;
  for (const auto& [k, v] : selector) {
    auto key = by_key_.find(k);
    if (key == by_key_.end()) continue;  // not indexed (the index is full): filtered below
    auto it = key->second.find(v);
    if (it == key->second.end()) return out;  // no node carries this pair
    if (rarest == nullptr || it->second.size() < rarest->size()) rarest = &it->second;
  }
  if (rarest == nullptr) {
    out.reserve(nodes_.size());
    for (const auto& [name, node] : nodes_) {
      if (NodeSelectorMatches(selector, node.labels)) out.push_back(node);
    }
    return out;
  }
  out.reserve(rarest->size());
  for (std::string_view name : *rarest) {
    const NodeView& node = nodes_.find(name)->second;
    if (NodeSelectorMatches(selector, node.labels)) out.push_back(node);
  }
  return out;
}

size_t NodeIndex::size() const {
  std::shared_lock<std::shared_mutex> l(mu_);
  return nodes_.size();
}

size_t NodeIndex::indexed_keys() const {
  std::shared_lock<std::shared_mutex> l(mu_);
  return by_key_.size();
}

}  // namespace kc::op
