#include "operator/testing/https_client.h"

#include <openssl/bn.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cctype>

namespace kc::op {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

struct HttpsConnection::Impl {
  asio::io_context ioc;
  ssl::context ctx{ssl::context::tls_client};
  std::unique_ptr<beast::ssl_stream<beast::tcp_stream>> stream;
  beast::flat_buffer buffer;
  std::string host;
};

HttpsConnection::HttpsConnection(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpsConnection::~HttpsConnection() {
  if (impl_ && impl_->stream) {
    beast::error_code ignored;
    beast::get_lowest_layer(*impl_->stream).socket().shutdown(tcp::socket::shutdown_both, ignored);
  }
}

StatusOr<std::unique_ptr<HttpsConnection>> HttpsConnection::Connect(
    const std::string& host, int port, const HttpsClientOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->host = host;
  const std::string where = "https://" + host + ":" + std::to_string(port);
  SSL_CTX* native = impl->ctx.native_handle();
  if (options.min_tls_version != 0 || options.max_tls_version != 0) {
    // Old protocols need security level 0 in OpenSSL 3, so that the refusal
    // a test sees comes from the server, not from this client.
    SSL_CTX_set_security_level(native, 0);
    SSL_CTX_set_cipher_list(native, "DEFAULT:@SECLEVEL=0");
  }
  if (options.min_tls_version != 0) SSL_CTX_set_min_proto_version(native, options.min_tls_version);
  if (options.max_tls_version != 0) SSL_CTX_set_max_proto_version(native, options.max_tls_version);
  beast::error_code ec;
  if (!options.ca_pem.empty()) {
    impl->ctx.add_certificate_authority(asio::buffer(options.ca_pem), ec);
    if (ec) return InvalidArgumentError("CA is not PEM: " + ec.message());
    impl->ctx.set_verify_mode(ssl::verify_peer, ec);
  } else {
    impl->ctx.set_verify_mode(ssl::verify_none, ec);
  }
  impl->stream = std::make_unique<beast::ssl_stream<beast::tcp_stream>>(impl->ioc, impl->ctx);
  SSL* s = impl->stream->native_handle();
  const std::string name = options.verify_name.empty() ? host : options.verify_name;
  if (!options.ca_pem.empty()) {
    asio::ip::make_address(name, ec);
    X509_VERIFY_PARAM* param = SSL_get0_param(s);
    const int set = ec ? X509_VERIFY_PARAM_set1_host(param, name.c_str(), 0)
                       : X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str());
    if (set != 1) return InvalidArgumentError("cannot verify against name " + name);
    ec = {};
  }
  asio::ip::make_address(name, ec);
  if (ec) SSL_set_tlsext_host_name(s, name.c_str());  // SNI for DNS names only
  ec = {};
  auto& tcp_stream = beast::get_lowest_layer(*impl->stream);
  tcp_stream.expires_after(options.timeout);
  tcp::resolver resolver(impl->ioc);
  auto endpoints = resolver.resolve(host, std::to_string(port), ec);
  if (!ec) tcp_stream.connect(endpoints, ec);
  if (ec) return UnavailableError("connect " + where + ": " + ec.message());
  const int64_t ms = options.timeout.count();
  timeval tv{static_cast<time_t>(ms / 1000), static_cast<suseconds_t>((ms % 1000) * 1000)};
  setsockopt(tcp_stream.socket().native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  setsockopt(tcp_stream.socket().native_handle(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
  impl->stream->handshake(ssl::stream_base::client, ec);
  if (ec) return UnavailableError("TLS handshake with " + where + ": " + ec.message());
  return std::unique_ptr<HttpsConnection>(new HttpsConnection(std::move(impl)));
}

StatusOr<HttpGetResult> HttpsConnection::Request(const std::string& method,
                                                 const std::string& target, const std::string& body,
                                                 const std::string& content_type) {
  http::request<http::string_body> req{http::string_to_verb(method), target, 11};
  req.set(http::field::host, impl_->host);
  req.keep_alive(true);
  if (!body.empty() || method == "POST") {
    req.set(http::field::content_type, content_type);
    req.body() = body;
    req.prepare_payload();
  }
  beast::error_code ec;
  http::write(*impl_->stream, req, ec);
  if (ec) return UnavailableError(method + " " + target + ": write: " + ec.message());
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 * 1024 * 1024);
  http::read(*impl_->stream, impl_->buffer, parser, ec);
  if (ec) return UnavailableError(method + " " + target + ": read: " + ec.message());
  auto& res = parser.get();
  return HttpGetResult{static_cast<int>(res.result_int()), res.body(),
                       std::string(res[http::field::content_type])};
}

std::string HttpsConnection::PeerSerialHex() const {
  X509* cert = SSL_get1_peer_certificate(impl_->stream->native_handle());
  if (cert == nullptr) return "";
  std::string out;
  if (BIGNUM* bn = ASN1_INTEGER_to_BN(X509_get_serialNumber(cert), nullptr)) {
    if (char* hex = BN_bn2hex(bn)) {
      out = hex;
      OPENSSL_free(hex);
    }
    BN_free(bn);
  }
  X509_free(cert);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace kc::op
