// The service's Asio server (see server.hpp).
#include "jobs/serve/server.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <list>
#include <sstream>
#include <stdexcept>

#include "jobs/serve/framing.hpp"
#include "experiment/spec/service.pb.h"

namespace warpsim::serve {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

// Equal-time comparison, so response timing does not leak how much of a guessed token was right.
bool same_token(const std::string& a, const std::string& b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < a.size(); ++i)
    diff |= static_cast<unsigned char>(a[i] ^ b[i % (b.empty() ? 1 : b.size())]);
  return diff == 0 && !b.empty();
}

std::string error_reply(const std::string& message) {
  spec::ServiceReply reply;
  reply.set_ok(false);
  reply.set_error(message);
  return reply.SerializeAsString();
}

}  // namespace

std::string read_token_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw std::invalid_argument("--token-file: cannot read '" + path + "'");
  if (!S_ISREG(st.st_mode)) throw std::invalid_argument("--token-file: '" + path + "' is not a regular file");
  if (st.st_uid != ::geteuid())
    throw std::invalid_argument("--token-file: '" + path + "' is not owned by the user running the service");
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw std::invalid_argument("--token-file: '" + path + "' has mode " + mode +
                                "; it must be readable by its owner only (chmod 600)");
  }
  std::ifstream in(path);
  std::string token;
  std::getline(in, token);
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ' || token.back() == '\t'))
    token.pop_back();
  if (token.size() < 16)
    throw std::invalid_argument("--token-file: '" + path + "' must hold a token of at least 16 characters");
  return token;
}

class Session;

struct Server::State {
  State(asio::io_context& io_context, ServerOptions o)
      : io(io_context), options(std::move(o)), acceptor(io), tick(io), jobs(options.jobs) {}
  asio::io_context& io;
  ServerOptions options;
  tcp::acceptor acceptor;
  asio::steady_timer tick;
  JobManager jobs;
  std::string token;  // empty: no authentication (loopback without a token file)
  std::list<std::weak_ptr<Session>> sessions;
  bool stopped = false;

  void accept(const std::shared_ptr<State>& self);
  void schedule_tick(const std::shared_ptr<State>& self);
  std::size_t open_sessions() {
    sessions.remove_if([](const auto& w) { return w.expired(); });
    return sessions.size();
  }
};

// One client connection: request, reply, request, ... in lockstep.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<Server::State> server)
      : socket_(std::move(socket)), server_(std::move(server)), idle_(socket_.get_executor()) {}

  void start() { read_header(); }
  void close() {
    boost::system::error_code ec;
    idle_.cancel();
    socket_.shutdown(tcp::socket::shutdown_both, ec);
    socket_.close(ec);
  }

 private:
  void arm_idle_timer() {
    idle_.expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(server_->options.idle_timeout_seconds)));
    idle_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (!ec) self->close();
    });
  }

  void read_header() {
    arm_idle_timer();
    asio::async_read(socket_, asio::buffer(header_),
                     [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                       if (ec) return self->close();
                       self->on_header();
                     });
  }

  void on_header() {
    const std::uint32_t n = decode_length(header_);
    if (n > server_->options.max_message_bytes) {
      // The body is not read, so the stream cannot be resynchronized: reply, then close.
      return reply(error_reply("request of " + std::to_string(n) + " bytes exceeds the limit of " +
                               std::to_string(server_->options.max_message_bytes) + " bytes"),
                   /*close_after=*/true);
    }
    body_.resize(n);
    asio::async_read(socket_, asio::buffer(body_),
                     [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                       if (ec) return self->close();
                       self->on_body();
                     });
  }

  void on_body() {
    spec::ServiceRequest request;
    if (!request.ParseFromString(body_))
      return reply(error_reply("malformed request (not a ServiceRequest)"), false);
    if (!server_->token.empty() && !same_token(request.token(), server_->token))
      return reply(error_reply("unauthenticated: missing or wrong token"), false);
    reply(server_->jobs.handle(request).SerializeAsString(), false);
  }

  void reply(const std::string& payload, bool close_after) {
    out_ = frame(payload);
    asio::async_write(
        socket_, asio::buffer(out_),
        [self = shared_from_this(), close_after](const boost::system::error_code& ec, std::size_t) {
          if (ec || close_after) return self->close();
          self->read_header();
        });
  }

  tcp::socket socket_;
  std::shared_ptr<Server::State> server_;
  asio::steady_timer idle_;
  std::array<unsigned char, kHeaderBytes> header_{};
  std::string body_;
  std::string out_;
};

void Server::State::accept(const std::shared_ptr<State>& self) {
  acceptor.async_accept([self](const boost::system::error_code& ec, tcp::socket socket) {
    if (self->stopped) return;
    if (!ec) {
      if (self->open_sessions() >= self->options.max_connections) {
        // Over the limit: one error reply, then the connection is closed.
        auto refused = std::make_shared<std::string>(frame(error_reply("too many connections")));
        auto sock = std::make_shared<tcp::socket>(std::move(socket));
        asio::async_write(*sock, asio::buffer(*refused),
                          [sock, refused](const boost::system::error_code&, std::size_t) {
                            boost::system::error_code ignored;
                            sock->close(ignored);
                          });
      } else {
        auto session = std::make_shared<Session>(std::move(socket), self);
        self->sessions.push_back(session);
        session->start();
      }
    }
    self->accept(self);
  });
}

void Server::State::schedule_tick(const std::shared_ptr<State>& self) {
  tick.expires_after(std::chrono::milliseconds(200));
  tick.async_wait([self](const boost::system::error_code& ec) {
    if (ec || self->stopped) return;
    self->jobs.tick();
    self->schedule_tick(self);
  });
}

Server::Server(asio::io_context& io, ServerOptions options) {
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(options.bind_address, ec);
  if (ec) throw std::invalid_argument("--bind: '" + options.bind_address + "' is not an IP address");
  std::string token;
  if (!options.token_file.empty()) {
    token = read_token_file(options.token_file);
  } else if (!address.is_loopback()) {
    throw std::invalid_argument("--bind " + options.bind_address +
                                " is beyond loopback: a --token-file (mode 0600) is required");
  }
  if (options.max_message_bytes < 64) throw std::invalid_argument("--max-message-bytes must be at least 64");
  state_ = std::make_shared<State>(io, std::move(options));
  state_->token = std::move(token);
  const tcp::endpoint endpoint(address, state_->options.port);
  state_->acceptor.open(endpoint.protocol());
  state_->acceptor.set_option(tcp::acceptor::reuse_address(true));
  state_->acceptor.bind(endpoint, ec);
  if (ec)
    throw std::runtime_error("cannot listen on " + state_->options.bind_address + ":" +
                             std::to_string(state_->options.port) + ": " + ec.message());
  state_->acceptor.listen();
  state_->accept(state_);
  state_->schedule_tick(state_);
}

Server::~Server() {
  stop();
}

std::uint16_t Server::port() const {
  return state_->acceptor.local_endpoint().port();
}

void Server::stop() {
  if (!state_ || state_->stopped) return;
  state_->stopped = true;
  boost::system::error_code ec;
  state_->acceptor.close(ec);
  state_->tick.cancel();
  for (auto& weak : state_->sessions) {
    if (auto s = weak.lock()) s->close();
  }
}

}  // namespace warpsim::serve
