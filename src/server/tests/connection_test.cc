// Connections wait for their requests without a thread: clients that send
// slowly or not at all never keep a request from being served, and what
// they may take is bounded by deadlines.
#include "server/connection.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

namespace trainyard::server {
namespace {

using std::chrono::milliseconds;

class ConnectionTest : public ::testing::Test {
 protected:
  void StartServer(ConnectionLimits limits) {
    server_ = std::make_unique<ConnectionServer>(limits);
    server_->Get("/x", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("x", "text/plain");
    });
    server_->Post("/echo", [](const httplib::Request& req, httplib::Response& res) {
      res.set_content(req.body, "text/plain");
    });
    port_ = server_->bind_to_any_port("127.0.0.1");
    ASSERT_GT(port_, 0);
    ASSERT_TRUE(server_->Start().ok());
    listener_ = std::thread([this] { server_->listen_after_bind(); });
  }
  void TearDown() override {
    if (server_ == nullptr) return;
    server_->stop();
    listener_.join();
    server_->StopServing();
  }

  int Connect() const {
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{.sin_family = AF_INET, .sin_port = htons(static_cast<uint16_t>(port_))};
    inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
    EXPECT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
    return fd;
  }
  static void Send(int fd, std::string_view bytes) {
    ASSERT_EQ(send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  // What arrives on `fd` until it holds `want` or closes, waiting up to
  // 10 s in all.
  static std::string ReadUntil(int fd, std::string_view want) {
    std::string got;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (got.find(want) == std::string::npos && std::chrono::steady_clock::now() < deadline) {
      pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
      if (poll(&p, 1, 100) <= 0) continue;
      char buffer[4096];
      ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
      if (n <= 0) break;
      got.append(buffer, static_cast<size_t>(n));
    }
    return got;
  }
  // Whether the server closes `fd` within 10 s.
  static bool ClosedByServer(int fd) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
      if (poll(&p, 1, 100) <= 0) continue;
      char buffer[256];
      ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
      if (n <= 0) return true;
    }
    return false;
  }

  std::unique_ptr<ConnectionServer> server_;
  std::thread listener_;
  int port_ = 0;
};

TEST_F(ConnectionTest, ClientsSendingAByteAtATimeHoldNoThreadFromOthers) {
  StartServer({.max_threads = 2});
  std::vector<int> slow;
  for (int i = 0; i < 50; ++i) slow.push_back(Connect());
  // Each keeps sending a byte of a head that never ends, until the
  // request below is answered; with a thread per connection the two
  // threads would be theirs all that time.
  std::atomic<bool> answered{false};
  std::thread trickle([&] {
    for (int round = 0; !answered && round < 200; ++round) {
      for (int fd : slow) (void)send(fd, "X", 1, MSG_NOSIGNAL);
      std::this_thread::sleep_for(milliseconds(50));  // the attacker's pace, not a wait
    }
  });
  int fd = Connect();
  Send(fd, "GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  std::string reply = ReadUntil(fd, "\r\n\r\nx");
  answered = true;
  trickle.join();
  EXPECT_NE(reply.find("200 OK"), std::string::npos) << reply;
  for (int s : slow) close(s);
  close(fd);
}

TEST_F(ConnectionTest, AHeadNotWholeInTimeIsClosedHoweverItTrickles) {
  StartServer({.head_timeout = milliseconds(200)});
  int fd = Connect();
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    for (int i = 0; !stop && i < 400; ++i) {
      (void)send(fd, "X", 1, MSG_NOSIGNAL);
      std::this_thread::sleep_for(milliseconds(20));
    }
  });
  EXPECT_TRUE(ClosedByServer(fd));
  stop = true;
  trickle.join();
  close(fd);
}

TEST_F(ConnectionTest, ABodyNotWholeInTimeIsClosed) {
  StartServer({.body_timeout = milliseconds(200)});
  int fd = Connect();
  Send(fd, "POST /echo HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc");
  EXPECT_TRUE(ClosedByServer(fd));
  close(fd);
}

