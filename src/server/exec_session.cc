#include "server/exec_session.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <optional>

#include "api/json.h"
#include "common/strings.h"
#include "server/websocket.h"

namespace trainyard::server {
namespace {

constexpr char kStdin = 0, kStdout = 1, kStderr = 2, kErrorChannel = 3, kResize = 4;
constexpr unsigned char kCloseChannel = 255;  // v5: the client closes one of its channels
constexpr size_t kMaxMessage = 1 << 20;
// Bytes for the command's stdin not yet taken: past this, nothing more is
// read from the client until it takes them.
constexpr size_t kMaxPendingStdin = 1 << 20;

// The command, and its ends of its streams (-1: not asked for).
struct Child {
  pid_t pid = -1;
  int in = -1;
  int out = -1;
  int err = -1;
  bool own_group = false;  // its process group is its own: end it whole
};

void CloseFd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

// A terminal's master end and the path of its slave.
Result<std::pair<int, std::string>> OpenTerminal() {
  int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  char name[128];
  if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0 ||
      ptsname_r(master, name, sizeof(name)) != 0) {
    if (master >= 0) close(master);
    return UnavailableError(fmt::format("cannot open a terminal: {}", std::strerror(errno)));
  }
  return std::pair{master, std::string(name)};
}

// The forked child: the command, on the session's terminal or pipes, in a
// group of its own. Only async-signal-safe calls from here to execve: this
// process is a copy of a threaded one.
[[noreturn]] void ExecChild(const ExecSpec& spec, const std::string& slave, int pipes[3][2],
                            char** argv, char** envp) {
  // The server's signal state (SIGPIPE ignored, signals blocked) is not the
  // command's.
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) sigaction(sig, &default_action, nullptr);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (spec.tty) {
    setsid();
    int fd = open(slave.c_str(), O_RDWR);  // the session's controlling terminal
    if (fd < 0) _exit(127);
    ioctl(fd, TIOCSCTTY, 0);
    for (int i = 0; i < 3; ++i) dup2(fd, i);
  } else {
    setpgid(0, 0);
    int null = open("/dev/null", O_RDWR);
    dup2(pipes[0][0] >= 0 ? pipes[0][0] : null, 0);
    dup2(pipes[1][1] >= 0 ? pipes[1][1] : null, 1);
    dup2(pipes[2][1] >= 0 ? pipes[2][1] : null, 2);
  }
  // Nothing of the server's (its sockets, its store) reaches the command.
  if (syscall(SYS_close_range, 3, ~0U, 0) != 0) {
    for (int fd = 3; fd < 65536; ++fd) close(fd);  // a kernel before 5.9
  }
  execve(argv[0], argv, envp);
  _exit(127);
}

