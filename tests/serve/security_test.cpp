// What `accel serve` holds against hostile clients, with no model attached (an authorised request gets the 503 of a
// server that is not ready, which proves it went past the checks): --api-key (every route but /health wants the
// bearer key; a wrong or missing one is 401 with no detail), a client that stops sending is cut off, and so is one
// that dribbles its header or body a byte at a time (--request-timeout), without keeping others waiting.
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <latch>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "serve/embedding_server.hpp"

namespace accel::serve {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

// A socket connected to the server on loopback, with a receive timeout so that a server that never answers fails
// the test rather than hangs it; -1 when it cannot connect.
int connect_to(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval limit{.tv_sec = 10, .tv_usec = 0};
  if (setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit) != 0 ||
      connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool send_all(int fd, std::string_view bytes) {
  return send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(bytes.size());
}

class AuthTest : public ::testing::Test {
 protected:
  static constexpr int kIoTimeoutSeconds = 1;

  void SetUp() override {
    server_ = std::make_unique<EmbeddingServer>(
        ServeOptions{.port = 0, .keep_alive_seconds = 1, .io_timeout_seconds = kIoTimeoutSeconds, .api_key = "s3cret"});
    Result<int> port = server_->start();
    ASSERT_TRUE(port.ok()) << port.status().to_string();
    port_ = *port;
  }
  void TearDown() override { server_->stop(); }

  int post(const httplib::Headers& headers, const char* path = "/v1/embeddings") {
    httplib::Client client("127.0.0.1", port_);
    httplib::Result result = client.Post(path, headers, R"({"input": "hello"})", "application/json");
    return result ? result->status : -1;
  }

  std::unique_ptr<EmbeddingServer> server_;
  int port_ = 0;
};

TEST_F(AuthTest, TheBearerKeyIsRequiredEverywhereButHealth) {
  EXPECT_EQ(post({}), 401);
  EXPECT_EQ(post({{"Authorization", "Bearer wrong!"}}), 401);
  EXPECT_EQ(post({{"Authorization", "Bearer s3cre"}}), 401);
  EXPECT_EQ(post({{"Authorization", "Basic s3cret"}}), 401);
  EXPECT_EQ(post({}, "/embed"), 401);
  EXPECT_EQ(post({{"Authorization", "Bearer s3cret"}}), 503);  // past the check; no model yet
  httplib::Client client("127.0.0.1", port_);
  httplib::Result metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 401);
  EXPECT_EQ(metrics->get_header_value("WWW-Authenticate"), "Bearer");
  EXPECT_EQ(metrics->body.find("s3cret"), std::string::npos);
  httplib::Result health = client.Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 503);  // open to probes, and not ready: no model
}

// A slowloris client sends part of a header and then nothing: the server closes the connection after its I/O
// timeout instead of keeping one of its threads for it. The bound is the default I/O timeout (10 s, against the 1 s
// configured), which the cut-off would reach only were the configured timeout not in force: 9 s of margin, beyond
// any delay of a loaded machine.
TEST_F(AuthTest, AClientThatStopsSendingIsCutOff) {
  const int fd = connect_to(port_);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(send_all(fd, "POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Le"));
  const auto start = Clock::now();
  // Until the server gives up on the request: an error reply, then the connection closed.
  std::string reply;
  char buffer[256];
  ssize_t got = 0;
  while ((got = recv(fd, buffer, sizeof buffer, 0)) > 0) reply.append(buffer, static_cast<std::size_t>(got));
  const auto waited = Clock::now() - start;
  EXPECT_EQ(got, 0) << "the connection was not closed";
  EXPECT_TRUE(reply.empty() || reply.starts_with("HTTP/1.1 4")) << reply;
  ASSERT_LT(kIoTimeoutSeconds * 5, ServeOptions{}.io_timeout_seconds) << "the default must stand apart from it";
  EXPECT_LT(waited, std::chrono::seconds(ServeOptions{}.io_timeout_seconds));
  close(fd);
}

// A dribbling client's pace: a byte every so often, each well inside the per-read timeout.
constexpr auto kByteEvery = 200ms;

// What became of a client that dribbled its request.
struct Dribble {
  std::string reply;  // what the server answered before it closed the connection
  bool closed = false;
  Clock::duration held{};     // from connecting until the server closed the connection, or the client gave up
  std::size_t tail_sent = 0;  // the bytes of the tail sent by then
  std::size_t tail_size = 0;  // of them all
};

