// FakeTransport: an in-memory Transport for unit tests.
//
// Records every request and answers from a script: queued responses first
// (FIFO), then the handler (if set), else 404. Streams are scripted the same
// way: a FakeStream gives the status, the lines to deliver and how the
// stream ends; `block_until_stop` makes the stream wait for cancellation
// after its lines (to test stop_token handling). Thread-safe.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "kube/transport.h"

namespace kc::kube {

struct FakeStream {
  int status = 200;
  std::string error_body;          // body when status is not 2xx
  std::vector<std::string> lines;  // delivered in order when status is 2xx
  Status end;                      // returned after the lines (OK: server closed)
  bool block_until_stop = false;   // after the lines, wait for stop, then Cancelled
};

class FakeTransport : public Transport {
 public:
  using Handler = std::function<StatusOr<HttpResponse>(const HttpRequest&)>;

  // Queues one answer for the next Do().
  void Enqueue(StatusOr<HttpResponse> response);
  // Convenience: a response with `status` and `body`.
  void EnqueueResponse(int status, std::string body,
                       std::map<std::string, std::string> headers = {});
  void SetHandler(Handler handler);
  void EnqueueStream(FakeStream stream);

  // Every request seen so far (Do and Stream), in order.
  std::vector<HttpRequest> requests() const;
  // Blocks until at least `n` requests were seen (for tests driving threads).
  void WaitForRequests(size_t n) const;

  StatusOr<HttpResponse> Do(const HttpRequest& request) override;
  Status Stream(const HttpRequest& request, std::stop_token stop,
                const std::function<bool(std::string_view line)>& on_line,
                HttpResponse* response) override;

 private:
  void Record(const HttpRequest& request);

  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::vector<HttpRequest> requests_;
  std::deque<StatusOr<HttpResponse>> queued_;
  std::deque<FakeStream> streams_;
  Handler handler_;
};

}  // namespace kc::kube
