// A pods/exec session, as `kubectl exec` speaks it to kube-apiserver since
// 1.30: a WebSocket whose binary messages each start with a channel byte
// (0 stdin, 1 stdout, 2 stderr, 3 the error channel, 4 terminal resizes;
// v5.channel.k8s.io adds 255, the client closing one of its channels).
// The command runs with its streams relayed, or on a terminal of its own
// (tty); when it ends, what it ended with goes on the error channel as
// the kubelet sends it (a Status: Success, or Failure with reason
// NonZeroExitCode and the exit code), and the socket is closed. A client
// that goes ends the command, and all it started.
#pragma once

#include <atomic>
#include <string>
#include <string_view>

#include "server/connection.h"
#include "server/handler.h"

namespace trainyard::server {

// The channel protocol to answer with: the first of those offered (the
// Sec-WebSocket-Protocol values, comma-separated) that is spoken here;
// empty when none is.
std::string PickExecProtocol(std::string_view offered);

// The Status the error channel carries for a command that exited with
// `exit_code` (128 + the signal for one killed).
std::string ExecStatus(int exit_code);

// Runs `spec` on `connection`, already answered with 101 in `protocol`,
// until the command and its output end, the client closes, or `stopping`.
void RunExecSession(Connection& connection, const ExecSpec& spec, const std::string& protocol,
                    const std::atomic<bool>& stopping);

}  // namespace trainyard::server
