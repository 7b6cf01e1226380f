// Secrets never reach people: payload keys named in `redaction.fields` (any depth, any case)
// are shown as "***", credential-looking text in error messages is masked, and an operator's
// edited payload that still carries "***" keeps the original value there.
#pragma once

#include <regex>
#include <string>
#include <vector>

namespace dlq::core {

class Redactor {
 public:
  explicit Redactor(const std::vector<std::string>& fields);

  bool enabled() const { return !fields_.empty(); }
  // The payload for people. Unchanged, byte for byte, unless it is a JSON object or array with
  // at least one matching key.
  std::string payload(const std::string& payload) const;
  // Error texts for people: "Bearer …", "Basic …" and "<field>=…" / "<field>: …" masked.
  std::string text(const std::string& text) const;
  // An edited payload with its "***" masks replaced by the original values at the same paths.
  std::string merge_masks(const std::string& original, const std::string& edited) const;

 private:
  std::vector<std::string> fields_;  // lower case
  std::vector<std::regex> text_patterns_;  // one per field, compiled once
};

}  // namespace dlq::core
