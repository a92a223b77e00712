// Resolver: asks the operator which fingerprint a node belongs to and what
// state that fingerprint's cache is in.
//
// Wire (plain HTTP to the in-cluster service):
//   GET <base>/v1/resolve?namespace=<ns>&kernelcache=<name>&node=<node>
//   200 {"fingerprint","state","directory","manifestDigest","message",
//        "node":{"gpuProduct","computeCapability","driver","cudaDriver","arch"},
//        "final": true, "reason": "<why>"   (only on a definitive answer;
//        then "fingerprint" may be "" and "node" absent)}
//   non-200 {"error":"<why>"} -> an error carrying that message (404 is
//   NotFound, 400 InvalidArgument, 5xx and connection failures Unavailable).
// HTTP is Boost.Beast over Boost.Asio, with a connect+request timeout.
// (Tests read the same 200 body from a file: initwarm/testing/file_sources.h.)
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "base/status.h"
#include "core/resolve_answer.h"

namespace kc::initwarm {

// The wire struct and its codec live in core/resolve_answer.h (shared
// with the operator, which writes it).
using core::ParseResolveAnswer;
using core::ResolveAnswer;

class Resolver {
 public:
  virtual ~Resolver() = default;
  virtual StatusOr<ResolveAnswer> Resolve(const std::string& ns, const std::string& kernelcache,
                                          const std::string& node) = 0;
};

// base_url: "http://host[:port][/prefix]" (a trailing "/v1/resolve" is
// the same URL). timeout bounds one whole request.
std::unique_ptr<Resolver> NewHttpResolver(
    std::string base_url, std::chrono::milliseconds timeout = std::chrono::seconds(10));

}  // namespace kc::initwarm
