#include "scrape/relabel.h"

#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <map>

namespace gpumon::scrape {
namespace {

constexpr std::pair<RelabelAction, const char*> kActionNames[] = {
    {RelabelAction::kReplace, "replace"},     {RelabelAction::kKeep, "keep"},
    {RelabelAction::kDrop, "drop"},           {RelabelAction::kKeepEqual, "keepequal"},
    {RelabelAction::kDropEqual, "dropequal"}, {RelabelAction::kHashMod, "hashmod"},
    {RelabelAction::kLabelMap, "labelmap"},   {RelabelAction::kLabelDrop, "labeldrop"},
    {RelabelAction::kLabelKeep, "labelkeep"}, {RelabelAction::kLowercase, "lowercase"},
    {RelabelAction::kUppercase, "uppercase"},
};

bool IsWordChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Prometheus's rule for target labels and labelmap replacements: a label
// name in which "$name" / "${name}" references may stand for characters.
bool IsValidTemplateName(std::string_view s) {
  static const RE2 kRe(R"(^(?:(?:[a-zA-Z_]|\$(?:\{\w+\}|\w+))+\w*)+$)");
  return RE2::FullMatch(s, kRe);
}

// Go's regexp Expand: $name, ${name}, $$; a malformed reference is literal.
std::string Expand(std::string_view tmpl, const RE2& re, std::span<const re2::StringPiece> groups) {
  std::string out;
  for (size_t i = 0; i < tmpl.size(); ++i) {
    char c = tmpl[i];
    if (c != '$' || i + 1 >= tmpl.size()) {
      out += c;
      continue;
    }
    if (tmpl[i + 1] == '$') {
      out += '$';
      ++i;
      continue;
    }
    std::string_view name;
    size_t next = 0;
    if (tmpl[i + 1] == '{') {
      size_t j = i + 2;
      while (j < tmpl.size() && IsWordChar(tmpl[j])) ++j;
      if (j == i + 2 || j >= tmpl.size() || tmpl[j] != '}') {
        out += c;
        continue;
      }
      name = tmpl.substr(i + 2, j - i - 2);
      next = j + 1;
    } else {
      size_t j = i + 1;
      while (j < tmpl.size() && IsWordChar(tmpl[j])) ++j;
      if (j == i + 1) {
        out += c;
        continue;
      }
      name = tmpl.substr(i + 1, j - i - 1);
      next = j;
    }
    int index = -1;
    if (std::all_of(name.begin(), name.end(), [](char d) { return d >= '0' && d <= '9'; })) {
      // Go caps absurd indexes; anything past the groups expands to "".
      if (name.size() < 9) index = std::stoi(std::string(name));
    } else {
      const auto& named = re.NamedCapturingGroups();
      auto it = named.find(std::string(name));
      if (it != named.end()) index = it->second;
    }
    if (index >= 0 && static_cast<size_t>(index) < groups.size() && groups[index].data()) {
      out.append(groups[index].data(), groups[index].size());
    }
    i = next - 1;
  }
  return out;
}

// Runs the anchored regex; fills all groups (group 0 is the whole match).
bool Match(const RE2& re, std::string_view text, std::vector<re2::StringPiece>& groups) {
  groups.assign(re.NumberOfCapturingGroups() + 1, re2::StringPiece());
  return re.Match(re2::StringPiece(text.data(), text.size()), 0, text.size(), RE2::ANCHOR_BOTH,
                  groups.data(), static_cast<int>(groups.size()));
}

uint64_t HashMod(std::string_view value, uint64_t modulus) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(value.data(), value.size(), digest, &len, EVP_md5(), nullptr);
  // Prometheus uses the last 8 bytes of the MD5, big-endian.
  uint64_t h = 0;
  for (int i = 8; i < 16; ++i) h = (h << 8) | digest[i];
  return h % modulus;
}

}  // namespace

std::optional<RelabelAction> RelabelActionFromName(std::string_view name) {
  for (const auto& [action, n] : kActionNames) {
    if (name == n) return action;
  }
  return std::nullopt;
}

const char* RelabelActionName(RelabelAction action) {
  for (const auto& [a, n] : kActionNames) {
    if (a == action) return n;
  }
  return "?";
}

bool IsValidLabelName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

