// Secrets never reach people: payload keys named in `redaction.fields` (any depth, any case)
// are shown as "***", credential-looking text in error messages is masked, and an operator's
// edited payload that still carries "***" keeps the original value there.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/text_mask.hpp"

namespace dlq::core {

class Redactor {
 public:
  // How deep a payload may nest and still be masked (Boost.JSON's default is 32). The parser
  // recurses once per level, so the limit also bounds the stack a view may take.
  static constexpr std::size_t kMaxDepth = 1000;
  // What people see instead of a payload that starts like JSON but cannot be parsed: its
  // secrets cannot be found, so none of it is shown (api-decisions.md, "Redaction").
  static constexpr std::string_view kWithheld = "***withheld***";

  explicit Redactor(const std::vector<std::string>& fields);

  bool enabled() const { return !fields_.empty(); }
  // The payload for people. Unchanged, byte for byte, unless it is a JSON object or array with
  // at least one matching key; kWithheld when it starts with '{' or '[' (after whitespace) but
  // does not parse (too deep, a lone surrogate escape, malformed): masking fails closed.
  std::string payload(const std::string& payload) const;
  // Error texts for people: "Bearer …", "Basic …" and "<field>=…" / "<field>: …" masked.
  std::string text(const std::string& text) const;
  // An edited payload with its "***" masks replaced by the original values at the same paths.
  std::string merge_masks(const std::string& original, const std::string& edited) const;

 private:
  std::vector<std::string> fields_;  // lower case
  TextMasker text_;
};

}  // namespace dlq::core
