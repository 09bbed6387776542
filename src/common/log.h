// Minimal leveled logging to stderr: one line per message, with a UTC
// timestamp and level, safe to call from any thread.
#pragma once

#include <string_view>

namespace gpumon {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

void SetLogLevel(LogLevel level);
void Log(LogLevel level, std::string_view message);

inline void LogInfo(std::string_view m) { Log(LogLevel::kInfo, m); }
inline void LogWarn(std::string_view m) { Log(LogLevel::kWarn, m); }
inline void LogError(std::string_view m) { Log(LogLevel::kError, m); }

}  // namespace gpumon
