#include "server/stream_slots.h"

#include <fmt/format.h>
#include <poll.h>

namespace trainyard::server {

std::unique_ptr<StreamSlots::Slot> StreamSlots::Acquire(const std::string& client,
                                                        std::string& why) {
  MutexLock lock(mu_);
  if (open_ >= total_) {
    why = fmt::format(
        "the server has {} watches and followed logs open, its limit: try again later", open_);
    return nullptr;
  }
  size_t& mine = clients_[client];
  if (mine >= per_client_) {
    why = fmt::format(
        "this client has {} watches and followed logs open, the limit for one client: close some, "
        "or watch a whole collection with a selector instead of its objects one by one",
        mine);
    return nullptr;
  }
  ++mine;
  ++open_;
  return std::make_unique<Slot>(*this, client);
}

void StreamSlots::Release(const std::string& client) {
  MutexLock lock(mu_);
  --open_;
  auto it = clients_.find(client);
  if (it != clients_.end() && --it->second == 0) clients_.erase(it);
}

bool PeerClosed(int fd) {
  if (fd < 0) return false;
  pollfd p{.fd = fd, .events = POLLRDHUP, .revents = 0};
  // A watch's client sends nothing more on its connection, so a hang-up
  // (its FIN) or an error is all this can report.
  return ::poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

}  // namespace trainyard::server