// The client's port of a connected socket; -1 when it cannot say.
int local_port(int fd) {
  sockaddr_in address{};
  socklen_t length = sizeof address;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) return -1;
  return ntohs(address.sin_port);
}

// Sends `head` at once, then `tail` a byte every kByteEvery, reading what the server answers in between, until the
// server closes the connection or `give_up` has passed. `head_sent` hears the client's port once the head is sent
// (-1 if it could not be).
Dribble dribble(int port, std::string_view head, std::string_view tail, Clock::duration give_up,
                const std::function<void(int)>& head_sent = {}) {
  Dribble result{.tail_size = tail.size()};
  const int fd = connect_to(port);
  if (fd < 0) {
    if (head_sent) head_sent(-1);
    return result;
  }
  const Clock::time_point start = Clock::now();
  bool sending = send_all(fd, head);
  if (head_sent) head_sent(sending ? local_port(fd) : -1);
  while (!result.closed && Clock::now() - start < give_up) {
    if (sending && result.tail_sent < tail.size()) sending = send_all(fd, tail.substr(result.tail_sent++, 1));
    pollfd entry{.fd = fd, .events = POLLIN, .revents = 0};
    if (poll(&entry, 1, static_cast<int>(std::chrono::milliseconds(kByteEvery).count())) <= 0) continue;
    char buffer[512];
    const ssize_t got = recv(fd, buffer, sizeof buffer, 0);
    if (got > 0) {
      result.reply.append(buffer, static_cast<std::size_t>(got));
    } else {
      result.closed = true;  // the server's close, or its reset of a connection still sending
    }
  }
  result.held = Clock::now() - start;
  close(fd);
  return result;
}

// The next response on `fd` whole (its head, then as many bytes of body as Content-Length says), taken from the
// front of `received`, which keeps what came after it; nothing when the connection closes or times out first.
std::optional<std::string> next_response(int fd, std::string& received) {
  for (;;) {
    if (const std::size_t head = received.find("\r\n\r\n"); head != std::string::npos) {
      constexpr std::string_view kLength = "Content-Length: ";
      std::size_t length = 0;
      if (const std::size_t at = received.find(kLength); at != std::string::npos && at < head)
        std::from_chars(received.data() + at + kLength.size(), received.data() + head, length);
      if (const std::size_t size = head + 4 + length; received.size() >= size) {
        std::string response = received.substr(0, size);
        received.erase(0, size);
        return response;
      }
    }
    char buffer[512];
    const ssize_t got = recv(fd, buffer, sizeof buffer, 0);
    if (got <= 0) return std::nullopt;
    received.append(buffer, static_cast<std::size_t>(got));
  }
}

// One loopback connection as /proc/net/tcp lists it, from the end at local port `from` to port `to`.
struct TcpEntry {
  bool established = false;
  unsigned long unacknowledged = 0;  // sent and not yet acknowledged by the other end
  unsigned long unread = 0;          // arrived and not yet read by this end's owner
};

std::optional<TcpEntry> tcp_entry(int from, int to) {
  char local[32];
  char remote[32];
  std::snprintf(local, sizeof local, "0100007F:%04X", static_cast<unsigned>(from));
  std::snprintf(remote, sizeof remote, "0100007F:%04X", static_cast<unsigned>(to));
  std::ifstream table("/proc/net/tcp");
  std::string line;
  std::getline(table, line);  // the column names
  while (std::getline(table, line)) {
    std::istringstream fields(line);
    std::string slot, at, peer, state, queues;
    if (!(fields >> slot >> at >> peer >> state >> queues) || at != local || peer != remote) continue;
    const std::size_t colon = queues.find(':');
    if (colon == std::string::npos) continue;
    return TcpEntry{.established = state == "01",
                    .unacknowledged = std::stoul(queues.substr(0, colon), nullptr, 16),
                    .unread = std::stoul(queues.substr(colon + 1), nullptr, 16)};
  }
  return std::nullopt;
}

// Whether a thread of the server on `server_port` has taken the connection from `client_port`, once the client
// has sent something on it: everything the client sent has reached the server (acknowledged) and then nothing is
// left unread there, and only a thread of the pool reads a connection; or the connection is no longer established,
// which only the pool's closing it (or the client's own end, after that) makes it.
bool taken_by_the_server(int client_port, int server_port) {
  const std::optional<TcpEntry> client = tcp_entry(client_port, server_port);
  if (!client || !client->established) return true;
  if (client->unacknowledged != 0) return false;
  const std::optional<TcpEntry> server = tcp_entry(server_port, client_port);
  return !server || !server->established || server->unread == 0;
}

