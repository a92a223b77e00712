// HttpServer in HTTPS mode (ListenTls) and its limits, with a real TLS
// client (operator/testing/https_client.h) and raw sockets for misbehaving clients.
#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include <boost/asio.hpp>
#include <chrono>
#include <thread>

#include "operator/serving/http_server.h"
#include "operator/testing/https_client.h"
#include "operator/webhook/certs.h"

namespace kc::op {
namespace {

using namespace std::chrono_literals;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

struct Pki {
  webhook::CertPair ca;
  webhook::CertPair serving;
};

Pki MakePki() {
  const auto now = std::chrono::system_clock::now();
  auto ca = webhook::CreateCa("test-ca", now, std::chrono::hours(24));
  EXPECT_TRUE(ca.ok()) << ca.status();
  auto s =
      webhook::IssueServingCert(*ca, {{"localhost"}, {"127.0.0.1"}, std::chrono::hours(1)}, now);
  EXPECT_TRUE(s.ok()) << s.status();
  return {*ca, *s};
}

std::string Serial(const std::string& pem) {
  auto info = webhook::ParseCert(pem);
  return info.ok() ? info->serial_hex : "";
}

class HttpsServerTest : public ::testing::Test {
 protected:
  void StartServer(HttpServerOptions options = {}) {
    auto server = HttpServer::ListenTls("127.0.0.1", 0, options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    ASSERT_TRUE(server_->SetCertificate(pki_.serving.cert_pem, pki_.serving.key_pem).ok());
    server_->HandlePost("/echo", [](const HttpRequest& r) {
      return HttpResponse{200, "text/plain", r.content_type + "|" + r.body};
    });
    server_->Handle("/get", [](const HttpRequest&) {
      return HttpResponse{200, "text/plain", "g"};
    });
    server_->Start();
  }
  HttpsClientOptions Trusting() const {
    HttpsClientOptions o;
    o.ca_pem = pki_.ca.cert_pem;
    return o;
  }

  Pki pki_ = MakePki();
  std::unique_ptr<HttpServer> server_;
};

TEST_F(HttpsServerTest, HandshakeVerifiesAndPostGetsTheBody) {
  StartServer();
  EXPECT_TRUE(server_->tls());
  auto conn = HttpsConnection::Connect("127.0.0.1", server_->port(), Trusting());
  ASSERT_TRUE(conn.ok()) << conn.status();
  auto r = (*conn)->Request("POST", "/echo", "hello", "application/json");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(r->body, "application/json|hello");
  // Keep-alive: a second request on the same connection.
  auto g = (*conn)->Request("GET", "/get");
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ(g->body, "g");
  // Wrong method for a known path: 405; unknown path: 404.
  auto m = (*conn)->Request("POST", "/get", "x");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->status, 405);
  auto n = (*conn)->Request("POST", "/nope", "x");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(n->status, 404);
  EXPECT_EQ((*conn)->PeerSerialHex(), Serial(pki_.serving.cert_pem));

  // A client that trusts another CA, or checks another name, refuses it.
  HttpsClientOptions other = Trusting();
  other.ca_pem = MakePki().ca.cert_pem;
  EXPECT_FALSE(HttpsConnection::Connect("127.0.0.1", server_->port(), other).ok());
  HttpsClientOptions wrong_name = Trusting();
  wrong_name.verify_name = "kernelcache-webhook.elsewhere.svc";
  EXPECT_FALSE(HttpsConnection::Connect("127.0.0.1", server_->port(), wrong_name).ok());
}

TEST_F(HttpsServerTest, RefusesTls11AcceptsTls12And13) {
  StartServer();
  HttpsClientOptions old = Trusting();
  old.max_tls_version = TLS1_1_VERSION;
  auto refused = HttpsConnection::Connect("127.0.0.1", server_->port(), old);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("TLS handshake"), std::string::npos)
      << refused.status();
  for (int v : {TLS1_2_VERSION, TLS1_3_VERSION}) {
    HttpsClientOptions o = Trusting();
    o.min_tls_version = v;
    o.max_tls_version = v;
    auto ok = HttpsConnection::Connect("127.0.0.1", server_->port(), o);
    EXPECT_TRUE(ok.ok()) << v << ": " << ok.status();
  }
}

TEST_F(HttpsServerTest, NoCertificateYetMeansNoHandshakeAndBadPairsAreRejected) {
  auto server = HttpServer::ListenTls("127.0.0.1", 0);
  ASSERT_TRUE(server.ok());
  (*server)->Start();
  EXPECT_FALSE(HttpsConnection::Connect("127.0.0.1", (*server)->port(), Trusting()).ok());
  EXPECT_FALSE((*server)->SetCertificate("junk", pki_.serving.key_pem).ok());
  EXPECT_FALSE((*server)->SetCertificate(pki_.serving.cert_pem, pki_.ca.key_pem).ok());
  ASSERT_TRUE((*server)->SetCertificate(pki_.serving.cert_pem, pki_.serving.key_pem).ok());
  EXPECT_TRUE(HttpsConnection::Connect("127.0.0.1", (*server)->port(), Trusting()).ok());
  auto plain = HttpServer::Listen("127.0.0.1", 0);
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE((*plain)->SetCertificate(pki_.serving.cert_pem, pki_.serving.key_pem).ok());
}

TEST_F(HttpsServerTest, ReloadServesTheNewCertificateAndKeepsOpenConnections) {
  StartServer();
  auto before = HttpsConnection::Connect("127.0.0.1", server_->port(), Trusting());
  ASSERT_TRUE(before.ok()) << before.status();
  const std::string old_serial = (*before)->PeerSerialHex();
  EXPECT_EQ(old_serial, Serial(pki_.serving.cert_pem));

  auto renewed =
      webhook::IssueServingCert(pki_.ca, {{"localhost"}, {"127.0.0.1"}, std::chrono::hours(2)},
                                std::chrono::system_clock::now());
  ASSERT_TRUE(renewed.ok());
  ASSERT_TRUE(server_->SetCertificate(renewed->cert_pem, renewed->key_pem).ok());

  auto after = HttpsConnection::Connect("127.0.0.1", server_->port(), Trusting());
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ((*after)->PeerSerialHex(), Serial(renewed->cert_pem));
  EXPECT_NE((*after)->PeerSerialHex(), old_serial);
  // The connection from before still works, on its old certificate.
  auto r = (*before)->Request("POST", "/echo", "still here");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->body, "application/json|still here");
  EXPECT_EQ((*before)->PeerSerialHex(), old_serial);
}

