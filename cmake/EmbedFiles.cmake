# Turns a flat folder of files (the admin UI, ui/) into a C++ source file defining
#   std::span<const dlq::http::EmbeddedFile> <NAMESPACE>::<NAME>()
# with each file's name and exact bytes (any bytes: each is written as a \x escape).
#   embed_files(OUT <file.cpp> NAMESPACE <ns> NAME <function> HEADER <include> FILES <inputs...>)
function(embed_files)
  cmake_parse_arguments(ARG "" "OUT;NAMESPACE;NAME;HEADER" "FILES" ${ARGN})
  string(REPLACE ";" "|" joined "${ARG_FILES}")
  add_custom_command(
    OUTPUT "${ARG_OUT}"
    COMMAND ${CMAKE_COMMAND} -DOUT=${ARG_OUT} -DNAMESPACE=${ARG_NAMESPACE} -DNAME=${ARG_NAME}
            -DHEADER=${ARG_HEADER} "-DFILES=${joined}"
            -P "${PROJECT_SOURCE_DIR}/cmake/EmbedFilesScript.cmake"
    DEPENDS ${ARG_FILES} "${PROJECT_SOURCE_DIR}/cmake/EmbedFilesScript.cmake"
    COMMENT "Embedding ${NAME} (${ARG_FILES})"
    VERBATIM)
endfunction()
