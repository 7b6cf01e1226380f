// An enum's text forms, as the wire and the database spell them: one table of (value, name)
// pairs per enum, read both ways.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

namespace dlq {

template <class E, std::size_t N>
using EnumNames = std::array<std::pair<E, std::string_view>, N>;

template <class E, std::size_t N>
std::optional<E> enum_from_name(const EnumNames<E, N>& table, std::string_view text) {
  for (const auto& [value, name] : table) {
    if (name == text) return value;
  }
  return std::nullopt;
}

template <class E, std::size_t N>
std::string_view enum_name(const EnumNames<E, N>& table, E value) {
  for (const auto& [v, name] : table) {
    if (v == value) return name;
  }
  return "unknown";
}

}  // namespace dlq
