// A thin Kubernetes REST client: JSON requests over HTTP or HTTPS (OpenSSL,
// through cpp-httplib) with the credentials of a ClusterConfig, client-side
// rate limits as client-go's (--kube-api-qps, --kube-api-burst), and
// watches streamed line by line. An error answer becomes its Status:
// NotFound is NOT_FOUND, AlreadyExists ALREADY_EXISTS, Conflict ABORTED
// (read again and retry), Gone/Expired OUT_OF_RANGE (list again), Invalid
// INVALID_ARGUMENT with the server's message, throttling and 5xx
// UNAVAILABLE. Thread-safe: each request takes an idle connection.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "api/json.h"
#include "common/clock.h"
#include "common/mutex.h"
#include "common/status.h"
#include "kube/cluster_config.h"
#include "kube/rate_limiter.h"

namespace httplib {
class ClientImpl;
}

namespace trainyard::kube {

struct KubeClientOptions {
  double qps = 20;  // upstream's --kube-api-qps
  int burst = 30;   // and --kube-api-burst
  std::string user_agent = "trainyard";
  // How long one request may take (watches excepted): a leader's lease
  // renewal must fail within its renew deadline, not hang past it.
  Duration request_timeout = std::chrono::seconds(60);
  const Clock* clock = &RealClock::Get();
};

// A watch or other stream in progress: Stop() from any thread ends it.
class WatchHandle {
 public:
  void Stop();
  bool stopped() const { return stopped_; }

 private:
  friend class KubeClient;
  Mutex mu_;
  httplib::ClientImpl* client_ TRAINYARD_GUARDED_BY(mu_) = nullptr;  // the connection it reads
  std::atomic<bool> stopped_{false};
};

class KubeClient {
 public:
  static Result<std::unique_ptr<KubeClient>> Create(ClusterConfig config,
                                                    KubeClientOptions options = {});
  ~KubeClient();

  // One request to `path` (with its query); `body` is sent as JSON unless
  // null. The answer's JSON body, or its error.
  Result<api::Json> Call(const std::string& method, const std::string& path,
                         const api::Json& body = nullptr,
                         const std::string& content_type = "application/json");

  // Objects by kind (through the resource registry).
  Result<api::Json> Get(const std::string& kind, const std::string& namespace_,
                        const std::string& name);
  // The list object: items and metadata.resourceVersion.
  Result<api::Json> List(const std::string& kind, const std::string& namespace_);
  Result<api::Json> Create(const api::Json& object);
  Result<api::Json> Update(const api::Json& object);
  Result<api::Json> UpdateStatus(const api::Json& object);
  Result<api::Json> Delete(const std::string& kind, const std::string& namespace_,
                           const std::string& name);

  // Streams a watch of `kind` from `resource_version` (bookmarks asked
  // for), calling `on_event` with each event object ({type, object}) until
  // it returns false, the server ends the stream, or `handle` is stopped.
  Status Watch(const std::string& kind, const std::string& namespace_,
               const std::string& resource_version,
               const std::function<bool(const api::Json&)>& on_event, WatchHandle& handle);

  // GETs `path` (with its query) and hands each piece of the answer's body
  // to `on_data` as it arrives, until it returns false, the server ends
  // the answer, the read fails (nothing heard for `idle_timeout`, or the
  // connection cut), or `handle` is stopped. True only when the server
  // ended the answer: all of it was read.
  Result<bool> Stream(const std::string& path, Duration idle_timeout,
                      const std::function<bool(std::string_view)>& on_data, WatchHandle& handle);

  const ClusterConfig& config() const { return config_; }

 private:
  KubeClient(ClusterConfig config, KubeClientOptions options);
  Result<std::unique_ptr<httplib::ClientImpl>> Connect() const;
  std::unique_ptr<httplib::ClientImpl> Take();
  void Give(std::unique_ptr<httplib::ClientImpl> client);
  void Throttle();

  ClusterConfig config_;
  KubeClientOptions options_;
  std::string prefix_;  // a path the server URL carries, put before every request's
  RateLimiter limiter_;
  Mutex mu_;
  // Connections kept between requests, with when each was last used.
  struct IdleConnection {
    std::unique_ptr<httplib::ClientImpl> client;
    std::chrono::steady_clock::time_point since;
  };
  std::vector<IdleConnection> idle_ TRAINYARD_GUARDED_BY(mu_);
};

// The Status a Kubernetes error answer stands for.
Status StatusOfAnswer(int code, const std::string& body);

}  // namespace trainyard::kube
