#include "operator/controller/node_index.h"

#include <mutex>
#include <utility>

#include "operator/decide/eligibility.h"
#include "operator/decide/views.h"

namespace kc::op {
namespace {

std::string Pair(const std::string& key, const std::string& value) { return key + "=" + value; }

}  // namespace

void NodeIndex::Upsert(const Json& node) { Upsert(NodeViewFromJson(node)); }

void NodeIndex::Upsert(NodeView node) {
  std::unique_lock<std::shared_mutex> l(mu_);
  auto it = nodes_.find(node.name);
  if (it != nodes_.end()) UnindexLocked(it->second);
  for (const auto& [k, v] : node.labels) by_label_[Pair(k, v)].insert(node.name);
  const std::string name = node.name;
  nodes_.insert_or_assign(name, std::move(node));
}

std::optional<NodeView> NodeIndex::Remove(const std::string& name) {
  std::unique_lock<std::shared_mutex> l(mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end()) return std::nullopt;
  UnindexLocked(it->second);
  NodeView removed = std::move(it->second);
  nodes_.erase(it);
  return removed;
}

void NodeIndex::UnindexLocked(const NodeView& node) {
  for (const auto& [k, v] : node.labels) {
    auto it = by_label_.find(Pair(k, v));
    if (it == by_label_.end()) continue;
    it->second.erase(node.name);
    if (it->second.empty()) by_label_.erase(it);
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
  std::shared_lock<std::shared_mutex> l(mu_);
  std::vector<NodeView> out;
  if (selector.empty()) {
    out.reserve(nodes_.size());
    for (const auto& [name, node] : nodes_) out.push_back(node);
    return out;
  }
  const std::set<std::string>* rarest = nullptr;
  for (const auto& [k, v] : selector) {
    auto it = by_label_.find(Pair(k, v));
    if (it == by_label_.end()) return out;  // no node carries this pair
    if (rarest == nullptr || it->second.size() < rarest->size()) rarest = &it->second;
  }
  for (const std::string& name : *rarest) {
    const NodeView& node = nodes_.at(name);
    if (NodeSelectorMatches(selector, node.labels)) out.push_back(node);
  }
  return out;
}

size_t NodeIndex::size() const {
  std::shared_lock<std::shared_mutex> l(mu_);
  return nodes_.size();
}

}  // namespace kc::op
