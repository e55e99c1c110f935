// What a batch Job's reconcile, and an idle node agent's sync, cost as the
// store fills with finished jobs' pods (issue 16, item 12): both stay flat,
// since a job reads its pods by owner uid from the store's index and the
// node agent looks only at pods that changed or have a process. Run:
//   cmake --build build-release --target reconcile_bench
//   build-release/bench/reconcile_bench --benchmark_min_time=1
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>

#include "controller/batch_job_reconciler.h"
#include "controller/tests/finished_pod.h"
#include "node/node_agent.h"
#include "store/sqlite_store.h"

namespace {

using namespace trainyard;
namespace fs = std::filesystem;

api::Json Container() { return {{"name", "main"}, {"image", "none"}, {"command", {"sleep", "1"}}}; }

std::unique_ptr<store::SqliteStore> StoreWithHistory(int finished) {
  auto store = std::move(*store::SqliteStore::Open({}));
  for (int i = 0; i < finished; ++i) (void)store->Create(controller::testing::FinishedPod(i));
  return store;
}

void BM_BatchJobReconcile(benchmark::State& state) {
  auto store = StoreWithHistory(static_cast<int>(state.range(0)));
  (void)store->Create(
      {{"apiVersion", "batch/v1"},
       {"kind", "Job"},
       {"metadata", {{"name", "t"}, {"namespace", "default"}}},
       {"spec",
        {{"template", {{"spec", {{"restartPolicy", "Never"}, {"containers", {Container()}}}}}}}}});
  controller::BatchJobReconciler reconciler({.store = store.get(), .clock = &RealClock::Get()});
  store::ObjectKey key{"Job", "default", "t"};
  (void)reconciler.Reconcile(key);  // creates its pod; later ones find it
  for (auto _ : state) benchmark::DoNotOptimize(reconciler.Reconcile(key));
}
BENCHMARK(BM_BatchJobReconcile)->Arg(0)->Arg(1000)->Arg(5000)->Unit(benchmark::kMicrosecond);

void BM_IdleNodeAgentSync(benchmark::State& state) {
  auto store = StoreWithHistory(static_cast<int>(state.range(0)));
  fs::path dir =
      fs::temp_directory_path() / ("trainyard-reconcile-bench-" + std::to_string(getpid()));
  node::NodeAgent agent({.store = store.get(),
                         .clock = &RealClock::Get(),
                         .logs_dir = (dir / "logs").string(),
                         .pods_dir = (dir / "pods").string(),
                         .base_env = {{"PATH", "/usr/bin:/bin"}}});
  (void)agent.Sync();  // the first looks at every pod
  for (auto _ : state) benchmark::DoNotOptimize(agent.Sync());
  fs::remove_all(dir);
}
BENCHMARK(BM_IdleNodeAgentSync)->Arg(0)->Arg(1000)->Arg(5000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
