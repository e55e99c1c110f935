// What `trainyard run` shows for an OptimizationJob: a row for each trial
// (a TrainJob) as it ends, with its parameters and objectives; a status
// line with the counts and the best so far; at the end the best trial and,
// for several objectives, the Pareto front.
#pragma once

#include <cstdio>
#include <set>
#include <string>

#include "api/optimization_job.h"
#include "cli/tuning_view.h"
#include "controller/optimization_trials.h"
#include "store/object_store.h"

namespace trainyard::cli {

class OptimizationView final : public TuningView {
 public:
  OptimizationView(const store::ObjectStore& store, store::ObjectKey key, std::FILE* out)
      : store_(store), key_(std::move(key)), out_(out) {}

  std::string Poll() override;
  bool finished() const override { return finished_; }
  bool succeeded() const override { return succeeded_; }
  void PrintSummary(std::FILE* out, const std::string& logs_dir) const override;

 private:
  void PrintRow(const controller::OptimizationTrial& trial);

  const store::ObjectStore& store_;
  store::ObjectKey key_;
  std::FILE* out_;
  api::OptimizationJobFields fields_;
  std::set<std::string> printed_;  // trials with a row
  bool header_printed_ = false;
  bool finished_ = false;
  bool succeeded_ = false;
};

}  // namespace trainyard::cli
