# SOCI 4.0.3 on Debian ships neither a CMake config nor a pkg-config file: find the headers and
# libraries by hand and expose imported targets soci::core, soci::sqlite3 and soci::postgresql.
find_path(SOCI_INCLUDE_DIR soci/soci.h)
find_library(SOCI_CORE_LIBRARY soci_core)
find_library(SOCI_SQLITE3_LIBRARY soci_sqlite3)
find_library(SOCI_POSTGRESQL_LIBRARY soci_postgresql)

include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(SOCI
  REQUIRED_VARS SOCI_INCLUDE_DIR SOCI_CORE_LIBRARY SOCI_SQLITE3_LIBRARY SOCI_POSTGRESQL_LIBRARY)

if(SOCI_FOUND AND NOT TARGET soci::core)
  find_package(SQLite3 REQUIRED)
  find_package(PostgreSQL REQUIRED)
  add_library(soci::core UNKNOWN IMPORTED)
  set_target_properties(soci::core PROPERTIES
    IMPORTED_LOCATION "${SOCI_CORE_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${SOCI_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${CMAKE_DL_LIBS}")
  add_library(soci::sqlite3 UNKNOWN IMPORTED)
  set_target_properties(soci::sqlite3 PROPERTIES
    IMPORTED_LOCATION "${SOCI_SQLITE3_LIBRARY}"
    INTERFACE_LINK_LIBRARIES "soci::core;SQLite::SQLite3")
  add_library(soci::postgresql UNKNOWN IMPORTED)
  set_target_properties(soci::postgresql PROPERTIES
    IMPORTED_LOCATION "${SOCI_POSTGRESQL_LIBRARY}"
    INTERFACE_LINK_LIBRARIES "soci::core;PostgreSQL::PostgreSQL")
endif()
