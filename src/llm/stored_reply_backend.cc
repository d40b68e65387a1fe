#include "llm/stored_reply_backend.h"

namespace kernelpro::llm {

Outcome StoredReplyBackend::Complete(const Request& request) {
  if (next_ < stored_.size()) return stored_[next_++];
  if (!around_) return inner_.Complete(request);
  return around_([&] { return inner_.Complete(request); });
}

}  // namespace kernelpro::llm
