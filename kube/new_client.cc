// NewClient(): the production wiring of RestClient.
#include <memory>
#include <utility>

#include "kube/config.h"
#include "kube/http_transport.h"
#include "kube/rest_client.h"
#include "kube/throttled_transport.h"

namespace kc::kube {

StatusOr<std::unique_ptr<Client>> NewClient(const ClusterConfig& config, ThrottleObserver on_wait) {
  KC_ASSIGN_OR_RETURN(std::unique_ptr<HttpTransport> http, HttpTransport::Create(config));
  ThrottleOptions throttle;
  throttle.qps = config.qps;
  throttle.burst = config.burst;
  throttle.on_wait = std::move(on_wait);
  auto transport = std::make_shared<ThrottledTransport>(std::move(http), throttle);
  return std::unique_ptr<Client>(std::make_unique<RestClient>(std::move(transport)));
}

}  // namespace kc::kube
