// Blocking service client (see client.hpp): asynchronous operations on a private io_context, each run
// until it completes or the deadline passes.
#include "jobs/serve/client.hpp"

#include <array>
#include <sstream>
#include <stdexcept>

#include "jobs/serve/framing.hpp"

namespace warpsim::serve {

namespace asio = boost::asio;
using asio::ip::tcp;
using Clock = std::chrono::steady_clock;

namespace {

std::string seconds_text(Clock::duration d) {
  std::ostringstream s;
  s << std::chrono::duration<double>(d).count() << " s";
  return s.str();
}

}  // namespace

Client::Client(const std::string& host, std::uint16_t port, std::chrono::duration<double> timeout)
    : where_(host + ":" + std::to_string(port)),
      timeout_(std::chrono::duration_cast<Clock::duration>(timeout)),
      socket_(io_) {
  if (timeout_ <= Clock::duration::zero()) throw std::invalid_argument("client timeout must be positive");
  const auto deadline = Clock::now() + timeout_;
  // Name lookup is synchronous (an IP address needs none; a name is bounded by the resolver's own
  // timeouts); connecting is bounded by the deadline.
  boost::system::error_code ec;
  tcp::resolver resolver(io_);
  const auto endpoints = resolver.resolve(host, std::to_string(port), ec);
  if (!ec) {
    ec = asio::error::would_block;
    asio::async_connect(socket_, endpoints,
                        [&](const boost::system::error_code& e, const tcp::endpoint&) { ec = e; });
    wait(ec, deadline, "connecting");
  }
  if (ec) throw std::runtime_error("cannot connect to " + where_ + ": " + ec.message());
}

void Client::wait(boost::system::error_code& ec, Clock::time_point deadline, const std::string& what) {
  io_.restart();
  while (ec == asio::error::would_block && Clock::now() < deadline) io_.run_one_until(deadline);
  if (ec != asio::error::would_block) return;
  // Timed out: closing the socket completes the pending operation (aborted), which still refers to `ec`,
  // so it runs before this frame is left.
  boost::system::error_code ignored;
  socket_.close(ignored);
  io_.restart();
  io_.run();
  throw TimeoutError("no answer from " + where_ + " within " + seconds_text(timeout_) + " (" + what + ")");
}

spec::ServiceReply Client::call(const spec::ServiceRequest& request) {
  return call_raw(frame(request.SerializeAsString()));
}

spec::ServiceReply Client::call_raw(const std::string& bytes) {
  const auto deadline = Clock::now() + timeout_;
  boost::system::error_code ec = asio::error::would_block;
  asio::async_write(socket_, asio::buffer(bytes),
                    [&](const boost::system::error_code& e, std::size_t) { ec = e; });
  wait(ec, deadline, "sending the request");
  if (ec) throw std::runtime_error("sending the request: " + ec.message());
  return read_reply(deadline);
}

spec::ServiceReply Client::read_reply(Clock::time_point deadline) {
  std::array<unsigned char, kHeaderBytes> header{};
  boost::system::error_code ec = asio::error::would_block;
  const auto done = [&](const boost::system::error_code& e, std::size_t) { ec = e; };
  asio::async_read(socket_, asio::buffer(header), done);
  wait(ec, deadline, "waiting for the reply");
  if (ec) throw std::runtime_error("reading the reply: " + ec.message());
  const std::uint32_t n = decode_length(header);
  if (n > 64u * 1024 * 1024)
    throw std::runtime_error("reply of " + std::to_string(n) + " bytes is too large");
  std::string body(n, '\0');
  ec = asio::error::would_block;
  asio::async_read(socket_, asio::buffer(body), done);
  wait(ec, deadline, "reading the reply");
  if (ec) throw std::runtime_error("reading the reply: " + ec.message());
  spec::ServiceReply reply;
  if (!reply.ParseFromString(body)) throw std::runtime_error("the reply is not a ServiceReply");
  return reply;
}

}  // namespace warpsim::serve
