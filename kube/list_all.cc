#include <utility>

#include "kube/client.h"

namespace kc::kube {

StatusOr<ListResult> ListAll(Client& client, const Resource& r, const std::string& ns,
                             ListOptions options, const ObjectTransform& transform) {
  ListResult all;
  options.continue_token.clear();
  while (true) {
    KC_ASSIGN_OR_RETURN(ListResult page, client.List(r, ns, options));
    for (auto& item : page.items) {
      all.items.push_back(transform ? transform(item) : std::move(item));
      item = Json();  // the page's copy goes now, not with the page
    }
    // The first page's resourceVersion is the snapshot every page belongs to.
    if (all.resource_version.empty()) all.resource_version = page.resource_version;
    if (page.continue_token.empty()) break;
    options.continue_token = page.continue_token;
    // A continued list must not also pin a resourceVersion.
    options.resource_version.clear();
  }
  return all;
}

}  // namespace kc::kube
