// trainyard-shim [--as=UID:GID:G1,G2,...] EXIT_FILE PROGRAM ARGV0 [ARG...]
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
// With --as, the replica runs as that user and those groups while the
// shim stays root: the replica can neither signal the shim nor forge the
// exit file (which lies where it cannot write).
//
// Only libc, and nothing that allocates after fork: it starts with every
// replica, so it must start fast.
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

constexpr int kIgnored[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};

void WriteExit(const char* path, int status) {
  char text[32];
  int n = WIFEXITED(status) ? snprintf(text, sizeof(text), "exit %d\n", WEXITSTATUS(status))
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

}  // namespace

int main(int argc, char** argv) {
  User user;
  if (argc > 1 && strncmp(argv[1], "--as=", 5) == 0) {
    if (!ParseUser(argv[1], user)) {
      fprintf(stderr, "trainyard-shim: bad %s\n", argv[1]);
      return 2;
    }
    ++argv;
    --argc;
  }
  if (argc < 4) {
    fprintf(stderr,
            "usage: trainyard-shim [--as=UID:GID:GROUPS] EXIT_FILE PROGRAM ARGV0 [ARG...]\n");
    return 2;
  }
  const char* exit_file = argv[1];
  const char* program = argv[2];
  // Blocked, not ignored, until the replica exists: a stop that comes
  // before the fork is forwarded to it below, not lost.
  sigset_t stops;
  sigemptyset(&stops);
  for (int sig : kIgnored) sigaddset(&stops, sig);
  sigprocmask(SIG_BLOCK, &stops, nullptr);
  pid_t shim = getpid();
  pid_t child = fork();
  if (child < 0) {
    fprintf(stderr, "trainyard-shim: fork: %s\n", strerror(errno));
    return 128;
  }
  if (child == 0) {
    // Before the death signal: a change of user clears it.
    if (user.set && !SwitchTo(user)) {
      fprintf(stderr, "trainyard-shim: cannot run as user %u: %s\n", user.uid, strerror(errno));
      _exit(128);
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != shim) _exit(137);  // the shim died before the line above
    // Whatever stop reached it since the fork is pending, and lands now.
    sigprocmask(SIG_UNBLOCK, &stops, nullptr);
    execv(program, argv + 3);
    fprintf(stderr, "trainyard-shim: cannot run %s: %s\n", program, strerror(errno));
    _exit(128);  // the kubelet's exit code for a container that cannot start
  }
  // Stops sent to the group before the fork reached only the shim: pass
  // them on. Later ones reach the replica through the group; the shim
  // outlives them to record how it ended.
  sigset_t pending;
  sigpending(&pending);
  for (int sig : kIgnored) {
    if (sigismember(&pending, sig)) kill(child, sig);
    signal(sig, SIG_IGN);
  }
  sigprocmask(SIG_UNBLOCK, &stops, nullptr);
  int status = 0;
  while (waitpid(child, &status, 0) < 0) {
    if (errno != EINTR) return 128;
  }
  WriteExit(exit_file, status);
  kill(0, SIGKILL);  // the replica's leftovers, and the shim: the group is done
  return 0;
}
