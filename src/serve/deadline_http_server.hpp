// accel::serve::DeadlineHttpServer — cpp-httplib's Server, but a request must arrive whole (its line, headers and
// body) within a deadline, so that a client dribbling it cannot keep a thread of the pool.
//
// cpp-httplib 0.11 times out each read alone. Its connection loop is a private virtual (process_and_close_socket),
// which this class replaces with one of its own: wait for the next request as long as a kept-alive connection may
// idle, arm the request's deadline, and hand the request to the library's process_request on a
// DeadlineSocketStream. A request whose deadline passes is answered as the library answers a read that failed (400,
// which the error handler may turn into 408 by asking request_timed_out()), or not at all when it passed before the
// request line was whole. A connection is closed after any request whose reading failed (the deadline, the per-read
// timeout, the peer's close), since what is left of that request may still be on its way; and promptly once the
// server stops, when idle between requests.
#pragma once

#include <httplib.h>

#include <chrono>

namespace accel::serve {

class DeadlineSocketStream;

class DeadlineHttpServer : public httplib::Server {
 public:
  using Clock = std::chrono::steady_clock;

  // Before listening: how long a request may take to arrive whole, counted from when its first bytes are awaited.
  void set_request_timeout(Clock::duration timeout) { request_timeout_ = timeout; }

  // Whether the request being served on the calling thread lost its connection to the deadline. cpp-httplib's
  // error handler learns only that reading failed; it runs on the connection's thread, which this can answer for.
  [[nodiscard]] static bool request_timed_out();
  // When the first bytes of the request being served on the calling thread could be read: where its time on the
  // server begins (the Stage::receive histogram starts there). The epoch on a thread serving none.
  [[nodiscard]] static Clock::time_point request_began();

 private:
  bool process_and_close_socket(socket_t socket) override;
  // Whether the next request's first bytes came within the keep-alive timeout, and the server still serves.
  [[nodiscard]] bool await_request(const DeadlineSocketStream& stream) const;

  Clock::duration request_timeout_ = std::chrono::seconds(30);
};

}  // namespace accel::serve
