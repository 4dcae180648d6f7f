// A blocking client for `warpsim serve` (used by `warpsim client` and the tests): one TCP connection,
// request/reply in lockstep.
#pragma once

#include <utility>  // Boost 1.74's asio uses std::exchange without including it

#include <boost/asio.hpp>

#include <cstdint>
#include <string>

#include "experiment/spec/service.pb.h"

namespace warpsim::serve {

class Client {
 public:
  // Throws std::runtime_error if it cannot connect.
  Client(const std::string& host, std::uint16_t port);
  // Sends one request and waits for its reply; throws std::runtime_error on I/O errors or a reply that
  // does not parse.
  spec::ServiceReply call(const spec::ServiceRequest& request);
  // Raw bytes out, one framed reply back (tests send malformed and oversized frames with this).
  spec::ServiceReply call_raw(const std::string& bytes);

 private:
  spec::ServiceReply read_reply();
  boost::asio::io_context io_;
  boost::asio::ip::tcp::socket socket_;
};

}  // namespace warpsim::serve
