#include "cli/stop_on_signals.h"

#include <signal.h>

#include <atomic>

namespace trainyard::cli {
namespace {

// A handler can reach only globals; RequestStop is async-signal-safe.
std::atomic<engine::Engine*> g_engine{nullptr};

void OnSignal(int) {
  if (engine::Engine* e = g_engine.load()) e->RequestStop();
}

}  // namespace

StopOnSignals::StopOnSignals(engine::Engine& engine, std::initializer_list<int> signals) {
  g_engine = &engine;
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  for (int sig : signals) sigaction(sig, &action, nullptr);
}

StopOnSignals::~StopOnSignals() { g_engine = nullptr; }

}  // namespace trainyard::cli
