// The Katib Trial controller: a trial runs one job, built from its runSpec,
// and its conditions follow the job's (the template's success and failure
// conditions, GJSON on the job as upstream) and the metrics collected for
// it. Level-triggered, like the job controllers.
//
// Upstream's lifecycle, with its defects fixed:
//  - a trial the experiment stops (early stopping, experiment over) has its
//    job stopped at once, and is marked Killed when the experiment ended
//    (upstream defines Killed and never sets it; running trials outlived
//    their experiment, #2061);
//  - a job that succeeds with no objective metric makes the trial
//    MetricsUnavailable at once: metrics are collected while the job runs,
//    and to the end of its output before its success is read, so there is
//    nothing to wait for (upstream requeues every second until logs appear).
#pragma once

#include <functional>
#include <memory>

#include "api/katib.h"
#include "common/clock.h"
#include "controller/reconciler.h"
#include "store/object_store.h"
#include "store/observation_log.h"

namespace trainyard::controller {

inline constexpr std::string_view kTrialNameEnv = "KATIB_TRIAL_NAME";
// For a Push collector: the URL the trial POSTs its metrics to, the bearer
// token it sends, and with HTTPS the certificate that URL is served with.
inline constexpr std::string_view kMetricsUrlEnv = "TRAINYARD_METRICS_URL";
inline constexpr std::string_view kMetricsTokenEnv = "TRAINYARD_METRICS_TOKEN";
inline constexpr std::string_view kMetricsCaEnv = "TRAINYARD_METRICS_CA";

// What a trial's output read says (TrialReconcilerOptions::read_output).
struct OutputRead {
  // An ended container's output is still being read: the trial waits.
  bool reading = false;
  // Why some of its output was given up, if it was: said in the trial's
  // condition when no objective value came.
  std::string unread;
};

struct TrialReconcilerOptions {
  store::ObjectStore* store = nullptr;
  store::ObservationLog* observations = nullptr;
  const Clock* clock = nullptr;
  // Where File collectors' metrics files live: the directory the file's
  // path names in the container is `<metrics_dir>/<namespace>/<trial>` on
  // this machine (a hostPath volume, as Katib mounts an emptyDir there).
  std::string metrics_dir;
  // Where trials' own directories live (trial_dir.h); empty: none are made.
  std::string trial_dirs;
  // The API trials push metrics to ("http://127.0.0.1:8080"), and the
  // certificate it serves HTTPS with; empty: nothing serves it, and Push
  // trials are told nothing.
  std::string api_url;
  std::string api_ca_file;
  // Reads the metrics the trial's pods print where only the caller can
  // reach them (on a cluster, their logs through the API); true while some
  // of an ended container's output is still unread: the trial does not
  // conclude from its job until it is read. Told whether the job has
  // finished (its pods have ended, whatever their cache says yet). None:
  // collected elsewhere.
  std::function<Result<OutputRead>(const api::Trial&, bool job_finished)> read_output;
  // How often a running trial is looked at again (its metrics may have
  // grown): the bound on how late early stopping can act.
  Duration poll = std::chrono::milliseconds(250);
};

class TrialDirMaker;

class TrialReconciler final : public Reconciler {
 public:
  explicit TrialReconciler(TrialReconcilerOptions options);
  ~TrialReconciler() override;
  std::vector<std::string> Kinds() const override { return {"Trial"}; }
  Result<ReconcileResult> Reconcile(const store::ObjectKey& trial_key) override;
  // Where Push trials started from now on push to (TrialReconcilerOptions).
  void SetApi(std::string url, std::string ca_file) {
    options_.api_url = std::move(url);
    options_.api_ca_file = std::move(ca_file);
  }

 private:
  TrialReconcilerOptions options_;
  std::unique_ptr<TrialDirMaker> dir_maker_;  // made when a trial first needs a directory
};

// The job a trial runs: its kind from the runSpec, its name the trial's.
store::ObjectKey TrialJobKey(const api::Trial& trial);

// The metrics file of a trial whose collector is File, or the event
// directory of one whose collector is TensorFlowEvent: its path in the
// container, and where that is on this machine. Empty for other kinds.
struct MetricsFile {
  std::string container_path;
  std::string host_path;
};
MetricsFile MetricsFileOf(const api::Trial& trial, const std::string& metrics_dir);

}  // namespace trainyard::controller
