#include "kube/testing/fake_transport.h"

#include <utility>

namespace kc::kube {

void FakeTransport::Enqueue(StatusOr<HttpResponse> response) {
  std::lock_guard<std::mutex> lock(mu_);
  queued_.push_back(std::move(response));
}

void FakeTransport::EnqueueResponse(int status, std::string body,
                                    std::map<std::string, std::string> headers) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  response.headers = std::move(headers);
  Enqueue(std::move(response));
}

void FakeTransport::SetHandler(Handler handler) {
  std::lock_guard<std::mutex> lock(mu_);
  handler_ = std::move(handler);
}

void FakeTransport::EnqueueStream(FakeStream stream) {
  std::lock_guard<std::mutex> lock(mu_);
  streams_.push_back(std::move(stream));
}

std::vector<HttpRequest> FakeTransport::requests() const {
  std::lock_guard<std::mutex> lock(mu_);
  return requests_;
}

void FakeTransport::WaitForRequests(size_t n) const {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return requests_.size() >= n; });
}

void FakeTransport::Record(const HttpRequest& request) {
  requests_.push_back(request);
  cv_.notify_all();
}

StatusOr<HttpResponse> FakeTransport::Do(const HttpRequest& request) {
  Handler handler;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Record(request);
    if (!queued_.empty()) {
      StatusOr<HttpResponse> next = std::move(queued_.front());
      queued_.pop_front();
      return next;
    }
    handler = handler_;
  }
  if (handler) return handler(request);
  HttpResponse not_found;
  not_found.status = 404;
  not_found.body = "404 page not found (FakeTransport has no answer)";
  return not_found;
}

Status FakeTransport::Stream(const HttpRequest& request, std::stop_token stop,
                             const std::function<bool(std::string_view line)>& on_line,
                             HttpResponse* response) {
  FakeStream stream;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Record(request);
    if (streams_.empty()) return UnavailableError("FakeTransport: no stream queued");
    stream = std::move(streams_.front());
    streams_.pop_front();
  }
  response->status = stream.status;
  response->headers.clear();
  if (stream.status < 200 || stream.status > 299) {
    response->body = stream.error_body;
    return OkStatus();
  }
  response->body.clear();
  for (const auto& line : stream.lines) {
    if (stop.stop_requested()) return CancelledError("stream cancelled");
    if (!on_line(line)) return OkStatus();
  }
  if (stream.block_until_stop) {
    std::mutex m;
    std::condition_variable_any cv;
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, stop, [] { return false; });
    return CancelledError("stream cancelled");
  }
  return stream.end;
}

}  // namespace kc::kube