// A server whose requests must arrive whole within 1 s, with two threads for connections: two slow clients are
// enough to take them all.
class RequestDeadlineTest : public ::testing::Test {
 protected:
  static constexpr auto kDeadline = 1s;
  // Only a hang guard, for clients (and their reads) that the server never cuts off: it does so after kDeadline.
  static constexpr auto kGiveUp = 30s;

  void SetUp() override {
    server_ = std::make_unique<EmbeddingServer>(ServeOptions{
        .port = 0, .http_threads = 2, .keep_alive_seconds = 2, .request_timeout_seconds = kDeadline.count()});
    Result<int> port = server_->start();
    ASSERT_TRUE(port.ok()) << port.status().to_string();
    port_ = *port;
  }
  void TearDown() override { server_->stop(); }

  // A request dribbled from its first header on; its headers never end.
  [[nodiscard]] Dribble dribble_header(const std::function<void(int)>& head_sent = {}) const {
    return dribble(port_, "POST /v1/embeddings HTTP/1.1\r\n", header_tail(), kGiveUp, head_sent);
  }
  static std::string header_tail() { return "Host: x\r\nX-Padding: " + std::string(40, 'a') + "\r\n"; }

  std::unique_ptr<EmbeddingServer> server_;
  int port_ = 0;
};

// Cut off by the deadline (the 408 says so), not before it, and while the client was still dribbling: the upper
// bound is the client's own pace, a byte every kByteEvery (the tails take 12 s or more against the 1 s deadline),
// which a loaded machine slows along with everything else, so no delay of one can make the cut-off look late.
void expect_cut_off_at_deadline(const Dribble& dribbled, Clock::duration deadline) {
  EXPECT_TRUE(dribbled.closed) << "the server kept the connection for as long as the client dribbled";
  EXPECT_TRUE(dribbled.reply.starts_with("HTTP/1.1 408 ")) << dribbled.reply;
  EXPECT_NE(dribbled.reply.find("request_timeout"), std::string::npos) << dribbled.reply;
  EXPECT_GE(dribbled.held, deadline - 100ms);
  EXPECT_LT(dribbled.tail_sent, dribbled.tail_size) << "the server let the client dribble its whole request";
}

TEST_F(RequestDeadlineTest, AHeaderDribbledAByteAtATimeIsCutOffAtTheDeadline) {
  expect_cut_off_at_deadline(dribble_header(), kDeadline);
}

TEST_F(RequestDeadlineTest, ABodyDribbledAByteAtATimeIsCutOffAtTheDeadline) {
  const std::string body = R"({"input": ")" + std::string(60, 'a') + R"("})";
  const std::string head =
      "POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Content-Length: " +
      std::to_string(body.size()) + "\r\n\r\n";
  expect_cut_off_at_deadline(dribble(port_, head, body, kGiveUp), kDeadline);
}

