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

}  // namespace trainyard::runtime
