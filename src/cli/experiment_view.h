// What `trainyard run` shows for a Katib Experiment: a table of trials that
// grows as each one finishes (its parameters, objective and state), a status
// line with the counts and the best so far, and the optimal trial at the end.
#pragma once

#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "api/katib.h"
#include "store/object_store.h"

namespace trainyard::cli {

class ExperimentView {
 public:
  ExperimentView(const store::ObjectStore& store, store::ObjectKey key, std::FILE* out)
      : store_(store), key_(std::move(key)), out_(out) {}

  // Prints a row for each trial that finished since the last call, and
  // returns the status line ("tune-mlp: Running, 5/12 trials done, 3 running,
  // best accuracy=0.97 (tune-mlp-x2k4)").
  std::string Poll();
  bool finished() const { return finished_; }
  bool succeeded() const { return succeeded_; }
  // "tune-mlp: Succeeded (ExperimentGoalReached)" and the optimal trial;
  // where a trial failed, the first one's reason and where its replicas'
  // logs are (under `logs_dir`).
  void PrintSummary(std::FILE* out, const std::string& logs_dir) const;

 private:
  void PrintHeader();
  void PrintFirstFailure(std::FILE* out, const std::string& logs_dir) const;
  void PrintRow(const api::Trial& trial);

  const store::ObjectStore& store_;
  store::ObjectKey key_;
  std::FILE* out_;
  api::Experiment experiment_;
  bool header_printed_ = false;
  std::set<std::string> printed_;   // trials with a row
  std::vector<double> objectives_;  // the rows' objective values, in the order printed
  bool finished_ = false;
  bool succeeded_ = false;
};

}  // namespace trainyard::cli
