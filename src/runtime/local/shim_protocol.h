// What trainyard and trainyard-shim agree on, besides the shim's argv.
// Only libc: the shim includes it too.
#pragma once

#include <signal.h>

namespace trainyard::runtime {

// Sent to a shim alone, never to its group: "kill the replica and all it
// started, now". The shim is their subreaper, so it can find every one,
// setsid and double-forked daemons included, which a group kill misses;
// SIGKILL to the group would kill the shim first and set them free. Also
// the shim's PDEATHSIG when it must end with trainyard (`trainyard run`).
// A real-time signal: no replica sends one to its group by accident.
inline int ShimKillSignal() { return SIGRTMIN + 3; }

// The descriptor on which a --sandboxed shim's bwrap is to write its
// --info-fd JSON (the replica's pid): trainyard puts `--info-fd 3` in
// bwrap's arguments, and the shim opens it there.
inline constexpr int kSandboxInfoFd = 3;

// Where the user namespace a sandbox joins is open (ProcessSpec::userns),
// from trainyard's child through the shim to bwrap: `--userns 5`.
inline constexpr int kSandboxUsernsFd = 5;

}  // namespace trainyard::runtime
