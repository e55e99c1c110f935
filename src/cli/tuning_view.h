// What `trainyard run` shows of a search it waits for: a Katib Experiment
// (experiment_view.h) or an OptimizationJob (optimization_view.h).
#pragma once

#include <cstdio>
#include <string>

namespace trainyard::cli {

class TuningView {
 public:
  virtual ~TuningView() = default;
  // Prints a row for each trial that ended since the last call, and
  // returns the status line ("tune-mlp: Running, 5/12 trials done, 3
  // running, best accuracy=0.97 (tune-mlp-x2k4)").
  virtual std::string Poll() = 0;
  virtual bool finished() const = 0;
  virtual bool succeeded() const = 0;
  // How it ended and its best trial; where a trial failed, the first
  // one's reason and where its replicas' logs are (under `logs_dir`).
  virtual void PrintSummary(std::FILE* out, const std::string& logs_dir) const = 0;
};

// `text` and a space, padded to `width` + 1: a column of run's tables.
std::string PadColumn(const std::string& text, size_t width);

// Where the logs of a trial's replicas are (their pods are named after
// it), a line each, under `logs_dir` as `run` keeps them.
void PrintTrialLogs(std::FILE* out, const std::string& logs_dir, const std::string& namespace_,
                    const std::string& trial);

}  // namespace trainyard::cli