TEST_F(HttpsServerTest, BodyOverTheLimitIs413WithAMessage) {
  HttpServerOptions o;
  o.max_body_bytes = 1024;
  StartServer(o);
  auto conn = HttpsConnection::Connect("127.0.0.1", server_->port(), Trusting());
  ASSERT_TRUE(conn.ok());
  auto fits = (*conn)->Request("POST", "/echo", std::string(1024, 'a'));
  ASSERT_TRUE(fits.ok()) << fits.status();
  EXPECT_EQ(fits->status, 200);
  auto big = (*conn)->Request("POST", "/echo", std::string(1025, 'a'));
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ(big->status, 413);
  EXPECT_NE(big->body.find("larger than 1024 bytes"), std::string::npos) << big->body;
}

// Raw TCP to a plain server (the same session code as HTTPS).
std::string RawExchange(int port, const std::string& bytes) {
  asio::io_context ioc;
  tcp::socket s(ioc);
  s.connect({asio::ip::make_address("127.0.0.1"), static_cast<uint16_t>(port)});
  asio::write(s, asio::buffer(bytes));
  std::string out;
  boost::system::error_code ec;
  asio::read(s, asio::dynamic_buffer(out), ec);  // until the server closes
  return out;
}

TEST_F(HttpsServerTest, MalformedRequestsAre400) {
  auto server = HttpServer::Listen("127.0.0.1", 0);
  ASSERT_TRUE(server.ok());
  (*server)->Start();
  const std::string bad = RawExchange((*server)->port(), "NOT HTTP AT ALL\r\n\r\n");
  EXPECT_EQ(bad.rfind("HTTP/1.1 400", 0), 0u) << bad;
  EXPECT_NE(bad.find("malformed HTTP request"), std::string::npos) << bad;
  const std::string bad_length =
      RawExchange((*server)->port(), "POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: zz\r\n\r\n");
  EXPECT_EQ(bad_length.rfind("HTTP/1.1 400", 0), 0u) << bad_length;
}

TEST_F(HttpsServerTest, SlowClientsTimeOutWithoutBlockingOthers) {
  HttpServerOptions o;
  o.read_timeout = 700ms;
  StartServer(o);
  asio::io_context ioc;
  // One client connects and never hand-shakes; another hand-shakes and
  // then sends nothing.
  tcp::socket silent(ioc);
  silent.connect({asio::ip::make_address("127.0.0.1"), static_cast<uint16_t>(server_->port())});
  auto half = HttpsConnection::Connect("127.0.0.1", server_->port(), Trusting());
  ASSERT_TRUE(half.ok());

  const auto start = std::chrono::steady_clock::now();
  auto conn = HttpsConnection::Connect("127.0.0.1", server_->port(), Trusting());
  ASSERT_TRUE(conn.ok()) << conn.status();
  auto r = (*conn)->Request("POST", "/echo", "quick");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 200);
  EXPECT_LT(std::chrono::steady_clock::now() - start, o.read_timeout)
      << "a second client waited for the slow ones";

  // The server closes the silent one after the timeout: read sees EOF.
  const auto t0 = std::chrono::steady_clock::now();
  char byte = 0;
  boost::system::error_code ec;
  silent.read_some(asio::buffer(&byte, 1), ec);
  EXPECT_TRUE(ec == asio::error::eof || ec == asio::error::connection_reset) << ec.message();
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(waited, 300ms);
  EXPECT_LT(waited, 5s);
}

}  // namespace
}  // namespace kc::op
