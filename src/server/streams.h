// The two responses that go on after their headers: a watch (one JSON
// event per line, as Kubernetes streams them) and a pod's log, followed
// while its container runs.
#pragma once

#include <deque>
#include <string>

#include "common/mutex.h"
#include "server/api_path.h"
#include "server/backend.h"
#include "server/handler.h"
#include "server/selectors.h"

namespace trainyard::server {

struct WatchOptions {
  ApiTarget target;
  Selector labels;
  Selector fields;
  bool table = false;
  std::string include_object = "Metadata";
  const Clock* clock = nullptr;
  // timeoutSeconds: the watch ends after it, as Kubernetes ends it.
  std::optional<std::chrono::steady_clock::time_point> end_at;
};

class WatchStream final : public ResponseStream {
 public:
  WatchStream(store::CommittedReader& store, WatchOptions options)
      : store_(store), options_(std::move(options)) {}
  ~WatchStream() override;
  // Starts at `resource_version` ("" or "0": first an ADDED event for each
  // object there is now). OUT_OF_RANGE when that is older than the history
  // kept: the stream then sends a 410 Expired event and ends, as
  // Kubernetes does.
  Status Start(const std::string& resource_version);
  bool Next(std::string& out, Duration wait) override;

 private:
  bool Wanted(const api::Json& object) const;
  std::string Render(const store::WatchEvent& event);

  store::CommittedReader& store_;
  WatchOptions options_;
  std::optional<store::WatchId> id_;
  bool sent_columns_ = false;
  Mutex mu_;
  CondVar ready_;
  std::deque<store::SharedWatchEvent> events_ TRAINYARD_GUARDED_BY(mu_);
  int64_t since_ TRAINYARD_GUARDED_BY(mu_) = 0;  // older events are not sent
  std::string error_;                            // a final event to send, then end
};

struct LogOptions {
  std::string namespace_;
  std::string pod;
  std::string container;
  bool previous = false;
  bool follow = false;
  std::optional<int64_t> tail_lines;
  std::optional<int64_t> limit_bytes;
  // Of a CRI log only (a plain one keeps no times): each line's time
  // before it, and no line from before since_ns.
  bool timestamps = false;
  int64_t since_ns = 0;
};

class LogStream final : public ResponseStream {
 public:
  LogStream(Backend& backend, LogOptions options, Backend::LogRun run, int32_t restarts)
      : backend_(backend),
        options_(std::move(options)),
        run_(std::move(run)),
        restarts_(restarts) {}
  // Moves the start to the last tailLines lines of the run.
  void SeekTail();
  bool Next(std::string& out, Duration wait) override;

 private:
  // Whether the container run being followed has ended (or its pod is gone).
  bool RunOver() const;

  // Renders the next whole CRI lines of [from, end) into `out`.
  void ReadCri(int64_t from, int64_t end, bool over, std::string& out);

  Backend& backend_;
  LogOptions options_;
  Backend::LogRun run_;
  int32_t restarts_;
  int64_t sent_ = 0;     // bytes of the file read
  int64_t written_ = 0;  // bytes of log text sent (the file's, unless CRI)
};

}  // namespace trainyard::server
