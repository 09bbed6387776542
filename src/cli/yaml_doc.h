// A small YAML document model for generating files from parsed ones: a tree
// of scalars, mappings (in order) and sequences, with comment lines, read
// from a yaml-cpp node and written in one block style.
//
// Contract:
// - FromYaml keeps mapping order and scalar text; a scalar remembers whether
//   it was written plain (so `5m`, `1` and `true` keep their YAML type when
//   written back unchanged). Anchors and aliases come out expanded.
// - Write emits block style with two-space indentation: mappings as
//   `key: value`, sequence items as `- `, empty collections as {} / [].
//   A scalar is written plain only when it reads back as the same string
//   (or was plain and is unchanged); text with line breaks as a literal
//   block (|, |- or |+); single-line prose or templates over 100 characters
//   with single spaces as a folded block (>-) wrapped near 100 columns;
//   anything else double-quoted with escapes. Comment items of a sequence and a document's header
//   comments are written as `# ` lines.
// - Reading Write's output with a YAML parser gives back the same strings.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace YAML {
class Node;
}

namespace gpumon::cli {

struct YamlNode {
  enum class Kind { kNull, kScalar, kMap, kSeq, kComment };
  Kind kind = Kind::kNull;
  std::string text;    // scalar value or comment text
  bool plain = false;  // scalar that was plain in the source
  std::vector<std::pair<std::string, YamlNode>> map;
  std::vector<YamlNode> seq;

  static YamlNode Scalar(std::string text) {
    YamlNode n;
    n.kind = Kind::kScalar;
    n.text = std::move(text);
    return n;
  }
  static YamlNode Comment(std::string text) {
    YamlNode n;
    n.kind = Kind::kComment;
    n.text = std::move(text);
    return n;
  }
  bool IsScalar() const { return kind == Kind::kScalar; }
  bool IsMap() const { return kind == Kind::kMap; }
  bool IsSeq() const { return kind == Kind::kSeq; }
  // The value of a mapping key, or nullptr.
  YamlNode* Find(std::string_view key);
  const YamlNode* Find(std::string_view key) const;
  // Sets a scalar's text; it is no longer "as in the source".
  void SetText(std::string t) {
    if (t != text) plain = false;
    text = std::move(t);
  }
};

YamlNode FromYaml(const YAML::Node& node);
// `header` lines are written first, each as a `# ` comment.
std::string WriteYaml(const YamlNode& root, const std::vector<std::string>& header);

}  // namespace gpumon::cli
