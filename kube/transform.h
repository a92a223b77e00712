// Object transforms: what an informer keeps of each object it lists or
// watches (client-go's SharedIndexInformer.SetTransform). A controller that
// reads a few fields need not hold whole objects: a Node's managedFields
// alone are more than half of its bytes.
//
//   using ObjectTransform = std::function<Json(const Json& object)>;
//
// Contract of a transform: it returns the object to cache and hand to the
// event handlers in place of `object`. It must keep metadata.name,
// metadata.namespace and metadata.resourceVersion (the store's key and the
// informer's resume point) and whatever the store's indexes read (labels,
// ownerReferences); it must not throw. It never sees bookmarks or ERROR
// events.
//
// - Project(object, mask): a copy of `object` with only the fields `mask`
//   names. `mask` is a JSON object: "field": true keeps that field whole;
//   "field": {nested mask} keeps the field with the nested mask applied to
//   it, or, when the field is an array, applied to each element that is an
//   object (other elements are kept as they are). A field of the mask that
//   the object lacks stays absent; a non-object `object` is returned as is.
// - WithoutManagedFields(object): a copy without metadata.managedFields.
// Pure.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>

namespace kc::kube {

using ObjectTransform = std::function<nlohmann::json(const nlohmann::json& object)>;

nlohmann::json Project(const nlohmann::json& object, const nlohmann::json& mask);
nlohmann::json WithoutManagedFields(const nlohmann::json& object);

}  // namespace kc::kube
