// trainyard-shim [--as=UID:GID:G1,G2,...] [--sandboxed [--overlay MERGED DATA]] EXIT_FILE PROGRAM
//                ARGV0 [ARG...]
// trainyard-shim --exec [--as=UID:GID:G1,G2,...] ARGV0 [ARG...]
//
// The parent of one replica under `trainyard server`, so that the replica
// outlives a crash of the server and its end is still known: it runs
// PROGRAM (with ARGV0 as its argv[0]), waits for it, writes how it ended to
// EXIT_FILE ("exit N" or "signal N"), then kills what the replica left in
// its process group, itself included. A restarted server finds the shim by
// pid and start time, and reads EXIT_FILE once it is gone.
//
// The shim leads the replica's process group, which the server signals as
// a whole: it ignores SIGTERM, SIGINT, SIGHUP and SIGQUIT so as to outlive
// the replica's graceful stop and record it (one that comes before the
// replica exists is passed on to it). If the shim itself dies, the
// replica gets SIGKILL (PR_SET_PDEATHSIG): nothing is left unsupervised.
//
// It is the replica's child subreaper: whatever the replica starts and
// leaves (a `setsid` daemon, a double fork) becomes the shim's child, not
// init's, so when the replica ends the shim kills every descendant, not
// only its process group, as a container's processes end with it.
// ShimKillSignal() (shim_protocol.h) asks it to do so at once: trainyard
// sends it when a grace period runs out, and under `trainyard run` it is
// the shim's PDEATHSIG, so a crash of trainyard ends the replica too.
//
// With --as, the replica runs as that user and those groups while the
// shim stays root: the replica can neither signal the shim nor forge the
// exit file (which lies where it cannot write).
//
// With --sandboxed, PROGRAM is bubblewrap (bwrap), given `--info-fd
// kSandboxInfoFd`, whose own program is `trainyard-shim --exec` and then
// the replica's: the replica runs in namespaces of its own. bwrap stays,
// as the parent that waits for the replica inside, and would die of the
// group's SIGTERM at once, ending the replica's graceful stop: so it is
// started with the stop signals blocked, and `--exec` unblocks them just
// before the replica's program, which it runs as the user its --as names
// (bwrap, like the shim, stays trainyard's), looked up in the replica's
// own PATH inside the sandbox. bwrap exits with the replica's exit code,
// or 128 + the signal that killed it, which is recorded as that signal.
// Its --info-fd names the replica's pid, for OnStop.
//
// With --overlay, the replica's root is an image's: before bwrap, the
// child enters a mount namespace of its own and mounts an overlay at
// MERGED (DATA: overlayfs's lowerdir=...,upperdir=...,workdir=...), which
// bwrap binds as "/". The mount lives as long as the namespace: nothing is
// left mounted when the replica ends, however it ends.
//
// Only libc, and nothing that allocates after fork: it starts with every
// replica, so it must start fast.
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "runtime/local/shim_protocol.h"

namespace {

constexpr int kStopSignals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};

volatile sig_atomic_t g_replica = 0;  // the shim's child
// The replica's own process: the child, or in a sandbox bwrap's child.
volatile sig_atomic_t g_program = 0;

// A stop sent to the group reaches the replica through it. One that left
// the group (setsid) is sent it from here, so that it may stop gracefully
// as well; one still in it is not sent it twice.
void OnStop(int sig) {
  pid_t program = g_program;
  if (program > 0 && getpgid(program) != getpgrp()) kill(program, sig);
}

// ShimKillSignal(): the replica goes now; its end is recorded as any other,
// then everything it left is killed (KillDescendants).
void OnKill(int) {
  if (g_replica > 0) kill(g_replica, SIGKILL);
}

