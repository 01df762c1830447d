# Passed to each interface package as CMAKE_PROJECT_INCLUDE: runs right after its project() and
# defers a fix-up to the end of its CMakeLists.
#
# Why: the registry's ros-jazzy-* wheels were built in a manylinux container, and the message
# packages' exported *__rosidl_generator_py targets still name that container's Python and NumPy
# include directories (/opt/python/cp311-cp311/...). CMake refuses to generate a build that
# includes a directory which does not exist, so point them at this interpreter's own.
function(_fleetsim_point_at_this_python)
  find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Module NumPy)
  get_directory_property(targets IMPORTED_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(dirs ${target} INTERFACE_INCLUDE_DIRECTORIES)
    if(NOT dirs OR NOT "${dirs}" MATCHES "/opt/python/")
      continue()
    endif()
    set(fixed "")
    foreach(dir IN LISTS dirs)
      if(dir MATCHES "^/opt/python/.*/numpy/")
        list(APPEND fixed ${Python3_NumPy_INCLUDE_DIRS})
      elseif(dir MATCHES "^/opt/python/.*/include/python")
        list(APPEND fixed ${Python3_INCLUDE_DIRS})
      else()
        list(APPEND fixed "${dir}")
      endif()
    endforeach()
    set_target_properties(${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${fixed}")
  endforeach()
endfunction()
cmake_language(DEFER CALL _fleetsim_point_at_this_python)
