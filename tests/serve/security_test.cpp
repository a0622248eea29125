// What `accel serve` holds against hostile clients, with no model attached (an authorised request gets the 503 of a
// server that is not ready, which proves it went past the checks): --api-key (every route but /health wants the
// bearer key; a wrong or missing one is 401 with no detail), and a client that dribbles its header is cut off.
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>

#include "serve/embedding_server.hpp"

namespace accel::serve {
namespace {

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
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port_));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  const std::string partial = "POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Le";
  ASSERT_EQ(send(fd, partial.data(), partial.size(), 0), static_cast<ssize_t>(partial.size()));
  timeval limit{.tv_sec = 10, .tv_usec = 0};  // so that a server that never gives up fails the test, not hangs it
  ASSERT_EQ(setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit), 0);
  const auto start = std::chrono::steady_clock::now();
  // Until the server gives up on the request: an error reply, then the connection closed.
  std::string reply;
  char buffer[256];
  ssize_t got = 0;
  while ((got = recv(fd, buffer, sizeof buffer, 0)) > 0) reply.append(buffer, static_cast<std::size_t>(got));
  const auto waited = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(got, 0) << "the connection was not closed";
  EXPECT_TRUE(reply.empty() || reply.starts_with("HTTP/1.1 4")) << reply;
  EXPECT_LT(waited, std::chrono::seconds(5));
  close(fd);
}

}  // namespace
}  // namespace accel::serve
