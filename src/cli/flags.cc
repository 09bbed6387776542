#include "cli/flags.h"

#include <charconv>

namespace gpumon::cli {

Result<Flags> Flags::Parse(const std::vector<std::string>& args,
                           const std::map<std::string, bool>& known) {
  Flags f;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("--", 0) != 0) return Status::Error("unexpected argument \"" + a + "\"");
    std::string name = a.substr(2);
    std::optional<std::string> value;
    if (auto eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    auto it = known.find(name);
    if (it == known.end()) return Status::Error("unknown flag --" + name);
    if (it->second && !value) {
      if (i + 1 >= args.size()) return Status::Error("flag --" + name + " needs a value");
      value = args[++i];
    }
    f.values_[name] = value.value_or("true");
    f.all_[name].push_back(f.values_[name]);
  }
  return f;
}

std::optional<std::string> Flags::Get(const std::string& name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> Flags::GetAll(const std::string& name) const {
  auto it = all_.find(name);
  return it == all_.end() ? std::vector<std::string>{} : it->second;
}

Result<long> Flags::GetInt(const std::string& name, long fallback, long min, long max) const {
  auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  const std::string& text = it->second;
  long n = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || p != text.data() + text.size() || n < min || n > max) {
    return Status::Error("flag --" + name + ": expected an integer in [" + std::to_string(min) +
                         ", " + std::to_string(max) + "], got \"" + text + "\"");
  }
  return n;
}

}  // namespace gpumon::cli
