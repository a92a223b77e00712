#include <utility>

#include "kube/client.h"

namespace kc::kube {

StatusOr<std::string> ListEach(Client& client, const Resource& r, const std::string& ns,
                               ListOptions options, const ObjectTransform& transform,
                               const std::function<void(Json&& item)>& each) {
  std::string resource_version;
  options.continue_token.clear();
  options.item_transform = transform;
  while (true) {
    KC_ASSIGN_OR_RETURN(ListResult page, client.List(r, ns, options));
    for (auto& item : page.items) {
      if (transform && !page.items_transformed) {
        each(transform(item));
      } else {
        each(std::move(item));
      }
      item = Json();  // the page's copy goes now, not with the page
    }
    // The first page's resourceVersion is the snapshot every page belongs to.
    if (resource_version.empty()) resource_version = page.resource_version;
    if (page.continue_token.empty()) break;
    options.continue_token = page.continue_token;
    // A continued list must not also pin a resourceVersion.
    options.resource_version.clear();
  }
  return resource_version;
}

StatusOr<ListResult> ListAll(Client& client, const Resource& r, const std::string& ns,
                             ListOptions options, const ObjectTransform& transform) {
  ListResult all;
  KC_ASSIGN_OR_RETURN(all.resource_version,
                      ListEach(client, r, ns, std::move(options), transform,
                               [&](Json&& item) { all.items.push_back(std::move(item)); }));
  return all;
}

}  // namespace kc::kube
