// Launch latency: from submitting a job to every replica's process having
// started (its pod Running), through the whole embedded control plane:
// store, job controller, node agent, fork/exec. Replicas run `sleep`, so
// what is measured is trainyard, not a framework's start-up. Run:
//   build-release/bench/launch_bench --benchmark_min_time=2
// State goes under $TMPDIR. On ext4, creating a file scans past every inode
// deleted nearby in the last minutes (the kernel's recently_deleted()), so
// a disk that a build or a test run has just churned measures that scan,
// not trainyard: see docs/benchmarks.md for a fresh file system to use.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <optional>

#include "api/validation.h"
#include "api/yaml.h"
#include "engine/engine.h"
#include "node/image_root.h"
#include "node/sandbox.h"
#include "runtime/local/process.h"

namespace {

using namespace trainyard;
namespace fs = std::filesystem;

api::Object JaxJob(int replicas) {
  std::string yaml =
      "apiVersion: kubeflow.org/v1\nkind: JAXJob\nmetadata: {name: bench}\nspec:\n"
      "  jaxReplicaSpecs:\n    Worker:\n      replicas: " +
      std::to_string(replicas) +
      "\n      template: {spec: {containers: [{name: jax, image: none, "
      "command: [sleep, '1000']}]}}\n";
  auto docs = api::ParseManifests(yaml, "bench.yaml");
  return *api::DecodeAndValidate((*docs)[0].value).object;
}

void BM_SubmitToAllStarted(benchmark::State& state) {
  const int replicas = static_cast<int>(state.range(0));
  api::Object job = JaxJob(replicas);
  fs::path dir = fs::temp_directory_path() / ("trainyard-launch-bench-" + std::to_string(getpid()));
  int run = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto engine = engine::Engine::Create({.state_dir = (dir / std::to_string(run++)).string(),
                                          .working_dir = dir.string(),
                                          .base_env = {{"PATH", "/usr/bin:/bin"}}});
    state.ResumeTiming();
    (void)(*engine)->Submit(job);
    (void)(*engine)->Run(
        [&] { return (*engine)->node()->running() == static_cast<size_t>(replicas); }, [] {});
    state.PauseTiming();
    (*engine)->StopAll();
    engine->reset();
    state.ResumeTiming();
  }
  fs::remove_all(dir);
  state.counters["replicas"] = replicas;
}
BENCHMARK(BM_SubmitToAllStarted)
    ->Arg(1)
    ->Arg(8)
    ->Arg(64)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// One replica's whole life, `true` under trainyard-shim, from Start to its
// end recorded: what a sandbox (node/sandbox.h) adds to each replica.
// Arg 0: no sandbox; 1: a sandbox with one volume over a directory the
// machine has; 2: one at a new top-level path, so "/" is shadowed (each of
// its entries bound back).
// An image of one layer, busybox-static and `true` linked to it, as the
// node agent would find it unpacked; its root made afresh for each start,
// as each run of a container gets one.
struct BenchImage {
  node::ImageRoot root;
  fs::path run_dir;

  static std::optional<BenchImage> Make(const fs::path& dir) {
    if (geteuid() != 0 || !fs::exists("/bin/busybox")) return std::nullopt;
    fs::create_directories(dir / "layer/bin");
    fs::copy_file("/bin/busybox", dir / "layer/bin/busybox");
    fs::create_symlink("busybox", dir / "layer/bin/true");
    BenchImage image{.root = {.layers = {(dir / "layer").string()},
                              .upper = (dir / "run/upper").string(),
                              .work = (dir / "run/work").string(),
                              .merged = (dir / "run/merged").string()},
                     .run_dir = dir / "run"};
    return image;
  }
  void Fresh() const {
    fs::remove_all(run_dir);
    for (const std::string& d : {root.upper, root.work, root.merged}) fs::create_directories(d);
  }
};

void BM_ReplicaStartToEnd(benchmark::State& state) {
  const int kind = static_cast<int>(state.range(0));
  fs::path dir =
      fs::temp_directory_path() / ("trainyard-replica-bench-" + std::to_string(getpid()));
  fs::create_directories(dir / "volume");
  runtime::ProcessSpec spec{.argv = {"true"},
                            .env = {{"PATH", "/usr/bin:/bin"}},
                            .log_path = (dir / "log").string(),
                            .shim = TRAINYARD_SHIM,
                            .exit_path = (dir / "exit").string()};
  std::optional<BenchImage> image;
  if (kind == 3) {
    std::string bwrap = node::FindBwrap();
    image = BenchImage::Make(dir);
    if (bwrap.empty() || !image) {
      state.SkipWithError("an image root needs root, bubblewrap and busybox-static");
      return;
    }
    node::Mounts mounts = {{.mount_path = "/data", .host_path = (dir / "volume").string()}};
    spec.sandbox = *node::ImageSandboxArgs(bwrap, TRAINYARD_SHIM,
                                           {.hostname = "bench-0", .mounts = mounts}, image->root);
    spec.sandbox_shim = std::string(node::kShimInRoot);
    spec.root_overlay_target = image->root.merged;
    spec.root_overlay_data = image->root.OverlayData();
    spec.env = {{"PATH", "/bin"}};
  } else if (kind > 0) {
    std::string bwrap = node::FindBwrap();
    if (bwrap.empty()) {
      state.SkipWithError("bubblewrap is not installed");
      return;
    }
    std::string mount_path = kind == 1 ? "/tmp" : "/trainyard-bench-volume";
    spec.sandbox = *node::SandboxArgs(
        bwrap, {.hostname = "bench-0",
                .mounts = {{.mount_path = mount_path, .host_path = (dir / "volume").string()}}});
  }
  for (auto _ : state) {
    if (image) {
      image->Fresh();
      if (!node::MakeMountParents(image->root, {{.mount_path = "/data"}}).ok()) {
        state.SkipWithError("cannot make the root's mount points");
        break;
      }
    }
    Result<runtime::Process> p = runtime::Process::Start(spec);
    if (!p.ok() || p->WaitFor(std::chrono::seconds(10)) != runtime::ExitStatus{}) {
      state.SkipWithError("the replica did not run");
      break;
    }
  }
  fs::remove_all(dir);
}
BENCHMARK(BM_ReplicaStartToEnd)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Arg(3)  // in an image's root (node/image_root.h)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
