// NodeIndex: the nodes as the reconciler reads them (NodeView, parsed once
// per node event, not once per reconcile), the one copy of each node in the
// operator, with an index of the label keys KernelCaches select on, so a
// nodeSelector finds its nodes without walking the whole fleet.
//
// - Upsert(node JSON | NodeView) replaces the node of that name; Remove(name)
//   drops it and returns it. The controller's Node informer handler calls them before it
//   enqueues the KernelCaches the event concerns, so a reconcile that
//   follows sees the new state.
// - Selected(selector): the nodes whose labels hold every key=value pair of
//   `selector` (all nodes for an empty one), in name order. It walks only the
//   nodes carrying the selector's rarest pair.
// - Get(name): one node.
//
// Compact: a NodeView's labels are an interned, shared LabelSet (a copy
// handed to a pass is a reference count, not 27 strings), and only the label
// keys some selector asked for are indexed (the first Selected() naming a
// key indexes it; at most kMaxIndexedKeys keys, further ones are filtered),
// not every key=value of every node.
// Thread-safe (readers share a lock).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <vector>

#include "operator/decide/types.h"

namespace kc::op {

class NodeIndex {
 public:
  static constexpr size_t kMaxIndexedKeys = 32;

  void Upsert(const Json& node);
  void Upsert(NodeView node);
  // The node removed, if there was one.
  std::optional<NodeView> Remove(const std::string& name);

  std::optional<NodeView> Get(const std::string& name) const;
  std::vector<NodeView> Selected(const std::map<std::string, std::string>& selector) const;
  size_t size() const;
  // Label keys indexed now (for tests).
  size_t indexed_keys() const;

 private:
  // value -> names of the nodes carrying key=value (views into nodes_' keys).
  using ValueIndex = std::map<std::string, std::set<std::string_view>, std::less<>>;

  void IndexLocked(const std::string& name, const NodeView& node);
  void UnindexLocked(const std::string& name, const NodeView& node);
  // Indexes `key` over every node unless it is already (or the index is full).
  void EnsureIndexed(const std::string& key) const;

  mutable std::shared_mutex mu_;
  std::map<std::string, NodeView, std::less<>> nodes_;  // by name
  mutable std::map<std::string, ValueIndex, std::less<>> by_key_;
};

}  // namespace kc::op
