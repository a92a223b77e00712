// NodeIndex: the nodes as the reconciler reads them (NodeView, parsed once
// per node event, not once per reconcile) with an inverted index of their
// labels, so a KernelCache's nodeSelector finds its nodes without walking
// and re-parsing the whole fleet.
//
// - Upsert(node JSON | NodeView) replaces the node of that name; Remove(name)
//   drops it and returns it. The controller's Node informer handler calls them before it
//   enqueues the KernelCaches the event concerns, so a reconcile that
//   follows sees the new state.
// - Selected(selector): the nodes whose labels hold every key=value pair of
//   `selector` (all nodes for an empty one), in name order. It walks only the
//   nodes carrying the selector's rarest pair.
// - Get(name): one node.
// Thread-safe (readers share a lock).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <vector>

#include "operator/decide/types.h"

namespace kc::op {

class NodeIndex {
 public:
  void Upsert(const Json& node);
  void Upsert(NodeView node);
  // The node removed, if there was one.
  std::optional<NodeView> Remove(const std::string& name);

  std::optional<NodeView> Get(const std::string& name) const;
  std::vector<NodeView> Selected(const std::map<std::string, std::string>& selector) const;
  size_t size() const;

 private:
  void UnindexLocked(const NodeView& node);

  mutable std::shared_mutex mu_;
  std::map<std::string, NodeView> nodes_;                  // by name
  std::map<std::string, std::set<std::string>> by_label_;  // "key=value" -> names
};

}  // namespace kc::op
