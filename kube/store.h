// Store: the informer's thread-safe local cache of objects, with indexes.
//
// Contract:
// - Objects are keyed by ObjectKey(): "<namespace>/<name>", or "<name>" for
//   cluster-scoped objects (client-go's MetaNamespaceKeyFunc).
// - Indexes map an object to zero or more index values; ByIndex(name, value)
//   returns the objects with that value. Built in: kNamespaceIndex (the
//   namespace), kLabelIndex ("key=value" per label), kOwnerIndex (the uid of
//   each ownerReference). AddIndex() adds a custom one (also over the objects
//   already stored); adding an existing name is InvalidArgument.
// - Reads return copies; Upsert/Remove (used by the informer) return the
//   previous object, if any.
// - StoreOptions::label_keys: kLabelIndex indexes only these label keys
//   (empty: every label). An index entry costs about as much as a packed
//   object's labels, and a controller looks objects up by one or two keys;
//   ByIndex(kLabelIndex, "k=v") for a key not indexed scans the objects, so
//   it is slower, never wrong.
// - Objects are held packed (CBOR): a parsed nlohmann::json tree costs several
//   times its encoded bytes (a map node, a key string and a 16-byte value per
//   field), and an operator's stores hold thousands of Jobs and pods that a
//   pass reads a few of. A read unpacks its copy (bench/operator/store_bench:
//   bytes per object and the cost of a read, packed beside tree).
//
// Thread-safe (readers share a lock).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <vector>

#include "base/status.h"
#include "kube/client.h"

namespace kc::kube {

using IndexFunc = std::function<std::vector<std::string>(const Json& object)>;

inline constexpr char kNamespaceIndex[] = "namespace";
inline constexpr char kLabelIndex[] = "label";
inline constexpr char kOwnerIndex[] = "owner";

std::string ObjectKey(const Json& object);
std::string ObjectResourceVersion(const Json& object);
std::vector<std::string> NamespaceIndexFunc(const Json& object);
std::vector<std::string> LabelIndexFunc(const Json& object);
std::vector<std::string> OwnerUidIndexFunc(const Json& object);

// The store's encoding of an object (CBOR) and back. UnpackObject of bytes
// PackObject did not make: a discarded Json, never an exception.
std::string PackObject(const Json& object);
Json UnpackObject(const std::string& packed);

struct StoreOptions {
  std::vector<std::string> label_keys;  // empty: every label key
};

class Store {
 public:
  explicit Store(StoreOptions options = {});

  Status AddIndex(const std::string& name, IndexFunc fn);

  std::optional<Json> Get(const std::string& key) const;
  std::vector<Json> List() const;
  std::vector<std::string> ListKeys() const;
  size_t size() const;
  // Objects whose index `name` yields `value`, in key order. Unknown index:
  // empty.
  std::vector<Json> ByIndex(const std::string& name, const std::string& value) const;
  std::vector<std::string> IndexValues(const std::string& name) const;

  std::optional<Json> Upsert(const Json& object);
  std::optional<Json> Remove(const std::string& key);

 private:
  void IndexLocked(const std::string& key, const Json& object);
  void UnindexLocked(const std::string& key, const Json& object);

  // True when kLabelIndex's `value` ("key=value") is served by the index.
  bool LabelIndexed(const std::string& value) const;

  const StoreOptions options_;
  mutable std::shared_mutex mu_;
  std::map<std::string, std::string> items_;  // key -> PackObject(object)
  std::map<std::string, IndexFunc> indexers_;
  // index name -> index value -> keys
  std::map<std::string, std::map<std::string, std::set<std::string>>> indices_;
};

}  // namespace kc::kube