Status RelabelConfig::Compile() {
  const std::string act = RelabelActionName(action);
  using A = RelabelAction;
  for (const auto& name : source_labels) {
    if (!IsValidLabelName(name)) return Status::Error("\"" + name + "\" is not a valid label name");
  }
  if (action == A::kHashMod && modulus == 0) {
    return Status::Error("relabel configuration for hashmod requires non-zero modulus");
  }
  const bool needs_target = action == A::kReplace || action == A::kHashMod ||
                            action == A::kLowercase || action == A::kUppercase ||
                            action == A::kKeepEqual || action == A::kDropEqual;
  if (needs_target && target_label.empty()) {
    return Status::Error("relabel configuration for " + act +
                         " action requires 'target_label' value");
  }
  auto bad_target = [&] {
    return Status::Error("\"" + target_label + "\" is invalid 'target_label' for " + act +
                         " action");
  };
  if (action == A::kReplace && !IsValidTemplateName(target_label)) return bad_target();
  if ((action == A::kLowercase || action == A::kUppercase || action == A::kKeepEqual ||
       action == A::kDropEqual || action == A::kHashMod) &&
      !IsValidLabelName(target_label)) {
    return bad_target();
  }
  const RelabelConfig defaults;
  if ((action == A::kLowercase || action == A::kUppercase) && replacement != defaults.replacement) {
    return Status::Error("'replacement' can not be set for " + act + " action");
  }
  if (action == A::kLabelMap && !IsValidTemplateName(replacement)) {
    return Status::Error("\"" + replacement + "\" is invalid 'replacement' for " + act + " action");
  }
  if ((action == A::kKeepEqual || action == A::kDropEqual) &&
      (regex != defaults.regex || modulus != defaults.modulus || separator != defaults.separator ||
       replacement != defaults.replacement)) {
    return Status::Error(act +
                         " action requires only 'source_labels' and `target_label`, and no "
                         "other fields");
  }
  if ((action == A::kLabelDrop || action == A::kLabelKeep) &&
      (!source_labels.empty() || !target_label.empty() || modulus != defaults.modulus ||
       separator != defaults.separator || replacement != defaults.replacement)) {
    return Status::Error(act + " action requires only 'regex', and no other fields");
  }
  RE2::Options opts;
  opts.set_log_errors(false);
  auto re = std::make_shared<RE2>("^(?:" + regex + ")$", opts);
  if (!re->ok()) {
    return Status::Error("invalid regex \"" + regex + "\": " + re->error());
  }
  compiled = std::move(re);
  return Status::Ok();
}

std::optional<Labels> Relabel(const Labels& labels, std::span<const RelabelConfig> rules) {
  // A name → value map while rules run; rebuilt into Labels at the end.
  std::map<std::string, std::string, std::less<>> lb;
  for (const auto& l : labels) lb[l.name] = l.value;
  auto get = [&lb](std::string_view name) -> std::string {
    auto it = lb.find(name);
    return it == lb.end() ? std::string() : it->second;
  };
  auto set = [&lb](const std::string& name, std::string value) {
    if (value.empty()) {
      lb.erase(name);
    } else {
      lb[name] = std::move(value);
    }
  };
  std::vector<re2::StringPiece> groups;
  for (const auto& rule : rules) {
    const RE2& re = *rule.compiled;
    std::string val;
    for (size_t i = 0; i < rule.source_labels.size(); ++i) {
      if (i > 0) val += rule.separator;
      val += get(rule.source_labels[i]);
    }
    switch (rule.action) {
      case RelabelAction::kReplace: {
        if (!Match(re, val, groups)) break;
        std::string target = Expand(rule.target_label, re, groups);
        if (!IsValidLabelName(target)) break;
        set(target, Expand(rule.replacement, re, groups));
        break;
      }
      case RelabelAction::kKeep:
        if (!RE2::FullMatch(val, re)) return std::nullopt;
        break;
      case RelabelAction::kDrop:
        if (RE2::FullMatch(val, re)) return std::nullopt;
        break;
      case RelabelAction::kKeepEqual:
        if (get(rule.target_label) != val) return std::nullopt;
        break;
      case RelabelAction::kDropEqual:
        if (get(rule.target_label) == val) return std::nullopt;
        break;
      case RelabelAction::kHashMod:
        set(rule.target_label, std::to_string(HashMod(val, rule.modulus)));
        break;
      case RelabelAction::kLabelMap: {
        std::vector<std::pair<std::string, std::string>> adds;
        for (const auto& [name, value] : lb) {
          if (Match(re, name, groups))
            adds.emplace_back(Expand(rule.replacement, re, groups), value);
        }
        for (auto& [name, value] : adds) set(name, std::move(value));
        break;
      }
      case RelabelAction::kLabelDrop:
      case RelabelAction::kLabelKeep: {
        const bool drop_matching = rule.action == RelabelAction::kLabelDrop;
        for (auto it = lb.begin(); it != lb.end();) {
          if (RE2::FullMatch(it->first, re) == drop_matching) {
            it = lb.erase(it);
          } else {
            ++it;
          }
        }
        break;
      }
      case RelabelAction::kLowercase:
      case RelabelAction::kUppercase: {
        for (char& c : val) {
          c = rule.action == RelabelAction::kLowercase
                  ? static_cast<char>(std::tolower(static_cast<unsigned char>(c)))
                  : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        }
        set(rule.target_label, std::move(val));
        break;
      }
    }
  }
  std::vector<Label> out;
  out.reserve(lb.size());
  for (auto& [name, value] : lb) out.push_back({name, std::move(value)});
  return Labels::FromSorted(std::move(out));
}

}  // namespace gpumon::scrape
