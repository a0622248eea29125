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
#include <optional>
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
  void SetUp() override {
    server_ = std::make_unique<EmbeddingServer>(
        ServeOptions{.port = 0, .keep_alive_seconds = 1, .io_timeout_seconds = 1, .api_key = "s3cret"});
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
// timeout instead of keeping one of its threads for it.
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
  EXPECT_LT(waited, 5s);
  close(fd);
}

// What became of a client that dribbled its request.
struct Dribble {
  std::string reply;  // what the server answered before it closed the connection
  bool closed = false;
  Clock::duration held{};  // from connecting until the server closed the connection, or the client gave up
};

// Sends `head` at once, then `tail` a byte every 200 ms (each byte well inside the per-read timeout), reading what
// the server answers in between, until the server closes the connection or `give_up` has passed.
Dribble dribble(int port, std::string_view head, std::string_view tail, Clock::duration give_up) {
  Dribble result;
  const int fd = connect_to(port);
  if (fd < 0) return result;
  const Clock::time_point start = Clock::now();
  bool sending = send_all(fd, head);
  std::size_t next = 0;
  while (!result.closed && Clock::now() - start < give_up) {
    if (sending && next < tail.size()) sending = send_all(fd, tail.substr(next++, 1));
    pollfd entry{.fd = fd, .events = POLLIN, .revents = 0};
    if (poll(&entry, 1, 200) <= 0) continue;
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

// A server whose requests must arrive whole within 1 s, with two threads for connections: two slow clients are
// enough to take them all.
class RequestDeadlineTest : public ::testing::Test {
 protected:
  static constexpr auto kDeadline = 1s;
  // The dribbling clients below would take 12 s or more to finish sending; they give up long before.
  static constexpr auto kGiveUp = 4s;
  static constexpr auto kMargin = 1s;

  void SetUp() override {
    server_ = std::make_unique<EmbeddingServer>(ServeOptions{
        .port = 0, .http_threads = 2, .keep_alive_seconds = 2, .request_timeout_seconds = kDeadline.count()});
    Result<int> port = server_->start();
    ASSERT_TRUE(port.ok()) << port.status().to_string();
    port_ = *port;
  }
  void TearDown() override { server_->stop(); }

  // A request dribbled from its first header on.
  [[nodiscard]] Dribble dribble_header() const {
    return dribble(port_, "POST /v1/embeddings HTTP/1.1\r\n", "Host: x\r\nX-Padding: " + std::string(40, 'a') + "\r\n",
                   kGiveUp);
  }

  std::unique_ptr<EmbeddingServer> server_;
  int port_ = 0;
};

void expect_cut_off_at_deadline(const Dribble& dribbled, Clock::duration deadline, Clock::duration margin) {
  EXPECT_TRUE(dribbled.closed) << "the server kept the connection for as long as the client dribbled";
  EXPECT_TRUE(dribbled.reply.starts_with("HTTP/1.1 408 ")) << dribbled.reply;
  EXPECT_NE(dribbled.reply.find("request_timeout"), std::string::npos) << dribbled.reply;
  EXPECT_GE(dribbled.held, deadline - 100ms);
  EXPECT_LT(dribbled.held, deadline + margin);
}

TEST_F(RequestDeadlineTest, AHeaderDribbledAByteAtATimeIsCutOffAtTheDeadline) {
  expect_cut_off_at_deadline(dribble_header(), kDeadline, kMargin);
}

TEST_F(RequestDeadlineTest, ABodyDribbledAByteAtATimeIsCutOffAtTheDeadline) {
  const std::string body = R"({"input": ")" + std::string(60, 'a') + R"("})";
  const std::string head =
      "POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      "Content-Length: " +
      std::to_string(body.size()) + "\r\n\r\n";
  expect_cut_off_at_deadline(dribble(port_, head, body, kGiveUp), kDeadline, kMargin);
}

// Slow clients on every thread of the pool: another client waits for one of them to be cut off, then is served;
// and once they are gone, at once.
TEST_F(RequestDeadlineTest, SlowClientsDoNotPinThePool) {
  const Clock::time_point start = Clock::now();
  std::vector<Dribble> dribbled(2);
  std::vector<std::thread> slow;
  for (Dribble& each : dribbled) slow.emplace_back([&] { each = dribble_header(); });
  std::this_thread::sleep_for(200ms);  // both connections taken by the pool's two threads

  httplib::Client client("127.0.0.1", port_);
  client.set_read_timeout(kGiveUp);
  httplib::Result first = client.Get("/health");
  const Clock::duration first_after = Clock::now() - start;
  for (std::thread& thread : slow) thread.join();
  ASSERT_TRUE(first) << httplib::to_string(first.error());
  EXPECT_EQ(first->status, 503);  // no model: answered, not ready
  EXPECT_LT(first_after, kDeadline + kMargin);
  for (const Dribble& each : dribbled) expect_cut_off_at_deadline(each, kDeadline, kMargin);

  const Clock::time_point again = Clock::now();
  httplib::Result second = httplib::Client("127.0.0.1", port_).Get("/health");
  ASSERT_TRUE(second);
  EXPECT_EQ(second->status, 503);
  EXPECT_LT(Clock::now() - again, 500ms);
}

// The deadline is each request's, not the connection's: a kept-alive connection carries requests, each sent in two
// parts and well within the deadline, for longer than the deadline in all.
TEST_F(RequestDeadlineTest, AKeptAliveConnectionOutlivesTheDeadline) {
  const int fd = connect_to(port_);
  ASSERT_GE(fd, 0);
  const Clock::time_point start = Clock::now();
  std::string received;
  for (int request = 0; request < 4; ++request) {
    ASSERT_TRUE(send_all(fd, "GET /health HTTP/1.1\r\nHo"));
    std::this_thread::sleep_for(300ms);
    ASSERT_TRUE(send_all(fd, "st: x\r\n\r\n"));
    std::optional<std::string> response = next_response(fd, received);
    ASSERT_TRUE(response) << "request " << request << " got no answer";
    EXPECT_TRUE(response->starts_with("HTTP/1.1 503 ")) << *response;
    std::this_thread::sleep_for(300ms);
  }
  EXPECT_GT(Clock::now() - start, 2 * kDeadline);
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
