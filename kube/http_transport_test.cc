// HttpTransport against an in-process HTTP/1.1 server on loopback (plain
// HTTP; TLS is covered by the integration tests against the real API
// server). The server writes raw bytes, so chunk boundaries are exact.
#include "kube/http_transport.h"

#include <gtest/gtest.h>

#include <boost/asio.hpp>
#include <filesystem>
#include <fstream>
#include <future>
#include <mutex>
#include <string>
#include <thread>

namespace kc::kube {
namespace {

using boost::asio::ip::tcp;

struct RawRequest {
  std::string head;  // request line + headers
  std::string body;
};

// Serves one connection at a time with `handler`, until destroyed.
class TestServer {
 public:
  using Handler = std::function<void(const RawRequest&, tcp::socket&)>;

  explicit TestServer(Handler handler)
      : acceptor_(io_, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0)),
        handler_(std::move(handler)) {
    thread_ = std::thread([this] { Run(); });
  }
  ~TestServer() {
    stopping_ = true;
    boost::system::error_code ec;
    // Wake the accept() with a connection of our own.
    tcp::socket poke(io_);
    poke.connect(acceptor_.local_endpoint(), ec);
    thread_.join();
  }
  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port());
  }

 private:
  void Run() {
    while (!stopping_) {
      tcp::socket socket(io_);
      boost::system::error_code ec;
      acceptor_.accept(socket, ec);
      if (ec || stopping_) break;
      RawRequest req;
      std::string buf;
      size_t end = std::string::npos;
      while ((end = buf.find("\r\n\r\n")) == std::string::npos) {
        char data[4096];
        size_t n = socket.read_some(boost::asio::buffer(data), ec);
        if (ec) break;
        buf.append(data, n);
      }
      if (end == std::string::npos) continue;
      req.head = buf.substr(0, end);
      req.body = buf.substr(end + 4);
      size_t cl = 0;
      auto pos = Lower(req.head).find("content-length:");
      if (pos != std::string::npos) cl = std::stoul(req.head.substr(pos + 15));
      while (req.body.size() < cl) {
        char data[4096];
        size_t n = socket.read_some(boost::asio::buffer(data), ec);
        if (ec) break;
        req.body.append(data, n);
      }
      handler_(req, socket);
      socket.shutdown(tcp::socket::shutdown_both, ec);
      socket.close(ec);
    }
  }
  static std::string Lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  }

  boost::asio::io_context io_;
  tcp::acceptor acceptor_;
  Handler handler_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

void Write(tcp::socket& s, const std::string& bytes) {
  boost::system::error_code ec;
  boost::asio::write(s, boost::asio::buffer(bytes), ec);
}

std::string Chunk(const std::string& data) {
  char size[32];
  std::snprintf(size, sizeof(size), "%zx\r\n", data.size());
  return size + data + "\r\n";
}

// The value of header `name` in a raw request head ("" when absent).
std::string HeaderValue(const std::string& head, const std::string& name) {
  size_t pos = 0;
  while ((pos = head.find("\r\n", pos)) != std::string::npos) {
    pos += 2;
    if (head.compare(pos, name.size() + 1, name + ":") == 0) {
      size_t start = head.find_first_not_of(' ', pos + name.size() + 1);
      size_t end = head.find("\r\n", start);
      return head.substr(start, end == std::string::npos ? std::string::npos : end - start);
    }
  }
  return "";
}

const char kChunkedHead[] =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";

ClusterConfig ConfigFor(const TestServer& server) {
  ClusterConfig c;
  c.server = server.url();
  c.source = "test";
  c.request_timeout = std::chrono::seconds(5);
  c.watch_idle_timeout = std::chrono::seconds(1);
  return c;
}

TEST(HttpTransportTest, DoSendsRequestAndReturnsResponse) {
  std::promise<RawRequest> seen;
  TestServer server([&](const RawRequest& req, tcp::socket& s) {
    seen.set_value(req);
    Write(s,
          "HTTP/1.1 409 Conflict\r\nContent-Type: application/json\r\nRetry-After: 3\r\n"
          "Content-Length: 14\r\n\r\n{\"kind\":\"x\"}\r\n");
  });
  ClusterConfig config = ConfigFor(server);
  const std::string token_file =
      (std::filesystem::temp_directory_path() / ("kc-token-" + std::to_string(::getpid())))
          .string();
  std::ofstream(token_file) << "rotating-token\n";
  config.token_file = token_file;
  auto transport = HttpTransport::Create(config);
  ASSERT_TRUE(transport.ok()) << transport.status();
  HttpRequest req;
  req.method = "PATCH";
  req.path = "/api/v1/namespaces/ns/configmaps/a?fieldManager=x%3Ay";
  req.body = R"({"data":{"k":"v"}})";
  req.content_type = "application/merge-patch+json";
  req.headers["Accept"] = "application/json";
  auto r = (*transport)->Do(req);
  std::filesystem::remove(token_file);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->status, 409);
  EXPECT_EQ(r->body, "{\"kind\":\"x\"}\r\n");
  EXPECT_EQ(r->headers["retry-after"], "3");
  RawRequest got = seen.get_future().get();
  EXPECT_EQ(got.head.substr(0, got.head.find("\r\n")),
            "PATCH /api/v1/namespaces/ns/configmaps/a?fieldManager=x%3Ay HTTP/1.1");
  EXPECT_EQ(HeaderValue(got.head, "Authorization"), "Bearer rotating-token") << got.head;
  EXPECT_EQ(HeaderValue(got.head, "Content-Type"), "application/merge-patch+json") << got.head;
  EXPECT_EQ(HeaderValue(got.head, "Accept"), "application/json") << got.head;
  EXPECT_EQ(HeaderValue(got.head, "User-Agent").rfind("kernelcache/", 0), 0u) << got.head;
  EXPECT_EQ(got.body, req.body);
}

