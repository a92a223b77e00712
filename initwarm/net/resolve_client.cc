#include "initwarm/net/resolve_client.h"

#include <fstream>
#include <sstream>

#include "base/percent_encode.h"
#include "initwarm/net/http_exchange.h"

namespace kc::initwarm {
namespace {

class HttpResolver : public Resolver {
 public:
  HttpResolver(std::string base, std::chrono::milliseconds timeout)
      : base_(std::move(base)), timeout_(timeout) {}

  StatusOr<ResolveAnswer> Resolve(const std::string& ns, const std::string& kernelcache,
                                  const std::string& node) override {
    KC_ASSIGN_OR_RETURN(core::ResolveUrl url, core::ParseResolveUrl(base_));
    HttpCall call{"GET",
                  url.prefix + "/v1/resolve?namespace=" + PercentEncode(ns) +
                      "&kernelcache=" + PercentEncode(kernelcache) + "&node=" + PercentEncode(node),
                  "", ""};
    KC_ASSIGN_OR_RETURN(HttpReply reply, HttpExchange(url, call, timeout_));
    const std::string where = HttpWhere(url, call);
    if (reply.status != 200) {
      return StatusForHttp("resolve endpoint", reply).WithContext(where);
    }
    auto answer = ParseResolveAnswer(reply.body);
    if (!answer.ok()) return answer.status().WithContext(where);
    return answer;
  }

 private:
  std::string base_;
  std::chrono::milliseconds timeout_;
};

}  // namespace

std::unique_ptr<Resolver> NewHttpResolver(std::string base_url, std::chrono::milliseconds timeout) {
  return std::make_unique<HttpResolver>(std::move(base_url), timeout);
}

}  // namespace kc::initwarm
