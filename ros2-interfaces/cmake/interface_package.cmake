# One ROS 2 interface package: every .msg, .srv and .action file beside the including
# CMakeLists.txt, generated for C and Python only (rclpy uses the C type supports; skipping the
# C++ generators halves the build). The wire format and type hashes do not depend on which
# languages are generated, so C++ nodes elsewhere talk to these types unchanged.
macro(fleetsim_interface_package)
  cmake_parse_arguments(_fip "" "" "DEPENDENCIES" ${ARGN})
  find_package(ament_cmake REQUIRED)
  find_package(rosidl_default_generators REQUIRED)
  foreach(_dep IN LISTS _fip_DEPENDENCIES)
    find_package(${_dep} REQUIRED)
  endforeach()
  list(FILTER AMENT_EXTENSIONS_rosidl_generate_idl_interfaces EXCLUDE REGEX
    "^rosidl_(generator|typesupport|typesupport_fastrtps|typesupport_introspection)_cpp:")
  file(GLOB _fip_files RELATIVE "${CMAKE_CURRENT_SOURCE_DIR}" CONFIGURE_DEPENDS
    "${CMAKE_CURRENT_SOURCE_DIR}/msg/*.msg" "${CMAKE_CURRENT_SOURCE_DIR}/srv/*.srv"
    "${CMAKE_CURRENT_SOURCE_DIR}/action/*.action")
  rosidl_generate_interfaces(${PROJECT_NAME} ${_fip_files} DEPENDENCIES ${_fip_DEPENDENCIES})
  ament_export_dependencies(rosidl_default_runtime)
  ament_package()
endmacro()
