// RestClient: the Client (kube/client.h) over any Transport.
//
// Contract, beyond client.h:
// - Requests carry `Accept: application/json`; bodies are JSON.
// - List() fills apiVersion and kind into every item (the server leaves
//   them out of list items).
// - Create()/Update()/UpdateStatus() take the name from
//   object.metadata.name and fill apiVersion/kind when missing; the
//   namespace is the `ns` argument.
// - Patch(kApply) sends the JSON body as application/apply-patch+yaml with
//   ?fieldManager=..[&force=true], filling apiVersion, kind and
//   metadata.name when missing. Other patch types send fieldManager too
//   when set.
// - Delete() sends a DeleteOptions body (preconditions, propagationPolicy,
//   gracePeriodSeconds).
// - Watch() asks for ?watch=1&allowWatchBookmarks=true&resourceVersion=..
//   &timeoutSeconds=.. and decodes one event per line (DecodeWatchLine from
//   kube/watch_decoder.h). An ERROR event ends
//   the watch with its mapped Status (410 -> Gone) and is not handed to the
//   handler; a line that is not a watch event ends it with Internal.
// Errors name the call: `create configmaps "x" in namespace "ns": <server message>`.
#pragma once

#include <memory>
#include <string_view>

#include "kube/client.h"
#include "kube/throttled_transport.h"
#include "kube/transport.h"

namespace kc::kube {

struct ClusterConfig;

class RestClient : public Client {
 public:
  explicit RestClient(std::shared_ptr<Transport> transport);

  StatusOr<Json> Get(const Resource& r, const std::string& ns, const std::string& name) override;
  StatusOr<ListResult> List(const Resource& r, const std::string& ns,
                            const ListOptions& options) override;
  StatusOr<Json> Create(const Resource& r, const std::string& ns, const Json& object) override;
  StatusOr<Json> Update(const Resource& r, const std::string& ns, const Json& object) override;
  StatusOr<Json> UpdateStatus(const Resource& r, const std::string& ns,
                              const Json& object) override;
  StatusOr<Json> Patch(const Resource& r, const std::string& ns, const std::string& name,
                       PatchType type, const Json& patch,
                       const PatchOptions& options = {}) override;
  Status Delete(const Resource& r, const std::string& ns, const std::string& name,
                const DeleteOptions& options = {}) override;
  Status Watch(const Resource& r, const std::string& ns, const WatchOptions& options,
               std::stop_token stop,
               const std::function<bool(const WatchEvent&)>& handler) override;

 private:
  // `list_items`: the response is a list; each item is handed to it (to
  // replace in place) as soon as it is parsed, so a page never holds whole
  // items.
  StatusOr<Json> RoundTrip(HttpRequest request, std::string_view context,
                           const std::function<void(Json& item)>* list_items = nullptr);
  StatusOr<Json> Put(const Resource& r, const std::string& ns, const Json& object,
                     std::string_view subresource);

  std::shared_ptr<Transport> transport_;
};

// The production client: HttpTransport (TLS, auth) under client-side QPS/burst
// limiting and retries (kube/throttled_transport.h), per `config`; `on_wait`
// hears each request's wait for the rate limiter (ThrottleOptions::on_wait).
StatusOr<std::unique_ptr<Client>> NewClient(const ClusterConfig& config,
                                            ThrottleObserver on_wait = {});

}  // namespace kc::kube
