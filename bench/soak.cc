// The hardening issue's soak: JOBS batch Jobs (each runs `true`) through a
// running `trainyard server`, created by CLIENTS keep-alive connections;
// then what the server costs once they have all finished and it is idle,
// and how long SIGTERM takes to stop it.
//
//   soak URL SERVER_PID [JOBS=10000] [CLIENTS=8]
//
// Start the server on a fresh --home (trainyard server --home DIR --port 0;
// URL from DIR/kubeconfig) and give its pid. It is stopped at the end.
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "percentile.h"

namespace {

using Clock = std::chrono::steady_clock;
const std::string kJobs = "/apis/batch/v1/namespaces/default/jobs";

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// utime + stime of `pid`, in seconds.
double CpuSeconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));  // after the command's name
  std::string field;
  long long utime = 0, stime = 0;
  for (int i = 3; fields >> field; ++i) {
    if (i == 14) utime = std::stoll(field);
    if (i == 15) {
      stime = std::stoll(field);
      break;
    }
  }
  return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// VmRSS of `pid`, in MiB.
double RssMiB(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with("VmRSS:")) return std::stod(line.substr(6)) / 1024;
  }
  return 0;
}

// Its pod runs the machine's `true` (trainyard.dev/root: host), not an image.
std::string JobBody(const std::string& name) {
  return R"({"apiVersion":"batch/v1","kind":"Job","metadata":{"name":")" + name +
         R"("},"spec":{"backoffLimit":0,"template":{)"
         R"("metadata":{"annotations":{"trainyard.dev/root":"host"}},)"
         R"("spec":{"restartPolicy":"Never",)"
         R"("containers":[{"name":"main","image":"none","command":["true"]}]}}}})";
}

// Jobs that have succeeded, and those that have failed, by a list.
std::pair<int, int> Finished(httplib::Client& cli) {
  auto listed = cli.Get(kJobs);
  if (!listed || listed->status != 200) return {-1, -1};
  nlohmann::json list = nlohmann::json::parse(listed->body, nullptr, false);
  int succeeded = 0, failed = 0;
  for (const nlohmann::json& job : list.value("items", nlohmann::json::array())) {
    const nlohmann::json status = job.value("status", nlohmann::json::object());
    succeeded += status.value("succeeded", 0) > 0;
    failed += status.value("failed", 0) > 0;
  }
  return {succeeded, failed};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: soak URL SERVER_PID [JOBS] [CLIENTS]\n");
    return 2;
  }
  std::string url = argv[1];
  pid_t pid = std::atoi(argv[2]);
  int jobs = argc > 3 ? std::atoi(argv[3]) : 10000;
  int clients = argc > 4 ? std::atoi(argv[4]) : 8;

  double cpu_start = CpuSeconds(pid);
  auto start = Clock::now();
  std::mutex mu;
  std::vector<double> latencies_ms;
  std::atomic<int> errors{0};
  std::atomic<int> next{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&] {
      httplib::Client cli(url);
      cli.set_keep_alive(true);
      cli.set_tcp_nodelay(true);
      for (int i; (i = next++) < jobs;) {
        auto t = Clock::now();
        auto created = cli.Post(kJobs, JobBody("soak-" + std::to_string(i)), "application/json");
        if (!created || created->status != 201) {
          if (errors++ == 0) {
            std::fprintf(
                stderr, "create: %s\n",
                created ? created->body.c_str() : httplib::to_string(created.error()).c_str());
          }
        }
        std::lock_guard lock(mu);
        latencies_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t).count());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  double create_s = Seconds(start);
  std::printf(
      "%d jobs created by %d clients in %.1f s: %.0f/s, p50 %.1f ms, p99 %.1f ms, "
      "%d errors\n",
      jobs, clients, create_s, jobs / create_s, Percentile(latencies_ms, 0.5),
      Percentile(latencies_ms, 0.99), errors.load());
  std::fflush(stdout);

  httplib::Client cli(url);
  cli.set_read_timeout(std::chrono::seconds(120));
  std::pair<int, int> done{0, 0};
  auto deadline = Clock::now() + std::chrono::minutes(60);
  while (Clock::now() < deadline) {
    done = Finished(cli);
    if (done.first + done.second >= jobs) break;
    std::this_thread::sleep_for(std::chrono::seconds(5));
  }
  double all_s = Seconds(start);
  double cpu_load = CpuSeconds(pid) - cpu_start;
  std::printf(
      "all finished after %.1f s (%d succeeded, %d failed); the server used %.1f s of "
      "CPU (%.1f ms a job), RSS %.0f MiB\n",
      all_s, done.first, done.second, cpu_load, 1000 * cpu_load / jobs, RssMiB(pid));
  std::fflush(stdout);

  // Idle, with every job finished and kept.
  std::this_thread::sleep_for(std::chrono::seconds(2));  // the last writes settle
  double cpu_idle = CpuSeconds(pid);
  auto idle_start = Clock::now();
  std::this_thread::sleep_for(std::chrono::seconds(30));
  double idle = (CpuSeconds(pid) - cpu_idle) / Seconds(idle_start);
  std::printf("idle: %.2f %% of a core over 30 s\n", 100 * idle);

  auto stop = Clock::now();
  kill(pid, SIGTERM);
  while (kill(pid, 0) == 0 && Seconds(stop) < 120) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  bool stopped = kill(pid, 0) != 0 && errno == ESRCH;
  std::printf("SIGTERM to exit: %.2f s%s\n", Seconds(stop), stopped ? "" : " (still running)");
  return errors == 0 && done.first == jobs && stopped ? 0 : 1;
}
