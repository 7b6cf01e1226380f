# Turns one text file (docs/openapi.json) into a C++ source file defining
#   std::string_view <NAMESPACE>::<NAME>()
# that returns the file's bytes, so the binary serves exactly the file in the tree.
#   embed_text(OUT <file.cpp> NAMESPACE <ns> NAME <function> FILE <input>)
function(embed_text)
  cmake_parse_arguments(ARG "" "OUT;NAMESPACE;NAME;FILE" "" ${ARGN})
  add_custom_command(
    OUTPUT "${ARG_OUT}"
    COMMAND ${CMAKE_COMMAND} -DOUT=${ARG_OUT} -DNAMESPACE=${ARG_NAMESPACE} -DNAME=${ARG_NAME}
            -DFILE=${ARG_FILE} -P "${PROJECT_SOURCE_DIR}/cmake/EmbedTextScript.cmake"
    DEPENDS "${ARG_FILE}" "${PROJECT_SOURCE_DIR}/cmake/EmbedTextScript.cmake"
    COMMENT "Embedding ${ARG_FILE}"
    VERBATIM)
endfunction()
