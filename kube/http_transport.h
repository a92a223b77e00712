// HttpTransport: the production Transport, over cpprestsdk with TLS through
// OpenSSL.
//
// Contract:
// - Create() validates the TLS material up front (CA PEM parses, client
//   certificate and key parse and match) and fails with InvalidArgument
//   naming the config source; nothing fails later for bad PEM.
// - When a CA is given it is the only trust anchor (the system store is not
//   consulted); without one the system store is used. insecure_skip_tls_verify
//   turns verification off. The server name is checked (RFC 2818, IP SANs
//   included).
// - Authorization: a client certificate, and/or `Authorization: Bearer`
//   from bearer_token or token_file (re-read every token_refresh, so a
//   rotated service-account token is picked up; a failed read keeps the
//   previous token).
// - Do(): whole response, within request_timeout. Stream(): a separate
//   connection whose timeout (watch_idle_timeout) is an idle timeout; lines
//   are delivered as they arrive. An idle timeout returns DeadlineExceeded,
//   a cancelled stop_token Cancelled (the connection is closed), any other
//   failure Unavailable. No cpprestsdk exception escapes.
// cpprestsdk appears only in http_transport.cc (keep it replaceable).
#pragma once

#include <memory>

#include "kube/config.h"
#include "kube/transport.h"

namespace kc::kube {

class HttpTransport : public Transport {
 public:
  static StatusOr<std::unique_ptr<HttpTransport>> Create(const ClusterConfig& config);
  ~HttpTransport() override;

  StatusOr<HttpResponse> Do(const HttpRequest& request) override;
  Status Stream(const HttpRequest& request, std::stop_token stop,
                const std::function<bool(std::string_view line)>& on_line,
                HttpResponse* response) override;

  struct Impl;

 private:
  explicit HttpTransport(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kc::kube
