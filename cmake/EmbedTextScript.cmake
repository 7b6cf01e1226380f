# Script mode half of EmbedText.cmake: one raw string literal holding the whole file.
file(READ "${FILE}" text)
string(FIND "${text}" ")__text__\"" clash)
if(NOT clash EQUAL -1)
  message(FATAL_ERROR "${FILE} contains the raw string delimiter )__text__\"")
endif()
file(WRITE "${OUT}" "// Generated from ${FILE}; do not edit.\n#include <string_view>\n\nnamespace ${NAMESPACE} {\n\nstd::string_view ${NAME}() {\n  static constexpr char text[] = R\"__text__(${text})__text__\";\n  return {text, sizeof text - 1};\n}\n\n}  // namespace ${NAMESPACE}\n")