// The parent pid in /proc/<pid>/stat (field 4, after the command in
// parentheses, which may hold anything); -1 when it cannot be read.
pid_t ParentOf(const char* pid) {
  char path[sizeof("/proc//stat") + NAME_MAX];  // `pid` is a /proc entry's name
  snprintf(path, sizeof(path), "/proc/%s/stat", pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char stat[512];
  ssize_t n = read(fd, stat, sizeof(stat) - 1);
  close(fd);
  if (n <= 0) return -1;
  stat[n] = '\0';
  const char* close_paren = strrchr(stat, ')');
  char state = 0;
  int parent = -1;
  if (close_paren == nullptr || sscanf(close_paren + 1, " %c %d", &state, &parent) != 2) return -1;
  return parent;
}

// SIGKILLs every child of the shim; says whether there was one.
bool KillChildren() {
  pid_t self = getpid();
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return false;
  bool any = false;
  while (const dirent* entry = readdir(proc)) {
    if (entry->d_name[0] < '1' || entry->d_name[0] > '9') continue;
    if (ParentOf(entry->d_name) != self) continue;
    // Safe from pid reuse: a child's pid is the shim's until it reaps it.
    kill(static_cast<pid_t>(atoi(entry->d_name)), SIGKILL);
    any = true;
  }
  closedir(proc);
  return any;
}

// Kills and reaps every descendant: each one killed hands its own
// children to the shim (the subreaper), so this repeats until the shim
// has no child left.
void KillDescendants() {
  for (;;) {
    bool killed = KillChildren();
    // One killed child at least ends soon: wait for it. Otherwise look
    // again unless none is left (one may have been handed over since).
    pid_t pid = waitpid(-1, nullptr, killed ? 0 : WNOHANG);
    if (pid < 0 && errno == ECHILD) return;
    while (waitpid(-1, nullptr, WNOHANG) > 0) {
    }
  }
}

// How the replica ended: `status` is its own, or in a sandbox bwrap's, who
// exits with 128 + the signal that killed the replica.
void WriteExit(const char* path, int status, bool sandboxed) {
  char text[32];
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  int n = sandboxed && code > 128 && code < 128 + NSIG
              ? snprintf(text, sizeof(text), "signal %d\n", code - 128)
          : code >= 0 ? snprintf(text, sizeof(text), "exit %d\n", code)
                      : snprintf(text, sizeof(text), "signal %d\n", WTERMSIG(status));
  // One small write to a new file: whole or absent, never torn, even if the
  // shim is killed in between.
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  [[maybe_unused]] ssize_t written = write(fd, text, static_cast<size_t>(n));
  close(fd);
}

struct User {
  bool set = false;
  uid_t uid = 0;
  gid_t gid = 0;
  gid_t groups[256];
  size_t n_groups = 0;
};

// "--as=UID:GID:G1,G2,...", as trainyard writes it.
bool ParseUser(const char* arg, User& user) {
  char* end = nullptr;
  user.uid = static_cast<uid_t>(strtoul(arg + 5, &end, 10));
  if (*end != ':') return false;
  user.gid = static_cast<gid_t>(strtoul(end + 1, &end, 10));
  if (*end != ':') return false;
  while (*end != '\0' && user.n_groups < 256) {
    user.groups[user.n_groups++] = static_cast<gid_t>(strtoul(end + 1, &end, 10));
    if (*end != ',' && *end != '\0') return false;
  }
  user.set = true;
  return true;
}

bool SwitchTo(const User& user) {
  return setgroups(user.n_groups, user.groups) == 0 &&
         setresgid(user.gid, user.gid, user.gid) == 0 &&
         setresuid(user.uid, user.uid, user.uid) == 0;
}

// `trainyard-shim --exec [--as=...] ARGV0 [ARG...]`, bwrap's program in a
// sandbox: the replica's program, as its user, with the stop signals bwrap
// was started with blocked unblocked (one that came meanwhile lands on the
// program), looked up in the replica's PATH inside the
// sandbox, and only stdin, stdout and stderr open, as a container's
// process starts.
int ExecReplica(char** argv) {
  User user;
  if (argv[0] != nullptr && strncmp(argv[0], "--as=", 5) == 0) {
    if (!ParseUser(argv[0], user)) {
      fprintf(stderr, "trainyard-shim: bad %s\n", argv[0]);
      return 128;
    }
    ++argv;
  }
  if (argv[0] == nullptr) {
    fprintf(stderr, "trainyard-shim --exec: nothing to run\n");
    return 128;
  }
  pid_t bwrap = getppid();
  if (user.set && !SwitchTo(user)) {
    fprintf(stderr, "trainyard-shim: cannot run as user %u: %s\n", user.uid, strerror(errno));
    return 128;
  }
  // A change of user cleared bwrap's --die-with-parent: set again.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != bwrap) return 137;  // bwrap died before the line above
  for (int sig : kStopSignals) signal(sig, SIG_DFL);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  close_range(3, ~0U, 0);
  execvp(argv[0], argv);
  fprintf(stderr, "trainyard: cannot run %s: %s\n", argv[0], strerror(errno));
  return 128;  // the kubelet's exit code for a container that cannot start
}

// The replica's pid in a sandbox, from bwrap's --info-fd ("child-pid": N
// in a JSON object, its first member); 0 when bwrap ended before it said
// (it failed). Read to its end: bwrap writes on after the pid, and would
// die of SIGPIPE on a pipe closed early.
pid_t ReadSandboxedPid(int fd) {
  char info[256];
  char rest[256];
  size_t used = 0;
  for (;;) {
    bool full = used == sizeof(info) - 1;
    ssize_t n =
        full ? read(fd, rest, sizeof(rest)) : read(fd, info + used, sizeof(info) - 1 - used);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (!full) used += static_cast<size_t>(n);
  }
  info[used] = '\0';
  const char* key = "\"child-pid\":";
  const char* at = strstr(info, key);
  if (at == nullptr) return 0;
  long pid = strtol(at + strlen(key), nullptr, 10);
  return pid > 0 ? static_cast<pid_t>(pid) : 0;
}

// The image's root, mounted in a mount namespace of the replica's own.
bool MountRoot(const char* merged, const char* data) {
  if (unshare(CLONE_NEWNS) != 0) return false;
  // Private: neither the overlay nor bwrap's mounts reach the machine's.
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return false;
  return mount("overlay", merged, "overlay", 0, data) == 0;
}

struct Overlay {
  const char* merged = nullptr;  // unset: the machine's root
  const char* data = nullptr;
};

// The forked child: becomes the replica (through bwrap when sandboxed), as
// `user` if given, killed with the shim if the shim dies.
[[noreturn]] void RunReplica(const User& user, bool sandboxed, const Overlay& overlay,
                             const int info[2], const sigset_t& stops, pid_t shim,
                             const char* program, char** args) {
  // Before the death signal: a change of user clears it.
  if (user.set && !SwitchTo(user)) {
    fprintf(stderr, "trainyard-shim: cannot run as user %u: %s\n", user.uid, strerror(errno));
    _exit(128);
  }
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != shim) _exit(137);  // the shim died before the line above
  if (overlay.merged != nullptr && !MountRoot(overlay.merged, overlay.data)) {
    fprintf(stderr, "trainyard-shim: cannot mount the image's root at %s: %s\n", overlay.merged,
            strerror(errno));
    _exit(128);
  }
  if (sandboxed) {
    close(info[0]);
    if (info[1] != trainyard::runtime::kSandboxInfoFd) {
      dup2(info[1], trainyard::runtime::kSandboxInfoFd);
      close(info[1]);
    }
  } else {
    // Whatever stop reached it since the fork is pending, and lands now.
    sigprocmask(SIG_UNBLOCK, &stops, nullptr);
  }
  // In a sandbox they stay blocked, through bwrap (which never unblocks
  // them) to `--exec`, which unblocks them before the replica's program:
  // a stop that comes during the sandbox's set-up lands then.
  execv(program, args);
  fprintf(stderr, "trainyard-shim: cannot run %s: %s\n", program, strerror(errno));
  _exit(128);  // the kubelet's exit code for a container that cannot start
}