TEST(HttpTransportTest, RereadsRotatedTokenFile) {
  std::vector<std::string> auth;
  std::mutex mu;
  TestServer server([&](const RawRequest& req, tcp::socket& s) {
    {
      std::lock_guard<std::mutex> lock(mu);
      auth.push_back(HeaderValue(req.head, "Authorization"));
    }
    Write(s, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}");
  });
  const std::string token_file =
      (std::filesystem::temp_directory_path() / ("kc-rotate-" + std::to_string(::getpid())))
          .string();
  std::ofstream(token_file) << "first\n";
  ClusterConfig config = ConfigFor(server);
  config.token_file = token_file;
  config.token_refresh = std::chrono::milliseconds(0);  // re-read on every request
  auto transport = HttpTransport::Create(config);
  ASSERT_TRUE(transport.ok());
  HttpRequest req;
  req.method = "GET";
  req.path = "/";
  ASSERT_TRUE((*transport)->Do(req).ok());
  std::ofstream(token_file) << "second\n";
  ASSERT_TRUE((*transport)->Do(req).ok());
  std::filesystem::remove(token_file);  // unreadable: the last good token stays
  ASSERT_TRUE((*transport)->Do(req).ok());
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(auth, (std::vector<std::string>{"Bearer first", "Bearer second", "Bearer second"}));
}

TEST(HttpTransportTest, StreamDeliversLinesAsTheyArriveAcrossChunks) {
  std::promise<void> first_line_seen;
  auto first_line_future = first_line_seen.get_future();
  TestServer server([&](const RawRequest&, tcp::socket& s) {
    // Line 1 split across two chunks, then the server waits until the client
    // has delivered it: proof that lines arrive before the response ends.
    Write(s, std::string(kChunkedHead) + Chunk("{\"type\":\"ADDED\",") + Chunk("\"n\":1}\n"));
    first_line_future.wait();
    // Two lines in one chunk, then a line split in three, then the end.
    Write(s, Chunk("{\"n\":2}\n{\"n\":3}\n") + Chunk("{\"n\"") + Chunk(":4") + Chunk("}\n") +
                 "0\r\n\r\n");
  });
  auto transport = HttpTransport::Create(ConfigFor(server));
  ASSERT_TRUE(transport.ok()) << transport.status();
  HttpRequest req;
  req.method = "GET";
  req.path = "/api/v1/configmaps?watch=1";
  std::vector<std::string> lines;
  HttpResponse response;
  Status s = (*transport)
                 ->Stream(
                     req, {},
                     [&](std::string_view line) {
                       lines.emplace_back(line);
                       if (lines.size() == 1) first_line_seen.set_value();
                       return true;
                     },
                     &response);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(lines, (std::vector<std::string>{"{\"type\":\"ADDED\",\"n\":1}", "{\"n\":2}",
                                             "{\"n\":3}", "{\"n\":4}"}));
}

// Lines longer than the transport's read block, CRLF endings, empty lines,
// and a last line the server ends without a newline.
TEST(HttpTransportTest, StreamSplitsLongLinesCrlfAndAnUnterminatedLastLine) {
  const std::string big = "{\"big\":\"" + std::string(200 * 1024, 'x') + "\"}";
  TestServer server([&](const RawRequest&, tcp::socket& s) {
    std::string body = std::string(kChunkedHead);
    for (size_t i = 0; i < big.size(); i += 7000) body += Chunk(big.substr(i, 7000));
    body += Chunk("\n\n{\"n\":2}\r\n{\"n\":3}");
    Write(s, body + "0\r\n\r\n");
  });
  auto transport = HttpTransport::Create(ConfigFor(server));
  ASSERT_TRUE(transport.ok()) << transport.status();
  HttpRequest req;
  req.method = "GET";
  req.path = "/api/v1/nodes?watch=1";
  std::vector<std::string> lines;
  HttpResponse response;
  Status s = (*transport)
                 ->Stream(
                     req, {},
                     [&](std::string_view line) {
                       lines.emplace_back(line);
                       return true;
                     },
                     &response);
  ASSERT_TRUE(s.ok()) << s;
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], big);
  EXPECT_EQ(lines[1], "{\"n\":2}");
  EXPECT_EQ(lines[2], "{\"n\":3}");
}

