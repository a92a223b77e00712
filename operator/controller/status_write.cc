#include "operator/controller/status_write.h"

namespace kc::op {

StatusWriteDecision DecideStatusWrite(const StatusWriteInputs& in) {
  StatusWriteDecision d;
  if (in.gone || !in.differs) return d;
  std::optional<Time> start = in.owed_since;
  if (!start && in.job_written) start = in.now;
  if (start && in.now < *start + in.window) {
    d.what = StatusWrite::kPutOff;
    d.owed_since = *start;
    d.due = *start + in.window;
    return d;
  }
  d.what = StatusWrite::kNow;
  return d;
}

}  // namespace kc::op
