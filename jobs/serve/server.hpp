// `warpsim serve`'s network side on Boost.Asio: accepts TCP connections (loopback unless told otherwise),
// reads length-prefixed ServiceRequests, refuses oversized, malformed and unauthenticated ones with an
// error reply, and hands the rest to the JobManager. One io_context thread does everything, so the job
// table needs no locks; a slow or silent client only holds its own connection (idle timeout).
#pragma once

#include <utility>  // Boost 1.74's asio uses std::exchange without including it

#include <boost/asio.hpp>

#include <cstdint>
#include <memory>
#include <string>

#include "jobs/serve/job_manager.hpp"

namespace warpsim::serve {

struct ServerOptions {
  std::string bind_address = "127.0.0.1";
  std::uint16_t port = 0;  // 0: the kernel picks one (see Server::port)
  std::string token_file;  // required unless bound to loopback; must be mode 0600, owned by us
  std::uint32_t max_message_bytes = 1u << 20;
  std::size_t max_connections = 64;
  double idle_timeout_seconds = 60;
  JobManagerOptions jobs;
};

// Reads the token: the file must exist, be a regular file owned by this user with no group/other
// permission bits (0600 or 0400) and hold a non-empty token. Throws std::invalid_argument naming the file.
std::string read_token_file(const std::string& path);

// Throws std::invalid_argument for a bad address or a non-loopback address without a token file.
class Server {
 public:
  Server(boost::asio::io_context& io, ServerOptions options);
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  ~Server();

  std::uint16_t port() const;
  void stop();  // stops accepting and closes the open connections

  struct State;  // defined in server.cpp (sessions share it)

 private:
  std::shared_ptr<State> state_;
};

}  // namespace warpsim::serve
