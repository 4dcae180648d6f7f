// A bad setting (flag value, spec field, impossible combination): the front ends print it as one line and
// exit with code 2 (kSettingExitCode). Every message names the flag or field it is about.
#pragma once

#include <stdexcept>
#include <string>

namespace warpsim::experiment {

inline constexpr int kSettingExitCode = 2;

class SettingError : public std::runtime_error {
 public:
  explicit SettingError(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace warpsim::experiment
