// A blocking client for `warpsim serve` (used by `warpsim client` and the tests): one TCP connection,
// request/reply in lockstep. Every step is bounded by a timeout, so a service that accepts and never
// replies (or a host that never answers the connection) gives a TimeoutError instead of a hang.
#pragma once

#include <utility>  // Boost 1.74's asio uses std::exchange without including it

#include <boost/asio.hpp>

#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "experiment/spec/service.pb.h"

namespace warpsim::serve {

// The default bound on connecting, and on one request and its reply.
inline constexpr std::chrono::seconds kDefaultClientTimeout{30};

// The service did not answer within the timeout (the connection is closed).
class TimeoutError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Client {
 public:
  // Throws std::runtime_error if it cannot connect, TimeoutError if connecting takes longer than `timeout`.
  Client(const std::string& host, std::uint16_t port,
         std::chrono::duration<double> timeout = kDefaultClientTimeout);
  // Sends one request and waits for its reply, at most `timeout` for both; throws TimeoutError when that
  // passes, std::runtime_error on I/O errors or a reply that does not parse.
  spec::ServiceReply call(const spec::ServiceRequest& request);
  // Raw bytes out, one framed reply back (tests send malformed and oversized frames with this).
  spec::ServiceReply call_raw(const std::string& bytes);

 private:
  // Runs the io_context until the started operation sets `ec` or the deadline passes (then closes the
  // socket and throws TimeoutError naming `what`).
  void wait(boost::system::error_code& ec, std::chrono::steady_clock::time_point deadline,
            const std::string& what);
  spec::ServiceReply read_reply(std::chrono::steady_clock::time_point deadline);
  std::string where_;
  std::chrono::steady_clock::duration timeout_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::socket socket_;
};

}  // namespace warpsim::serve
