// SOCI 4.0.3 knows no std::optional: this conversion maps NULL to an empty optional on both
// backends, so rows can be read into plain optionals instead of value/indicator pairs.
#pragma once

#include <optional>

#include <soci/soci.h>

namespace soci {

template <typename T>
struct type_conversion<std::optional<T>> {
  using base_type = typename type_conversion<T>::base_type;

  static void from_base(const base_type& in, indicator ind, std::optional<T>& out) {
    if (ind == i_null) {
      out.reset();
      return;
    }
    T value{};
    type_conversion<T>::from_base(in, ind, value);
    out = std::move(value);
  }

  static void to_base(const std::optional<T>& in, base_type& out, indicator& ind) {
    if (in) {
      type_conversion<T>::to_base(*in, out, ind);
    } else {
      ind = i_null;
    }
  }
};

}  // namespace soci
