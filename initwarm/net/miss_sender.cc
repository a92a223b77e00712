#include "initwarm/net/miss_sender.h"

#include <algorithm>
#include <fstream>

#include "core/miss_channel.h"
#include "initwarm/net/http_exchange.h"

namespace kc::initwarm {

StatusOr<std::string> ReadMissToken(const std::filesystem::path& file) {
  constexpr std::size_t kMaxTokenBytes = 64 * 1024;
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    return NotFoundError("token file " + file.string() +
                         " cannot be read; the webhook mounts it (volume " +
                         core::kMissTokenVolume + ") when the gate has --resolve-url");
  }
  std::string token(kMaxTokenBytes + 1, '\0');
  in.read(token.data(), static_cast<std::streamsize>(token.size()));
  token.resize(static_cast<std::size_t>(in.gcount()));
  if (token.size() > kMaxTokenBytes) {
    return InvalidArgumentError("token file " + file.string() + " is larger than 64 KiB");
  }
  const auto first = token.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) {
    return InvalidArgumentError("token file " + file.string() + " is empty");
  }
  token = token.substr(first, token.find_last_not_of(" \t\r\n") - first + 1);
  return token;
}

StatusOr<core::MissReportAnswer> SendMissReport(const std::string& base_url,
                                                const std::string& token,
                                                const core::MissReport& report,
                                                std::chrono::milliseconds timeout) {
  KC_ASSIGN_OR_RETURN(core::ResolveUrl url, core::ParseResolveUrl(base_url));
  HttpCall call{"POST", url.prefix + core::kMissReportPath, "Bearer " + token,
                core::MissReportToJson(report)};
  KC_ASSIGN_OR_RETURN(HttpReply reply, HttpExchange(url, call, timeout));
  const std::string where = HttpWhere(url, call);
  if (reply.status != 200) return StatusForHttp("miss endpoint", reply).WithContext(where);
  auto answer = core::ParseMissReportAnswer(reply.body);
  if (!answer.ok()) return answer.status().WithContext(where);
  return answer;
}

bool SendDue(const MissSendState& s, const core::MissReport& report, const std::string& report_json,
             MissClock::time_point now) {
  if (report.fingerprint.empty()) return false;
  if (s.backoff.count() > 0 && now < s.retry_at) return false;
  if (s.sent.empty()) return !report.misses.empty();
  return report_json != s.sent || now - s.sent_at >= kMissReportRefresh;
}

MissSendState AfterSend(MissSendState s, bool ok, const std::string& report_json,
                        MissClock::time_point now) {
  if (ok) {
    s.sent = report_json;
    s.sent_at = now;
    s.backoff = std::chrono::seconds(0);
    return s;
  }
  s.backoff = s.backoff.count() == 0 ? kMissRetryFirst : std::min(s.backoff * 2, kMissRetryMax);
  s.retry_at = now + s.backoff;
  return s;
}

}  // namespace kc::initwarm
