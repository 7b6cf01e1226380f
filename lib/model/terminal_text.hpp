// Text from the server (or anyone) made safe to print on a terminal: what would move the cursor,
// rewrite the screen, reach the clipboard or reverse the text reading order is printed as an escape.
#pragma once

#include <string>
#include <string_view>

namespace dlq {

// C0 controls (newline and tab too), DEL and invalid UTF-8 bytes as "\x1b"; C1 controls and the
// bidirectional controls (U+061C, U+200E/F, U+202A-E, U+2066-9) as "\u202e". Everything else,
// the backslash included, passes as it is: the result is valid UTF-8, and escaping it again
// changes nothing.
std::string terminal_text(std::string_view s);

}  // namespace dlq
