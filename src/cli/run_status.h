// What `trainyard run` shows of its jobs and Deployments while they run:
// each one's state read back from the store, a line of its replicas'
// progress, and the status line that carries them all.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "cli/tuning_view.h"
#include "common/clock.h"
#include "engine/engine.h"
#include "store/object_store.h"

namespace trainyard::cli {

struct JobView {
  store::ObjectKey key;
  // A Deployment: it runs beside the jobs, is never finished, and stops
  // with the run.
  bool workload = false;
  std::string uid;
  std::string state = "Pending";  // the last condition, as kubectl shows it
  std::string message;
  bool finished = false;
  bool succeeded = false;
  std::string output_dir;  // its replicas' TRAINYARD_OUTPUT_DIR
  Duration took{};         // from the run's start to its end, once finished
};

// Reads `view`'s object back: its state, whether it finished and how.
void Refresh(engine::Engine& engine, JobView& view);

// "mnist: Running, master 1/1 running, worker 2/2 running, 1 restart": the
// job's progress, without the time, so that a status line changes only
// when this does.
std::string DescribeProgress(engine::Engine& engine, const JobView& view);

// The status line: every job's and experiment's progress, rewritten in
// place on a terminal, else a new line only when something but the time
// changed.
class StatusLine {
 public:
  StatusLine(engine::Engine& engine, bool tty, bool quiet)
      : engine_(engine), tty_(tty), quiet_(quiet), start_(std::chrono::steady_clock::now()) {}

  Duration Elapsed() const { return std::chrono::steady_clock::now() - start_; }
  // Takes the line off a terminal, for what is printed next.
  void Clear();
  void Show(std::vector<JobView>& jobs, std::vector<std::unique_ptr<TuningView>>& experiments);

 private:
  engine::Engine& engine_;
  bool tty_;
  bool quiet_;
  std::chrono::steady_clock::time_point start_;
  std::string last_line_;
  std::string last_progress_;
};

}  // namespace trainyard::cli
