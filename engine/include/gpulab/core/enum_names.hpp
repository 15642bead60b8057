// One convention for enums as text, used by the CLI's parser, the JSON records and the GUI's menus.
// An enum opts in by specialising EnumNames next to its definition:
//
//   template <>
//   struct EnumNames<BorderMode> {
//     static constexpr std::string_view what = "border mode";
//     static constexpr EnumName<BorderMode> names[] = {{BorderMode::Reflect101, "reflect101"}, ...};
//     static constexpr EnumName<BorderMode> aliases[] = {...};  // optional: also parsed, never printed
//   };
//
// and then reads and writes through toString(value), parseEnum<E>(text) (std::nullopt when unknown),
// parseEnumOrThrow<E>(text) (std::invalid_argument naming the choices) and enumNames<E>() ("a|b|c").
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gpulab {

template <class E>
struct EnumName {
  E value;
  std::string_view name;
};

/// Specialise for each enum that has a text form (see above).
template <class E>
struct EnumNames;

template <class E>
concept NamedEnum = requires {
  EnumNames<E>::names;
  EnumNames<E>::what;
};

/// The name of `value`; "?" for a value that has none.
template <NamedEnum E>
constexpr std::string_view toString(E value) noexcept {
  for (const auto& entry : EnumNames<E>::names)
    if (entry.value == value) return entry.name;
  return "?";
}

/// The value named `text` (exact, case-sensitive; aliases too); std::nullopt for anything else.
template <NamedEnum E>
constexpr std::optional<E> parseEnum(std::string_view text) noexcept {
  for (const auto& entry : EnumNames<E>::names)
    if (entry.name == text) return entry.value;
  if constexpr (requires { EnumNames<E>::aliases; }) {
    for (const auto& entry : EnumNames<E>::aliases)
      if (entry.name == text) return entry.value;
  }
  return std::nullopt;
}

/// Every name, in declaration order, joined by `separator`: "reflect101|reflect|replicate|wrap|constant".
template <NamedEnum E>
std::string enumNames(std::string_view separator = "|") {
  std::string text;
  for (const auto& entry : EnumNames<E>::names) {
    if (!text.empty()) text += separator;
    text += entry.name;
  }
  return text;
}

/// parseEnum, or std::invalid_argument with one sentence: "unknown border mode 'x': use reflect101|...".
template <NamedEnum E>
E parseEnumOrThrow(std::string_view text) {
  if (const std::optional<E> value = parseEnum<E>(text)) return *value;
  throw std::invalid_argument("unknown " + std::string(EnumNames<E>::what) + " '" + std::string(text) + "': use " +
                              enumNames<E>());
}

}  // namespace gpulab
