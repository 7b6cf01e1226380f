// The admin UI's files (ui/ in the source tree), embedded at build time (cmake/EmbedFiles.cmake)
// and served under /ui/ (http-api.md B5). The folder is flat: a file's name is its path.
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace dlq::http {

struct EmbeddedFile {
  std::string_view name;
  std::string_view bytes;
};

// Every file of ui/, in the order CMake listed them.
std::span<const EmbeddedFile> ui_files();

// The exact Content-Type of a UI file by its extension; none for a type the UI does not serve.
std::optional<std::string_view> ui_content_type(std::string_view name);

// A name the UI may have: [a-z0-9._-]+, not starting with a dot, of a served type. Anything else
// (slashes, escapes, "..") is never looked up, in the built-in table or in ui.dir.
bool ui_file_name(std::string_view name);

// The policy on every UI answer: the page loads and talks to nothing but its own origin.
inline constexpr std::string_view kUiContentSecurityPolicy =
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'";

}  // namespace dlq::http
