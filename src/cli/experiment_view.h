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
#include "cli/tuning_view.h"
#include "store/object_store.h"

namespace trainyard::cli {

class ExperimentView final : public TuningView {
 public:
  ExperimentView(const store::ObjectStore& store, store::ObjectKey key, std::FILE* out)
      : store_(store), key_(std::move(key)), out_(out) {}

  std::string Poll() override;
  bool finished() const override { return finished_; }
  bool succeeded() const override { return succeeded_; }
  // "tune-mlp: Succeeded (ExperimentGoalReached)" and the optimal trial.
  void PrintSummary(std::FILE* out, const std::string& logs_dir) const override;

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