// Slow clients on every thread of the pool: another client waits for one of them to be cut off, then is served;
// and once they are gone, it is served again. The slow clients are known to hold both threads before the other
// client asks (the server has read what they sent), so it cannot be served before a cut-off, at kDeadline at the
// earliest; it must be served before the slow clients would have finished dribbling (12 s, their own pace).
TEST_F(RequestDeadlineTest, SlowClientsDoNotPinThePool) {
  const Clock::time_point start = Clock::now();
  std::vector<Dribble> dribbled(2);
  std::vector<int> ports(dribbled.size(), 0);
  std::latch heads_sent(static_cast<std::ptrdiff_t>(dribbled.size()));
  std::vector<std::thread> slow;
  for (std::size_t i = 0; i < dribbled.size(); ++i) {
    slow.emplace_back([&, i] {
      dribbled[i] = dribble_header([&](int port) {
        ports[i] = port;
        heads_sent.count_down();
      });
    });
  }
  heads_sent.wait();
  bool both_taken = ports[0] > 0 && ports[1] > 0;
  for (const Clock::time_point guard = Clock::now() + kGiveUp; both_taken;) {  // the deadline: only a hang guard
    if (taken_by_the_server(ports[0], port_) && taken_by_the_server(ports[1], port_)) break;
    if (Clock::now() > guard) both_taken = false;
    std::this_thread::sleep_for(1ms);
  }

  Clock::duration first_after{};
  httplib::Result first{nullptr, httplib::Error::Unknown};
  if (both_taken) {
    httplib::Client client("127.0.0.1", port_);
    client.set_read_timeout(kGiveUp);
    first = client.Get("/health");
    first_after = Clock::now() - start;
  }
  for (std::thread& thread : slow) thread.join();
  ASSERT_TRUE(both_taken) << "hang guard: the slow clients' connections were not both taken by the server";
  ASSERT_TRUE(first) << httplib::to_string(first.error());
  EXPECT_EQ(first->status, 503);  // no model: answered, not ready
  EXPECT_GE(first_after, kDeadline) << "served while both threads were meant to be held by the slow clients";
  EXPECT_LT(first_after, kByteEvery * header_tail().size()) << "kept waiting for as long as the slow clients dribbled";
  for (const Dribble& each : dribbled) expect_cut_off_at_deadline(each, kDeadline);

  // No slow client is left to be cut off: a pool still pinned would never serve this (the read timeout, a hang
  // guard, would fail it).
  httplib::Client again("127.0.0.1", port_);
  again.set_read_timeout(kGiveUp);
  httplib::Result second = again.Get("/health");
  ASSERT_TRUE(second) << httplib::to_string(second.error());
  EXPECT_EQ(second->status, 503);
}

// The deadline is each request's, not the connection's: a kept-alive connection carries requests, each sent in two
// parts and well within the deadline, for longer than the deadline in all. The client's pauses (which a loaded
// machine only lengthens) start its last request more than a deadline after its first, checked at compile time
// since an elapsed time would only restate the pauses; a deadline per connection would have cut that request off,
// so what is checked is what the server answered to each: a 503 on a connection it keeps open. Margins against
// delays of the client: 900 ms between a request's two parts and the 1 s deadline, 1.5 s between requests and the
// 2 s keep-alive.
TEST_F(RequestDeadlineTest, AKeptAliveConnectionOutlivesTheDeadline) {
  constexpr int kRequests = 4;
  constexpr auto kBetweenParts = 100ms;
  constexpr auto kBetweenRequests = 500ms;
  static_assert((kRequests - 1) * (kBetweenParts + kBetweenRequests) > kDeadline + 500ms);
  const int fd = connect_to(port_);
  ASSERT_GE(fd, 0);
  std::string received;
  for (int request = 0; request < kRequests; ++request) {
    ASSERT_TRUE(send_all(fd, "GET /health HTTP/1.1\r\nHo"));
    std::this_thread::sleep_for(kBetweenParts);
    ASSERT_TRUE(send_all(fd, "st: x\r\n\r\n"));
    std::optional<std::string> response = next_response(fd, received);
    ASSERT_TRUE(response) << "request " << request << " got no answer";
    EXPECT_TRUE(response->starts_with("HTTP/1.1 503 ")) << *response;  // answered, not 408
    EXPECT_EQ(response->find("Connection: close"), std::string::npos) << "request " << request << ": " << *response;
    std::this_thread::sleep_for(kBetweenRequests);
  }
  close(fd);
}

// A request that arrives together with the one before it waits in the connection's buffer for its turn.
TEST_F(RequestDeadlineTest, RequestsSentTogetherAreEachAnswered) {
  const int fd = connect_to(port_);
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(send_all(fd, "GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"));
  std::string received;
  const std::optional<std::string> health = next_response(fd, received);
  const std::optional<std::string> metrics = next_response(fd, received);
  ASSERT_TRUE(health && metrics) << "a request sent behind another was lost";
  EXPECT_TRUE(health->starts_with("HTTP/1.1 503 ")) << *health;
  EXPECT_TRUE(metrics->starts_with("HTTP/1.1 200 ")) << *metrics;
  close(fd);
}

// A large body sent as fast as loopback takes it arrives well within the deadline.
TEST_F(RequestDeadlineTest, ALargeBodyAtAReasonableRateIsServed) {
  const std::string body = R"({"input": ")" + std::string(6u << 20, 'a') + R"("})";
  httplib::Result result = httplib::Client("127.0.0.1", port_).Post("/v1/embeddings", body, "application/json");
  ASSERT_TRUE(result) << httplib::to_string(result.error());
  EXPECT_EQ(result->status, 503);  // the whole body read; no model to embed it
}

}  // namespace
}  // namespace accel::serve
