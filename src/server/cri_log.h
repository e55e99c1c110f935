// Container logs as the kubelet keeps them (/var/log/pods/<namespace>_<pod>_
// <uid>/<container>/<restart>.log, in the CRI format: one
// "<RFC 3339 time with nanoseconds> <stdout|stderr> <F|P> <text>" line
// per line of output, P for a piece of a longer line), rendered as the
// kubelet answers `pods/log`: the text, each line prefixed with its time
// when timestamps are asked for, from sinceTime on.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace trainyard::server {

struct CriRender {
  bool timestamps = false;
  int64_t since_ns = 0;  // lines stamped before this are left out (0: none)
};

// Appends the log text of the whole lines of `data` to `out`; returns how
// much of `data` they take (through its last newline; the rest is a line
// still being written). A line not in the CRI format is shown as it is.
size_t RenderCriLines(std::string_view data, const CriRender& render, std::string& out);

// Where an API-only server finds a container run's log under `dir`, laid
// out as the kubelet lays out /var/log/pods.
std::string CriLogPath(const std::string& dir, const std::string& namespace_,
                       const std::string& pod, const std::string& uid, const std::string& container,
                       int run);

}  // namespace trainyard::server
