#include "kube/http_transport.h"

#include <cpprest/http_client.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>
#include <boost/asio/ssl.hpp>
#include <chrono>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

namespace kc::kube {
namespace {

namespace http = web::http;
using http::client::http_client;
using http::client::http_client_config;

constexpr char kUserAgent[] = "kernelcache/kube (cpprestsdk)";

std::string OpenSslError() {
  std::string out;
  while (unsigned long e = ERR_get_error()) {  // NOLINT(google-runtime-int)
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out;
}

// Installs the TLS material of `config` into `ctx`. Used once at Create()
// to validate, then by cpprest for every new connection.
Status ConfigureTls(boost::asio::ssl::context& ctx, const ClusterConfig& config) {
  SSL_CTX* native = ctx.native_handle();
  if (!config.ca_pem.empty()) {
    X509_STORE* store = X509_STORE_new();
    BIO* bio = BIO_new_mem_buf(config.ca_pem.data(), static_cast<int>(config.ca_pem.size()));
    int added = 0;
    while (X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr)) {
      if (X509_STORE_add_cert(store, cert) == 1) ++added;
      X509_free(cert);
    }
    BIO_free(bio);
    ERR_clear_error();  // the loop ends on "no start line"
    if (added == 0) {
      X509_STORE_free(store);
      return InvalidArgumentError(config.source +
                                  ": the certificate authority holds no PEM certificate; fix "
                                  "certificate-authority(-data)");
    }
    SSL_CTX_set_cert_store(native, store);  // takes ownership; drops the system store
  }
  if (!config.client_cert_pem.empty()) {
    boost::system::error_code ec;
    ctx.use_certificate_chain(
        boost::asio::buffer(config.client_cert_pem.data(), config.client_cert_pem.size()), ec);
    if (ec) {
      return InvalidArgumentError(config.source + ": client certificate does not load (" +
                                  ec.message() + "); fix client-certificate(-data)");
    }
    ctx.use_private_key(
        boost::asio::buffer(config.client_key_pem.data(), config.client_key_pem.size()),
        boost::asio::ssl::context::pem, ec);
    if (ec) {
      return InvalidArgumentError(config.source + ": client key does not load (" + ec.message() +
                                  "); fix client-key(-data)");
    }
    if (SSL_CTX_check_private_key(native) != 1) {
      return InvalidArgumentError(config.source +
                                  ": client key does not match the client certificate (" +
                                  OpenSslError() + "); use the key the certificate was issued for");
    }
  }
  return OkStatus();
}

Status FromException(const std::exception& e, const ClusterConfig& config) {
  if (const auto* he = dynamic_cast<const http::http_exception*>(&e)) {
    if (he->error_code() == std::errc::timed_out) {
      return DeadlineExceededError(std::string("request to ") + config.server +
                                   " timed out: " + he->what());
    }
    return UnavailableError(std::string("request to ") + config.server + " failed: " + he->what());
  }
  if (dynamic_cast<const pplx::task_canceled*>(&e) != nullptr) {
    return CancelledError("request cancelled");
  }
  return UnavailableError(std::string("request to ") + config.server + " failed: " + e.what());
}

void CopyHeaders(const http::http_response& from, HttpResponse* to) {
  to->headers.clear();
  for (const auto& [name, value] : from.headers()) {
    std::string lower = name;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    to->headers[lower] = value;
  }
}

}  // namespace

struct HttpTransport::Impl {
  ClusterConfig config;
  std::unique_ptr<http_client> client;         // Do()
  std::unique_ptr<http_client> stream_client;  // Stream(): longer (idle) timeout

  std::mutex token_mu;
  std::string token;
  std::chrono::steady_clock::time_point token_read{};

  http_client_config MakeConfig(std::chrono::milliseconds timeout) const {
    http_client_config c;
    c.set_timeout(timeout);
    c.set_validate_certificates(!config.insecure_skip_tls_verify);
    ClusterConfig tls = config;  // copy for the callback's lifetime
    c.set_ssl_context_callback([tls](boost::asio::ssl::context& ctx) {
      (void)ConfigureTls(ctx, tls);  // validated in Create(); cannot fail here
    });
    return c;
  }

  // The bearer token to send, re-reading token_file when stale.
  std::string Token() {
    if (config.token_file.empty()) return config.bearer_token;
    std::lock_guard<std::mutex> lock(token_mu);
    const auto now = std::chrono::steady_clock::now();
    if (token.empty() || now - token_read >= config.token_refresh) {
      std::ifstream in(config.token_file);
      std::stringstream ss;
      ss << in.rdbuf();
      std::string fresh = ss.str();
      while (!fresh.empty() &&
             (fresh.back() == '\n' || fresh.back() == '\r' || fresh.back() == ' ')) {
        fresh.pop_back();
      }
      if (!fresh.empty()) token = std::move(fresh);  // keep the old one if the read failed
      token_read = now;
    }
    return token.empty() ? config.bearer_token : token;
  }

