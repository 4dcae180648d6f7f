// A user-input error (bad flag value, bad spec): the binary prints it as one line and exits with code 2.
// The same error as experiment/'s SettingError, so a bad setting found there reaches the user the same way.
#pragma once

#include "experiment/setting_error.hpp"

namespace warpsim::cli {

inline constexpr int kUsageExitCode = experiment::kSettingExitCode;
using UsageError = experiment::SettingError;

}  // namespace warpsim::cli
