// Collects Katib metrics while trials run: reads what each running trial's
// primary containers printed (StdOut), wrote to their metrics file (File)
// or to event files under their event directory (TensorFlowEvent) since
// the last read, parses it as Katib's collectors do, and appends the
// values to the trial's observation log with the new read offset, in the
// engine's write group. The engine calls it right before reconciling a
// trial, so the trial controller always sees every value printed so far
// (and, once the job has finished, every value it printed at all).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "api/katib.h"
#include "common/artifact_files.h"
#include "common/clock.h"
#include "controller/trial_reconciler.h"
#include "store/control_store.h"
#include "tune/metrics.h"
#include "tune/progress.h"
#include "tune/tfevents.h"

namespace trainyard::engine {

struct MetricsCollectorOptions {
  store::ControlStore* store = nullptr;
  // Where a container of a pod logs (node::NodeAgent::LogPath).
  std::function<std::string(const std::string& namespace_, const std::string& pod,
                            const std::string& container)>
      log_path;
  const Clock* clock = nullptr;
  std::string metrics_dir;  // as controller::TrialReconcilerOptions::metrics_dir
  // Where jobs' output folders are (api::ArtifactsDirOf), for a job's File
  // and TensorFlowEvent collectors; empty: none.
  std::string artifacts_dir;
};

// The parser of a trial's collector: its filters (Katib's default when it
// names none), as TEXT, or JSON lines for a File collector that says so.
Result<tune::MetricsParser> MakeMetricsParser(const api::Trial& trial);

class MetricsCollector {
 public:
  explicit MetricsCollector(MetricsCollectorOptions options) : options_(std::move(options)) {}

  // Reads the trial's new output into its observation log. A finished or
  // Push trial reads nothing.
  Status Collect(const store::ObjectKey& trial_key);

  // A job's own metrics, into the job's log (store::JobObservationsId),
  // by the collector its annotations choose (api/job_metrics.h): StdOut
  // reads every name=number (or what its filters match) printed by a
  // kubeflow.org/v1 job's master role's container (the kind's, else the
  // first), a TrainJob's node 0 (its `node` container), a batch Job's
  // pod of completion index 0 (a Job without indexes: each of its pods),
  // or a JobSet's first replicated job's first pod; File, a file of its
  // output folder; TensorFlowEvent, every scalar of the event files under
  // a folder of it, at its step. A deleted job's log is dropped. Whether
  // it is worth reading again soon: it has something to read and has not
  // ended.
  Result<bool> CollectJob(const store::ObjectKey& job_key);

 private:
  Result<const tune::MetricsParser*> ParserFor(const api::Trial& trial);
  // Reads `path` from the recorded offset and appends what it holds.
  // `source` names the read offset: the path for a trial's, the job and
  // path for a job's (a trial's job's log is read by both).
  // With `job`, a job's: within its budget, and with its last line read
  // whole once it has ended.
  struct JobRead {
    std::string uid;           // the job's
    bool final = false;        // it has ended: nothing more will be written
    int64_t budget = 4 << 20;  // bytes this collection may still read
    bool pending = false;      // something is left to read
    // Its output's last marks of progress (StdOut), epochs' and others'.
    bool progress = false;
    std::optional<tune::ProgressMark> epoch_mark, step_mark;
  };
  // What `job`'s output declared, into its status.trainerStatus (KEP-2779's
  // shape), unless its trainer reports its own there: the progress its
  // marks give, and the latest value of each metric of its log `log_id`
  // (printed, in files or event files, logged to MLflow). A write that
  // fails (the job changed meanwhile) is made again from the next read.
  void WriteDerivedStatus(const api::Json& stored, const std::string& log_id, const JobRead& job);
  // The same for a StdOut or File trial's job, from the trial's log.
  void WriteTrialJobStatus(const api::Trial& trial, JobRead& marks);
  Status ReadSource(const std::string& log_id, const tune::MetricsParser& parser,
                    const std::string& path, const std::string& source, JobRead* job = nullptr);
  // Reads an opened file as ReadSource does.
  Status ReadOpened(const OpenedArtifact& file, const std::string& log_id,
                    const tune::MetricsParser& parser, const std::string& source,
                    JobRead* job = nullptr);
  // The parser of a job's own metrics: any name, with `filters` (Katib's
  // default when none).
  Result<const tune::MetricsParser*> JobParser(const std::vector<std::string>& filters);
  // Every scalar of the event files under `dir` of a job's `folder`.
  Status ReadJobEvents(const std::string& log_id, const std::string& folder, const std::string& dir,
                       JobRead& job);
  // Forgets which of a job's event files were corrupt (it has ended, or
  // is gone).
  void ForgetCorrupt(const std::string& log_id);
  // A pod's container a job's own metrics are read from.
  struct Source {
    std::string pod;
    std::string uid;
    std::string container;
  };
  std::vector<Source> MetricsSourcesOf(const api::Json& job) const;

  // The whole records the event files under `dir` of `folder` gained (a
  // trial's event directory, a job's output folder), each from its stored
  // offset (keyed `source_prefix` + its path in `folder`), within
  // `budget`; `rows_of` makes rows of a file's scalars, given its path
  // under `dir`.
  using EventRows = std::function<std::vector<store::ObservationRow>(
      const std::string& path, const std::vector<tune::TfScalar>& scalars)>;
  Status ReadEventFiles(const std::string& log_id, const std::string& folder,
                        const std::string& dir, const std::string& source_prefix, JobRead& budget,
                        const EventRows& rows_of);
  // A trial's, named by Katib's rule.
  Status ReadEventDirectory(const api::Trial& trial, const controller::MetricsFile& dir);

  MetricsCollectorOptions options_;
  std::set<std::string> corrupt_;  // event files read up to a corrupt record
  std::map<std::string, std::unique_ptr<tune::MetricsParser>> parsers_;      // by trial uid
  std::map<std::string, std::unique_ptr<tune::MetricsParser>> job_parsers_;  // by filters
  // Jobs whose progress is read from their output, and when each was last
  // read (those not read for a while are forgotten: deleted jobs).
  struct DerivedProgress {
    tune::ProgressTracker tracker;
    TimePoint seen;
    TimePoint summarized;  // when its metrics were last read from its log
  };
  std::map<std::string, DerivedProgress> progress_;  // by job uid
};

}  // namespace trainyard::engine
