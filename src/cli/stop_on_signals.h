// Signals that ask an engine to stop, as `trainyard run` and `server` take
// them.
#pragma once

#include <initializer_list>

#include "engine/engine.h"

namespace trainyard::cli {

// While it lives, each of `signals` asks `engine` to stop (the loop then
// stops every replica, each with its grace period). Afterwards they do
// nothing: the handlers stay, but find no engine.
class StopOnSignals {
 public:
  StopOnSignals(engine::Engine& engine, std::initializer_list<int> signals);
  ~StopOnSignals();
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;
};

}  // namespace trainyard::cli
