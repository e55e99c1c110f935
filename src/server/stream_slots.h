// Bounds on the long-running requests (watches, followed logs), each of
// which holds an HTTP thread while it is open: in all, at most `total`, so
// that threads always remain for other requests (health checks included);
// from one client, at most `per_client`, so that no client can take them
// all. kube-apiserver bounds its in-flight requests likewise
// (--max-requests-inflight) and answers 429 past them.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>

#include "common/mutex.h"

namespace trainyard::server {

class StreamSlots {
 public:
  StreamSlots(size_t total, size_t per_client) : total_(total), per_client_(per_client) {}

  // Held while a stream is open; gives its slot back when destroyed.
  class Slot {
   public:
    Slot(StreamSlots& owner, std::string client) : owner_(owner), client_(std::move(client)) {}
    ~Slot() { owner_.Release(client_); }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;

   private:
    StreamSlots& owner_;
    std::string client_;
  };

  // A slot for `client` (its token, or its address when it sends none), or
  // null with `why` set when one is over its bound.
  std::unique_ptr<Slot> Acquire(const std::string& client, std::string& why);

 private:
  void Release(const std::string& client);

  const size_t total_;
  const size_t per_client_;
  Mutex mu_;
  size_t open_ TRAINYARD_GUARDED_BY(mu_) = 0;
  std::map<std::string, size_t> clients_ TRAINYARD_GUARDED_BY(mu_);  // open streams per client
};

// Whether the peer of a connected socket has closed its end (or the
// connection broke). A watch on something quiet writes nothing for a long
// time, so it cannot learn of a closed connection from a failed write.
bool PeerClosed(int fd);

}  // namespace trainyard::server
