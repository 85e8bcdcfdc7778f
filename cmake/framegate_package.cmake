# What `cmake --install` and `cpack` ship: the binaries (each directory
# installs its own), the worker SDK as a CMake package and a pkg-config
# file, the systemd units with example settings, and the docs. Included
# from the top-level CMakeLists.txt after every directory.

# ------------------------------------------------------------- the SDK package
include(CMakePackageConfigHelpers)
set(FRAMEGATE_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/framegate)
install(EXPORT framegate_targets NAMESPACE framegate:: FILE framegateTargets.cmake DESTINATION ${FRAMEGATE_CMAKE_DIR}
        COMPONENT sdk)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/framegateConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/framegateConfig.cmake INSTALL_DESTINATION ${FRAMEGATE_CMAKE_DIR})
# Same major: same API (docs/SDK.md says what that covers).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/framegateConfigVersion.cmake COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/framegateConfig.cmake ${PROJECT_BINARY_DIR}/framegateConfigVersion.cmake
        DESTINATION ${FRAMEGATE_CMAKE_DIR} COMPONENT sdk)
# Relocatable: the prefix is found from the file's own place (${pcfiledir}).
file(RELATIVE_PATH FRAMEGATE_PC_TO_PREFIX /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
# A sanitized build's library needs its sanitizers' runtimes at link time.
set(FRAMEGATE_PC_SANITIZER_LIBS "")
foreach(option IN LISTS FRAMEGATE_SANITIZER_LINK_OPTIONS)
  string(APPEND FRAMEGATE_PC_SANITIZER_LIBS " ${option}")
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/cmake/framegate.pc.in ${PROJECT_BINARY_DIR}/framegate.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/framegate.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT sdk)

# ------------------------------------------------------- services and settings
install(FILES ${PROJECT_SOURCE_DIR}/deploy/systemd/framegate-gateway.service
              ${PROJECT_SOURCE_DIR}/deploy/systemd/framegate-worker@.service
        DESTINATION lib/systemd/system)
# The example settings: under a prefix ending in /usr (the package's, or
# `--prefix /usr`) they go to its sibling etc/, i.e. /etc/framegate, as
# Debian wants; under any other prefix to <prefix>/etc/framegate. Decided
# at install time, so `cmake --install --prefix DIR` never writes to the
# host's /etc.
install(CODE "
  if(CMAKE_INSTALL_PREFIX MATCHES \"/usr/?$\")
    get_filename_component(framegate_etc \"\${CMAKE_INSTALL_PREFIX}/../etc/framegate\" ABSOLUTE)
  else()
    set(framegate_etc \"\${CMAKE_INSTALL_PREFIX}/etc/framegate\")
  endif()
  file(INSTALL DESTINATION \"\${framegate_etc}\" TYPE FILE
       FILES \"${PROJECT_SOURCE_DIR}/deploy/systemd/gateway.env\" \"${PROJECT_SOURCE_DIR}/deploy/systemd/worker.env\")")
install(FILES ${PROJECT_SOURCE_DIR}/README.md ${PROJECT_SOURCE_DIR}/docs/SDK.md ${PROJECT_SOURCE_DIR}/docs/LINK.md
              ${PROJECT_SOURCE_DIR}/docs/DEPLOY.md ${PROJECT_SOURCE_DIR}/docs/METRICS.md
              ${PROJECT_SOURCE_DIR}/docs/ALERTS.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
# The alerting rules, for the Prometheus that scrapes these hosts (DEPLOY.md).
install(FILES ${PROJECT_SOURCE_DIR}/deploy/prometheus/alerts.yml DESTINATION ${CMAKE_INSTALL_DATADIR}/framegate/prometheus)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/hello-app DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)

# ---------------------------------------------------------------- the package
# `cpack -G DEB` (in the build directory): one framegate_<version>_<arch>.deb.
set(CPACK_PACKAGE_NAME framegate)
set(CPACK_PACKAGE_VENDOR framegate)
set(CPACK_PACKAGE_CONTACT "framegate maintainers <framegate@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "WebSocket gateway with worker processes, and the worker SDK")
set(CPACK_PACKAGE_DESCRIPTION
    "framegate terminates WebSocket clients in a gateway and runs the business logic in worker\n\
processes behind it. The package has the gateway, the worker, the local-cluster supervisor\n\
(framegate up), the browser demo, systemd units and the C++ worker SDK.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
# Runtime libraries from dpkg-shlibdeps; the SDK's headers and link
# dependencies are what a user builds a worker with, so they are suggested.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS
    "redis-server, cmake, g++, pkg-config, libprotobuf-dev, libspdlog-dev, prometheus-cpp-dev, libhiredis-dev, libssl-dev, zlib1g-dev")
# /etc/framegate/*.env are conffiles: an upgrade keeps the operator's edits.
file(WRITE ${PROJECT_BINARY_DIR}/debian/conffiles "/etc/framegate/gateway.env\n/etc/framegate/worker.env\n")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_BINARY_DIR}/debian/conffiles)
include(CPack)
