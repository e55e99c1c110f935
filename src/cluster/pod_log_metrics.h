// Katib's StdOut collector on a cluster, without a sidecar: the operator
// follows the log of each trial's primary container through the API
// (`pods/log` with follow and timestamps, as `kubectl logs -f` reads it),
// parses each line as the StdOut collector does, and appends the values
// to the trial's observation log. The kubelet's timestamp is a sample's
// time unless the line carries its own.
//
// Nothing is lost or counted twice across an operator restart: with the
// rows of each piece of the log, the same transaction records the last
// line's kubelet timestamp (nanoseconds) as how far that container run's
// log was read, and a follow resumes from there (sinceTime, then skipping
// lines not after it). A run is read to its end only by a read begun after
// its container had ended; until then the trial is told to wait, so it
// never concludes from its job while its last values are still unread.
// Runs are told apart by container id: the current one, and the last that
// ended (`previous`, as the kubelet keeps it); older ones the kubelet no
// longer keeps.
//
// Threads: one per log being read (at most `max_follows`; the others wait
// for a slot), stopped by Stop() or the destructor. Collect() and Stop()
// are called from one thread (the controller's).
#pragma once

#include <atomic>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "api/katib.h"
#include "common/clock.h"
#include "common/log.h"
#include "common/status.h"
#include "controller/trial_reconciler.h"
#include "kube/kube_client.h"
#include "store/object_store.h"
#include "store/observation_log.h"
#include "tune/metrics.h"

namespace trainyard::cluster {

// One container run's log, asked for with timestamps.
struct PodLogRequest {
  std::string namespace_;
  std::string pod;
  std::string container;
  bool previous = false;  // the run before the current one
  int64_t since_ns = 0;   // read from this kubelet timestamp on (0: all)
};

// Streams `request`'s log, following it while its container runs, handing
// each piece to `on_data` until it returns false, the log ends, or
// `handle` is stopped; true only when the server ended it (all was read).
// KubeClient::Stream of PodLogPath in the operator.
using PodLogSource = std::function<Result<bool>(
    const PodLogRequest& request, const std::function<bool(std::string_view)>& on_data,
    kube::WatchHandle& handle)>;

// The API path (with query) of `request`.
std::string PodLogPath(const PodLogRequest& request);

struct PodLogMetricsOptions {
  // Where what is neither a status nor an event is said.
  Logger* log = &StderrLog();
  const store::ObjectStore* store = nullptr;
  store::ObservationLog* observations = nullptr;
  PodLogSource source;
  const Clock* clock = &RealClock::Get();
  int max_follows = 256;
  // Failed reads of an ended run's log in a row before its unread rest is
  // given up (the node may be gone), so the trial can conclude.
  int max_failures = 5;
};

// How far a source is read once its run's log was read to its end.
inline constexpr int64_t kReadToEnd = std::numeric_limits<int64_t>::max();

class PodLogMetrics {
 public:
  explicit PodLogMetrics(PodLogMetricsOptions options);
  ~PodLogMetrics();

  // Starts reading every run of the trial's primary containers not yet
  // read to its end (StdOut trials only). `reading` while the log of a run
  // that has ended is still being read: the trial must not conclude yet.
  // Once its job has finished, its pods' runs count as ended even while
  // the pods' cache still says they run. `unread` says why a log was
  // given up, once one was (a pod that never ran on a node has none).
  Result<controller::OutputRead> Collect(const api::Trial& trial, bool job_finished = false);
  // Ends every read and waits for its thread.
  void Stop();

 private:
  struct Follow;
  // Joins the reads that have ended and counts their failures.
  void Reap();
  // Starts reading one run's log into `trial`'s observations.
  Status Start(const api::Trial& trial, std::string source, PodLogRequest request, bool after_end);

  PodLogMetricsOptions options_;
  std::map<std::string, std::unique_ptr<Follow>> follows_;  // by source
  std::map<std::string, int> failures_;                     // by source, in a row
  std::map<std::string, std::string> last_failure_;         // by source: why it failed last
  std::map<std::string, std::string> unread_;               // by trial: why a log was given up
};

}  // namespace trainyard::cluster
