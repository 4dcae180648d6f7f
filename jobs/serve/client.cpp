// Blocking service client (see client.hpp).
#include "jobs/serve/client.hpp"

#include <stdexcept>

#include "jobs/serve/framing.hpp"

namespace warpsim::serve {

namespace asio = boost::asio;
using asio::ip::tcp;

Client::Client(const std::string& host, std::uint16_t port) : socket_(io_) {
  boost::system::error_code ec;
  tcp::resolver resolver(io_);
  const auto endpoints = resolver.resolve(host, std::to_string(port), ec);
  if (!ec) asio::connect(socket_, endpoints, ec);
  if (ec)
    throw std::runtime_error("cannot connect to " + host + ":" + std::to_string(port) + ": " + ec.message());
}

spec::ServiceReply Client::call(const spec::ServiceRequest& request) {
  return call_raw(frame(request.SerializeAsString()));
}

spec::ServiceReply Client::call_raw(const std::string& bytes) {
  boost::system::error_code ec;
  asio::write(socket_, asio::buffer(bytes), ec);
  if (ec) throw std::runtime_error("sending the request: " + ec.message());
  return read_reply();
}

spec::ServiceReply Client::read_reply() {
  std::array<unsigned char, kHeaderBytes> header{};
  boost::system::error_code ec;
  asio::read(socket_, asio::buffer(header), ec);
  if (ec) throw std::runtime_error("reading the reply: " + ec.message());
  const std::uint32_t n = decode_length(header);
  if (n > 64u * 1024 * 1024)
    throw std::runtime_error("reply of " + std::to_string(n) + " bytes is too large");
  std::string body(n, '\0');
  asio::read(socket_, asio::buffer(body), ec);
  if (ec) throw std::runtime_error("reading the reply: " + ec.message());
  spec::ServiceReply reply;
  if (!reply.ParseFromString(body)) throw std::runtime_error("the reply is not a ServiceReply");
  return reply;
}

}  // namespace warpsim::serve