// Stops sent to the group before the fork reached only the shim: passed on
// to the replica. Later ones reach it through the group (or OnStop); the
// shim outlives them to record how it ended.
void ForwardStops(const sigset_t& stops) {
  sigset_t pending;
  sigpending(&pending);
  struct sigaction on_stop {};
  on_stop.sa_handler = OnStop;
  on_stop.sa_flags = SA_RESTART;
  for (int sig : kStopSignals) {
    if (sigismember(&pending, sig) && g_program > 0) kill(g_program, sig);
    signal(sig, SIG_IGN);  // drops what was pending: passed on just above
    sigaction(sig, &on_stop, nullptr);
  }
  struct sigaction on_kill {};
  on_kill.sa_handler = OnKill;
  sigaction(trainyard::runtime::ShimKillSignal(), &on_kill, nullptr);
  sigprocmask(SIG_UNBLOCK, &stops, nullptr);  // a kill asked for already lands now
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 2 && strcmp(argv[1], "--exec") == 0) return ExecReplica(argv + 2);
  User user;
  if (argc > 1 && strncmp(argv[1], "--as=", 5) == 0) {
    if (!ParseUser(argv[1], user)) {
      fprintf(stderr, "trainyard-shim: bad %s\n", argv[1]);
      return 2;
    }
    ++argv;
    --argc;
  }
  bool sandboxed = argc > 1 && strcmp(argv[1], "--sandboxed") == 0;
  if (sandboxed) {
    ++argv;
    --argc;
  }
  Overlay overlay;
  if (sandboxed && argc > 3 && strcmp(argv[1], "--overlay") == 0) {
    overlay = {.merged = argv[2], .data = argv[3]};
    argv += 3;
    argc -= 3;
  }
  if (argc < 4) {
    fprintf(stderr,
            "usage: trainyard-shim [--as=UID:GID:GROUPS] [--sandboxed [--overlay MERGED DATA]] "
            "EXIT_FILE PROGRAM ARGV0 [ARG...]\n"
            "       trainyard-shim --exec [--as=UID:GID:GROUPS] ARGV0 [ARG...]\n");
    return 2;
  }
  const char* exit_file = argv[1];
  const char* program = argv[2];
  // Where bwrap says which pid the replica has.
  int info[2] = {-1, -1};
  if (sandboxed && pipe(info) != 0) {
    fprintf(stderr, "trainyard-shim: pipe: %s\n", strerror(errno));
    return 128;
  }
  // Blocked, not ignored, until the replica exists: a stop that comes
  // before the fork is forwarded to it below, not lost.
  sigset_t stops;
  sigemptyset(&stops);
  for (int sig : kStopSignals) sigaddset(&stops, sig);
  sigaddset(&stops, trainyard::runtime::ShimKillSignal());
  sigprocmask(SIG_BLOCK, &stops, nullptr);
  // Where the replica's orphans go, so that they can be found and ended.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  pid_t shim = getpid();
  pid_t child = fork();
  if (child < 0) {
    fprintf(stderr, "trainyard-shim: fork: %s\n", strerror(errno));
    return 128;
  }
  if (child == 0) RunReplica(user, sandboxed, overlay, info, stops, shim, program, argv + 3);
  g_replica = child;
  g_program = child;
  if (sandboxed) {
    close(info[1]);
    g_program = ReadSandboxedPid(info[0]);
    close(info[0]);
  }
  ForwardStops(stops);
  int status = 0;
  for (;;) {
    pid_t pid = waitpid(-1, &status, 0);
    if (pid == child) break;
    // Otherwise an orphan of the replica's that ended, reaped; or EINTR.
    if (pid < 0 && errno != EINTR) return 128;
  }
  WriteExit(exit_file, status, sandboxed);
  KillDescendants();  // what the replica left anywhere
  kill(0, SIGKILL);   // what joined its group from outside (trainyard exec), and the shim
  return 0;
}
