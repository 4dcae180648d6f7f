// Logging set-up (see logging.hpp).
#include "io/logging.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace warpsim::io {

bool setup_logging(const std::string& level, int rank) {
  const auto parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off") return false;
  auto logger = spdlog::stderr_color_mt("warpsim");
  logger->set_pattern("[%H:%M:%S.%e] [rank " + std::to_string(rank) + "] [%^%l%$] %v");
  logger->set_level(parsed);
  spdlog::set_default_logger(logger);
  return true;
}

}  // namespace warpsim::io
