// The scheduler against the published anchors (the team's reference notes
// on scheduling, sections 0 and 6): one Schedule() call timed from outside
// with std::chrono::steady_clock, gangs timed one by one through
// ScheduleOptions::after_gang.
//
//   B1  pod throughput: 5,000 nodes, 5,000 running pods, 50,000 pending
//       single-pod gangs in one decision (kube-scheduler SchedulingBasic).
//   B2  gang latency: 1,000 / 2,000 / 3,000 gangs of 3 pods, and 10 gangs
//       of 5,000 pods, on 5,000 nodes (kube-scheduler KEP-4671).
//   B4  a GPU training-gang mix in virtual time: 1,000 nodes x 8 GPUs,
//       4 cohorts x 8 ClusterQueues, Poisson arrivals at offered load 0.9
//       and 1.2, log-normal runtimes, failures, preemption.
//
// Run: build-release/bench/scheduler_bench [b1] [b2] [b4]   (default: all)
// Exits non-zero when a correctness check fails (a partial gang, a pod
// not placed that should be, a 64-pod gang starved).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <queue>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "scheduler/scheduler.h"

namespace trainyard::scheduler {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kMi = int64_t{1} << 20;  // bytes
constexpr int64_t kGi = int64_t{1} << 30;
constexpr int64_t kTi = int64_t{1} << 40;
const std::string kGpu(kGpuResource);

bool failed = false;  // some correctness check did not hold

void Check(bool ok, const std::string& what) {
  if (ok) return;
  failed = true;
  fmt::print("  CHECK FAILED: {}\n", what);
}

double Micros(Clock::duration d) { return std::chrono::duration<double, std::micro>(d).count(); }

// The q-quantile (0..1) by the nearest-rank method.
double Quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

// The first gang's time includes the decision's setup (indexing the nodes
// and every pod).
double First(const std::vector<double>& values) { return values.empty() ? 0 : values.front(); }

double Mean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

std::string PolicyName(Policy p) { return p == Policy::kSpread ? "Spread" : "BinPack"; }

// One decision, timed: the wall time of the call, and per decided gang
// the time since the previous gang was decided (the first: since the call).
struct Timed {
  Decision decision;
  double wall_us = 0;
  std::vector<double> gang_us;
};

Timed TimedSchedule(const Snapshot& snapshot, ScheduleOptions options) {
  std::vector<Clock::time_point> marks;
  marks.reserve(snapshot.gangs.size());
  options.after_gang = [&marks](const Gang&) { marks.push_back(Clock::now()); };
  Clock::time_point start = Clock::now();
  Decision decision = Schedule(snapshot, options);
  Clock::time_point end = Clock::now();
  Timed t{std::move(decision), Micros(end - start), {}};
  t.gang_us.reserve(marks.size());
  Clock::time_point previous = start;
  for (Clock::time_point mark : marks) {
    t.gang_us.push_back(Micros(mark - previous));
    previous = mark;
  }
  return t;
}

// The machine may be shared: each figure is the run with the median wall
// time of kRuns.
constexpr int kRuns = 5;

Timed MedianRun(const Snapshot& snapshot, const ScheduleOptions& options) {
  std::vector<Timed> runs;
  for (int i = 0; i < kRuns; ++i) runs.push_back(TimedSchedule(snapshot, options));
  std::sort(runs.begin(), runs.end(),
            [](const Timed& a, const Timed& b) { return a.wall_us < b.wall_us; });
  return std::move(runs[kRuns / 2]);
}

// Gangs with some but fewer than min_available pods bound after the
// decision, and gangs with all of their minimum placed.
struct GangCount {
  int partial = 0;
  int complete = 0;
};

GangCount CountGangs(const Snapshot& s, const Decision& d) {
  std::unordered_map<std::string, int> placed;
  for (const Placement& p : d.placements) ++placed[p.gang];
  GangCount count;
  for (const Gang& g : s.gangs) {
    if (g.pending.empty()) continue;
    int total = static_cast<int>(g.pending.size() + g.bound.size());
    int have = static_cast<int>(g.bound.size()) + placed[g.id];
    int min = g.min_available.value_or(total);
    if (placed[g.id] > 0 && have < min) ++count.partial;
    if (have >= min) ++count.complete;
  }
  return count;
}

PodResources CpuPod(int64_t cpu_milli, int64_t memory_bytes) {
  return {.requests = {{"cpu", cpu_milli}, {"memory", memory_bytes * 1000}}};
}

// kube-scheduler's scheduler_perf node: 4 cpu, 32Gi, 110 pods.
std::vector<Node> PerfNodes(int count) {
  std::vector<Node> nodes(count);
  for (int i = 0; i < count; ++i) {
    nodes[i].name = fmt::format("node-{:05}", i);
    nodes[i].allocatable = {{"cpu", 4000}, {"memory", 32 * kGi * 1000}, {"pods", 110'000}};
  }
  return nodes;
}

Gang PendingGang(std::string id, int64_t created, int pods, const PodResources& resources) {
  Gang g;
  g.id = std::move(id);
  g.namespace_ = "bench";
  g.created = created;
  g.pending.reserve(pods);
  for (int i = 0; i < pods; ++i) g.pending.push_back({fmt::format("p{}", i), resources, {}});
  return g;
}

// ---------------------------------------------------------------------------
// B1: pod throughput.

void RunB1() {
  constexpr int kNodes = 5000, kRunning = 5000, kPending = 50'000;
  fmt::print(
      "B1 pod throughput: {} nodes {{cpu 4, memory 32Gi, pods 110}}, {} running pods, {} pending "
      "single-pod gangs {{cpu 100m, memory 500Mi}}, one Schedule() call (median of {} runs)\n",
      kNodes, kRunning, kPending, kRuns);
  fmt::print("   anchor: kube-scheduler CI threshold 810 pods/s; target >= 50,000 pods/s\n\n");
  Snapshot s;
  s.nodes = PerfNodes(kNodes);
  PodResources pod = CpuPod(100, 500 * kMi);
  for (int i = 0; i < kRunning; ++i) {
    Gang g;
    g.id = fmt::format("init-{:05}", i);
    g.namespace_ = "bench";
    g.bound.push_back({"p0", s.nodes[i % kNodes].name, pod, {}});
    s.gangs.push_back(std::move(g));
  }
  for (int i = 0; i < kPending; ++i) {
    s.gangs.push_back(PendingGang(fmt::format("pod-{:05}", i), kRunning + i, 1, pod));
  }
  fmt::print("  {:<8} {:>8} {:>10} {:>12} {:>9} {:>13} {:>13} {:>14}\n", "policy", "placed",
             "wall ms", "pods/s", "x 810", "gang p50 us", "gang p99 us", "setup+1st ms");
  for (Policy policy : {Policy::kBinPack, Policy::kSpread}) {
    ScheduleOptions options;
    options.policy = policy;
    Timed t = MedianRun(s, options);
    size_t placed = t.decision.placements.size();
    double rate = static_cast<double>(placed) / (t.wall_us / 1e6);
    fmt::print("  {:<8} {:>8} {:>10.1f} {:>12.0f} {:>9.0f} {:>13.2f} {:>13.2f} {:>14.1f}\n",
               PolicyName(policy), placed, t.wall_us / 1000, rate, rate / 810,
               Quantile(t.gang_us, 0.5), Quantile(t.gang_us, 0.99), First(t.gang_us) / 1000);
    Check(placed == kPending,
          fmt::format("B1 {}: {} of {} pods placed", PolicyName(policy), placed, kPending));
  }
  fmt::print("\n");
}

// ---------------------------------------------------------------------------
// B2: gang latency.

struct B2Case {
  int gangs;
  int pods;
};

void RunB2Case(const B2Case& c, Policy policy) {
  Snapshot s;
  s.nodes = PerfNodes(5000);
  PodResources pod = CpuPod(100, 100 * kMi);
  for (int i = 0; i < c.gangs; ++i) {
    Gang g = PendingGang(fmt::format("gang-{:05}", i), i, c.pods, pod);
    g.min_available = c.pods;
    s.gangs.push_back(std::move(g));
  }
  ScheduleOptions options;
  options.policy = policy;
  Timed t = MedianRun(s, options);
  GangCount count = CountGangs(s, t.decision);
  double gangs_per_s = c.gangs / (t.wall_us / 1e6);
  fmt::print(
      "  {:>6} x {:<5} {:<8} {:>10.2f} {:>10.2f} {:>10.2f} {:>14.2f} {:>10.1f} {:>11.0f} {:>7} "
      "{:>8}\n",
      c.gangs, c.pods, PolicyName(policy), Quantile(t.gang_us, 0.5), Mean(t.gang_us),
      Quantile(t.gang_us, 0.99), First(t.gang_us) / 1000, t.wall_us / 1000, gangs_per_s,
      count.complete, count.partial);
  Check(count.partial == 0,
        fmt::format("B2 {}x{}: {} partial gangs", c.gangs, c.pods, count.partial));
  Check(count.complete == c.gangs,
        fmt::format("B2 {}x{}: {} of {} gangs placed", c.gangs, c.pods, count.complete, c.gangs));
}

void RunB2() {
  fmt::print(
      "B2 gang latency: 5000 nodes {{cpu 4, memory 32Gi, pods 110}}, gangs of pods {{cpu 100m, "
      "memory 100Mi}}, minAvailable = pods, one Schedule() call per row (median of {} runs)\n",
      kRuns);
  fmt::print(
      "   anchor: kube-scheduler KEP-4671 mean 3.7 / 5.0 / 5.7 ms per 3-pod gang (1000 / 2000 / "
      "3000 gangs); target <= 0.1 ms median\n\n");
  fmt::print("  {:>14} {:<8} {:>10} {:>10} {:>10} {:>14} {:>10} {:>11} {:>7} {:>8}\n",
             "gangs x pods", "policy", "p50 us", "mean us", "p99 us", "setup+1st ms", "wall ms",
             "gangs/s", "placed", "partial");
  for (B2Case c : {B2Case{1000, 3}, B2Case{2000, 3}, B2Case{3000, 3}, B2Case{10, 5000}}) {
    for (Policy policy : {Policy::kBinPack, Policy::kSpread}) RunB2Case(c, policy);
  }
  fmt::print("\n");
}

// ---------------------------------------------------------------------------
// B4: a GPU training-gang mix, simulated in virtual time.

constexpr int kB4Nodes = 5000;
constexpr int kGpusPerNode = 8;
constexpr int kCohorts = 4, kQueuesPerCohort = 8;
constexpr int kQueues = kCohorts * kQueuesPerCohort;
constexpr int64_t kCycleMs = 10'000;       // a scheduling cycle every 10 virtual seconds
constexpr int64_t kGraceMs = 30'000;       // an evicted gang's pods stop this much later
constexpr int64_t kMedianRunMs = 600'000;  // 10 min
constexpr int64_t kMaxRunMs = 6 * 3600'000;
constexpr double kRunSigma = 1.54;  // log-normal: p99 of the uncapped runtime is 6 h
constexpr double kFailRate = 0.02;
constexpr int kSizes[] = {1, 2, 4, 8, 16, 32, 64};
constexpr double kSizeWeights[] = {30, 20, 15, 15, 10, 6, 4};
constexpr int32_t kPriorities[] = {0, 100, 1000};
constexpr double kPriorityWeights[] = {60, 30, 10};

enum class JobState { kFuture, kPending, kRunning, kStopping, kDone };

struct Job {
  int size = 1;
  int gpus = 8;  // per pod
  int32_t priority = 0;
  int queue = 0;
  int64_t arrival = 0;
  int64_t runtime = 0;
  int64_t fail_after = -1;  // fails this long into its first run; -1: never
  int64_t created = 0;      // queue order: arrival, or when it was resubmitted
  JobState state = JobState::kFuture;
  int run = 0;  // bumped on every start; ends of earlier runs are stale
  int64_t started = -1;
  int64_t first_start = -1;
  bool failed_once = false;
  std::vector<BoundPod> pods;
  std::string last_wait;   // 64-pod gangs only: why it waited last
  bool nominated = false;  // it preempted: the engine reads this from its pods' reason
};

PodResources GpuPod(int gpus) {
  return {.requests = {
              {"cpu", 11'000 * gpus}, {"memory", 100 * kGi * 1000 * gpus}, {kGpu, 1000 * gpus}}};
}

// The mean of min(X, cap) for X log-normal(mu, sigma).
double CappedLogNormalMean(double mu, double sigma, double cap) {
  auto phi = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
  double lc = std::log(cap);
  return std::exp(mu + sigma * sigma / 2) * phi((lc - mu - sigma * sigma) / sigma) +
         cap * (1 - phi((lc - mu) / sigma));
}

double MeanGpusPerGang() {
  double sum = 0, weights = 0;
  for (size_t i = 0; i < std::size(kSizes); ++i) {
    double gpus = kSizes[i] == 1 ? 4.5 : 8.0 * kSizes[i];  // size 1: 1..8 GPUs
    sum += kSizeWeights[i] * gpus;
    weights += kSizeWeights[i];
  }
  return sum / weights;
}

std::vector<Job> Workload(double load, int count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::discrete_distribution<int> size(std::begin(kSizeWeights), std::end(kSizeWeights));
  std::discrete_distribution<int> priority(std::begin(kPriorityWeights),
                                           std::end(kPriorityWeights));
  std::lognormal_distribution<double> runtime(std::log(static_cast<double>(kMedianRunMs)),
                                              kRunSigma);
  std::uniform_int_distribution<int> one_gang_gpus(1, kGpusPerNode), queue(0, kQueues - 1);
  std::uniform_real_distribution<double> unit(0, 1);
  double mean_run_ms = CappedLogNormalMean(std::log(static_cast<double>(kMedianRunMs)), kRunSigma,
                                           static_cast<double>(kMaxRunMs));
  double capacity = kB4Nodes * kGpusPerNode;
  double per_ms = load * capacity / (MeanGpusPerGang() * mean_run_ms);  // arrivals per ms
  std::exponential_distribution<double> gap(per_ms);
  std::vector<Job> jobs(count);
  double t = 0;
  for (Job& job : jobs) {
    t += gap(rng);
    job.arrival = job.created = static_cast<int64_t>(t);
    job.size = kSizes[size(rng)];
    job.gpus = job.size == 1 ? one_gang_gpus(rng) : kGpusPerNode;
    job.priority = kPriorities[priority(rng)];
    job.queue = queue(rng);
    job.runtime = std::min<int64_t>(kMaxRunMs, std::max<int64_t>(1000, std::llround(runtime(rng))));
    if (unit(rng) < kFailRate) {
      job.fail_after = static_cast<int64_t>(unit(rng) * static_cast<double>(job.runtime));
    }
  }
  return jobs;
}

std::vector<Node> GpuNodes() {
  std::vector<Node> nodes(kB4Nodes);
  for (int i = 0; i < kB4Nodes; ++i) {
    Node& n = nodes[i];
    n.name = fmt::format("gpu-{:04}", i);
    n.allocatable = {
        {"cpu", 96'000}, {"memory", kTi * 1000}, {kGpu, kGpusPerNode * 1000}, {"pods", 110'000}};
    for (int d = 0; d < kGpusPerNode; ++d) n.devices[kGpu].push_back(std::to_string(d));
  }
  return nodes;
}

// Nominal quotas sum to the cluster; a queue may borrow what its cohort
// lends, without limit; lower priority gangs are preempted within a
// queue, and borrowed capacity reclaimed from lower priority gangs.
std::vector<ClusterQueue> GpuQueues() {
  std::vector<ClusterQueue> queues;
  for (int c = 0; c < kCohorts; ++c) {
    for (int k = 0; k < kQueuesPerCohort; ++k) {
      ClusterQueue q;
      q.name = fmt::format("cq-{}-{}", c, k);
      q.cohort = fmt::format("cohort-{}", c);
      q.quotas["cpu"].nominal = kB4Nodes * 96'000 / kQueues;
      q.quotas["memory"].nominal = kB4Nodes * (kTi / kQueues) * 1000;
      q.quotas[kGpu].nominal = kB4Nodes * kGpusPerNode * 1000 / kQueues;
      q.within_queue = WithinQueuePreemption::kLowerPriority;
      q.reclaim = ReclaimPreemption::kLowerPriority;
      queues.push_back(std::move(q));
    }
  }
  return queues;
}

struct Event {
  int64_t time;
  int kind;  // kArrive, kEnd, kStopped
  int job;
  int run;
  bool operator>(const Event& o) const {
    return std::tie(time, kind, job) > std::tie(o.time, o.kind, o.job);
  }
};
constexpr int kArrive = 0, kEnd = 1, kStopped = 2;

struct B4Stats {
  std::vector<double> cycle_us;
  double scheduler_us = 0;
  int64_t admitted = 0;
  int64_t preemptions = 0;
  int64_t failures = 0;
  int64_t partial_starts = 0;
  int64_t short_victims = 0;  // preempted less than a minute after they started
  std::set<int> preemptors;
  double gpu_ms = 0;     // allocated GPU-milliseconds within the run
  double wasted_ms = 0;  // GPU-milliseconds of runs cut short by preemption
};

class B4Sim {
 public:
  B4Sim(double load, int gangs, uint64_t seed) : jobs_(Workload(load, gangs, seed)) {
    snapshot_.nodes = GpuNodes();
    snapshot_.cluster_queues = GpuQueues();
    end_ = jobs_.back().arrival;
    for (size_t i = 0; i < jobs_.size(); ++i) {
      events_.push({jobs_[i].arrival, kArrive, static_cast<int>(i), 0});
    }
  }

  void Run() {
    for (int64_t now = 0; now <= end_; now += kCycleMs) {
      while (!events_.empty() && events_.top().time <= now) {
        Event e = events_.top();
        events_.pop();
        Handle(e);
      }
      if (!changed_) continue;
      Cycle(now);
    }
    for (Job& job : jobs_) {
      if (job.state == JobState::kRunning || job.state == JobState::kStopping) Release(job, end_);
    }
  }

  const std::vector<Job>& jobs() const { return jobs_; }
  const B4Stats& stats() const { return stats_; }
  int64_t end() const { return end_; }

 private:
  int Index(const std::string& gang_id) const { return std::stoi(gang_id.substr(1)); }

  // GPU time of the job's current run, up to `now`.
  void Release(Job& job, int64_t now) {
    double gpus = static_cast<double>(job.size) * job.gpus;
    stats_.gpu_ms += gpus * static_cast<double>(std::min(now, end_) - job.started);
    job.pods.clear();
  }

  void Handle(const Event& e) {
    Job& job = jobs_[e.job];
    if (e.kind == kArrive) {
      job.state = JobState::kPending;
      changed_ = true;
      return;
    }
    if (e.run != job.run) return;  // an earlier run's
    if (e.kind == kEnd && job.state == JobState::kRunning) {
      Release(job, e.time);
      if (job.fail_after >= 0 && !job.failed_once) {  // its pods went away: submitted again
        job.failed_once = true;
        job.state = JobState::kPending;
        job.created = e.time;
        ++stats_.failures;
      } else {
        job.state = JobState::kDone;
      }
      changed_ = true;
    } else if (e.kind == kStopped && job.state == JobState::kStopping) {
      Release(job, e.time);
      job.state = JobState::kPending;  // queued again, in its old place
      changed_ = true;
    }
  }

  Gang GangOf(int index, const Job& job) const {
    Gang g;
    g.id = fmt::format("j{:05}", index);
    g.namespace_ = fmt::format("team-{}", job.queue);
    g.cluster_queue = snapshot_.cluster_queues[job.queue].name;
    g.priority = job.priority;
    g.created = job.created;
    g.waiting_since = job.created;
    g.nominated = job.nominated;
    if (job.state == JobState::kPending) {
      PodResources pod = GpuPod(job.gpus);
      for (int i = 0; i < job.size; ++i) g.pending.push_back({fmt::format("p{:02}", i), pod, {}});
    } else {
      g.bound = job.pods;
      g.started = job.started;
      g.terminating = job.state == JobState::kStopping;
    }
    return g;
  }

  void Build(int64_t now) {
    snapshot_.now = now;
    snapshot_.gangs.clear();
    for (size_t i = 0; i < jobs_.size(); ++i) {
      JobState state = jobs_[i].state;
      if (state == JobState::kPending || state == JobState::kRunning ||
          state == JobState::kStopping) {
        snapshot_.gangs.push_back(GangOf(static_cast<int>(i), jobs_[i]));
      }
    }
  }

  void Start(int index, const std::vector<const Placement*>& placed, int64_t now) {
    Job& job = jobs_[index];
    if (static_cast<int>(placed.size()) != job.size) {
      ++stats_.partial_starts;  // never bound: the gang waits on
      return;
    }
    PodResources pod = GpuPod(job.gpus);
    for (const Placement* p : placed) job.pods.push_back({p->pod, p->node, pod, p->devices});
    job.state = JobState::kRunning;
    job.nominated = false;
    job.started = now;
    if (job.first_start < 0) job.first_start = now;
    ++job.run;
    ++stats_.admitted;
    bool fails = job.fail_after >= 0 && !job.failed_once;
    events_.push({now + (fails ? job.fail_after : job.runtime), kEnd, index, job.run});
  }

  void Evict(int index, int64_t now) {
    Job& job = jobs_[index];
    if (job.state != JobState::kRunning) return;
    job.state = JobState::kStopping;
    ++stats_.preemptions;
    if (now - job.started < 60'000) ++stats_.short_victims;
    stats_.wasted_ms += static_cast<double>(job.size) * job.gpus *
                        static_cast<double>(std::min(now + kGraceMs, end_) - job.started);
    events_.push({now + kGraceMs, kStopped, index, job.run});
  }

  void Cycle(int64_t now) {
    Build(now);
    Clock::time_point start = Clock::now();
    Decision d = Schedule(snapshot_, ScheduleOptions{});
    double us = Micros(Clock::now() - start);
    stats_.cycle_us.push_back(us);
    stats_.scheduler_us += us;
    std::unordered_map<int, std::vector<const Placement*>> placed;
    for (const Placement& p : d.placements) placed[Index(p.gang)].push_back(&p);
    for (const auto& [index, pods] : placed) Start(index, pods, now);
    for (const Eviction& e : d.evictions) Evict(Index(e.gang), now);
    for (const Waiting& w : d.waiting) {
      Job& job = jobs_[Index(w.gang)];
      job.nominated = w.reason == kReasonPreempting;
      if (job.size == 64) job.last_wait = w.reason + ": " + w.message;
      if (w.reason == kReasonPreempting && w.message.starts_with("preempting"))
        stats_.preemptors.insert(Index(w.gang));
    }
    changed_ = !d.placements.empty() || !d.evictions.empty();
  }

  std::vector<Job> jobs_;
  Snapshot snapshot_;
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  int64_t end_ = 0;
  bool changed_ = false;
  B4Stats stats_;
};

void PrintWaits(const B4Sim& sim) {
  fmt::print("  {:>5} {:>6} {:>8} {:>11} {:>11} {:>11} {:>12}\n", "size", "gangs", "started",
             "mean wait", "p95 wait", "max wait", "not started");
  for (int size : kSizes) {
    std::vector<double> waits;
    int gangs = 0, not_started = 0;
    double oldest = 0;
    for (const Job& job : sim.jobs()) {
      if (job.size != size) continue;
      ++gangs;
      if (job.first_start >= 0) {
        waits.push_back(static_cast<double>(job.first_start - job.arrival) / 60'000);
      } else {
        ++not_started;
        oldest = std::max(oldest, static_cast<double>(sim.end() - job.arrival) / 60'000);
      }
    }
    fmt::print("  {:>5} {:>6} {:>8} {:>9.1f} m {:>9.1f} m {:>9.1f} m {:>5}", size, gangs,
               waits.size(), Mean(waits), Quantile(waits, 0.95), Quantile(waits, 1.0), not_started);
    if (not_started > 0) fmt::print(" (oldest {:.1f} m)", oldest);
    fmt::print("\n");
  }
}

void CheckStarvation(const B4Sim& sim, double load) {
  int64_t half = sim.end() / 2;
  int late = 0, big = 0;
  double max_wait = 0;
  const Job* oldest = nullptr;
  for (const Job& job : sim.jobs()) {
    if (job.size != 64) continue;
    int64_t waited = (job.first_start >= 0 ? job.first_start : sim.end()) - job.arrival;
    max_wait = std::max(max_wait, static_cast<double>(waited) / 60'000);
    if (job.arrival > half) continue;
    ++big;
    if (job.first_start >= 0) continue;
    ++late;
    if (oldest == nullptr) oldest = &job;
  }
  fmt::print(
      "  64-pod gangs: max wait {:.1f} min (still waiting counted to the end); {} of {} "
      "that arrived in the first half started before the end\n",
      max_wait, big - late, big);
  if (oldest != nullptr) {
    fmt::print("  the oldest of them (arrived at {:.0f} min, priority {}) last waited with {}\n",
               static_cast<double>(oldest->arrival) / 60'000, oldest->priority, oldest->last_wait);
  }
  // Beyond capacity, arrivals of higher priority overtake lower ones for
  // as long as they keep coming, by design (strict priority): the check is
  // for a load the cluster can carry.
  if (load < 1.0) {
    Check(late == 0, fmt::format("B4 load {:.1f}: {} 64-pod gangs of the first half never started",
                                 load, late));
  }
}

void RunB4Load(double load, int gangs, uint64_t seed) {
  Clock::time_point wall = Clock::now();
  B4Sim sim(load, gangs, seed);
  sim.Run();
  double wall_s = Micros(Clock::now() - wall) / 1e6;
  const B4Stats& st = sim.stats();
  double hours = static_cast<double>(sim.end()) / 3600'000;
  double capacity_ms =
      static_cast<double>(kB4Nodes) * kGpusPerNode * static_cast<double>(sim.end());
  fmt::print(
      "B4 offered load {:.1f}: {} gangs arriving over {:.1f} h virtual (seed {}); "
      "simulation took {:.1f} s\n",
      load, gangs, hours, seed, wall_s);
  fmt::print(
      "  scheduling cycles run         {} (every {} s of virtual time when anything "
      "changed)\n",
      st.cycle_us.size(), kCycleMs / 1000);
  fmt::print("  scheduler wall time per cycle p50 {:.2f} ms, p99 {:.2f} ms, max {:.2f} ms\n",
             Quantile(st.cycle_us, 0.5) / 1000, Quantile(st.cycle_us, 0.99) / 1000,
             Quantile(st.cycle_us, 1.0) / 1000);
  fmt::print(
      "  gangs admitted                {} ({:.1f} us of scheduler time per admitted gang, "
      "{:.0f} admissions/s of scheduler time)\n",
      st.admitted, st.scheduler_us / std::max<int64_t>(1, st.admitted),
      static_cast<double>(st.admitted) / (st.scheduler_us / 1e6));
  fmt::print(
      "  GPU utilization               {:.1f} % (allocated GPU-s / capacity over the "
      "arrival window)\n",
      100 * st.gpu_ms / capacity_ms);
  fmt::print(
      "  preemptions                   {} by {} gangs ({:.0f} GPU-h of runs cut short; {} "
      "victims had run < 1 min)\n",
      st.preemptions, st.preemptors.size(), st.wasted_ms / 3600'000, st.short_victims);
  fmt::print("  failed and resubmitted        {}\n", st.failures);
  fmt::print("  partial-gang starts           {}\n", st.partial_starts);
  PrintWaits(sim);
  CheckStarvation(sim, load);
  Check(st.partial_starts == 0,
        fmt::format("B4 load {:.1f}: {} partial-gang starts", load, st.partial_starts));
  fmt::print("\n");
}

void RunB4() {
  fmt::print(
      "B4 GPU training-gang mix: {} nodes x {} GPUs (96 cpu, 1Ti); {} cohorts x {} ClusterQueues, "
      "nominal quotas summing to capacity, borrowing without limit; priorities 0/100/1000 "
      "(60/30/10 %); gang sizes 1..64 (30/20/15/15/10/6/4 %), 8 GPUs a pod (size 1: 1-8); "
      "runtime log-normal, median 10 min, capped at 6 h; {:.0f} % fail once and are "
      "resubmitted\n\n",
      kB4Nodes, kGpusPerNode, kCohorts, kQueuesPerCohort, kFailRate * 100);
  RunB4Load(0.9, 10000, 1);
  RunB4Load(1.2, 5000, 2);
}

}  // namespace
}  // namespace trainyard::scheduler

int main(int argc, char** argv) {
  using namespace trainyard::scheduler;
  std::vector<std::string> which(argv + 1, argv + argc);
  if (which.empty()) which = {"b1", "b2", "b4"};
  for (const std::string& b : which) {
    if (b == "b1") {
      RunB1();
    } else if (b == "b2") {
      RunB2();
    } else if (b == "b4") {
      RunB4();
    } else {
      fmt::print(stderr, "unknown benchmark {}: use b1, b2 or b4\n", b);
      return 2;
    }
  }
  return failed ? 1 : 0;
}
