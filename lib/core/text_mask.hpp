// Masks credentials inside free text (error messages, stacks, causes) for people: the value
// after "Bearer"/"Basic" and after "<field>=" or "<field>: ", found by a linear scan.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace dlq::core {

// One left-to-right pass per pattern, never backtracking: time and stack stay linear in the
// text, whatever its length (std::regex recursed once per character and overflowed the stack).
// It masks exactly what these ECMAScript expressions (case-insensitive) replaced before:
//   (Bearer|Basic)\s+[A-Za-z0-9._~+/=-]+                         -> "$1 ***"
//   ("?<field>"?\s*[:=]\s*"?)(?!\*\*\*|Bearer\b|Basic\b)[^\s"&,;}]+ -> "$1***", field by field
class TextMasker {
 public:
  explicit TextMasker(std::vector<std::string> lower_case_fields);

  std::string mask(std::string_view text) const;

 private:
  std::vector<std::string> fields_;
};

}  // namespace dlq::core