TEST_F(ConnectionTest, KeptAliveAndPipelinedRequestsAreEachAnswered) {
  StartServer({});
  int fd = Connect();
  Send(fd, "GET /x HTTP/1.1\r\n\r\nPOST /echo HTTP/1.1\r\nContent-Length: 4\r\n\r\npipe");
  std::string both = ReadUntil(fd, "pipe");
  EXPECT_NE(both.find("\r\n\r\nx"), std::string::npos) << both;
  EXPECT_NE(both.find("\r\n\r\npipe"), std::string::npos) << both;
  Send(fd,
       "POST /echo HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n");
  EXPECT_NE(ReadUntil(fd, "abcde").find("abcde"), std::string::npos);
  close(fd);
}

TEST_F(ConnectionTest, ABodyAwaitingContinueIsAskedForOnce) {
  StartServer({});
  int fd = Connect();
  Send(fd, "POST /echo HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n");
  EXPECT_EQ(ReadUntil(fd, "\r\n\r\n"), "HTTP/1.1 100 Continue\r\n\r\n");
  Send(fd, "hello");
  std::string reply = ReadUntil(fd, "hello");
  EXPECT_NE(reply.find("200 OK"), std::string::npos) << reply;
  EXPECT_EQ(reply.find("100 Continue"), std::string::npos) << reply;
  close(fd);
}

TEST_F(ConnectionTest, ARequestThatCannotBeFramedIs400AndClosed) {
  StartServer({});
  int fd = Connect();
  Send(fd, "POST /echo HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n");
  std::string reply = ReadUntil(fd, "\r\n\r\n");
  EXPECT_TRUE(reply.starts_with("HTTP/1.1 400")) << reply;
  EXPECT_TRUE(ClosedByServer(fd));
  close(fd);
}

TEST_F(ConnectionTest, AnOversizedBodyIsRefusedWithoutBeingAwaited) {
  StartServer({.framing = {.max_body_bytes = 16}});
  server_->set_payload_max_length(16);
  int fd = Connect();
  Send(fd, "POST /echo HTTP/1.1\r\nContent-Length: 1000\r\n\r\n");
  std::string reply = ReadUntil(fd, "\r\n\r\n");
  EXPECT_TRUE(reply.starts_with("HTTP/1.1 413")) << reply;
  close(fd);
}

TEST_F(ConnectionTest, AFormsBodyOfAnySizeReachesTheHandlerWhole) {
  StartServer({});
  int fd = Connect();
  std::string body(20'000, 'f');
  Send(fd,
       "POST /echo HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
       "Content-Length: 20000\r\n\r\n" +
           body);
  std::string reply = ReadUntil(fd, body);
  EXPECT_NE(reply.find("200 OK"), std::string::npos) << reply.substr(0, 200);
  close(fd);
}

// Past the bytes it may hold, the reader waits for room: each body is read
// in turn, none lost, and a client that hangs up meanwhile costs nothing.
TEST_F(ConnectionTest, BodiesPastTheBufferBoundWaitForRoomAndAreEachServed) {
  StartServer({.max_buffered_bytes = 8});
  std::vector<int> fds;
  for (int i = 0; i < 4; ++i) fds.push_back(Connect());
  int gone = Connect();
  Send(gone, "POST /echo HTTP/1.1\r\nContent-Length: 100\r\n\r\npart");
  close(gone);
  for (int i = 0; i < 4; ++i) {
    Send(fds[i],
         "POST /echo HTTP/1.1\r\nContent-Length: 13\r\n\r\nbody-number-" + std::to_string(i));
  }
  for (int i = 0; i < 4; ++i) {
    std::string want = "body-number-" + std::to_string(i);
    EXPECT_NE(ReadUntil(fds[i], want).find(want), std::string::npos) << i;
    close(fds[i]);
  }
}

}  // namespace
}  // namespace trainyard::server