Result<Child> Spawn(const ExecSpec& spec) {
  std::vector<char*> argv;
  for (const std::string& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // `trainyard exec` gives the command the replica's environment; a
  // terminal's kind is the session's to say, as a container runtime does.
  const char* our_path = std::getenv("PATH");
  std::string path = std::string("PATH=") + (our_path != nullptr ? our_path : "/usr/bin:/bin");
  std::string term = "TERM=xterm";
  std::vector<char*> envp = {path.data()};
  if (spec.tty) envp.push_back(term.data());
  envp.push_back(nullptr);

  int pipes[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}};
  std::string slave;
  int master = -1;
  if (spec.tty) {
    ASSIGN_OR_RETURN(auto terminal, OpenTerminal());
    master = terminal.first;
    slave = terminal.second;
  } else {
    bool wanted[3] = {spec.stdin, spec.stdout, spec.stderr};
    for (int i = 0; i < 3; ++i) {
      if (wanted[i] && pipe2(pipes[i], O_CLOEXEC) != 0) {
        for (auto& p : pipes) {
          CloseFd(p[0]);
          CloseFd(p[1]);
        }
        return UnavailableError(fmt::format("cannot make a pipe: {}", std::strerror(errno)));
      }
    }
  }
  pid_t pid = fork();
  if (pid == 0) ExecChild(spec, slave, pipes, argv.data(), envp.data());
  Child child{.pid = pid, .own_group = true};
  if (spec.tty) {
    child.out = master;
    child.in = dup(master);
    fcntl(child.in, F_SETFD, FD_CLOEXEC);
  } else {
    CloseFd(pipes[0][0]);
    CloseFd(pipes[1][1]);
    CloseFd(pipes[2][1]);
    child.in = pipes[0][1];
    child.out = pipes[1][0];
    child.err = pipes[2][0];
  }
  if (pid < 0) {
    std::string why = std::strerror(errno);
    CloseFd(child.in);
    CloseFd(child.out);
    CloseFd(child.err);
    return UnavailableError(fmt::format("cannot start the command: {}", why));
  }
  for (int fd : {child.in, child.out, child.err}) {
    if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  return child;
}

int ExitCodeOf(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

// One session's state: the child, the client, and what is between them.
class Session {
 public:
  Session(Connection& connection, const ExecSpec& spec, bool v5, Child child)
      : connection_(connection), spec_(spec), v5_(v5), child_(child), reader_(kMaxMessage) {}
  ~Session();

  void Run(const std::atomic<bool>& stopping);

 private:
  enum class Got { kData, kNothing, kEnd };

  bool Send(char channel, std::string_view data);
  void FromClient();
  void Handle(const websocket::Message& message);
  // Relays what `fd` has on `channel`; closes it at its end.
  Got Relay(int& fd, char channel);
  // Relays what the outputs hold now, without waiting for more.
  void Drain();
  void FeedStdin();
  void Reap(bool wait);

  Connection& connection_;
  const ExecSpec& spec_;
  bool v5_;
  Child child_;
  websocket::Reader reader_;
  std::string to_stdin_;
  bool close_stdin_ = false;  // once what is pending is taken
  bool client_open_ = true;
  std::optional<int> exit_code_;
};

Session::~Session() {
  if (!exit_code_) {
    // The client went first: the command, and what it started, go too.
    if (child_.own_group) kill(-child_.pid, SIGKILL);
    kill(child_.pid, SIGKILL);
    Reap(true);
  }
  CloseFd(child_.in);
  CloseFd(child_.out);
  CloseFd(child_.err);
}

void Session::Reap(bool wait) {
  int status = 0;
  pid_t done;
  do {
    done = waitpid(child_.pid, &status, wait ? 0 : WNOHANG);
  } while (done < 0 && errno == EINTR);
  if (done == child_.pid) exit_code_ = ExitCodeOf(status);
}

bool Session::Send(char channel, std::string_view data) {
  std::string payload(1, channel);
  payload.append(data);
  if (!connection_.WriteAll(websocket::Frame(websocket::kBinary, payload))) client_open_ = false;
  return client_open_;
}

void Session::Handle(const websocket::Message& message) {
  switch (message.opcode) {
    case websocket::kPing:
      if (!connection_.WriteAll(websocket::Frame(websocket::kPong, message.payload))) {
        client_open_ = false;
      }
      return;
    case websocket::kClose:
      connection_.WriteAll(websocket::CloseFrame(1000));  // its close, answered
      client_open_ = false;
      return;
    case websocket::kBinary:
    case websocket::kText:
      break;
    default:
      return;
  }
  if (message.payload.empty()) return;
  char channel = message.payload[0];
  std::string_view data = std::string_view(message.payload).substr(1);
  if (channel == kStdin && child_.in >= 0 && !close_stdin_) {
    to_stdin_.append(data);
  } else if (channel == kResize && spec_.tty) {
    api::Json size = api::Json::parse(data, nullptr, /*allow_exceptions=*/false);
    winsize ws{.ws_row = static_cast<unsigned short>(api::IntAt(size, {"Height"})),
               .ws_col = static_cast<unsigned short>(api::IntAt(size, {"Width"})),
               .ws_xpixel = 0,
               .ws_ypixel = 0};
    if (ws.ws_row > 0 && ws.ws_col > 0) ioctl(child_.out, TIOCSWINSZ, &ws);
  } else if (v5_ && static_cast<unsigned char>(channel) == kCloseChannel && !data.empty() &&
             data[0] == kStdin && !spec_.tty) {
    close_stdin_ = true;  // a terminal has no end of input to send: it is kept
  }
}

void Session::FromClient() {
  char buffer[64 * 1024];
  ssize_t n = connection_.ReadFor(buffer, sizeof(buffer), std::chrono::milliseconds(0));
  if (n == -2) return;
  if (n <= 0) {
    client_open_ = false;
    return;
  }
  Result<std::vector<websocket::Message>> messages =
      reader_.Feed(std::string_view(buffer, static_cast<size_t>(n)));
  if (!messages.ok()) {
    connection_.WriteAll(websocket::CloseFrame(1002));  // a protocol error
    client_open_ = false;
    return;
  }
  for (const websocket::Message& m : *messages) Handle(m);
}

Session::Got Session::Relay(int& fd, char channel) {
  char buffer[32 * 1024];
  ssize_t n = read(fd, buffer, sizeof(buffer));
  if (n > 0) {
    Send(channel, std::string_view(buffer, static_cast<size_t>(n)));
    return Got::kData;
  }
  if (n < 0 && (errno == EAGAIN || errno == EINTR)) return Got::kNothing;
  // 0, or EIO from a terminal whose every process has gone: its end.
  CloseFd(fd);
  return Got::kEnd;
}

void Session::Drain() {
  // Bounded: a daemon the command left may write on and on.
  constexpr int kMaxReads = 64;
  for (auto [fd, channel] : {std::pair{&child_.out, kStdout}, std::pair{&child_.err, kStderr}}) {
    for (int i = 0; i < kMaxReads && *fd >= 0 && client_open_; ++i) {
      if (Relay(*fd, channel) != Got::kData) break;
    }
  }
}

void Session::FeedStdin() {
  while (!to_stdin_.empty() && child_.in >= 0) {
    ssize_t n = write(child_.in, to_stdin_.data(), to_stdin_.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) {  // the command closed its stdin
      to_stdin_.clear();
      CloseFd(child_.in);
      return;
    }
    to_stdin_.erase(0, static_cast<size_t>(n));
  }
  if (close_stdin_ && to_stdin_.empty() && !spec_.tty) CloseFd(child_.in);
}

void Session::Run(const std::atomic<bool>& stopping) {
  while (client_open_ && !stopping) {
    if (!exit_code_) Reap(false);
    if (exit_code_) {
      // What its output still holds is sent without waiting for more: a
      // daemon it left may keep the pipe open.
      Drain();
      break;
    }
    pollfd fds[4];
    int n = 0;
    auto add = [&](int fd, short events) {
      fds[n] = {.fd = fd, .events = events, .revents = 0};
      return n++;
    };
    int client = to_stdin_.size() < kMaxPendingStdin ? add(connection_.socket(), POLLIN) : -1;
    int out = child_.out >= 0 ? add(child_.out, POLLIN) : -1;
    int err = child_.err >= 0 ? add(child_.err, POLLIN) : -1;
    int in = !to_stdin_.empty() && child_.in >= 0 ? add(child_.in, POLLOUT) : -1;
    // The exit is looked for as often.
    int timeout = client >= 0 && connection_.HasBuffered() ? 0 : 100;
    if (poll(fds, static_cast<nfds_t>(n), timeout) < 0 && errno != EINTR) break;
    auto ready = [&](int i) { return i >= 0 && fds[i].revents != 0; };
    if (ready(client) || (client >= 0 && connection_.HasBuffered())) FromClient();
    if (ready(out)) Relay(child_.out, kStdout);
    if (ready(err)) Relay(child_.err, kStderr);
    if (ready(in) || close_stdin_) FeedStdin();
  }
  // A client that went, or a server stopping: the destructor ends the
  // command; the client hears nothing more.
  if (!client_open_ || !exit_code_) return;
  Send(kErrorChannel, ExecStatus(*exit_code_));
  connection_.WriteAll(websocket::CloseFrame(1000));
  connection_.Linger(std::chrono::seconds(1));
}

}  // namespace

std::string PickExecProtocol(std::string_view offered) {
  for (const char* spoken : {"v5.channel.k8s.io", "v4.channel.k8s.io"}) {
    for (const std::string& item : SplitNonEmpty(offered, ',')) {
      if (Trim(item) == spoken) return spoken;
    }
  }
  return "";
}

std::string ExecStatus(int exit_code) {
  api::Json status = {{"metadata", api::Json::object()}, {"status", "Success"}};
  if (exit_code != 0) {
    status["status"] = "Failure";
    status["message"] =
        fmt::format("command terminated with non-zero exit code: exit status {}", exit_code);
    status["reason"] = "NonZeroExitCode";
    status["details"] = {
        {"causes", {{{"reason", "ExitCode"}, {"message", std::to_string(exit_code)}}}}};
  }
  return status.dump();
}

void RunExecSession(Connection& connection, const ExecSpec& spec, const std::string& protocol,
                    const std::atomic<bool>& stopping) {
  Result<Child> child = Spawn(spec);
  if (!child.ok()) {
    std::string message(child.status().message());
    connection.WriteAll(websocket::Frame(
        websocket::kBinary,
        std::string(1, kErrorChannel) + api::Json{{"metadata", api::Json::object()},
                                                  {"status", "Failure"},
                                                  {"message", message},
                                                  {"reason", "InternalError"}}
                                            .dump()));
    connection.WriteAll(websocket::CloseFrame(1011));
    connection.Linger(std::chrono::seconds(1));
    return;
  }
  Session session(connection, spec, protocol == "v5.channel.k8s.io", *child);
  session.Run(stopping);
}

}  // namespace trainyard::server
