// A user-input error (bad flag value, bad spec): the binary prints it as one line and exits with code 2.
#pragma once

#include <stdexcept>
#include <string>

namespace warpsim::cli {

inline constexpr int kUsageExitCode = 2;

class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace warpsim::cli