  http::http_request Build(const HttpRequest& request) {
    http::http_request req(request.method);
    req.set_request_uri(request.path);
    for (const auto& [name, value] : request.headers) req.headers().add(name, value);
    if (!req.headers().has("User-Agent")) req.headers().add("User-Agent", kUserAgent);
    const std::string token = Token();
    if (!token.empty()) req.headers().add("Authorization", "Bearer " + token);
    if (!request.body.empty() || !request.content_type.empty()) {
      req.set_body(request.body, request.content_type.empty() ? std::string("application/json")
                                                              : request.content_type);
    }
    return req;
  }
};

HttpTransport::HttpTransport(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
HttpTransport::~HttpTransport() = default;

StatusOr<std::unique_ptr<HttpTransport>> HttpTransport::Create(const ClusterConfig& config) {
  if (config.server.empty()) return InvalidArgumentError(config.source + ": no server URL");
  if (!config.tls_server_name.empty()) {
    return InvalidArgumentError(config.source +
                                ": tls-server-name is not supported by this client; remove it "
                                "and use a server URL whose host is in the certificate");
  }
  try {
    boost::asio::ssl::context probe(boost::asio::ssl::context::sslv23);
    KC_RETURN_IF_ERROR(ConfigureTls(probe, config));
    auto impl = std::make_unique<Impl>();
    impl->config = config;
    web::uri base(config.server);
    impl->client = std::make_unique<http_client>(base, impl->MakeConfig(config.request_timeout));
    impl->stream_client =
        std::make_unique<http_client>(base, impl->MakeConfig(config.watch_idle_timeout));
    return std::unique_ptr<HttpTransport>(new HttpTransport(std::move(impl)));
  } catch (const std::exception& e) {
    return InvalidArgumentError(config.source + ": cannot set up a client for \"" + config.server +
                                "\": " + e.what());
  }
}

StatusOr<HttpResponse> HttpTransport::Do(const HttpRequest& request) {
  try {
    http::http_response response = impl_->client->request(impl_->Build(request)).get();
    HttpResponse out;
    out.status = response.status_code();
    CopyHeaders(response, &out);
    out.body = response.extract_utf8string(/*ignore_content_type=*/true).get();
    return out;
  } catch (const std::exception& e) {
    return FromException(e, impl_->config);
  }
}

Status HttpTransport::Stream(const HttpRequest& request, std::stop_token stop,
                             const std::function<bool(std::string_view line)>& on_line,
                             HttpResponse* response) {
  pplx::cancellation_token_source cancel;
  std::stop_callback on_stop(stop, [&cancel] { cancel.cancel(); });
  try {
    http::http_response r =
        impl_->stream_client->request(impl_->Build(request), cancel.get_token()).get();
    response->status = r.status_code();
    CopyHeaders(r, response);
    response->body.clear();
    if (r.status_code() < 200 || r.status_code() > 299) {
      response->body = r.extract_utf8string(/*ignore_content_type=*/true).get();
      return OkStatus();
    }
    // Whatever has arrived, in blocks: istream::read_line takes the buffer's
    // lock once per byte (most of the operator's CPU on a busy Node watch).
    // getn of what is available returns at once; of 1 byte when nothing is,
    // it waits for the next chunk (or the end: 0).
    auto buffer = r.body().streambuf();
    std::vector<uint8_t> block(64 * 1024);
    std::string pending;
    auto deliver = [&](std::string_view line) {
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      return line.empty() || on_line(line);
    };
    while (!stop.stop_requested()) {
      const size_t want = std::clamp<size_t>(buffer.in_avail(), 1, block.size());
      const size_t n = buffer.getn(block.data(), want).get();
      if (n == 0) {
        if (!pending.empty()) deliver(pending);  // a last line without its newline
        break;
      }
      pending.append(reinterpret_cast<const char*>(block.data()), n);
      size_t start = 0;
      for (size_t nl = pending.find('\n'); nl != std::string::npos;
           nl = pending.find('\n', start)) {
        if (!deliver(std::string_view(pending).substr(start, nl - start))) return OkStatus();
        start = nl + 1;
      }
      pending.erase(0, start);
    }
  } catch (const std::exception& e) {
    if (stop.stop_requested()) return CancelledError("stream cancelled");
    return FromException(e, impl_->config);
  }
  if (stop.stop_requested()) return CancelledError("stream cancelled");
  return OkStatus();
}

}  // namespace kc::kube