TEST(HttpTransportTest, StreamErrorStatusReturnsBodyWithoutLines) {
  TestServer server([&](const RawRequest&, tcp::socket& s) {
    Write(s,
          "HTTP/1.1 410 Gone\r\nContent-Type: application/json\r\nContent-Length: 17\r\n\r\n"
          "{\"code\":410}\n{\"x\"");
  });
  auto transport = HttpTransport::Create(ConfigFor(server));
  ASSERT_TRUE(transport.ok());
  HttpRequest req;
  req.method = "GET";
  req.path = "/w";
  int lines = 0;
  HttpResponse response;
  Status s = (*transport)
                 ->Stream(
                     req, {},
                     [&](std::string_view) {
                       ++lines;
                       return true;
                     },
                     &response);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(response.status, 410);
  EXPECT_EQ(response.body, "{\"code\":410}\n{\"x\"");
  EXPECT_EQ(lines, 0);
}

TEST(HttpTransportTest, QuietStreamIsDeadlineExceeded) {
  std::promise<void> release;
  auto released = release.get_future();
  TestServer server([&](const RawRequest&, tcp::socket& s) {
    Write(s, std::string(kChunkedHead) + Chunk("{\"n\":1}\n"));
    released.wait();  // silent until the test is done
  });
  auto transport = HttpTransport::Create(ConfigFor(server));  // idle timeout 1s
  ASSERT_TRUE(transport.ok());
  HttpRequest req;
  req.method = "GET";
  req.path = "/w";
  int lines = 0;
  HttpResponse response;
  Status s = (*transport)
                 ->Stream(
                     req, {},
                     [&](std::string_view) {
                       ++lines;
                       return true;
                     },
                     &response);
  release.set_value();
  EXPECT_EQ(s.code(), StatusCode::kDeadlineExceeded) << s;
  EXPECT_EQ(lines, 1);
}

TEST(HttpTransportTest, StopTokenCancelsQuietStream) {
  std::promise<void> release;
  auto released = release.get_future();
  TestServer server([&](const RawRequest&, tcp::socket& s) {
    Write(s, std::string(kChunkedHead) + Chunk("{\"n\":1}\n"));
    released.wait();
  });
  ClusterConfig config = ConfigFor(server);
  config.watch_idle_timeout = std::chrono::seconds(60);
  auto transport = HttpTransport::Create(config);
  ASSERT_TRUE(transport.ok());
  HttpRequest req;
  req.method = "GET";
  req.path = "/w";
  std::stop_source stop;
  HttpResponse response;
  const auto started = std::chrono::steady_clock::now();
  Status s = (*transport)
                 ->Stream(
                     req, stop.get_token(),
                     [&](std::string_view) {
                       stop.request_stop();  // cancel once the stream is open and quiet
                       return true;
                     },
                     &response);
  release.set_value();
  EXPECT_EQ(s.code(), StatusCode::kCancelled) << s;
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
}

TEST(HttpTransportTest, ConnectionRefusedIsUnavailable) {
  std::string url;
  {
    TestServer server([](const RawRequest&, tcp::socket&) {});
    url = server.url();
  }  // closed: nothing listens there now
  ClusterConfig config;
  config.server = url;
  config.source = "test";
  auto transport = HttpTransport::Create(config);
  ASSERT_TRUE(transport.ok());
  HttpRequest req;
  req.method = "GET";
  req.path = "/";
  auto r = (*transport)->Do(req);
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable) << (r.ok() ? "answered" : "");
}

TEST(HttpTransportTest, CreateRejectsBadTlsMaterial) {
  struct Case {
    const char* name;
    std::string ca, cert, key;
    std::string message_has;
  };
  const Case cases[] = {
      {"ca_not_pem", "hello", "", "", "certificate authority holds no PEM certificate"},
      {"cert_garbage", "", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
       "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
       "client certificate does not load"},
  };
  for (const auto& c : cases) {
    ClusterConfig config;
    config.server = "https://127.0.0.1:1";
    config.source = "kubeconfig \"k\"";
    config.ca_pem = c.ca;
    config.client_cert_pem = c.cert;
    config.client_key_pem = c.key;
    auto t = HttpTransport::Create(config);
    EXPECT_EQ(t.status().code(), StatusCode::kInvalidArgument) << c.name;
    EXPECT_NE(t.status().message().find(c.message_has), std::string::npos)
        << c.name << ": " << t.status();
  }
}

}  // namespace
}  // namespace kc::kube
