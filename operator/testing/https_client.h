// HttpsConnection: a blocking HTTPS/1.1 client connection with keep-alive,
// for tests, the webhook benchmark and probes (the API server is the real
// client of the webhooks). Verifies the server against a given CA and host
// (IP or DNS name); reports the served certificate's serial so tests can see
// a rotation.
// Not thread-safe: one connection per thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "base/status.h"
#include "operator/testing/http_get.h"

namespace kc::op {

struct HttpsClientOptions {
  std::string ca_pem;  // trust anchor (PEM); empty = do not verify (tests only)
  // Name checked against the certificate's SANs; empty = the host passed to
  // Connect(). An IP address is checked against the IP SANs.
  std::string verify_name;
  // OpenSSL protocol bounds (TLS1_1_VERSION ...); 0 = library default.
  int min_tls_version = 0;
  int max_tls_version = 0;
  std::chrono::milliseconds timeout{std::chrono::seconds(10)};  // per operation
};

class HttpsConnection {
 public:
  // TCP connect + TLS handshake; Unavailable on either failure (the message
  // carries OpenSSL's reason, e.g. "unsupported protocol").
  static StatusOr<std::unique_ptr<HttpsConnection>> Connect(const std::string& host, int port,
                                                            const HttpsClientOptions& options);
  ~HttpsConnection();
  HttpsConnection(const HttpsConnection&) = delete;
  HttpsConnection& operator=(const HttpsConnection&) = delete;

  // One request on the open connection (keep-alive). An error leaves the
  // connection unusable.
  StatusOr<HttpGetResult> Request(const std::string& method, const std::string& target,
                                  const std::string& body = "",
                                  const std::string& content_type = "application/json");
  // Lower-case hex serial of the certificate the server presented.
  std::string PeerSerialHex() const;

  struct Impl;

 private:
  explicit HttpsConnection(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kc::op
