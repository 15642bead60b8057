// One convention for enums as text, used by the CLI's parser, the JSON records and the GUI's menus.
// An enum whose values run 0, 1, 2, ... opts in with one function beside it, found by argument-
// dependent lookup, that names what it is and its values in declaration order (and, optionally,
// more spellings the parser accepts, as alias=name pairs):
//
//   constexpr EnumText enumText(BorderMode) { return {"border mode", "reflect101|reflect|replicate|wrap|constant"}; }
//   constexpr EnumText enumText(DType) { return {"type", "f32|f64", "float32=f32|float=f32|double=f64"}; }
//
// and then reads and writes through toString(value), parseEnum<E>(text) (std::nullopt when unknown),
// parseEnumOrThrow<E>(text) (std::invalid_argument naming the choices), enumNames<E>() ("a|b|c")
// and enumValues<E>() (every value, in order).
#pragma once

#include <concepts>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace gpulab {

struct EnumText {
  constexpr EnumText(std::string_view whatText, std::string_view nameList, std::string_view aliasList = {})
      : what(whatText), names(nameList), aliases(aliasList) {}
  std::string_view what;     ///< "border mode": for messages
  std::string_view names;    ///< "reflect101|reflect|...": value i is the i-th name
  std::string_view aliases;  ///< "float32=f32|double=f64": more spellings the parser accepts
};

template <class E>
concept NamedEnum = std::is_enum_v<E> && requires(E e) {
  { enumText(e) } -> std::same_as<EnumText>;
};

namespace detail {

/// The index-th '|'-separated field of `list`; empty when there are fewer.
constexpr std::string_view field(std::string_view list, int index) noexcept {
  for (int i = 0;; ++i) {
    const std::size_t bar = list.find('|');
    if (i == index) return list.substr(0, bar);
    if (bar == std::string_view::npos) return {};
    list.remove_prefix(bar + 1);
  }
}

}  // namespace detail

/// The name of `value`; "?" for a value that has none.
template <NamedEnum E>
constexpr std::string_view toString(E value) noexcept {
  const int index = static_cast<int>(value);
  const std::string_view name = index < 0 ? std::string_view() : detail::field(enumText(E{}).names, index);
  return name.empty() ? "?" : name;
}

/// The value named `text` (exact, case-sensitive; aliases too); std::nullopt for anything else.
template <NamedEnum E>
constexpr std::optional<E> parseEnum(std::string_view text) noexcept {
  const EnumText info = enumText(E{});
  for (int i = 0; !detail::field(info.names, i).empty(); ++i)
    if (detail::field(info.names, i) == text) return static_cast<E>(i);
  for (int i = 0; !detail::field(info.aliases, i).empty(); ++i) {
    const std::string_view alias = detail::field(info.aliases, i);
    const std::size_t eq = alias.find('=');
    if (alias.substr(0, eq) == text) return parseEnum<E>(alias.substr(eq + 1));
  }
  return std::nullopt;
}

/// Every value, in declaration order.
template <NamedEnum E>
std::vector<E> enumValues() {
  std::vector<E> values;
  for (int i = 0; !detail::field(enumText(E{}).names, i).empty(); ++i) values.push_back(static_cast<E>(i));
  return values;
}

/// Every name, in declaration order, joined by `separator`: "reflect101|reflect|replicate|wrap|constant".
template <NamedEnum E>
std::string enumNames(std::string_view separator = "|") {
  std::string text;
  for (E value : enumValues<E>()) {
    if (!text.empty()) text += separator;
    text += toString(value);
  }
  return text;
}

/// The names as a list, for choices in menus and parameter descriptions.
template <NamedEnum E>
std::vector<std::string> enumNameList() {
  std::vector<std::string> names;
  for (E value : enumValues<E>()) names.emplace_back(toString(value));
  return names;
}

/// parseEnum, or std::invalid_argument with one sentence: "unknown border mode 'x': use reflect101|...".
template <NamedEnum E>
E parseEnumOrThrow(std::string_view text) {
  if (const std::optional<E> value = parseEnum<E>(text)) return *value;
  throw std::invalid_argument("unknown " + std::string(enumText(E{}).what) + " '" + std::string(text) + "': use " +
                              enumNames<E>());
}

}  // namespace gpulab
