// A bounded load test of an API server on loopback: CLIENTS threads, each
// with its own keep-alive connection, each time create a ConfigMap
// labelled with the client's number (a durable write), get it, and list
// the client's own by label selector, a page of 50; meanwhile WATCHERS
// watch every ConfigMap. Prints the latency of each kind of request (p50,
// p99), the throughput, and whether every watcher saw every create.
//
//   api_load URL [CLIENTS=200] [WATCHERS=50] [REQUESTS_PER_CLIENT=30]
//
// The server must be running (trainyard server --port 0; URL from the
// kubeconfig it writes; or kube-apiserver). For https, API_LOAD_CA names
// the CA file to trust, and API_LOAD_TOKEN, where set, is sent as a
// bearer token. Stops by itself.
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "percentile.h"

namespace {

using Clock = std::chrono::steady_clock;

// A client of `url`, trusting API_LOAD_CA and sending API_LOAD_TOKEN.
std::unique_ptr<httplib::Client> MakeClient(const std::string& url) {
  auto cli = std::make_unique<httplib::Client>(url);
  if (const char* ca = std::getenv("API_LOAD_CA")) cli->set_ca_cert_path(ca);
  if (const char* token = std::getenv("API_LOAD_TOKEN")) cli->set_bearer_token_auth(token);
  cli->set_keep_alive(true);
  cli->set_tcp_nodelay(true);  // as Go's clients (kubectl) do
  return cli;
}

struct Samples {
  std::mutex mu;
  std::map<std::string, std::vector<double>> ms;  // by request kind
  std::atomic<int> errors{0};
  std::mutex first_mu;
  std::string first_error;
  void Error(const std::string& what) {
    ++errors;
    std::lock_guard lock(first_mu);
    if (first_error.empty()) first_error = what;
  }
  void Add(const std::string& kind, Clock::time_point start) {
    double d = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    std::lock_guard lock(mu);
    ms[kind].push_back(d);
  }
};

// One watch for the whole run, counting the ADDED events it sees.
void WatchConfigMaps(const std::string& url, const std::string& path, std::atomic<int>& watching,
                     std::atomic<int>& added, const std::atomic<bool>& done) {
  std::unique_ptr<httplib::Client> client = MakeClient(url);
  httplib::Client& cli = *client;
  cli.set_read_timeout(std::chrono::seconds(60));
  std::string partial;  // events are lines; a chunk need not end on one
  ++watching;
  // From now: on a fresh server, only this run's creates.
  cli.Get(path + "?watch=true", [&](const char* data, size_t n) {
    partial.append(data, n);
    size_t start = 0;
    for (size_t nl; (nl = partial.find('\n', start)) != std::string::npos; start = nl + 1) {
      constexpr std::string_view kAdded = R"({"type":"ADDED")";
      if (partial.compare(start, kAdded.size(), kAdded) == 0) ++added;
    }
    partial.erase(0, start);
    return !done;
  });
  --watching;
}

// One client's requests: each time a create, a get, and a list of the
// client's own ConfigMaps by label, at most 50.
void CreateGetAndList(const std::string& url, const std::string& path, int client, int requests,
                      Samples& samples) {
  std::unique_ptr<httplib::Client> connection = MakeClient(url);
  httplib::Client& cli = *connection;
  std::string label = "load-client";
  std::string own = std::to_string(client);
  // The connection (and its TLS handshake) is made first, and timed
  // apart: what a create costs is not what connecting costs.
  auto connected = Clock::now();
  if (auto health = cli.Get("/healthz"); !health || health->status != 200) {
    samples.Error("connect: " + (health ? "HTTP " + std::to_string(health->status)
                                        : httplib::to_string(health.error())));
  }
  samples.Add("connect", connected);
  for (int i = 0; i < requests; ++i) {
    std::string name = "load-" + own + "-" + std::to_string(i);
    auto t = Clock::now();
    std::string body = R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":")" + name +
                       R"(","labels":{")" + label + R"(":")" + own + R"("}},"data":{"i":")" +
                       std::to_string(i) + R"("}})";
    auto created = cli.Post(path, body, "application/json");
    if (!created || created->status != 201) {
      samples.Error(created
                        ? "create: HTTP " + std::to_string(created->status) + " " + created->body
                        : "create: " + httplib::to_string(created.error()));
    }
    samples.Add("create", t);
    t = Clock::now();
    auto got = cli.Get(path + "/" + name);
    if (!got || got->status != 200) {
      samples.Error(got ? "get: HTTP " + std::to_string(got->status)
                        : "get: " + httplib::to_string(got.error()));
    }
    samples.Add("get", t);
    t = Clock::now();
    auto listed = cli.Get(path + "?limit=50&labelSelector=" + label + "%3D" + own);
    if (!listed || listed->status != 200) {
      samples.Error(listed ? "list: HTTP " + std::to_string(listed->status)
                           : "list: " + httplib::to_string(listed.error()));
    } else if (i < 50 && listed->body.find("\"" + name + "\"") == std::string::npos) {
      // (Past 50, the page of the first 50 names need not hold the newest.)
      samples.Error("list: the client's own ConfigMap " + name + " is not in its list");
    }
    samples.Add("list", t);
  }
}

