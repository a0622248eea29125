# accel_add_family(<target> SOURCES <file>... [CUDA_SOURCES <file>...] [INCLUDES <dir>...]
#                  [PUBLIC <item>...] [PRIVATE <item>...] [CUDA_PUBLIC <item>...] [CUDA_PRIVATE <item>...])
#
# One library family (Note [The operation contract] in src/operation/operation.hpp): its requests' contracts, its
# CPU implementation and, where this build has the CUDA toolkit, its CUDA half. Each family's CMakeLists.txt calls
# this once; the device links every family registered here (ACCEL_LIBRARY_FAMILIES), and libaccel.so takes them
# in, so a new family touches no list outside its folder but the protocol's and the device's registration headers.
#
# A family sees src/ (its own and the operation contract's headers) and links the contract; with CUDA, the
# contract's CUDA half too, and its .cu files compile with every warning an error.
function(accel_add_family target)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" ""
    "SOURCES;CUDA_SOURCES;INCLUDES;PUBLIC;PRIVATE;CUDA_PUBLIC;CUDA_PRIVATE")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "accel_add_family(${target}): unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  add_library(${target} ${arg_SOURCES})
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/src ${arg_INCLUDES})
  target_link_libraries(${target} PUBLIC accel_operation ${arg_PUBLIC}
    PRIVATE accel_warnings fmt::fmt ${arg_PRIVATE})
  if(ACCEL_HAVE_CUDA)
    target_sources(${target} PRIVATE ${arg_CUDA_SOURCES})
    target_link_libraries(${target} PUBLIC accel_operation_cuda ${arg_CUDA_PUBLIC} PRIVATE ${arg_CUDA_PRIVATE})
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings -Xcompiler=-Wall,-Wextra>)
  endif()
  set_property(GLOBAL APPEND PROPERTY ACCEL_LIBRARY_FAMILIES ${target})
endfunction()