// The figures; 0 when nothing failed and every watcher saw every create.
int Report(int clients, int watchers, double seconds, Samples& samples,
           const std::vector<std::atomic<int>>& added, int64_t creates) {
  size_t total = 0;
  for (auto& [kind, v] : samples.ms) total += kind == "connect" ? 0 : v.size();
  std::printf("%d clients, %d watchers, %zu requests in %.2f s: %.0f requests/s, %d errors\n",
              clients, watchers, total, seconds, static_cast<double>(total) / seconds,
              samples.errors.load());
  if (!samples.first_error.empty()) std::printf("  first error: %s\n", samples.first_error.c_str());
  for (auto& [kind, v] : samples.ms) {
    std::printf("  %-7s n=%-6zu p50 %.2f ms  p90 %.2f ms  p99 %.2f ms  max %.2f ms\n", kind.c_str(),
                v.size(), Percentile(v, 0.5), Percentile(v, 0.9), Percentile(v, 0.99),
                *std::max_element(v.begin(), v.end()));
  }
  int complete = 0;
  for (auto& a : added) complete += a >= creates ? 1 : 0;
  std::printf("  watchers that saw all %lld creates: %d of %d\n", static_cast<long long>(creates),
              complete, watchers);
  return samples.errors == 0 && complete == watchers ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: api_load URL [CLIENTS] [WATCHERS] [REQUESTS_PER_CLIENT]\n");
    return 2;
  }
  std::string url = argv[1];
  int clients = argc > 2 ? std::atoi(argv[2]) : 200;
  int watchers = argc > 3 ? std::atoi(argv[3]) : 50;
  int per_client = argc > 4 ? std::atoi(argv[4]) : 30;
  const std::string ns = "/api/v1/namespaces/default/configmaps";
  // A server that does not answer ends the run at once: the watchers below
  // would otherwise never all be watching.
  if (auto probe = MakeClient(url); !probe->is_valid() || !probe->Get("/healthz")) {
    std::fprintf(stderr, "api_load: no server answers at %s\n", url.c_str());
    return 1;
  }
  // Watchers first.
  std::atomic<int> watching{0};
  std::vector<std::atomic<int>> added(static_cast<size_t>(watchers));
  std::atomic<bool> done{false};
  std::vector<std::thread> watch_threads;
  for (int w = 0; w < watchers; ++w) {
    watch_threads.emplace_back(
        [&, w] { WatchConfigMaps(url, ns, watching, added[static_cast<size_t>(w)], done); });
  }
  while (watching < watchers) std::this_thread::yield();
  Samples samples;
  auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] { CreateGetAndList(url, ns, c, per_client, samples); });
  }
  for (std::thread& t : threads) t.join();
  double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  // Every watcher sees every create, within a deadline.
  int64_t creates = static_cast<int64_t>(clients) * per_client;
  auto deadline = Clock::now() + std::chrono::seconds(30);
  auto all_seen = [&] {
    for (auto& a : added) {
      if (a < creates) return false;
    }
    return true;
  };
  while (!all_seen() && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  done = true;
  for (std::thread& t : watch_threads) t.join();
  return Report(clients, watchers, seconds, samples, added, creates);
}
